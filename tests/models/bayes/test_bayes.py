"""Fast tests of models/bayes.py: structure, validation, likelihood and gradient, a mocked sampler.

Sampling-based checks (eight schools, sleepstudy against lme4, parameter recovery, nutpie) live
in test_bayes_slow.py.
"""

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from models._backends import pymc_model as pmod
from models._backends.samplers import SamplerRun, import_pymc, run_nuts
from models._errors import (
    FormulaError,
    InvalidParameterError,
    NotFittedError,
    SamplingWarning,
)
from models.bayes import (
    BayesianMixedModel,
    Prior,
    compare,
    default_priors,
    leave_one_group_out,
    sampling_diagnostics,
)
from models.formula import build_design, parse_formula

FORMULA = "rating ~ trait + week + (1 + week | participant) + (1 | story)"
SEED = 20240611


def simulate_ratings(seed, *, n_person=12, n_story=15, per_person=6, link="logit"):
    """Crossed ordinal ratings 1-5 with a person trait, a week slope and story effects."""
    rng = np.random.default_rng(seed)
    cut = np.array([-2.0, -0.7, 0.5, 1.8])
    trait = rng.normal(size=n_person)
    u0 = rng.normal(0.0, 0.8, n_person)
    u1 = rng.normal(0.0, 0.2, n_person)
    s0 = rng.normal(0.0, 0.5, n_story)
    rows = []
    for p in range(n_person):
        for k, st in enumerate(rng.choice(n_story, per_person, replace=False)):
            week = k / 2
            eta = 0.8 * trait[p] + 0.3 * week + u0[p] + u1[p] * week + s0[st]
            cdf = special.expit(cut - eta) if link == "logit" else special.ndtr(cut - eta)
            pr = np.diff(np.concatenate([[0.0], cdf, [1.0]]))
            rows.append((f"p{p:02d}", f"s{st:02d}", trait[p], week, rng.choice(5, p=pr) + 1))
    return pd.DataFrame(rows, columns=["participant", "story", "trait", "week", "rating"])


@pytest.fixture(scope="module")
def ratings():
    return simulate_ratings(SEED)


def _fake_value(name, shape, rng, n):
    if name.startswith(("sd_z_", "sigma_z")) or name.endswith("_stds"):
        return np.abs(rng.normal(0.5, 0.1, size=(n, *shape)))
    if name == "cutpoints_z":
        return np.sort(rng.normal(np.linspace(-2, 2, shape[0]), 0.1, size=(n, *shape)), axis=-1)
    return rng.normal(0.0, 0.3, size=(n, *shape))


def fake_run_nuts(
    model, *, sampler, draws, tune, chains, target_accept, seed, progressbar, enough=None,
    every=1000,
):  # fmt: skip
    """Stand-in for the NUTS call: independent draws with the model's variable names and shapes
    (with ``enough``, the first multiple of ``every`` draws it accepts, as nutpie's run)."""
    import arviz as az

    model = getattr(model, "model", model)  # a cached model holds the PyMC model
    rng = np.random.default_rng(seed)
    n = chains * draws
    dims = model.named_vars_to_dims
    coords = {k: list(v) for k, v in model.coords.items()}
    post = {}
    for var in model.free_RVs:
        name = var.name
        shape = tuple(len(coords[d]) for d in dims.get(name, ()))
        post[name] = _fake_value(name, shape, rng, n)
    for r in range(sum(1 for k in coords if k.startswith("level_"))):
        q = len(coords[f"effect_{r}"])
        if f"sd_z_{r}" not in post:
            stds = _fake_value("chol_z_stds", (q,), rng, n)
            corr = np.full((q, q), 0.3) + 0.7 * np.eye(q)
            chol = np.linalg.cholesky(stds[:, :, None] * corr * stds[:, None, :])
            post[f"chol_z_{r}"] = chol[:, *np.tril_indices(q)]
    shaped = {k: v.reshape(chains, draws, *v.shape[1:]) for k, v in post.items()}
    stats_ = {
        "diverging": np.zeros((chains, draws), dtype=bool),
        "energy": rng.normal(size=(chains, draws)),
    }
    var_dims = {k: list(dims.get(k, ())) for k in shaped}
    idata = az.from_dict(posterior=shaped, sample_stats=stats_, coords=coords, dims=var_dims)
    for stop in range(every, draws, every) if enough is not None else ():
        if enough(idata.isel(draw=slice(0, stop))):
            idata = idata.isel(draw=slice(0, stop))
            break
    return SamplerRun(idata=idata, seconds=0.0, sampler=sampler)


@pytest.fixture
def mock_sampler(monkeypatch):
    monkeypatch.setattr("models.bayes.model.run_nuts", fake_run_nuts)


@pytest.fixture
def pyplot_agg():
    import matplotlib

    matplotlib.use("Agg")
    yield


def _inputs(data, formula=FORMULA, family="ordinal", link="logit"):
    design = build_design(parse_formula(formula), data)
    return pmod.prepare_inputs(design, family=family, link=link, where="test")


def _model(inputs, priors=None):
    import_pymc()
    return pmod.build_pymc_model(inputs, priors or default_priors(inputs.family, inputs.link))


# ------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"family": "poisson"}, "`family`"),
        ({"link": "cloglog"}, "`link`"),
        ({"family": "gaussian", "link": "probit"}, "`link`"),
        ({"draws": 0}, "`draws`"),
        ({"draws": 10.5}, "`draws`"),
        ({"draws": "many"}, "`draws`"),
        ({"draws": "auto", "sampler": "pymc"}, "'auto' .* needs the nutpie sampler"),
        ({"tune": -1}, "`tune`"),
        ({"chains": 0}, "`chains`"),
        ({"sampler": "stan"}, "`sampler`"),
        ({"target_accept": 1.0}, "`target_accept`"),
        ({"ci_level": 95}, "`ci_level`"),
        ({"seed": -3}, "`seed`"),
        ({"seed": 1.5}, "`seed`"),
        ({"progressbar": "yes"}, "`progressbar`"),
        ({"priors": {"slope": Prior("normal")}}, "unknown parameter class"),
        ({"priors": {"sd": Prior("normal")}}, "positive values"),
        ({"priors": {"cor": Prior("normal")}}, "'lkj'"),
        ({"priors": {"fixed": Prior("lkj")}}, "'lkj'"),
        ({"priors": {"fixed": Prior("gamma")}}, "unknown distribution"),
        ({"priors": {"fixed": Prior("normal", {"sigma": -1.0})}}, "sigma must be"),
        ({"priors": {"fixed": Prior("normal", {"scale": 1.0})}}, "takes"),
        ({"priors": {"sigma": Prior("exponential")}}, "unknown parameter class"),
        ({"priors": [1, 2]}, "`priors`"),
    ],
)
def test_invalid_parameters_raise_before_sampling(ratings, kwargs, fragment):
    model = BayesianMixedModel(FORMULA, **kwargs)
    with pytest.raises(InvalidParameterError, match=fragment):
        model.fit(ratings)


