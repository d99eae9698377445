"""The names ``retest`` takes: the state scales the change section analyses, and their instruments.

``build_report`` (``longitudinal report --retest SCALE=R``) checks the names once the study is
read, before any analysis: the change section looks a scale's test-retest reliability up by
the scale's column, then by its instrument, and a name that is neither would be ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _empathic_base.words import parameter
from longitudinal._errors import InvalidParameterError

__all__ = ["check_retest_names", "retest_names"]


def retest_names(study: Any) -> list[str]:
    """Return the names ``retest`` may key: each state scale's column and each instrument.

    The same names the change section looks up (the columns of the scales it analyses, then
    their instrument), in the study's order.
    """
    from longitudinal.report.context import reported_scales
    from longitudinal.study.frames import scale_column

    names: list[str] = []
    for name in study.state_instruments:
        instrument = study.instruments[name]
        names += [scale_column(name, scale) for scale in reported_scales(instrument)]
        names.append(name)
    return list(dict.fromkeys(names))


def check_retest_names(retest: Mapping[str, float], study: Any, *, func: str) -> None:
    """Refuse a ``retest`` name that is not a state scale or instrument of the study.

    A misspelled name would otherwise be ignored and the scale's reliable change computed
    from alpha without a word. Checked once the study is read, before any analysis.

    Raises
    ------
    longitudinal.InvalidParameterError
        Naming every unknown name, the closest known one, and the names it takes.
    """
    import difflib

    known = retest_names(study)
    unknown = [key for key in retest if key not in known]
    if not unknown:
        return
    hints = []
    for key in unknown:
        close = difflib.get_close_matches(key, known, n=1)
        hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    traits = [t for t in study.trait_instruments if t in unknown]
    raise InvalidParameterError(
        f"{parameter('retest', func)} names {', '.join(hints)}, not a state scale or state "
        "instrument of this study"
        + (" (a trait has no reliable change)" if traits else "")
        + "; the names it takes: "
        + (", ".join(known) if known else "none (the study has no state scales)")
    )
