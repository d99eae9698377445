"""The input of :func:`models.sem.measurement_invariance`: its parameters and the wide answers.

:func:`check_parameters` refuses a bad parameter before the data are read; :func:`wide`
turns the long answers (one row per participant and wave) into one row per participant with
the columns wave by wave (the items of the first wave, then of the second, ...) and applies
the missing-data rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from models._checks import check_choice, check_unit
from models._errors import InvalidParameterError

FUNC = "measurement_invariance"

ESTIMATORS = ("ML", "MLR", "WLSMV")
"""The estimators of the ladder: normal-theory ML, ML with robust corrections, ordinal WLSMV."""

NAN_POLICIES = {
    "ML": ("raise", "omit", "fiml"),
    "MLR": ("raise", "omit", "fiml"),
    "WLSMV": ("raise", "omit", "pairwise"),
}
"""The missing-data rules each estimator accepts."""


def check_parameters(
    estimator: str,
    nan_policy: str,
    ci_level: float,
    delta_cfi: float,
    delta_rmsea: float,
    items: Any,
) -> None:
    """Refuse a bad parameter of :func:`measurement_invariance` (before the data are read)."""
    check_choice(estimator, ESTIMATORS, name="estimator", where=FUNC)
    check_choice(nan_policy, ("raise", "omit", "fiml", "pairwise"), name="nan_policy", where=FUNC)
    if nan_policy == "fiml" and estimator == "WLSMV":
        raise InvalidParameterError(
            f"the `nan_policy` parameter of {FUNC}: full-information ML does not exist for "
            "estimator='WLSMV' (it fits thresholds and polychoric correlations, not the "
            "likelihood of the answers); use nan_policy='omit' (listwise deletion, lavaan's "
            "default) or nan_policy='pairwise'"
        )
    if nan_policy == "pairwise" and estimator != "WLSMV":
        raise InvalidParameterError(
            f"the `nan_policy` parameter of {FUNC}: 'pairwise' is for estimator='WLSMV' "
            f"(pairwise polychoric correlations); with estimator={estimator!r} use "
            "nan_policy='fiml' (full-information ML) or 'omit'"
        )
    check_unit(ci_level, name="ci_level", where=FUNC)
    for name, value in (("delta_cfi", delta_cfi), ("delta_rmsea", delta_rmsea)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise InvalidParameterError(
                f"the `{name}` parameter of {FUNC} must be a non-negative number; got {value!r}"
            )
    if isinstance(items, str) or not isinstance(items, list | tuple):
        raise InvalidParameterError(
            f"the `items` parameter of {FUNC} must be a list of column names; got {items!r}"
        )


def _check_frame(
    data: Any, items: list[str], id_col: str, wave_col: str, waves: list[Any] | None
) -> list[Any]:
    """Refuse a frame without the columns or with non-numeric items; return the waves."""
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {FUNC} must be a pandas DataFrame (long format: one row "
            f"per participant and wave); got {type(data).__name__}"
        )
    missing_cols = [c for c in [id_col, wave_col, *items] if c not in data.columns]
    if missing_cols:
        raise InvalidParameterError(f"{FUNC}: the data lack the column(s) {missing_cols}")
    non_numeric = [c for c in items if not pd.api.types.is_numeric_dtype(data[c])]
    if non_numeric:
        raise InvalidParameterError(
            f"{FUNC}: the item column(s) {non_numeric} must be numeric; convert them "
            "explicitly (codes are never converted here)"
        )
    if waves is None:
        if not pd.api.types.is_numeric_dtype(data[wave_col]):
            raise InvalidParameterError(
                f"the `waves` parameter of {FUNC} is needed when `{wave_col}` is not numeric: "
                "pass the wave labels in their order, e.g. waves=['pre', 'mid', 'post']"
            )
        waves = sorted(data[wave_col].dropna().unique().tolist())
    waves = list(waves)
    if len(waves) < 2:
        raise InvalidParameterError(f"{FUNC} needs at least two waves; got {waves!r}")
    if len(items) < 2:
        raise InvalidParameterError(f"{FUNC} needs at least two items; got {items!r}")
    return waves


def wide(
    data: Any,
    items: list[str],
    id_col: str,
    wave_col: str,
    waves: list[Any] | None,
    nan_policy: str,
    estimator: str = "ML",
) -> tuple[np.ndarray, list[Any], int, pd.Index]:
    """Return the participants' answers wave by wave, the waves, those left out, the ids.

    ``nan_policy="fiml"`` and ``"pairwise"`` keep every participant with an answer (those
    with none are left out and counted); ``"omit"`` keeps the complete participants;
    ``"raise"`` refuses an incomplete one.
    """
    waves = _check_frame(data, items, id_col, wave_col, waves)
    problems: list[str] = []
    frame = data[data[wave_col].isin(waves)]
    unknown = sorted(set(data[wave_col].dropna()) - set(waves), key=str)
    if unknown:
        problems.append(
            f"{int((~data[wave_col].isin(waves)).sum())} row(s) have a `{wave_col}` value not "
            f"in waves={waves!r}: {unknown[:5]!r}"
        )
    absent = [w for w in waves if not (frame[wave_col] == w).any()]
    if absent:
        problems.append(f"no row has the wave(s) {absent!r} in `{wave_col}`")
    no_id = frame[id_col].isna()
    if no_id.any():
        problems.append(f"{int(no_id.sum())} row(s) have no `{id_col}`")
    dup = frame.duplicated([id_col, wave_col], keep=False)
    if dup.any():
        ids = frame.loc[dup, id_col].drop_duplicates().tolist()
        problems.append(
            f"{int(dup.sum())} rows repeat a participant x wave ({id_col} {ids[:10]!r}); "
            "rows are never averaged"
        )
    if problems:
        raise InvalidParameterError(f"{FUNC}: " + "; ".join(problems))
    table = frame.set_index([id_col, wave_col])[items].unstack(wave_col)
    columns = [(item, wave) for wave in waves for item in items]
    table = table.reindex(columns=pd.MultiIndex.from_tuples(columns))
    if nan_policy in ("fiml", "pairwise"):
        empty = table.isna().all(axis=1)
        return table.loc[~empty].to_numpy(dtype=float), waves, int(empty.sum()), table.index
    incomplete = table.isna().any(axis=1)
    n_excluded = int(incomplete.sum())
    if n_excluded and nan_policy == "raise":
        choices = (
            "nan_policy='omit' to leave them out (listwise deletion, lavaan's default; they "
            "are counted in the result) or nan_policy='pairwise' to use every pair of answers"
            if estimator == "WLSMV"
            else "nan_policy='fiml' to use every answer (full-information ML) or "
            "nan_policy='omit' to leave them out (they are counted in the result)"
        )
        raise InvalidParameterError(
            f"{FUNC}: {n_excluded} of {len(table)} participants lack an answer or a wave "
            f"(first ids: {table.index[incomplete].tolist()[:10]!r}). Pass {choices}."
        )
    table = table.loc[~incomplete]
    return table.to_numpy(dtype=float), waves, n_excluded, table.index