def test_invalid_formula_and_data_raise(ratings):
    with pytest.raises(InvalidParameterError, match="`formula`"):
        BayesianMixedModel("rating").fit(ratings)
    with pytest.raises(InvalidParameterError, match="`data`"):
        BayesianMixedModel(FORMULA).fit(ratings.to_dict())


def test_ordinal_response_must_be_whole_numbers_with_three_categories(ratings):
    with pytest.raises(FormulaError, match="whole-number"):
        _inputs(ratings.assign(rating=ratings["rating"] + 0.5))
    with pytest.raises(FormulaError, match="at least 3"):
        _inputs(ratings.assign(rating=(ratings["rating"] > 3).astype(int)))


def test_numpyro_sampler_without_extra_names_the_extra(ratings):
    with pytest.raises(ImportError, match=r"empathic-longitudinal\[jax\]"):
        BayesianMixedModel(FORMULA, sampler="numpyro").fit(ratings)


def test_methods_need_a_fitted_model():
    model = BayesianMixedModel(FORMULA)
    for call in (
        model.fixed_effects,
        model.cutpoints,
        model.random_effects,
        model.group_effects,
        model.to_dict,
        model.loo,
        model.plot_ppc,
    ):
        with pytest.raises(NotFittedError, match="fit"):
            call()


def test_mapping_prior_is_accepted_and_changes_the_prior(ratings):
    from models.bayes.priors import _resolve_priors

    inputs = _inputs(ratings)
    tight = _resolve_priors(
        {"fixed": {"dist": "normal", "sigma": 0.1}}, family="ordinal", link="logit", where="t"
    )
    assert tight["fixed"] == Prior("normal", {"sigma": 0.1})
    assert tight["sd"] == default_priors()["sd"]
    m_default, m_tight = _model(inputs), _model(inputs, tight)
    point = m_default.initial_point()
    point["b_z"] = np.array([0.3, -0.2])
    logp_default = m_default.compile_logp(vars=[m_default["b_z"]], mode="FAST_COMPILE")(point)
    logp_tight = m_tight.compile_logp(vars=[m_tight["b_z"]], mode="FAST_COMPILE")(point)
    # PyMC stores log(2 pi) / 2 as a rounded constant: agreement to ~1e-8, not 1e-15
    expected = stats.norm(0, 2.5).logpdf([0.3, -0.2]).sum()
    np.testing.assert_allclose(logp_default, expected, rtol=1e-7)
    np.testing.assert_allclose(logp_tight, stats.norm(0, 0.1).logpdf([0.3, -0.2]).sum(), rtol=1e-7)


# ------------------------------------------------------------------------------- structure


