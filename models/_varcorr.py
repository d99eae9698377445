"""Variance-component tables and the singular-fit description shared by the mixed models."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from models.formula import RandomBlock


def random_tables(
    blocks: list[RandomBlock],
    Ts: list[np.ndarray],
    scale: float = 1.0,
    *,
    residual: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``group, term, variance, sd`` and ``group, term1, term2, covariance, corr`` tables.

    ``Ts`` are the blocks' Cholesky factors; each block's covariance is ``scale**2 T T'``.
    With ``residual``, a last row ``Residual`` (no term) holds the residual variance
    ``scale**2`` of a linear mixed model.
    """
    groups, terms, variances = [], [], []
    pairs: dict[str, list[Any]] = {k: [] for k in ("group", "term1", "term2", "covariance")}
    corrs: list[float] = []
    for block, T in zip(blocks, Ts, strict=True):
        cov = scale**2 * (T @ T.T)
        sd = np.sqrt(np.diag(cov))
        groups += [block.group] * len(block.terms)
        terms += list(block.terms)
        variances += np.diag(cov).tolist()
        for j in range(len(block.terms)):
            for i in range(j + 1, len(block.terms)):
                denom = sd[i] * sd[j]
                pairs["group"].append(block.group)
                pairs["term1"].append(block.terms[j])
                pairs["term2"].append(block.terms[i])
                pairs["covariance"].append(float(cov[i, j]))
                corrs.append(float(cov[i, j] / denom) if denom > 0 else np.nan)
    if residual:
        groups.append("Residual")
        terms.append(None)
        variances.append(scale**2)
    var = np.asarray(variances, dtype=float)
    random = pd.DataFrame(
        {
            "group": _objects(groups),
            "term": _objects(terms),
            "variance": var,
            "sd": np.sqrt(var),
        },
        copy=False,
    )
    corr = pd.DataFrame(
        {
            "group": _objects(pairs["group"]),
            "term1": _objects(pairs["term1"]),
            "term2": _objects(pairs["term2"]),
            "covariance": np.asarray(pairs["covariance"], dtype=float),
            "corr": np.asarray(corrs, dtype=float),
        },
        copy=False,
    )
    return random, corr


def _objects(values: list[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def singular_description(blocks: list[RandomBlock], Ts: list[np.ndarray], tol: float) -> str:
    """Say which variance is at 0 or which term is perfectly correlated with earlier ones."""
    parts = []
    for block, T in zip(blocks, Ts, strict=True):
        d = np.diag(T)
        for i, term in enumerate(block.terms):
            if d[i] < tol:
                if i == 0 or np.allclose(T[i, :i], 0):
                    parts.append(f"variance of {term!r} in {block.group!r} estimated at 0")
                else:
                    parts.append(
                        f"{term!r} in {block.group!r} is perfectly correlated (+-1) with the "
                        "terms before it"
                    )
    return "; ".join(parts)


def json_number(x: Any) -> Any:
    """Return ``x`` as a JSON-safe scalar: Python numbers, ``None`` for NaN and infinities."""
    if x is None:
        return None
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return None if not np.isfinite(x) else float(x)
    return x
