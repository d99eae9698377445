"""Variance-component tables and the singular-fit description shared by the mixed models."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from models.formula import RandomBlock


def random_tables(
    blocks: list[RandomBlock], Ts: list[np.ndarray], scale: float = 1.0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``group, term, variance, sd`` and ``group, term1, term2, covariance, corr`` tables.

    ``Ts`` are the blocks' Cholesky factors; each block's covariance is ``scale**2 T T'``.
    """
    rows, corr_rows = [], []
    for block, T in zip(blocks, Ts, strict=True):
        cov = scale**2 * (T @ T.T)
        sd = np.sqrt(np.diag(cov))
        for i, term in enumerate(block.terms):
            rows.append((block.group, term, cov[i, i], sd[i]))
        for j in range(len(block.terms)):
            for i in range(j + 1, len(block.terms)):
                denom = sd[i] * sd[j]
                corr = cov[i, j] / denom if denom > 0 else np.nan
                corr_rows.append((block.group, block.terms[j], block.terms[i], cov[i, j], corr))
    random = pd.DataFrame(rows, columns=["group", "term", "variance", "sd"])
    random = random.astype({"variance": float, "sd": float})
    corr = pd.DataFrame(corr_rows, columns=["group", "term1", "term2", "covariance", "corr"])
    corr = corr.astype({"group": object, "term1": object, "term2": object})
    corr = corr.astype({"covariance": float, "corr": float})
    return random, corr


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
