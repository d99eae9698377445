"""Tests of longitudinal/predict/selection.py on a hand-written study (not the simulator).

tests/data/studies/declared/slider7: 18 participants (budget: one person-level predictor), a
TIPI trait, WHO-5 and a custom key file (`closeness`, scale `bond`) as states, session features
`minutes` and `turns`; true effects: TIPI agreeableness and the within-person part of `turns`.
"""

import shutil
from pathlib import Path

import pytest
from conftest import package_warnings

from longitudinal._errors import InvalidParameterError
from longitudinal.predict import empathy_data
from longitudinal.predict.selection import parse_predictor_list, plan_predictors
from longitudinal.study.loaded import load_study

SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"
NO_ROOM = "no person-level predictor left for 18 participants"


def _load(root):
    with package_warnings():  # the TIPI's two-item scales: alpha-if-deleted is undefined
        return load_study(root)


@pytest.fixture(scope="module")
def slider7():
    return _load(SLIDER7)


def _with_predictors(tmp_path, line):
    root = tmp_path / "slider7"
    shutil.copytree(SLIDER7, root)
    toml = root / "study.toml"
    text = toml.read_text(encoding="utf-8").replace("[columns]", f"{line}\n\n[columns]")
    toml.write_text(text, encoding="utf-8")
    return _load(root)


def test_default_rule_spends_the_budget_in_study_order(slider7):
    plan = plan_predictors(slider7)
    assert (plan.n_participants, plan.budget, plan.source) == (18, 1, "default")
    assert plan.traits == ("tipi_extraversion",)  # the first scale of the first trait
    assert plan.states == ()
    # session features: the within-person part enters without using the budget
    assert plan.session_features == ("minutes", "turns")
    assert plan.session_between == ()
    left = dict(plan.left_out)
    # the custom instrument is a candidate like a library one, and is listed as left out
    assert left["closeness_bond"] == NO_ROOM
    assert left["who5_percentage"] == NO_ROOM
    assert left["turns (between-person part)"] == NO_ROOM
    assert "who5_raw" not in left  # a rescaled duplicate is not a candidate
    assert len(plan.left_out) == 4 + 2 + 2  # 4 TIPI scales, 2 states, 2 between parts


def test_chosen_predictors_in_study_toml(tmp_path):
    study = _with_predictors(tmp_path, 'predictors = ["tipi_agreeableness", "turns", "closeness"]')
    plan = plan_predictors(study)
    assert plan.source == "study.toml"
    assert plan.requested == ("tipi_agreeableness", "turns", "closeness")
    assert plan.traits == ("tipi_agreeableness",)
    assert plan.session_features == ("turns",) and plan.session_between == ()
    assert plan.spent == ("tipi_agreeableness",)
    # sub-001..sub-003 have no agreeableness score: the model is fitted on 15 people
    assert (plan.n_participants, plan.n_rated, plan.budget) == (15, 18, 1)
    left = dict(plan.left_out)
    no_room = "no person-level predictor left for 15 participants"
    assert left["turns (between-person part)"] == no_room
    assert left["closeness_bond"] == no_room  # named, but no budget left
    assert left["minutes"] == "not among the chosen predictors"
    assert left["tipi_extraversion"] == "not among the chosen predictors"
    text = plan.sentence()
    assert "(15 with complete data on the chosen predictors of 18 with ratings, so 1)" in text
    assert "priority order of study.toml's [roles] predictors" in text
    assert "Used: tipi_agreeableness." in text
    assert "Within-person part only: turns." in text


def test_the_command_line_order_wins_and_a_larger_budget_takes_between_parts(slider7):
    plan = plan_predictors(slider7, ["turns", "closeness", "tipi"], n_participants=25)
    assert plan.source == "--predictors" and plan.budget == 2
    assert plan.session_between == ("turns",)
    assert plan.states == ("closeness_bond",)
    assert plan.traits == ()  # every TIPI scale came after the budget was spent
    assert {n for n, _ in plan.left_out} >= {"tipi_agreeableness", "tipi_openness"}


def test_an_unknown_predictor_is_refused_with_what_is_available(slider7):
    with pytest.raises(InvalidParameterError, match="'agreeableness'.*available: tipi_extr"):
        plan_predictors(slider7, ["agreeableness"])


def test_the_plan_builds_the_model_frame(slider7):
    plan = plan_predictors(slider7, ["tipi_agreeableness", "turns"])
    data = empathy_data(slider7, **plan.data_kwargs())
    assert data.terms() == ["tipi_agreeableness_z", "turns_within_z", "week"]
    # sub-001..sub-003 skipped an agreeableness item: their ratings have no trait score
    ratings = slider7.story_frame()
    skipped = ratings[ratings["pid"].isin(["sub-001", "sub-002", "sub-003"])]
    assert data.n_dropped == len(skipped) > 0
    assert data.meta["session_within_only"] == ["turns"]


def test_parse_predictor_list():
    assert parse_predictor_list(["a,b", "c"]) == ("a", "b", "c")
    assert parse_predictor_list("a b, a") == ("a", "b")
    assert parse_predictor_list(None) is None
    assert parse_predictor_list([" "]) is None


def test_the_benchmark_takes_every_named_predictor_without_a_budget(slider7):
    from longitudinal.predict.selection import resolve_predictors

    assert resolve_predictors(slider7) is None  # nothing named: the benchmark's default
    chosen = resolve_predictors(slider7, ["tipi_agreeableness", "closeness", "turns", "tipi"])
    assert chosen == {
        "traits": [
            "tipi_agreeableness",
            "tipi_extraversion",
            "tipi_conscientiousness",
            "tipi_emotional_stability",
            "tipi_openness",
        ],
        "states": ["closeness_bond"],
        "session_features": ["turns"],
    }
