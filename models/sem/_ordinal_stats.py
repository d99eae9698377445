"""Sample statistics of lavaan's WLSMV estimator for ordered-categorical items.

For items that are all declared ordered (one group, no covariates), lavaan 0.6's WLSMV fits the
model to three sample statistics, computed in the three stages of Muthen (1984):

1. the thresholds of each item from its marginal proportions over its ``L`` observed
   categories, ``tau_m = Phi^-1(p_1 + ... + p_m)`` for ``m = 1, ..., L - 1``;
2. the polychoric correlation of each pair by the two-step method (Olsson 1979): the
   thresholds held at their univariate values, ``rho`` maximises the pair's multinomial
   log-likelihood ``sum_rs n_rs log pi_rs(rho)``, ``pi_rs`` the bivariate-normal probability
   of the rectangle of cell ``(r, s)``;
3. the asymptotic covariance matrix of the stacked estimates ``(thresholds, correlations)``,
   the sandwich ``W = B^-1 J B^-T`` of the stage-wise estimating equations. ``J`` sums the outer
   products of the casewise scores ``(s_tau, s_rho)``; lavaan's bread ``B`` is also built from
   outer products, not Hessians: ``A11`` is ``J``'s threshold block kept within each item (the
   items' thresholds are estimated separately), ``A22`` the diagonal of ``sum s_rho^2``, and
   ``A21`` the sums of ``s_rho`` times the pair's bivariate-likelihood scores with respect to
   the thresholds of its two items, so that
   ``B^-1 = [[A11^-1, 0], [-A22^-1 A21 A11^-1, A22^-1]]``.

``lavInspect(fit, "gamma")`` is ``N W`` (N the cases used; no ``N / (N - 1)``), and the DWLS
weight ``lavInspect(fit, "wls.v")`` is the diagonal matrix ``1 / diag(N W)``. ``wls.obs``
stacks the thresholds item by item, then the correlations in lavaan's ``vech`` order without
the diagonal (column by column of the lower triangle: (2,1), (3,1), ..., (k,1), (3,2), ...).

Details kept as lavaan keeps them: a cell probability below ``sqrt(eps)`` is raised to it and
cases in such cells contribute no correlation score; for a 2 x 2 table with one empty cell
0.5 is moved into it and its diagonal partner while keeping the margins (``zero.add`` and
``zero.keep.margins``), for the estimate only; larger tables are used as they are; the
correlation is kept within ``[-0.999, 0.999]``.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special

from models._checks import check_choice, check_int
from models._errors import InvalidParameterError
from models.sem._bivariate_normal import bvn_density, bvn_upper
from models.sem._blas import controller

RHO_BOUND = 0.999
"""lavaan's bounds on a polychoric correlation (``nlminb(lower = -0.999, upper = 0.999)``)."""

PI_FLOOR = float(np.sqrt(np.finfo(float).eps))
"""lavaan 0.6's floor on a cell probability; cases in cells at the floor carry no score."""

ZERO_ADD_2X2 = 0.5
"""lavaan's ``zero.add[1]``: moved into the empty cell of a 2 x 2 table, keeping its margins."""

DEFAULT_MIN_COUNT = 1
"""Default of :func:`sparse_categories`: only categories nobody chose (see its Notes)."""

