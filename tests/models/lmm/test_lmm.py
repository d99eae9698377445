"""Behaviour of LinearMixedModel: contract, options, warnings, internal consistency, recovery."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings
from scipy import stats

from models._errors import (
    ConvergenceError,
    ConvergenceWarning,
    FormulaError,
    InvalidParameterError,
    NotFittedError,
    SingularFitWarning,
)
from models.formula import build_design, parse_formula
from models.lmm import DICT_KEYS, LinearMixedModel, MixedModelSummary, lrt
from models.lmm._satterthwaite import richardson

HERE = Path(__file__).resolve().parents[1]  # tests/models: its reference/ and ../data
DATA = HERE.parent / "data"
REF = json.loads((HERE / "reference" / "lmm.json").read_text())


@pytest.fixture(scope="module")
def sleep():
    return pd.read_csv(DATA / "lme4_sleepstudy.csv")


@pytest.fixture(scope="module")
def slope_fit(sleep):
    return LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleep)


@pytest.fixture(scope="module")
def intercept_fit(sleep):
    return LinearMixedModel("Reaction ~ Days + (1 | Subject)").fit(sleep)


def simulate_crossed(rng, *, n=3000, n_r=150, n_t=60, sd_r=0.8, sd_t=0.5, sigma=1.0):
    rater = rng.integers(0, n_r, n)
    target = rng.integers(0, n_t, n)
    x = rng.normal(size=n)
    y = (
        2.0
        + 0.5 * x
        + rng.normal(0, sd_r, n_r)[rater]
        + rng.normal(0, sd_t, n_t)[target]
        + rng.normal(0, sigma, n)
    )
    return pd.DataFrame({"y": y, "x": x, "rater": rater, "target": target})


# ---------------------------------------------------------------------------------------------
# estimator contract


def test_init_stores_parameters_only():
    m = LinearMixedModel(
        3, reml="yes", ddf="kr", optimizer="nope", max_evals=-1, tol=5, ci_level=95
    )
    assert m.get_params() == {
        "formula": 3,
        "reml": "yes",
        "ddf": "kr",
        "optimizer": "nope",
        "max_evals": -1,
        "tol": 5,
        "ci_level": 95,
    }
    assert not hasattr(m, "theta_")


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("formula", 3),
        ("reml", "yes"),
        ("ddf", "kr"),
        ("optimizer", "bfgs"),
        ("max_evals", 0),
        ("max_evals", 1.5),
        ("max_evals", True),
        ("tol", 0.0),
        ("tol", 2.0),
        ("ci_level", 95),
        ("ci_level", 0.0),
        ("ci_level", True),
    ],
)
def test_invalid_parameters_raise_at_fit(sleep, param, value):
    params = {"formula": "Reaction ~ Days + (1 | Subject)", param: value}
    formula = params.pop("formula")
    m = LinearMixedModel(formula, **params)
    with pytest.raises(InvalidParameterError, match=f"`{param}` parameter of LinearMixedModel"):
        m.fit(sleep)


def test_kenward_roger_needs_reml(sleep):
    m = LinearMixedModel("Reaction ~ Days + (1 | Subject)", reml=False, ddf="kenward-roger")
    with pytest.raises(InvalidParameterError, match="Kenward-Roger df are defined for REML"):
        m.fit(sleep)


def test_fit_rejects_non_dataframe():
    with pytest.raises(InvalidParameterError, match="`data` parameter of LinearMixedModel.fit"):
        LinearMixedModel("y ~ x + (1 | g)").fit({"y": [1.0]})


@pytest.mark.parametrize("method", ["summary", "to_dict", "icc", "predict", "print_summary"])
def test_methods_need_fit(method):
    m = LinearMixedModel("y ~ x + (1 | g)")
    with pytest.raises(NotFittedError, match=method):
        getattr(m, method)()


def test_ranef_needs_fit():
    with pytest.raises(NotFittedError):
        _ = LinearMixedModel("y ~ x + (1 | g)").ranef_


def test_fit_returns_self_and_does_not_mutate(sleep):
    before = sleep.copy()
    m = LinearMixedModel("Reaction ~ Days + (Days | Subject)")
    assert m.fit(sleep) is m
    pd.testing.assert_frame_equal(sleep, before)


def test_no_random_term(sleep):
    with pytest.raises(FormulaError, match="no random-effects term"):
        LinearMixedModel("Reaction ~ Days").fit(sleep)


def test_rank_deficient_fixed_effects(sleep):
    df = sleep.assign(Days2=2 * sleep["Days"])
    with pytest.raises(FormulaError, match=r"rank deficient.*Days2"):
        LinearMixedModel("Reaction ~ Days + Days2 + (1 | Subject)").fit(df)


def test_grouping_factor_with_one_row_per_level(sleep):
    df = sleep.assign(row=np.arange(len(sleep)))
    with pytest.raises(FormulaError, match="not identifiable"):
        LinearMixedModel("Reaction ~ Days + (1 | row)").fit(df)


# ---------------------------------------------------------------------------------------------
# results


def test_summary_tables(slope_fit):
    s = slope_fit.summary()
    assert isinstance(s, MixedModelSummary)
    assert list(s.fixed.columns) == [
        "term",
        "estimate",
        "se",
        "df",
        "statistic",
        "p_value",
        "ci_low",
        "ci_high",
    ]
    assert list(s.random.columns) == ["group", "term", "variance", "sd"]
    assert list(s.random["group"]) == ["Subject", "Subject", "Residual"]
    assert list(s.random_corr.columns) == ["group", "term1", "term2", "covariance", "corr"]
    assert s.random_corr[["term1", "term2"]].values.tolist() == [["Intercept", "Days"]]
    assert s.fit.shape[0] == 1
    assert bool(s.fit["converged"].iloc[0]) and not bool(s.fit["singular"].iloc[0])
    # the summary is a copy: editing it leaves the model alone
    s.fixed.loc[0, "estimate"] = 0.0
    assert slope_fit.fixed_.loc[0, "estimate"] != 0.0


def test_print_summary(slope_fit, capsys):
    slope_fit.print_summary(decimals=2)
    out = capsys.readouterr().out
    assert "REML" in out and "Satterthwaite" in out and "251.41" in out


def test_fitted_plus_residuals_is_response(slope_fit, sleep):
    np.testing.assert_allclose(
        slope_fit.fitted_ + slope_fit.residuals_, sleep["Reaction"], rtol=1e-12
    )


def test_ci_level_changes_interval(sleep):
    m90 = LinearMixedModel("Reaction ~ Days + (Days | Subject)", ci_level=0.90).fit(sleep)
    fx = m90.fixed_
    q = stats.t.ppf(0.95, fx["df"])
    np.testing.assert_allclose(fx["ci_high"], fx["estimate"] + q * fx["se"], rtol=1e-12)
    np.testing.assert_allclose(fx["ci_low"], fx["estimate"] - q * fx["se"], rtol=1e-12)


def test_to_dict_keys_and_json(slope_fit):
    d = slope_fit.to_dict()
    assert tuple(d) == DICT_KEYS
    assert tuple(d) == (
        "engine",
        "formula",
        "reml",
        "n_obs",
        "groups",
        "fixed",
        "random",
        "residual_sd",
        "loglik",
        "reml_criterion",
        "aic",
        "bic",
        "converged",
        "singular",
        "seconds",
    )
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["engine"] == "lmm"
    assert back["groups"] == {"Subject": 18}
    assert back["n_obs"] == 180
    assert [set(r) for r in back["fixed"]] == [
        {"term", "estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high"}
    ] * 2
    assert [r for r in back["random"] if "sd" in r] == [
        {"group": "Subject", "term": "Intercept", "sd": pytest.approx(24.7404476166998, rel=1e-4)},
        {"group": "Subject", "term": "Days", "sd": pytest.approx(5.92213325957914, rel=1e-4)},
    ]
    corr = [r for r in back["random"] if "corr" in r]
    assert corr == [
        {
            "group": "Subject",
            "term1": "Intercept",
            "term2": "Days",
            "corr": pytest.approx(0.0655513428534642, abs=1e-4),
        }
    ]
    assert back["reml_criterion"] == pytest.approx(1743.62827195849, rel=1e-8)
    assert back["residual_sd"] == pytest.approx(25.5918158926241, rel=1e-6)


def test_to_dict_ml_has_null_reml_criterion(sleep):
    d = LinearMixedModel("Reaction ~ Days + (1 | Subject)", reml=False).fit(sleep).to_dict()
    assert d["reml"] is False and d["reml_criterion"] is None
    assert d["loglik"] == pytest.approx(-2 * 0 + d["loglik"])  # finite number
    json.dumps(d, allow_nan=False)


def test_meta_provenance(slope_fit):
    meta = slope_fit.meta_
    assert meta["n_used"] == 180 and meta["n_excluded"] == 0
    assert meta["params"]["formula"] == "Reaction ~ Days + (Days | Subject)"
    assert meta["package_version"]


def test_missing_rows_dropped(sleep):
    df = sleep.copy()
    df.loc[[0, 5, 17], "Reaction"] = np.nan
    m = LinearMixedModel("Reaction ~ Days + (1 | Subject)").fit(df)
    assert m.n_obs_ == 177 and m.n_dropped_ == 3
    ref = LinearMixedModel("Reaction ~ Days + (1 | Subject)").fit(df.dropna())
    np.testing.assert_allclose(m.fixed_["estimate"], ref.fixed_["estimate"], rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# equivalences (two paths that must agree)


def test_double_bar_equals_separate_terms(sleep):
    a = LinearMixedModel("Reaction ~ Days + (Days || Subject)").fit(sleep)
    b = LinearMixedModel("Reaction ~ Days + (1 | Subject) + (0 + Days | Subject)").fit(sleep)
    np.testing.assert_allclose(a.theta_, b.theta_, rtol=1e-10)
    np.testing.assert_allclose(a.fixed_["se"], b.fixed_["se"], rtol=1e-10)
    np.testing.assert_allclose(a.fixed_["df"], b.fixed_["df"], rtol=1e-8)


def test_row_order_does_not_matter(sleep):
    shuffled = sleep.sample(frac=1.0, random_state=np.random.RandomState(3))
    a = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleep)
    b = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(shuffled)
    np.testing.assert_allclose(a.fixed_["estimate"], b.fixed_["estimate"], rtol=1e-8)
    np.testing.assert_allclose(a.loglik_, b.loglik_, rtol=1e-12)
    np.testing.assert_allclose(a.fitted_.sort_index(), b.fitted_.sort_index(), rtol=1e-7)


@pytest.mark.parametrize("optimizer", ["powell", "nelder-mead"])
def test_optimizers_agree(sleep, optimizer):
    a = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleep)
    b = LinearMixedModel("Reaction ~ Days + (Days | Subject)", optimizer=optimizer).fit(sleep)
    assert b.converged_
    np.testing.assert_allclose(b.reml_criterion_, a.reml_criterion_, rtol=1e-10)
    np.testing.assert_allclose(b.fixed_["se"], a.fixed_["se"], rtol=1e-5)


def mixedlm_auto(model, data):
    """The same fit by mixedlm's own "auto" optimizer (no gradient stage first)."""
    from dataclasses import replace

    import models.lmm.engine as engine

    inp = engine.engine_input(build_design(parse_formula(model.formula), data))
    ctrl = replace(
        engine.control(optimizer="auto", max_evals=10_000, tol=1e-8), gradient_first=False
    )
    result, _, evals = engine.fit(inp, reml=bool(model.reml), ctrl=ctrl)
    return result, evals


