"""First-to-last change under dropout: complete cases beside multiple imputation, tipping point.

Both functions take the m completed copies of a participant x wave table (rows participants,
one column per wave; :func:`longitudinal.impute_scores` gives them as ``datasets`` with the
observed table as ``wide``) and the table as observed.

- :func:`imputed_change`: the paired mean change from the first wave to the last, on the
  complete cases (a paired t test) and pooled over the imputations by Rubin's rules with
  Barnard & Rubin's (1999) df (complete-data df ``n - 1``, the paired t test's).
- :func:`tipping_point`: the same pooled change with the imputed last-wave values of the
  participants who lack one (the dropouts) shifted by ``delta`` standard deviations of the
  first wave, delta by delta, and the smallest delta at which the conclusion (whether the
  interval excludes zero) changes: how far from missing at random the dropouts would have to
  be for the finding to turn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from _empathic_base.results import Result, json_ready
from _empathic_base.words import parameter
from longitudinal._checks import check_unit
from longitudinal._errors import InvalidParameterError

__all__ = [
    "DELTAS",
    "IMPUTED_CHANGE_COLUMNS",
    "TIPPING_POINT_COLUMNS",
    "ImputedChange",
    "TippingPoint",
    "imputed_change",
    "tipping_point",
]

IMPUTED_CHANGE_COLUMNS = [
    "analysis",
    "n",
    "estimate",
    "se",
    "df",
    "statistic",
    "p_value",
    "ci_low",
    "ci_high",
    "fmi",
    "m",
]
"""Columns of :attr:`ImputedChange.table`: one row for the complete cases, one for the
imputations (``fmi`` and ``m`` missing on the first)."""

TIPPING_POINT_COLUMNS = [
    "delta",
    "shift",
    "estimate",
    "se",
    "df",
    "statistic",
    "p_value",
    "ci_low",
    "ci_high",
    "fmi",
    "excludes_zero",
]
"""Columns of :attr:`TippingPoint.table`, one row per delta: ``shift`` the points added to
each dropout's imputed last-wave value (``direction * delta * sd``)."""

DELTAS = np.arange(21) / 10
"""The default deltas of :func:`tipping_point`: 0 to 2 SD in steps of 0.1."""

COMPLETE_CASES = "complete cases"
MULTIPLE_IMPUTATION = "multiple imputation"


