"""Tests of longitudinal/predict/user_predictions.py: a researcher's predictions in the benchmark.

The command-line round trip and the refusals of bad files are in test_cli_evaluate.py; these
tests use the Python API (tables instead of files) with the grand mean as the only baseline.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings
from numpy.testing import assert_allclose

from longitudinal._errors import InvalidParameterError
from longitudinal.predict import evaluate_predictions
from longitudinal.predict.selection import participant_splits
from longitudinal.predict.user_predictions import prediction_columns, read_predictions
from longitudinal.simulate import simulate_study
from longitudinal.study.loaded import load_study
from models.evaluation import prediction_metrics
from surveys._errors import InputValidationError

KEYS = ["scheme", "seed", "participant_id", "session_id", "position"]


def _load(path):
    with package_warnings():  # the scoring notes of a small sample
        return load_study(path)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return _load(simulate_study(tmp_path_factory.mktemp("up") / "study", seed=5, n_participants=20))


def _predict(study, *, seeds=1, k=2, parts=("test",), model="mine", shift=0.0):
    """Predict the ratings of the participants in ``parts`` (every one in a K-fold)."""
    splits = participant_splits(study, seeds=seeds, k=k)
    splits["split"] = splits["split"].astype(str)
    labels = {"test": "test", "val": "valid"}
    wanted = [labels[p] for p in parts]
    scored = splits[splits["split"].isin(wanted) | splits["scheme"].str.startswith("kfold")]
    ratings = study.ratings[["participant_id", "session_id", "position", "empathy"]]
    rows = scored.merge(ratings, on="participant_id")
    return rows[KEYS].assign(model=model, prediction=np.clip(rows["empathy"] + shift, 1, 5))


def _evaluate(study, predictions, **kw):
    options = {"seeds": 1, "k": 2, "models": ["grand_mean"], **kw}
    with package_warnings():
        return evaluate_predictions(study, predictions=predictions, **options)


def test_prediction_columns_use_the_study_names(study):
    assert prediction_columns(study) == [
        "model",
        "scheme",
        "seed",
        "participant_id",
        "session_id",
        "position",
        "prediction",
    ]


def test_a_table_is_scored_with_the_metric_code_of_the_baselines(study):
    pred = _predict(study, shift=0.4)
    result = _evaluate(study, pred)
    row = result.metrics[(result.metrics["model"] == "mine") & (result.metrics["split"] == "test")]
    holdout = pred[pred["scheme"] == "holdout_70_20_10"]
    y = holdout.merge(study.ratings, on=["participant_id", "session_id", "position"])["empathy"]
    expected = prediction_metrics(
        y.to_numpy(float), holdout["prediction"].to_numpy(float), threshold=3.0
    )
    for name in ("r", "rho", "acc", "f1", "mse"):
        assert_allclose(row[name].iloc[0], getattr(expected, name), rtol=0, atol=1e-12)
    assert result.parameters["user_models"] == ["mine"]
    assert "your predictions" in result.parameters["models"]["mine"]
    runs = result.runs[result.runs["model"] == "mine"]
    assert runs["seconds"].isna().all() and len(runs) == 1 + 2  # holdout test + 2 folds


def test_validation_predictions_are_optional_but_whole(study):
    pred = _predict(study, k=0, parts=("test", "val"))
    result = _evaluate(study, pred, k=0)
    mine = result.metrics[result.metrics["model"] == "mine"]
    assert sorted(mine["split"]) == ["test", "val"]
    assert_allclose(mine["mse"], 0, atol=0)
    splits = participant_splits(study, seeds=1, k=0)
    valid = splits.loc[splits["split"] == "valid", "participant_id"]
    partial = pred.drop(index=pred.index[pred["participant_id"].isin(valid)][:1])
    with pytest.raises(InputValidationError, match="missing prediction of a validation rating"):
        _evaluate(study, partial, k=0)


def test_a_model_may_leave_out_a_whole_scheme_not_a_seed(study):
    pred = _predict(study, seeds=2)
    holdout_only = pred[pred["scheme"] == "holdout_70_20_10"]
    result = _evaluate(study, holdout_only, seeds=2)
    mine = result.metrics[result.metrics["model"] == "mine"]
    assert sorted(mine["split"]) == ["test", "test"]
    one_seed = pred[pred["seed"] == 0]
    with pytest.raises(InputValidationError) as info:
        _evaluate(study, one_seed, seeds=2)
    reasons = info.value.failure_cases["reason"]
    assert reasons.str.contains("has no predictions for holdout_70_20_10 seed 1").any()
    assert reasons.str.contains("has no predictions for kfold_2 seed 1").any()


def test_rows_are_the_index_labels_and_sources_are_named(study):
    pred = _predict(study)
    pred.index = pred.index + 100
    bad = pred.copy()
    bad.loc[bad.index[0], "prediction"] = np.inf
    with pytest.raises(InputValidationError) as info:
        _evaluate(study, {"my model": bad})
    case = info.value.failure_cases.iloc[0]
    assert (case["file"], case["row"], case["column"]) == ("my model", 100, "prediction")


def test_two_models_and_several_sources(study):
    a = _predict(study, model="a")
    b = _predict(study, model="b", shift=-0.5)
    result = _evaluate(study, {"a.csv": a, "b.csv": b})
    assert result.parameters["user_models"] == ["a", "b"]
    summary = result.summary_table.set_index(["model", "split"])
    assert summary.loc[("a", "test"), "mse_mean"] == 0
    assert summary.loc[("b", "test"), "mse_mean"] > 0


def test_bad_predictions_argument(study):
    with pytest.raises(InvalidParameterError, match="predictions"):
        _evaluate(study, 42)
    with pytest.raises(InvalidParameterError, match="predictions"):
        _evaluate(study, [])


def test_ratings_the_benchmark_leaves_out_are_not_scored(tmp_path):
    """A rating in ratings.csv that the study does not keep (empty) may be predicted: noted."""
    path = simulate_study(tmp_path / "study", seed=5, n_participants=20)
    ratings = pd.read_csv(path / "ratings.csv", dtype=str)
    study = _load(path)
    splits = participant_splits(study, seeds=1, k=0)
    test_person = splits.loc[splits["split"] == "test", "participant_id"].iloc[0]
    emptied = ratings.index[ratings["participant_id"] == test_person][0]
    ratings.loc[emptied, "empathy"] = ""
    ratings.to_csv(path / "ratings.csv", index=False)
    study = _load(path)
    key = ratings.loc[[emptied], ["participant_id", "session_id", "position"]]
    pred = _predict(study, k=0)
    extra = key.assign(
        model="mine", scheme="holdout_70_20_10", seed=0, position=int(key["position"].iloc[0])
    )
    pred = pd.concat([pred, extra.assign(prediction=3.0)], ignore_index=True)
    result = _evaluate(study, pred, k=0)
    assert result.parameters["predictions"]["not_scored"] == {"mine": 1}
    assert any(
        "1 prediction(s) of ratings that the benchmark leaves out" in n for n in result.notes
    )
    mine = result.metrics[result.metrics["model"] == "mine"]
    assert_allclose(mine["mse"], 0, atol=0)


def test_read_predictions_numbers_rows_as_in_the_file(study, tmp_path):
    pred = _predict(study).head(3)
    path = tmp_path / "pred.csv"
    text = pred.to_csv(index=False)
    header, *rows = text.splitlines()
    path.write_text("\n".join([header, rows[0], "", rows[1], rows[2]]) + "\n")
    table = read_predictions(path, study=study)
    assert table.index.tolist() == [2, 4, 5]  # the blank line 3 is skipped, not renumbered
    assert table["model"].tolist() == ["mine"] * 3
    with pytest.raises(InputValidationError, match="file not found"):
        read_predictions(tmp_path / "none.csv", study=study)
    (tmp_path / "empty.csv").write_text(header + "\n")
    with pytest.raises(InputValidationError, match="no rows"):
        read_predictions(tmp_path / "empty.csv", study=study)