def test_model_structure_names_and_dimensions(ratings):
    inputs = _inputs(ratings)
    model = _model(inputs)
    free = {v.name for v in model.free_RVs}
    assert free == {"b_z", "cutpoints_z", "z_0", "chol_z_0", "z_1", "sd_z_1"}
    assert list(model.coords["fixed_z"]) == ["trait", "week"]
    assert list(model.coords["cutpoint"]) == ["1|2", "2|3", "3|4", "4|5"]
    assert list(model.coords["effect_0"]) == ["Intercept", "week"]
    assert len(model.coords["level_0"]) == 12 and len(model.coords["level_1"]) == 15
    assert inputs.random[0].correlated and not inputs.random[1].correlated
    # standardised fixed predictors; random-effects columns are scaled, not centred
    np.testing.assert_allclose(inputs.X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(inputs.X.std(axis=0), 1.0, rtol=1e-12)
    np.testing.assert_allclose(inputs.random[0].Z[:, 1].std(), 1.0, rtol=1e-12)
    np.testing.assert_allclose(
        inputs.random[0].Z[:, 1] * inputs.random[0].scale[1], ratings["week"]
    )
    logp = model.compile_logp(mode="FAST_COMPILE")(model.initial_point())
    assert np.isfinite(logp)


def test_uncorrelated_blocks_get_independent_sds(ratings):
    inputs = _inputs(ratings, "rating ~ week + (1 + week || participant)")
    assert [b.terms for b in inputs.random] == [("Intercept",), ("week",)]
    free = {v.name for v in _model(inputs).free_RVs}
    assert free == {"b_z", "cutpoints_z", "z_0", "sd_z_0", "z_1", "sd_z_1"}
    assert inputs.random[1].center[0] == 0.0


def _random_point(model, rng):
    point = model.initial_point()
    return {k: v + rng.normal(0.0, 0.3, size=np.shape(v)) for k, v in point.items()}


@pytest.mark.parametrize(
    ("family", "link"), [("ordinal", "logit"), ("ordinal", "probit"), ("gaussian", "logit")]
)
def test_gradient_matches_finite_differences(ratings, family, link):
    import pytensor

    inputs = _inputs(ratings, family=family, link=link)
    model = _model(inputs)
    point = _random_point(model, np.random.default_rng(1))
    names = list(point)
    sizes = [np.size(point[k]) for k in names]
    shapes = [np.shape(point[k]) for k in names]
    logp = model.compile_logp(mode="FAST_COMPILE")
    dlogp = model.compile_dlogp(mode="FAST_COMPILE")
    x0 = np.concatenate([np.ravel(point[k]) for k in names])

    def unravel(x):
        out, start = {}, 0
        for k, size, shape in zip(names, sizes, shapes, strict=True):
            out[k] = x[start : start + size].reshape(shape)
            start += size
        return out

    grad = np.asarray(dlogp(point))
    h = 1e-6
    numeric = np.empty_like(x0)
    for i in range(x0.size):
        up, down = x0.copy(), x0.copy()
        up[i] += h
        down[i] -= h
        numeric[i] = (logp(unravel(up)) - logp(unravel(down))) / (2 * h)
    assert pytensor.config.floatX == "float64"
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("family", "link"), [("ordinal", "logit"), ("ordinal", "probit"), ("gaussian", "logit")]
)
def test_data_scale_loglik_matches_the_pymc_model(ratings, family, link):
    """The NumPy path (data-scale draws, linear predictor, log-likelihood) equals PyMC's logp."""
    import xarray as xr

    inputs = _inputs(ratings, family=family, link=link)
    model = _model(inputs)
    point = _random_point(model, np.random.default_rng(2))
    pointwise = model.compile_logp(vars=[model["y"]], sum=False, mode="FAST_COMPILE")(point)[0]
    names = [v.name for v in model.unobserved_value_vars]
    values = model.compile_fn(model.unobserved_value_vars, mode="FAST_COMPILE")(point)
    posterior = xr.Dataset(
        {
            name: xr.DataArray(
                np.asarray(val)[None, None],
                dims=("chain", "draw", *[f"{name}_{i}" for i in range(np.ndim(val))]),
            )
            for name, val in zip(names, values, strict=True)
        }
    )
    draws = {
        k: v.reshape(1, *v.shape[2:]) for k, v in pmod.data_scale_draws(inputs, posterior).items()
    }
    random = []
    for r, block in enumerate(inputs.random):
        Z_data = block.Z * block.scale + block.center
        random.append((Z_data, draws[f"re_{r}"][:, block.codes, :]))
    eta = pmod.linear_predictor(draws, inputs.X_data, random, intercept=inputs.intercept)
    if family == "gaussian":
        ours = stats.norm(eta[0], draws["sigma"][0]).logpdf(inputs.y_data)
        # PyMC's density is for the standardised response: a Jacobian of 1 / sd(y)
        np.testing.assert_allclose(ours, pointwise - math.log(inputs.y_scale), rtol=1e-10)
    else:
        ours = pmod.ordinal_loglik(eta, draws["cutpoints"], inputs.y, link)[0]
        # PyMC's normal log-CDF is a piecewise approximation good to ~1e-8 (scipy's log_ndtr
        # is exact to rounding); the logistic path agrees to rounding
        np.testing.assert_allclose(ours, pointwise, rtol=1e-10 if link == "logit" else 1e-7)


def test_category_probabilities_sum_to_one_and_match_the_loglik():
    rng = np.random.default_rng(3)
    eta = rng.normal(size=(4, 7))
    cut = np.sort(rng.normal(size=(4, 3)), axis=1)
    for link in ("logit", "probit"):
        probs = pmod.category_probabilities(eta, cut, link)
        np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-12)
        y = rng.integers(0, 4, size=7)
        ll = pmod.ordinal_loglik(eta, cut, y, link)
        np.testing.assert_allclose(np.exp(ll), probs[:, np.arange(7), y], rtol=1e-10)


def test_ordinal_loglik_is_accurate_far_in_the_tails():
    # both cutpoints far below eta: F(a) - F(b) is tiny and 1 - 1 would lose it entirely
    eta = np.array([[20.0]])
    cut = np.array([[-1.0, 0.0, 1.0]])
    for link, cdf in (("probit", stats.norm.cdf), ("logit", special.expit)):
        ll = pmod.ordinal_loglik(eta, cut, np.array([1]), link)
        expected = math.log(cdf(-20.0) - cdf(-21.0))
        np.testing.assert_allclose(ll[0, 0], expected, rtol=1e-10)


# ------------------------------------------------------------------------------- mocked fits


@pytest.fixture
def fitted(mock_sampler, ratings):
    return BayesianMixedModel(FORMULA, draws=500, chains=2, seed=5).fit(ratings)


def test_summary_table_vocabulary_and_rows(fitted):
    s = fitted.summary_
    assert list(s.columns) == [
        "component",
        "group",
        "term",
        "estimate",
        "se",
        "ci_low",
        "ci_high",
        "r_hat",
        "ess_bulk",
        "ess_tail",
    ]
    assert s["component"].tolist() == ["fixed"] * 2 + ["cutpoint"] * 4 + ["sd", "sd", "cor", "sd"]
    assert list(fitted.fixed_effects()["term"]) == ["trait", "week"]
    assert list(fitted.cutpoints()["term"]) == ["1|2", "2|3", "3|4", "4|5"]
    re = fitted.random_effects()
    assert re[["group", "term"]].values.tolist() == [
        ["participant", "Intercept"],
        ["participant", "week"],
        ["participant", "Intercept,week"],
        ["story", "Intercept"],
    ]
    assert (s["ci_low"] <= s["estimate"] + 1e-12).all()
    assert (s["estimate"] <= s["ci_high"] + 1e-12).all()
    effects = fitted.group_effects()
    assert len(effects) == 12 * 2 + 15
    assert fitted.n_obs_ == len(fitted.idata_.observed_data["y"])
    assert fitted.groups_ == {"participant": 12, "story": 15}


def test_fitted_attributes_speak_the_mixed_models_dialect(fitted, ratings):
    """fixed_, thresholds_, random_, ranef_ are the tables of the methods they alias."""
    pd.testing.assert_frame_equal(fitted.fixed_, fitted.fixed_effects())
    pd.testing.assert_frame_equal(fitted.thresholds_, fitted.cutpoints())
    pd.testing.assert_frame_equal(fitted.random_, fitted.random_effects())
    pd.testing.assert_frame_equal(fitted.ranef_, fitted.group_effects())
    # the columns the linear and ordinal mixed models share come first, in their order
    shared = ["term", "estimate", "se", "ci_low", "ci_high"]
    assert list(fitted.fixed_.columns[:5]) == shared
    assert list(fitted.thresholds_.columns[:5]) == shared
    assert list(fitted.ranef_.columns[:4]) == ["group", "term", "level", "estimate"]
    assert fitted.converged_ is True
    assert (
        fitted.converged_ == fitted.diagnostics_["passed"] == (not fitted.diagnostics_["failures"])
    )


