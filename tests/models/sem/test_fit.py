"""Tests of models.sem._fit's RMSEA interval: the noncentrality solved for by Newton's method.

The ladders' intervals are compared with lavaan in test_invariance.py and test_wlsmv.py (to
1e-4); here the root itself, over a grid of statistics and degrees of freedom: the
noncentral chi-square puts exactly the asked probability below the statistic, and the root
equals the one SciPy's Brent method brackets.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special

from models.sem._fit import _noncentrality, rmsea_ci

DFS = (0.7, 1.0, 4.0, 29.0, 118.0, 900.0)
GRID = [(t, df) for df in DFS for t in (0.5, 2.0, 10.0, 60.0, 400.0)]


@pytest.mark.parametrize(("t", "df"), GRID)
@pytest.mark.parametrize("q", [0.95, 0.05])
def test_the_noncentrality_puts_q_below_the_statistic(t, df, q):
    lam = _noncentrality(t, df, q)
    if special.chdtr(df, t) < q:
        assert lam == 0.0  # even the central distribution puts less than q below t
        return
    assert special.chndtr(t, df, lam) == pytest.approx(q, abs=1e-12)
    high = max(t, 1.0)
    while special.chndtr(t, df, high) > q:
        high *= 2.0
    brent = optimize.brentq(
        lambda nc: special.chndtr(t, df, nc) - q, 0.0, high, xtol=1e-14, rtol=1e-14
    )
    assert lam == pytest.approx(brent, rel=1e-11, abs=1e-11)


def test_the_interval_is_nan_without_degrees_of_freedom_or_a_finite_statistic():
    for t, df in ((10.0, 0.0), (10.0, -1.0), (np.inf, 5.0), (np.nan, 5.0), (10.0, np.nan)):
        assert all(np.isnan(rmsea_ci(t, df, 200)))


def test_the_interval_brackets_the_point_estimate():
    t, df, n = 61.42, 15.0, 333
    low, high = rmsea_ci(t, df, n)
    point = np.sqrt(max(t - df, 0.0) / (n * df))
    assert low < point < high
    assert low == pytest.approx(np.sqrt(_noncentrality(t, df, 0.95) / (n * df)), rel=1e-15)
