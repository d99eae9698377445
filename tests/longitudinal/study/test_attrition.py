"""Attrition of a loaded study (longitudinal/study/attrition.py).

A simulated study of 12 people (seed 11) with dropouts made here: P02 leaves after the pre
survey and its third session (its later surveys, sessions and their ratings removed), P05 and
P09 miss the post survey, P09 the mid survey too. The expected counts are counted from the
edited files, and one Hedges' g is computed by hand from the first wave's scores.
"""

from __future__ import annotations

import csv
import math
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest

from longitudinal import DataQualityWarning, InvalidParameterError, attrition, load_study
from longitudinal.simulate import simulate_study
from longitudinal.study.attrition import BASELINE_COLUMNS, SESSION_COLUMNS, WAVE_COLUMNS

DROPS = {"mid": {"P02", "P09"}, "post": {"P02", "P05", "P09"}}


def _drop_survey_rows(path, ids, *, header_rows):
    """Remove the rows of ``ids`` from a survey export (Qualtrics: two more header rows)."""
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    col = rows[0].index("participant_id")
    kept = rows[:header_rows] + [r for r in rows[header_rows:] if r[col] not in ids]
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(kept)


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    src = simulate_study(tmp_path_factory.mktemp("attr") / "sim", seed=11, n_participants=12)
    path = src.parent / "dropouts"
    shutil.copytree(src, path)
    _drop_survey_rows(path / "surveys" / "mid.csv", DROPS["mid"], header_rows=1)
    _drop_survey_rows(path / "surveys" / "post_qualtrics.csv", DROPS["post"], header_rows=3)
    sessions = pd.read_csv(path / "sessions.csv", dtype=str)
    mine = sessions[sessions["participant_id"] == "P02"].sort_values("started_at")
    gone = set(mine["session_id"].iloc[3:])
    sessions[~sessions["session_id"].isin(gone)].to_csv(path / "sessions.csv", index=False)
    ratings = pd.read_csv(path / "ratings.csv", dtype=str)
    ratings[~ratings["session_id"].isin(gone)].to_csv(path / "ratings.csv", index=False)
    return path


@pytest.fixture(scope="module")
def loaded(study_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)  # reliability notes of 12 people
        study = load_study(study_dir)
    return study, attrition(study)


def _ids(path, *, header_rows):
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    col = rows[0].index("participant_id")
    return {r[col] for r in rows[header_rows:] if r[col]}  # a preview has no id


def test_counts_per_wave_as_counted_in_the_files(study_dir, loaded):
    _, result = loaded
    listed = set(pd.read_csv(study_dir / "participants.csv", dtype=str)["participant_id"])
    seen = {
        "pre": _ids(study_dir / "surveys" / "pre.csv", header_rows=1),
        "mid": _ids(study_dir / "surveys" / "mid.csv", header_rows=1),
        "post": _ids(study_dir / "surveys" / "post_qualtrics.csv", header_rows=3),
    }
    assert not DROPS["post"] & seen["post"] and len(listed) == 12
    waves = result.waves
    assert list(waves.columns) == WAVE_COLUMNS and list(waves["wave"]) == ["pre", "mid", "post"]
    assert waves["n_participants"].tolist() == [len(seen[w]) for w in ("pre", "mid", "post")]
    assert waves["n_missing"].tolist() == [12 - len(seen[w]) for w in ("pre", "mid", "post")]
    last = {}
    for pid in listed:
        observed = [w for w in ("pre", "mid", "post") if pid in seen[w]]
        last[pid] = observed[-1] if observed else None
    want_last = [sum(v == w for v in last.values()) for w in ("pre", "mid", "post")]
    assert waves["n_last_seen"].tolist() == want_last
    assert (result.n_completers, result.n_dropouts) == (len(seen["post"]), 3)
    people = result.people.set_index("participant_id")
    assert people["last_wave"].to_dict() == last
    assert set(people.index[~people["completer"]]) == DROPS["post"]


def test_sessions_and_each_persons_last_session(study_dir, loaded):
    _, result = loaded
    sessions = pd.read_csv(study_dir / "sessions.csv", dtype=str)
    per = sessions.groupby("participant_id").size()
    assert per["P02"] == 3
    want = [(k, int((per >= k).sum())) for k in range(1, per.max() + 1)]
    assert list(result.sessions.columns) == SESSION_COLUMNS
    assert [tuple(r) for r in result.sessions.itertuples(index=False)] == want
    people = result.people.set_index("participant_id")
    assert people["n_sessions"].to_dict() == per.to_dict()
    started = pd.to_datetime(sessions["started_at"]).dt.normalize()
    span = started.groupby(sessions["participant_id"]).agg(lambda s: (s.max() - s.min()).days)
    assert people["last_session_day"].to_dict() == span.to_dict()


def test_one_hedges_g_by_hand(loaded):
    study, result = loaded
    frame = study.person_wave_frame()
    pre = frame[frame["wave"] == "pre"].set_index("participant_id")["bfi44_extraversion"]
    left = pre[pre.index.isin(DROPS["post"])].to_numpy()
    stay = pre[~pre.index.isin(DROPS["post"])].to_numpy()
    n1, n2 = len(left), len(stay)
    s1 = sum((x - sum(left) / n1) ** 2 for x in left) / (n1 - 1)
    s2 = sum((x - sum(stay) / n2) ** 2 for x in stay) / (n2 - 1)
    d = (sum(left) / n1 - sum(stay) / n2) / math.sqrt(
        ((n1 - 1) * s1 + (n2 - 1) * s2) / (n1 + n2 - 2)
    )
    j = 1 - 3 / (4 * (n1 + n2) - 9)
    se = j * math.sqrt((n1 + n2) / (n1 * n2) + d * d / (2 * (n1 + n2)))
    table = result.baseline
    assert list(table.columns) == BASELINE_COLUMNS
    row = table.set_index("measure").loc["bfi44_extraversion"]
    assert (row["n_dropouts"], row["n_completers"]) == (3, 9)
    np.testing.assert_allclose(
        [row["estimate"], row["se"], row["ci_low"], row["ci_high"]],
        [j * d, se, j * d - 1.959963984540054 * se, j * d + 1.959963984540054 * se],
        rtol=1e-12,
    )
    # every first-wave trait and state scale is compared
    assert {"tas4_absorption", "who5_raw", "cls9_humanity_compassionate_love"} <= set(
        table["measure"]
    )


def test_the_result_protocol_and_a_bad_level(loaded):
    study, result = loaded
    assert result.to_frame().equals(result.waves)
    info = result.to_dict()
    assert info["n_dropouts"] == 3 and info["effect_size"].startswith("Hedges' g")
    assert repr(result) == "Attrition(9 of 12 participants completed the post survey)"
    with pytest.raises(InvalidParameterError, match="`ci_level`"):
        attrition(study, ci_level=1.5)
