"""Bayesian R-squared and posterior marginal means of BayesianMixedModel, by simulation.

Modules: models/bayes/_r2.py and models/bayes/_emmeans.py (one pair of fits serves both).
Data: 40 groups of 8 rows, ``x ~ N(0, 1)`` with slope 0.8, a factor ``cond`` (levels a, b, c
drawn with equal probability, effects 0, 0.5, -0.3), group intercepts ``N(0, 0.7^2)``;
gaussian residuals of sd 1 or, with their own group intercepts, a logistic latent residual cut
at -1.5, 0, 1.5 into four categories. The population R-squared of the conditional linear
predictor is ``v / (v + var_res)`` with ``v = 0.8^2 + var(cond effect) + 0.7^2`` (the cond
effect's variance over equally likely levels, 0.10889) and ``var_res`` 1 (gaussian) or
``pi^2/3`` (ordinal, latent scale): 0.5533 and 0.2736. Gelman et al.'s R-squared is a variance
over the fitted rows, so its truth is that of the simulated rows, ``v_rows / (v_rows +
var_res)`` with ``v_rows`` the variance of the rows' true linear predictor: 0.5161 and 0.2432
here, where the 40 group intercepts happen to vary less than their population (with the
population value as truth the gaussian interval, [0.377, 0.532], misses 0.5533 on these data).
Short chains (2 x 300 draws after 300 tuning steps; PyMC's sampler, whose compiled model is
cached on disk, costs a third of nutpie's per-structure compilation here) give 95% HDIs about
0.16 (gaussian) and 0.21 (ordinal) wide; the truth must lie inside and the interval must be
narrower than 0.25, so a value on another scale (the data scale for the ordinal family, or a
residual variance left out) fails. The marginal means of ``cond`` (x at its sample mean,
group effects 0) have known values too: ``1 + 0.8 mean(x) + effect`` (gaussian),
``0.8 mean(x) + effect`` minus the mean cutpoint 0 (latent), and the logistic category
probabilities there; each must lie in its 99% HDI, as must each pairwise difference.
"""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from models._errors import InvalidParameterError, SamplingWarning
from models.bayes import BayesianMixedModel, BayesianR2, PosteriorMeans

B, TAU = 0.8, 0.7
EFFECT = {"a": 0.0, "b": 0.5, "c": -0.3}
CUTS = np.array([-1.5, 0.0, 1.5])
RESIDUAL = {"gaussian": 1.0, "ordinal": math.pi**2 / 3}
SIGNAL = B**2 + np.var(list(EFFECT.values())) + TAU**2
POPULATION = {f: SIGNAL / (SIGNAL + v) for f, v in RESIDUAL.items()}


def sample_r2(data, family):
    """The R-squared of the simulated rows: var of their true linear predictor over the rows."""
    v = data["eta_y" if family == "gaussian" else "eta_rating"].var(ddof=1)
    return v / (v + RESIDUAL[family])


SAMPLING = {"draws": 300, "tune": 300, "chains": 2, "seed": 3, "sampler": "pymc"}


def simulate(seed=11, n_groups=40, per_group=8):
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), per_group)
    x = rng.normal(size=g.size)
    cond = rng.choice(list(EFFECT), size=g.size)
    fixed = B * x + np.array([EFFECT[c] for c in cond])
    eta_y = 1.0 + fixed + rng.normal(0.0, TAU, n_groups)[g]
    y = eta_y + rng.normal(0.0, 1.0, g.size)
    eta_rating = fixed + rng.normal(0.0, TAU, n_groups)[g]
    rating = np.digitize(eta_rating + rng.logistic(size=g.size), CUTS) + 1
    return pd.DataFrame(
        {
            "y": y,
            "rating": rating,
            "x": x,
            "cond": cond,
            "g": [f"g{i:02d}" for i in g],
            "eta_y": eta_y,  # the true linear predictors, for the truth of each row set
            "eta_rating": eta_rating,
        }
    )


TERMS = ["Intercept", "x", "cond[T.b]", "cond[T.c]"]


def _rows(x, cond):
    """The gaussian model's fixed-effect rows: intercept, x and cond's treatment columns."""
    return np.column_stack([np.ones(len(x)), x, cond == "b", cond == "c"]).astype(float)


@pytest.fixture(scope="module")
def fits():
    data = simulate()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)  # short chains miss the ESS bar
        gaussian = BayesianMixedModel("y ~ x + cond + (1 | g)", family="gaussian", **SAMPLING).fit(
            data
        )
        ordinal = BayesianMixedModel("rating ~ x + cond + (1 | g)", **SAMPLING).fit(data)
    return {"gaussian": gaussian, "ordinal": ordinal, "data": data}


