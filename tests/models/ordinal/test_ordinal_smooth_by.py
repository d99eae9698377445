"""Several smooths and smooths by a factor in OrdinalMixedModel: against mgcv's ocat.

Reference: tests/models/reference/ocat_smooth.R (mgcv 1.8-41, gam(..., family = ocat(R = 5),
method = "REML") with the participant as s(id, bs = "re")): two cubic regression splines on
airquality (``two_smooths``) and a spline of Time per Diet on ChickWeight (``by_diet``). mgcv
chooses the smoothing parameters by its Laplace approximate REML, the model here by the Laplace
marginal likelihood, and mgcv's ``Vp`` holds the cut points fixed where the intervals here carry
their uncertainty too; the tolerances below state how far the two approximations agree.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import InvalidParameterError, SingularFitWarning
from models.ordinal import OrdinalMixedModel
from models.ordinal._smooth import joint_information

REF = Path(__file__).resolve().parents[1] / "reference"
DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def ref() -> dict:
    return json.loads((REF / "ocat_smooth.json").read_text())


@pytest.fixture(scope="module")
def airquality() -> pd.DataFrame:
    aq = pd.read_csv(DATA / "datasets_airquality.csv")
    aq = aq[aq["Ozone"].notna()].copy()
    # the categories the R script makes: (-inf, 20], (20, 40], (40, 60], (60, 90], (90, inf)
    aq["y"] = np.digitize(aq["Ozone"], [20, 40, 60, 90], right=True) + 1
    aq["id"] = aq["Month"]
    return aq


@pytest.fixture(scope="module")
def chicks() -> pd.DataFrame:
    cw = pd.read_csv(DATA / "datasets_ChickWeight.csv")
    cw["Diet"] = cw["Diet"].astype(str)
    # the categories the R script makes: cut at 60, 100, 150 and 200 g
    cw["y"] = np.digitize(cw["weight"], [60, 100, 150, 200], right=True) + 1
    return cw


@pytest.fixture(scope="module")
def two_fit(airquality) -> OrdinalMixedModel:
    formula = "y ~ s(Temp, bs='cr', k=6) + s(Wind, bs='cr', k=6) + (1 | id)"
    return OrdinalMixedModel(formula).fit(airquality)


@pytest.fixture(scope="module")
def by_fit(chicks) -> OrdinalMixedModel:
    formula = "y ~ Diet + s(Time, by=Diet, bs='cr', k=5) + (1 | Chick)"
    return OrdinalMixedModel(formula).fit(chicks)


def _se_given_cuts(m: OrdinalMixedModel, label: str, x: np.ndarray) -> np.ndarray:
    """The curve's SE with the thresholds held at their estimates, as mgcv's ``Vp`` has it."""
    pr, st = m._problem, m._problem.st
    info, pos = joint_information(pr, m._md)
    na, p = pr.n_alpha, pr.p
    V = np.zeros_like(info)
    V[na:, na:] = np.linalg.inv(info[na:, na:])
    j = m.smooth_.labels.index(label)
    part = m.smooth_.smooths[j]
    sm, s0 = part.smooth, st.slot_start[len(m.design_.random) + j]
    idx = np.r_[na + p + pos[0, s0 : s0 + sm.rank], na + p - len(m.smooth_.smooths) + j]
    scale = np.r_[np.full(sm.rank, part.sd), 1.0]
    cov = sm.UD @ (V[np.ix_(idx, idx)] * np.outer(scale, scale)) @ sm.UD.T
    B = sm.basis(x)
    return np.sqrt(np.einsum("ij,jk,ik->i", B, cov, B))


def test_two_smooths_agree_with_mgcv_ocat(two_fit, airquality, ref):
    r, m = ref["two_smooths"], two_fit
    assert m.converged_ and not m.singular_ and m.n_obs_ == r["n"]
    assert m.smooth_.labels == ["s(Temp)", "s(Wind)"]
    assert list(m.random_["term"]) == ["Intercept", "s(Temp)", "s(Wind)"]
    np.testing.assert_allclose(m.thresholds_["estimate"], r["thresholds"], atol=0.1)  # range 6.4
    for s in r["smooths"]:
        part = m.smooth_.component(s["label"])
        x = np.array(s["grid"])
        curve = m.smooth_.curve(x, term=s["label"])
        # curves (ranges 8.0 and 4.4) within 0.2; each its own variance, SDs within 15 %
        np.testing.assert_allclose(curve["fit"], s["curve"], atol=0.2)
        assert part.sd == pytest.approx(s["sd"], rel=0.15)
        assert part.edf == pytest.approx(s["edf"], rel=0.1)
        # SEs within 45 %, within 25 % with the cut points held fixed as in mgcv's Vp
        np.testing.assert_allclose(curve["se"], s["curve_se"], rtol=0.45)
        np.testing.assert_allclose(_se_given_cuts(m, s["label"], x), s["curve_se"], rtol=0.25)
        assert np.all(curve["se"] >= _se_given_cuts(m, s["label"], x) - 1e-12)
    # the month's SD: ML (here) below REML (mgcv) at a variance near 0
    assert m.random_["sd"].iloc[0] < r["id_sd"]
    # population-level category probabilities (the month effect at 0): within 0.015
    probs = m.predict(airquality.iloc[r["rows"]], re_form="~0")
    np.testing.assert_allclose(probs.to_numpy(), r["probabilities"], atol=0.015)


def test_by_smooth_agrees_with_mgcv_ocat(by_fit, chicks, ref):
    r, m = ref["by_diet"], by_fit
    assert m.converged_ and not m.singular_ and m.n_obs_ == r["n"]
    labels = [f"s(Time):Diet{d}" for d in "1234"]
    assert m.smooth_.labels == labels == [s["label"] for s in r["smooths"]]
    assert [s.level for s in m.smooth_.smooths] == list("1234")
    assert list(m.fixed_["term"][3:]) == [f"X{label}Fx1" for label in labels]
    # thresholds (range 32) within 2, the diets' main effects (3.8 to 8.9) within 0.7
    np.testing.assert_allclose(m.thresholds_["estimate"], r["thresholds"], atol=2.0)
    np.testing.assert_allclose(m.fixed_["estimate"][:3], r["fixed"], atol=0.7)
    assert m.random_["sd"].iloc[0] == pytest.approx(r["id_sd"], rel=0.15)
    for s in r["smooths"]:
        part = m.smooth_.component(s["label"])
        x = np.array(s["grid"])
        curve = m.smooth_.curve(x, term=s["label"])
        # each diet's curve within 10 % of its range (52 to 63), SDs 15 to 25 % below REML's
        assert np.max(np.abs(curve["fit"] - s["curve"])) < 0.1 * np.ptp(s["curve"])
        assert 0.7 * s["sd"] < part.sd < s["sd"]
        assert part.edf == pytest.approx(s["edf"], abs=0.15)
        # with the cut points held fixed as mgcv's Vp holds them, SEs within 20 %
        np.testing.assert_allclose(_se_given_cuts(m, s["label"], x), s["curve_se"], rtol=0.2)
    probs = m.predict(chicks.iloc[r["rows"]], re_form="~0")
    np.testing.assert_allclose(probs.to_numpy(), r["probabilities"], atol=0.03)


def test_predict_with_smooths(by_fit, chicks):
    m = by_fit
    # the fit's rows, given or not, give the same linear predictor and probabilities
    np.testing.assert_allclose(m.linear_predictor(chicks), m.linear_predictor(), rtol=1e-12)
    np.testing.assert_allclose(m.predict(chicks), m.predict(), rtol=1e-12)
    # population level: the diet's main effect plus its curve (the null space included)
    new = pd.DataFrame({"Time": [0.0, 10.5, 21.0], "Diet": ["3", "3", "1"]})
    eta = m.linear_predictor(new, re_form="~0").to_numpy()
    c3 = m.smooth_.curve(np.array([0.0, 10.5]), term="s(Time):Diet3")["fit"].to_numpy()
    c1 = m.smooth_.curve(np.array([21.0]), term="s(Time):Diet1")["fit"].to_numpy()
    expected = np.r_[c3 + m.beta_["Diet[T.3]"], c1]
    np.testing.assert_allclose(eta, expected, rtol=1e-12)
    probs = m.predict(new.assign(Chick=1), re_form="marginal")
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    gap = pd.DataFrame({"Time": [np.nan, 4.0], "Diet": ["1", "2"]})
    assert m.predict(gap, re_form="~0").iloc[0].isna().all()
    with pytest.raises(InvalidParameterError, match="lack the smooths' column"):
        m.predict(new.drop(columns="Time"))


def test_by_curve_intervals_cover_the_truth():
    """8 data sets from two known curves, one per arm: pointwise 95 % intervals cover them.

    400 ratings (40 participants, 10 each, 4 categories) per data set; with half of that an
    arm's curvature is often not identified and its variance is estimated at 0 by ML.
    """
    rng = np.random.default_rng(11)
    grid = np.linspace(0.05, 0.95, 8)
    truths = {"a": lambda t: 2.0 * np.sin(2 * np.pi * t), "b": lambda t: 2.0 * np.sin(np.pi * t)}
    hits = []
    for _ in range(8):
        g = np.repeat(np.arange(40), 10)
        arm = np.where(g % 2 == 0, "a", "b")
        x = rng.uniform(0, 1, g.size)
        f = np.where(arm == "a", truths["a"](x), truths["b"](x) + 0.5)
        lat = f + rng.normal(0, 0.7, 40)[g] + rng.logistic(size=g.size)
        y = np.digitize(lat, [-1.5, 0.0, 1.5]) + 1
        d = pd.DataFrame({"y": y, "x": x, "g": g, "arm": arm})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SingularFitWarning)
            m = OrdinalMixedModel("y ~ arm + s(x, by=arm, k=6) + (1 | g)").fit(d)
        for level, fun in truths.items():
            c = m.smooth_.curve(grid, term=f"s(x):arm{level}")
            # each level's curve sums to zero over all rows of the fit (mgcv's constraint)
            truth = fun(grid) - fun(x).mean()
            hits.append((c["lower"] <= truth) & (truth <= c["upper"]))
    coverage = float(np.mean(hits))
    assert 0.85 <= coverage <= 0.99
