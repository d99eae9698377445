"""Agreement between raters of the same units, read from a CSV file of ratings in long form.

:func:`agreement_from_file` reads every cell as written, checks the columns and the values
and refuses every bad row at once (file, row, column and value), then runs
:func:`models.agreement.agreement`. The ``longitudinal agreement`` command is this function
and the writing of its table.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from numbers import Integral, Real
from pathlib import Path
from typing import TYPE_CHECKING, Any

from _empathic_base.words import parameter, setting
from longitudinal._errors import InvalidParameterError
from models.limits import AGREEMENT_MAX_N_BOOT

if TYPE_CHECKING:
    import pandas as pd

    from models.agreement import AgreementResult

#: The first data row of a CSV file is its line 2 (the header is line 1).
_FIRST_LINE = 2
_FUNC = "agreement_from_file"
_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def agreement_from_file(
    path: str | os.PathLike[str],
    *,
    unit_col: str,
    rater_col: str,
    value_col: str,
    level: str,
    levels: Sequence[str] | None = None,
    ci_level: float = 0.95,
    n_boot: int = 2000,
    seed: int | None = None,
) -> AgreementResult:
    """Read ratings in long form from a CSV file and compute the agreement between raters.

    Parameters
    ----------
    path : str or os.PathLike
        A CSV file (UTF-8, a byte-order mark allowed) with a header row and one row per
        unit x rater. Every cell is read as text, as written: nothing is guessed to be
        missing but an empty cell, and numbers are parsed only where ``level`` asks for them.
    unit_col, rater_col, value_col : str
        Three different columns of the file: the unit rated, the rater, the value given.
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement of the values. Nominal values are compared as written (3 and
        3.0 are two categories); ordinal values are numbers, or text listed in ``levels`` in
        its order; interval and ratio values are numbers (ratio: 0 or more).
    levels : sequence of str, optional
        Nominal or ordinal only: the values a rating may take, as written in the file (for
        ordinal, in their order); also Gwet's categories.
    ci_level : float, default 0.95
        Level of the bootstrap interval of alpha, in (0, 1).
    n_boot : int, default 2000
        Bootstrap resamples of units for alpha's interval (0: none), at most
        :data:`~models.limits.AGREEMENT_MAX_N_BOOT`.
    seed : int or None, default None
        Seed of the bootstrap, 0 or more (None: a fresh one; give one for the same interval
        again). The command line's ``--seed`` defaults to 0.

    Returns
    -------
    models.agreement.AgreementResult
        As :func:`models.agreement.agreement` returns it: ``coefficients`` (``term, level,
        estimate, se, ci_low, ci_high, n_units, n_raters, n_pairable, note``),
        ``coincidences``, ``left_out`` and ``meta``. A row with an empty value is a unit the
        rater did not rate; units with fewer than two ratings cannot show agreement; both
        are counted, left out and reported in ``left_out``.

    Raises
    ------
    longitudinal.InvalidParameterError
        For an option out of its range (checked before the file is read), three columns that
        are not three different ones, ``levels`` with an interval or ratio level or listing a
        value twice, a file that is not a CSV table or has no data rows, and the work limits
        of :func:`models.agreement.agreement`.
    surveys.InputValidationError
        Every problem of the file at once, in ``failure_cases`` (``file, row, column, value,
        reason``; the header is row 1): a missing column, a unit rated twice by the same
        rater, a value outside ``levels``, text in an interval or ratio column, a missing unit
        or rater id, an id or text value holding an invisible character.
    OSError
        When the file cannot be opened.

    See Also
    --------
    models.agreement.agreement : the same coefficients from a DataFrame.

    Examples
    --------
    >>> from longitudinal import agreement_from_file
    >>> result = agreement_from_file(  # doctest: +SKIP
    ...     "labels.csv", unit_col="story", rater_col="annotator", value_col="label",
    ...     level="nominal",
    ... )
    >>> result.coefficients[["term", "estimate", "ci_low", "ci_high"]]  # doctest: +SKIP
    """
    from models.agreement import agreement

    check_settings(level=level, levels=levels, n_boot=n_boot, seed=seed, ci_level=ci_level)
    table = _read_ratings(path)
    frame = _prepare(
        table,
        name=str(path),
        unit_col=unit_col,
        rater_col=rater_col,
        value_col=value_col,
        level=level,
        levels=levels,
    )
    return agreement(
        frame,
        unit_col=unit_col,
        rater_col=rater_col,
        value_col=value_col,
        level=level,  # type: ignore[arg-type]
        levels=None if levels is None else list(levels),
        ci_level=ci_level,
        n_boot=n_boot,
        seed=seed,
    )


def check_settings(*, level: Any, levels: Any, n_boot: Any, seed: Any, ci_level: Any) -> None:
    """Refuse the options out of their range or of the wrong kind, before the file is read."""
    if not _whole(n_boot) or not 0 <= n_boot <= AGREEMENT_MAX_N_BOOT:
        raise InvalidParameterError(
            f"{parameter('n_boot', _FUNC)} must be a whole number from 0 to "
            f"{AGREEMENT_MAX_N_BOOT:,}; got {n_boot}"
        )
    if seed is not None and (not _whole(seed) or seed < 0):
        raise InvalidParameterError(
            f"{parameter('seed', _FUNC)} must be a non-negative number; got {seed}"
        )
    if isinstance(ci_level, bool) or not isinstance(ci_level, Real) or not 0 < ci_level < 1:
        raise InvalidParameterError(
            f"{parameter('ci_level', _FUNC)} must lie between 0 and 1; got {ci_level}"
        )
    if level not in _LEVELS:
        raise InvalidParameterError(
            f"{parameter('level', _FUNC)} must be one of {', '.join(_LEVELS)}; got {level!r}"
        )
    if levels is not None and (
        isinstance(levels, str) or not all(isinstance(v, str) for v in levels)
    ):
        raise InvalidParameterError(
            f"{parameter('levels', _FUNC)} must be a sequence of the values as written in the "
            f"file (text); got {levels!r}"
        )


def _whole(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def _check_levels(level: str, levels: Sequence[str] | None) -> None:
    """Refuse ``levels`` with a level of numbers, or listing a value twice."""
    if levels is not None and level not in ("nominal", "ordinal"):
        raise InvalidParameterError(
            f"{parameter('levels', _FUNC)} applies to {_level_is('nominal')} or ordinal; "
            f"{_level_is(level)} values are numbers"
        )
    if levels is not None and len(set(levels)) != len(levels):
        raise InvalidParameterError(
            f"{parameter('levels', _FUNC)} lists a value twice: {' '.join(levels)}"
        )


def _level_is(value: str) -> str:
    """``level='ratio'`` in Python; ``--level ratio`` on the command line."""
    words = setting("level", repr(value))
    return words if "=" in words else f"{words} {value}"


def _read_ratings(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read every cell as text, exactly as written (no NA guessing, no number parsing)."""
    import pandas as pd

    try:
        table = pd.read_csv(
            Path(path), dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig"
        )
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InvalidParameterError(f"cannot read {path} as a CSV table: {err}") from err
    if table.empty:
        raise InvalidParameterError(f"{path} has no data rows")
    return table