_FUNC = "ordinal_sample_stats"
_LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True, eq=False)
class OrdinalSampleStats:
    """Thresholds, polychoric correlations and their asymptotic covariance, as lavaan has them.

    Attributes
    ----------
    names : tuple of str
        The items, in the order of the input columns.
    n : int
        Cases used (listwise: complete rows; pairwise: rows with at least one answer).
    n_dropped : int
        Input rows left out.
    missing : {"listwise", "pairwise"}
        The missing-data rule.
    levels : tuple of ndarray
        The categories observed for each item, ascending; a category nobody chose is absent,
        so the item has one threshold fewer.
    thresholds : tuple of ndarray
        ``len(levels[j]) - 1`` thresholds of each item.
    polychoric : ndarray, shape (k, k)
        The polychoric correlations, ones on the diagonal.
    wls_obs : ndarray
        lavaan's ``wls.obs``: the thresholds item by item, then the correlations.
    gamma : ndarray
        lavaan's ``gamma`` (NACOV): ``n`` times the asymptotic covariance of ``wls_obs``.
    wls_v : ndarray
        The diagonal of lavaan's DWLS weight ``wls.v``, ``1 / diag(gamma)``.
    """

    names: tuple[str, ...]
    n: int
    n_dropped: int
    missing: Literal["listwise", "pairwise"]
    levels: tuple[np.ndarray, ...]
    thresholds: tuple[np.ndarray, ...]
    polychoric: np.ndarray
    wls_obs: np.ndarray
    gamma: np.ndarray
    wls_v: np.ndarray

    @property
    def n_thresholds(self) -> int:
        """The number of thresholds, the first block of :attr:`wls_obs`."""
        return sum(t.size for t in self.thresholds)

    @property
    def labels(self) -> tuple[str, ...]:
        """The lavaan names of the entries of :attr:`wls_obs` (``item|t1``, ``item~~other``)."""
        out = [
            f"{v}|t{m + 1}"
            for v, t in zip(self.names, self.thresholds, strict=True)
            for m in range(t.size)
        ]
        k = len(self.names)
        out += [f"{self.names[j]}~~{self.names[i]}" for j in range(k) for i in range(j + 1, k)]
        return tuple(out)

    def _position(self, name: str, where: str) -> int:
        if name not in self.names:
            raise InvalidParameterError(f"{where}: no item {name!r}; the items are {self.names}")
        return self.names.index(name)

    def threshold_index(self, item: str, threshold: int) -> int:
        """Return the position in :attr:`wls_obs` of ``item``'s threshold ``threshold``.

        ``threshold`` counts from 1, as lavaan's labels ``item|t1``, ``item|t2``, ... do.
        """
        j = self._position(item, "threshold_index")
        n_th = self.thresholds[j].size
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Integral):
            raise InvalidParameterError(
                f"threshold_index: threshold must be an integer; got {threshold!r}"
            )
        if not 1 <= threshold <= n_th:
            raise InvalidParameterError(
                f"threshold_index: item {item!r} has thresholds 1 to {n_th}; got {threshold}"
            )
        return sum(t.size for t in self.thresholds[:j]) + int(threshold) - 1

    def correlation_index(self, first: str, second: str) -> int:
        """Return the position in :attr:`wls_obs` of the correlation of two items (either order)."""
        a, b = (
            self._position(first, "correlation_index"),
            self._position(second, "correlation_index"),
        )
        if a == b:
            raise InvalidParameterError(
                f"correlation_index: two different items needed; got {first!r} twice"
            )
        j, i = min(a, b), max(a, b)
        k = len(self.names)
        return self.n_thresholds + j * (2 * k - j - 1) // 2 + (i - j - 1)


def _corners(grid: np.ndarray) -> np.ndarray:
    """Rectangle sums ``g[r+1, s+1] - g[r, s+1] - g[r+1, s] + g[r, s]`` over the last two axes."""
    return grid[..., 1:, 1:] - grid[..., :-1, 1:] - grid[..., 1:, :-1] + grid[..., :-1, :-1]


# -- input --------------------------------------------------------------------------------


def _check_frame(data: Any, where: str) -> list[str]:
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"{where}: data must be a pandas DataFrame; got {type(data).__name__}"
        )
    names = [str(c) for c in data.columns]
    if len(set(names)) < len(names):
        dup = sorted({c for c in names if names.count(c) > 1})
        raise InvalidParameterError(f"{where}: duplicated column name(s) {dup}")
    bad = [
        str(c)
        for c in data.columns
        if not pd.api.types.is_numeric_dtype(data[c]) or pd.api.types.is_bool_dtype(data[c])
    ]
    if bad:
        raise InvalidParameterError(
            f"{where}: the column(s) {bad} are not numeric; code the ordered answers as integers "
            "(NaN for a missing answer)"
        )
    for c in data.columns:
        values = data[c].to_numpy(dtype=float, na_value=np.nan)
        wrong = ~np.isnan(values) & ~(np.isfinite(values) & (values == np.round(values)))
        if wrong.any():
            raise InvalidParameterError(
                f"{where}: column {str(c)!r} holds {float(values[wrong][0])!r}, not an "
                "integer-coded answer (NaN marks a missing answer)"
            )
    return names


