"""The random-intercept REML fit behind "2l.norm" (models/_two_level.py) against lme4.

tests/models/reference/two_level.R simulates 146 rows in 30 clusters of 1 to 9 rows and fits
``y ~ x + z + (1 | cluster)`` by lme4 1.1-31 (REML, BOBYQA to rhoend 1e-10): the fixed effects,
their covariance, both variances and the REML criterion agree to 1e-6 relative (lme4's own
stopping point is the limit). On the first 8 clusters with a response without cluster
variance lme4 stops on the boundary (singular): so does the fit here, with the same
estimates to 1e-10. The same deviance is the posterior of the variance ratio that the
imputation draws from: 1,000 draws of the two-stage grid against the posterior on a fine grid.
One draw of the missing cells is seeded: the same seed, the same values.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._two_level import _deviance, _draw_omega, _sums, draw_missing, fit_random_intercept

REFERENCE = Path(__file__).parent / "reference"


@pytest.fixture(scope="module")
def reference():
    data = pd.read_csv(REFERENCE / "two_level.csv")
    with (REFERENCE / "two_level.json").open(encoding="utf-8") as fh:
        return data, json.load(fh)


def _design(data):
    x = np.column_stack([np.ones(len(data)), data["x"], data["z"]])
    return x, data["cluster"].to_numpy() - 1


def _compare(fit, ref, rtol):
    np.testing.assert_allclose(fit.beta, ref["beta"], rtol=rtol)
    np.testing.assert_allclose(fit.cov, np.array(ref["cov"]), rtol=rtol)
    np.testing.assert_allclose(fit.sigma2, ref["sigma2"], rtol=rtol)
    np.testing.assert_allclose(fit.deviance, ref["reml_criterion"], rtol=1e-10)


def test_unbalanced_clusters_as_lme4(reference):
    data, ref = reference
    x, groups = _design(data)
    fit = fit_random_intercept(data["y"].to_numpy(), x, groups)
    assert ref["unbalanced"]["n_obs"] == len(data) == 146
    _compare(fit, ref["unbalanced"], 1e-6)
    np.testing.assert_allclose(fit.tau2, ref["unbalanced"]["tau2"], rtol=1e-6)


def test_no_cluster_variance_stops_on_the_boundary_as_lme4(reference):
    data, ref = reference
    small = data[data["cluster"] <= 8]
    x, groups = _design(small)
    fit = fit_random_intercept(small["y_flat"].to_numpy(), x, groups)
    assert ref["singular"]["is_singular"] and fit.theta == 0.0 and fit.tau2 == 0.0
    _compare(fit, ref["singular"], 1e-10)
    assert ref["singular"]["tau2"] < 1e-12


def test_a_draw_is_seeded_and_fills_every_cell(reference):
    data, _ = reference
    x, groups = _design(data)
    y = data["y"].to_numpy()
    gone = np.arange(len(data)) % 4 == 0
    draws = [
        draw_missing(
            y[~gone],
            x[~gone],
            groups[~gone],
            x[gone],
            groups[gone],
            n_groups=30,
            rng=np.random.default_rng(seed),
        )
        for seed in (5, 5, 6)
    ]
    assert draws[0].shape == (int(gone.sum()),) and np.isfinite(draws[0]).all()
    np.testing.assert_array_equal(draws[0], draws[1])
    assert not np.allclose(draws[0], draws[2])


def test_the_variance_ratio_is_drawn_from_its_posterior(reference):
    # exp(-D / 2) on a fine grid of omega (the uniform shrinkage prior) against 1,000 draws of
    # the two-stage grid: the mean and the quartiles agree within Monte Carlo error
    data, _ = reference
    x, groups = _design(data)
    sums = _sums(data["y"].to_numpy(), x, groups, 30)
    n_bar = float(sums.n.mean())
    omega = (np.arange(20_000) + 0.5) / 20_000
    log_post = -0.5 * _deviance(sums, omega / (n_bar * (1 - omega)))
    weight = np.exp(log_post - log_post.max())
    weight /= weight.sum()
    mean = float(omega @ weight)
    sd = math.sqrt(float((omega - mean) ** 2 @ weight))
    quartiles = np.interp([0.25, 0.75], np.cumsum(weight), omega)
    rng = np.random.default_rng(12)
    draws = np.array([_draw_omega(sums, n_bar, rng) for _ in range(1000)])
    assert abs(draws.mean() - mean) < 4 * sd / math.sqrt(1000)
    # a quartile's Monte Carlo SE is about 1.1 sd / sqrt(1000): the tolerance is about 5 of them
    np.testing.assert_allclose(np.quantile(draws, [0.25, 0.75]), quartiles, atol=5 * sd / 30)
