"""Tests of longitudinal/_display.py: every result shows one line, its tables, and notebook HTML."""

from __future__ import annotations

import pytest

from longitudinal.predict import empathy_data, evaluate_predictions
from longitudinal.simulate import simulate_frames


def _check(result, title_start):
    line = repr(result)
    assert line.startswith(title_start) and "\n" not in line
    page = result._repr_html_()
    assert page.startswith("<p><strong>") and "<table" in page and "<caption>" in page
    return page


def test_simulated_study_shows_its_truth():
    sim = simulate_frames(seed=3, n_participants=12)
    page = _check(sim, "SimulatedStudy: seed 3, 12 participants")
    assert "agreeableness_z" in sim.summary() and "agreeableness_z" in page


def test_empathy_data_and_evaluation_show_their_tables(demo_study):
    data = empathy_data(demo_study)
    _check(data, f"EmpathyData: {len(data.data)} ratings of 41 participants")
    assert "Predictors" in data.summary()
    result = evaluate_predictions(demo_study, seeds=1, k=0, models=["grand_mean"])
    page = _check(result, "EvaluationResult: 1 models, 1 split seed(s), 41 participants")
    assert "grand_mean" in page
    # the table is summary_table; summary() is the text summary, as on every result
    assert list(result.summary_table["model"]) == ["grand_mean", "grand_mean"]
    assert result.summary().startswith("EvaluationResult: 1 models")
    assert "<table" in result.summary()._repr_html_()
    # the earlier spelling, the table under `summary`, still works for a release and warns
    with pytest.warns(FutureWarning, match="use summary_table"):
        assert list(result.summary["model"]) == ["grand_mean", "grand_mean"]
    assert list(result.to_frame().columns) == list(result.summary().parts[0][1].columns)
    assert result.to_dict()["title"].startswith("EvaluationResult")


def test_text_from_a_study_is_escaped_in_html():
    sim = simulate_frames(seed=4, n_participants=10)
    sim.truth["empathy"]["fixed"]["<b>x</b>"] = 1.0
    page = sim._repr_html_()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