@pytest.mark.parametrize(
    ("formula", "data"),
    [
        ("Reaction ~ Days + (Days | Subject)", "sleep"),
        ("y ~ x + (1 | rater) + (1 | target)", "crossed"),
        ("y ~ x + (1 + x | rater) + (1 | target)", "crossed"),
    ],
)
def test_gradient_stage_agrees_with_mixedlm_auto(sleep, formula, data):
    frame = sleep if data == "sleep" else pd.read_csv(HERE / "reference" / "lmm_crossed.csv")
    m = LinearMixedModel(formula).fit(frame)
    result, evals = mixedlm_auto(m, frame)
    assert m.meta_["optimizer"] == "L-BFGS-B" and m.converged_
    np.testing.assert_allclose(m.theta_, result.theta, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(m.beta_, result.beta, rtol=1e-7)
    assert m.reml_criterion_ <= float(result.REMLcrit()) + 1e-8
    assert m.nfev_ <= evals


def test_boundary_fit_is_redone_by_bobyqa_and_the_lower_deviance_kept():
    # no slope variance: the gradient stage ends at the boundary of a correlated block, where
    # several boundary optima can exist; BOBYQA (lme4's optimizer) runs from the start and the
    # lower deviance is kept: at or below mixedlm's own "auto" (L-BFGS-B against COBYQA)
    rng = np.random.default_rng(11)
    g = np.repeat(np.arange(30), 10)
    x = np.tile(np.arange(10.0), 30)
    y = 1.0 + 0.3 * x + rng.normal(0, 1.0, 30)[g] + rng.normal(0, 1.0, g.size)
    frame = pd.DataFrame({"y": y, "x": x, "g": g})
    with pytest.warns(SingularFitWarning):
        m = LinearMixedModel("y ~ x + (1 + x | g)").fit(frame)
    auto, evals = mixedlm_auto(m, frame)
    assert m.meta_["optimizer"] in ("L-BFGS-B", "nloptwrap_BOBYQA")
    assert m.reml_criterion_ <= float(auto.deviance) + 1e-9
    np.testing.assert_allclose(m.theta_, auto.theta, atol=1e-6)
    assert m.theta_[2] == 0.0 and m.nfev_ > 0


@pytest.mark.parametrize(
    ("first", "second", "kept"),
    [
        ((True, 100.0), (True, 100.0 + 1e-6), "first"),  # lower beyond rounding: the gradient's
        ((True, 100.0), (True, 100.0 + 1e-13), "second"),  # within rounding: BOBYQA's
        ((True, 100.0 + 1e-6), (True, 100.0), "second"),
        ((False, 99.0), (True, 100.0), "second"),  # an unconverged gradient stage never stands
        (None, (True, 100.0), "second"),  # the gradient stage raised
    ],
)
def test_two_stages_keeps_the_lower_deviance(first, second, kept):
    from types import SimpleNamespace

    import models.lmm.engine as engine

    def result(converged, deviance, evals):
        # theta at a correlated block's boundary: the gradient stage is never settled
        return SimpleNamespace(
            converged=converged, deviance=deviance, theta=[1.0, 0.1, 0.0], function_evals=evals
        )

    fits = {"second": result(*second, 30)}
    inp = SimpleNamespace(block_sizes=(2,))

    def gradient():
        if first is None:
            raise engine.EngineFailure("failed")
        fits["first"] = result(*first, 20)
        return fits["first"], ["gradient"]

    out, messages, evals = engine._two_stages(inp, gradient, lambda: (fits["second"], ["bobyqa"]))
    assert out is fits[kept]
    assert messages == (["gradient"] if kept == "first" else ["bobyqa"])
    assert evals == (30 if first is None else 50)


def test_vcov_before_the_table_is_the_tables_covariance(sleep):
    a = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleep)
    first = a.vcov_.to_numpy()
    np.testing.assert_allclose(np.sqrt(np.diag(first)), a.fixed_["se"], rtol=1e-12)
    b = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleep)
    np.testing.assert_allclose(b.fixed_["se"], a.fixed_["se"], rtol=1e-12)
    np.testing.assert_allclose(b.vcov_.to_numpy(), first, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# engine against a dense computation (small data, so n x n matrices are fine here)


def dense_criterion(X, y, Zs, Lams, *, reml):
    Z = np.hstack(Zs)
    Lam = np.zeros((Z.shape[1], Z.shape[1]))
    o = 0
    for L in Lams:
        Lam[o : o + L.shape[0], o : o + L.shape[0]] = L
        o += L.shape[0]
    n, p = X.shape
    V = Z @ Lam @ Lam.T @ Z.T + np.eye(n)
    Vi = np.linalg.inv(V)
    XtViX = X.T @ Vi @ X
    beta = np.linalg.solve(XtViX, X.T @ Vi @ y)
    r = y - X @ beta
    r2 = r @ Vi @ r
    logdetV = np.linalg.slogdet(V)[1]
    if reml:
        return (
            logdetV + np.linalg.slogdet(XtViX)[1] + (n - p) * (1 + np.log(2 * np.pi * r2 / (n - p)))
        )
    return logdetV + n * (1 + np.log(2 * np.pi * r2 / n))


def dense_parts(block, T):
    n, p = block.Z.shape
    Z = np.zeros((n, block.n_levels * p))
    for j in range(p):
        Z[np.arange(n), block.codes * p + j] = block.Z[:, j]
    return Z, np.kron(np.eye(block.n_levels), T)


@pytest.mark.parametrize("reml", [True, False])
@pytest.mark.parametrize(
    "formula",
    [
        "y ~ x + (1 | target) + (1 + x | rater)",  # big first block p = 1, dense block p = 2
        "y ~ x + (1 + x | rater) + (1 | item)",  # first block p = 2
        "y ~ x + (1 | rater) + (1 | item) + (0 + x | target)",  # three terms
    ],
)
def test_criterion_matches_dense_formula_at_the_fit(formula, reml):
    # the engine's criterion at its estimate, recomputed densely from the design and theta_:
    # checks that theta_ comes back in the design's block order and lme4's layout
    rng = np.random.default_rng(11)
    n = 160
    df = pd.DataFrame(
        {
            "y": rng.normal(size=n) + rng.normal(size=40)[np.arange(n) % 40],
            "x": rng.normal(size=n),
            "rater": rng.integers(0, 6, n),
            "target": np.arange(n) % 40,
            "item": rng.integers(0, 4, n),
        }
    )
    with package_warnings():
        m = LinearMixedModel(formula, reml=reml).fit(df)
    d = m.design_
    parts = [dense_parts(b, T) for b, T in zip(d.random, m._Ts, strict=True)]
    want = dense_criterion(
        d.X.to_numpy(), d.y, [z for z, _ in parts], [L for _, L in parts], reml=reml
    )
    np.testing.assert_allclose(m.deviance_, want, rtol=1e-10)
    # and sigma is the profiled residual scale at that theta
    assert m.theta_.size == sum(len(b.terms) * (len(b.terms) + 1) // 2 for b in d.random)


def test_conditional_variances_match_dense_formula():
    rng = np.random.default_rng(5)
    df = simulate_crossed(rng, n=300, n_r=30, n_t=12)
    df["y"] += rng.normal(0, 0.7, 30)[df["rater"]] * df["x"]  # a true random slope
    m = LinearMixedModel("y ~ x + (1 + x | rater) + (1 | target)").fit(df)
    d = m.design_
    parts = [dense_parts(b, m._Ts[k]) for k, b in enumerate(d.random)]
    Z = np.hstack([z for z, _ in parts])
    q = Z.shape[1]
    Lam = np.zeros((q, q))
    o = 0
    for _, L in parts:
        Lam[o : o + L.shape[0], o : o + L.shape[0]] = L
        o += L.shape[0]
    A = Lam.T @ Z.T @ Z @ Lam + np.eye(q)
    cov = m.sigma_**2 * Lam @ np.linalg.inv(A) @ Lam.T
    want = np.diag(cov)
    re = m.ranef_
    got = np.concatenate(
        [
            re[(re["group"] == b.group) & (re["term"] == t)]["cond_var"].to_numpy()
            for b in d.random
            for t in b.terms
        ]
    )
    # reorder the dense diagonal (level-major within each term) to term-major
    idx = []
    o = 0
    for b in d.random:
        p = len(b.terms)
        for j in range(p):
            idx.extend(o + np.arange(b.n_levels) * p + j)
        o += b.n_levels * p
    np.testing.assert_allclose(got, want[idx], rtol=1e-9)


def test_richardson_derivatives_of_known_function():
    def F(x):
        return np.array([np.exp(x[0]) * np.sin(x[1]), x[0] ** 3 * x[1] ** 2])

    x = np.array([0.3, 1.2])
    f0, g, H = richardson(F, x)
    a, b = x
    np.testing.assert_allclose(f0, F(x), rtol=1e-15)
    np.testing.assert_allclose(g[:, 0], [np.exp(a) * np.sin(b), np.exp(a) * np.cos(b)], rtol=1e-9)
    np.testing.assert_allclose(g[:, 1], [3 * a**2 * b**2, 2 * a**3 * b], rtol=1e-9)
    np.testing.assert_allclose(
        H[:, :, 0],
        [
            [np.exp(a) * np.sin(b), np.exp(a) * np.cos(b)],
            [np.exp(a) * np.cos(b), -np.exp(a) * np.sin(b)],
        ],
        rtol=1e-7,
    )
    np.testing.assert_allclose(
        H[:, :, 1], [[6 * a * b**2, 6 * a**2 * b], [6 * a**2 * b, 2 * a**3]], rtol=1e-7
    )


def test_satterthwaite_balanced_one_way_is_groups_minus_one():
    # balanced one-way random-intercept model: the intercept's df is exactly g - 1
    rng = np.random.default_rng(2)
    g = np.repeat(np.arange(12), 6)
    y = 3 + rng.normal(0, 1, 12)[g] + rng.normal(0, 1, g.size)
    m = LinearMixedModel("y ~ 1 + (1 | g)").fit(pd.DataFrame({"y": y, "g": g}))
    np.testing.assert_allclose(m.fixed_["df"], [11.0], rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# predict, icc, lrt


def test_predict_defaults(slope_fit, sleep):
    pd.testing.assert_series_equal(
        slope_fit.predict(), slope_fit.fitted_.rename("predicted"), check_exact=True
    )
    X = slope_fit.design_.X.to_numpy()
    np.testing.assert_allclose(
        slope_fit.predict(re_form="~0"), X @ slope_fit.beta_.to_numpy(), rtol=1e-14
    )
    np.testing.assert_allclose(slope_fit.predict(sleep), slope_fit.fitted_, rtol=1e-12)


def test_predict_new_levels_and_missing(slope_fit):
    new = pd.DataFrame({"Days": [1.0, np.nan, 2.0], "Subject": [999, 308, 308]}, index=[7, 8, 9])
    pred = slope_fit.predict(new)
    assert list(pred.index) == [7, 8, 9]
    assert np.isnan(pred.loc[8])
    beta = slope_fit.beta_
    np.testing.assert_allclose(pred.loc[7], beta["Intercept"] + beta["Days"], rtol=1e-14)
    with pytest.raises(InvalidParameterError, match="999"):
        slope_fit.predict(new, allow_new_levels=False)


def test_predict_rejects_unknown_re_form(slope_fit):
    with pytest.raises(InvalidParameterError, match="`re_form` parameter"):
        slope_fit.predict(re_form="~(1 | Subject)")


def test_icc_random_intercept(intercept_fit):
    vc = REF["fits"]["sleep_intercept_reml"]["varcorr"]
    tau2, s2 = vc["vcov"]
    out = intercept_fit.icc()
    assert list(out.columns) == ["group", "variance", "icc"]
    np.testing.assert_allclose(out["icc"], [tau2 / (tau2 + s2)], rtol=1e-4)


def test_icc_crossed_shares(sleep):
    rng = np.random.default_rng(8)
    df = simulate_crossed(rng, n=600, n_r=30, n_t=20)
    m = LinearMixedModel("y ~ x + (1 | rater) + (1 | target)").fit(df)
    out = m.icc()
    total = out["variance"].sum() + m.sigma_**2
    np.testing.assert_allclose(out["icc"], out["variance"] / total, rtol=1e-14)
    assert list(out["group"]) == ["rater", "target"]


def test_icc_refuses_slopes(slope_fit):
    with pytest.raises(InvalidParameterError, match="random-intercept models only"):
        slope_fit.icc()


def test_lrt_symmetric_in_argument_order(slope_fit, intercept_fit):
    a = lrt(slope_fit, intercept_fit)
    b = lrt(intercept_fit, slope_fit)
    assert a.statistic == b.statistic and a.p_value == b.p_value
    pd.testing.assert_frame_equal(a.table, b.table)


def test_lrt_errors(sleep, slope_fit):
    other = LinearMixedModel("Reaction ~ Days + (1 | Subject)").fit(sleep.iloc[:170])
    with pytest.raises(InvalidParameterError, match="same rows"):
        lrt(slope_fit, other)
    with pytest.raises(InvalidParameterError, match="differ in size"):
        lrt(slope_fit, slope_fit)
    with pytest.raises(InvalidParameterError, match="fitted LinearMixedModel"):
        lrt(slope_fit, LinearMixedModel("Reaction ~ Days + (1 | Subject)"))


def test_lrt_mixed_reml_and_ml_compares_ml(sleep):
    ml = LinearMixedModel("Reaction ~ Days + (1 | Subject)", reml=False).fit(sleep)
    reml = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleep)
    res = lrt(ml, reml)
    assert res.criterion == "ML" and res.refit_ml
    want_ll1 = REF["fits"]["sleep_slope_ml"]["loglik"]
    np.testing.assert_allclose(res.table["loglik"].iloc[1], want_ll1, rtol=1e-6)
    np.testing.assert_allclose(res.statistic, 2 * (want_ll1 - ml.loglik_), rtol=1e-6)
    assert res.df == 2


# ---------------------------------------------------------------------------------------------
# singular and non-converging fits


def test_singular_zero_variance_warns():
    # no between-group variance in the simulation; this seed gives a boundary estimate
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(10), 4)
    x = rng.normal(size=40)
    y = 1 + 0.5 * x + rng.normal(size=40)
    with pytest.warns(SingularFitWarning, match="estimated at 0") as record:
        m = LinearMixedModel("y ~ x + (1 | g)").fit(pd.DataFrame({"y": y, "x": x, "g": g}))
    assert record[0].filename == __file__  # stacklevel points at the caller of fit
    assert m.singular_
    assert m.to_dict()["singular"] is True
    assert m.random_.loc[0, "variance"] < 1e-8


def test_singular_perfect_correlation_warns():
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(8), 5)
    x = np.tile(np.arange(5.0), 8)
    b = rng.normal(size=8)
    y = 1 + 0.5 * x + b[g] + 0.5 * b[g] * x + rng.normal(0, 1, 40)
    with pytest.warns(SingularFitWarning, match="perfectly correlated"):
        m = LinearMixedModel("y ~ x + (1 + x | g)").fit(pd.DataFrame({"y": y, "x": x, "g": g}))
    assert m.singular_
    np.testing.assert_allclose(np.abs(m.random_corr_["corr"]), [1.0], atol=1e-6)


