"""Factor smooths s(x, f, bs="fs", xt="cr") of LinearMixedModel against gamm4 (_smooth_fs.py).

Reference: tests/models/reference/gamm4_fs.R (mgcv 1.8-41, gamm4 0.2-6, lme4 1.1-31, REML,
converged tightly). Cases: the subjects' curves alone on sleepstudy; with a population smooth
on sleepstudy (xt as a list) and on ChickWeight (with a random intercept of Diet besides);
on a simulated study whose subjects differ little (a p-value away from 0); with a parametric
factor on BodyWeight; and the restricted likelihood-ratio statistic of the simulated study's
population smooth (gamm4 with and without its random effect). gamm4 orders the two
null-space variances by rounding; the reference stores each with the direction it belongs
to. Tolerances: the REML criterion to 1e-6 relative; variance components, fixed effects,
curves and predictions to 1e-4 relative (the curves' SE to 1e-3); edf, the test statistic
and F to 1e-3; p-values to 2e-5 (the accuracy of Davies' algorithm in R).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import InvalidParameterError
from models.lmm import LinearMixedModel

ROOT = Path(__file__).resolve().parents[3]
REF = json.loads((ROOT / "tests/models/reference/gamm4_fs.json").read_text())
CASES = {c["name"]: c for c in REF["cases"]}
NAMES = list(CASES)
CUTOFF = np.finfo(float).eps ** 0.8


def _data(name: str) -> pd.DataFrame:
    d = pd.read_csv(ROOT / "tests/data" / CASES[name]["data"])
    for f in CASES[name]["factors"]:
        d[f] = d[f].astype(str)
    return d


@pytest.fixture(scope="module")
def fits():
    return {name: LinearMixedModel(c["formula"]).fit(_data(name)) for name, c in CASES.items()}


def _fs(m):
    return next(s for s in m.smooth_.smooths if s.is_factor_smooth)


def test_rows_read_in_any_order_give_one_fit(fits):
    # what the thin plate base fails in gamm4: the fit may not depend on the rows' order
    d = _data("fs_sleepstudy")
    m = LinearMixedModel(CASES["fs_sleepstudy"]["formula"]).fit(d.iloc[::-1])
    ref = fits["fs_sleepstudy"]
    assert m.reml_criterion_ == pytest.approx(ref.reml_criterion_, rel=1e-9)
    np.testing.assert_allclose(_fs(m).variances, _fs(ref).variances, rtol=1e-5)
    # and gamm4's, with the cubic regression spline base, does not either
    for evidence in REF["stability"]:
        crit = np.array(evidence["reml_criterion"])
        spread = np.ptp(crit) / crit[0]
        assert (spread < 1e-9) if evidence["base"] == "cr" else (spread > 1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_reml_criterion_and_variance_components(fits, name):
    ref, m = CASES[name], fits[name]
    assert m.converged_
    assert m.reml_criterion_ == pytest.approx(ref["reml_criterion"], rel=1e-6)
    assert m.sigma_**2 == pytest.approx(ref["sigma2"], rel=1e-4)
    fs, r = _fs(m), ref["fs"]
    assert fs.label == r["label"]
    np.testing.assert_allclose(fs.smooth.knots, r["knots"], rtol=1e-14)
    # gamm4's null-space directions are the least-squares line through the first knot's
    # basis function and its orthogonal line (cosines 1 and 0 in the reference)
    np.testing.assert_allclose(r["cos_first"], [1.0, 0.0], atol=1e-12)
    variances = [r["variance_wiggly"], *r["variance_null"]]
    np.testing.assert_allclose(fs.variances, variances, rtol=1e-4)
    np.testing.assert_allclose(fs.sps, r["sp"], rtol=1e-4)
    assert fs.variance == fs.variances[0] and fs.sp == fs.sps[0]
    table = m.random_
    rows = table[table["term"].astype(str).str.startswith(fs.label)]
    assert list(rows["term"]) == [f"{fs.label}{i}" for i in (1, 2, 3)]
    np.testing.assert_allclose(rows["variance"], variances, rtol=1e-4)
    for group, variance in ref["groups"].items():
        assert table.set_index("group").loc[group, "variance"] == pytest.approx(variance, rel=1e-4)
    for part, s in zip(
        [p for p in m.smooth_.smooths if not p.is_factor_smooth], ref["smooths"], strict=True
    ):
        assert part.variance == pytest.approx(s["variance"], rel=1e-4, abs=1e-8)
    assert m.groups_[r["factor"]] == _data(name)[r["factor"]].nunique()
    assert m.npar_ == ref["npar"]
    assert m.aic_ == pytest.approx(ref["aic"], rel=1e-6)
    assert m.bic_ == pytest.approx(ref["bic"], rel=1e-6)
    np.testing.assert_allclose(m.fitted_.to_numpy()[:5], ref["fitted_head"], rtol=1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_fixed_effects_and_population_curves(fits, name):
    ref, m = CASES[name], fits[name]
    table = m.fixed_
    np.testing.assert_allclose(table["estimate"], ref["p_table"]["estimate"], rtol=1e-4)
    np.testing.assert_allclose(table["se"], ref["p_table"]["se"], rtol=1e-4)
    assert table["df"].iloc[0] == pytest.approx(ref["p_table"]["df"], rel=1e-3)
    for s in ref["smooths"]:
        curve = m.smooth_.curve(np.array(s["grid"]), term=s["label"])
        np.testing.assert_allclose(curve["fit"], s["fit"], rtol=1e-4)
        np.testing.assert_allclose(curve["se"], s["se"], rtol=1e-3)
        assert m.smooth_.component(s["label"]).edf == pytest.approx(s["edf"], rel=1e-3)


@pytest.mark.parametrize("name", NAMES)
def test_predictions_with_and_without_the_curves(fits, name):
    ref, m = CASES[name], fits[name]
    new = pd.DataFrame(ref["new"])
    np.testing.assert_allclose(m.predict(new), ref["predict_new"], rtol=1e-4)
    population = ref["predict_population"]
    np.testing.assert_allclose(m.predict(new, re_form="~0"), population, rtol=1e-4)
    np.testing.assert_allclose(m.predict(new, re_form="NA"), population, rtol=1e-4)
    # a level not seen in the fit gets the population curve, or an error when asked
    factor = ref["fs"]["factor"]
    unseen = new.assign(**{factor: "not seen"})
    np.testing.assert_allclose(m.predict(unseen), population, rtol=1e-4)
    with pytest.raises(InvalidParameterError, match=f"levels not seen .* {factor!r}"):
        m.predict(unseen, allow_new_levels=False)


@pytest.mark.parametrize("name", NAMES)
def test_smooth_table_tests_the_factor_smooth_as_a_random_effect(fits, name):
    ref, m = CASES[name], fits[name]
    table = m.smooth_table_.set_index("term")
    st = ref["s_table"]
    for i, term in enumerate(st["term"]):
        row = table.loc[term]
        assert row["edf"] == pytest.approx(st["edf"][i], rel=1e-3)
        assert row["p_value"] == pytest.approx(st["p_value"][i], abs=2e-5)
    fs = ref["fs"]["label"]
    row, re_test = table.loc[fs], ref["re_test"]
    assert row["F"] * row["ref_df"] == pytest.approx(re_test["statistic"], rel=1e-3)
    # Ref.df counts eigenvalues above eps^0.8 of the largest: ours counts the ones that are
    # not zero but for rounding; gamm4's does too unless its noise lands above the cut-off
    assert row["ref_df"] == re_test["rank_above_1e10"]
    noisy = [e for e in re_test["smallest"] if CUTOFF < e < 1e-10]
    i = st["term"].index(fs)
    assert st["ref_df"][i] == re_test["rank_above_1e10"] + len(noisy)
    if not noisy:
        assert row["F"] == pytest.approx(st["F"][i], rel=1e-3)


def test_linearity_of_a_population_smooth_beside_a_factor_smooth(fits):
    ref = REF["linearity"]
    test = fits[ref["case"]].smooth_linearity_test(ref["term"], n_sim=100, seed=1)
    assert test.statistic == pytest.approx(ref["statistic"], rel=1e-6)


def test_what_a_factor_smooth_does_not_offer(fits):
    m = fits["fs_smooth_sleepstudy"]
    with pytest.raises(InvalidParameterError, match=r"s\(Days,Subject\) is a factor smooth"):
        m.smooth_.curve(np.array([1.0]), term="s(Days,Subject)")
    with pytest.raises(InvalidParameterError, match="which it does not test: name another"):
        m.smooth_linearity_test("s(Days,Subject)")
