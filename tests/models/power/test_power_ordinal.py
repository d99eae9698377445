"""Tests of models/power.py for ordinal outcomes (cumulative link mixed models)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from models import FormulaError, InvalidParameterError
from models.ordinal import OrdinalMixedModel
from models.power import read_design, simulate_power

REFERENCE = Path(__file__).resolve().parents[1] / "reference"


def ordinal_dict(n_sessions: int = 3) -> dict:
    """Ratings 1..5 of a trait measured once per participant, random intercept per person."""
    return {
        "design": {
            "formula": "rating ~ trait + (1 | participant_id)",
            "engine": "clmm",
            "sessions": n_sessions,
            "stories_per_session": 3,
            "stories": 30,
        },
        "predictors": {"trait": {"level": "participant"}},
        "fixed": {"trait": 0.0},
        "random": {"participant_id": {"sd": {"Intercept": 1.0}}},
        "thresholds": {"values": [-2.2, -0.9, 0.4, 1.9]},
    }


@pytest.fixture(scope="module")
def ordinal_pilot() -> tuple[OrdinalMixedModel, pd.DataFrame]:
    rng = np.random.default_rng(12)
    n, k = 16, 4
    pid = np.repeat([f"p{i:02d}" for i in range(n)], k * 3)
    session = np.repeat([f"s{i:03d}" for i in range(n * k)], 3)
    trait = np.repeat(rng.normal(size=n), k * 3)
    latent = 0.5 * trait + np.repeat(rng.normal(0, 1, n), k * 3) + rng.logistic(size=n * k * 3)
    rating = np.digitize(latent, [-1.5, -0.3, 0.8, 2.0]) + 1
    data = pd.DataFrame({"pid": pid, "session": session, "trait": trait, "rating": rating})
    return OrdinalMixedModel("rating ~ trait + (1 | pid)").fit(data), data


def test_draws_follow_the_cumulative_link_model():
    """Category frequencies of the truth's draws match P(Y = j) = F(c_j - eta) - F(c_j-1 - eta)."""
    from models.power._ordinal import OrdinalTruth

    cut = np.array([-1.0, 0.0, 1.5])
    eta = np.repeat([-0.5, 0.7], 50_000)
    for link, cdf in (("logit", stats.logistic.cdf), ("probit", stats.norm.cdf)):
        truth = OrdinalTruth(mean=eta, blocks=(), cutpoints=cut, link=link)
        y = truth.draw(np.random.default_rng(1))
        for value in (-0.5, 0.7):
            got = np.bincount(y[eta == value].astype(int), minlength=5)[1:] / 50_000
            cum = np.concatenate([[0.0], cdf(cut - value), [1.0]])
            np.testing.assert_allclose(got, np.diff(cum), atol=0.01)


def test_design_result_and_bookkeeping():
    result = simulate_power(
        read_design(ordinal_dict()), effect={"trait": 0.8}, n_participants=[10, 20], n_sims=12,
        seed=4, progress=False,
    )  # fmt: skip
    meta = result.meta
    assert meta["engine"] == "clmm" and meta["test"] == "wald"
    assert meta["truth"]["fixed"] == {"trait": 0.8}
    assert meta["truth"]["thresholds"] == [-2.2, -0.9, 0.4, 1.9]
    table = result.table
    assert table["n_obs"].tolist() == [90, 180]
    for row in table.itertuples():
        sims = result.simulations[result.simulations["n_participants"] == row.n_participants]
        used = sims[sims["p_value"].notna()]
        assert len(sims) == row.n_sims and len(used) == row.n_sims - row.n_failed
        assert row.n_rejected == int((used["p_value"] < 0.05).sum())
    # the estimates scatter around the true log odds ratio
    assert abs(result.simulations["estimate"].median() - 0.8) < 0.4


def test_pilot_effect_override_keeps_thresholds_and_variance(ordinal_pilot):
    model, data = ordinal_pilot
    result = simulate_power(
        model, data=data, effect={"trait": 0.0}, n_participants=[24], n_sessions="2-3",
        session_col="session", n_sims=8, seed=1, progress=False, test="lrt",
    )  # fmt: skip
    row = result.table.iloc[0]
    assert row["n_sessions"] == "2-3" and 24 * 2 * 3 <= row["n_obs"] <= 24 * 3 * 3
    truth = result.meta["truth"]
    assert truth["fixed"] == {"trait": 0.0}
    np.testing.assert_allclose(truth["thresholds"], model.cutpoints_, rtol=0)
    assert result.meta["test"] == "lrt" and result.meta["engine"] == "clmm"