def test_non_convergence_flagged_and_warned(sleep):
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        m = LinearMixedModel("Reaction ~ Days + (Days | Subject)", max_evals=5).fit(sleep)
    assert not m.converged_
    assert m.to_dict()["converged"] is False
    assert "max" in m.convergence_message_.lower()  # the evaluation limit, as the optimizer says
    assert np.all(np.isfinite(m.fixed_["estimate"]))
    # the same fit with the default budget converges to a different (better) point
    full = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleep)
    assert full.converged_
    assert full.reml_criterion_ < m.reml_criterion_ - 1e-6


def test_a_start_near_the_optimum_reaches_lme4s_fit_in_fewer_evaluations(sleep, monkeypatch):
    import collections

    import models.lmm.engine as engine

    monkeypatch.setattr(engine, "_MEMO", collections.OrderedDict())  # every fit from its start
    r = REF["fits"]["sleep_slope_reml"]
    formula = "Reaction ~ Days + (Days | Subject)"
    plain = LinearMixedModel(formula).fit(sleep)
    near = LinearMixedModel(formula).fit(sleep, start=1.05 * np.asarray(r["theta"]))
    assert near.converged_
    assert near.nfev_ < plain.nfev_
    np.testing.assert_allclose(near.reml_criterion_, r["reml_criterion"], rtol=1e-10)
    np.testing.assert_allclose(near.theta_, r["theta"], rtol=1e-4, atol=1e-6)
    # the start reaches the optimizer: lme4's own optimum is accepted at once
    at = LinearMixedModel(formula).fit(sleep, start=plain.theta_)
    assert at.nfev_ <= 2


