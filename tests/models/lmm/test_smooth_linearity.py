"""LinearMixedModel.smooth_linearity_test against gamm4 and RLRsim.

Reference: tests/models/reference/gamm4_linearity.R (gamm4 0.2-6, lme4 1.1-31, RLRsim 3.1-8):
one thin plate smooth on ChickWeight (curved), BodyWeight and a simulated study with a mild
bend, a cubic regression spline on sleepstudy (variance at zero), and two smooths on
airquality, each tested with the other kept. The REML log-likelihoods of the model and of its
straight-line null, and the statistic, agree to 1e-8 relative (1e-6 absolute where the
statistic is zero: R's is rounding noise there); the eigenvalues the null distribution depends
on to 1e-8. The p-value and the null distribution are simulated (R's and NumPy's random
numbers differ): they are compared within four Monte-Carlo standard errors of the difference
of two simulations (10,000 or 100,000 draws here, 100,000 in R).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import InvalidParameterError
from models.lmm import LinearMixedModel
from models.lmm._smooth_linearity import rlrt_eigenvalues, rlrt_null_sample

ROOT = Path(__file__).resolve().parents[3]
REF = json.loads((ROOT / "tests/models/reference/gamm4_linearity.json").read_text())
CASES = {c["name"]: c for c in REF["cases"]}
TESTS = [(c["name"], i) for c in REF["cases"] for i in range(len(c["tests"]))]
R_SIM = 100_000


def _data(case: dict) -> pd.DataFrame:
    d = pd.read_csv(ROOT / "tests/data" / case["data"])
    d[case["group"]] = d[case["group"]].astype(str)
    return d


@pytest.fixture(scope="module")
def fits():
    return {name: LinearMixedModel(c["formula"]).fit(_data(c)) for name, c in CASES.items()}


@pytest.fixture(scope="module")
def results(fits):
    return {
        (name, i): fits[name].smooth_linearity_test(CASES[name]["tests"][i]["label"], seed=1)
        for name, i in TESTS
    }


def _mc_tol(p: float, n_ours: int) -> float:
    """Four standard errors of the difference of two simulated proportions near ``p``."""
    p = min(max(p, 1.0 / n_ours), 1.0 - 1.0 / n_ours)
    return 4.0 * np.sqrt(p * (1.0 - p) * (1.0 / n_ours + 1.0 / R_SIM))


@pytest.mark.parametrize(("name", "i"), TESTS)
def test_statistic_is_gamm4_and_lmers(results, name, i):
    ref, res = CASES[name]["tests"][i], results[(name, i)]
    assert res.term == ref["label"]
    assert res.reml_alt == pytest.approx(ref["reml_alt"], rel=1e-8)
    assert res.reml_null == pytest.approx(ref["reml_null"], rel=1e-8)
    assert res.statistic == pytest.approx(ref["statistic"], rel=1e-8, abs=1e-6)
    assert res.statistic >= 0.0


@pytest.mark.parametrize(("name", "i"), TESTS)
def test_p_value_within_monte_carlo_error_of_rlrsim(results, name, i):
    ref, res = CASES[name]["tests"][i], results[(name, i)]
    assert res.n_sim == 10_000
    if ref["statistic"] < 1e-6:  # variance at zero: RLRT 0, p-value 1 (RLRsim's convention)
        assert res.statistic == 0.0
        assert res.p_value == 1.0
        return
    assert abs(res.p_value - ref["p_value_big"]) <= _mc_tol(ref["p_value_big"], 10_000)
    assert abs(res.null_at_zero - ref["null_at_zero"]) <= _mc_tol(ref["null_at_zero"], 10_000)


@pytest.mark.parametrize(("name", "i"), TESTS)
def test_eigenvalues_of_the_null_distribution(fits, name, i):
    from models.lmm._smooth_fit import smooth_parts
    from models.lmm._smooth_spec import split_smooth

    m, ref = fits[name], CASES[name]["tests"][i]
    parts = smooth_parts(m.design_, m._smooth_data, split_smooth(m.formula)[1])
    fixed = [q.X @ q.smooth.UD[:, q.smooth.rank :] for q in parts]
    X = np.column_stack([m.design_.X.to_numpy(dtype=float), *fixed])
    Z = parts[i].X @ parts[i].smooth.UD[:, : parts[i].smooth.rank]
    assert X.shape == (ref["n"], ref["p"])
    np.testing.assert_allclose(rlrt_eigenvalues(X, Z), ref["mu"], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize(("name", "i"), [("tp_sim", 0), ("two_airquality", 0)])
def test_null_distribution_matches_rlrsims(name, i):
    ref = CASES[name]["tests"][i]
    n_sim = 100_000
    sample = rlrt_null_sample(np.array(ref["mu"]), n=ref["n"], p=ref["p"], n_sim=n_sim, seed=7)
    assert abs(np.mean(sample == 0.0) - ref["null_at_zero"]) <= _mc_tol(ref["null_at_zero"], n_sim)
    for q, x in zip([0.5, 0.75, 0.9, 0.95, 0.99], ref["null_quantiles"], strict=True):
        if x > 0:
            assert abs(np.mean(sample <= x) - q) <= _mc_tol(q, n_sim)
    # far heavier at zero than the asymptotic 50:50 mixture of chi2(0) and chi2(1)
    assert np.mean(sample == 0.0) > 0.6


def test_same_seed_same_p_value(fits):
    m = fits["tp_sim"]
    a = m.smooth_linearity_test(n_sim=2000, seed=3)
    b = m.smooth_linearity_test("s(time)", n_sim=2000, seed=3)
    assert a.p_value == b.p_value
    assert a.to_frame().loc[0, "term"] == "s(time)"


def test_bad_calls_raise(fits):
    m = fits["two_airquality"]
    with pytest.raises(InvalidParameterError, match="name one smooth"):
        m.smooth_linearity_test()
    with pytest.raises(InvalidParameterError, match="n_sim"):
        m.smooth_linearity_test(0, n_sim=10)
    with pytest.raises(InvalidParameterError, match="seed"):
        m.smooth_linearity_test(0, seed=1.5)
    case = CASES["tp_sim"]
    ml = LinearMixedModel(case["formula"], reml=False).fit(_data(case))
    with pytest.raises(InvalidParameterError, match="reml=True"):
        ml.smooth_linearity_test()
    plain = LinearMixedModel("y ~ time + (1 | id)").fit(_data(case))
    with pytest.raises(InvalidParameterError, match="needs a model with a smooth term"):
        plain.smooth_linearity_test()
