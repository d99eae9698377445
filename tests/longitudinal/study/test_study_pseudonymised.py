"""What the Study carries: its keyed item answers, its frames built once, its pseudonymised twin."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import longitudinal.study.frames as frames_module
from longitudinal._errors import InvalidParameterError
from longitudinal.report.context import rename_ids
from longitudinal.report.pseudonyms import pseudonyms
from longitudinal.study.loaded import load_study
from surveys import keyed_item_answers

STUDIES = Path(__file__).parents[2] / "data" / "studies"
KEY = b"7f3a9c2e81d44b6fa0c3e5d7b9f1a2c48e6d0b3f5a7c9e1d2b4f6a8c0e3d5b7f"


@pytest.fixture(scope="module")
def tiny():
    with warnings.catch_warnings():  # omega of four respondents
        warnings.simplefilter("ignore")
        return load_study(STUDIES / "tiny")


def test_the_item_answers_are_keyed_as_the_scoring_keys_them(tiny):
    answers = tiny.item_answers
    assert list(answers.columns) == ["participant_id", "wave", "instrument", "scale", "item",
                                     "answer"]  # fmt: skip
    export = pd.read_csv(STUDIES / "tiny" / "surveys" / "pre.csv")
    export["wave"] = "pre"
    for key in tiny.instruments["tas4"].scales:
        mine = answers[(answers["instrument"] == "tas4") & (answers["scale"] == key.name)]
        expected = keyed_item_answers(export, key, id_col="participant_id", wave_col="wave")
        assert mine["answer"].tolist() == expected["value"].tolist()
        assert mine["item"].tolist() == expected["item"].tolist()
    # traits at the first wave only, as scored
    assert set(answers.loc[answers["instrument"] == "tas4", "wave"]) == {"pre"}


def test_the_frames_are_built_once_and_handed_out_as_copies(tiny, monkeypatch):
    study = tiny.pseudonymised(KEY)  # a fresh Study: nothing built yet
    calls = []
    build = frames_module.story_frame
    monkeypatch.setattr(frames_module, "story_frame", lambda s: calls.append(1) or build(s))
    first = study.story_frame()
    first.loc[:, "position"] = -1
    second = study.story_frame()
    assert len(calls) == 1
    assert (second["position"] > 0).all()


def test_the_pseudonymised_study_renames_every_table_in_pseudonym_order(tiny):
    shown = tiny.pseudonymised(KEY)
    id_map = pseudonyms(tiny.participants["participant_id"].astype(str), key=KEY)
    assert shown.id_map == id_map
    raw = set(id_map)
    for name in ("participants", "sessions", "ratings", "survey_dates", "scores", "item_answers"):
        table = getattr(shown, name)
        ids = table["participant_id"]
        assert not set(ids) & raw and set(ids) <= set(id_map.values()), name
        assert ids.is_monotonic_increasing, name
        assert len(table) == len(getattr(tiny, name)), name
    for table in (shown.sessions, shown.ratings):
        assert not any(r in s for s in table["session_id"] for r in raw)
    # the frames of the renamed study are the report's frames of the study as loaded
    for frame in ("story_frame", "session_frame", "person_wave_frame"):
        expected = rename_ids(getattr(tiny, frame)(), "participant_id", id_map)
        got = getattr(shown, frame)().drop(columns="session_id", errors="ignore")
        pd.testing.assert_frame_equal(got, expected)
    assert tiny.id_map is None


def test_the_key_must_be_bytes(tiny):
    with pytest.raises(InvalidParameterError, match="the `key` parameter of Study.pseudonymised"):
        tiny.pseudonymised("a text key")