def test_a_fit_of_byte_identical_input_starts_at_the_earlier_optimum(sleep, monkeypatch):
    import collections

    import models.lmm.engine as engine

    monkeypatch.setattr(engine, "_MEMO", collections.OrderedDict())
    formula = "Reaction ~ Days + (Days | Subject)"
    first = LinearMixedModel(formula).fit(sleep)
    again = LinearMixedModel(formula).fit(sleep.copy())
    assert first.nfev_ > 5 and again.nfev_ == 1
    np.testing.assert_array_equal(again.theta_, first.theta_)
    assert again.reml_criterion_ == first.reml_criterion_
    pd.testing.assert_frame_equal(again.fixed_, first.fixed_)
    pd.testing.assert_frame_equal(again.random_, first.random_)
    # any change of the input is a fit of its own: the response, the criterion, the start
    moved = sleep.assign(Reaction=sleep["Reaction"] + np.where(sleep.index == 3, 1e-9, 0.0))
    assert LinearMixedModel(formula).fit(moved).nfev_ > 5
    assert LinearMixedModel(formula, reml=False).fit(sleep).nfev_ > 5
    assert LinearMixedModel(formula).fit(sleep, start=[0.5, 0.0, 0.5]).nfev_ > 5
    # groups count by who is in which: new labels for the same grouping are the same input,
    # another grouping is another
    text = sleep.assign(Subject="p" + sleep["Subject"].astype(str))
    assert LinearMixedModel(formula).fit(text).nfev_ == 1
    split = text.assign(Subject=text["Subject"].where(text.index >= 5, "p" + text["Subject"]))
    assert LinearMixedModel(formula).fit(split).nfev_ > 5  # the first subject in two
    # an unconverged fit leaves no optimum behind, and the oldest optima leave first
    with pytest.warns(ConvergenceWarning):
        LinearMixedModel(formula, max_evals=5).fit(sleep)
    with pytest.warns(ConvergenceWarning):
        assert not LinearMixedModel(formula, max_evals=5).fit(sleep).converged_
    monkeypatch.setattr(engine, "MEMO_FITS", 2)
    LinearMixedModel(formula).fit(moved)
    LinearMixedModel(formula, reml=False).fit(sleep)
    assert LinearMixedModel(formula).fit(sleep).nfev_ > 5


