"""Panel estimators against plm 2.6-2 (tests/models/reference/panel.R) and numpy computations."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from models._errors import DataQualityWarning, InvalidParameterError
from models.lmm import LinearMixedModel
from models.panel import (
    HausmanTest,
    PanelFit,
    fit_between,
    fit_random_effects,
    fit_within,
    hausman_test,
    within_between,
)

HERE = Path(__file__).resolve().parent
REF = json.loads((HERE / "reference" / "panel.json").read_text())


@pytest.fixture(scope="module")
def riesby():
    return pd.read_csv(HERE.parent / "data" / "riesby.csv")


@pytest.fixture(scope="module")
def sim():
    return pd.read_csv(HERE / "reference" / "panel_sim.csv")


def r_term(name):
    return "Intercept" if name == "(Intercept)" else name


def check_against(fit, ref, *, rtol=1e-7, stat=True):
    co = fit.coefficients
    terms = [ref["term"]] if isinstance(ref["term"], str) else ref["term"]  # R unboxes length 1
    assert list(co["term"]) == [r_term(t) for t in terms]
    np.testing.assert_allclose(co["estimate"], ref["estimate"], rtol=rtol)
    np.testing.assert_allclose(co["se"], ref["se"], rtol=rtol)
    if stat:
        np.testing.assert_allclose(co["statistic"], ref["statistic"], rtol=rtol)
        np.testing.assert_allclose(co["p_value"], ref["p_value"], rtol=max(rtol, 1e-6))


def demean(frame, cols, group):
    return frame[cols] - frame.groupby(group)[cols].transform("mean")


def ols(X, y):
    XtX_inv = np.linalg.inv(X.T @ X)
    b = XtX_inv @ X.T @ y
    return b, XtX_inv, y - X @ b


# ---------------------------------------------------------------------------------------------
# against plm


def test_within_riesby_classical(riesby):
    fit = fit_within(
        riesby,
        outcome_col="hamdep",
        x_cols=["week"],
        id_col="id",
        time_col="week",
        cov_type="unadjusted",
    )
    assert isinstance(fit, PanelFit) and fit.estimator == "within"
    check_against(fit, REF["riesby"]["within"])
    assert fit.df_resid == REF["riesby"]["within_df"]
    assert fit.n_obs == 375 and fit.n_entities == 66


def test_within_riesby_clustered(riesby):
    fit = fit_within(riesby, outcome_col="hamdep", x_cols=["week"], id_col="id", time_col="week")
    assert fit.cov_type == "clustered"
    ref = REF["riesby"]["within_cluster_hc1"]
    np.testing.assert_allclose(fit.coefficients["se"], ref["se"], rtol=1e-7)


def test_between_riesby(riesby):
    fit = fit_between(
        riesby, outcome_col="hamdep", x_cols=["week", "endog"], id_col="id", time_col="week"
    )
    check_against(fit, REF["riesby"]["between"])
    assert fit.df_resid == REF["riesby"]["between_df"]


def test_random_effects_riesby_unbalanced(riesby):
    fit = fit_random_effects(
        riesby, outcome_col="hamdep", x_cols=["week", "endog"], id_col="id", time_col="week"
    )
    ref = REF["riesby"]["random"]
    # unbalanced panel: linearmodels and plm estimate the entity variance with different
    # small-sample formulas (15.93 vs 15.97), which moves estimates by ~1e-5 and SEs by <1e-3
    np.testing.assert_allclose(fit.coefficients["estimate"], ref["estimate"], rtol=2e-5)
    np.testing.assert_allclose(fit.coefficients["se"], ref["se"], rtol=1e-3)
    vc = fit.variance_components.set_index("component")["variance"]
    np.testing.assert_allclose(
        vc["residual"], REF["riesby"]["random_ercomp"]["idiosyncratic"], rtol=1e-6
    )


def test_simulated_balanced_panel_all_estimators(sim):
    ref = REF["simulated"]
    kw = {"outcome_col": "y", "x_cols": ["x1", "x2"], "id_col": "id", "time_col": "t"}
    check_against(fit_within(sim, cov_type="unadjusted", **kw), ref["within"])
    check_against(fit_within(sim, **kw), ref["within_cluster_hc1"])
    check_against(fit_between(sim, **kw), ref["between"])
    re = fit_random_effects(sim, **kw)
    # plm reports z statistics for random effects; compare estimates and SEs only
    check_against(re, ref["random"], rtol=1e-6, stat=False)
    vc = re.variance_components.set_index("component")["variance"]
    np.testing.assert_allclose(vc["entity"], ref["random_ercomp"]["individual"], rtol=1e-6)
    np.testing.assert_allclose(vc["residual"], ref["random_ercomp"]["idiosyncratic"], rtol=1e-6)


def test_hausman_against_plm(sim):
    kw = {"outcome_col": "y", "x_cols": ["x1", "x2"], "id_col": "id", "time_col": "t"}
    fe = fit_within(sim, cov_type="unadjusted", **kw)
    re = fit_random_effects(sim, **kw)
    # V_within - V_random is indefinite here (x2's variance difference is negative), as is
    # common; plm inverts it all the same, and so do we, with a warning
    with pytest.warns(DataQualityWarning, match="not positive definite"):
        h = hausman_test(fe, re)
    ref = REF["simulated"]["hausman"]
    assert isinstance(h, HausmanTest)
    assert h.df == ref["df"]
    np.testing.assert_allclose(h.statistic, ref["statistic"], rtol=1e-5)
    np.testing.assert_allclose(h.p_value, ref["p_value"], rtol=1e-4)


# ---------------------------------------------------------------------------------------------
# against independent numpy computations


def test_within_equals_demeaned_ols(sim):
    fit = fit_within(
        sim, outcome_col="y", x_cols=["x1", "x2"], id_col="id", time_col="t", cov_type="unadjusted"
    )
    X = demean(sim, ["x1", "x2"], "id").to_numpy()
    y = demean(sim, ["y"], "id").to_numpy()[:, 0]
    b, XtX_inv, e = ols(X, y)
    n, k, g = len(y), X.shape[1], sim["id"].nunique()
    s2 = e @ e / (n - g - k)
    np.testing.assert_allclose(fit.coefficients["estimate"], b, rtol=1e-10)
    np.testing.assert_allclose(fit.coefficients["se"], np.sqrt(np.diag(s2 * XtX_inv)), rtol=1e-10)
    assert fit.df_resid == n - g - k


def test_within_clustered_equals_sandwich(sim):
    fit = fit_within(sim, outcome_col="y", x_cols=["x1", "x2"], id_col="id", time_col="t")
    X = demean(sim, ["x1", "x2"], "id").to_numpy()
    y = demean(sim, ["y"], "id").to_numpy()[:, 0]
    b, XtX_inv, e = ols(X, y)
    meat = np.zeros((2, 2))
    for g in sim["id"].unique():
        s = (X[sim["id"] == g]).T @ e[sim["id"] == g]
        meat += np.outer(s, s)
    n, k = len(y), X.shape[1]
    V = XtX_inv @ meat @ XtX_inv * n / (n - k)  # plm "HC1": n / (n - k)
    np.testing.assert_allclose(fit.coefficients["se"], np.sqrt(np.diag(V)), rtol=1e-10)


def test_between_equals_ols_of_means(riesby):
    fit = fit_between(riesby, outcome_col="hamdep", x_cols=["week", "endog"], id_col="id")
    means = riesby.groupby("id")[["hamdep", "week", "endog"]].mean()
    X = np.column_stack([np.ones(len(means)), means[["week", "endog"]].to_numpy()])
    b, XtX_inv, e = ols(X, means["hamdep"].to_numpy())
    s2 = e @ e / (len(means) - 3)
    np.testing.assert_allclose(fit.coefficients["estimate"], b, rtol=1e-10)
    np.testing.assert_allclose(fit.coefficients["se"], np.sqrt(np.diag(s2 * XtX_inv)), rtol=1e-10)


def test_random_effects_equals_quasi_demeaned_gls(sim):
    fit = fit_random_effects(sim, outcome_col="y", x_cols=["x1", "x2"], id_col="id", time_col="t")
    vc = fit.variance_components.set_index("component")["variance"]
    T = sim.groupby("id")["y"].transform("size").to_numpy()
    theta = 1 - np.sqrt(vc["residual"] / (T * vc["entity"] + vc["residual"]))
    cols = ["y", "x1", "x2"]
    means = sim.groupby("id")[cols].transform("mean").to_numpy()
    Z = sim[cols].to_numpy() - theta[:, None] * means
    X = np.column_stack([1 - theta, Z[:, 1:]])
    b, XtX_inv, e = ols(X, Z[:, 0])
    np.testing.assert_allclose(fit.coefficients["estimate"], b, rtol=1e-10)
    s2 = e @ e / (len(e) - X.shape[1])
    np.testing.assert_allclose(fit.coefficients["se"], np.sqrt(np.diag(s2 * XtX_inv)), rtol=1e-8)


def test_hausman_statistic_formula(sim):
    kw = {"outcome_col": "y", "x_cols": ["x1", "x2"], "id_col": "id", "time_col": "t"}
    fe = fit_within(sim, cov_type="unadjusted", **kw)
    re = fit_random_effects(sim, **kw)
    with pytest.warns(DataQualityWarning):
        h = hausman_test(fe, re)
    terms = ["x1", "x2"]
    d = (
        fe.coefficients.set_index("term").loc[terms, "estimate"]
        - re.coefficients.set_index("term").loc[terms, "estimate"]
    ).to_numpy()
    V = fe.cov.loc[terms, terms].to_numpy() - re.cov.loc[terms, terms].to_numpy()
    want = d @ np.linalg.solve(V, d)
    np.testing.assert_allclose(h.statistic, want, rtol=1e-10)
    np.testing.assert_allclose(h.p_value, stats.chi2.sf(want, 2), rtol=1e-10)
    assert list(h.table.columns) == ["term", "within", "random", "difference", "se_difference"]
    np.testing.assert_allclose(h.table["difference"], d, rtol=1e-12)


def test_ci_level_and_t_distribution(sim):
    fit = fit_between(sim, outcome_col="y", x_cols=["x1"], id_col="id", ci_level=0.9)
    co = fit.coefficients
    q = stats.t.ppf(0.95, fit.df_resid)
    np.testing.assert_allclose(co["ci_high"], co["estimate"] + q * co["se"], rtol=1e-12)
    np.testing.assert_allclose(co["ci_low"], co["estimate"] - q * co["se"], rtol=1e-12)


def test_time_col_optional_uses_row_order(sim):
    a = fit_within(sim, outcome_col="y", x_cols=["x1"], id_col="id", time_col="t")
    b = fit_within(sim, outcome_col="y", x_cols=["x1"], id_col="id")
    np.testing.assert_allclose(a.coefficients["se"], b.coefficients["se"], rtol=1e-12)


def test_missing_rows_dropped_and_counted(sim):
    df = sim.copy()
    df.loc[[3, 50], "x1"] = np.nan
    fit = fit_within(df, outcome_col="y", x_cols=["x1"], id_col="id", time_col="t")
    assert fit.n_obs == 198 and fit.meta["n_excluded"] == 2
    ref = fit_within(df.dropna(), outcome_col="y", x_cols=["x1"], id_col="id", time_col="t")
    np.testing.assert_allclose(
        fit.coefficients["estimate"], ref.coefficients["estimate"], rtol=1e-12
    )


# ---------------------------------------------------------------------------------------------
# Mundlak decomposition


def test_within_between_columns(riesby):
    before = riesby.copy()
    out = within_between(riesby, ["week", "hamdep"], id_col="id")
    pd.testing.assert_frame_equal(riesby, before)
    mean = riesby.groupby("id")["week"].transform("mean")
    np.testing.assert_allclose(out["week_between"], mean, rtol=1e-15)
    np.testing.assert_allclose(out["week_within"], riesby["week"] - mean, rtol=1e-15, atol=1e-15)
    assert list(out.columns[-4:]) == [
        "week_between",
        "week_within",
        "hamdep_between",
        "hamdep_within",
    ]


def test_within_between_missing_values():
    df = pd.DataFrame({"id": [1, 1, 1, 2], "x": [1.0, np.nan, 5.0, 2.0]})
    out = within_between(df, ["x"], id_col="id")
    np.testing.assert_allclose(out["x_between"], [3.0, 3.0, 3.0, 2.0])
    np.testing.assert_allclose(out["x_within"], [-2.0, np.nan, 2.0, 0.0])


def test_mundlak_within_coefficient_equals_fixed_effects(sim):
    # balanced panel: the person-mean-centred coefficient of the random-intercept model is the
    # within estimator exactly
    df = within_between(sim, ["x1", "x2"], id_col="id")
    m = LinearMixedModel("y ~ x1_within + x1_between + x2_within + x2_between + (1 | id)").fit(df)
    fe = fit_within(sim, outcome_col="y", x_cols=["x1", "x2"], id_col="id", cov_type="unadjusted")
    est = m.fixed_.set_index("term")["estimate"]
    np.testing.assert_allclose(
        est[["x1_within", "x2_within"]], fe.coefficients["estimate"], rtol=1e-8
    )


# ---------------------------------------------------------------------------------------------
# errors


def test_duplicate_entity_time_rejected(sim):
    df = pd.concat([sim, sim.iloc[[0, 7]]])
    with pytest.raises(InvalidParameterError, match="2 entity/time pair"):
        fit_within(df, outcome_col="y", x_cols=["x1"], id_col="id", time_col="t")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"x_cols": ["nope"]}, r"lack the column\(s\) \['nope'\]"),
        ({"x_cols": []}, "`x_cols` parameter"),
        ({"cov_type": "hc3"}, "`cov_type` parameter"),
        ({"ci_level": 95}, "`ci_level` parameter"),
    ],
)
def test_invalid_arguments(sim, kwargs, match):
    args = {"outcome_col": "y", "x_cols": ["x1"], "id_col": "id"} | kwargs
    with pytest.raises(InvalidParameterError, match=match):
        fit_within(sim, **args)


def test_non_numeric_regressor(sim):
    with pytest.raises(InvalidParameterError, match="must be numeric"):
        fit_within(sim.assign(s="a"), outcome_col="y", x_cols=["s"], id_col="id")


def test_between_refuses_clustered(sim):
    with pytest.raises(InvalidParameterError, match="`cov_type` parameter of fit_between"):
        fit_between(sim, outcome_col="y", x_cols=["x1"], id_col="id", cov_type="clustered")


def test_hausman_refuses_robust_and_wrong_kinds(sim):
    kw = {"outcome_col": "y", "x_cols": ["x1"], "id_col": "id"}
    fe_cl = fit_within(sim, **kw)
    fe = fit_within(sim, cov_type="unadjusted", **kw)
    re = fit_random_effects(sim, **kw)
    with pytest.raises(InvalidParameterError, match="cov_type='unadjusted'"):
        hausman_test(fe_cl, re)
    with pytest.raises(InvalidParameterError, match="`within` parameter"):
        hausman_test(re, re)
    with pytest.raises(InvalidParameterError, match="`random` parameter"):
        hausman_test(fe, fe)


def test_within_between_errors(sim):
    with pytest.raises(InvalidParameterError, match="already exist"):
        within_between(sim.assign(x1_within=0.0), ["x1"], id_col="id")
    with pytest.raises(InvalidParameterError, match="must be numeric"):
        within_between(sim.assign(s="a"), ["s"], id_col="id")
    with pytest.raises(InvalidParameterError, match="lack the column"):
        within_between(sim, ["x1"], id_col="person")
    with pytest.raises(InvalidParameterError, match="missing value"):
        within_between(sim.assign(id=sim["id"].where(sim["id"] > 1)), ["x1"], id_col="id")


def test_hausman_unbalanced_positive_definite_no_warning(riesby):
    fe = fit_within(
        riesby, outcome_col="hamdep", x_cols=["week"], id_col="id", cov_type="unadjusted"
    )
    re = fit_random_effects(riesby, outcome_col="hamdep", x_cols=["week", "endog"], id_col="id")
    h = hausman_test(fe, re)  # warnings are errors in the test run
    d = h.table["difference"].iloc[0]
    v = fe.cov.loc["week", "week"] - re.cov.loc["week", "week"]
    np.testing.assert_allclose(h.statistic, d**2 / v, rtol=1e-10)
    assert h.df == 1