def _codes(values: np.ndarray, names: list[str], rows: np.ndarray, missing: str):
    """Recode each column to 0..L-1 over its observed categories (-1 = missing)."""
    codes = np.full(values.shape, -1, dtype=np.intp)
    levels = []
    for j, name in enumerate(names):
        col = values[:, j]
        seen = np.unique(col[~np.isnan(col)]).astype(np.int64)
        used = col[rows]
        answered = used[~np.isnan(used)]
        if missing == "listwise":
            empty = np.setdiff1d(seen, answered)
            if empty.size:
                raise InvalidParameterError(
                    f"{_FUNC}: after listwise deletion nobody in column {name!r} chose category "
                    f"{int(empty[0])}, which dropped rows did; lavaan stops here too (use "
                    "missing='pairwise' or recode the category)"
                )
        if seen.size < 2:
            raise InvalidParameterError(
                f"{_FUNC}: column {name!r} has {seen.size} observed categor"
                f"{'y' if seen.size == 1 else 'ies'}; an ordered item needs at least two"
            )
        ok = ~np.isnan(used)
        codes[rows[ok], j] = np.searchsorted(seen, used[ok].astype(np.int64))
        levels.append(seen)
    return codes[rows], levels


# -- stage 1 and 2 ------------------------------------------------------------------------


def _thresholds(codes: np.ndarray, levels: list[np.ndarray]) -> list[np.ndarray]:
    out = []
    for j, lev in enumerate(levels):
        col = codes[:, j]
        counts = np.bincount(col[col >= 0], minlength=lev.size)
        out.append(special.ndtri(np.cumsum(counts)[:-1] / counts.sum()))
    return out


class _Pairs:
    """The item pairs in lavaan's order, their tables and threshold grids, all at once."""

    def __init__(self, codes: np.ndarray, thresholds: list[np.ndarray]) -> None:
        k = codes.shape[1]
        self.first = np.array([j for j in range(k) for _ in range(j + 1, k)], dtype=np.intp)
        self.second = np.array([i for j in range(k) for i in range(j + 1, k)], dtype=np.intp)
        n_lev = np.array([t.size + 1 for t in thresholds])
        width = int(n_lev.max())
        # each item's limits -inf, tau_1, ..., tau_{L-1}, +inf, padded with +inf: padded cells
        # have probability 0 and no cases
        ext = np.full((k, width + 1), np.inf)
        ext[:, 0] = -np.inf
        for j, t in enumerate(thresholds):
            ext[j, 1 : t.size + 1] = t
        self.x = ext[self.first][:, :, None]
        self.y = ext[self.second][:, None, :]
        a, b = codes[:, self.first], codes[:, self.second]
        self.both = (a >= 0) & (b >= 0)
        self.cell_a, self.cell_b = np.where(self.both, a, 0), np.where(self.both, b, 0)
        p = np.broadcast_to(np.arange(self.first.size), a.shape)
        self.table = np.zeros((self.first.size, width, width))
        np.add.at(self.table, (p[self.both], a[self.both], b[self.both]), 1.0)
        self.n_lev_a, self.n_lev_b = n_lev[self.first], n_lev[self.second]
        # the CDF at the limits where one is infinite does not depend on rho: kept, and only
        # the finite crossings are integrated at each step
        grid_x, grid_y = np.broadcast_arrays(self.x, self.y)
        self.finite = np.isfinite(grid_x) & np.isfinite(grid_y)
        self.finite_x, self.finite_y = grid_x[self.finite], grid_y[self.finite]
        self.finite_pair = np.nonzero(self.finite)[0]
        self.edge = np.zeros(grid_x.shape)
        x_top, y_top = grid_x == np.inf, (grid_y == np.inf) & (grid_x != np.inf)
        self.edge[x_top] = special.ndtr(grid_y[x_top])
        self.edge[y_top] = special.ndtr(grid_x[y_top])

    def cells(self, rho: np.ndarray):
        """Return the cell probabilities and their first two derivatives in ``rho``."""
        r = rho[self.finite_pair]
        cdf = self.edge.copy()
        cdf[self.finite] = bvn_upper(-self.finite_x, -self.finite_y, r)
        dens, ddens = np.zeros(cdf.shape), np.zeros(cdf.shape)
        dens[self.finite], ddens[self.finite] = bvn_density(self.finite_x, self.finite_y, r)
        return _corners(cdf), _corners(dens), _corners(ddens)


