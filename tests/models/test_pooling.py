"""Pooling over imputations (models/pooling.py) against mitml 0.4.4 and mice 3.15.0.

Reference: tests/models/reference/pooling.R on mice::popmis (2,000 pupils in 100 schools,
popularity missing for 848), five imputations by mice ("2l.pan", seed 20261128), each fitted by
``lmer(popular ~ sex + texp + (1 | school))``. The exported per-imputation fixed effects and
covariances are pooled here and compared with ``mitml::testEstimates`` (Rubin's df, and Barnard
& Rubin's with ``df.com = n - p = 1997``), ``mice::pool`` (Barnard & Rubin's with broom.mixed's
``df.residual = 1995``) and ``mitml::testModels(method = "D1")``. R writes 15 significant
digits: estimates and standard errors to 1e-6 relative, df to 1e-4, RIV and FMI to 1e-5. One
test refits the package's LMM on each exported imputed data set (estimates to 1e-4).
"""

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from models import InvalidParameterError, NotFittedError, pool_imputations, pool_wald
from models.lmm import LinearMixedModel
from models.ordinal import OrdinalMixedModel
from models.pooling import POOLED_COLUMNS, WALD_COLUMNS

HERE = Path(__file__).resolve().parent
REF_DIR = HERE / "reference"
REF = json.loads((REF_DIR / "pooling.json").read_text())
WINE = pd.read_csv(HERE.parents[0] / "data" / "ordinal_wine.csv")


def _pairs():
    return [(pd.Series(f["estimates"]), np.array(f["vcov"])) for f in REF["per_imputation"]]


def _close(got, want, rtol):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want), rtol=rtol)


def _check_table(table, want, *, df_tol=1e-4):
    assert list(table["term"]) == want["term"]
    _close(table["estimate"], want["estimate"], 1e-6)
    _close(table["se"], want["se"], 1e-6)
    _close(table["statistic"], want["statistic"], 1e-6)
    _close(table["df"], want["df"], df_tol)
    _close(table["riv"], want["riv"], 1e-5)
    _close(table["fmi"], want["fmi"], 1e-5)


def test_rubin_df_as_mitml_test_estimates():
    pooled = pool_imputations(_pairs(), df="rubin")
    table = pooled.to_frame()
    assert list(table.columns) == POOLED_COLUMNS
    want = REF["testEstimates_rubin"]
    _check_table(table, want)
    _close(table["ci_low"], want["ci_low"], 1e-6)
    _close(table["ci_high"], want["ci_high"], 1e-6)
    info = pooled.to_dict()
    assert info["df_method"] == "rubin"
    assert "mitml::testEstimates without df.com" in info["df_reason"]
    assert pooled.m == REF["m"] == 5


def test_barnard_rubin_df_as_mitml_with_df_com():
    pooled = pool_imputations(_pairs(), df="barnard-rubin", dfcom=REF["dfcom"], ci_level=0.90)
    want = REF["testEstimates_barnard_rubin"]
    table = pooled.to_frame()
    _check_table(table, want)
    _close(table["ci_low"], want["ci_low_90"], 1e-6)
    _close(table["ci_high"], want["ci_high_90"], 1e-6)
    # never above the complete-data df; below Rubin's
    rubin = pool_imputations(_pairs(), df="rubin").to_frame()
    assert (table["df"] < REF["dfcom"]).all() and (table["df"] < rubin["df"]).all()
    info = pooled.to_dict()
    assert info["df_method"] == "barnard-rubin" and info["dfcom"] == REF["dfcom"]


def test_default_is_barnard_rubin_when_dfcom_is_given_and_rubin_otherwise():
    assert pool_imputations(_pairs(), dfcom=1997).df_method == "barnard-rubin"
    unknown = pool_imputations(_pairs())
    assert unknown.df_method == "rubin" and math.isinf(unknown.dfcom)
    assert "unknown" in unknown.to_dict()["df_reason"]


def test_as_mice_pool_with_its_dfcom():
    want = REF["mice_pool"]
    dfcom = want["dfcom"][0]
    assert dfcom == REF["n_obs"] - 5  # broom.mixed: n minus 3 fixed effects and 2 variances
    pooled = pool_imputations(_pairs(), dfcom=dfcom)
    table = pooled.to_frame()
    _close(table["estimate"], want["estimate"], 1e-6)
    _close(np.diag(pooled.within), want["ubar"], 1e-6)
    _close(np.diag(pooled.between), want["b"], 1e-6)
    _close(np.diag(pooled.total), want["t"], 1e-6)
    _close(table["df"], want["df"], 1e-4)
    _close(table["riv"], want["riv"], 1e-5)
    _close(table["lambda"], want["lambda"], 1e-5)
    _close(table["fmi"], want["fmi"], 1e-5)