@pytest.mark.parametrize(
    ("formula", "start", "match"),
    [
        ("Reaction ~ Days + (Days | Subject)", [1.0, 0.0], "must hold 3 values"),
        ("Reaction ~ Days + (Days | Subject)", [1.0, 0.0, -0.5], "non-negative diagonal"),
        ("Reaction ~ Days + (Days | Subject)", [1.0, np.nan, 0.5], "finite"),
        ("Reaction ~ Days + (1 | Subject)", ["a"], "must be numbers"),
        ("Reaction ~ s(Days, k=5) + (1 | Subject)", [1.0], "smooth terms"),
    ],
)
def test_a_bad_start_is_refused(sleep, formula, start, match):
    with pytest.raises(InvalidParameterError, match=match):
        LinearMixedModel(formula).fit(sleep, start=start)


@pytest.mark.parametrize("optimizer", ["auto", "nelder-mead"])
def test_iteration_budget_reaches_the_optimizer(sleep, optimizer):
    with pytest.warns(ConvergenceWarning):
        m = LinearMixedModel(
            "Reaction ~ Days + (Days | Subject)", optimizer=optimizer, max_evals=2
        ).fit(sleep)
    assert not m.converged_


# ---------------------------------------------------------------------------------------------
# parameter recovery (known truth)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_recovers_crossed_variances(seed):
    rng = np.random.default_rng(seed)
    sd_r, sd_t, sigma = 0.8, 0.5, 1.0
    df = simulate_crossed(rng, n=4000, n_r=200, n_t=100, sd_r=sd_r, sd_t=sd_t, sigma=sigma)
    m = LinearMixedModel("y ~ x + (1 | rater) + (1 | target)").fit(df)
    fx = m.fixed_.set_index("term")
    # fixed effects within 4 standard errors of the truth
    assert abs(fx.loc["x", "estimate"] - 0.5) < 4 * fx.loc["x", "se"]
    assert abs(fx.loc["Intercept", "estimate"] - 2.0) < 4 * fx.loc["Intercept", "se"]
    sd = m.random_.set_index("group")["sd"]
    # sd of a variance estimate from k groups is about var * sqrt(2 / k): 10% for raters,
    # 14% for targets; the sd bounds below are > 3 of those standard errors
    assert abs(sd["rater"] / sd_r - 1) < 0.16
    assert abs(sd["target"] / sd_t - 1) < 0.22
    assert abs(m.sigma_ / sigma - 1) < 0.04


