"""What predicts empathy on the complete cases beside the multiply imputed predictors.

The simulated study of 16 people (seed 7) with every Big Five item of three people blanked at
pre, and every behaviour of four sessions of four others blanked in sessions.csv: the three are
left out of the empathy models only for the missing trait score, the four sessions' ratings
only for the missing features. The report's pooled numbers must be those of the public
functions (impute_scores with the ratings, impute_sessions, empathy_data with the completed
tables, LinearMixedModel, pool_imputations), and its complete-case numbers those of its own
effects table; the unchanged study gets nothing new.
"""

from __future__ import annotations

import csv
import re
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import build_sections

from longitudinal import InvalidParameterError, load_study
from longitudinal.predict.imputed_effects import imputed_frames
from longitudinal.report.sections.effects_imputed import MAX_M
from longitudinal.study.score_imputation import (
    impute_scores,
    rating_auxiliaries,
    score_table,
)
from longitudinal.study.session_imputation import impute_sessions
from models import pool_imputations
from models.lmm import LinearMixedModel

SEED = 11
BLANK = ("P01", "P02", "P03")
NO_BEHAVIOUR = ("P04-S02", "P05-S03", "P06-S02", "P07-S04")
SECTIONS = ["sample", "methods", "predictors"]

pytestmark = pytest.mark.usefixtures("figures_as_drafts")


@pytest.fixture(scope="module")
def report(small_study_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("effmi")
    study = root / "study"
    shutil.copytree(small_study_dir, study)
    path = study / "surveys" / "pre.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    items = [i for i, h in enumerate(rows[0]) if h.startswith("bfi44_")]
    for row in rows[1:]:
        if row[0] in BLANK:
            for i in items:
                row[i] = ""
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    path = study / "sessions.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    behaviour = [i for i, h in enumerate(rows[0]) if h not in ("participant_id", "session_id")]
    behaviour = [i for i in behaviour if rows[0][i] != "started_at"]
    for row in rows[1:]:
        if row[1] in NO_BEHAVIOUR:
            for i in behaviour:
                row[i] = ""
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = build_sections(study, root / "out", SECTIONS, seed=SEED)
    return study, out


def test_one_row_per_term_with_both_analyses(report):
    study, out = report
    table = pd.read_csv(out / "tables" / "empathy_effects_imputed.csv")
    effects = pd.read_csv(out / "tables" / "empathy_effects.csv")
    lmm = effects[effects["engine"] == "lmm"].set_index("term")
    assert table["term"].tolist() == lmm.index.tolist()
    for column in ("estimate", "se", "df", "p_value", "ci_low", "ci_high"):
        np.testing.assert_allclose(
            table[f"{column}_cc"], lmm.loc[table["term"], column], rtol=1e-12
        )
    assert (table["n_participants_cc"] == 13).all() and (table["n_participants_mi"] == 16).all()
    # every rating of the three and the 12 ratings of the four sessions come back
    ratings = pd.read_csv(study / "ratings.csv")
    back = ratings["participant_id"].isin(BLANK) | ratings["session_id"].isin(NO_BEHAVIOUR)
    assert ratings["session_id"].isin(NO_BEHAVIOUR).sum() == 12
    assert (table["n_obs_mi"] - table["n_obs_cc"] == back.sum()).all()
    assert table["fmi"].between(0, 1).all() and (table["failed_fits"] == 0).all()


def test_the_pooled_numbers_are_those_of_the_public_functions(report):
    study, out = report
    loaded = load_study(study)
    table = pd.read_csv(out / "tables" / "empathy_effects_imputed.csv")
    predictors = pd.read_csv(out / "tables" / "empathy_predictors.csv")
    traits = predictors.loc[predictors["kind"] == "trait", "source"].tolist()
    features = predictors.loc[predictors["kind"] == "session", "source"].unique().tolist()
    between = predictors.loc[
        (predictors["kind"] == "session") & (predictors["part"] == "between"), "source"
    ].tolist()
    _, columns = score_table(loaded)
    scales = list(dict.fromkeys([*traits, *columns.loc[columns["role"] == "trait", "scale"]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the ratings are in the imputation model: per person, the model having no state
        ratings = rating_auxiliaries(loaded, by_wave=False)
        try:
            imputed = impute_scores(loaded, seed=SEED, auxiliary=ratings)
        except (
            InvalidParameterError
        ):  # too few people to impute every scale: the model's and the traits
            imputed = impute_scores(loaded, seed=SEED, scales=scales, auxiliary=ratings)
        assert imputed.auxiliary == ("mean rating", "ratings")
        sessions = impute_sessions(loaded, features=features, seed=SEED)
        assert sessions.auxiliary == ("mean rating",)  # every session rates 3 stories
        frames = imputed_frames(
            loaded,
            imputed,
            sessions=sessions,
            m=MAX_M,
            traits=traits,
            states=[],
            session_features=features,
            session_between=between,
        )
        formula = re.search(r"Model: (.+?) on \d+ ratings", (out / "report.html").read_text())
        fits = [LinearMixedModel(formula.group(1), reml=True).fit(f.data) for f in frames]
        # each term pooled with its own complete-data df: its mean Satterthwaite df
        rows = []
        for term in table["term"]:
            dfcom = np.mean([f.fixed_.set_index("term").loc[term, "df"] for f in fits])
            rows.append(pool_imputations(fits, dfcom=dfcom).table.set_index("term").loc[term])
            # a person-level trait has about as many df as people, not as ratings
            if term.startswith("bfi44"):
                assert rows[-1]["df"] < 3 * table["n_participants_mi"].iloc[0]
        pooled = pd.DataFrame(rows)
    assert table["term"].str.startswith("bfi44").any()
    assert table["m"].iloc[0] == len(fits)
    assert len(fits) == min(MAX_M, imputed.imputations.m, sessions.imputations.m)
    for column in ("estimate", "se", "df", "p_value", "ci_low", "ci_high"):
        np.testing.assert_allclose(table[f"{column}_mi"], pooled[column], rtol=1e-10)
    np.testing.assert_allclose(table["fmi"], pooled["fmi"], rtol=1e-10)


def test_the_sentence_and_the_methods(report):
    _, out = report
    page = (out / "report.html").read_text()
    assert (
        "With the missing survey scores and session features multiply imputed" in page
        and "the linear mixed model adds back 3 participants" in page
    )
    assert "missing survey score or session feature" in page
    assert "by a two-level normal model, sessions within participants" in page
    assert "empathy_effects_imputed.csv" in page
    assert "standardized within each imputation" in page
    assert "besides the survey scores, each participant&#39;s mean rating and number" in page
    assert "not the ratings" not in page


def test_nobody_left_out_nothing_new(small_study_dir, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = build_sections(small_study_dir, tmp_path / "out", SECTIONS, seed=SEED)
    assert not (out / "tables" / "empathy_effects_imputed.csv").exists()
    assert "adds back" not in (out / "report.html").read_text()
