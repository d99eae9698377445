"""Bayesian R-squared of BayesianMixedModel (models/bayes/_r2.py), by simulation with known truth.

Data: 40 groups of 8 rows, ``x ~ N(0, 1)``, slope 0.8, group intercepts ``N(0, 0.7^2)``;
gaussian residuals of sd 1 or, with their own group intercepts, a logistic latent residual
cut at -1.5, 0, 1.5 into four categories.
The population R-squared of the conditional linear predictor is
``(0.8^2 + 0.7^2) / (0.8^2 + 0.7^2 + var_res)`` with ``var_res`` 1 (gaussian) or ``pi^2/3``
(ordinal, latent scale): 0.5305 and 0.2557. Short chains (2 x 300 draws after 300 tuning
steps; PyMC's sampler, whose compiled model is cached on disk, costs a third of nutpie's
per-structure compilation here) give 95% HDIs about 0.12 (gaussian) and 0.18 (ordinal) wide;
the truth must lie inside and the interval must be narrower than 0.25, so a value on another
scale (the data scale for the ordinal family, or a residual variance left out) fails.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from models._errors import InvalidParameterError, SamplingWarning
from models.bayes import BayesianMixedModel, BayesianR2

B, TAU = 0.8, 0.7
TRUTH = {
    "gaussian": (B**2 + TAU**2) / (B**2 + TAU**2 + 1.0),
    "ordinal": (B**2 + TAU**2) / (B**2 + TAU**2 + math.pi**2 / 3),
}
SAMPLING = {"draws": 300, "tune": 300, "chains": 2, "seed": 3, "sampler": "pymc"}


def simulate(seed=11, n_groups=40, per_group=8):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), per_group)
    x = rng.normal(size=g.size)
    y = 1.0 + B * x + rng.normal(0.0, TAU, n_groups)[g] + rng.normal(0.0, 1.0, g.size)
    latent = B * x + rng.normal(0.0, TAU, n_groups)[g] + rng.logistic(size=g.size)
    rating = np.digitize(latent, [-1.5, 0.0, 1.5]) + 1
    return pd.DataFrame({"y": y, "rating": rating, "x": x, "g": [f"g{i:02d}" for i in g]})


@pytest.fixture(scope="module")
def fits():
    data = simulate()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)  # short chains miss the ESS bar
        gaussian = BayesianMixedModel("y ~ x + (1 | g)", family="gaussian", **SAMPLING).fit(data)
        ordinal = BayesianMixedModel("rating ~ x + (1 | g)", **SAMPLING).fit(data)
    return {"gaussian": gaussian, "ordinal": ordinal, "data": data}


@pytest.mark.parametrize("family", ["gaussian", "ordinal"])
def test_truth_lies_in_the_interval(fits, family):
    r2 = fits[family].r2()
    assert isinstance(r2, BayesianR2)
    assert r2.ci_low < TRUTH[family] < r2.ci_high
    assert r2.ci_high - r2.ci_low < 0.25
    assert r2.scale == ("data" if family == "gaussian" else "latent")
    assert r2.ci_low <= r2.estimate <= r2.ci_high


def test_gaussian_draws_match_a_direct_computation(fits):
    """Each draw's R-squared from the posterior's fixed effects, group effects and sigma."""
    model, data = fits["gaussian"], fits["data"]
    post = model.posterior_
    fixed = post["fixed"].sel(term=["Intercept", "x"]).values.reshape(-1, 2)
    re = post["re_0"].values.reshape(-1, post.sizes["level_0"])
    levels = list(post["level_0"].values)
    index = np.array([levels.index(v) for v in data["g"]])
    eta = fixed[:, [0]] + fixed[:, [1]] * data["x"].to_numpy()[None, :] + re[:, index]
    fitted = eta.var(axis=1, ddof=1)
    expected = fitted / (fitted + post["sigma"].values.reshape(-1) ** 2)
    r2 = model.r2()
    np.testing.assert_allclose(r2.draws, expected, rtol=1e-10)
    assert r2.estimate == pytest.approx(expected.mean(), rel=1e-12)
    assert r2.se == pytest.approx(expected.std(ddof=1), rel=1e-10)


def test_interval_is_the_hdi_at_ci_level(fits):
    import arviz as az

    r2 = fits["ordinal"].r2(ci_level=0.8)
    low, high = az.hdi(r2.draws, hdi_prob=0.8)
    assert (r2.ci_low, r2.ci_high, r2.ci_level) == (low, high, 0.8)
    frame = r2.to_frame()
    assert list(frame.columns) == ["measure", "estimate", "se", "ci_low", "ci_high"]
    assert r2.to_dict()["n_draws"] == 600
    with pytest.raises(InvalidParameterError, match="ci_level"):
        fits["ordinal"].r2(ci_level=1.5)