@pytest.mark.slow
def test_large_crossed_design_recovers_truth():
    # ~70,000 ratings by ~3,000 raters of ~1,000 targets; speed is measured in
    # benchmarks/bench_lmm.py, never asserted here
    rng = np.random.default_rng(2024)
    df = simulate_crossed(rng, n=70_000, n_r=3000, n_t=1000)
    m = LinearMixedModel("y ~ x + (1 | rater) + (1 | target)").fit(df)
    assert m.converged_ and not m.singular_
    sd = m.random_.set_index("group")["sd"]
    assert abs(sd["rater"] / 0.8 - 1) < 0.06  # 3,000 raters: sd of the estimate ~1.3%
    assert abs(sd["target"] / 0.5 - 1) < 0.1  # 1,000 targets: ~2.2%
    assert abs(m.fixed_.set_index("term").loc["x", "estimate"] - 0.5) < 4 * m.fixed_["se"].iloc[1]


def test_to_dict_nested_groups_and_uncorrelated_terms():
    nested = pd.read_csv(HERE / "reference" / "lmm_nested.csv")
    d = LinearMixedModel("y ~ x + (1 | school/class)").fit(nested).to_dict()
    assert d["groups"] == {"school": 12, "school:class": 60}
    assert [(r["group"], r["term"]) for r in d["random"]] == [
        ("school", "Intercept"),
        ("school:class", "Intercept"),
    ]
    sleep = pd.read_csv(DATA / "lme4_sleepstudy.csv")
    d = LinearMixedModel("Reaction ~ Days + (Days || Subject)").fit(sleep).to_dict()
    assert d["groups"] == {"Subject": 18}
    assert [set(r) for r in d["random"]] == [{"group", "term", "sd"}] * 2