def test_meta_records_formula_data_sampler_seed_and_diagnostics(fitted, ratings):
    from models._version import __version__

    meta = fitted.meta_
    assert meta["package_version"] == __version__
    assert meta["engine"] == "bayes"
    assert meta["formula"] == FORMULA == meta["params"]["formula"]
    assert meta["params"]["draws"] == 500 and meta["params"]["family"] == "ordinal"
    assert meta["n_used"] == fitted.n_obs_ and meta["n_excluded"] == 0
    assert meta["groups"] == fitted.groups_
    assert meta["sampling"] == {
        "sampler": fitted.diagnostics_["sampler"],
        "draws": 500,
        "draws_rule": "fixed",
        "tune": 500,
        "chains": 2,
        "target_accept": 0.9,
        "seed": 5,
    }
    assert meta["backend"] == fitted.diagnostics_["sampler"]
    assert meta["seed"] == 5
    assert meta["diagnostics"]["passed"] is True
    assert meta["diagnostics"]["failures"] == []
    assert set(meta["diagnostics"]) == {
        "r_hat_max",
        "ess_bulk_min",
        "ess_tail_min",
        "divergences",
        "bfmi_min",
        "failures",
        "passed",
        "seconds",
    }


def test_refit_reruns_with_the_same_settings(fitted, ratings):
    before = fitted.fixed_.copy()
    again = fitted.refit(ratings)
    assert again is not fitted
    assert again.meta_["params"] == fitted.meta_["params"]
    pd.testing.assert_frame_equal(again.fixed_, before)  # same seed, same data, same draws
    pd.testing.assert_frame_equal(fitted.fixed_, before)  # self unchanged
    fewer = ratings[ratings["participant"] != ratings["participant"].iloc[0]]
    other = fitted.refit(fewer)
    assert other.n_obs_ == len(fewer) and other.groups_["participant"] == 11


def test_auto_draws_stop_at_the_first_thousand_that_pass_and_say_so(mock_sampler, ratings):
    """The stand-in's draws are independent: 2 x 1,000 give every ESS about 2,000, so
    draws="auto" keeps the first 1,000 per chain, records them and the rule, and the gate on
    the kept draws passes; the parameter itself stays "auto"."""
    model = BayesianMixedModel(FORMULA, draws="auto", chains=2, seed=5).fit(ratings)
    assert model.posterior_.sizes["draw"] == 1000
    assert model.diagnostics_["draws"] == 1000 and model.diagnostics_["passed"]
    assert model.meta_["sampling"]["draws"] == 1000
    assert model.meta_["sampling"]["draws_rule"] == "auto"
    assert model.meta_["params"]["draws"] == "auto" and model.draws == "auto"
    assert model.to_dict()["draws_rule"] == "auto"
    assert "2 chains x 1000 draws (draws='auto': the first that passed)" in str(model.summary())


def test_draws_suffice_needs_the_gate_with_a_margin():
    from models.bayes.diagnostics import AUTO_ESS, ESS_MIN, draws_suffice

    assert AUTO_ESS > ESS_MIN
    rng = np.random.default_rng(3)
    many = rng.normal(size=(2, 1000, 3))  # independent draws: ESS about 2,000
    few = rng.normal(size=(2, 200, 3))  # about 400: the gate's minimum, not its margin
    assert draws_suffice([many])
    assert not draws_suffice([few])
    apart = many + np.array([0.0, 0.5])[:, None, None]  # chains that disagree: R-hat > 1.01
    assert not draws_suffice([apart])
    walk = np.cumsum(rng.normal(size=(2, 1000, 1)), axis=1)  # a random walk: tiny ESS
    assert not draws_suffice([many, walk])


def test_min_levels_builds_a_block_with_more_levels_and_drops_them(mock_sampler, ratings):
    """12 participants with a floor of 40 are built with 46 levels (one structure with every
    data set of 40 to 46 participants); the draws and results hold the 12 only."""
    from models._backends.samplers import MODEL_CACHE

    inputs = _inputs(ratings)
    plain = pmod.model_structure(inputs, default_priors("ordinal", "logit"))
    model = BayesianMixedModel(FORMULA, draws=500, seed=5, min_levels={"participant": 40})
    model.fit(ratings)
    keys = [key for key in MODEL_CACHE._entries if key[5][0][0] == "participant"]
    assert any(key[5][0][2] == pmod.padded_levels(40) == 46 for key in keys)
    assert plain[5][0][2] == 12
    effects = model.group_effects()
    assert model.groups_["participant"] == 12
    assert len(effects[effects["group"] == "participant"]) == 24  # intercept and week slope
    assert model.posterior_.sizes["level_0"] == 12
    assert model.meta_["params"]["min_levels"] == {"participant": 40}


@pytest.mark.parametrize(
    ("floor", "fragment"),
    [
        ({"person": 40}, "names 'person', which the formula does not group by"),
        ({"participant": 0}, r"min_levels\['participant'\]"),
        ({"participant": 2.5}, r"min_levels\['participant'\]"),
        ([40], "`min_levels`"),
    ],
)
def test_min_levels_refuses_what_it_cannot_use(ratings, floor, fragment):
    with pytest.raises(InvalidParameterError, match=fragment):
        BayesianMixedModel(FORMULA, draws=50, min_levels=floor).fit(ratings)


def test_fitted_attributes_before_fit():
    model = BayesianMixedModel(FORMULA)
    for name in ("fixed_", "thresholds_", "random_", "ranef_", "converged_", "meta_"):
        assert not hasattr(model, name)
    with pytest.raises(NotFittedError):
        model.refit(pd.DataFrame())


