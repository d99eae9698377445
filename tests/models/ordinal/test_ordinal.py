"""OrdinalMixedModel: exact gradient, API, refusals, recovery of a simulated truth."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings

import models.ordinal._laplace as engine
from models._errors import (
    FormulaError,
    InvalidParameterError,
    NotFittedError,
    SingularFitWarning,
)
from models.formula import build_design, parse_formula
from models.ordinal import DICT_KEYS, OrdinalMixedModel

HERE = Path(__file__).resolve().parents[1]  # tests/models: its reference/ and ../data
DATA = HERE.parent / "data"
WINE = pd.read_csv(DATA / "ordinal_wine.csv")
SLOPES = pd.read_csv(HERE / "reference" / "clmm_slopes.csv")
CROSSED = pd.read_csv(HERE / "reference" / "clmm_crossed.csv")


def _problem(data, formula, link="logit", equidistant=False):
    design = build_design(parse_formula(formula), data)
    X = design.X.drop(columns=["Intercept"]).to_numpy()
    cats = np.unique(design.y)
    st = engine.Structure([(b.group, b.codes, b.n_levels, b.Z) for b in design.random])
    y = np.searchsorted(cats, design.y)
    return engine.Problem(X, y, cats.size, st, engine.link(link), equidistant=equidistant)


@pytest.mark.parametrize(
    ("data", "formula", "link", "equidistant"),
    [
        (CROSSED, "y ~ x + (1 | a) + (1 | b)", "logit", False),
        (SLOPES, "y ~ x + w + (1 + x | g)", "probit", False),
        (SLOPES, "y ~ x + w + (1 + x || g)", "logit", True),
        (SLOPES, "y ~ x + (1 + x | g) + (1 | w)", "logit", False),
    ],
)
def test_gradient_is_exact(data, formula, link, equidistant):
    """The analytic gradient of the Laplace log-likelihood equals central differences."""
    pr = _problem(data, formula, link, equidistant)
    rng = np.random.default_rng(0)
    alpha = np.array([-1.0, 0.8]) if equidistant else np.sort(rng.normal(0, 1.5, pr.n_alpha))
    psi = np.concatenate([alpha, rng.normal(0, 0.3, pr.p), 0.5 + rng.uniform(0, 0.5, pr.n_theta)])
    _, grad, _ = pr.laplace(psi)
    num = np.zeros_like(psi)
    for k in range(psi.size):
        e = np.zeros_like(psi)
        e[k] = 1e-5
        num[k] = (
            pr.laplace(psi + e, gradient=False)[0] - pr.laplace(psi - e, gradient=False)[0]
        ) / 2e-5
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-4)


@pytest.fixture(scope="module")
def wine_fit():
    return OrdinalMixedModel("rating ~ temp + contact + (1 | judge)").fit(WINE)


def test_predict_probabilities(wine_fit):
    probs = wine_fit.predict()
    assert list(probs.columns) == [1, 2, 3, 4, 5]
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    # conditional on the judge's mode vs the typical judge
    typical = wine_fit.predict(WINE, re_form="~0")
    assert not np.allclose(probs.to_numpy(), typical.to_numpy())
    expected = wine_fit.predict_expected(WINE)
    np.testing.assert_allclose(expected, probs.to_numpy() @ np.arange(1, 6))
    # new judge: random effect 0, the same as the typical judge; refused on request
    new = WINE.head(3).assign(judge=99)
    np.testing.assert_allclose(wine_fit.predict(new), typical.head(3))
    with pytest.raises(InvalidParameterError, match="not seen"):
        wine_fit.predict(new, allow_new_levels=False)
    with pytest.raises(InvalidParameterError, match="re_form"):
        wine_fit.predict(WINE, re_form="~1")


def test_predict_keeps_rows_with_missing_predictors(wine_fit):
    new = WINE.head(4).copy()
    new.loc[new.index[1], "temp"] = None
    probs = wine_fit.predict(new)
    assert probs.iloc[1].isna().all()
    assert probs.drop(index=new.index[1]).notna().all().all()


def test_odds_ratios(wine_fit):
    odds = wine_fit.odds_ratios()
    np.testing.assert_allclose(odds["odds_ratio"], np.exp(wine_fit.fixed_["estimate"]))
    np.testing.assert_allclose(odds["ci_low"], np.exp(wine_fit.fixed_["ci_low"]))
    probit = OrdinalMixedModel("rating ~ temp + (1 | judge)", link="probit").fit(WINE)
    with pytest.raises(InvalidParameterError, match="logit"):
        probit.odds_ratios()


def test_tables_summary_and_dict(wine_fit):
    assert list(wine_fit.thresholds_["term"]) == ["1|2", "2|3", "3|4", "4|5"]
    assert wine_fit.fixed_["df"].isna().all()
    text = str(wine_fit.summary())
    for part in ("Cumulative link mixed model", "Thresholds:", "z value", "judge"):
        assert part in text
    d = wine_fit.to_dict()
    assert tuple(d) == DICT_KEYS
    json.dumps(d)
    assert d["engine"] == "clmm" and d["family"] == "ordinal"
    assert d["fixed"][0]["df"] is None
    assert [t["term"] for t in d["thresholds"]] == ["1|2", "2|3", "3|4", "4|5"]


def test_ordered_categorical_response():
    labels = ["none", "little", "some", "much", "very"]
    data = WINE.assign(rating=pd.Categorical.from_codes(WINE["rating"] - 1, labels, ordered=True))
    m = OrdinalMixedModel("rating ~ temp + contact + (1 | judge)").fit(data)
    assert m.categories_ == labels
    assert list(m.thresholds_["term"])[0] == "none|little"
    ref = OrdinalMixedModel("rating ~ temp + contact + (1 | judge)").fit(WINE)
    np.testing.assert_allclose(m.fixed_["estimate"], ref.fixed_["estimate"], rtol=1e-8)
    with pytest.raises(InvalidParameterError, match="numeric categories"):
        m.predict_expected()


def test_data_is_not_modified():
    data = WINE.copy()
    OrdinalMixedModel("rating ~ temp + (1 | judge)").fit(data)
    pd.testing.assert_frame_equal(data, WINE)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"link": "cloglog"}, "link"),
        ({"threshold": "symmetric"}, "threshold"),
        ({"n_agq": 0}, "n_agq"),
        ({"ci_level": 95}, "ci_level"),
        ({"start": "zero"}, "start"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        OrdinalMixedModel("rating ~ temp + (1 | judge)", **kwargs).fit(WINE)


def test_refusals():
    with pytest.raises(FormulaError, match="quadrature"):
        OrdinalMixedModel("y ~ x + (1 | a) + (1 | b)", n_agq=5).fit(CROSSED)
    with pytest.raises(FormulaError, match="no random-effects term"):
        OrdinalMixedModel("rating ~ temp").fit(WINE)
    with pytest.raises(FormulaError, match="unordered"):
        OrdinalMixedModel("rating ~ temp + (1 | judge)").fit(
            WINE.assign(rating=WINE["rating"].astype("category"))
        )
    with pytest.raises(FormulaError, match="numbers"):
        OrdinalMixedModel("rating ~ temp + (1 | judge)").fit(
            WINE.assign(rating=WINE["rating"].astype(str))
        )
    with pytest.raises(FormulaError, match="1 category"):
        OrdinalMixedModel("rating ~ temp + (1 | judge)").fit(WINE.assign(rating=3))
    with pytest.raises(InvalidParameterError, match="DataFrame"):
        OrdinalMixedModel("rating ~ temp + (1 | judge)").fit(WINE.to_dict())
    with pytest.raises(NotFittedError):
        OrdinalMixedModel("rating ~ temp + (1 | judge)").predict()


def test_singular_fit_is_flagged():
    """Groups that carry no variance: the SD is estimated at 0 and the warning says so."""
    rng = np.random.default_rng(5)
    n = 400
    x = rng.normal(size=n)
    y = np.digitize(0.8 * x + rng.logistic(size=n), [-1.0, 0.0, 1.0]) + 1
    data = pd.DataFrame({"y": y, "x": x, "g": np.repeat(np.arange(40), 10)})
    with package_warnings() as caught:
        m = OrdinalMixedModel("y ~ x + (1 | g)").fit(data)
    assert m.singular_
    assert [w.category for w in caught] == [SingularFitWarning]
    assert "estimated at 0" in str(caught[0].message)
    assert np.isfinite(m.fixed_["se"]).all()


def test_recovers_a_simulated_truth():
    """Crossed people and stories, a person slope: 95% intervals cover the truth."""
    covered, total = 0, 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        n_p, n_s, k = 60, 40, 15
        person = np.repeat(np.arange(n_p), k)
        story = rng.integers(0, n_s, person.size)
        trait = rng.normal(size=n_p)[person]
        week = rng.uniform(0, 4, person.size)
        b0 = rng.normal(0, 1.0, n_p)
        b1 = rng.normal(0, 0.3, n_p)
        v = rng.normal(0, 0.5, n_s)
        eta = 0.5 * trait - 0.2 * week + b0[person] + b1[person] * week + v[story]
        y = np.digitize(eta + rng.logistic(size=eta.size), [-2.0, -0.5, 0.5, 2.0]) + 1
        data = pd.DataFrame({"y": y, "trait": trait, "week": week, "p": person, "s": story})
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            m = OrdinalMixedModel("y ~ trait + week + (1 + week | p) + (1 | s)").fit(data)
        truth = {"trait": 0.5, "week": -0.2}
        for row in m.fixed_.itertuples():
            covered += row.ci_low <= truth[row.term] <= row.ci_high
            total += 1
        np.testing.assert_allclose(m.thresholds_["estimate"], [-2.0, -0.5, 0.5, 2.0], atol=0.5)
        sd = m.random_.set_index(["group", "term"])["sd"]
        # against the SDs of the effects drawn (seed 0 equals ordinal::clmm: 0.868, 0.317, 0.372)
        assert sd[("p", "Intercept")] == pytest.approx(b0.std(ddof=1), abs=0.3)
        assert sd[("p", "week")] == pytest.approx(b1.std(ddof=1), abs=0.1)
        assert sd[("s", "Intercept")] == pytest.approx(v.std(ddof=1), abs=0.25)
    # 12 intervals at 95%: at most one miss
    assert covered >= total - 1


def test_marginal_probabilities_integrate_over_the_groups(wine_fit):
    """re_form='marginal' equals a direct numerical integral over the judge effect."""
    probs = wine_fit.predict(WINE.head(5), re_form="marginal")
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    sd = float(wine_fit.random_["sd"].iloc[0])
    eta0 = wine_fit.linear_predictor(WINE.head(5), re_form="~0").to_numpy()
    grid = np.linspace(-8 * sd, 8 * sd, 4001)
    dens = np.exp(-0.5 * (grid / sd) ** 2) / (sd * np.sqrt(2 * np.pi))
    cut = np.concatenate([[-np.inf], wine_fit.cutpoints_, [np.inf]])
    from scipy.special import expit

    cdf = expit(cut[None, None, :] - (eta0[:, None] + grid[None, :])[:, :, None])
    direct = np.trapezoid(np.diff(cdf, axis=2) * dens[None, :, None], grid, axis=1)
    np.testing.assert_allclose(probs.to_numpy(), direct, atol=1e-8)
    # averaging over judges pulls the probabilities towards the middle categories' spread
    typical = wine_fit.predict(WINE.head(5), re_form="~0")
    assert not np.allclose(probs.to_numpy(), typical.to_numpy())


@pytest.mark.slow
def test_agrees_with_the_bayesian_ordinal_model_under_weak_priors():
    """Same likelihood, flat-ish priors: posterior means near the ML estimates, SDs near SEs."""
    from models.bayes import BayesianMixedModel, Prior

    rng = np.random.default_rng(11)
    n_p, k = 50, 12
    g = np.repeat(np.arange(n_p), k)
    x = rng.normal(size=g.size)
    trait = rng.normal(size=n_p)[g]
    eta = 0.7 * x - 0.4 * trait + rng.normal(0, 0.8, n_p)[g]
    y = np.digitize(eta + rng.logistic(size=g.size), [-1.5, -0.3, 0.8, 2.0]) + 1
    data = pd.DataFrame({"y": y, "x": x, "trait": trait, "g": g})
    formula = "y ~ x + trait + (1 | g)"
    ml = OrdinalMixedModel(formula).fit(data)
    weak = {
        "fixed": Prior("normal", {"mu": 0.0, "sigma": 100.0}),
        "cutpoints": Prior("normal", {"mu": 0.0, "sigma": 100.0}),
        "sd": Prior("halfnormal", {"sigma": 10.0}),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bayes = BayesianMixedModel(
            formula, family="ordinal", priors=weak, draws=1000, tune=1000, chains=2, seed=4
        ).fit(data)
    post = bayes.fixed_effects().set_index("term")
    fixed = ml.fixed_.set_index("term")
    for term in ("x", "trait"):
        # measured: 0.08 and 0.06 SE apart; posterior SDs 0.98 and 1.05 times the Wald SEs
        assert (
            abs(post.at[term, "estimate"] - fixed.at[term, "estimate"]) < 0.3 * fixed.at[term, "se"]
        )
        assert post.at[term, "se"] == pytest.approx(fixed.at[term, "se"], rel=0.15)
    cuts = bayes.cutpoints().set_index("term")["estimate"]
    np.testing.assert_allclose(
        cuts.to_numpy(),
        ml.thresholds_["estimate"].to_numpy(),
        atol=0.3 * ml.thresholds_["se"].max(),
    )
    # the posterior mean of the SD sits above the ML estimate (0.905 vs 0.843: right skew)
    sd_post = bayes.random_effects().query("component == 'sd'")["estimate"].iloc[0]
    assert ml.random_["sd"].iloc[0] == pytest.approx(sd_post, rel=0.25)


# ---------------------------------------------------------------------------------------------
# refit


def _close_fits(a: OrdinalMixedModel, b: OrdinalMixedModel) -> None:
    assert a.categories_ == b.categories_
    np.testing.assert_allclose(a.fixed_["estimate"], b.fixed_["estimate"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(a.fixed_["se"], b.fixed_["se"], rtol=1e-3)
    np.testing.assert_allclose(a.alpha_, b.alpha_, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(a.theta_, b.theta_, rtol=1e-3, atol=1e-5)
    assert a.loglik_ == pytest.approx(b.loglik_, abs=1e-6)


def test_refit_equals_a_fresh_fit_to_the_new_response(wine_fit):
    same = wine_fit.refit(WINE["rating"].to_numpy())
    _close_fits(same, wine_fit)
    assert same.converged_ and same is not wine_fit
    rng = np.random.default_rng(4)
    new = WINE.assign(rating=rng.permutation(WINE["rating"].to_numpy()))
    fresh = OrdinalMixedModel("rating ~ temp + contact + (1 | judge)").fit(new)
    _close_fits(wine_fit.refit(new["rating"]), fresh)
    # a response without category 3: the thresholds of the categories it has
    gone = WINE.assign(rating=WINE["rating"].replace({3: 2}))
    refit = wine_fit.refit(gone["rating"].to_numpy())
    assert refit.categories_ == [1, 2, 4, 5]
    _close_fits(refit, OrdinalMixedModel("rating ~ temp + contact + (1 | judge)").fit(gone))
    # the original fit is unchanged
    assert wine_fit.categories_ == [1, 2, 3, 4, 5]


def test_refit_keeps_category_labels_and_refuses_bad_responses(wine_fit):
    labels = ["none", "little", "some", "much", "very"]
    data = WINE.assign(rating=pd.Categorical.from_codes(WINE["rating"] - 1, labels, ordered=True))
    m = OrdinalMixedModel("rating ~ temp + contact + (1 | judge)").fit(data)
    again = m.refit(np.asarray(labels, dtype=object)[WINE["rating"].to_numpy()[::-1] - 1])
    assert again.categories_ == labels
    with pytest.raises(InvalidParameterError, match="each one of the categories"):
        m.refit(WINE["rating"].to_numpy())
    with pytest.raises(InvalidParameterError, match="72 values"):
        wine_fit.refit(WINE["rating"].to_numpy()[:10])
    with pytest.raises(InvalidParameterError, match="indexed like the rows"):
        wine_fit.refit(WINE["rating"].reset_index(drop=True).set_axis(range(1, 73)))
    with pytest.raises(NotFittedError):
        OrdinalMixedModel("rating ~ temp + (1 | judge)").refit(WINE["rating"].to_numpy())


def test_refit_leaves_a_zero_variance_of_the_fit_it_starts_from():
    """An SD of 0 is a stationary point; a refit from a singular fit must still find > 0."""
    rng = np.random.default_rng(8)
    g = np.repeat(np.arange(30), 12)
    x = rng.normal(size=g.size)
    flat = np.digitize(0.5 * x + rng.logistic(size=g.size), [-1.0, 0.0, 1.0]) + 1
    data = pd.DataFrame({"y": flat, "x": x, "g": g})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = OrdinalMixedModel("y ~ x + (1 | g)").fit(data)
    assert base.theta_[0] < 1e-4  # no group effect in the data: singular
    clustered = (
        np.digitize(
            0.5 * x + rng.normal(0, 1.5, 30)[g] + rng.logistic(size=g.size), [-1.0, 0.0, 1.0]
        )
        + 1
    )
    refit = base.refit(clustered)
    fresh = OrdinalMixedModel("y ~ x + (1 | g)").fit(data.assign(y=clustered))
    assert not refit.singular_
    _close_fits(refit, fresh)
