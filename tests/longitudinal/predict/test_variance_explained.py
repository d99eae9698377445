"""The empathy LMM's R-squared as a table and a sentence (predict/variance_explained.py).

The numbers are checked against two R references:

* tests/longitudinal/reference/empathy_r2.R on the demo study's model frame
  (empathy_r2_demo.csv): the report's crossed model (participant and story), Nakagawa's pair
  and the story intercept's share (performance 0.10.2, insight 0.19.0), and Rights & Sterba's
  split (r2mlm 0.3.8) of the two-level model with the predictors that vary within and between
  persons person-mean centred. Both fits agree with lme4's to about 1e-7, so 1e-5 absolute.
* tests/models/reference/lmm_r2_emmeans.R on nlme::Orthodont, a two-level model with the age
  split into its within-person and between-person parts and without.
"""

import json
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from longitudinal import InvalidParameterError
from longitudinal.predict import EmpathyData
from longitudinal.predict.variance_explained import (
    R2_TABLE_COLUMNS,
    describe_r2,
    empathy_r2,
)
from models import CentringWarning
from models.lmm import LinearMixedModel

TESTS = Path(__file__).resolve().parents[2]
REF = json.loads((TESTS / "models" / "reference" / "lmm_r2_emmeans.json").read_text())["r2"]
DEMO = TESTS / "longitudinal" / "reference"
DEMO_REF = json.loads((DEMO / "empathy_r2.json").read_text())
TOL = 1e-5


def _pct(value):
    pct = 100 * value
    return f"{pct:.1f}%" if abs(pct) < 9.95 else f"{pct:.0f}%"


def _data(frame, *, id_col, response_col, predictors):
    table = pd.DataFrame(
        {"predictor": predictors, "label": predictors, "part": ["time"] * len(predictors)}
    )
    return EmpathyData(frame, table, id_col, response_col, 1.0, 7.0, 0)


@pytest.fixture(scope="module")
def demo():
    """The demo's crossed empathy model on its exported frame, and its R-squared table."""
    frame = pd.read_csv(DEMO / "empathy_r2_demo.csv")
    predictors = [c for c in frame.columns if c not in ("participant_id", "story_id", "empathy")]
    data = _data(frame, id_col="participant_id", response_col="empathy", predictors=predictors)
    lmm = LinearMixedModel(DEMO_REF["crossed"]["formula"], reml=True).fit(frame)
    return lmm, empathy_r2(data, lmm=lmm)


def _value(table, model, part, measure):
    rows = table.set_index(["model", "decomposition", "measure"])
    return float(rows.loc[(model, part, measure), "value"])


def test_crossed_model_gives_nakagawa_and_the_story_share_as_r(demo):
    lmm, table = demo
    ref = DEMO_REF["crossed"]
    assert not ref["singular"] and lmm.converged_ and not lmm.singular_
    assert list(table.columns) == R2_TABLE_COLUMNS
    for name in ("marginal", "conditional"):
        assert _value(table, "reported", "nakagawa", name) == pytest.approx(
            ref["nakagawa"][name], abs=TOL
        )
    assert _value(table, "reported", "share", "story_id") == pytest.approx(
        ref["story_share"], abs=TOL
    )
    parts = lmm.r2().variances  # insight::get_variance's parts
    assert parts["fixed"] == pytest.approx(ref["variances"]["fixed"], rel=TOL)
    assert parts["residual"] == pytest.approx(ref["variances"]["residual"], rel=TOL)
    assert parts["random"]["story_id"] == pytest.approx(ref["variances"]["story_id"], rel=TOL)
    assert sum(parts["random"].values()) == pytest.approx(ref["variances"]["random"], rel=TOL)


def test_two_level_split_matches_r2mlm(demo):
    _, table = demo
    ref = DEMO_REF["two_level"]
    two = table[table["model"] == "two-level"]
    assert (two["status"] == "ok").all() and (two["note"] == "").all()
    assert set(two["decomposition"]) == {"total", "within", "between"}
    for part in ("total", "within", "between"):
        for name, value in ref["rights_sterba"][part].items():
            assert _value(table, "two-level", part, name) == pytest.approx(value, abs=TOL), (
                part,
                name,
            )
    # the same predictors person-mean centred as the R script found them
    assert two["split"].iloc[0].split("; ") == DEMO_REF["split"]
    assert "(1 + week_within_person | participant_id)" in two["formula"].iloc[0]
    assert "story_id" not in two["formula"].iloc[0]
    assert (table["n_ratings"] == DEMO_REF["n_ratings"]).all()
    assert (table["n_participants"] == DEMO_REF["n_participants"]).all()


def test_the_sentence_names_the_two_level_model_and_its_split(demo):
    _, table = demo
    rs = DEMO_REF["two_level"]["rights_sterba"]
    text = describe_r2(table)
    assert f"its fixed effects account for {_pct(DEMO_REF['crossed']['nakagawa']['marginal'])}" in (
        text
    )
    assert f"the story intercept holds {_pct(DEMO_REF['crossed']['story_share'])}" in text
    assert (
        f"Rights & Sterba's R² comes from the two-level model of the same predictors on the "
        f"same {DEMO_REF['n_ratings']} ratings of {DEMO_REF['n_participants']} participants, "
        "with the participant's random effects only (the story intercept left out)"
    ) in text
    assert "and week each split into the deviation from the person's mean (within)" in text
    assert f"within-person predictors account for {_pct(rs['within']['f1'])} of the" in text
    assert f"(random slopes for {_pct(rs['within']['v'])} more)" in text
    assert f"between-person predictors for {_pct(rs['between']['f2'])} of the variance" in text