def test_refit_warns_when_the_gate_fails(mock_sampler, ratings):
    model = BayesianMixedModel(FORMULA, draws=60, chains=2, seed=4)
    with pytest.warns(SamplingWarning):
        model.fit(ratings)
    assert model.converged_ is False
    with pytest.warns(SamplingWarning, match="BayesianMixedModel.refit") as record:
        again = model.refit(ratings)
    assert record[0].filename == __file__
    assert again.converged_ is False and again.meta_["diagnostics"]["failures"]


def test_results_are_reported_on_the_data_scale(mock_sampler, ratings):
    """Same standardised draws, predictor in other units: data-scale slope scales exactly."""
    kw = {"draws": 200, "chains": 2, "seed": 9}
    base = BayesianMixedModel(FORMULA, **kw)
    scaled = BayesianMixedModel(FORMULA, **kw)
    with pytest.warns(SamplingWarning):
        base.fit(ratings)
    with pytest.warns(SamplingWarning):
        scaled.fit(ratings.assign(week=ratings["week"] * 7.0, trait=ratings["trait"] + 100.0))
    f0, f1 = base.fixed_effects(), scaled.fixed_effects()
    np.testing.assert_allclose(
        f1["estimate"].to_numpy(), f0["estimate"].to_numpy() / [1, 7], rtol=1e-10
    )
    np.testing.assert_allclose(f1["se"].to_numpy(), f0["se"].to_numpy() / [1, 7], rtol=1e-10)
    # shifting trait by 100 moves the cutpoints by 100 x its slope, draw by draw
    shift = 100.0 * base.idata_.posterior["fixed"].sel(term="trait")
    np.testing.assert_allclose(
        scaled.idata_.posterior["cutpoints"].values,
        (base.idata_.posterior["cutpoints"] + shift).values,
        rtol=1e-9,
    )
    sd0 = base.random_effects().set_index("term")["estimate"]
    sd1 = scaled.random_effects().set_index("term")["estimate"]
    np.testing.assert_allclose(sd1["week"], sd0["week"] / 7, rtol=1e-10)
    np.testing.assert_allclose(sd1["Intercept,week"], sd0["Intercept,week"], rtol=1e-10)


def test_summary_tables_text_and_the_failed_checks_first(fitted):
    from models.bayes import BayesianModelSummary

    summary = fitted.summary()
    assert isinstance(summary, BayesianModelSummary)
    pd.testing.assert_frame_equal(summary.fixed, fitted.fixed_effects())
    pd.testing.assert_frame_equal(summary.cutpoints, fitted.cutpoints())
    pd.testing.assert_frame_equal(summary.random, fitted.random_effects())
    row = summary.diagnostics.iloc[0]
    assert row["chains"] == 2 and row["draws"] == 500
    assert bool(row["passed"]) is fitted.diagnostics_["passed"]
    lines = summary.text.splitlines()
    assert lines[0].startswith("Bayesian mixed model, ordinal (logit link): ")
    assert fitted.diagnostics_["passed"]
    assert lines[2].startswith("sampling checks passed: R-hat max")
    assert "Fixed effects (posterior mean, SD, 95% HDI):" in summary.text
    assert "None" not in summary.text and "nan" not in summary.text.lower()
    assert repr(summary) == summary.text == str(fitted)
    assert summary._repr_html_().startswith("<pre>")
    # a failed check is stated before any estimate
    fitted.diagnostics_ = {
        **fitted.diagnostics_,
        "passed": False,
        "failures": ["divergences"],
        "messages": ["3 divergent transitions (raise target_accept)"],
    }
    line = fitted.summary().text.splitlines()[2]
    assert line.startswith("SAMPLING CHECKS FAILED (divergences): the summaries below are not")
    assert "raise target_accept" in line


def test_to_dict_is_json_with_the_cli_keys(fitted):
    out = json.loads(json.dumps(fitted.to_dict()))
    for key in (
        "engine",
        "family",
        "formula",
        "n_obs",
        "groups",
        "fixed",
        "random",
        "cutpoints",
        "divergences",
        "r_hat_max",
        "ess_bulk_min",
        "seconds",
    ):
        assert key in out
    assert out["engine"] == "bayes" and out["family"] == "ordinal"
    row_keys = ["term", "estimate", "se", "ci_low", "ci_high", "r_hat", "ess_bulk"]
    assert list(out["fixed"][0]) == row_keys
    assert list(out["cutpoints"][0]) == row_keys
    assert list(out["random"][0]) == ["group", "term", "sd", *row_keys[1:]]
    assert out["random"][0]["sd"] == out["random"][0]["estimate"]
    assert out["groups"] == {"participant": 12, "story": 15}
    assert out["n_obs"] == 72


def test_gate_failure_is_named_and_warned(mock_sampler, ratings):
    model = BayesianMixedModel(FORMULA, draws=50, chains=2, seed=1)
    with pytest.warns(SamplingWarning, match="bulk ESS") as record:
        model.fit(ratings)
    assert len(record) == 1
    assert "ess_bulk" in model.diagnostics_["failures"]
    assert "raise draws=" in str(record[0].message)
    assert model.to_dict()["failures"] == model.diagnostics_["failures"]


def test_sampling_diagnostics_names_each_failure():
    import arviz as az

    rng = np.random.default_rng(0)
    stuck = np.cumsum(rng.normal(size=(2, 300)), axis=1)  # random walks: high R-hat, low ESS
    stuck[1] += 10.0
    diverging = np.zeros((2, 300), dtype=bool)
    diverging[0, :3] = True
    energy = np.cumsum(rng.normal(size=(2, 300)), axis=1)  # slowly varying energy: low E-BFMI
    idata = az.from_dict(
        posterior={"x": stuck}, sample_stats={"diverging": diverging, "energy": energy}
    )
    diag = sampling_diagnostics(idata)
    assert diag["failures"] == ["r_hat", "ess_bulk", "ess_tail", "divergences", "bfmi"]
    assert diag["divergences"] == 3
    assert any("target_accept" in m for m in diag["messages"])


