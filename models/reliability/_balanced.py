"""Variance components of balanced, complete answers in closed form (one answer per cell).

The crossed design's components come from the expected mean squares of the three-way layout
(psych's ANOVA). The nested design (occasions within persons, items as replicates) has a
closed-form REML optimum on balanced data: the ANOVA estimates, whenever none of them is zero or
negative (Searle, Casella and McCulloch, 1992, Variance Components, ch. 6); otherwise the
caller fits REML. Answers with a few cells missing get the same ANOVA components of the layout
with those cells filled in (:func:`crossed_start`), as the starting point of the REML fit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["MAX_START_CELLS", "crossed_anova_components", "crossed_start", "nested_reml_components"]


MAX_START_CELLS = 5_000_000
"""The largest persons x occasions x items layout filled in for a start (40 MB a copy)."""


def _cube(
    long: pd.DataFrame, n_p: int, n_t: int, n_i: int, *, fill: float | None = None
) -> np.ndarray:
    """Return the answers as a persons x occasions x items array.

    ``fill``: the value of absent cells; None when every cell is present.
    """
    y = np.empty((n_p, n_t, n_i)) if fill is None else np.full((n_p, n_t, n_i), fill)
    y[long["person"].to_numpy(), long["occasion"].to_numpy(), long["item"].to_numpy()] = long[
        "value"
    ].to_numpy()
    return y


def crossed_anova_components(long: pd.DataFrame, n_p: int, n_t: int, n_i: int) -> dict[str, float]:
    """Expected-mean-squares components of a balanced three-way layout (one answer per cell)."""
    return _anova(_cube(long, n_p, n_t, n_i), n_p, n_t, n_i)


def crossed_start(long: pd.DataFrame, n_p: int, n_t: int, n_i: int) -> dict[str, float] | None:
    """ANOVA components of the layout with absent cells filled in: a start for REML, or None.

    An absent cell gets its person's, occasion's and item's mean answers less twice the grand
    mean (the additive fit of the main effects). None when the layout exceeds
    :data:`MAX_START_CELLS` or fewer than half its cells are answered (the filled cells would
    dominate).
    """
    cells = n_p * n_t * n_i
    if cells > MAX_START_CELLS or 2 * len(long) < cells:
        return None
    y = _cube(long, n_p, n_t, n_i, fill=0.0)
    given = _cube(long.assign(value=1.0), n_p, n_t, n_i, fill=0.0)
    if len(long) < cells:  # fill with the additive fit of the main effects, from the answers
        m = y.sum() / given.sum()
        mp, mt, mi = (
            np.divide(y.sum(axis=a), n, out=np.full(n.shape, m), where=n > 0)
            for a in ((1, 2), (0, 2), (0, 1))
            for n in [given.sum(axis=a)]
        )
        additive = mp[:, None, None] + mt[None, :, None] + mi[None, None, :] - 2 * m
        y = np.where(given > 0, y, additive)
    return _anova(y, n_p, n_t, n_i)


def _anova(y: np.ndarray, n_p: int, n_t: int, n_i: int) -> dict[str, float]:
    """Expected-mean-squares components of a complete persons x occasions x items array."""
    m = y.mean()
    mp, mt, mi = y.mean(axis=(1, 2)), y.mean(axis=(0, 2)), y.mean(axis=(0, 1))
    mpt, mpi, mti = y.mean(axis=2), y.mean(axis=1), y.mean(axis=0)
    ms_p = n_t * n_i * np.sum((mp - m) ** 2) / (n_p - 1)
    ms_t = n_p * n_i * np.sum((mt - m) ** 2) / (n_t - 1)
    ms_i = n_p * n_t * np.sum((mi - m) ** 2) / (n_i - 1)
    pt = mpt - mp[:, None] - mt[None, :] + m
    pi = mpi - mp[:, None] - mi[None, :] + m
    ti = mti - mt[:, None] - mi[None, :] + m
    ms_pt = n_i * np.sum(pt**2) / ((n_p - 1) * (n_t - 1))
    ms_pi = n_t * np.sum(pi**2) / ((n_p - 1) * (n_i - 1))
    ms_ti = n_p * np.sum(ti**2) / ((n_t - 1) * (n_i - 1))
    e = (
        y
        - mpt[:, :, None]
        - mpi[:, None, :]
        - mti[None, :, :]
        + mp[:, None, None]
        + mt[None, :, None]
        + mi[None, None, :]
        - m
    )
    ms_e = np.sum(e**2) / ((n_p - 1) * (n_t - 1) * (n_i - 1))
    return {
        "person": float((ms_p - ms_pt - ms_pi + ms_e) / (n_t * n_i)),
        "occasion": float((ms_t - ms_pt - ms_ti + ms_e) / (n_p * n_i)),
        "item": float((ms_i - ms_pi - ms_ti + ms_e) / (n_p * n_t)),
        "person_x_occasion": float((ms_pt - ms_e) / n_i),
        "person_x_item": float((ms_pi - ms_e) / n_t),
        "occasion_x_item": float((ms_ti - ms_e) / n_p),
        "residual": float(ms_e),
    }


def nested_reml_components(
    long: pd.DataFrame, n_p: int, n_t: int, n_i: int
) -> dict[str, float] | None:
    r"""REML components of the balanced nested design, or None when one is not positive.

    With person means :math:`\bar y_p`, person-occasion means :math:`\bar y_{pt}` and the grand
    mean :math:`\bar y`: :math:`MS_P = n_T n_I \sum_p (\bar y_p - \bar y)^2 / (n_P - 1)`,
    :math:`MS_{T(P)} = n_I \sum_{pt} (\bar y_{pt} - \bar y_p)^2 / (n_P (n_T - 1))`,
    :math:`MS_e = \sum_{pti} (y_{pti} - \bar y_{pt})^2 / (n_P n_T (n_I - 1))`, and
    :math:`\sigma^2_e = MS_e`, :math:`\sigma^2_{T(P)} = (MS_{T(P)} - MS_e) / n_I`,
    :math:`\sigma^2_P = (MS_P - MS_{T(P)}) / (n_T n_I)`. These solve the REML equations of
    balanced data; a zero or negative one means the REML optimum lies on the boundary, which
    only an iterative fit finds (None is returned).
    """
    y = _cube(long, n_p, n_t, n_i)
    mpt = y.mean(axis=2)
    mp = mpt.mean(axis=1)
    ms_p = n_t * n_i * np.sum((mp - mp.mean()) ** 2) / (n_p - 1)
    ms_tp = n_i * np.sum((mpt - mp[:, None]) ** 2) / (n_p * (n_t - 1))
    ms_e = np.sum((y - mpt[:, :, None]) ** 2) / (n_p * n_t * (n_i - 1))
    values = {
        "person": float((ms_p - ms_tp) / (n_t * n_i)),
        "occasion_in_person": float((ms_tp - ms_e) / n_i),
        "residual": float(ms_e),
    }
    return values if all(v > 0 for v in values.values()) else None
