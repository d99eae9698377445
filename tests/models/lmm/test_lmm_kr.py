"""Kenward-Roger df of LinearMixedModel against pbkrtest 0.5.2 via lmerTest 3.1-3.

Reference: tests/models/reference/lmm_kr.R (REML fits converged at rhoend = 1e-10). R prints
the values with 15 significant digits; the tolerances are those of the optimizer's solution:
estimates 1e-6, adjusted standard errors and t statistics 1e-5, Kenward-Roger df 1e-4.

mixedlm 1.3.0's own ``kenward_roger_df`` returns Satterthwaite's df unchanged (riesby,
``hamdep ~ week * endog + (week | id)``: 59.81 for the intercept against pbkrtest's 61.66) and no
adjusted covariance, so the package computes Kenward-Roger itself (models/_kenward_roger.py).
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_lmm_reference import DATASETS as FILES
from test_lmm_reference import r_term

from models._errors import InvalidParameterError
from models.lmm import LinearMixedModel

HERE = Path(__file__).resolve().parents[1]  # tests/models: its reference/ and ../data
REF = json.loads((HERE / "reference" / "lmm_kr.json").read_text())

# case -> data set of test_lmm_reference.py
DATASETS = {case: FILES[case.split("_")[0]] for case in REF["fits"]}


@pytest.fixture(scope="module", params=sorted(DATASETS))
def case(request):
    r = REF["fits"][request.param]
    data = pd.read_csv(DATASETS[request.param])
    kr = LinearMixedModel(r["formula"], ddf="kenward-roger").fit(data)
    sat = LinearMixedModel(r["formula"]).fit(data)
    return kr, sat, r


def test_kenward_roger_against_pbkrtest(case):
    kr, _, r = case
    fx = kr.fixed_
    assert list(fx["term"]) == [r_term(t) for t in r["term"]]
    np.testing.assert_allclose(fx["estimate"], r["estimate"], rtol=1e-6)
    np.testing.assert_allclose(fx["se"], r["se"], rtol=1e-5)
    np.testing.assert_allclose(fx["statistic"], r["statistic"], rtol=1e-5)
    np.testing.assert_allclose(fx["df"], r["df"], rtol=1e-4)
    np.testing.assert_allclose(fx["p_value"], r["p_value"], rtol=1e-3)
    np.testing.assert_allclose(np.sqrt(np.diag(kr.vcov_)), r["se"], rtol=1e-5)


def test_satterthwaite_side_of_the_same_fits(case):
    _, sat, r = case
    np.testing.assert_allclose(sat.fixed_["se"], r["se_unadjusted"], rtol=1e-5)
    np.testing.assert_allclose(sat.fixed_["df"], r["df_satterthwaite"], rtol=1e-3)


def test_option_changes_the_numbers_where_the_design_is_unbalanced(case):
    kr, sat, r = case
    # unbalanced data (riesby: missing weeks; crossed: random assignment) give a different df
    # and a larger se; the balanced sleepstudy and Orthodont slope fits give the same df
    differs = not np.allclose(r["df"], r["df_satterthwaite"], rtol=1e-4)
    assert differs == (not np.allclose(kr.fixed_["df"], sat.fixed_["df"], rtol=1e-4))
    assert np.all(kr.fixed_["se"].to_numpy() >= sat.fixed_["se"].to_numpy() * (1 - 1e-9))
    ci_kr = kr.fixed_["ci_high"] - kr.fixed_["ci_low"]
    assert np.all(ci_kr.to_numpy() > 0)


def test_kenward_roger_refuses_large_data_before_fitting(monkeypatch):
    import models.lmm.model

    monkeypatch.setattr(models.lmm.model, "MAX_KR_OBS", 100)
    data = pd.read_csv(DATASETS["sleep_slope"])
    m = LinearMixedModel("Reaction ~ Days + (Days | Subject)", ddf="kenward-roger")
    with pytest.raises(InvalidParameterError, match="at most 100 observations"):
        m.fit(data)
    assert not hasattr(m, "theta_")