def test_predict_proba_known_new_and_typical_participants(fitted, ratings):
    new_person = ratings.head(4).assign(participant="someone new").drop(columns="rating")
    pop = fitted.predict_proba(new_person)
    zero = fitted.predict_proba(new_person, new_groups="zero")
    known = fitted.predict_proba(ratings.head(4))
    for table in (pop, zero, known):
        assert list(table.columns) == [1, 2, 3, 4, 5]
        np.testing.assert_allclose(table.sum(axis=1), 1.0, rtol=1e-12)
    assert list(pop.index) == list(ratings.head(4).index)
    # the population average is flatter than the typical participant's prediction
    assert (pop.max(axis=1) < zero.max(axis=1)).all()
    with pytest.raises(FormulaError, match="someone new"):
        fitted.predict_proba(new_person, new_groups="raise")
    with pytest.raises(InvalidParameterError, match="`new_groups`"):
        fitted.predict_proba(new_person, new_groups="mean")


def test_population_prediction_integrates_the_group_effects(fitted, ratings):
    """Quadrature over a new participant's effects agrees with brute-force simulation."""
    row = ratings.head(1).assign(participant="new")
    got = fitted.predict_proba(row).to_numpy()[0]
    draws = fitted._draws
    rng = np.random.default_rng(11)
    S = draws["fixed"].shape[0]
    x = row[["trait", "week"]].to_numpy(dtype=float)[0]
    z = np.array([1.0, x[1]])
    cov = fitted._block_cov(0)
    chol = np.linalg.cholesky(cov)
    e = rng.standard_normal((S, 4000, 2))
    u = np.einsum("sqp,smp->smq", chol, e) @ z
    story = fitted._inputs.random[1].levels.get_loc(row["story"].iloc[0])
    eta = draws["fixed"] @ x + draws["re_1"][:, story, 0]
    cdf = special.expit(draws["cutpoints"][:, None, :] - (eta[:, None] + u)[:, :, None])
    probs = np.diff(
        np.concatenate([np.zeros((S, 4000, 1)), cdf, np.ones((S, 4000, 1))], -1), axis=-1
    )
    # Monte Carlo error of a mean over 500 x 4000 draws is below 1e-3
    np.testing.assert_allclose(got, probs.mean(axis=(0, 1)), atol=2e-3)


def test_plot_ppc_returns_a_figure(fitted, pyplot_agg):
    from matplotlib.figure import Figure

    fig = fitted.plot_ppc(max_groups=5)
    assert isinstance(fig, Figure)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 6
    assert visible[0].get_title().startswith("all observations (n=72)")
    assert fig.get_suptitle() == "Posterior predictive check of rating"  # short, no formula
    # no interval is clipped: the shared axis reaches above every interval's top
    fig.canvas.draw()
    top = visible[0].get_ylim()[1]
    for ax in visible:
        for line in ax.lines:
            assert max(line.get_ydata(), default=0) <= top
    assert fig.legends and not any(ax.get_legend() for ax in visible)  # legend outside
    with pytest.raises(InvalidParameterError, match="`group`"):
        fitted.plot_ppc(group="nobody")


def test_loo_and_compare_ordinal_against_gaussian(mock_sampler, ratings):
    import warnings

    from models._errors import DataQualityWarning

    kw = {"draws": 500, "chains": 2, "seed": 3}
    ordinal = BayesianMixedModel(FORMULA, **kw).fit(ratings)
    gaussian = BayesianMixedModel(FORMULA, family="gaussian", **kw).fit(ratings)
    no_pred = BayesianMixedModel("rating ~ 1 + (1 | participant)", **kw).fit(ratings)
    with warnings.catch_warnings():
        # random draws are no posterior, so PSIS may flag observations
        warnings.simplefilter("ignore", DataQualityWarning)
        loo = ordinal.loo()
        table = compare({"ordinal": ordinal, "gaussian": gaussian, "intercepts": no_pred})
    assert np.isfinite(loo["elpd_loo"])
    assert set(table.index) == {"ordinal", "gaussian", "intercepts"}
    assert {"elpd_loo", "elpd_diff", "weight", "se", "dse"} <= set(table.columns)


def test_discretised_gaussian_is_a_probability_over_the_categories(mock_sampler, ratings):
    from models.bayes.compare import _discretized_gaussian

    model = BayesianMixedModel(FORMULA, family="gaussian", draws=100, chains=1, seed=2)
    with pytest.warns(SamplingWarning):
        model.fit(ratings)
    cats = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    total = 0.0
    for value in cats:
        model._inputs = dataclasses.replace(model._inputs, y_data=np.full(model.n_obs_, value))
        total = total + np.exp(_discretized_gaussian(model, cats))
    np.testing.assert_allclose(total, 1.0, rtol=1e-10)


def test_compare_refuses_models_of_other_rows(mock_sampler, ratings):
    kw = {"draws": 500, "chains": 2, "seed": 3}
    a = BayesianMixedModel(FORMULA, **kw).fit(ratings)
    b = BayesianMixedModel(FORMULA, **kw).fit(ratings.iloc[:60])
    with pytest.raises(InvalidParameterError, match="other observations"):
        compare([a, b])
    with pytest.raises(InvalidParameterError, match="at least two"):
        compare([a])


def test_leave_one_group_out_matches_closed_form_for_gaussian_intercept(mock_sampler, ratings):
    """Held-out participant: adaptive quadrature vs the exact multivariate normal marginal."""
    from models.bayes.compare import _held_out_elpd

    data = ratings.assign(score=ratings["rating"] * 1.3 + ratings["week"])
    formula = "score ~ week + (1 | participant)"
    model = BayesianMixedModel(formula, family="gaussian", draws=300, chains=1, seed=4)
    with pytest.warns(SamplingWarning):
        model.fit(data[data["participant"] != "p03"])
    held = data[data["participant"] == "p03"]
    got, n = _held_out_elpd(model, held, group="participant")
    draws = model._draws
    X = np.column_stack([np.ones(len(held)), held["week"]])
    dens = []
    for s in range(draws["fixed"].shape[0]):
        cov = draws["sigma"][s] ** 2 * np.eye(n) + draws["sd_0"][s, 0] ** 2
        dens.append(stats.multivariate_normal(X @ draws["fixed"][s], cov).logpdf(held["score"]))
    expected = special.logsumexp(dens) - math.log(len(dens))
    assert n == len(held)
    np.testing.assert_allclose(got, expected, rtol=1e-8)


