"""Complete cases beside multiple imputation in the change section, and the tipping point.

The hand-made study ``twelve_people`` (tests/data/studies/handmade/) with the exit (post)
survey of two people removed: ten complete cases of WHO-5 from pre to post, two dropouts.
(``six_people`` with two dropouts keeps four post scores: too few to impute from.)
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import build_sections

from longitudinal import DataQualityWarning, impute_scores, load_study
from longitudinal.change import imputed_change, tipping_point

TWELVE = Path(__file__).resolve().parents[2] / "data" / "studies" / "handmade" / "twelve_people"
GONE = {"H012", "H015"}
SEED = 7
SCALE = "who5_percentage"

pytestmark = pytest.mark.usefixtures("figures_as_drafts")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("imputed")
    study = root / "study"
    shutil.copytree(TWELVE, study)
    surveys = pd.read_csv(study / "surveys" / "all.csv", dtype=str)
    drop = (surveys["wave"] == "post") & surveys["participant_id"].isin(GONE)
    assert drop.sum() == 2
    surveys[~drop].to_csv(study / "surveys" / "all.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # reliability notes of 12 people
        out = build_sections(study, root / "out", ["sample", "methods", "change"], seed=SEED)
    return study, out


def test_the_attrition_table_and_both_rows_of_the_imputed_change(report):
    _, out = report
    waves = pd.read_csv(out / "tables" / "attrition.csv")
    assert waves["n_participants"].tolist() == [12, 12, 10]
    table = pd.read_csv(out / "tables" / "change_imputed.csv")
    assert table["scale"].tolist() == [SCALE, SCALE]
    assert table["analysis"].tolist() == ["complete cases", "multiple imputation"]
    assert table["n"].tolist() == [10, 12]
    assert (table["wave_from"] == "pre").all() and (table["wave_to"] == "post").all()
    # the complete cases are the pre-post paired t test of the pairwise table
    pairs = pd.read_csv(out / "tables" / "pairwise.csv")
    pre_post = pairs[(pairs["wave_from"] == "pre") & (pairs["wave_to"] == "post")].iloc[0]
    for column in ("estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high"):
        np.testing.assert_allclose(table.loc[0, column], pre_post[column], rtol=1e-10)
    assert np.isnan(table.loc[0, "fmi"]) and 0 < table.loc[1, "fmi"] < 1


def test_the_report_shows_the_numbers_of_the_public_functions(report):
    study, out = report
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        imputed = impute_scores(load_study(study), seed=SEED)
    args = {"observed": imputed.wide, "first": f"{SCALE}@pre", "last": f"{SCALE}@post"}
    direct = imputed_change(imputed.datasets, **args).to_frame()
    shown = pd.read_csv(out / "tables" / "change_imputed.csv")
    np.testing.assert_allclose(shown.loc[1, "estimate"], direct.loc[1, "estimate"], rtol=1e-12)
    np.testing.assert_allclose(shown.loc[1, "se"], direct.loc[1, "se"], rtol=1e-12)
    assert shown.loc[1, "m"] == imputed.imputations.m
    tipping = tipping_point(imputed.datasets, **args)
    steps = pd.read_csv(out / "tables" / "tipping_point.csv")
    np.testing.assert_allclose(steps["ci_low"], tipping.to_frame()["ci_low"], rtol=1e-12)
    assert steps["delta"].iloc[-1] == 2.0 and len(steps) == 21


def test_the_sentences_say_the_change_and_its_tipping_point(report):
    _, out = report
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Complete cases beside multiple imputation" in page
    assert "in the 10 complete cases" in page and "multiply imputed (n = 12, m = " in page
    assert "Tipping point: with the imputed post scores of the 2 participants without one" in page
    assert "With 12 participants these estimates are imprecise" in page
    assert "von Hippel" in page and "Barnard and Rubin" in page and f"seed {SEED}" in page
    record = json.loads((out / "provenance.json").read_text(encoding="utf-8"))["imputation"]
    assert record["seed"] == SEED and record["m"] >= 20 and record["traits"] is True


def test_nothing_is_imputed_when_no_first_or_last_score_is_missing(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        out = build_sections(TWELVE, tmp_path / "out", ["change"], seed=SEED)
    assert not (out / "tables" / "change_imputed.csv").exists()
    assert not (out / "tables" / "tipping_point.csv").exists()
    assert "multiple imputation" not in (out / "report.html").read_text(encoding="utf-8")


def _hand_made(posts):
    """Six people pre and post, rows 5 and 6 without post; their imputed posts as given."""
    observed = pd.DataFrame(
        {"x@pre": [1.0, 2, 3, 4, 5, 6], "x@post": [2.0, 3.5, 4, 5.5, np.nan, np.nan]}
    )
    datasets = []
    for a, b in posts:
        table = observed.copy()
        table.loc[4:5, "x@post"] = [a, b]
        datasets.append(table)
    return {"observed": observed, "first": "x@pre", "last": "x@post"}, datasets


def test_the_sentences_read_a_direction_only_from_a_clear_interval():
    from longitudinal.report.sections.change_imputed import change_sentence, tipping_sentence

    args, datasets = _hand_made([(7.0, 7.0), (7.0, 7.0)])
    change = imputed_change(datasets, **args)
    text = change_sentence(change, label="the scale")
    assert text.startswith("From pre to post, the scale changed by 1.25 points in the 4 complete")
    assert "multiply imputed (n = 6, m = 2;" in text
    assert "Both intervals exclude zero: the scale rose either way." in text
    assert text.endswith("With 6 participants these estimates are imprecise and may not replicate.")
    # the tipping point of tests/longitudinal/change/test_imputed_change.py: delta 0.8, a shift
    # of 0.8 x sqrt(3.5) = 1.50 points down
    tipping = tipping_point(datasets, **args)
    said = tipping_sentence(tipping, change=change)
    assert "the 2 participants without one shifted down by δ SD of the pre scores" in said
    assert "which excludes zero at δ = 0, first includes it at δ = 0.8 (a shift of 1.50" in said
    # missing first scores only: no dropout to shift
    early = args["observed"].assign(**{"x@pre": [np.nan, 2, 3, 4, 5, 6], "x@post": 7.0})
    filled = [early.fillna({"x@pre": v}) for v in (1.0, 1.5)]
    first_only = imputed_change(filled, observed=early, first="x@pre", last="x@post")
    assert first_only.n_dropouts == 0
    assert "no tipping point" in tipping_sentence(None, change=first_only)
