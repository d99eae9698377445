"""Checks and the wide person x wave panel that every change analysis starts from.

Duplicated person x wave rows are refused and incomplete cases listed here, before pingouin
sees the data (it would average duplicates and drop incomplete people silently).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal.change.results import EXCLUDED_COLUMNS
from surveys import InputValidationError


@dataclass(frozen=True)
class _Panel:
    wide: pd.DataFrame  # index: subjects (first-appearance order); columns: waves in order
    waves: tuple[Hashable, ...]


def _check_waves(waves: object, func: str) -> tuple[Hashable, ...]:
    if isinstance(waves, str) or not isinstance(waves, Sequence):
        raise InvalidParameterError(
            f"the `waves` parameter of {func} must be a sequence of wave labels in time order, "
            f'e.g. ["pre", "mid", "post"]; got {waves!r}'
        )
    labels = tuple(waves)
    if len(labels) < 2:
        raise InvalidParameterError(
            f"the `waves` parameter of {func} needs at least two wave labels; got {labels!r}"
        )
    if len(set(labels)) != len(labels):
        raise InvalidParameterError(
            f"the `waves` parameter of {func} must not repeat a label; got {labels!r}"
        )
    return labels


def _panel(
    data: object,
    *,
    id_col: str,
    wave_col: str,
    outcome_col: str,
    waves: object,
    func: str,
) -> _Panel:
    """Validate a long table and return the subject x wave matrix (no aggregation)."""
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {func} must be a pandas DataFrame in long format; "
            f"got {type(data).__name__}"
        )
    labels = _check_waves(waves, func)
    for name, col in (
        ("id_col", id_col),
        ("wave_col", wave_col),
        ("outcome_col", outcome_col),
    ):
        if not isinstance(col, str) or col not in data.columns:
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must name a column of `data` "
                f"({', '.join(map(str, data.columns))}); got {col!r}"
            )
    if len({id_col, wave_col, outcome_col}) != 3:
        raise InvalidParameterError(
            f"{func} needs three different columns for `id_col`, `wave_col` and "
            f"`outcome_col`; got {id_col!r}, {wave_col!r}, {outcome_col!r}"
        )
    outcome = data[outcome_col]
    if not pd.api.types.is_numeric_dtype(outcome) or pd.api.types.is_bool_dtype(outcome):
        raise InvalidParameterError(
            f"the outcome column {outcome_col!r} given to {func} must be numeric; "
            f"got dtype {outcome.dtype}"
        )

    problems: list[dict[str, Any]] = []
    subj = data[id_col]
    wave = data[wave_col]
    values = outcome.astype(float)
    for idx in data.index[subj.isna().to_numpy()]:
        problems.append(
            {"column": id_col, "value": None, "reason": f"missing subject id (index {idx!r})"}
        )
    known = wave.isin(list(labels))
    for idx, val in wave[~known].items():
        problems.append(
            {
                "column": wave_col,
                "value": val,
                "reason": f"wave label not in waves={list(labels)!r} (index {idx!r})",
            }
        )
    infinite = np.isinf(values.to_numpy())
    for idx, val in values[infinite].items():
        problems.append(
            {"column": outcome_col, "value": val, "reason": f"infinite outcome (index {idx!r})"}
        )
    usable = subj.notna() & known
    dup = data.loc[usable].duplicated(subset=[id_col, wave_col], keep=False)
    if dup.any():
        dups = data.loc[usable].loc[dup, [id_col, wave_col]]
        for (sid, wv), grp in dups.groupby([id_col, wave_col], sort=False):
            problems.append(
                {
                    "column": id_col,
                    "value": sid,
                    "reason": (
                        f"subject {sid!r} has {len(grp)} rows at wave {wv!r} "
                        f"(index {', '.join(map(repr, grp.index))}); "
                        "one row per subject and wave is required"
                    ),
                }
            )
    if problems:
        cases = pd.DataFrame(problems)
        cases["file"] = None
        cases["row"] = None
        raise InputValidationError(
            cases, summary=f"{func}: invalid long-format data ({outcome_col!r} by {wave_col!r})"
        )

    keep = data.loc[usable, [id_col, wave_col]].copy()
    keep["_y"] = values[usable]
    subjects = pd.unique(keep[id_col])
    wide = keep.set_index([id_col, wave_col])["_y"].unstack(wave_col)
    wide = wide.reindex(index=pd.Index(subjects, name=id_col), columns=list(labels))
    wide.columns = pd.Index(list(labels), name=wave_col)
    return _Panel(wide=wide.astype(float), waves=labels)


def _excluded_table(wide: pd.DataFrame) -> pd.DataFrame:
    observed = wide.notna()
    incomplete = ~observed.all(axis=1)
    rows = [
        {
            "id": sid,
            "n_observed": int(observed.loc[sid].sum()),
            "missing_waves": ", ".join(str(w) for w in wide.columns[~observed.loc[sid].to_numpy()]),
        }
        for sid in wide.index[incomplete.to_numpy()]
    ]
    return pd.DataFrame(rows, columns=EXCLUDED_COLUMNS)


def _package_version() -> str:
    from surveys import __version__

    return __version__


def _meta_head(func: str, **parameters: Any) -> dict[str, Any]:
    """Return the first keys of every change result's ``meta``: function, version, parameters."""
    return {"function": func, "version": _package_version(), "parameters": parameters}