def _failures(cases: list[dict[str, Any]], summary: str) -> Exception:
    import pandas as pd

    from surveys import InputValidationError

    return InputValidationError(pd.DataFrame(cases), summary=summary)


def _check_columns(table: pd.DataFrame, name: str, columns: dict[str, str]) -> None:
    """Refuse columns the file does not have (all at once), or fewer than three different."""
    missing = [(param, column) for param, column in columns.items() if column not in table.columns]
    if missing:
        present = ", ".join(table.columns)
        cases = [
            {
                "file": name,
                "row": None,
                "column": column,
                "value": None,
                "reason": (
                    f"{parameter(param, _FUNC)} names a column the file does not have (it "
                    f"has: {present})"
                ),
            }
            for param, column in missing
        ]
        raise _failures(cases, f"{name}: columns missing")
    if len(set(columns.values())) < 3:
        unit, rater, value = (parameter(param) for param in columns)
        raise InvalidParameterError(
            f"{unit}, {rater} and {value} must name three different columns"
        )


def _prepare(
    table: pd.DataFrame,
    *,
    name: str,
    unit_col: str,
    rater_col: str,
    value_col: str,
    level: str,
    levels: Sequence[str] | None,
) -> pd.DataFrame:
    """Check the columns, turn number values into numbers and refuse every bad row at once."""
    import numpy as np
    import pandas as pd

    from models.agreement import rating_problems

    _check_columns(
        table, name, {"unit_col": unit_col, "rater_col": rater_col, "value_col": value_col}
    )
    _check_levels(level, levels)
    frame = table[[unit_col, rater_col, value_col]].copy()
    text = frame[value_col]
    blank = text.str.strip() == ""
    values: pd.Series = text.where(~blank, None).astype(object)
    numeric = levels is None and level in ("ordinal", "interval", "ratio")
    if numeric:
        parsed = pd.to_numeric(text.where(~blank), errors="coerce")
        # a cell that reads as a number becomes that number; text stays text and is refused
        values = pd.Series(
            np.where(parsed.notna() | blank, parsed, text), index=text.index, dtype=object
        )
        values[blank] = None
    frame[value_col] = values
    for column in (unit_col, rater_col):
        frame[column] = frame[column].where(frame[column].str.strip() != "", None)
    problems = rating_problems(
        frame,
        unit_col=unit_col,
        rater_col=rater_col,
        value_col=value_col,
        level=level,
        levels=None if levels is None else list(levels),
    )
    if len(problems):
        cases = []
        for rec in problems.itertuples(index=False):
            # the value as the file writes it (a number is shown as its text)
            shown = table[rec.column].iloc[int(rec.position)] if rec.value is not None else None
            cases.append(
                {
                    "file": name,
                    "row": int(rec.position) + _FIRST_LINE,
                    "column": rec.column,
                    "value": shown,
                    "reason": rec.reason,
                }
            )
        raise _failures(cases, f"{name}: ratings that cannot be used")
    if numeric:
        frame[value_col] = pd.to_numeric(frame[value_col])
    return frame
