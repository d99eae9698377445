"""The hand-written 1-7 study (tests/data/studies/declared/slider7) through the command line.

The study departs from the template everywhere it may (see its _write.py): a 1-7 slider, its own
column names, a custom instrument as a state, 18 participants, three of whom skipped one item of
a two-item TIPI scale. These tests assert what the report and power say about it, not only that
they run.
"""

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from longitudinal.cli import main

# the tests read the reports' text, tables and figure labels, not figure pixels
pytestmark = pytest.mark.usefixtures("figures_as_drafts")

SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"


def _text(page: str) -> str:
    """The visible text of a report page."""
    body = re.sub(r"<(style|script)[^>]*>.*?</\1>", " ", page, flags=re.S)
    body = re.sub(r"<[^>]+>", " ", body)
    return re.sub(r"\s+", " ", body).replace("&#39;", "'").replace("&amp;", "&")


def _copy(tmp_path, edit=None) -> Path:
    root = tmp_path / "slider7"
    shutil.copytree(SLIDER7, root)
    if edit is not None:
        toml = root / "study.toml"
        toml.write_text(edit(toml.read_text(encoding="utf-8")), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def default_report(slider7_report):
    out, run = slider7_report  # tests/conftest.py: shared with test_cli_report.py
    assert run.code == 0, run.err
    return out


def test_default_rule_lists_the_custom_instrument_and_states_the_budget(default_report):
    text = _text((default_report / "report.html").read_text(encoding="utf-8"))
    assert "18 with complete data on the chosen predictors here, so 1" in text
    assert "Used: tipi_extraversion." in text
    # the custom instrument is a candidate, listed as left out with the reason
    assert re.search(r"Left out: [^.]*closeness_bond[^.]*\(no person-level predictor left", text)
    effects = pd.read_csv(default_report / "tables" / "empathy_effects.csv")
    lmm = set(effects.loc[effects["engine"] == "lmm", "term"])
    # session features enter within-person without using the budget
    assert lmm == {"tipi_extraversion_z", "minutes_within_z", "turns_within_z", "week"}


def test_chosen_predictors_are_tested(tmp_path, capsys):
    study = _copy(tmp_path, lambda t: t.replace(
        "[columns]", 'predictors = ["tipi_agreeableness", "turns", "closeness"]\n\n[columns]'
    ))  # fmt: skip
    out = tmp_path / "report"
    assert main(["report", str(study), "--out", str(out), "--no-bayes"]) == 0
    printed = capsys.readouterr().out
    assert "What predicts empathy: Left out: 78 of 456 ratings; 3 participants entirely" in printed
    effects = pd.read_csv(out / "tables" / "empathy_effects.csv")
    lmm = effects[effects["engine"] == "lmm"].set_index("term")
    assert set(lmm.index) == {"tipi_agreeableness_z", "turns_within_z", "week"}
    # the built-in effects (+0.6 per SD of agreeableness, +0.5 per SD of turns within a person)
    # are found: both intervals lie above zero
    assert lmm.loc["turns_within_z", "ci_low"] > 0
    assert lmm.loc["tipi_agreeableness_z", "ci_low"] > 0
    text = _text((out / "report.html").read_text(encoding="utf-8"))
    assert "in the priority order of study.toml's [roles] predictors" in text
    assert "Within-person part only: turns." in text
    assert "minutes (not among the chosen predictors" in text or re.search(
        r"minutes[^;]*\(not among the chosen predictors\)", text
    )
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["sections_not_computed"] == []
    # the three people without an agreeableness score are named (by pseudonym), with the count
    ratings = pd.read_csv(SLIDER7 / "ratings.csv")
    per_person = ratings.groupby("pid").size()
    skipped = per_person[["sub-001", "sub-002", "sub-003"]]
    assert f"Left out: {skipped.sum()} of {len(ratings)} ratings; 3 participants entirely" in text
    for n in skipped:
        assert (
            f"tipi_agreeableness not scored (1 of 2 items answered); {n} ratings left out" in text
        )
    assert "sub-00" not in (out / "report.html").read_text(encoding="utf-8")


def test_report_predictors_option_wins_over_study_toml(tmp_path, sections_only):
    sections_only("predictors")  # the section that reads --predictors, built alone
    out = tmp_path / "report"
    args = ["report", str(SLIDER7), "--out", str(out), "--no-bayes", "--predictors", "turns"]
    assert main(args) == 0
    effects = pd.read_csv(out / "tables" / "empathy_effects.csv")
    lmm = set(effects.loc[effects["engine"] == "lmm", "term"])
    assert lmm == {"turns_between_z", "turns_within_z", "week"}
    text = _text((out / "report.html").read_text(encoding="utf-8"))
    assert "in the priority order given by --predictors" in text


def test_report_refuses_an_unknown_predictor_before_the_analysis(tmp_path, capsys):
    out = tmp_path / "report"
    args = ["report", str(SLIDER7), "--out", str(out), "--no-bayes", "--predictors", "kindness"]
    assert main(args) == 2  # as splits and power refuse it: never a silently dropped section
    err = capsys.readouterr().err
    assert "--predictors" in err and "'kindness'" in err and "tipi_agreeableness" in err
    assert not out.exists()


def test_power_pilot_tests_a_chosen_trait(tmp_path, capsys):
    out = tmp_path / "power"
    args = ["power", "--pilot", str(SLIDER7), "--effect", "tipi_agreeableness_z=0.5"]
    args += ["--participants", "20", "--sims", "10", "--seed", "1", "--out", str(out)]
    # without --predictors the default rule keeps tipi_extraversion only: refused, with advice
    # in this study's own names: what the pilot left out and why
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--predictors" in err
    assert "left out tipi_agreeableness, " in err and "closeness_bond" in err
    assert "no person-level predictor left for 18 participants" in err
    assert main([*args, "--predictors", "tipi_agreeableness", "turns"]) == 0
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["power"]["term"] == "tipi_agreeableness_z"
    assert any("closeness_bond" in n for n in provenance["notes"])


def test_evaluate_uses_the_chosen_predictors_and_the_declared_scale(tmp_path, capsys):
    out = tmp_path / "evaluate"
    args = ["evaluate", str(SLIDER7), "--seeds", "2", "--kfold", "0", "--out", str(out)]
    assert main([*args, "--predictors", "closeness", "turns"]) == 0
    printed = capsys.readouterr().out
    params = json.loads((out / "evaluation.json").read_text(encoding="utf-8"))
    assert (params["traits"], params["states"]) == ([], ["closeness_bond"])
    assert params["session_features"] == ["turns"]
    assert params["predictors_source"] == "--predictors"
    assert params["threshold"] == 4.0  # the midpoint of 1-7
    # without the TIPI nobody is left out for an unscored agreeableness item
    assert params["n_dropped"] == 0 and "sub-001" not in printed
    assert "> 4 (the scale's midpoint, 1–7 scale" in printed


def test_splits_leave_out_and_name_people_by_the_chosen_predictors(tmp_path, capsys):
    out = tmp_path / "splits.csv"
    args = ["splits", str(SLIDER7), "--seeds", "1", "--kfold", "0", "--out", str(out)]
    assert main(args) == 0  # every trait: sub-001..003 have no agreeableness score
    printed = capsys.readouterr().out
    assert "sub-001: tipi_agreeableness not scored (1 of 2 items answered)" in printed
    assert pd.read_csv(out)["pid"].nunique() == 15
    assert main([*args, "--predictors", "turns"]) == 0
    assert pd.read_csv(out)["pid"].nunique() == 18