@dataclass(frozen=True, repr=False)
class ImputedChange(Result):
    """The first-to-last change on the complete cases and pooled over m imputations.

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`IMPUTED_CHANGE_COLUMNS`: ``analysis`` is ``"complete cases"`` (a paired t test
        of those observed at both waves) or ``"multiple imputation"`` (every row of the
        table, pooled by Rubin's rules with Barnard & Rubin's df, complete-data df ``n - 1``).
    first, last : str
        The two waves (columns) compared: the change is ``last - first``.
    n_dropouts : int
        Rows without an observed value at ``last``.
    ci_level : float
        Level of the intervals.
    """

    table: pd.DataFrame
    first: str
    last: str
    n_dropouts: int
    ci_level: float

    def _title(self) -> str:
        mi = self.table.iloc[1]
        return (
            f"ImputedChange({self.first} -> {self.last}: {mi['estimate']:.4g} pooled over "
            f"m = {int(mi['m'])}, {self.n_dropouts} without {self.last})"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Complete cases and multiple imputation", self.table)]

    def to_dict(self) -> dict[str, Any]:
        """Return the two rows and what was compared as JSON-ready data."""
        return json_ready(
            {
                "first": self.first,
                "last": self.last,
                "n_dropouts": self.n_dropouts,
                "ci_level": self.ci_level,
                "rows": self.table.to_dict(orient="records"),
            }
        )


@dataclass(frozen=True, repr=False)
class TippingPoint(Result):
    """The pooled first-to-last change as the dropouts' imputed last values are shifted.

    Attributes
    ----------
    table : pandas.DataFrame
        :data:`TIPPING_POINT_COLUMNS`, one row per delta (the first is 0: the imputations as
        they are).
    tipping_delta : float
        The smallest delta at which ``excludes_zero`` differs from its value at delta 0; NaN
        when it does not change within the deltas.
    direction : int
        ``-1`` (the dropouts' last values shifted down) or ``+1`` (up).
    sd : float
        The standard deviation of the observed values at the first wave (the unit of delta).
    n, n_dropouts : int
        Rows of the table and those without an observed last value (the shifted ones).
    first, last : str
        The two waves compared.
    m : int
        Imputations.
    ci_level : float
        Level of the intervals.
    """

    table: pd.DataFrame
    tipping_delta: float
    direction: int
    sd: float
    n: int
    n_dropouts: int
    first: str
    last: str
    m: int
    ci_level: float

    @property
    def changes(self) -> bool:
        """Whether the conclusion changes within the deltas tried."""
        return not math.isnan(self.tipping_delta)

    def _title(self) -> str:
        where = (
            f"changes at delta = {self.tipping_delta:g} SD"
            if self.changes
            else f"does not change up to delta = {self.table['delta'].iloc[-1]:g} SD"
        )
        return f"TippingPoint({self.first} -> {self.last}: the conclusion {where})"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Pooled change per delta", self.table)]

    def to_dict(self) -> dict[str, Any]:
        """Return the table, the tipping delta and the shift's settings as JSON-ready data."""
        return json_ready(
            {
                "tipping_delta": self.tipping_delta,
                "direction": self.direction,
                "sd": self.sd,
                "n": self.n,
                "n_dropouts": self.n_dropouts,
                "first": self.first,
                "last": self.last,
                "m": self.m,
                "ci_level": self.ci_level,
                "rows": self.table.to_dict(orient="records"),
            }
        )


def imputed_change(
    datasets: Sequence[pd.DataFrame],
    *,
    observed: pd.DataFrame,
    first: str,
    last: str,
    ci_level: float = 0.95,
) -> ImputedChange:
    """Compare the complete-case first-to-last change with the one pooled over imputations.

    Parameters
    ----------
    datasets : sequence of pandas.DataFrame
        The m (at least 2) completed tables: one row per participant, the columns ``first``
        and ``last`` without missing values, the rows of ``observed``.
    observed : pandas.DataFrame
        The table as observed (missing values NaN), same rows and columns.
    first, last : str
        The columns of the two waves; the change is ``last - first``.
    ci_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    ImputedChange
        ``to_frame()``: the complete-case row and the pooled row
        (:data:`IMPUTED_CHANGE_COLUMNS`).

    Notes
    -----
    Each imputation's analysis is the paired mean change ``mean(last - first)`` over all
    ``n`` rows, with variance ``var(last - first) / n``; its complete-data df is that of
    the paired t test, ``n - 1``, so the pooled test uses Barnard & Rubin's (1999) df with
    ``dfcom = n - 1`` (:func:`models.pool_imputations`, checked against
    ``mitml::testEstimates``). The complete cases are those observed at both waves, tested by
    the paired t test (``stats::t.test(paired = TRUE)``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from longitudinal.change.imputed import imputed_change
    >>> observed = pd.DataFrame({"pre": [1.0, 2, 3, 4, 5], "post": [2.0, 3, 5, np.nan, 6]})
    >>> datasets = [observed.fillna({"post": v}) for v in (5.0, 6.0)]
    >>> imputed_change(datasets, observed=observed, first="pre", last="post").to_frame()[
    ...     ["analysis", "n", "estimate"]]
                  analysis  n  estimate
    0       complete cases  4      1.25
    1  multiple imputation  5      1.30
    """
    where = "imputed_change"
    level = check_unit(ci_level, name="ci_level", where=where)
    obs, changes = _changes(datasets, observed, first, last, where)
    complete = obs[[first, last]].dropna()
    cc = _paired_row(complete[last].to_numpy() - complete[first].to_numpy(), level)
    pooled = _pool(changes, level)
    table = pd.DataFrame(
        [
            {"analysis": COMPLETE_CASES, **cc, "fmi": np.nan, "m": pd.NA},
            {
                "analysis": MULTIPLE_IMPUTATION,
                "n": changes.shape[1],
                **pooled,
                "m": changes.shape[0],
            },
        ],  # fmt: skip
        columns=IMPUTED_CHANGE_COLUMNS,
    )
    table["m"] = table["m"].astype("Int64")
    return ImputedChange(
        table=table,
        first=first,
        last=last,
        n_dropouts=int(obs[last].isna().sum()),
        ci_level=level,
    )


def tipping_point(
    datasets: Sequence[pd.DataFrame],
    *,
    observed: pd.DataFrame,
    first: str,
    last: str,
    deltas: Sequence[float] | None = None,
    direction: int | None = None,
    ci_level: float = 0.95,
) -> TippingPoint:
    """Shift the dropouts' imputed last-wave values until the pooled conclusion changes.

    Parameters
    ----------
    datasets : sequence of pandas.DataFrame
        The m (at least 2) completed tables, as :func:`imputed_change`.
    observed : pandas.DataFrame
        The table as observed: the rows missing ``last`` are the dropouts whose imputed
        values are shifted; the observed values of ``first`` give the SD that is the unit of
        delta.
    first, last : str
        The columns of the two waves; the change is ``last - first``.
    deltas : sequence of float, optional
        Increasing shifts in SD units, from 0. Default :data:`DELTAS` (0 to 2 in steps of
        0.1).
    direction : {-1, 1}, optional
        The sign of the shift. Default: against the pooled change at delta 0 (down for a
        rise, up for a fall), the direction that removes the change.
    ci_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    TippingPoint
        ``to_frame()``: the pooled change per delta (:data:`TIPPING_POINT_COLUMNS`);
        ``tipping_delta``: the smallest delta at which the interval includes zero when it did
        not at delta 0, or excludes it when it did (NaN when none of ``deltas``).

    Notes
    -----
    Each dropout's imputed last value becomes ``x + direction * delta * sd`` in every
    imputation (delta adjustment, van Buuren 2018, sec. 9.2; Carpenter & Kenward 2013,
    ch. 10); the change is pooled as in :func:`imputed_change`. The shift is the same in
    every imputation, so the pooled estimate moves by exactly
    ``direction * delta * sd * n_dropouts / n`` and the between-imputation variance stays;
    the within-imputation variance, and with it the SE and df, change with delta.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from longitudinal.change.imputed import tipping_point
    >>> observed = pd.DataFrame({"pre": [1.0, 2, 3, 4, 5, 6],
    ...                          "post": [2.0, 3.5, 4, 5.5, np.nan, np.nan]})
    >>> datasets = [observed.fillna({"post": v}) for v in (7.0, 7.5)]
    >>> tp = tipping_point(datasets, observed=observed, first="pre", last="post")
    >>> tp.direction, tp.tipping_delta
    (-1, 0.3)
    """
    where = "tipping_point"
    level = check_unit(ci_level, name="ci_level", where=where)
    grid = _check_deltas(deltas, where)
    if direction is not None and (isinstance(direction, bool) or direction not in (-1, 1)):
        raise InvalidParameterError(
            f"{parameter('direction', where)} must be -1, 1 or None; got {direction!r}"
        )
    obs, changes = _changes(datasets, observed, first, last, where)
    dropouts = obs[last].isna().to_numpy()
    sd = float(obs[first].std(ddof=1))
    if not np.isfinite(sd) or sd == 0:
        raise InvalidParameterError(
            f"the column {first!r} of {parameter('observed', where)} needs two or more "
            f"different observed values: its SD is the unit of delta (got {sd})"
        )
    if direction is None:
        direction = -1 if _pool(changes, level)["estimate"] > 0 else 1
    rows = []
    for delta in grid:
        shift = direction * delta * sd if delta else 0.0  # never a signed zero
        rows.append({"delta": delta, "shift": shift, **_pool(changes + shift * dropouts, level)})
    table = pd.DataFrame(rows).drop(columns="n")
    table["excludes_zero"] = (table["ci_low"] > 0) | (table["ci_high"] < 0)
    table = table[TIPPING_POINT_COLUMNS]
    turned = table.index[table["excludes_zero"] != table["excludes_zero"].iloc[0]]
    return TippingPoint(
        table=table,
        tipping_delta=float(table.loc[turned[0], "delta"]) if len(turned) else math.nan,
        direction=int(direction),
        sd=sd,
        n=int(changes.shape[1]),
        n_dropouts=int(dropouts.sum()),
        first=first,
        last=last,
        m=int(changes.shape[0]),
        ci_level=level,
    )


def _check_deltas(deltas: Any, where: str) -> np.ndarray:
    """Return the deltas as floats: finite, increasing, starting at 0."""
    if deltas is None:
        return DELTAS.copy()
    try:
        grid = np.asarray(deltas, dtype=float)
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(
            f"{parameter('deltas', where)} must be a sequence of numbers; got {deltas!r}"
        ) from err
    if (
        grid.ndim != 1
        or len(grid) < 2
        or grid[0] != 0
        or not np.isfinite(grid).all()
        or (np.diff(grid) <= 0).any()
    ):
        raise InvalidParameterError(
            f"{parameter('deltas', where)} must be two or more increasing finite numbers "
            f"starting at 0 (SD units); got {list(np.atleast_1d(grid))}"
        )
    return grid


def _changes(
    datasets: Any, observed: Any, first: str, last: str, where: str
) -> tuple[pd.DataFrame, np.ndarray]:
    """Return the observed table and the m x n matrix of completed changes ``last - first``."""
    if not isinstance(observed, pd.DataFrame):
        raise InvalidParameterError(
            f"{parameter('observed', where)} must be a pandas DataFrame; "
            f"got {type(observed).__name__}"
        )
    if isinstance(datasets, pd.DataFrame | str) or not isinstance(datasets, Sequence):
        raise InvalidParameterError(
            f"{parameter('datasets', where)} must be a list of completed tables; "
            f"got {type(datasets).__name__}"
        )
    if len(datasets) < 2:
        raise InvalidParameterError(
            f"{parameter('datasets', where)} must hold at least 2 completed tables (one per "
            f"imputation); got {len(datasets)}"
        )
    if first == last or any(c not in observed.columns for c in (first, last)):
        raise InvalidParameterError(
            f"`first` and `last` of {where} must name two different columns of the tables "
            f"({list(observed.columns)}); got {first!r} and {last!r}"
        )
    changes = []
    for k, table in enumerate(datasets):
        if not isinstance(table, pd.DataFrame) or not table.index.equals(observed.index):
            raise InvalidParameterError(
                f"table {k} of {parameter('datasets', where)} must be a DataFrame with the "
                "rows of `observed`"
            )
        pair = table.reindex(columns=[first, last]).to_numpy(dtype=float)
        if not np.isfinite(pair).all():
            raise InvalidParameterError(
                f"table {k} of {parameter('datasets', where)} has missing or infinite values "
                f"in {first!r} or {last!r}: it must be a completed table"
            )
        changes.append(pair[:, 1] - pair[:, 0])
    return observed, np.vstack(changes)


def _paired_row(change: np.ndarray, level: float) -> dict[str, float]:
    """Return the paired t test of ``change`` (mean, SE, df ``n - 1``, t, p, interval)."""
    n = len(change)
    estimate = float(change.mean()) if n else math.nan
    se = float(change.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
    df = float(n - 1) if n > 1 else math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = estimate / se if n > 1 else math.nan
    crit = float(special.stdtrit(df, 0.5 + level / 2)) if n > 1 else math.nan
    return {
        "n": n,
        "estimate": estimate,
        "se": se,
        "df": df,
        "statistic": stat,
        "p_value": float(2 * special.stdtr(df, -abs(stat))) if n > 1 else math.nan,
        "ci_low": estimate - crit * se,
        "ci_high": estimate + crit * se,
    }


def _pool(changes: np.ndarray, level: float) -> dict[str, float]:
    """Pool the paired mean changes of the m rows of ``changes`` (Barnard-Rubin, dfcom n - 1)."""
    from models import pool_imputations

    n = changes.shape[1]
    fits = [
        (pd.Series([c.mean()], index=["change"]), np.array([[c.var(ddof=1) / n]])) for c in changes
    ]
    row = pool_imputations(fits, df="barnard-rubin", dfcom=n - 1, ci_level=level).table.iloc[0]
    keys = ("estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high", "fmi")
    return {"n": n, **{k: float(row[k]) for k in keys}}
