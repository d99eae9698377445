"""Reports on study directories the simulator did not write (tests/data/studies/handmade/).

Two waves, four waves with other names, 6 and 12 people, no traits, no session features, the
study's own column names, one person, identical ratings: every one gets a report through the
command line (exit 0), a section that cannot be computed says why in its place, and every row
of ratings.csv is either used or listed in exclusions.csv. The same holds for study
directories of random shape (3-60 people, 2-4 waves, 0-5 behaviour features, people who
missed a wave, sessions without ratings), drawn by hypothesis with a fixed derandomized seed.
"""

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import draft_figures, run_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from longitudinal.cli import main

HANDMADE = Path(__file__).parents[2] / "data" / "studies" / "handmade"
STUDIES = sorted(p.name for p in HANDMADE.iterdir() if (p / "study.toml").is_file())
NOT_COMPUTED = {  # study -> sections that must say why they are missing
    "one_person": {"Change in the states", "What predicts empathy"},
    "same_rating": {"What predicts empathy"},
}


def test_every_handmade_study_is_here():
    assert len(STUDIES) == 9


@pytest.fixture(scope="module")
def handmade_report(tmp_path_factory):
    """``longitudinal report NAME --no-bayes`` of a handmade study, run once per study and
    read by every test of it: the report folder and what the command printed. The tests read
    text and tables, so the figures are written as drafts (:func:`conftest.draft_figures`)."""
    built = {}

    def report(name):
        if name not in built:
            out = tmp_path_factory.mktemp(name) / "report"
            with draft_figures():
                run = run_command(["report", str(HANDMADE / name), "--out", str(out), "--no-bayes"])
            built[name] = (out, run)
        return built[name]

    return report


@pytest.mark.parametrize("name", STUDIES)
def test_report_on_a_handmade_study(name, handmade_report):
    out, run = handmade_report(name)
    assert run.code == 0, run.err
    assert "Traceback" not in run.out + run.err
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert set(provenance["sections_not_computed"]) == NOT_COMPUTED.get(name, set())
    page = (out / "report.html").read_text(encoding="utf-8")
    for heading in NOT_COMPUTED.get(name, set()):
        assert re.search(rf"<h2>{heading}</h2>\s*<p class=\"note\">Not computed: ", page)
    # every rating read is used or listed with its reason
    toml = (HANDMADE / name / "study.toml").read_text(encoding="utf-8")
    ratings = pd.read_csv(HANDMADE / name / "ratings.csv", dtype=str)
    sample = pd.read_csv(out / "tables" / "sample.csv").set_index("quantity")["n"]
    excluded = pd.read_csv(out / "exclusions.csv", dtype=str)
    assert sample["rating rows read"] == len(ratings)
    assert sample["ratings kept"] + (excluded["file"] == "ratings.csv").sum() == len(ratings)
    if "[columns]" in toml:
        assert "score" in page  # the study's own rating column name is used


# -- study directories of random shape ---------------------------------------------------------


