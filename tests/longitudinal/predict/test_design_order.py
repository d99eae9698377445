"""The study's design governs the empathy models: time order and the people actually fitted.

Two hand-written studies (``tests/data/studies/newcomer.py``, written with pandas, not the
simulator): a two-wave 0-100 study whose exit survey follows the last session, and a three-wave
1-7 study whose post survey follows the last session. Every expected value is computed here
from the raw files with pandas.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import load_newcomer
from numpy.testing import assert_allclose

from longitudinal.predict import empathy_data
from longitudinal.predict.predictors import _raw_predictors, _standardize
from longitudinal.predict.selection import _benchmark_data, plan_predictors
from longitudinal.study.loaded import load_study
from surveys import UndefinedStatisticWarning

newcomer = load_newcomer()


@pytest.fixture(scope="module")
def two_wave(tmp_path_factory):
    return load_study(newcomer.two_wave_slider(tmp_path_factory.mktemp("nc") / "two_wave"))


@pytest.fixture(scope="module")
def three_wave(tmp_path_factory):
    with warnings.catch_warnings():  # the TIPI's two-item scales have no omega: expected
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        return load_study(newcomer.three_wave_likert(tmp_path_factory.mktemp("nc") / "3w"))


def _ubc(frame: pd.DataFrame) -> pd.Series:
    """UBC-SSCS mean score, items 1, 2, 3, 5 reverse keyed (8 - x), by hand."""
    items = frame[[f"ubc_sscs10_{k}" for k in range(1, 11)]].astype(float).copy()
    for k in (1, 2, 3, 5):
        items[f"ubc_sscs10_{k}"] = 8 - items[f"ubc_sscs10_{k}"]
    return pd.Series(items.mean(axis=1).to_numpy(), index=frame["pid"])


def _state_terms(terms):
    return [t for t in terms if t.startswith(("ubc_sscs10", "rapport", "who5"))]


def test_a_two_wave_study_has_no_state_within_term_anywhere(two_wave):
    data = empathy_data(two_wave)
    states = _state_terms(data.terms())
    assert states == ["ubc_sscs10_social_connection_between_z", "rapport_between_z"]
    assert [c for c, _ in data.meta["states_without_within"]] == [
        "ubc_sscs10_social_connection",
        "rapport",
    ]
    # the benchmark's (evaluate, splits) frame and a training-set standardization
    _, bench = _benchmark_data(two_wave, session_features=None, func="test")
    assert not any(t.endswith("_within_z") for t in _state_terms(bench.terms()))
    raw = _raw_predictors(two_wave, traits=None, states=None, session_features=None, func="t")
    train = sorted(raw.persons.index)[:30]
    assert not any("within" in t for t in _state_terms(_standardize(raw, train, func="t").terms()))


def test_the_exit_survey_never_enters_the_person_mean(two_wave):
    root = Path(two_wave.root)
    intake = _ubc(pd.read_csv(root / "surveys" / "intake.csv"))
    data = empathy_data(two_wave, traits=[], states=["ubc_sscs10_social_connection"])
    sd_intake = intake.std(ddof=1)
    # every rated participant's person mean is their intake score: the exit came after
    rated = data.data["pid"].unique()
    expected = (intake[rated] - intake[rated].mean()) / sd_intake
    got = data.data.groupby("pid")["ubc_sscs10_social_connection_between_z"].first()[rated]
    assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=0, atol=1e-12)


def test_the_pilot_model_of_power_has_no_look_ahead(two_wave):
    from longitudinal.power import pilot_empathy_model

    pilot = pilot_empathy_model(two_wave, predictors=["ubc_sscs10", "mini_ipip_agreeableness"])
    assert "ubc_sscs10_social_connection_between_z" in pilot.terms
    assert not any("within" in t for t in _state_terms(pilot.terms))


def test_three_waves_keep_the_within_part_from_the_waves_before_the_ratings(three_wave):
    root = Path(three_wave.root)
    waves = {w: pd.read_csv(root / "surveys" / f"{w}.csv") for w in ("pre", "mid", "post")}
    score = {
        w: pd.Series(
            f[[f"who5_{k}" for k in range(1, 6)]].sum(axis=1).to_numpy() * 4.0,
            index=f["participant_id"],
        )
        for w, f in waves.items()
    }
    sessions = pd.read_csv(root / "sessions.csv", parse_dates=["started_at"])
    mid_date = pd.to_datetime(waves["mid"].set_index("participant_id")["completed_at"])
    after_mid = sessions["started_at"] >= sessions["participant_id"].map(mid_date)
    used_mid = after_mid.groupby(sessions["participant_id"]).any()
    person_mean = ((score["pre"] + score["mid"]) / 2).where(used_mid, score["pre"])
    sd_pre = score["pre"].std(ddof=1)
    data = empathy_data(three_wave, traits=[], states=["who5_percentage"])
    assert data.terms() == ["who5_percentage_between_z", "who5_percentage_within_z", "week"]
    assert data.meta["states_without_within"] == []
    frame = data.data.merge(sessions[["session_id", "started_at"]], on="session_id")
    pid = frame["participant_id"]
    current = np.where(
        frame["started_at"] >= pid.map(mid_date), pid.map(score["mid"]), pid.map(score["pre"])
    )
    within = (current - pid.map(person_mean)) / sd_pre
    between = (pid.map(person_mean) - person_mean.mean()) / sd_pre
    assert_allclose(frame["who5_percentage_within_z"], within, rtol=0, atol=1e-12)
    assert_allclose(frame["who5_percentage_between_z"], between, rtol=0, atol=1e-12)


def test_a_changed_post_survey_changes_no_predictor(three_wave, tmp_path):
    import shutil

    root = tmp_path / "changed"
    shutil.copytree(three_wave.root, root)
    post = pd.read_csv(root / "surveys" / "post.csv")
    post[[f"who5_{k}" for k in range(1, 6)]] = 5 - post[[f"who5_{k}" for k in range(1, 6)]]
    post.to_csv(root / "surveys" / "post.csv", index=False)
    before = empathy_data(three_wave).data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedStatisticWarning)
        after = empathy_data(load_study(root)).data
    pd.testing.assert_frame_equal(before, after)


def test_the_budget_counts_the_participants_fitted(two_wave):
    root = Path(two_wave.root)
    intake = pd.read_csv(root / "surveys" / "intake.csv")
    scored = intake.loc[intake["mini_ipip_7"].notna(), "pid"]
    ratings = pd.read_csv(root / "ratings.csv")
    n_rated = ratings["pid"].nunique()
    n_scored = ratings.loc[ratings["pid"].isin(scored), "pid"].nunique()
    assert (n_rated, n_scored) == (60, 40)
    plan = plan_predictors(two_wave)
    # extraversion (60 people, budget 6), then agreeableness: 40 people, budget 4, so four
    # traits enter and the rest find no room among the 40
    assert (plan.n_rated, plan.n_participants, plan.budget) == (n_rated, n_scored, n_scored // 10)
    assert plan.traits == (
        "mini_ipip_extraversion",
        "mini_ipip_agreeableness",
        "mini_ipip_conscientiousness",
        "mini_ipip_neuroticism",
    )
    left = dict(plan.left_out)
    assert left["mini_ipip_intellect"] == "no person-level predictor left for 40 participants"
    data = empathy_data(two_wave, **plan.data_kwargs())
    assert data.data["pid"].nunique() == plan.n_participants
    assert "40 with complete data on the chosen predictors of 60 with ratings" in plan.sentence()


def test_a_predictor_that_would_shrink_the_sample_below_the_budget_is_left_out(two_wave):
    # 3 states/traits first on all 60 people, then agreeableness would leave 40 people
    # (budget 4) for 4 predictors: it fits; a fifth would not
    plan = plan_predictors(
        two_wave,
        [
            "mini_ipip_extraversion",
            "mini_ipip_neuroticism",
            "ubc_sscs10",
            "rapport",
            "mini_ipip_intellect",
            "mini_ipip_agreeableness",
        ],  # fmt: skip
    )
    assert plan.spent == (
        "mini_ipip_extraversion",
        "mini_ipip_neuroticism",
        "ubc_sscs10_social_connection",
        "rapport",
        "mini_ipip_intellect",
    )
    assert plan.n_participants == 60
    why = dict(plan.left_out)["mini_ipip_agreeableness"]
    assert why == (
        "with it 40 participants have complete data, which allow 4 person-level predictor(s), "
        "fewer than the 6 it would make"
    )
