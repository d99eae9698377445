"""The empathy LMM's R-squared as a table and a sentence (predict/variance_explained.py).

The numbers are :meth:`LinearMixedModel.r2`'s, checked here against the R reference of
tests/models/reference/lmm_r2_emmeans.R (r2mlm 0.3.8, performance 0.10.2) on nlme::Orthodont,
with the age split into its within-person and between-person parts and without.
"""

import json
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from longitudinal.predict.variance_explained import R2_TABLE_COLUMNS, describe_r2, empathy_r2
from models import CentringWarning
from models.lmm import LinearMixedModel

TESTS = Path(__file__).resolve().parents[2]
REF = json.loads((TESTS / "models" / "reference" / "lmm_r2_emmeans.json").read_text())["r2"]


@pytest.fixture(scope="module")
def fits():
    d = pd.read_csv(TESTS / "data" / "nlme_Orthodont.csv")
    mean = d.groupby("Subject")["age"].transform("mean")
    d = d.assign(age_w=d["age"] - mean, age_b=mean)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CentringWarning)
        return {
            case: LinearMixedModel(REF[case]["formula"]).fit(d)
            for case in ("orthodont_centred", "orthodont_raw")
        }


def _value(table, part, measure):
    return float(table.set_index(["decomposition", "measure"]).loc[(part, measure), "value"])


def test_split_predictors_give_within_and_between_measures(fits):
    table = empathy_r2(fits["orthodont_centred"])
    ref = REF["orthodont_centred"]
    assert list(table.columns) == R2_TABLE_COLUMNS
    assert (table["status"] == "ok").all() and (table["note"] == "").all()
    for part in ("within", "between", "total"):
        for name, value in ref["rights_sterba"][part].items():
            assert _value(table, part, name) == pytest.approx(value, abs=1e-4), (part, name)
    for name in ("marginal", "conditional"):
        assert _value(table, "nakagawa", name) == pytest.approx(ref["nakagawa"][name], abs=1e-4)
    text = describe_r2(table)
    pct = lambda v: f"{100 * v:.0f}%"  # noqa: E731
    assert pct(ref["nakagawa"]["marginal"]) in text and "Nakagawa" in text
    assert (
        f"within-person predictors account for {pct(ref['rights_sterba']['within']['f1'])}" in text
    )
    assert f"between-person predictors for {pct(ref['rights_sterba']['between']['f2'])}" in text


def test_unsplit_predictor_gives_the_total_and_the_reason(fits):
    table = empathy_r2(fits["orthodont_raw"])
    ref = REF["orthodont_raw"]
    assert set(table["decomposition"]) == {"nakagawa", "total"}
    assert _value(table, "total", "f") == pytest.approx(
        ref["rights_sterba"]["total"]["f"], abs=1e-4
    )
    text = describe_r2(table)
    assert "not split within and between persons because age" in text
    assert "age, age:Sex[T.Male] vary both within and between persons" in text


def test_a_singular_fit_is_flagged_not_read(fits):
    fit = fits["orthodont_centred"]
    singular = types.SimpleNamespace(
        r2=fit.r2, converged_=True, singular_=True, groups_=fit.groups_
    )
    table = empathy_r2(singular)
    assert table["status"].str.startswith("failed: its fit is singular").all()
    assert np.isfinite(table["value"]).all()  # kept for the record
    text = describe_r2(table)
    assert text.startswith("Variance explained by the linear mixed model: not interpreted")
    assert "%" not in text