def _writer():
    import importlib.util

    spec = importlib.util.spec_from_file_location("handmade_write", HANDMADE / "_write.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@st.composite
def study_shapes(draw):
    people = draw(st.integers(3, 60))
    return {
        "people": people,
        "waves": [f"w{k}" for k in range(draw(st.integers(2, 4)))],
        "features": tuple(f"feature_{k}" for k in range(draw(st.integers(0, 5)))),
        "traits": draw(st.booleans()),
        "missed": draw(st.integers(0, people // 3)),
        "unrated": draw(st.integers(0, 3)),
        "seed": draw(st.integers(0, 10_000)),
    }


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(shape=study_shapes())
def test_every_valid_study_of_random_shape_gets_a_report(shape, tmp_path_factory):
    root = tmp_path_factory.mktemp("random") / "study"
    _writer().study("random", root=root, **shape)
    out = root.parent / "report"
    with draft_figures():  # every figure is drawn; its files are not read here
        code = main(["report", str(root), "--out", str(out), "--no-bayes"])
    assert code == 0, shape
    ratings = pd.read_csv(root / "ratings.csv", dtype=str)
    sample = pd.read_csv(out / "tables" / "sample.csv").set_index("quantity")["n"]
    excluded = pd.read_csv(out / "exclusions.csv", dtype=str)
    assert sample["ratings kept"] + (excluded["file"] == "ratings.csv").sum() == len(ratings)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Traceback" not in page and "<h2>Sample</h2>" in page


def test_six_people_test_session_features_within_persons_only(handmade_report):
    """Six people allow no person-level predictor; within-person session effects need none."""
    out, run = handmade_report("six_people")
    assert run.code == 0, run.err
    effects = pd.read_csv(out / "tables" / "empathy_effects.csv")
    terms = set(effects.loc[effects["engine"] == "lmm", "term"])
    assert terms == {"duration_min_within_z", "gaze_on_robot_within_z", "week"}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "6 with complete data on the chosen predictors here, so 0" in page
    assert "Within-person part only: duration_min, gaze_on_robot." in page


def test_six_people_report_r2_within_and_between_persons(handmade_report):
    """The R-squared of a hand-written study: Nakagawa's pair and the story intercept's share
    from the reported model, the split within and between persons from the two-level model
    of the same predictors with week person-mean centred, each stated as the table has it."""
    out, run = handmade_report("six_people")
    assert run.code == 0, run.err
    table = pd.read_csv(out / "tables" / "empathy_r2.csv", keep_default_na=False)
    assert (table["status"] == "ok").all()
    value = table.set_index(["model", "decomposition", "measure"])["value"]
    two = table[table["model"] == "two-level"]
    assert two["split"].iloc[0] == "weeks since the first session"
    assert {"within", "between"} <= set(two["decomposition"])
    assert (table["n_participants"] == 6).all()
    page = (out / "report.html").read_text(encoding="utf-8")
    within, between = value["two-level", "within", "f1"], value["two-level", "between", "f2"]
    assert (
        "with weeks since the first session split into the deviation from the person&#39;s "
        "mean (within) and the person&#39;s mean (between): the within-person predictors "
        f"account for {100 * within:.1f}% of the variance within persons"
    ) in page
    assert f"between-person predictors for {100 * between:.1f}% of the variance between" in page


# -- names are data: column names that look like formula syntax ----------------------------------

PERSON = "story_id) + I(10**10**10) + (1 | story_id"
FEATURE = "gaze `on` robot) + (1 | x ~ y**2"


def test_report_on_a_study_whose_column_names_look_like_formula_syntax(tmp_path, capsys):
    """A person column and a session feature named like formula code are only names: the
    report is whole (no section left out), the feature is a predictor under its own name, and
    the model formula holds the names in backticks (before, the person column put
    I(10**10**10) into the formula and the report hung)."""
    root = tmp_path / "study"
    _writer().study(
        "hostile",
        root=root,
        people=20,
        waves=["pre", "post"],
        traits=False,
        features=(FEATURE,),
        columns={"person": PERSON},
        seed=2,
    )
    out = tmp_path / "report"
    code = main(["report", str(root), "--out", str(out), "--no-bayes"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.out + captured.err
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["sections_not_computed"] == []
    effects = pd.read_csv(out / "tables" / "empathy_effects.csv")
    lmm = effects[effects["engine"] == "lmm"].set_index("term")
    assert {f"{FEATURE}_between_z", f"{FEATURE}_within_z", "week"} <= set(lmm.index)
    assert lmm.loc[f"{FEATURE}_within_z", "label"] == FEATURE
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "(1 + week | `story_id) + I(10**10**10) + (1 | story_id`)" in page
    ratings = pd.read_csv(root / "ratings.csv", dtype=str)
    sample = pd.read_csv(out / "tables" / "sample.csv").set_index("quantity")["n"]
    excluded = pd.read_csv(out / "exclusions.csv", dtype=str)
    assert sample["ratings kept"] + (excluded["file"] == "ratings.csv").sum() == len(ratings)
    assert sample["ratings kept"] > 0.9 * len(ratings)