def _fit_table(pairs: _Pairs) -> np.ndarray:
    """Return the tables the correlations are estimated from (lavaan's zero.add for 2 x 2)."""
    table = pairs.table.copy()
    two = np.flatnonzero((pairs.n_lev_a == 2) & (pairs.n_lev_b == 2))
    for p in two:
        t = table[p, :2, :2]
        empty = t == 0
        if empty.sum() >= 2:
            raise InvalidParameterError(
                f"{_FUNC}: the 2 x 2 table of two binary columns has {int(empty.sum())} empty "
                "cells (the answers are perfectly associated); lavaan sets their correlation "
                "to +/-1, which no weighted least squares fit can use"
            )
        if empty.sum() == 1:
            shift = ZERO_ADD_2X2 if (empty[0, 0] or empty[1, 1]) else -ZERO_ADD_2X2
            t += shift * np.array([[1.0, -1.0], [-1.0, 1.0]])
    return table


def _score(pairs: _Pairs, table: np.ndarray, rho: np.ndarray):
    pi, d1, d2 = pairs.cells(rho)
    ok = (pi > PI_FLOOR) & (table > 0)
    pi = np.where(ok, pi, 1.0)
    grad = np.where(ok, table * d1 / pi, 0.0).sum(axis=(1, 2))
    hess = np.where(ok, table * (d2 / pi - (d1 / pi) ** 2), 0.0).sum(axis=(1, 2))
    return grad, hess


def _polychoric(pairs: _Pairs, table: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Two-step ML correlations: safeguarded Newton steps on the score, all pairs at once."""
    lo = np.full(start.shape, -RHO_BOUND)
    hi = np.full(start.shape, RHO_BOUND)
    rho = np.clip(start, lo, hi)
    active = np.ones(start.shape, dtype=bool)
    for _ in range(100):
        if not active.any():
            break
        g, h = _score(pairs, table, rho)
        lo = np.where(active & (g > 0), rho, lo)
        hi = np.where(active & (g <= 0), rho, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(h < 0, rho - g / h, np.nan)
        # a Newton step this small leaves an error of its square: converged (or pinned at a
        # bound, where lavaan's nlminb stops too)
        done = (np.abs(step - rho) <= 1e-10) | (hi - lo <= 1e-14)
        new = np.where((step >= lo) & (step <= hi), step, (lo + hi) / 2.0)
        rho = np.where(active, new, rho)
        active &= ~done
    return rho


def _start(pairs: _Pairs) -> np.ndarray:
    """Return the Pearson correlations of the codes over each pair's cases (lavaan's start)."""
    w = pairs.both.astype(float)
    count = w.sum(axis=0)
    a, b = pairs.cell_a * w, pairs.cell_b * w
    da = a - a.sum(axis=0) / count * w
    db = b - b.sum(axis=0) / count * w
    saa, sbb, sab = (da * da).sum(axis=0), (db * db).sum(axis=0), (da * db).sum(axis=0)
    ok = (saa > 0) & (sbb > 0)
    return np.where(ok, sab / np.sqrt(np.where(ok, saa * sbb, 1.0)), 0.0)


# -- stage 3 ------------------------------------------------------------------------------


def _univariate_scores(codes: np.ndarray, thresholds: list[np.ndarray]) -> np.ndarray:
    """Casewise scores of each item's log-likelihood in its thresholds (0 for no answer)."""
    blocks = []
    for j, tau in enumerate(thresholds):
        lim = np.concatenate([[-np.inf], tau, [np.inf]])
        upper, lower = lim[1:], lim[:-1]
        # upper tails where both limits are above 1, as lavaan computes them
        prob = np.where(
            lower > 1,
            special.ndtr(-lower) - special.ndtr(-upper),
            special.ndtr(upper) - special.ndtr(lower),
        )
        dens = np.exp(-0.5 * tau * tau - 0.5 * _LOG_2PI)
        n_th = tau.size
        table = np.zeros((n_th + 1, n_th))
        cat = np.arange(n_th)
        table[cat, cat] = dens / prob[:-1]  # tau_m is the upper limit of category m - 1
        table[cat + 1, cat] -= dens / prob[1:]  # and the lower limit of category m
        col = codes[:, j]
        blocks.append(np.where((col >= 0)[:, None], table[np.maximum(col, 0)], 0.0))
    return np.hstack(blocks)