def test_a_failed_two_level_model_is_named_not_read(demo):
    _, table = demo
    failed = table.copy()
    two = failed["model"] == "two-level"
    failed.loc[two, "status"] = "failed: its fit did not converge"
    text = describe_r2(failed)
    assert "(Nakagawa's marginal and conditional R²)" in text
    assert text.endswith("is not interpreted, because its fit did not converge.")
    assert "within-person predictors account" not in text


@pytest.fixture(scope="module")
def orthodont():
    d = pd.read_csv(TESTS / "data" / "nlme_Orthodont.csv")
    mean = d.groupby("Subject")["age"].transform("mean")
    d = d.assign(age_w=d["age"] - mean, age_b=mean)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CentringWarning)
        fits = {
            case: LinearMixedModel(REF[case]["formula"]).fit(d)
            for case in ("orthodont_centred", "orthodont_raw")
        }
    return d, fits


def test_a_two_level_model_of_split_predictors_gives_its_own_measures(orthodont):
    d, fits = orthodont
    data = _data(d, id_col="Subject", response_col="distance", predictors=["age_w"])
    table = empathy_r2(data, lmm=fits["orthodont_centred"])
    ref = REF["orthodont_centred"]
    assert set(table["model"]) == {"reported"}
    assert (table["status"] == "ok").all() and (table["note"] == "").all()
    assert "share" not in set(table["decomposition"])
    for part in ("within", "between", "total"):
        for name, value in ref["rights_sterba"][part].items():
            assert _value(table, "reported", part, name) == pytest.approx(value, abs=1e-4)
    for name in ("marginal", "conditional"):
        assert _value(table, "reported", "nakagawa", name) == pytest.approx(
            ref["nakagawa"][name], abs=1e-4
        )
    text = describe_r2(table)
    rs = ref["rights_sterba"]
    assert _pct(ref["nakagawa"]["marginal"]) in text and "Nakagawa" in text
    assert f"within-person predictors account for {_pct(rs['within']['f1'])}" in text
    assert f"between-person predictors for {_pct(rs['between']['f2'])}" in text
    assert "two-level model" not in text


def test_a_factor_term_that_cannot_be_split_gives_the_reason(orthodont):
    d, fits = orthodont
    data = _data(d, id_col="Subject", response_col="distance", predictors=["age"])
    table = empathy_r2(data, lmm=fits["orthodont_raw"])
    two = table[table["model"] == "two-level"]
    assert len(two) == 1 and np.isnan(two["value"].iloc[0])
    assert "Sex[T.Male]" in two["note"].iloc[0]
    assert "No within/between split (Rights & Sterba) is given" in describe_r2(table)


def test_a_singular_fit_is_flagged_not_read(orthodont):
    d, fits = orthodont
    fit = fits["orthodont_centred"]
    singular = types.SimpleNamespace(
        r2=fit.r2,
        converged_=True,
        singular_=True,
        groups_=fit.groups_,
        n_obs_=fit.n_obs_,
        formula=fit.formula,
        design_=fit.design_,
    )
    data = _data(d, id_col="Subject", response_col="distance", predictors=["age_w"])
    table = empathy_r2(data, lmm=singular)
    assert table["status"].str.startswith("failed: its fit is singular").all()
    assert np.isfinite(table["value"]).all()  # kept for the record
    text = describe_r2(table)
    assert text.startswith("Variance explained by the linear mixed model: not interpreted")
    assert "%" not in text


def test_data_must_be_empathy_data(orthodont):
    d, fits = orthodont
    with pytest.raises(InvalidParameterError, match="must be an EmpathyData"):
        empathy_r2(d, lmm=fits["orthodont_centred"])


def test_a_two_level_model_that_cannot_be_fitted_is_said(orthodont):
    """x varies within and between persons, and its person mean is z, already a predictor:
    split, the two parts' between part repeats z, and the two-level model is rank deficient."""
    d, _ = orthodont
    z = d["Subject"].map({s: i % 5 - 2.0 for i, s in enumerate(sorted(d["Subject"].unique()))})
    d = d.assign(z=z, x=z + d["age_w"])
    lmm = LinearMixedModel("distance ~ z + x + (1 | Subject)").fit(d)
    data = _data(d, id_col="Subject", response_col="distance", predictors=["z", "x"])
    table = empathy_r2(data, lmm=lmm)
    two = table[table["model"] == "two-level"]
    assert len(two) == 1 and two["note"].iloc[0].startswith("the two-level model could not be")
    assert "rank" in two["note"].iloc[0]
    text = describe_r2(table)
    assert "No within/between split (Rights & Sterba) is given from the two-level model" in text
    assert text.endswith(f"because {two['note'].iloc[0]}.")


def test_few_participants_get_the_small_sample_caveat(demo):
    _, table = demo
    few = table.assign(n_participants=12)
    text = describe_r2(few)
    assert text.endswith("With 12 participants these shares are imprecise and may not replicate.")
    assert "imprecise" not in describe_r2(table)  # the demo's 41 participants