def test_leave_one_group_out_runs_per_level(mock_sampler, ratings):
    model = BayesianMixedModel(FORMULA, draws=60, chains=1, seed=8)
    with pytest.warns(SamplingWarning, match="p00"):
        result = leave_one_group_out(model, ratings, group_col="participant", levels=["p00", "p01"])
    assert list(result.pointwise["level"]) == ["p00", "p01"]
    assert list(result.pointwise["n"]) == [6, 6]
    np.testing.assert_allclose(result.elpd, result.pointwise["elpd"].sum())
    assert np.isfinite(result.se)
    with pytest.raises(InvalidParameterError, match="`group_col`"):
        leave_one_group_out(model, ratings, group_col="week")
    with pytest.raises(TypeError, match="group"):  # the earlier name is gone
        leave_one_group_out(model, ratings, group="week")
    with pytest.raises(InvalidParameterError, match="`levels`"):
        leave_one_group_out(model, ratings, group_col="participant", levels=["nobody"])


# ------------------------------------------------------------------------------- real sampling


def test_same_seed_same_draws_with_pymc(ratings):
    import_pymc()
    small = ratings.iloc[:30]
    inputs = _inputs(small, "rating ~ trait + (1 | participant)")
    model = _model(inputs)
    kw = dict(sampler="pymc", draws=30, tune=30, chains=1, target_accept=0.9, progressbar=False)
    a = run_nuts(model, seed=7, **kw).idata.posterior
    b = run_nuts(model, seed=7, **kw).idata.posterior
    c = run_nuts(model, seed=8, **kw).idata.posterior
    np.testing.assert_array_equal(a["b_z"].values, b["b_z"].values)
    assert not np.array_equal(a["b_z"].values, c["b_z"].values)


def test_gate_fires_on_a_centred_funnel_with_few_draws():
    """Neal's funnel written centred, sampled briefly: the gate must name what went wrong."""
    pm = import_pymc()
    with pm.Model() as funnel:
        v = pm.Normal("v", 0.0, 3.0)
        pm.Normal("x", 0.0, pm.math.exp(v / 2), shape=9)
    kw = dict(sampler="pymc", draws=100, tune=100, chains=2, target_accept=0.8, progressbar=False)
    run = run_nuts(funnel, seed=3, **kw)
    diag = sampling_diagnostics(run.idata)
    assert not diag["passed"]
    # 200 draws of a funnel: chains disagree about v and mix slowly; which of divergences and
    # E-BFMI also fail depends on the seed, so only the certain failures are required
    assert {"r_hat", "ess_bulk", "ess_tail"} <= set(diag["failures"])
    assert len(diag["messages"]) == len(diag["failures"])


# ------------------------------------------------------------------------------- model cache


def _levels(data):
    return data["participant"].nunique(), data["story"].nunique()


def test_model_structure_is_the_same_for_new_data_of_the_same_shape(ratings):
    priors = default_priors("ordinal", "logit")
    other = simulate_ratings(SEED + 1)
    assert _levels(other) == _levels(ratings)
    key = pmod.model_structure(_inputs(ratings), priors)
    assert pmod.model_structure(_inputs(other.iloc[:-5]), priors) == key
    fewer = ratings[ratings["participant"] != "p00"]
    assert pmod.model_structure(_inputs(fewer), priors) != key
    probit = default_priors("ordinal", "probit")
    assert pmod.model_structure(_inputs(ratings, link="probit"), probit) != key
    wider = {**priors, "sd": Prior("halfnormal", {"sigma": 1.0})}
    assert pmod.model_structure(_inputs(ratings), wider) != key


def test_refit_of_the_same_structure_reuses_the_model(mock_sampler, ratings):
    from models._backends.samplers import MODEL_CACHE

    MODEL_CACHE.clear()
    other = simulate_ratings(SEED + 1)
    first = BayesianMixedModel(FORMULA, draws=500, seed=5).fit(ratings)
    second = BayesianMixedModel(FORMULA, draws=500, seed=5).fit(other.iloc[:-5])
    assert MODEL_CACHE.info() == {"size": 1, "builds": 1, "hits": 1, "compilations": 0}
    # the cached model carries the first data's labels; the fit is labelled with its own
    assert (
        list(second.group_effects()["level"].unique()[:2])
        == sorted(other["participant"].unique())[:2]
    )
    assert second.n_obs_ == len(other) - 5 and first.n_obs_ == len(ratings)
    BayesianMixedModel(FORMULA, draws=500, seed=5).fit(ratings[ratings["participant"] != "p00"])
    assert MODEL_CACHE.info()["builds"] == 2


def test_warm_and_cold_model_give_identical_draws_with_pymc(ratings):
    """Same seed, same data: a model built for other data and reused samples byte for byte
    as a freshly built one."""
    from models._backends.samplers import MODEL_CACHE

    formula = "rating ~ trait + (1 | participant)"
    other = simulate_ratings(SEED + 1)
    kw = dict(sampler="pymc", draws=40, tune=40, chains=1, seed=3, progressbar=False)

    def fit(data):
        with pytest.warns(SamplingWarning):
            return BayesianMixedModel(formula, **kw).fit(data)

    MODEL_CACHE.clear()
    cold = fit(other)
    MODEL_CACHE.clear()
    fit(ratings)
    warm = fit(other)
    assert MODEL_CACHE.info()["builds"] == 1 and MODEL_CACHE.info()["hits"] == 1
    pd.testing.assert_frame_equal(cold.summary_, warm.summary_, check_exact=True)
    for name in ("b_z", "z_0", "cutpoints_z", "re_0"):
        np.testing.assert_array_equal(
            cold.idata_.posterior[name].values, warm.idata_.posterior[name].values
        )


def test_numpyro_refuses_the_probit_link_before_sampling(ratings):
    with pytest.raises(InvalidParameterError, match="cannot run link='probit'"):
        BayesianMixedModel(FORMULA, link="probit", sampler="numpyro").fit(ratings)


