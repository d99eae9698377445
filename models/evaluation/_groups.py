"""Group labels of the evaluation splitters: checked, coded, turned into row positions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from models._errors import InvalidParameterError


def _as_groups(groups: Any, *, func: str) -> np.ndarray:
    if isinstance(groups, str | bytes) or not hasattr(groups, "__len__"):
        raise InvalidParameterError(
            f"the `groups` parameter of {func} must be a 1-d array of group labels (one per "
            f"row); got {type(groups).__name__}"
        )
    arr = np.asarray(groups, dtype=object)
    if arr.ndim != 1:
        raise InvalidParameterError(
            f"the `groups` parameter of {func} must be 1-d; got an array of shape {arr.shape}"
        )
    if arr.size == 0:
        raise InvalidParameterError(f"the `groups` parameter of {func} is empty")
    missing = pd.isna(arr)
    if missing.any():
        raise InvalidParameterError(
            f"the `groups` parameter of {func} has {int(missing.sum())} missing label(s) "
            f"(first at row position {int(np.flatnonzero(missing)[0])}); every row needs a group"
        )
    return arr


def _unique_groups(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted unique labels (by their string form, so mixed types sort) and row codes."""
    labels = pd.unique(arr)
    order = sorted(range(len(labels)), key=lambda i: (str(labels[i]), type(labels[i]).__name__))
    labels = labels[order]
    codes = pd.Index(labels).get_indexer(arr)
    return np.asarray(labels, dtype=object), codes


def _rows_of(codes: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.isin(codes, chosen))
