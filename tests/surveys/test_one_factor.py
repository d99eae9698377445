"""Tests of surveys._one_factor: the minres one-factor fit behind omega.

The interior optimum comes from a hand-written Levenberg-Marquardt; it must be the optimum that
MINPACK's Levenberg-Marquardt (scipy.optimize.least_squares, method="lm") reaches from the
same start, on correlation matrices of every kind the scales give (simulated one-factor data,
random positive definite matrices, arbitrary symmetric ones). The Heywood cases, the bound and
omega against psych are tested in test_reliability.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import optimize

from surveys._one_factor import MAX_COMMUNALITY, _newton_polish, one_factor_uls


def _matrices(n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for trial in range(n):
        k = int(rng.integers(3, 12))
        if trial % 3 == 0:
            lam = rng.uniform(-0.2, 0.95, k)
            r = np.outer(lam, lam)
            np.fill_diagonal(r, 1.0)
            x = rng.multivariate_normal(np.zeros(k), r, size=int(rng.integers(20, 300)))
            out.append(np.corrcoef(x, rowvar=False))
        elif trial % 3 == 1:
            a = rng.normal(size=(k, k))
            out.append(np.corrcoef(a @ a.T + rng.uniform(0, 3) * np.eye(k)))
        else:
            r = rng.uniform(-0.5, 0.9, (k, k))
            r = (r + r.T) / 2
            np.fill_diagonal(r, 1.0)
            out.append(r)
    return out


def _minpack(r: np.ndarray) -> np.ndarray | None:
    """MINPACK's unbounded optimum from the first principal component, or None."""
    rows, cols = np.triu_indices(r.shape[0], 1)
    values, vectors = np.linalg.eigh(r)
    start = vectors[:, -1] * np.sqrt(max(values[-1], np.finfo(float).eps))
    tol = np.finfo(float).eps
    fit = optimize.least_squares(
        lambda lam: lam[rows] * lam[cols] - r[rows, cols],
        start,
        method="lm",
        xtol=tol,
        ftol=tol,
        gtol=tol,
    )
    inside = (np.abs(fit.x) <= np.sqrt(MAX_COMMUNALITY)).all()
    return fit.x if fit.status > 0 and np.isfinite(fit.x).all() and inside else None


def test_the_interior_optimum_is_minpacks():
    interior = bounded = 0
    for r in _matrices(90, seed=11):
        expected = _minpack(r)
        loadings, at_bound = one_factor_uls(r)
        if expected is None:
            bounded += 1
            continue
        interior += 1
        assert not at_bound.any()
        # MINPACK stops within about 1e-8 of the optimum; both are polished by Newton's steps
        expected = _newton_polish(expected, r, np.ones(r.shape[0], dtype=bool))
        expected = expected if expected.sum() >= 0 else -expected
        assert_allclose(loadings, expected, rtol=0, atol=1e-12)
        # the criterion's gradient vanishes to rounding
        e = np.outer(loadings, loadings) - r
        np.fill_diagonal(e, 0.0)
        assert np.abs(e @ loadings).max() < 1e-13
    assert interior > 45 and bounded > 10  # both paths were exercised


@pytest.mark.parametrize("k", [3, 6, 10])
def test_a_matrix_that_one_factor_reproduces_gives_its_loadings(k):
    lam = np.linspace(0.4, 0.9, k)
    r = np.outer(lam, lam)
    np.fill_diagonal(r, 1.0)
    loadings, at_bound = one_factor_uls(r)
    assert_allclose(loadings, lam, rtol=1e-12)
    assert not at_bound.any()