# ---------------------------------------------------------------------------------------------
# refit with a new response (power analysis, bootstraps)


def test_refit_equals_a_fresh_fit_on_the_new_response(slope_fit, sleep):
    rng = np.random.default_rng(7)
    y = slope_fit.predict() + rng.normal(0, 25.0, len(sleep))
    new = slope_fit.refit(y.to_numpy())
    fresh = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(
        sleep.assign(Reaction=y.to_numpy())
    )
    assert new is not slope_fit and new.converged_
    np.testing.assert_allclose(new.reml_criterion_, fresh.reml_criterion_, rtol=1e-9)
    np.testing.assert_allclose(new.fixed_["estimate"], fresh.fixed_["estimate"], rtol=1e-6)
    np.testing.assert_allclose(new.fixed_["df"], fresh.fixed_["df"], rtol=1e-3)
    np.testing.assert_allclose(new.random_["sd"], fresh.random_["sd"], rtol=1e-4)
    pd.testing.assert_index_equal(new.fitted_.index, fresh.fitted_.index)
    # the original fit is untouched
    np.testing.assert_allclose(slope_fit.design_.y, sleep["Reaction"].to_numpy())


def test_refit_series_must_align(slope_fit):
    y = pd.Series(slope_fit.design_.y, index=slope_fit.design_.rows)
    np.testing.assert_allclose(
        slope_fit.refit(y).fixed_["estimate"], slope_fit.fixed_["estimate"], rtol=1e-7
    )
    with pytest.raises(InvalidParameterError, match="indexed like the rows used"):
        slope_fit.refit(y.reset_index(drop=True).iloc[::-1])
    with pytest.raises(InvalidParameterError, match="180 finite values"):
        slope_fit.refit(np.ones(5))
    with pytest.raises(InvalidParameterError, match="missing or infinite"):
        slope_fit.refit(np.r_[np.nan, np.ones(179)])
    with pytest.raises(NotFittedError):
        LinearMixedModel("y ~ x + (1 | g)").refit(np.ones(3))


# ---------------------------------------------------------------------------------------------
# formulas stay data: the engine sees generated names only


INJECTIONS = [
    'Reaction ~ __import__("os").system("echo hacked") + (1 | Subject)',
    'Reaction ~ Days + (1 | __import__("os").getcwd())',
    'Reaction ~ exec("import os") + (1 | Subject)',
    "Reaction ~ {Days.__class__.__mro__} + (1 | Subject)",
    "Reaction ~ Days + (1 | Subject); import os",
]


@pytest.mark.parametrize("formula", INJECTIONS)
def test_code_in_a_formula_is_refused_before_the_engine(sleep, formula, monkeypatch):
    import models.lmm.engine as mixedlm_lmm

    def engine_called(*args, **kwargs):
        raise AssertionError("the engine was called")

    monkeypatch.setattr(mixedlm_lmm, "fit", engine_called)
    with pytest.raises(FormulaError):
        LinearMixedModel(formula).fit(sleep)


