"""Sampling-based checks of models/bayes.py against references and known truth (slow tier).

- Eight schools (posteriordb ``eight_schools-eight_schools_noncentered``): posterior means of mu,
  tau and theta within 3 Monte Carlo standard errors of the reference.
- sleepstudy: the gaussian family against lme4::lmer REML (tests/models/reference/
  bayes_sleepstudy.R -> bayes_sleepstudy.json).
- Ordinal parameter recovery on data simulated here with known trait effects and cutpoints.
- nutpie compiles once per structure, level counts of one bucket included, and the padded
  model's posterior is the unpadded one's within Monte Carlo error.
"""

import json
import math
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special

from models._backends.samplers import import_pymc
from models.bayes import BayesianMixedModel, sampling_diagnostics

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[2] / "data"
REFERENCE = Path(__file__).resolve().parents[1] / "reference"


def test_eight_schools_noncentred_matches_posteriordb():
    """The non-centred model sampled with PyMC's NUTS, as the package samples, vs posteriordb."""
    import arviz as az

    pm = import_pymc()
    folder = DATA / "eight_schools"
    with zipfile.ZipFile(folder / "eight_schools.json.zip") as zf:
        data = json.loads(zf.read("eight_schools.json"))
    ref = json.loads((folder / "ref_mean_value.json").read_text())
    y = np.asarray(data["y"], dtype=float)
    sigma = np.asarray(data["sigma"], dtype=float)
    with pm.Model():  # eight_schools_noncentered.stan, line for line
        theta_trans = pm.Normal("theta_trans", 0.0, 1.0, shape=data["J"])
        mu = pm.Normal("mu", 0.0, 5.0)
        tau = pm.HalfCauchy("tau", 5.0)
        theta = pm.Deterministic("theta", theta_trans * tau + mu)
        pm.Normal("y", theta, sigma, observed=y)
        idata = pm.sample(
            draws=4000,
            tune=1000,
            chains=2,
            # even non-centred, eight schools gives an odd divergence at 0.9 (the tau ~ 0
            # neck); 0.95 is the gate's own remedy
            target_accept=0.95,
            random_seed=20190101,
            progressbar=False,
            compute_convergence_checks=False,
        )
    diag = sampling_diagnostics(idata, var_names=["mu", "tau", "theta"])
    assert diag["passed"], diag["messages"]
    names = ref["names"]
    for name, expected, ref_mcse in zip(names, ref["mean_value"], ref["mcse_mean"], strict=True):
        if name.startswith("theta"):
            draws = idata.posterior["theta"].values[:, :, int(name[6:-1]) - 1]
        else:
            draws = idata.posterior[name].values
        mean = draws.mean()
        mcse = float(np.ravel(az.mcse(draws, method="mean"))[0])
        # both estimates carry Monte Carlo error: 3 x the combined standard error
        tolerance = 3.0 * math.hypot(mcse, ref_mcse)
        assert abs(mean - expected) <= tolerance, (name, mean, expected, tolerance)


@pytest.fixture(scope="module")
def sleepstudy_fit():
    data = pd.read_csv(DATA / "lme4_sleepstudy.csv")
    model = BayesianMixedModel(
        "Reaction ~ Days + (Days | Subject)",
        family="gaussian",
        # the correlation of two effects from 18 subjects mixes slowly: 1000 draws per chain
        # leave its bulk ESS near the gate's 400
        draws=2000,
        tune=1000,
        chains=2,
        sampler="nutpie",
        seed=20240611,
    )
    return model.fit(data)


