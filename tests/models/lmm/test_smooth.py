"""Smooth terms of LinearMixedModel against gamm4 (tests/models/reference/gamm4_smooth.R).

Cases: one cubic regression spline (bs="cr") on sleepstudy, Orthodont and ChickWeight; one thin
plate regression spline (the default bs="tp") on sleepstudy and Orthodont (as many unique
values as k: no eigen step), ChickWeight and BodyWeight (more: the eigen step); two smooths
(tp and cr) on airquality; smooths by a factor on ChickWeight (Diet, tp) and Orthodont (Sex,
cr). The smooths' bases, constraints and penalties are mgcv 1.8-41's; the fits gamm4 0.2-6's
(lme4 1.1-31, REML, converged tightly). Tolerances: the bases to 1e-12 (exact arithmetic; a
thin plate basis up to the signs of its columns, which come from an eigen-decomposition) and
their penalty scaling to 1e-10; the REML criterion to 1e-6 relative; fixed effects, variance
components and the curves to 1e-4 relative, the curves' SE to 1e-3; edf, reference df and F
to 1e-3; p-values to 2e-5 (the accuracy of Davies' algorithm in R).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import FormulaError, InvalidParameterError
from models.lmm import LinearMixedModel
from models.lmm._smooth_summary import wood_test

ROOT = Path(__file__).resolve().parents[3]
REF = json.loads((ROOT / "tests/models/reference/gamm4_smooth.json").read_text())
CASES = {c["name"]: c for c in REF["cases"]}
NAMES = list(CASES)


def _data(name: str) -> pd.DataFrame:
    d = pd.read_csv(ROOT / "tests/data" / CASES[name]["data"])
    for f in CASES[name]["factors"]:
        d[f] = d[f].astype(str)
    return d


@pytest.fixture(scope="module")
def fits():
    return {name: LinearMixedModel(c["formula"]).fit(_data(name)) for name, c in CASES.items()}


def _signs(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Signs that align our columns with mgcv's (thin plate columns are eigenvectors)."""
    return np.where(np.sum(ours * theirs, axis=0) < 0, -1.0, 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_bases_and_penalty_scaling_are_mgcvs(fits, name):
    for part, ref in zip(fits[name].smooth_.smooths, CASES[name]["smooths"], strict=True):
        assert part.label == ref["label"]
        sm = part.smooth
        assert sm.S_scale == pytest.approx(ref["S_scale"], rel=1e-10)
        if ref["knots"] is not None:
            np.testing.assert_allclose(sm.knots, ref["knots"], rtol=1e-14, atol=1e-12)
        basis = sm.basis(np.array(ref["grid"]))
        theirs = np.array(ref["basis_grid"])
        signs = _signs(basis, theirs) if sm.term.bs == "tp" else 1.0
        np.testing.assert_allclose(basis * signs, theirs, atol=1e-12 * np.abs(theirs).max())


@pytest.mark.parametrize("name", NAMES)
def test_reml_criterion_and_variances(fits, name):
    ref, m = CASES[name], fits[name]
    assert m.reml_criterion_ == pytest.approx(ref["reml_criterion"], rel=1e-6)
    table = m.random_
    for group, variance in ref["groups"].items():
        assert table.set_index("group").loc[group, "variance"] == pytest.approx(variance, rel=1e-4)
    assert table["variance"].iloc[-1] == pytest.approx(ref["sigma2"], rel=1e-4)
    smooth_rows = table[table["group"] == "smooth"]
    assert list(smooth_rows["term"]) == [s["label"] for s in ref["smooths"]]
    for part, s, row in zip(
        m.smooth_.smooths, ref["smooths"], smooth_rows["variance"], strict=True
    ):
        assert part.variance == pytest.approx(s["variance"], rel=1e-4, abs=1e-8)
        assert row == part.variance
        if s["variance"] > 1e-8:
            assert part.sp == pytest.approx(s["sp"], rel=1e-4)
        elif part.variance == 0.0:
            assert part.sp == 1e10


@pytest.mark.parametrize("name", NAMES)
def test_edf_and_curves(fits, name):
    ref, s = CASES[name], fits[name].smooth_
    np.testing.assert_allclose(s.edf_coef, ref["edf_coef"], rtol=1e-3, atol=1e-6)
    for part, r in zip(s.smooths, ref["smooths"], strict=True):
        assert part.edf == pytest.approx(r["edf"], rel=1e-3)
        curve = s.curve(np.array(r["grid"]), term=part.label)
        np.testing.assert_allclose(curve["fit"], r["fit"], rtol=1e-4)
        np.testing.assert_allclose(curve["se"], r["se"], rtol=1e-3)
        width = curve["upper"] - curve["lower"]
        np.testing.assert_allclose(width, 2 * 1.959963984540054 * curve["se"])


def test_curve_names_its_smooth(fits):
    s = fits["two_airquality"].smooth_
    with pytest.raises(InvalidParameterError, match=r"one of \['s\(Temp\)', 's\(Wind\)'\]"):
        s.curve(np.array([60.0]))
    one = s.curve(np.array([60.0, 70.0]), term=1)
    np.testing.assert_array_equal(
        one["fit"], s.curve(np.array([60.0, 70.0]), term="s(Wind)")["fit"]
    )


# ---------------------------------------------------------------------------------------------
# summary(fit$gam): the parametric table, the smooths' tests, predictions; fit$mer's statistics


@pytest.mark.parametrize("name", NAMES)
def test_fixed_table_is_gams_p_table(fits, name):
    ref, m = CASES[name]["p_table"], fits[name]
    table = m.fixed_
    assert len(table) == len(ref["term"])
    np.testing.assert_allclose(table["estimate"], ref["estimate"], rtol=1e-4)
    np.testing.assert_allclose(table["se"], ref["se"], rtol=1e-4)
    np.testing.assert_allclose(table["statistic"], ref["t"], rtol=1e-4)
    np.testing.assert_allclose(table["df"], ref["df"], rtol=1e-4)
    np.testing.assert_allclose(table["p_value"], ref["p_value"], rtol=1e-2, atol=1e-12)
    np.testing.assert_allclose(np.diag(m.vcov_), np.square(ref["se"]), rtol=1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_smooth_table_is_gams_s_table(fits, name):
    ref, m = CASES[name]["s_table"], fits[name]
    table = m.smooth_table_
    assert list(table.columns) == ["term", "edf", "ref_df", "F", "p_value"]
    assert list(table["term"]) == ref["term"]
    np.testing.assert_allclose(table["edf"], ref["edf"], rtol=1e-3)
    np.testing.assert_allclose(table["ref_df"], ref["ref_df"], rtol=1e-3)
    np.testing.assert_allclose(table["p_value"], ref["p_value"], atol=2e-5)
    fit = m.smooth_
    res_df = m.n_obs_ - fit.edf_coef.sum()
    for part, F, theirs in zip(fit.smooths, table["F"], ref["F"], strict=True):
        cols = part.columns
        d, d1, _, rank = wood_test(
            fit.coef[cols], fit.Vp[cols, cols], fit.XVX[cols, cols], part.edf, res_df
        )
        assert F == d / rank
        # where the eigenvector element that picks d over d1 is zero but for rounding
        closest = min((d, d1), key=lambda v: abs(v / rank - theirs))
        assert closest / rank == pytest.approx(theirs, rel=1e-3)


@pytest.mark.parametrize("name", NAMES)
def test_fit_statistics_are_mers(fits, name):
    ref, m = CASES[name], fits[name]
    assert m.n_obs_ == ref["n"]
    assert m.npar_ == ref["npar"]
    assert m.aic_ == pytest.approx(ref["aic"], rel=1e-6)
    assert m.bic_ == pytest.approx(ref["bic"], rel=1e-6)
    assert m.singular_ is ref["singular"]
    np.testing.assert_allclose(m.fitted_.to_numpy()[:5], ref["fitted_head"], rtol=1e-4)
    residuals = m.design_.y[:5] - np.array(ref["fitted_head"])
    np.testing.assert_allclose(m.residuals_.to_numpy()[:5], residuals, rtol=1e-3, atol=1e-3)
    assert "Grouping factor" not in m.convergence_message_


@pytest.mark.parametrize("name", NAMES)
def test_predict_is_gams(fits, name):
    ref, m = CASES[name], fits[name]
    new = pd.DataFrame(ref["new"], index=[10, 11, 12, 13])
    out = m.predict(new)
    assert list(out.index) == [10, 11, 12, 13]
    np.testing.assert_allclose(out.to_numpy(), ref["predict_new"], rtol=1e-4)


def test_own_predictions_are_the_curve(fits):
    m = fits["sleepstudy"]
    curve = m.smooth_.curve(m._smooth_data["Days"].to_numpy())
    np.testing.assert_allclose(m.predict().to_numpy(), curve["fit"], rtol=1e-12)


def test_predict_missing_smooth_column_and_value(fits):
    m = fits["sleepstudy"]
    with pytest.raises(FormulaError, match="Days"):
        m.predict(pd.DataFrame({"Subject": [308]}))
    out = m.predict(pd.DataFrame({"Days": [np.nan, CASES["sleepstudy"]["new"]["Days"][0]]}))
    assert np.isnan(out.iloc[0])
    assert out.iloc[1] == pytest.approx(CASES["sleepstudy"]["predict_new"][0], rel=1e-4)
    by = fits["by_orthodont"]
    with pytest.raises(FormulaError, match="'Sex'"):
        by.predict(pd.DataFrame({"age": [9.0]}))


def test_summary_prints_both_tables(fits, capsys):
    m = fits["by_chickweight"]
    s = m.summary()
    assert s.smooth is not None and s.smooth["F"].iloc[0] == m.smooth_table_["F"].iloc[0]
    assert "Approximate significance of smooth terms" in s.text
    assert "Ref.df" in s.text and "Intercept" in s.text
    m.print_summary()
    assert "s(Time):Diet4" in capsys.readouterr().out


def _public_names() -> list[str]:
    import re

    doc = LinearMixedModel.__doc__
    section = doc[doc.index("Attributes\n") : doc.index("Notes\n")]
    documented = set()
    for line in section.splitlines():
        m = re.match(r"    ([a-z_, ]+_) :", line)
        if m:
            documented |= {n.strip() for n in m.group(1).split(",")}
    members = {n for n in dir(LinearMixedModel) if not n.startswith("_")}
    return sorted(documented | members)


CALLS = {
    "fit": lambda m: None,  # refitting is the fixture's job
    "set_params": lambda m: None,
    "refit": lambda m: m.refit(m.design_.y),
    "simulate": lambda m: m.simulate(1, seed=1),
    "lrt": lambda m: m.lrt(m),
    "predict": lambda m: m.predict(),
    "emmeans": lambda m: m.emmeans("Days"),
    "smooth_linearity_test": lambda m: m.smooth_linearity_test(0, n_sim=200),
}


@pytest.mark.parametrize("name", ["sleepstudy", "two_airquality", "by_chickweight"])
def test_every_public_member_works_or_says_what_a_smooth_model_offers(fits, name):
    from models._errors import ModelsError

    m = fits[name]
    names = _public_names()
    assert {"fixed_", "ranef_", "summary", "predict", "smooth_table_", "aic_"} <= set(names)
    refused = []
    for name in names:
        try:
            value = getattr(m, name)
            if name in CALLS:
                CALLS[name](m)
            elif callable(value) and not isinstance(value, type):
                value()
        except ModelsError as err:
            assert isinstance(err, InvalidParameterError), name
            assert "smooth term" in str(err) and "fixed_" in str(err) and name in str(err)
            refused.append(name)
    assert sorted(refused) == ["emmeans", "icc", "lrt", "r2", "ranef_", "refit", "simulate"]