def test_engine_receives_generated_names_only():
    import re

    from models.lmm.engine import engine_input

    nested = pd.read_csv(HERE / "reference" / "lmm_nested.csv")
    d = build_design(parse_formula("y ~ x + (1 + x || school) + (1 | school:class)"), nested)
    inp = engine_input(d)
    assert inp.formula == "y ~ 0 + x0 + x1 + (0 + z0 | g0) + (0 + z1 | g1) + (0 + z2 | g2)"
    names = set(re.findall(r"[A-Za-z_]\w*", inp.formula))
    assert list(inp.frame.columns) == ["y", "x0", "x1", "z0", "g0", "z1", "g1", "z2", "g2"]
    assert names == set(inp.frame.columns)
    assert all(pd.api.types.is_numeric_dtype(inp.frame[c]) for c in inp.frame)
    assert inp.block_sizes == (1, 1, 1)


# ---------------------------------------------------------------------------------------------
# what mixedlm refuses or reports comes back in the formula's names


def _small(rng):
    n = 40
    return pd.DataFrame(
        {"y": rng.normal(size=n), "x": rng.normal(size=n), "g": np.repeat(np.arange(8), 5)}
    )


def test_one_level_group_is_a_formula_error():
    df = _small(np.random.default_rng(0)).assign(h="only")
    with pytest.raises(FormulaError, match="'h' of 'y ~ x \\+ \\(1 \\| h\\)' has 1 level"):
        LinearMixedModel("y ~ x + (1 | h)").fit(df)


def test_engine_failure_is_a_convergence_error():
    df = _small(np.random.default_rng(0)).assign(y=1.0)
    with pytest.raises(ConvergenceError, match="mixedlm could not fit 'y ~ x \\+ \\(1 \\| g\\)'"):
        LinearMixedModel("y ~ x + (1 | g)").fit(df)


def test_engine_messages_use_the_formula_names():
    df = _small(np.random.default_rng(0))
    df["pair"] = np.arange(len(df)) % 2
    m = LinearMixedModel("y ~ x + (1 | pair)").fit(df)
    assert "Grouping factor 'pair' has only 2 levels" in m.convergence_message_
    assert "g0" not in m.convergence_message_


def test_simulate_is_seeded_and_has_the_model_moments(slope_fit):
    a = slope_fit.simulate(3, seed=11)
    pd.testing.assert_frame_equal(a, slope_fit.simulate(3, seed=11))
    assert list(a.columns) == ["sim_1", "sim_2", "sim_3"]
    pd.testing.assert_index_equal(a.index, slope_fit.design_.rows)
    assert not np.allclose(a["sim_1"], slope_fit.simulate(1, seed=12)["sim_1"])
    # moments of many draws: mean X beta, variance z' G z + sigma^2 per row
    sims = slope_fit.simulate(4000, seed=3).to_numpy()
    X = slope_fit.design_.X.to_numpy()
    Z = slope_fit.design_.random[0].Z
    T = slope_fit._Ts[0]
    G = slope_fit.sigma_**2 * T @ T.T
    var = np.einsum("ij,jk,ik->i", Z, G, Z) + slope_fit.sigma_**2
    mean = X @ slope_fit.beta_.to_numpy()
    assert np.all(np.abs(sims.mean(axis=1) - mean) < 5 * np.sqrt(var / 4000))
    # sd of a variance estimate from 4000 draws is about var * sqrt(2 / 4000) = 2.2 %
    np.testing.assert_allclose(sims.var(axis=1, ddof=1), var, rtol=0.12)


def test_simulate_bad_arguments(slope_fit):
    with pytest.raises(InvalidParameterError, match="`n_sim` parameter"):
        slope_fit.simulate(0)
    with pytest.raises(InvalidParameterError, match="`seed` parameter"):
        slope_fit.simulate(1, seed=1.5)
    with pytest.raises(NotFittedError):
        LinearMixedModel("y ~ x + (1 | g)").simulate(1)


def test_fitted_model_pickles_and_refits(slope_fit):
    import pickle

    back = pickle.loads(pickle.dumps(slope_fit))
    pd.testing.assert_frame_equal(back.fixed_, slope_fit.fixed_)
    y = slope_fit.simulate(1, seed=5)["sim_1"]
    np.testing.assert_allclose(
        back.refit(y).fixed_["estimate"], slope_fit.refit(y).fixed_["estimate"], rtol=1e-12
    )


def test_summary_prints_an_lme4_style_table(sleep):
    model = LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleep)
    text = str(model.summary())
    assert "t value" in text and "Pr(>|t|)" in text and "Satterthwaite df" in text
    assert "None" not in text and "statistic" not in text
    assert repr(model.summary()) == text and model.summary()._repr_html_().startswith("<pre>")


def test_population_prediction_of_an_intercept_only_model():
    """An intercept-only model predicts its intercept: the grand mean in a balanced design."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"g": np.repeat(np.arange(10), 5).astype(str), "y": rng.normal(size=50)})
    fitted = LinearMixedModel("y ~ 1 + (1 | g)").fit(data)
    predicted = fitted.predict(data.iloc[:3], re_form="~0")
    np.testing.assert_allclose(predicted, data["y"].mean(), rtol=0, atol=1e-9)
    assert list(predicted.index) == [0, 1, 2]