def test_sleepstudy_gaussian_agrees_with_lme4_reml(sleepstudy_fit):
    ref = json.loads((REFERENCE / "bayes_sleepstudy.json").read_text())
    fit = sleepstudy_fit
    assert fit.diagnostics_["passed"], fit.diagnostics_["messages"]
    fixed = fit.fixed_effects().set_index("term")
    for term, estimate in zip(["Intercept", "Days"], ref["fixed"]["estimate"], strict=True):
        # The contract: the posterior mean under weak priors sits within 2 posterior sds of the
        # REML estimate. In fact it is far closer (0.003 and 0.03 sd when this was written:
        # Monte Carlo error of the mean is about 0.02 sd), so a quarter sd is asked for.
        assert abs(fixed.loc[term, "estimate"] - estimate) <= 0.25 * fixed.loc[term, "se"], term
    # The posterior sd of a fixed effect and lme4's standard error agree to within 25%: the
    # fixed-effect se scales with the subject-level sd (/ sqrt(18)), whose posterior mean exceeds
    # its REML estimate by 10-20% with 18 subjects, and the posterior also integrates over it.
    ref_se = dict(zip(["Intercept", "Days"], ref["fixed"]["se"], strict=True))
    for term in ("Intercept", "Days"):
        assert fixed.loc[term, "se"] == pytest.approx(ref_se[term], rel=0.25)
    vc = ref["varcorr"]
    post = fit.idata_.posterior
    expected_sd = {"Intercept": vc["sdcor"][0], "Days": vc["sdcor"][1]}
    random = fit.random_effects().set_index(["group", "term"])
    for k, term in enumerate(["Intercept", "Days"]):
        draws = post["sd_0"].values[:, :, k]
        # Variance components: REML gives a mode-like estimate while the posterior of an sd
        # from 18 subjects is right-skewed, so its median (not its mean) is compared, within
        # 12% (observed: 6.6% and 7.0% above REML); the REML value must also lie inside the
        # 95% interval.
        assert np.median(draws) == pytest.approx(expected_sd[term], rel=0.12), term
        row = random.loc[("Subject", term)]
        assert row["ci_low"] <= expected_sd[term] <= row["ci_high"], term
    cor = random.loc[("Subject", "Intercept,Days")]
    assert cor["ci_low"] <= vc["sdcor"][2] <= cor["ci_high"]
    sigma = np.median(post["sigma"].values)
    # the residual sd is informed by all 180 observations: within 3% (observed 0.8%)
    assert sigma == pytest.approx(vc["sdcor"][3], rel=0.03)


def test_sleepstudy_to_dict_reports_the_fit(sleepstudy_fit):
    out = sleepstudy_fit.to_dict()
    assert out["n_obs"] == 180 and out["groups"] == {"Subject": 18}
    assert out["divergences"] == 0 and out["r_hat_max"] <= 1.01
    assert out["sampler"] == "nutpie" and out["seconds"] > 0
    assert out["bfmi_min"] is not None and out["bfmi_min"] > 0.3
    assert [r["term"] for r in out["random"]] == ["Intercept", "Days", "Residual"]


TRUE_CUT = np.array([-2.0, -0.7, 0.5, 1.8])
TRUE_TRAIT = 0.8
TRUE_WEEK = 0.3


def simulate_study(seed, *, n_person=40, per_person=8, sd_person=0.8):
    """Ordinal ratings with a person-level trait and a within-person week effect."""
    rng = np.random.default_rng(seed)
    trait = rng.normal(size=n_person)
    u = rng.normal(0.0, sd_person, n_person)
    rows = []
    for p in range(n_person):
        for k in range(per_person):
            week = k / 2
            eta = TRUE_TRAIT * trait[p] + TRUE_WEEK * week + u[p]
            pr = np.diff(np.concatenate([[0.0], special.expit(TRUE_CUT - eta), [1.0]]))
            rows.append((f"p{p:02d}", trait[p], week, rng.choice(5, p=pr) + 1))
    return pd.DataFrame(rows, columns=["participant", "trait", "week", "rating"])


def test_ordinal_recovers_trait_effects_and_cutpoints():
    """90% intervals over three simulated studies cover the truth about 90% of the time.

    Three seeds x (2 effects + 4 cutpoints) = 18 intervals. Under nominal coverage the number
    covered is about Binomial(18, 0.9); at least 13 happens with probability 0.994, so the test
    asks for 13 and, for every parameter, a posterior mean within 4 posterior sds of the truth.
    """
    truth = {"trait": TRUE_TRAIT, "week": TRUE_WEEK}
    truth.update({f"{k}|{k + 1}": c for k, c in enumerate(TRUE_CUT, start=1)})
    covered = 0
    total = 0
    for seed in (11, 12, 13):
        data = simulate_study(seed)
        model = BayesianMixedModel(
            "rating ~ trait + week + (1 | participant)",
            # 2 x 1,000 draws: minimum bulk ESS 797, 894, 688 and R-hat <= 1.004 at seeds
            # 11-13 with the locked versions, clear of the gate's 400 and 1.01
            # (2 x 600 gave ESS 392 and R-hat 1.012 at seed 12, ESS 308 at seed 13)
            draws=1000,
            tune=1000,
            chains=2,
            ci_level=0.90,
            seed=seed,
        )
        model.fit(data)
        assert model.diagnostics_["divergences"] == 0
        table = pd.concat([model.fixed_effects(), model.cutpoints()]).set_index("term")
        for term, value in truth.items():
            row = table.loc[term]
            total += 1
            covered += int(row["ci_low"] <= value <= row["ci_high"])
            assert abs(row["estimate"] - value) <= 4 * row["se"], (seed, term)
    assert total == 18
    assert covered >= 13, covered