def _cdf_slope(x: np.ndarray, y: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Return ``d Phi2(x, y; r) / dx = phi(x) Phi((y - r x) / sqrt(1 - r^2))``, 0 at infinite x."""
    with np.errstate(invalid="ignore"):
        slope = special.ndtr((y - r * x) / np.sqrt(1.0 - r * r)) * np.exp(
            -0.5 * x * x - _LOG_2PI / 2
        )
    return np.where(np.isfinite(x), slope, 0.0)


def _pair_score_tables(pairs: _Pairs, rho: np.ndarray):
    """Per cell: the correlation score, and ``A21``'s entries for each pair's thresholds."""
    pi, dens, _ = pairs.cells(rho)
    ok = pi > PI_FLOOR
    pi = np.where(ok, pi, 1.0)
    ratio = np.where(ok, dens / pi, 0.0)
    r = rho[:, None, None]
    dx = _cdf_slope(pairs.x, pairs.y, r)  # d Phi2 / dx at every crossing of the limits
    dy = _cdf_slope(pairs.y, pairs.x, r)
    edge_a = dx[:, :, 1:] - dx[:, :, :-1]  # (P, width + 1, width): along a limit of the first item
    edge_b = dy[:, 1:, :] - dy[:, :-1, :]  # (P, width, width + 1)
    m = pairs.table * np.where(ok, ratio / pi, 0.0)
    a21_a = ((m[:, :-1, :] - m[:, 1:, :]) * edge_a[:, 1:-1, :]).sum(axis=2)
    a21_b = ((m[:, :, :-1] - m[:, :, 1:]) * edge_b[:, :, 1:-1]).sum(axis=1)
    return ratio, a21_a, a21_b


def _gamma(codes, thresholds, pairs: _Pairs, rho: np.ndarray) -> np.ndarray:
    """Return lavaan's NACOV, ``N B^-1 J B^-T`` of the stacked estimating equations."""
    n = codes.shape[0]
    sc_th = _univariate_scores(codes, thresholds)
    ratio, a21_a, a21_b = _pair_score_tables(pairs, rho)
    p_idx = np.broadcast_to(np.arange(rho.size), pairs.cell_a.shape)
    sc_rho = np.where(pairs.both, ratio[p_idx, pairs.cell_a, pairs.cell_b], 0.0)
    scores = np.hstack([sc_th, sc_rho])
    inner = scores.T @ scores
    n_th = sc_th.shape[1]
    offsets = np.concatenate([[0], np.cumsum([t.size for t in thresholds])])
    a11_inv = np.zeros((n_th, n_th))
    a21 = np.zeros((rho.size, n_th))
    for j in range(len(thresholds)):
        blk = slice(offsets[j], offsets[j + 1])
        a11_inv[blk, blk] = np.linalg.inv(inner[blk, blk])
        size = thresholds[j].size
        as_first, as_second = pairs.first == j, pairs.second == j
        a21[as_first, blk] = a21_a[as_first, :size]
        a21[as_second, blk] = a21_b[as_second, :size]
    a22_inv = 1.0 / np.diag(inner)[n_th:]
    b_inv = np.zeros(inner.shape)
    b_inv[:n_th, :n_th] = a11_inv
    b_inv[n_th:, :n_th] = -a22_inv[:, None] * (a21 @ a11_inv)
    b_inv[n_th:, n_th:] = np.diag(a22_inv)
    return n * (b_inv @ inner @ b_inv.T)


@dataclass
class _Prepared:
    """The validated items: codes of the rows used, categories, thresholds and pair tables."""

    names: list[str]
    n_rows: int
    codes: np.ndarray
    levels: list[np.ndarray]
    thresholds: list[np.ndarray]
    pairs: _Pairs


def _prepare(data: Any, missing: str) -> _Prepared:
    """Check the input, apply the missing-data rule and compute stage 1 and the tables."""
    names = _check_frame(data, _FUNC)
    check_choice(missing, ("listwise", "pairwise"), name="missing", where=_FUNC)
    if len(names) < 2:
        raise InvalidParameterError(
            f"{_FUNC}: at least two item columns are needed; got {len(names)}"
        )
    values = data.to_numpy(dtype=float, na_value=np.nan)
    answered = ~np.isnan(values)
    keep = answered.all(axis=1) if missing == "listwise" else answered.any(axis=1)
    rows = np.flatnonzero(keep)
    if rows.size == 0:
        raise InvalidParameterError(f"{_FUNC}: no row is left after {missing} deletion")
    codes, levels = _codes(values, names, rows, missing)
    thresholds = _thresholds(codes, levels)
    pairs = _Pairs(codes, thresholds)
    empty = np.flatnonzero(pairs.table.sum(axis=(1, 2)) == 0)
    if empty.size:
        p = empty[0]
        raise InvalidParameterError(
            f"{_FUNC}: no row answers both {names[pairs.first[p]]!r} and "
            f"{names[pairs.second[p]]!r}, so their correlation is undefined"
        )
    return _Prepared(names, values.shape[0], codes, levels, thresholds, pairs)


# -- entry points -------------------------------------------------------------------------


def ordinal_sample_stats(
    data: pd.DataFrame, *, missing: Literal["listwise", "pairwise"] = "listwise"
) -> OrdinalSampleStats:
    """Compute the sample statistics of lavaan's WLSMV for ordered-categorical items.

    Parameters
    ----------
    data : pandas.DataFrame
        One column per item, in model order, holding integer-coded ordered answers (NaN for
        a missing answer). Each item's categories are those observed, ascending; the codes
        need not be consecutive.
    missing : {"listwise", "pairwise"}, default "listwise"
        ``"listwise"`` (lavaan's default) keeps the complete rows. ``"pairwise"`` keeps every
        row with an answer: each item's thresholds come from its answers and each correlation
        from the pair's joint answers; an absent answer contributes no score to the
        asymptotic covariance.

    Returns
    -------
    OrdinalSampleStats
        The thresholds, polychoric correlations, ``wls_obs``, ``gamma`` and the DWLS weights.

    Raises
    ------
    InvalidParameterError
        If ``data`` is not a DataFrame with at least two uniquely named numeric columns, a
        column holds a value that is not an integer code, a column has fewer than two observed
        categories, listwise deletion empties a category that only dropped rows chose, no row
        (or, pairwise, no row for some pair) is left, or two binary items are perfectly
        associated.

    Notes
    -----
    Validated against ``lavaan::cfa(..., ordered = <all items>, estimator = "WLSMV")`` of
    lavaan 0.6-14 (``lavInspect`` "sampstat", "wls.obs", "gamma", "wls.v"), listwise and
    pairwise, on psychTools' ``sai`` (4-point items at two and three waves, and the same
    recoded to binary items) and geepack's ``respdis`` (3-point, four visits). The module
    docstring gives the formulas. As in lavaan, a category nobody chose simply does not exist
    for that item (lavaan turns the codes into an ordered factor of the observed values).

    References
    ----------
    Muthen, B. (1984). A general structural equation model with dichotomous, ordered
    categorical, and continuous latent variable indicators. Psychometrika, 49, 115-132.

    Olsson, U. (1979). Maximum likelihood estimation of the polychoric correlation
    coefficient. Psychometrika, 44, 443-460.

    Genz, A. (2004). Numerical computation of rectangular bivariate and trivariate normal and
    t probabilities. Statistics and Computing, 14, 251-260.
    """
    prep = _prepare(data, missing)
    codes, thresholds, pairs = prep.codes, prep.thresholds, prep.pairs
    # one BLAS thread: the products are small, and waking a threaded BLAS's workers costs
    # far more than the arithmetic on a busy machine
    with controller().limit(limits=1, user_api="blas"):
        rho = _polychoric(pairs, _fit_table(pairs), _start(pairs))
        gamma = _gamma(codes, thresholds, pairs, rho)
    cor = np.eye(len(prep.names))
    cor[pairs.second, pairs.first] = rho
    cor[pairs.first, pairs.second] = rho
    return OrdinalSampleStats(
        names=tuple(prep.names),
        n=codes.shape[0],
        n_dropped=prep.n_rows - codes.shape[0],
        missing=missing,
        levels=tuple(prep.levels),
        thresholds=tuple(thresholds),
        polychoric=cor,
        wls_obs=np.concatenate([*thresholds, rho]),
        gamma=gamma,
        wls_v=1.0 / np.diag(gamma),
    )


def sparse_categories(
    data: pd.DataFrame, *, categories: Any, min_count: int = DEFAULT_MIN_COUNT
) -> list[tuple[str, int, int]]:
    """List the declared categories that too few people chose, column by column.

    Parameters
    ----------
    data : pandas.DataFrame
        One column per item, integer-coded ordered answers, NaN for a missing answer.
    categories : iterable of int
        The declared response range shared by every column, e.g. ``range(1, 5)``.
    min_count : int, default 1
        A category chosen by fewer than ``min_count`` people is listed. The default lists only
        the categories nobody chose.

    Returns
    -------
    list of (str, int, int)
        ``(column, category, count)`` for each sparse category, in column then category
        order; empty when every category reaches ``min_count``. Counts are over each column's
        answers (listwise deletion may remove more).

    Raises
    ------
    InvalidParameterError
        If ``data`` is not a DataFrame of integer-coded columns, ``categories`` is empty or
        not integers, ``min_count`` is not a positive integer, or a column holds an answer
        outside ``categories``.

    Notes
    -----
    Why 1: a category nobody chose is absent from the item's thresholds (lavaan, and
    :func:`ordinal_sample_stats`, keep only the observed categories), so the item has fewer
    thresholds than at other waves and equal-threshold constraints across waves no longer
    line up; lavaan 0.6-14 itself stops when a declared category of an ordered item is empty
    in a group. A sparse but non-empty category still gives defined estimates; DiStefano,
    Shi and Morgan (2021) found that collapsing sparse categories served WLSMV better than
    modelling them, so a caller who wants to flag them passes a larger ``min_count``.

    References
    ----------
    DiStefano, C., Shi, D., & Morgan, G. B. (2021). Collapsing categories is often more
    advantageous than modeling sparse data: Investigations in the CFA framework. Structural
    Equation Modeling, 28(2), 237-249.
    """
    where = "sparse_categories"
    names = _check_frame(data, where)
    try:
        given = list(categories)
        declared = [int(c) for c in given if int(c) == c]
    except (TypeError, ValueError) as err:
        raise InvalidParameterError(
            f"{where}: categories must be integers; got {categories!r}"
        ) from err
    if not declared or len(declared) != len(given):
        raise InvalidParameterError(f"{where}: categories must be integers; got {categories!r}")
    min_count = check_int(min_count, name="min_count", where=where, minimum=1)
    out = []
    for name, col in zip(names, data.columns, strict=True):
        values = data[col].to_numpy(dtype=float, na_value=np.nan)
        values = values[~np.isnan(values)]
        outside = np.setdiff1d(values, declared)
        if outside.size:
            raise InvalidParameterError(
                f"{where}: column {name!r} holds {outside[0]:g}, outside the declared "
                f"categories {declared}"
            )
        for c in declared:
            count = int((values == c).sum())
            if count < min_count:
                out.append((name, c, count))
    return out
