"""A smooth term s(x) in OrdinalMixedModel: against mgcv's ocat and by simulation.

Reference: tests/models/reference/ocat_smooth.R (mgcv 1.8-41, gam(..., family = ocat(R = 5),
method = "REML") with the participant as s(id, bs = "re")). mgcv chooses the smoothing
parameters by its Laplace approximate REML, the model here by the Laplace marginal likelihood,
so the two agree to the tolerances below, not to optimiser precision.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from models._errors import FormulaError, InvalidParameterError, SingularFitWarning
from models.lmm._smooth import construct_smooth
from models.ordinal import OrdinalMixedModel

REF = Path(__file__).resolve().parents[1] / "reference"
DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def ref() -> dict:
    return json.loads((REF / "ocat_smooth.json").read_text())


@pytest.fixture(scope="module")
def sim_fit() -> OrdinalMixedModel:
    sim = pd.read_csv(REF / "ocat_smooth_sim.csv")
    return OrdinalMixedModel("y ~ s(week) + trait + (1 | id)").fit(sim)


@pytest.fixture(scope="module")
def air_fit() -> OrdinalMixedModel:
    aq = pd.read_csv(DATA / "datasets_airquality.csv")
    aq = aq[aq["Ozone"].notna()].copy()
    # the categories the R script makes: (-inf, 20], (20, 40], (40, 60], (60, 90], (90, inf)
    aq["y"] = np.digitize(aq["Ozone"], [20, 40, 60, 90], right=True) + 1
    aq["id"] = aq["Month"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        return OrdinalMixedModel("y ~ s(Temp) + Wind + (1 | id)").fit(aq)


def test_simulated_agrees_with_mgcv_ocat(sim_fit, ref):
    r = ref["simulated"]
    m = sim_fit
    assert m.converged_ and m.n_obs_ == r["n"]
    curve = m.smooth_.curve(np.array(r["grid"]))
    # the centred curve: within 0.06 on the latent scale (its range is 2.1), SEs within 10 %
    np.testing.assert_allclose(curve["fit"], r["curve"], atol=0.06)
    np.testing.assert_allclose(curve["se"], r["curve_se"], rtol=0.1)
    np.testing.assert_allclose(m.thresholds_["estimate"], r["thresholds"], atol=0.03)
    assert m.fixed_["estimate"].iloc[0] == pytest.approx(r["fixed"], abs=0.01)
    assert m.fixed_["se"].iloc[0] == pytest.approx(r["fixed_se"], rel=0.05)
    # variance parameters: ML (here) below REML (mgcv), as expected
    assert m.random_["sd"].iloc[0] == pytest.approx(r["id_sd"], rel=0.1)
    assert m.smooth_.component().sd == pytest.approx(r["smooth_sd"], rel=0.2)
    assert m.smooth_.component().edf == pytest.approx(r["edf"], rel=0.1)


def test_airquality_ml_boundary_where_mgcv_reml_is_not(air_fit, ref):
    r = ref["airquality"]
    m = air_fit
    assert m.n_obs_ == r["n"]
    # ML puts both variances at 0 (a straight line, edf 1); mgcv's REML keeps edf 2.1
    assert m.singular_ and m.smooth_.component().edf == pytest.approx(1.0, abs=1e-6)
    assert m.fixed_["estimate"].iloc[0] == pytest.approx(r["fixed"], rel=0.05)
    assert m.fixed_["se"].iloc[0] == pytest.approx(r["fixed_se"], rel=0.05)
    np.testing.assert_allclose(m.thresholds_["estimate"], r["thresholds"], atol=0.3)
    curve = m.smooth_.curve(np.array(r["grid"]))
    np.testing.assert_allclose(curve["fit"], r["curve"], atol=0.6)  # range of the curve: 8
    # the Laplace likelihood profiled at mgcv's SDs is below the maximum found
    pr, psi = m._problem, m._psi
    sds = np.array([r["id_sd"], r["smooth_sd"]])

    def f(ab):
        ll, g, _ = pr.laplace(np.r_[ab, sds])
        return -ll, -g[: ab.size]

    res = optimize.minimize(f, psi[:-2], jac=True, method="L-BFGS-B")
    assert -res.fun < m.loglik_ - 0.5


def test_loglik_is_a_direct_laplace_evaluation(sim_fit):
    """Mode and log-determinant found again with dense matrices and numerical derivatives."""
    m = sim_fit
    psi = m._psi
    sim = pd.read_csv(REF / "ocat_smooth_sim.csv")
    smooth, Xs = construct_smooth(sim["week"].to_numpy(float), m.smooth_.component().smooth.term)
    Zs = (Xs @ smooth.UD)[:, : smooth.rank]
    Zg = (sim["id"].to_numpy()[:, None] == np.unique(sim["id"])[None, :]).astype(float)
    cut = np.r_[-np.inf, psi[:4], np.inf]
    y = sim["y"].to_numpy() - 1
    eta0 = sim["trait"].to_numpy() * psi[4] + Xs @ smooth.UD[:, smooth.rank] * psi[5]
    A = np.hstack([Zg * psi[6], Zs * psi[7]])

    def ll(eta):
        def F(t):
            return 1.0 / (1.0 + np.exp(-(t - eta)))

        return np.log(F(cut[y + 1]) - F(cut[y]))

    def negh(u):
        return -(ll(eta0 + A @ u).sum() - 0.5 * u @ u)

    u = optimize.minimize(negh, np.zeros(A.shape[1]), method="BFGS", options={"gtol": 1e-9}).x
    eta = eta0 + A @ u
    h = 1e-4
    w = -(ll(eta + h) - 2 * ll(eta) + ll(eta - h)) / h**2
    H = A.T @ (w[:, None] * A) + np.eye(A.shape[1])
    direct = -negh(u) - 0.5 * np.linalg.slogdet(H)[1]
    assert m.loglik_ == pytest.approx(direct, abs=1e-5)


def test_scaled_block_gradient_matches_finite_differences(sim_fit):
    pr = sim_fit._problem
    psi = sim_fit._psi + np.r_[0, 0, 0, 0, 0.1, -0.2, 0.3, 0.5]
    _, grad, _ = pr.laplace(psi)
    num = np.empty_like(psi)
    for k in range(psi.size):
        e = np.zeros_like(psi)
        e[k] = 1e-5
        num[k] = pr.laplace(psi + e, gradient=False)[0] - pr.laplace(psi - e, gradient=False)[0]
        num[k] /= 2e-5
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-5)


def test_curve_intervals_cover_the_truth():
    """12 data sets from a known curve: pointwise 95 % intervals over a grid cover it."""
    rng = np.random.default_rng(11)
    grid = np.linspace(0.05, 0.95, 10)
    hits = []
    for _ in range(12):
        g = np.repeat(np.arange(30), 10)
        x = rng.uniform(0, 1, g.size)

        def f(t):
            return 1.5 * np.sin(2 * np.pi * t)

        lat = f(x) + rng.normal(0, 0.7, 30)[g] + rng.logistic(size=g.size)
        y = np.digitize(lat, [-1.5, 0.0, 1.5]) + 1
        d = pd.DataFrame({"y": y, "x": x, "g": g})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SingularFitWarning)
            m = OrdinalMixedModel("y ~ s(x, k=6) + (1 | g)").fit(d)
        c = m.smooth_.curve(grid)
        truth = f(grid) - f(x).mean()  # the curve sums to zero over the rows of the fit
        hits.append((c["lower"] <= truth) & (truth <= c["upper"]))
    coverage = float(np.mean(hits))
    assert 0.85 <= coverage <= 0.99


def test_smooth_tables_and_refusals(sim_fit):
    m = sim_fit
    assert list(m.fixed_["term"]) == ["trait", "Xs(week)Fx1"]
    row = m.random_.iloc[-1]
    assert (row["group"], row["term"]) == ("smooth", "s(week)")
    assert row["variance"] == pytest.approx(m.smooth_.component().variance)
    assert set(m.ranef_["group"]) == {"id"}
    for refused in (lambda: m.emmeans("trait"), m.r2, lambda: m.refit(m.design_.y)):
        with pytest.raises(InvalidParameterError, match="smooth terms \\(s\\(week\\)\\)"):
            refused()
    with pytest.raises(InvalidParameterError, match="level"):
        m.smooth_.curve(np.array([1.0]), level=1.5)


def test_smooth_formula_errors():
    d = pd.read_csv(REF / "ocat_smooth_sim.csv")
    d["arm"] = np.where(d["id"] % 2 == 0, "a", "b")
    with pytest.raises(FormulaError, match="factor smooth; .* smooths s\\(x\\)"):
        OrdinalMixedModel("y ~ s(week, id, bs='fs', xt='cr') + (1 | id)").fit(d)
    with pytest.raises(FormulaError, match="quadrature"):
        OrdinalMixedModel("y ~ s(week) + (1 | id)", n_agq=5).fit(d)
    with pytest.raises(FormulaError, match="main effect .* add \\+ arm"):
        OrdinalMixedModel("y ~ s(week, by=arm) + (1 | id)").fit(d)
    with pytest.raises(InvalidParameterError, match="by= must name a factor"):
        OrdinalMixedModel("y ~ trait + s(week, by=trait) + (1 | id)").fit(d)
