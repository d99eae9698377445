"""The agreement coefficients of :func:`models.agreement.agreement`, from one count matrix.

:func:`_build_counts` turns the ratings (unit and category codes) into the sparse units x values
count matrix and the within-unit pairs of values; Krippendorff's alpha (:func:`_alpha_rows`,
resampled by :func:`_bootstrap_alpha`), Gwet's AC1/AC2 with the percent agreement
(:func:`_gwet`) and Fleiss' kappa (:func:`_fleiss`) are products of them.

Written here from the published formulas (Krippendorff 2011; Fleiss 1971; Gwet 2014); no code
of another package is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from _empathic_base.words import caller
from models._errors import InvalidParameterError
from models.limits import AGREEMENT_MAX_PAIRS

_WHERE = "agreement"  # messages speak for the function models.agreement.agreement
# bootstrap replicates computed together: bounds the (replicates x pairs) work arrays
_BLOCK_CELLS = 4_000_000


@dataclass(frozen=True)
class _Counts:
    """The units x values count matrix of the units with two or more ratings, and its pairs."""

    counts: sparse.csr_matrix  # units x categories
    x: np.ndarray  # the numeric value of each category (the level's position for text)
    labels: list[Any]  # each category as the data give it
    pair_a: np.ndarray  # category of the first value of each distinct pair (c, k)
    pair_b: np.ndarray
    pair_by_unit: sparse.csr_matrix  # units x pairs: the unit's coincidences o_ck
    pair_products: sparse.csr_matrix  # units x pairs: n_uc n_uk (c == k included)


def _build_counts(
    unit_codes: np.ndarray, cat_codes: np.ndarray, n_cat: int, unit_labels: Sequence[Any] = ()
) -> _Counts:
    """Count matrix and within-unit pairs of the units with two or more values.

    The pairs are those of each unit's distinct values, so a unit with ``d`` distinct values
    gives ``d**2`` of them; more than :data:`~models.limits.AGREEMENT_MAX_PAIRS` in all are
    refused before they are formed (``unit_labels`` names the unit with the most).
    """
    n_units = int(unit_codes.max()) + 1 if len(unit_codes) else 0
    counts = sparse.csr_matrix(
        (np.ones(len(unit_codes)), (unit_codes, cat_codes)), shape=(n_units, n_cat)
    )
    counts.sum_duplicates()
    counts.sort_indices()
    m = np.asarray(counts.sum(axis=1)).ravel()
    # every (entry, entry) pair inside each unit: entries are the unit's distinct values
    per_unit = np.diff(counts.indptr)
    n_pairs = int(np.sum(per_unit.astype(np.int64) ** 2))
    if n_pairs > AGREEMENT_MAX_PAIRS:
        worst = int(np.argmax(per_unit))
        name = f" (unit {unit_labels[worst]!s}" if len(unit_labels) > worst else " (one unit"
        raise InvalidParameterError(
            f"{caller(_WHERE)}: the ratings give {n_pairs:,} pairs of distinct values within "
            f"units, more than the {AGREEMENT_MAX_PAIRS:,} this computes in memory (about 1.5 GB): "
            f"each unit gives the square of its number of distinct values{name} has "
            f"{per_unit[worst]:,}). Round continuous values, or split the units"
        )
    entry_unit = np.repeat(np.arange(n_units), per_unit)
    reps = per_unit[entry_unit]
    first = np.repeat(np.arange(len(entry_unit)), reps)
    block = np.repeat(np.cumsum(reps) - reps, reps)
    second = counts.indptr[entry_unit[first]] + (np.arange(len(first)) - block)
    unit = entry_unit[first]
    c, k = counts.indices[first], counts.indices[second]
    n_c, n_k = counts.data[first], counts.data[second]
    products = n_c * n_k
    coincide = (products - np.where(first == second, n_c, 0.0)) / (m[unit] - 1.0)
    pair_id = c.astype(np.int64) * n_cat + k
    distinct, column = np.unique(pair_id, return_inverse=True)
    shape = (n_units, len(distinct))
    return _Counts(
        counts=counts,
        x=np.empty(0),
        labels=[],
        pair_a=(distinct // n_cat).astype(np.intp),
        pair_b=(distinct % n_cat).astype(np.intp),
        pair_by_unit=sparse.csr_matrix((coincide, (unit, column)), shape=shape),
        pair_products=sparse.csr_matrix((products, (unit, column)), shape=shape),
    )


def _interval_spread(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sum_c sum_k n_c n_k (x_c - x_k)^2 for each row of ``n`` (rows: value counts)."""
    total = n.sum(axis=-1)
    s1 = n @ x if x.ndim == 1 else (n * x).sum(axis=-1)
    s2 = n @ (x * x) if x.ndim == 1 else (n * x * x).sum(axis=-1)
    return 2.0 * (total * s2 - s1 * s1)