@pytest.mark.parametrize("family", ["gaussian", "ordinal"])
def test_truth_lies_in_the_interval(fits, family):
    r2 = fits[family].r2()
    assert isinstance(r2, BayesianR2)
    truth = sample_r2(fits["data"], family)
    assert abs(truth - POPULATION[family]) < 0.05
    assert r2.ci_low < truth < r2.ci_high
    assert r2.ci_high - r2.ci_low < 0.25
    assert r2.scale == ("data" if family == "gaussian" else "latent")
    assert r2.ci_low <= r2.estimate <= r2.ci_high


def test_gaussian_draws_match_a_direct_computation(fits):
    """Each draw's R-squared from the posterior's fixed effects, group effects and sigma."""
    model, data = fits["gaussian"], fits["data"]
    post = model.posterior_
    fixed = post["fixed"].sel(term=TERMS).values.reshape(-1, len(TERMS))
    re = post["re_0"].values.reshape(-1, post.sizes["level_0"])
    levels = list(post["level_0"].values)
    index = np.array([levels.index(v) for v in data["g"]])
    eta = fixed @ _rows(data["x"].to_numpy(), data["cond"].to_numpy()).T + re[:, index]
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


# ---------------------------------------------------------------------------------------------
# posterior marginal means (models/bayes/_emmeans.py)


def _truth(family, xbar):
    eta = {level: B * xbar + effect for level, effect in EFFECT.items()}
    if family == "gaussian":
        return {level: 1.0 + value for level, value in eta.items()}
    return {level: value - CUTS.mean() for level, value in eta.items()}


@pytest.mark.parametrize("family", ["gaussian", "ordinal"])
def test_marginal_means_cover_the_truth(fits, family):
    means = fits[family].emmeans("cond", ci_level=0.99)
    assert isinstance(means, PosteriorMeans)
    assert means.mode == ("mean" if family == "gaussian" else "latent")
    truth = _truth(family, fits["data"]["x"].mean())
    table = means.to_frame()
    assert list(table["cond"]) == ["a", "b", "c"]
    for row in table.itertuples():
        assert row.ci_low < truth[row.cond] < row.ci_high, row
    pairs = means.pairs().to_frame()
    assert list(pairs["contrast"]) == ["a - b", "a - c", "b - c"]
    for row in pairs.itertuples():
        first, second = row.contrast.split(" - ")
        assert row.ci_low < truth[first] - truth[second] < row.ci_high, row


def test_category_probabilities_cover_the_truth(fits):
    from scipy import special

    means = fits["ordinal"].emmeans("cond", mode="prob", ci_level=0.99)
    table = means.to_frame()
    assert list(table.columns[:2]) == ["cond", "rating"] and means.by == ("rating",)
    eta = _truth("ordinal", fits["data"]["x"].mean())
    for row in table.itertuples():
        cdf = np.concatenate([[0.0], special.expit(CUTS - eta[row.cond]), [1.0]])
        truth = cdf[row.rating] - cdf[row.rating - 1]
        assert row.ci_low < truth < row.ci_high, row
    # each draw's probabilities of one condition sum to 1
    sums = means.draws.reshape(means.draws.shape[0], 4, 3).sum(axis=1)
    np.testing.assert_allclose(sums, 1.0, rtol=1e-12)
    assert len(means.pairs().to_frame()) == 4 * 3  # three pairs within each category


def test_gaussian_mean_draws_match_a_direct_computation(fits):
    model, data = fits["gaussian"], fits["data"]
    fixed = model.posterior_["fixed"].sel(term=TERMS).values.reshape(-1, len(TERMS))
    xbar = data["x"].mean()
    grid = _rows(np.full(3, xbar), np.array(["a", "b", "c"]))
    means = model.emmeans("cond")
    np.testing.assert_allclose(means.draws, fixed @ grid.T, rtol=1e-12)
    np.testing.assert_allclose(means.to_frame()["estimate"], (fixed @ grid.T).mean(axis=0))
    at = model.emmeans("x", by="cond", at={"x": [0.0, 1.0]}).draws
    np.testing.assert_allclose(at[:, 1] - at[:, 0], fixed[:, 1], rtol=1e-10, atol=1e-12)
    with pytest.raises(InvalidParameterError, match="mode"):
        model.emmeans("cond", mode="prob")
