"""Attrition in the report's sample section (longitudinal/report/sections/sample.py).

The hand-made study ``six_people`` (tests/data/studies/handmade/) with the exit (post)
survey of two people removed: four completers, two dropouts.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import build_sections

from longitudinal import DataQualityWarning, attrition, load_study

SIX = Path(__file__).resolve().parents[2] / "data" / "studies" / "handmade" / "six_people"
GONE = {"H012", "H015"}

pytestmark = pytest.mark.usefixtures("figures_as_drafts")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("attrition")
    study = root / "study"
    shutil.copytree(SIX, study)
    surveys = pd.read_csv(study / "surveys" / "all.csv", dtype=str)
    drop = (surveys["wave"] == "post") & surveys["participant_id"].isin(GONE)
    assert drop.sum() == 2
    surveys[~drop].to_csv(study / "surveys" / "all.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # reliability notes of six people
        return study, build_sections(study, root / "out", ["sample"])


def test_the_attrition_table_counts_the_two_without_an_exit_survey(report):
    _, out = report
    waves = pd.read_csv(out / "tables" / "attrition.csv")
    assert waves.to_dict(orient="list") == {
        "wave": ["pre", "mid", "post"],
        "n_participants": [6, 6, 4],
        "n_missing": [0, 0, 2],
        "n_last_seen": [0, 2, 4],
    }
    baseline = pd.read_csv(out / "tables" / "attrition_baseline.csv")
    assert set(baseline["measure"]) >= {"tas4_absorption"}
    assert (baseline["n_dropouts"] == 2).all() and (baseline["n_completers"] == 4).all()


def test_the_report_shows_the_numbers_of_the_study_as_loaded(report):
    study, out = report
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        direct = attrition(load_study(study)).baseline
    shown = pd.read_csv(out / "tables" / "attrition_baseline.csv")
    pd.testing.assert_series_equal(shown["estimate"], direct["estimate"], rtol=1e-12)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Of 6 participants listed, 4 completed the post survey and 2 dropouts did not" in page
    assert "Hedges&#39; g = " in page and "tables/attrition.csv" in page


def test_no_raw_id_in_any_table(report):
    _, out = report
    for path in (out / "tables").glob("*.csv"):
        text = path.read_text(encoding="utf-8")
        assert not any(pid in text for pid in ["H010", "H011", "H012", "H013", "H014", "H015"]), (
            path.name
        )