def test_jax_gradient_is_finite_where_the_outer_categories_are_padded(ratings):
    """numpyro differentiates every branch of JAX's softplus: no NaN from the padded cutpoints."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from pymc.sampling.jax import get_jaxified_logp

    jax.config.update("jax_enable_x64", True)
    model = _model(_inputs(ratings, link="logit"))
    logp = get_jaxified_logp(model)
    rng = np.random.default_rng(3)
    for point in (model.initial_point(), _random_point(model, rng)):
        values = [jnp.asarray(point[v.name]) for v in model.value_vars]
        expected = model.compile_logp(mode="FAST_COMPILE")(point)
        np.testing.assert_allclose(float(logp(values)), expected, rtol=1e-10)
        grads = jax.grad(logp)(values)
        assert all(np.isfinite(np.asarray(g)).all() for g in grads)


def test_default_sampling_is_the_signature_default():
    import inspect

    from models.bayes import DEFAULT_SAMPLING

    params = inspect.signature(BayesianMixedModel).parameters
    assert {k: params[k].default for k in DEFAULT_SAMPLING} == DEFAULT_SAMPLING


@pytest.mark.parametrize("family", ["ordinal", "gaussian"])
def test_log_likelihood_and_predictive_draws_do_not_depend_on_the_block_size(
    mock_sampler, ratings, monkeypatch, family
):
    """After sampling, draws are processed in blocks; any block size gives the same arrays
    (to rounding: BLAS may sum a block of another height in another order)."""
    import models.bayes.model as bayes_model

    def fitted(block):
        monkeypatch.setattr(bayes_model, "_BLOCK", block)
        model = BayesianMixedModel(FORMULA, family=family, draws=60, chains=2, seed=4)
        with pytest.warns(SamplingWarning):
            model.fit(ratings)
        return model.idata_

    whole, blocks = fitted(10**9), fitted(7 * len(ratings) + 3)
    for group in ("log_likelihood", "posterior_predictive"):
        a, b = whole[group]["y"].values, blocks[group]["y"].values
        assert a.shape == (2, 60, len(ratings))
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=0)
    assert np.isfinite(whole["log_likelihood"]["y"].values).all()


@pytest.mark.parametrize("link", ["logit", "probit"])
def test_predictive_draws_follow_the_category_probabilities(mock_sampler, ratings, link):
    """Each category appears in the predictive draws as often as the model gives it."""
    model = BayesianMixedModel(FORMULA, link=link, draws=400, chains=2, seed=8).fit(ratings)
    eta = model.linear_predictor()
    probs = pmod.category_probabilities(eta, model._draws["cutpoints"], link)  # S x n x K
    values = model.idata_.posterior_predictive["y"].values.reshape(eta.shape)
    assert values.dtype == np.int8  # whole-number ratings 1-5: one byte per draw
    assert model.idata_.observed_data["y"].values.dtype == np.int8
    categories = np.asarray(model._inputs.categories, dtype=float)
    assert set(np.unique(values)) <= set(categories)
    # per draw, the expected category given that draw's eta, against the drawn one: the
    # differences average out to 0 overall and among the draws with the highest eta
    expected = probs @ categories  # S x n
    diff = values - expected
    high = eta > np.quantile(eta, 0.9)
    for cells in (np.ones_like(high), high):
        sd = math.sqrt(np.mean((probs @ categories**2 - expected**2)[cells]) / cells.sum())
        assert abs(diff[cells].mean()) < 5 * sd, (diff[cells].mean(), sd)
    assert np.corrcoef(values.ravel(), eta.ravel())[0, 1] > 0


def test_loo_in_blocks_equals_arviz_on_the_whole_log_likelihood(mock_sampler, ratings, monkeypatch):
    import warnings

    import arviz as az

    from models._errors import DataQualityWarning

    monkeypatch.setattr("models.bayes._predict._LOO_CELLS", 1000)  # 1 row per block
    kw = {"draws": 500, "chains": 2, "seed": 3}
    ordinal = BayesianMixedModel(FORMULA, **kw).fit(ratings)
    smaller = BayesianMixedModel("rating ~ 1 + (1 | participant)", **kw).fit(ratings)
    gaussian = BayesianMixedModel(FORMULA, family="gaussian", **kw).fit(ratings)
    assert "_idata_full" not in vars(ordinal)  # fit leaves the pointwise groups out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # random draws are no posterior: Pareto k warnings
        ours = ordinal.loo(pointwise=True)
        ours_gaussian = gaussian.loo()
        ours_table = compare({"ordinal": ordinal, "smaller": smaller})
        full = az.loo(ordinal.idata_, pointwise=True)
        full_gaussian = az.loo(gaussian.idata_)
        full_table = az.compare({"ordinal": ordinal.idata_, "smaller": smaller.idata_})
    for key in ("elpd_loo", "se", "p_loo"):
        np.testing.assert_allclose(ours[key], full[key], rtol=1e-8)
        np.testing.assert_allclose(ours_gaussian[key], full_gaussian[key], rtol=1e-8)
    np.testing.assert_allclose(ours["loo_i"].values, full["loo_i"].values, rtol=1e-8)
    np.testing.assert_allclose(ours["pareto_k"].values, full["pareto_k"].values, rtol=1e-8)
    assert ours["warning"] == full["warning"]
    for column in ("elpd_loo", "p_loo", "elpd_diff", "weight", "se", "dse"):
        np.testing.assert_allclose(
            ours_table[column].astype(float),
            full_table.loc[ours_table.index, column].astype(float),
            rtol=1e-8,
            atol=1e-12,
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gaussian.loo()
    flagged = [w for w in caught if issubclass(w.category, DataQualityWarning)]
    assert bool(flagged) == bool(full_gaussian["warning"])  # the Pareto k check, said once


def test_the_predictive_draws_are_the_same_whenever_computed(mock_sampler, ratings):
    model = BayesianMixedModel(FORMULA, draws=500, chains=2, seed=5).fit(ratings)
    alone = model._pointwise_draws(loglik=False)[1]
    stored = model.idata_.posterior_predictive["y"].values.reshape(alone.shape)
    np.testing.assert_array_equal(alone, stored)
    assert model.posterior_ is model.idata_.posterior