@pytest.mark.parametrize(
    ("key", "terms", "dfcom"),
    [
        ("D1_sex_texp", ["sex", "texp"], None),
        ("D1_sex_texp_dfcom", ["sex", "texp"], REF["dfcom"]),
        ("D1_sex", ["sex"], None),
    ],
)
def test_d1_as_mitml_test_models(key, terms, dfcom):
    want = REF[key]
    test = pool_wald(_pairs(), terms, dfcom=dfcom)
    assert test.df_method == ("reiter" if dfcom else "li-raghunathan-rubin")
    assert test.df1 == want["df1"]
    _close(test.statistic, want["F"], 1e-6)
    _close(test.df2, want["df2"], 1e-4)
    _close(test.p_value, want["p_value"], 1e-5)
    _close(test.riv, want["riv"], 1e-6)
    frame = test.to_frame()
    assert list(frame.columns) == WALD_COLUMNS and frame["terms"][0] == ", ".join(terms)
    assert test.to_dict()["terms"] == terms


@pytest.fixture(scope="module")
def refits():
    data = pd.read_csv(REF_DIR / "pooling_popmis.csv")
    cells = pd.read_csv(REF_DIR / "pooling_imputed.csv")
    rows = cells["row"].to_numpy() - 1
    assert data["popular"].isna().to_numpy().nonzero()[0].tolist() == rows.tolist()
    fits = []
    for i in range(1, REF["m"] + 1):
        completed = data.copy()
        completed.loc[rows, "popular"] = cells[f"imp{i}"].to_numpy()
        fits.append(LinearMixedModel(REF["formula"]).fit(completed))
    return fits


def test_refits_of_the_imputed_data_pool_as_mitml(refits):
    pooled = pool_imputations(refits)
    assert pooled.df_method == "barnard-rubin"
    assert pooled.dfcom == REF["dfcom"] == refits[0].n_obs_ - 3
    assert pooled.dfcom_source == "observations minus the 3 fixed effects"
    want = REF["testEstimates_barnard_rubin"]
    table = pooled.to_frame()
    assert list(table["term"]) == ["Intercept", "sex", "texp"]
    _close(table["estimate"], want["estimate"], 1e-4)
    _close(table["se"], want["se"], 1e-4)
    _close(table["df"], want["df"], 1e-2)
    exported = pd.DataFrame([f["estimates"] for f in REF["per_imputation"]])
    _close(pooled.estimates.to_numpy(), exported.to_numpy(), 1e-4)


def test_ordinal_fits_pool_their_fixed_effects_with_rubin_df():
    fits = []
    for shift in range(3):
        data = WINE.copy()
        rows = data.index[shift * 5 : shift * 5 + 5]
        data.loc[rows, "rating"] = np.minimum(data.loc[rows, "rating"] + 1, 5)
        fits.append(OrdinalMixedModel("rating ~ temp + contact + (1 | judge)").fit(data))
    pooled = pool_imputations(fits)
    assert pooled.df_method == "rubin" and math.isinf(pooled.dfcom)
    assert "z tests" in pooled.df_reason
    names = list(fits[0].beta_.index)
    pairs = [(f.beta_, f.vcov_.loc[names, names]) for f in fits]
    pd.testing.assert_frame_equal(pooled.to_frame(), pool_imputations(pairs).to_frame())
    with pytest.raises(InvalidParameterError, match="dfcom"):
        pool_imputations(fits, df="barnard-rubin")


def test_pooling_is_refused_with_one_message_each():
    pairs = _pairs()
    with pytest.raises(InvalidParameterError, match="at least 2 fits"):
        pool_imputations(pairs[:1])
    with pytest.raises(InvalidParameterError, match="`df`"):
        pool_imputations(pairs, df="reiter")
    with pytest.raises(InvalidParameterError, match="`dfcom`"):
        pool_imputations(pairs, dfcom=-3)
    with pytest.raises(InvalidParameterError, match="`ci_level`"):
        pool_imputations(pairs, ci_level=95)
    other = (pairs[1][0].rename({"texp": "age"}), pairs[1][1])
    with pytest.raises(InvalidParameterError, match="fit 1 .* has terms"):
        pool_imputations([pairs[0], other])
    with pytest.raises(NotFittedError, match="fit 0"):
        pool_imputations([LinearMixedModel("y ~ x + (1 | g)"), pairs[0]])
    with pytest.raises(InvalidParameterError, match="fitted mixed model"):
        pool_imputations([SimpleNamespace(), pairs[0]])
    with pytest.raises(InvalidParameterError, match="distinct pooled terms"):
        pool_imputations(pairs).wald_test(["sex", "age"])