def test_nutpie_same_seed_same_draws():
    pm = import_pymc()
    from models._backends.samplers import run_nuts

    with pm.Model() as model:
        m = pm.Normal("m", 0.0, 1.0)
        pm.Normal("y", m, 1.0, observed=np.array([0.3, -0.1, 0.8]))
    kw = dict(sampler="nutpie", draws=50, tune=50, chains=2, target_accept=0.9, progressbar=False)
    a = run_nuts(model, seed=5, **kw).idata.posterior["m"].values
    b = run_nuts(model, seed=5, **kw).idata.posterior["m"].values
    np.testing.assert_array_equal(a, b)


def test_nutpie_compiles_once_per_structure_and_reuse_changes_no_draw(monkeypatch):
    """A refit of the same structure on new data reuses the compiled model (no compilation),
    and gives byte-identical draws to a fit with a freshly compiled model. 40 and 44
    participants are both built with 46 levels: the one compilation serves both, no output
    has a padding level, and the padded posterior is the unpadded one (a second compilation,
    of a model of exactly 40 levels) within Monte Carlo error."""
    from models._backends import pymc_model as pmod
    from models._backends.samplers import MODEL_CACHE

    formula = "rating ~ trait + week + (1 | participant)"
    first, second = simulate_study(21), simulate_study(22)
    kw = dict(sampler="nutpie", draws=1000, tune=300, seed=4, progressbar=False)
    MODEL_CACHE.clear()
    cold = BayesianMixedModel(formula, **kw).fit(second)
    assert MODEL_CACHE.info()["compilations"] == 1 and cold.diagnostics_["compile_seconds"] > 0
    MODEL_CACHE.clear()
    BayesianMixedModel(formula, **kw).fit(first)
    warm = BayesianMixedModel(formula, **kw).fit(second)
    assert MODEL_CACHE.info()["compilations"] == 1
    assert warm.diagnostics_["compile_seconds"] == 0.0
    pd.testing.assert_frame_equal(cold.summary_, warm.summary_, check_exact=True)
    # draws="auto" stops at the first 1,000 that pass, and those are the fixed run's draws
    auto = BayesianMixedModel(formula, **{**kw, "draws": "auto"}).fit(second)
    assert auto.diagnostics_["draws"] == 1000 and auto.diagnostics_["passed"]
    pd.testing.assert_frame_equal(auto.summary_, warm.summary_, check_exact=True)
    for name in ("b_z", "z_0", "cutpoints_z", "sd_z_0"):
        np.testing.assert_array_equal(
            cold.idata_.posterior[name].values, warm.idata_.posterior[name].values
        )
    more = simulate_study(23, n_person=44)
    assert pmod.padded_levels(40) == pmod.padded_levels(44) == 46
    refit = BayesianMixedModel(formula, **kw).fit(more)
    assert MODEL_CACHE.info()["compilations"] == 1 and refit.diagnostics_["compile_seconds"] == 0
    for fit, n in ((warm, 40), (refit, 44)):
        assert fit.posterior_.sizes["level_0"] == n and fit.idata_.posterior["z_0"].shape[2] == n
        assert len(fit.group_effects()) == n and fit.groups_ == {"participant": n}
    monkeypatch.setattr(pmod, "padded_levels", lambda n: n)
    plain = BayesianMixedModel(formula, **kw).fit(second)
    assert MODEL_CACHE.info()["compilations"] == 2
    a = warm.summary_.set_index(["component", "term"])
    b = plain.summary_.set_index(["component", "term"])
    assert list(a.index) == list(b.index)
    # fixed effects, cutpoints and the participant sd: with a bulk ESS of 400 or more each
    # (750 to 3,200 when written) the two means differ by about 0.07 posterior sd or less from
    # Monte Carlo error alone (observed at most 0.09), and the posterior sds by about 4 %
    assert (a["ess_bulk"] > 400).all() and (b["ess_bulk"] > 400).all()
    assert ((a["estimate"] - b["estimate"]).abs() <= 0.2 * b["se"]).all()
    assert ((a["se"] / b["se"] - 1.0).abs() <= 0.15).all()
