"""Tests of longitudinal/study/frames.py: time coding, nearest preceding wave, centering, frames.

The hand-made study tests/data/studies/tiny has four participants; every expected number below
is read off its files (e.g. a WHO-5 percentage is 4 x the sum of the five items in the row).
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from longitudinal._errors import InvalidParameterError
from longitudinal.study.frames import (
    nearest_preceding_wave,
    scale_column,
    time_coding,
    within_between,
)
from longitudinal.study.loaded import load_study
from surveys._errors import DataQualityWarning

STUDIES = Path(__file__).parents[2] / "data" / "studies"


def _load_tiny():
    # four respondents make omega's one-factor solution a Heywood case; that warning is
    # asserted in test_study.py
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        return load_study(STUDIES / "tiny")


@pytest.fixture(scope="module")
def tiny():
    return _load_tiny()


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    from longitudinal.simulate import simulate_study

    root = simulate_study(tmp_path_factory.mktemp("sim") / "study", seed=2024)
    truth = json.loads((root / "truth.json").read_text())
    return load_study(root), truth


# -- time coding ---------------------------------------------------------------------------------


def test_time_coding_counts_calendar_days_and_ranks_sessions():
    sessions = pd.DataFrame(
        {
            "participant_id": ["a", "a", "a", "b", "b"],
            "session_id": ["a3", "a1", "a2", "b1", "b2"],
            "started_at": pd.to_datetime(
                [
                    "2024-03-02 00:10",  # 10 minutes after a1, but the next calendar day
                    "2024-03-01 23:50",
                    "2024-03-16 12:00",
                    "2024-05-01 08:00",
                    "2024-05-01 08:00",  # tie: ordered by session id
                ]
            ),
        }
    )
    out = time_coding(sessions)
    assert out["day"].tolist() == [1, 0, 15, 0, 0]
    assert_allclose(out["week"], [1 / 7, 0, 15 / 7, 0, 0])
    assert out["session_index"].tolist() == [2, 1, 3, 1, 2]
    assert list(sessions.columns) == ["participant_id", "session_id", "started_at"]


def test_time_coding_requires_datetimes():
    sessions = pd.DataFrame(
        {"participant_id": ["a"], "session_id": ["s"], "started_at": ["2024-03-01"]}
    )
    with pytest.raises(InvalidParameterError, match="datetime64"):
        time_coding(sessions)


# -- nearest preceding wave ----------------------------------------------------------------------


def test_nearest_preceding_wave_on_or_before_and_ties():
    dates = pd.DataFrame(
        {
            "participant_id": ["a", "a", "a", "b", "b"],
            "wave": ["pre", "mid", "post", "pre", "mid"],
            "completed_at": pd.to_datetime(
                ["2024-03-01", "2024-03-15 10:00", "2024-03-30", "2024-04-01", "2024-04-01"],
                format="ISO8601",
            ),
        }
    )
    sessions = pd.DataFrame(
        {
            "participant_id": ["a", "a", "a", "a", "b", "c"],
            "started_at": pd.to_datetime(
                [
                    "2024-02-28",  # before any survey
                    "2024-03-15 10:00",  # exactly at the mid survey: counts as after it
                    "2024-03-15 09:59",  # one minute before: still pre
                    "2024-04-02",
                    "2024-04-01 12:00",  # b answered pre and mid at the same moment
                    "2024-04-01",  # c has no survey at all
                ],
                format="ISO8601",
            ),
        }
    )
    out = nearest_preceding_wave(sessions, dates, waves=["pre", "mid", "post"])
    assert out["state_wave"].astype(object).where(out["state_wave"].notna(), None).tolist() == [
        None,
        "mid",
        "pre",
        "post",
        "mid",
        None,
    ]
    assert out["state_completed_at"].iloc[1] == pd.Timestamp("2024-03-15 10:00")
    assert list(out["state_wave"].cat.categories) == ["pre", "mid", "post"]


def test_nearest_preceding_wave_rejects_unknown_wave():
    dates = pd.DataFrame(
        {"participant_id": ["a"], "wave": ["baseline"], "completed_at": pd.to_datetime(["2024"])}
    )
    sessions = pd.DataFrame({"participant_id": ["a"], "started_at": pd.to_datetime(["2024"])})
    with pytest.raises(InvalidParameterError, match="baseline"):
        nearest_preceding_wave(sessions, dates, waves=["pre", "post"])


# -- within/between ------------------------------------------------------------------------------


def test_within_between_decomposes_exactly():
    data = pd.DataFrame(
        {
            "pid": ["a", "a", "a", "b", "b", "c"],
            "words": [100.0, 300.0, np.nan, 50.0, 150.0, 80.0],
            "minutes": [10, 12, 14, 8, 8, 20],
        }
    )
    out = within_between(data, ["words", "minutes"], id_col="pid")
    assert_allclose(out["words_between"], [200, 200, 200, 100, 100, 80])
    assert_allclose(out["words_within"], [-100, 100, np.nan, -50, 50, 0])
    assert_allclose(out["minutes_between"], [12, 12, 12, 8, 8, 20])
    observed = out["words"].notna()
    assert_allclose(
        (out["words_between"] + out["words_within"])[observed],
        out["words"][observed],
        rtol=1e-12,
    )
    assert "words_between" not in data.columns  # input not modified


def test_within_between_refuses_clash_and_text():
    # longitudinal re-exports the models helper, so its errors come from the models tree.
    from models import InvalidParameterError

    data = pd.DataFrame({"pid": ["a"], "x": [1.0], "x_within": [0.0], "t": ["text"]})
    with pytest.raises(InvalidParameterError, match="already exist"):
        within_between(data, "x", id_col="pid")
    with pytest.raises(InvalidParameterError, match="numeric"):
        within_between(data, "t", id_col="pid")
    with pytest.raises(InvalidParameterError, match="lack the column"):
        within_between(data, "nope", id_col="pid")


def test_scale_column_names():
    assert scale_column("who5", "percentage") == "who5_percentage"
    assert scale_column("sites", "sites") == "sites"


# -- frames of the hand-made study -------------------------------------------------------------


def test_story_frame_joins_traits_and_nearest_preceding_states(tiny):
    story = tiny.story_frame()
    # 33 rating rows: 1 empty, 6 of the two sessions before the pre survey
    assert len(story) == 26
    row = story[(story["session_id"] == "s03") & (story["position"] == 1)].iloc[0]
    # P1's s03 started 2024-03-15 08:00, the day the mid survey is dated: mid states
    assert row["state_wave"] == "mid"
    assert row["who5_percentage"] == 4 * (4 + 4 + 4 + 3 + 4)
    assert row["who5_raw"] == 4 + 4 + 4 + 3 + 4
    assert row["tas4_absorption"] == (4 + 5 + 3 + 4) / 4
    assert (row["day"], row["session_index"]) == (13, 3)
    assert row["week"] == pytest.approx(13 / 7)
    # P4 missed mid: a session after the mid period still carries the pre states
    p4 = story[story["session_id"] == "s12"].iloc[0]
    assert p4["state_wave"] == "pre"
    assert p4["who5_percentage"] == 4 * (1 + 2 + 1 + 2 + 3)
    # P2's first kept session (s06) is day 0; the excluded s05 does not count
    assert story.loc[story["session_id"] == "s06", "day"].tolist() == [0, 0, 0]
    # text columns (the rating context, the room) never enter the frame
    assert "context" not in story.columns and "room" not in story.columns
    assert {"duration_min", "words"} <= set(story.columns)


def test_session_frame_keeps_sessions_without_ratings(tiny):
    sessions = tiny.session_frame()
    assert len(sessions) == 10
    s10 = sessions[sessions["session_id"] == "s10"].iloc[0]
    assert s10["n_ratings"] == 0 and np.isnan(s10["empathy_mean"])
    assert s10["state_wave"] == "mid" and s10["who5_raw"] == 4 + 4 + 5 + 4 + 4
    s04 = sessions[sessions["session_id"] == "s04"].iloc[0]
    assert s04["n_ratings"] == 2  # the empty rating is excluded
    assert s04["empathy_mean"] == pytest.approx((3 + 2) / 2)


def test_person_wave_frame(tiny):
    pw = tiny.person_wave_frame()
    assert len(pw) == 11  # 4 pre + 3 mid + 4 post
    assert pw.loc[pw["participant_id"] == "P4", "wave"].astype(str).tolist() == ["pre", "post"]
    p1 = pw[pw["participant_id"] == "P1"]
    p1 = p1.set_index(p1["wave"].astype(str))
    # pre on 2024-03-01, first session 2024-03-02: day -1
    assert p1.loc["pre", "day"] == -1
    assert p1.loc["post", "who5_percentage"] == 4 * (5 + 4 + 4 + 4 + 5)
    assert p1.loc["pre", "n_sessions"] == 2 and p1.loc["mid", "n_sessions"] == 2
    assert p1.loc["pre", "empathy_mean"] == pytest.approx((4 + 3 + 5 + 2 + 4 + 3) / 6)
    assert p1["tas4_absorption"].tolist() == [4.0, 4.0, 4.0]
    assert pw["wave"].cat.ordered


def test_frames_return_fresh_copies(tiny):
    first = tiny.story_frame()
    first.loc[:, "empathy"] = 0
    assert tiny.story_frame()["empathy"].ne(0).all()


# -- frames of the simulated study (known truth) -----------------------------------------------


def test_simulated_frames_match_truth(simulated):
    study, truth = simulated
    story = study.story_frame()
    sessions = study.session_frame()
    pw = study.person_wave_frame()
    assert len(story) == truth["n_ratings"]
    assert len(sessions) == truth["n_sessions"]
    no_ratings = set(truth["defects"]["session_without_ratings"])
    assert set(sessions.loc[sessions["n_ratings"] == 0, "session_id"]) == no_ratings
    assert not no_ratings & set(story["session_id"])
    for pid in truth["defects"]["missed_mid"]:
        assert "mid" not in pw.loc[pw["participant_id"] == pid, "wave"].astype(str).tolist()
    # sessions run on days 1-29 after enrolment, before the post survey (day 30-33)
    assert set(story["state_wave"].astype(str)) <= {"pre", "mid"}
    # truth.json defines week as (session date - first session date).days / 7
    raw = pd.read_csv(study.root / "sessions.csv", parse_dates=["started_at"])
    first = raw.groupby("participant_id")["started_at"].transform("min").dt.normalize()
    week = (raw["started_at"].dt.normalize() - first).dt.days / 7
    expected = dict(zip(raw["session_id"], week, strict=True))
    assert_allclose(sessions["week"], sessions["session_id"].map(expected), rtol=1e-12)


def test_within_between_on_story_frame(simulated):
    study, _ = simulated
    story = within_between(study.story_frame(), "words", id_col="participant_id")
    means = story.groupby("participant_id")["words"].mean()
    assert_allclose(story["words_between"], story["participant_id"].map(means), rtol=1e-12)
    sums = story.groupby("participant_id")["words_within"].sum()
    assert_allclose(sums, 0, atol=1e-8)
