"""What the modules of :mod:`longitudinal.predict` share: the study check, warnings as notes."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pandas as pd

from longitudinal._errors import InvalidParameterError


def _empty(columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def check_study(study: Any, *, func: str) -> None:
    """Refuse anything but a loaded :class:`~longitudinal.study.loaded.Study`, naming ``func``."""
    from longitudinal.study.loaded import Study

    if not isinstance(study, Study):
        raise InvalidParameterError(
            f"the `study` parameter of {func} must be a longitudinal.study.loaded.Study (from "
            f"load_study); got {type(study).__name__}"
        )


@contextmanager
def recording(
    notes: list[str], *, prefix: str, expected: Callable[[Any], bool] | None = None
) -> Iterator[None]:
    """Catch warnings and keep them as notes (reports record warnings, they do not re-issue).

    Warnings for which ``expected(warning)`` is true are dropped.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        if expected is not None and expected(w):
            continue
        text = f"{prefix}: {w.category.__name__}: {_short(str(w.message))}"
        if text not in notes:
            notes.append(text)


def _short(message: str, limit: int = 300) -> str:
    """First line of a warning, with long formulas elided."""
    line = message.splitlines()[0] if message else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def sampling_settings(
    draws: int | str | None, tune: int | None, chains: int | None, *, where: str
) -> tuple[int | str, int, int]:
    """Draws, tuning steps and chains of the Bayesian model; None takes the model's default.

    Each is checked against its ceiling (:func:`models.bayes.estimate.check_counts`: draws
    and tuning steps at most a million, chains at most 64) here, before any model is fitted,
    not when the Bayesian model's turn comes after the others. ``draws="auto"`` (stop at the
    first 1,000 draws that pass the gate's R-hat and ESS checks) is kept as it is.
    """
    from models.bayes import DEFAULT_SAMPLING
    from models.bayes.estimate import check_counts

    auto = isinstance(draws, str) and draws == "auto"
    given = {"draws": None if auto else draws, "tune": tune, "chains": chains}
    values = [int(DEFAULT_SAMPLING[n]) if v is None else v for n, v in given.items()]
    checked, tune_, chains_ = check_counts(*values, where=where)
    return ("auto" if auto else checked), tune_, chains_
