"""Imputation of a study's missing session features (longitudinal/study/session_imputation.py).

The simulated study of 16 people (seed 7) with the word count of every fifth session blanked:
only those cells are imputed (two-level, sessions within participants), the observed cells
stay, the same seed gives the same tables, each session's mean rating is in the imputation
model (its number of ratings is left out: every session rates three stories), and the model
frame built from a completed table has every rating back, with the imputed word counts.
"""

from __future__ import annotations

import csv
import shutil
import warnings

import numpy as np
import pytest

from longitudinal import DataQualityWarning, InvalidParameterError, load_study
from longitudinal.predict import empathy_data
from longitudinal.predict.imputed_effects import imputed_frames
from longitudinal.study.session_imputation import impute_sessions


@pytest.fixture(scope="module")
def imputed(small_study_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("sessions") / "study"
    shutil.copytree(small_study_dir, path)
    sessions = path / "sessions.csv"
    with sessions.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    words = rows[0].index("words")
    for row in rows[1::5]:
        row[words] = ""
    with sessions.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        study = load_study(path)
    return study, impute_sessions(study, features=["words", "duration_min"], m=3, seed=2)


def test_only_the_missing_cells_are_drawn(imputed):
    study, result = imputed
    observed = result.observed.set_index("session_id")
    blank = observed["words"].isna()
    assert blank.sum() == len(study.sessions[1::5]) > 0
    assert result.features == ("words", "duration_min") and result.auxiliary == ("mean rating",)
    info = result.to_dict()
    assert info["cluster"] == "participant_id" and info["method"].endswith("(2l.norm)")
    assert result.imputations.missing["column"].tolist() == ["words", "duration_min"]
    for table in result.datasets:
        table = table.set_index("session_id").loc[observed.index]
        assert table.columns.tolist() == ["participant_id", "words", "duration_min"]
        assert table["participant_id"].equals(observed["participant_id"])
        assert table.loc[~blank, "words"].equals(observed.loc[~blank, "words"])
        assert table["duration_min"].equals(observed["duration_min"])
        assert table["words"].notna().all()
    assert not result.datasets[0]["words"].equals(result.datasets[1]["words"])
    again = impute_sessions(study, features=["words", "duration_min"], m=3, seed=2)
    assert all(a.equals(b) for a, b in zip(again.datasets, result.datasets, strict=True))


def test_the_completed_features_bring_every_rating_back(imputed):
    study, result = imputed
    features = {"session_features": ["words"], "traits": [], "states": []}
    observed = empathy_data(study, **features)
    completed = empathy_data(study, completed_sessions=result.datasets[0], **features)
    assert observed.meta["dropped_by_column"]["words_within_z"] > 0
    assert completed.n_dropped == 0 and len(completed.data) == len(study.story_frame())
    spec = completed.predictors.set_index("predictor").loc["words_within_z"]
    table = result.datasets[0]
    words = completed.data["session_id"].map(table.set_index("session_id")["words"])
    # the person mean is over every session of the participant, rated or not
    means = table.groupby("participant_id")["words"].mean()
    person = completed.data["participant_id"].map(means)
    np.testing.assert_allclose(
        completed.data["words_within_z"], (words - person) / spec["scale"], rtol=1e-12
    )


def test_unknown_features_are_refused(imputed):
    study, _ = imputed
    with pytest.raises(InvalidParameterError, match="`features`.*got \\['speed'\\]"):
        impute_sessions(study, features=["speed"], m=2)


def test_frames_from_the_completed_sessions_alone(imputed):
    study, result = imputed
    features = {"session_features": ["words"], "traits": [], "states": []}
    frames = imputed_frames(study, None, sessions=result, m=2, **features)
    assert len(frames) == 2 and all(f.n_dropped == 0 for f in frames)
    assert not frames[0].data["words_within_z"].equals(frames[1].data["words_within_z"])
    with pytest.raises(InvalidParameterError, match="got neither"):
        imputed_frames(study, None, **features)