def _ratio_delta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    total = a + b
    with np.errstate(invalid="ignore", divide="ignore"):
        d = np.where(total > 0, (a - b) / np.where(total > 0, total, 1.0), 0.0)
    return d * d


def _ratio_spread(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """sum_c sum_k n_c n_k ((x_c - x_k) / (x_c + x_k))^2 for each row of ``n``, in blocks."""
    n = np.atleast_2d(n)
    out = np.zeros(n.shape[0])
    step = max(1, _BLOCK_CELLS // max(1, len(x)))
    for start in range(0, len(x), step):
        cols = slice(start, start + step)
        delta = _ratio_delta(x[:, None], x[None, cols])  # V x block
        out += ((n @ delta) * n[:, cols]).sum(axis=1)
    return out


def _alpha_rows(level: str, coincide: np.ndarray, n_cat: np.ndarray, built: _Counts) -> np.ndarray:
    """Krippendorff's alpha for each row of ``coincide`` (pairs) and ``n_cat`` (values).

    alpha = 1 - (n - 1) * sum_ck o_ck delta_ck / sum_ck n_c n_k delta_ck.
    """
    a, b, x = built.pair_a, built.pair_b, built.x
    total = n_cat.sum(axis=1)
    if level == "nominal":
        observed = coincide[:, a != b].sum(axis=1)
        expected = total * total - (n_cat * n_cat).sum(axis=1)
    elif level == "interval":
        observed = coincide @ ((x[a] - x[b]) ** 2)
        expected = _interval_spread(n_cat, x)
    elif level == "ratio":
        observed = coincide @ _ratio_delta(x[a], x[b])
        expected = _ratio_spread(n_cat, x)
    else:  # ordinal: the interval difference of the values' mid-ranks
        ranks = np.cumsum(n_cat, axis=1) - n_cat / 2.0
        observed = (coincide * (ranks[:, a] - ranks[:, b]) ** 2).sum(axis=1)
        expected = _interval_spread(n_cat, ranks)
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (total - 1.0) * observed / expected
    return np.where(expected > 0, alpha, np.nan)


def _gwet_weights_sum(kind: str, x: np.ndarray) -> float:
    """Sum of Gwet's weights over every ordered pair of the q categories (diagonal included)."""
    q = len(x)
    if kind == "identity":
        return float(q)
    if kind == "ordinal":
        d = np.arange(1, q)
        return float(q * q - 2.0 * np.sum((q - d) * (d + 1) * d / 2.0) / (q * (q - 1) / 2.0))
    span = x.max() - x.min()
    if kind == "quadratic":
        return float(q * q - _interval_spread(np.ones(q), x) / span**2)
    top = _ratio_delta(np.array([x.max()]), np.array([x.min()]))[0]
    return float(q * q - _ratio_spread(np.ones((1, q)), x)[0] / top)


def _gwet_weight(kind: str, xa: np.ndarray, xb: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Gwet's weight of each pair of categories (1 on the diagonal)."""
    q = len(x)
    if kind == "identity":
        return (xa == xb).astype(float)
    if kind == "ordinal":  # x holds the ranks 0..q-1 of the categories
        d = np.abs(xa - xb)
        return 1.0 - (d + 1.0) * d / 2.0 / (q * (q - 1) / 2.0)
    if kind == "quadratic":
        return 1.0 - (xa - xb) ** 2 / (x.max() - x.min()) ** 2
    top = _ratio_delta(np.array([x.max()]), np.array([x.min()]))[0]
    return 1.0 - _ratio_delta(xa, xb) / top


def _gwet(kind: str, built: _Counts, x_weights: np.ndarray) -> tuple[float, float]:
    """Gwet's AC1 (identity weights) or AC2 and the percent agreement it is built on."""
    counts = built.counts
    m = np.asarray(counts.sum(axis=1)).ravel()
    if len(x_weights) < 2:  # one category: every pair agrees (no range to weigh by)
        w = np.ones(len(built.pair_a))
    else:
        w = _gwet_weight(kind, x_weights[built.pair_a], x_weights[built.pair_b], x_weights)
    agree = (built.pair_products @ w - m) / (m * (m - 1.0))
    p_a = float(agree.mean())
    share = np.asarray((sparse.diags(1.0 / m) @ counts).mean(axis=0)).ravel()
    q = len(x_weights)
    if q < 2:
        return float("nan"), p_a
    p_e = _gwet_weights_sum(kind, x_weights) * float(np.sum(share * (1.0 - share))) / (q * (q - 1))
    return (p_a - p_e) / (1.0 - p_e), p_a


def _fleiss(counts: sparse.spmatrix | np.ndarray, n_raters: int) -> float:
    """Fleiss' kappa of units that all have ``n_raters`` ratings (rows: category counts).

    ``counts`` is kept sparse: units x categories is mostly zeros when there are many
    categories (35,000 labels of 30,000 units would be 8 GB as a dense array).
    """
    counts = sparse.csr_matrix(counts)
    n_units = counts.shape[0]
    squares = np.asarray(counts.multiply(counts).sum(axis=1)).ravel()
    agree = (squares - n_raters) / (n_raters * (n_raters - 1.0))
    shares = np.asarray(counts.sum(axis=0)).ravel() / (n_units * n_raters)
    chance = float(np.sum(shares * shares))
    if chance >= 1.0:
        return float("nan")
    return (float(agree.mean()) - chance) / (1.0 - chance)


def _rescaled(x: np.ndarray, level: str) -> np.ndarray:
    """Put the distinct values where their squared differences neither overflow nor vanish.

    Interval values are centred on their midrange and divided by their half-range (into
    [-1, 1]); ratio values are divided by the largest (into [0, 1]; a ratio has a true zero,
    so it is not shifted).

    Interval alpha and Gwet's quadratic weights do not change under ``a + b x`` (b > 0), and
    ratio alpha and Gwet's ratio weights not under ``b x``: only the rounding does, which on
    values near 1e200 or 1e-200, or on small differences of large values, would otherwise
    overflow to inf or cancel to 0.
    """
    if not len(x):
        return x
    if level == "interval":
        x = x - (x.max() / 2.0 + x.min() / 2.0)  # halves: max + min itself may overflow
    span = float(np.max(np.abs(x)))
    return x / span if span > 0 else x


def _bootstrap_alpha(level: str, built: _Counts, n_boot: int, seed: int) -> np.ndarray:
    """Alpha of ``n_boot`` resamples of whole units (with replacement), seeded.

    A resample is a vector of unit weights (how often each unit was drawn). For nominal,
    interval and ratio the observed disagreement of a unit does not change with the resample,
    so it is summed once per unit; ordinal differences depend on the resample's mid-ranks and
    are recomputed from the resampled coincidences.
    """
    n_units = built.counts.shape[0]
    rng = np.random.default_rng(seed)
    a, b, x = built.pair_a, built.pair_b, built.x
    counts_t = built.counts.T.tocsr()
    if level == "ordinal":
        width = max(built.pair_by_unit.shape[1], built.counts.shape[1], n_units, 1)
    elif level == "interval":
        width = max(n_units, 1)
    else:
        width = max(built.counts.shape[1], n_units, 1)
    if level == "nominal":
        per_unit = built.pair_by_unit @ (a != b).astype(float)
    elif level == "interval":
        per_unit = built.pair_by_unit @ ((x[a] - x[b]) ** 2)
        moments = built.counts @ np.column_stack([np.ones_like(x), x, x * x])  # units x 3
    elif level == "ratio":
        per_unit = built.pair_by_unit @ _ratio_delta(x[a], x[b])
    pairs_t = built.pair_by_unit.T.tocsr()
    block = max(1, _BLOCK_CELLS // width)
    out = np.empty(n_boot)
    for start in range(0, n_boot, block):
        size = min(block, n_boot - start)
        draws = rng.integers(0, n_units, size=(size, n_units))
        flat = (draws + (np.arange(size) * n_units)[:, None]).ravel()
        weights = np.bincount(flat, minlength=size * n_units).reshape(size, n_units)
        weights = weights.astype(float)
        if level == "ordinal":
            coincide = np.asarray(pairs_t @ weights.T).T
            n_cat = np.asarray(counts_t @ weights.T).T
            out[start : start + size] = _alpha_rows(level, coincide, n_cat, built)
            continue
        observed = weights @ per_unit
        if level == "interval":
            s0, s1, s2 = (weights @ moments).T
            expected = 2.0 * (s0 * s2 - s1 * s1)
            total = s0
        else:
            n_cat = np.asarray(counts_t @ weights.T).T
            total = n_cat.sum(axis=1)
            if level == "nominal":
                expected = total * total - (n_cat * n_cat).sum(axis=1)
            else:
                expected = _ratio_spread(n_cat, x)
        with np.errstate(invalid="ignore", divide="ignore"):
            alpha = 1.0 - (total - 1.0) * observed / expected
        out[start : start + size] = np.where(expected > 0, alpha, np.nan)
    return out
