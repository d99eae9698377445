"""s(x, bs="cr") smooths of LinearMixedModel against gamm4 (tests/models/reference/gamm4_smooth.R).

The smooth's basis, constraint and penalty are mgcv 1.8-41's; the fit is gamm4 0.2-6's (lme4
1.1-31, REML). Tolerances: the basis to 1e-12 (exact arithmetic); the REML criterion to 1e-6
relative; variance components to 1e-4 relative (the two optimizers stop at different points of
a flat optimum); the curve to 1e-4 and its SE to 1e-3 relative; edf to 1e-3.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import FormulaError, InvalidParameterError
from models.lmm import LinearMixedModel
from models.lmm._smooth import construct_smooth
from models.lmm._smooth_spec import SmoothTerm, split_smooth

ROOT = Path(__file__).resolve().parents[3]
REF = json.loads((ROOT / "tests/models/reference/gamm4_smooth.json").read_text())
CASES = {c["name"]: c for c in REF["cases"]}
SPEC = {
    "sleepstudy": ("Reaction", "Days", 6, "Subject"),
    "orthodont": ("distance", "age", 4, "Subject"),
    "chickweight": ("weight", "Time", 6, "Chick"),
}


def _data(name: str) -> pd.DataFrame:
    return pd.read_csv(ROOT / "tests/data" / CASES[name]["data"])


@pytest.fixture(scope="module")
def fits():
    out = {}
    for name, (y, x, k, g) in SPEC.items():
        formula = f'{y} ~ s({x}, bs="cr", k={k}) + (1 | {g})'
        out[name] = LinearMixedModel(formula).fit(_data(name))
    return out


@pytest.mark.parametrize("name", list(SPEC))
def test_basis_and_knots_are_mgcvs(name):
    ref = CASES[name]
    _, x, k, _ = SPEC[name]
    term = SmoothTerm(column=x, k=k, text=f"s({x})", bs="cr")
    sm, _ = construct_smooth(_data(name)[x].to_numpy(dtype=float), term)
    np.testing.assert_allclose(sm.knots, ref["knots"], rtol=1e-14, atol=1e-12)
    np.testing.assert_allclose(sm.basis(np.array(ref["grid"])), ref["basis_grid"], atol=1e-12)


@pytest.mark.parametrize("name", list(SPEC))
def test_reml_criterion_and_variances(fits, name):
    ref, m = CASES[name], fits[name]
    _, _, _, g = SPEC[name]
    assert m.reml_criterion_ == pytest.approx(ref["reml_criterion"], rel=1e-6)
    table = m.random_.set_index("group")["variance"]
    assert table[g] == pytest.approx(ref["var_group"], rel=1e-4)
    assert table["Residual"] == pytest.approx(ref["sigma2"], rel=1e-4)
    assert table["smooth"] == pytest.approx(ref["var_smooth"], rel=1e-4, abs=1e-8)
    s = m.smooth_.smooths[0]
    assert s.variance == pytest.approx(ref["var_smooth"], rel=1e-4, abs=1e-8)
    if ref["var_smooth"] > 0:
        assert s.sp == pytest.approx(ref["sp"], rel=1e-4)
    else:
        assert s.sp == ref["sp"]


@pytest.mark.parametrize("name", list(SPEC))
def test_fixed_effects_edf_and_curve(fits, name):
    ref, m = CASES[name], fits[name]
    s = m.smooth_
    assert m.beta_["Intercept"] == pytest.approx(ref["intercept"], rel=1e-6)
    assert s.coef[0] == pytest.approx(ref["intercept"], rel=1e-6)
    assert np.sqrt(s.Vp[0, 0]) == pytest.approx(ref["intercept_se"], rel=1e-4)
    assert s.smooths[0].edf == pytest.approx(ref["edf"], abs=1e-3)
    np.testing.assert_allclose(s.edf_coef, ref["edf_coef"], atol=1e-3)
    curve = s.curve(np.array(ref["grid"]))
    np.testing.assert_allclose(curve["fit"], ref["fit"], rtol=1e-4)
    np.testing.assert_allclose(curve["se"], ref["se"], rtol=1e-3)
    np.testing.assert_allclose(curve["upper"] - curve["lower"], 2 * 1.959963984540054 * curve["se"])


def test_refusals():
    d = _data("sleepstudy")
    with pytest.raises(FormulaError, match="two smooths of 'Days'"):
        split_smooth('Reaction ~ s(Days, bs="cr", k=4) + s(Days, k=5) + (1 | Subject)')
    with pytest.raises(FormulaError, match='must be bs="tp" .* or bs="cr"'):
        split_smooth('Reaction ~ s(Days, bs="ps") + (1 | Subject)')
    with pytest.raises(FormulaError, match="k must be a whole number from 3 to 20"):
        split_smooth("Reaction ~ s(Days, k=2) + (1 | Subject)")
    with pytest.raises(FormulaError, match="unknown argument"):
        split_smooth("Reaction ~ s(Days, m=2) + (1 | Subject)")
    with pytest.raises(
        InvalidParameterError, match="'Days' has 10 unique values, fewer than k = 12"
    ):
        LinearMixedModel('Reaction ~ s(Days, bs="cr", k=12) + (1 | Subject)').fit(d)
    with pytest.raises(InvalidParameterError, match="needs a numeric column; 'Subject'"):
        LinearMixedModel("Reaction ~ s(Subject, k=4) + (1 | Days)").fit(
            d.assign(Subject=d["Subject"].astype(str))
        )
    assert split_smooth("y ~ x + (1 | g)") == ("y ~ x + (1 | g)", ())
    (term,) = split_smooth("y ~ s(x) + (1 | g)")[1]
    assert (term.k, term.bs, term.by) == (10, "tp", None)


# ---------------------------------------------------------------------------------------------
# summary(fit$gam): the parametric table, the smooth's test, predictions; fit$mer's statistics


@pytest.mark.parametrize("name", list(SPEC))
def test_fixed_table_is_gams_p_table(fits, name):
    ref, m = CASES[name]["p_table"], fits[name]
    row = m.fixed_.iloc[0]
    assert list(m.fixed_["term"]) == ["Intercept"]
    assert row["estimate"] == pytest.approx(ref["estimate"], rel=1e-6)
    assert row["se"] == pytest.approx(ref["se"], rel=1e-4)
    assert row["statistic"] == pytest.approx(ref["t"], rel=1e-4)
    assert row["df"] == pytest.approx(ref["df"], rel=1e-4)
    assert row["p_value"] == pytest.approx(ref["p_value"], rel=1e-2)
    assert m.vcov_.loc["Intercept", "Intercept"] == pytest.approx(ref["se"] ** 2, rel=1e-4)


@pytest.mark.parametrize("name", list(SPEC))
def test_smooth_table_is_gams_s_table(fits, name):
    ref, table = CASES[name]["s_table"], fits[name].smooth_table_
    assert list(table.columns) == ["term", "edf", "ref_df", "F", "p_value"]
    row = table.iloc[0]
    assert row["edf"] == pytest.approx(ref["edf"], abs=1e-3)
    assert row["ref_df"] == pytest.approx(ref["ref_df"], abs=1e-3)
    assert row["F"] == pytest.approx(ref["F"], rel=1e-3)
    assert row["p_value"] == pytest.approx(ref["p_value"], abs=2e-5)  # Davies' accuracy in R


@pytest.mark.parametrize("name", list(SPEC))
def test_fit_statistics_are_mers(fits, name):
    ref, m = CASES[name], fits[name]
    assert m.npar_ == ref["npar"]
    assert m.aic_ == pytest.approx(ref["aic"], rel=1e-6)
    assert m.bic_ == pytest.approx(ref["bic"], rel=1e-6)
    assert m.singular_ is ref["singular"]
    np.testing.assert_allclose(m.fitted_.to_numpy()[:5], ref["fitted_head"], rtol=1e-4)
    residuals = m.design_.y[:5] - np.array(ref["fitted_head"])
    np.testing.assert_allclose(m.residuals_.to_numpy()[:5], residuals, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("name", list(SPEC))
def test_predict_is_gams(fits, name):
    ref, m = CASES[name], fits[name]
    _, x, _, g = SPEC[name]
    new = pd.DataFrame({x: ref["new_x"], g: "no such level"}, index=[10, 11, 12, 13])
    out = m.predict(new)
    assert list(out.index) == [10, 11, 12, 13]
    np.testing.assert_allclose(out.to_numpy(), ref["predict_new"], rtol=1e-4)
    own = m.predict()
    curve = m.smooth_.curve(m._smooth_data[x].to_numpy())
    np.testing.assert_allclose(own.to_numpy(), curve["fit"], rtol=1e-12)


def test_predict_missing_smooth_column_and_value(fits):
    m = fits["sleepstudy"]
    with pytest.raises(FormulaError, match="Days"):
        m.predict(pd.DataFrame({"Subject": [308]}))
    out = m.predict(pd.DataFrame({"Days": [np.nan, 1.17]}))
    assert np.isnan(out.iloc[0])
    assert out.iloc[1] == pytest.approx(CASES["sleepstudy"]["predict_new"][0], rel=1e-4)


def test_summary_prints_both_tables(fits, capsys):
    m = fits["chickweight"]
    s = m.summary()
    assert s.smooth is not None and s.smooth["F"].iloc[0] == m.smooth_table_["F"].iloc[0]
    assert "Approximate significance of smooth terms" in s.text
    assert "Ref.df" in s.text and "Intercept" in s.text
    m.print_summary()
    assert "s(Time" in capsys.readouterr().out


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
}


def test_every_public_member_works_or_says_what_a_smooth_model_offers(fits):
    from models._errors import ModelsError

    m = fits["sleepstudy"]
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
    assert sorted(refused) == ["icc", "lrt", "ranef_", "refit", "simulate"]
