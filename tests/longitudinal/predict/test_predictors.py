"""Tests of longitudinal/predict/predictors.py: the predictors equal the simulator's design."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import TRUTH_TERMS
from numpy.testing import assert_allclose

from longitudinal._errors import InvalidParameterError
from longitudinal.predict import (
    empathy_data,
    empathy_formula,
)
from longitudinal.simulate import simulate_frames


def test_predictors_equal_the_simulator_design(demo_data):
    sim = simulate_frames(seed=2024)
    merged = demo_data.data.merge(
        sim.design, on=["session_id", "position"], suffixes=("", "_truth"), validate="1:1"
    )
    assert len(merged) == len(demo_data.data) == 804
    for key, col in TRUTH_TERMS.items():
        other = f"{key}_truth" if key == "week" else key
        assert_allclose(merged[col], merged[other], rtol=0, atol=1e-12, err_msg=col)
    words = merged["words_between_z"] + merged["words_within_z"]
    assert_allclose(words, merged["words_z"], rtol=0, atol=1e-12)


def test_predictor_table(demo_data):
    p = demo_data.predictors
    assert list(p.columns) == [
        "predictor",
        "source",
        "kind",
        "part",
        "center",
        "scale",
        "label",
        "unit",
    ]
    # WHO-5 raw and percentage are the same items: only the last (percentage) is used
    assert "who5_raw_between_z" not in set(p["predictor"])
    assert "who5_percentage_within_z" in set(p["predictor"])
    assert p["kind"].tolist().count("trait") == 7
    assert p.set_index("predictor").loc["week", "scale"] == 1.0
    data = demo_data.data
    assert demo_data.n_dropped == 0
    # within parts average to ~0 within a person only across waves, not rows; but the
    # between part is constant within a person
    assert (data.groupby("participant_id")["words_between_z"].nunique() == 1).all()
    assert demo_data.terms(kinds=["time"]) == ["week"]


def test_empathy_data_bad_input(demo_study):
    with pytest.raises(InvalidParameterError, match="Study"):
        empathy_data(pd.DataFrame())
    with pytest.raises(InvalidParameterError, match="session_features.*shoe_size"):
        empathy_data(demo_study, session_features=["shoe_size"])
    with pytest.raises(InvalidParameterError, match="traits"):
        empathy_data(demo_study, traits=["not_a_column"])


def test_empathy_data_custom_columns(demo_study):
    data = empathy_data(
        demo_study,
        traits=["tas4_absorption"],
        states=["who5_raw"],
        session_features=("duration_min", "words"),
    )
    assert data.terms() == [
        "tas4_absorption_z",
        "who5_raw_between_z",
        "who5_raw_within_z",
        "duration_min_between_z",
        "duration_min_within_z",
        "words_between_z",
        "words_within_z",
        "week",
    ]
    # who5 raw x 4 = percentage: standardized parts are identical
    full = empathy_data(demo_study)
    assert_allclose(
        data.data["who5_raw_within_z"], full.data["who5_percentage_within_z"], atol=1e-12
    )


def test_empathy_formula(demo_data):
    full = empathy_formula(demo_data)
    assert full.startswith("empathy ~ bfi44_extraversion_z + ")
    assert full.endswith("+ week + (1 + week | participant_id) + (1 | story_id)")
    traits = empathy_formula(demo_data, kinds=["trait"], story_effects=False)
    assert traits.endswith("sites_empathy_z + (1 | participant_id)")
    assert "week" not in traits
    with pytest.raises(InvalidParameterError, match="kinds"):
        empathy_formula(demo_data, kinds=["behaviour"])


@pytest.mark.parametrize(
    "name",
    [
        "story_id) + I(10**10**10) + (1 | story_id",
        "a + b",
        "p | q",
        "x ~ y",
        "x**2",
        "two words",
        "back`tick",
        "back\\slash",
        "class",
    ],
)
def test_empathy_formula_writes_every_name_as_one_column(name):
    from longitudinal.predict import EmpathyData
    from models.formula import build_design, parse_formula

    preds = pd.DataFrame(
        {
            "predictor": [f"{name} trait", f"{name} feature", "week"],
            "kind": ["trait", "session", "time"],
        }
    )
    data = EmpathyData(pd.DataFrame(), preds, f"{name} id", f"{name} rating", 1, 5, 0)
    spec = parse_formula(empathy_formula(data))
    assert spec.response == f"{name} rating" and spec.response_is_column
    assert [(t.factors, t.expr) for t in spec.random] == [
        ((f"{name} id",), "1 + week"),
        (("story_id",), "1"),
    ]
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            f"{name} rating": rng.integers(1, 6, 24).astype(float),
            f"{name} trait": np.repeat(rng.normal(size=4), 6),
            f"{name} feature": rng.normal(size=24),
            "week": np.tile(np.arange(6.0), 4),
            f"{name} id": np.repeat(list("abcd"), 6),
            "story_id": np.tile(list("xyz"), 8),
        }
    )
    design = build_design(spec, frame)
    assert list(design.X.columns) == ["Intercept", f"{name} trait", f"{name} feature", "week"]
    assert [b.group for b in design.random] == [f"{name} id", "story_id"]
    plain = empathy_formula(
        EmpathyData(pd.DataFrame(), preds.iloc[2:], "participant_id", "empathy", 1, 5, 0)
    )
    assert plain == "empathy ~ week + (1 + week | participant_id) + (1 | story_id)"
