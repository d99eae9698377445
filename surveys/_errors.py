"""Exception and warning tree of :mod:`surveys`.

Every error raised on purpose by the package derives from :class:`SurveysError` and also
from the matching builtin, so ``except ValueError`` keeps working for callers who do not
know the package. The bases, :class:`InvalidParameterError` and :class:`DataQualityWarning`
are the distribution's shared classes (``_empathic_base.errors``), the same objects as
``models.InvalidParameterError`` and ``longitudinal.InvalidParameterError``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from _empathic_base.errors import (
    DataQualityWarning,
    EmpathicError,
    EmpathicWarning,
    InvalidParameterError,
    SurveysError,
    SurveysWarning,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "FAILURE_COLUMNS",
    "DataQualityWarning",
    "EmpathicError",
    "EmpathicWarning",
    "InputValidationError",
    "InvalidParameterError",
    "SurveysError",
    "SurveysWarning",
    "UndefinedStatisticWarning",
    "UnknownInstrumentError",
]

FAILURE_COLUMNS = ["file", "row", "column", "value", "reason"]


class UnknownInstrumentError(SurveysError, KeyError):
    """An instrument name is not in the library."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class InputValidationError(SurveysError, ValueError):
    """One or more problems in user data, all collected in one report.

    Parameters
    ----------
    failure_cases : pandas.DataFrame
        One row per problem with the columns ``file, row, column, value, reason``.
        ``row`` is the 1-based line (or spreadsheet row) of the source file, header included;
        it is missing for file-level problems.
    summary : str, optional
        A one-line description of what was being read.
    """

    def __init__(self, failure_cases: pd.DataFrame, summary: str = "invalid input") -> None:
        cases = failure_cases.reindex(columns=FAILURE_COLUMNS).reset_index(drop=True)
        self.failure_cases = cases
        self.summary = summary
        super().__init__(self._render())

    def _render(self, limit: int = 20) -> str:
        import pandas as pd  # a DataFrame is here already; the package's import stays light

        n = len(self.failure_cases)
        lines = [f"{self.summary}: {n} problem{'s' if n != 1 else ''}"]
        for rec in self.failure_cases.head(limit).itertuples(index=False):
            where = [str(rec.file)] if isinstance(rec.file, str) and rec.file else []
            if pd.notna(rec.row):
                where.append(f"row {int(rec.row)}")
            if isinstance(rec.column, str) and rec.column:
                where.append(f"column {rec.column!r}")
            missing = rec.value is None or (isinstance(rec.value, float) and pd.isna(rec.value))
            value = "" if missing else f" (value {rec.value!r})"
            lines.append(f"  - {', '.join(where) or 'input'}: {rec.reason}{value}")
        if n > limit:
            lines.append(f"  ... and {n - limit} more (see .failure_cases)")
        return "\n".join(lines)


class UndefinedStatisticWarning(SurveysWarning):
    """A statistic is undefined for these data and was returned as NaN."""