def test_same_seed_same_table_whatever_runs_it():
    pytest.importorskip("distributed")
    design = read_design(ordinal_dict(n_sessions=2))
    kw = {
        "effect": {"trait": 0.6},
        "n_participants": [10, 14],
        "n_sims": 10,
        "seed": 21,
        "progress": False,
        "batch_size": 3,
    }
    serial = simulate_power(design, **kw)
    for scheduler in ("processes:2", "local:2"):
        other = simulate_power(design, scheduler=scheduler, **kw)
        pd.testing.assert_frame_equal(serial.table, other.table, check_exact=True)
        pd.testing.assert_frame_equal(serial.simulations, other.simulations, check_exact=True)


def test_agrees_with_an_ordinal_clmm_loop():
    """Power of the Wald test of a trait against a seeded ordinal::clmm simulate/refit loop."""
    ref = json.loads((REFERENCE / "power_clmm.json").read_text(encoding="utf-8"))
    d = ref["design"]
    design = read_design(
        {
            "design": {
                "formula": d["formula"],
                "engine": "clmm",
                "participants": d["participants"],
                "sessions": d["sessions"],
                "stories_per_session": d["stories_per_session"],
                "stories": d["stories_per_session"],
            },
            "predictors": {
                "condition": {"level": "session", "distribution": "cycle", "values": [0, 1]},
                "trait": {
                    "level": "participant",
                    "distribution": "cycle",
                    "values": d["trait_values"],
                },
            },
            "fixed": {"condition": d["beta"]["condition"], "trait": 0.0},
            "random": {"participant_id": {"sd": {"Intercept": d["sd_person"]}}},
            "thresholds": {"values": d["thresholds"], "link": d["link"]},
        }
    )
    result = simulate_power(
        design, effect={"trait": d["beta"]["trait"]}, n_sims=1000, seed=77, progress=False,
        test=d["test"], scheduler="processes:2",
    )  # fmt: skip
    row = result.table.iloc[0]
    ours, theirs = row["power"], float(ref["power"])
    n_ours = row["n_sims"] - row["n_failed"]
    n_theirs = ref["n_sims"] - ref["n_failed"]
    assert row["n_failed"] <= 0.01 * row["n_sims"]
    se = math.sqrt(theirs * (1 - theirs) * (1 / n_ours + 1 / n_theirs))
    # two independent Monte Carlo estimates: within 3.5 standard errors of their difference
    assert abs(ours - theirs) < 3.5 * se, (ours, theirs)


@pytest.mark.slow
def test_type_one_error_of_the_wald_test_at_forty_participants():
    """With the trait effect at 0 the rejection rate is within the 99% interval of alpha."""
    n_sims, alpha = 2000, 0.05
    result = simulate_power(
        read_design(ordinal_dict()), effect={"trait": 0.0}, n_participants=[40], n_sims=n_sims,
        alpha=alpha, seed=20261124, progress=False, scheduler="processes:2", test="wald",
    )  # fmt: skip
    row = result.table.iloc[0]
    used = row["n_sims"] - row["n_failed"]
    assert row["n_failed"] <= 0.01 * n_sims
    low, high = stats.binom.interval(0.99, used, alpha)
    assert low <= row["n_rejected"] <= high, row.to_dict()


# ---------------------------------------------------------------------------------------------
# bad input


def test_linear_tests_are_refused_for_an_ordinal_model():
    with pytest.raises(InvalidParameterError, match=r"\['wald', 'lrt'\] for an ordinal model"):
        simulate_power(
            read_design(ordinal_dict()), effect={"trait": 0.5}, test="satterthwaite",
            n_sims=2, progress=False,
        )  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d.pop("thresholds"), r"\[thresholds\] is missing"),
        (lambda d: d.update(residual={"sd": 1.0}), r"\[residual\] belongs to a linear design"),
        (lambda d: d["fixed"].update(Intercept=1.0), "no intercept"),
        (lambda d: d["thresholds"].update(values=[0.0, -1.0]), "increase strictly"),
        (lambda d: d["thresholds"].update(values=[]), "list of increasing numbers"),
        (lambda d: d["thresholds"].update(link="cloglog"), "link must be one of"),
        (lambda d: d["thresholds"].update(spacing=1), r"unknown key\(s\) \['spacing'\]"),
        (lambda d: d["design"].update(engine="glmm"), "engine must be one of"),
    ],
)
def test_bad_ordinal_designs_name_the_key(edit, match):
    raw = ordinal_dict()
    edit(raw)
    with pytest.raises((InvalidParameterError, FormulaError), match=match):
        read_design(raw)


def test_ordinal_design_fixed_effects_exclude_the_intercept():
    raw = ordinal_dict()
    raw["fixed"] = {}
    with pytest.raises(InvalidParameterError, match=r"missing \['trait'\]|term of"):
        simulate_power(read_design(raw), effect={"age": 0.5}, n_sims=2, progress=False)
    result = simulate_power(read_design(raw), effect={"trait": 0.5}, n_sims=2, progress=False)
    assert result.meta["truth"]["fixed"] == {"trait": 0.5}
