"""longitudinal.psychometrics.reliability: one scale, many scales, a study's state scales."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest
from numpy.testing import assert_allclose

from longitudinal import (
    InvalidParameterError,
    load_study,
    multilevel_tables,
    scale_multilevel_reliability,
    study_multilevel_reliability,
)
from models import SingularFitWarning, multilevel_reliability
from surveys import ScaleKey, load_instrument

STUDIES = Path(__file__).resolve().parents[2] / "data" / "studies"
COEFFICIENTS = ["RkF", "R1R", "RkR", "Rc", "RkRn", "Rcn"]
SHROUT = pd.DataFrame(
    {
        "id": list(range(1, 6)) * 4,
        "day": [t for t in range(1, 5) for _ in range(5)],
        "q1": [2, 3, 6, 3, 7, 3, 5, 6, 3, 8, 4, 4, 7, 5, 6, 1, 5, 8, 8, 6],
        "q2": [3, 4, 6, 4, 8, 3, 7, 7, 5, 8, 2, 6, 8, 6, 7, 3, 9, 9, 7, 8],
        "q3": [6, 4, 5, 3, 7, 4, 7, 8, 9, 9, 5, 7, 9, 7, 8, 4, 7, 9, 9, 6],
    }
)


def test_reverse_keyed_items_use_the_declared_range_not_the_observed_one():
    coded = SHROUT.assign(q3=10 - SHROUT["q3"])  # a reverse-worded third item, answers 1-9
    key = ScaleKey("s", ("q1", "q2", "q3"), ("q3",), 1, 9, "mean")
    result = scale_multilevel_reliability(coded, key, id_col="id", wave_col="day")
    # declared 1-9 is also the observed range: psych's Shrout-Lane values (?mlr example)
    assert_allclose(result["RkF"], 0.967578235128277, rtol=1e-12)
    assert_allclose(result["Rc"], 0.742152466367713, rtol=1e-12)
    # declared 0-12: reversed as 12 - x, whatever the observed range (psych would use 1-9)
    wider = ScaleKey("s", ("q1", "q2", "q3"), ("q3",), 0, 12, "mean")
    other = scale_multilevel_reliability(coded, wider, id_col="id", wave_col="day")
    by_hand = multilevel_reliability(
        coded.assign(q3=12 - coded["q3"]), id_col="id", wave_col="day", items=["q1", "q2", "q3"]
    )
    assert_allclose(other.components["variance"], by_hand.components["variance"], rtol=1e-12)
    item = other.components["component"] == "item"
    assert not (
        other.components.loc[item, "variance"] == result.components.loc[item, "variance"]
    ).all()


def test_long_input_gives_the_wide_result():
    key = ScaleKey("s", ("q1", "q2", "q3"), ("q3",), 1, 9, "mean")
    coded = SHROUT.assign(q3=10 - SHROUT["q3"])
    long = coded.melt(id_vars=["id", "day"], var_name="item", value_name="value")
    long = pd.concat([long, long.assign(item="other")])  # rows of another scale are ignored
    wide = scale_multilevel_reliability(coded, key, id_col="id", wave_col="day")
    tall = scale_multilevel_reliability(long, key, id_col="id", wave_col="day", format="long")
    assert_allclose(tall.components["variance"], wide.components["variance"], rtol=1e-10)


def test_a_scale_answered_at_one_wave_gets_a_note_not_rows():
    key_file = load_instrument("who5")
    data = SHROUT.rename(columns={"q1": "who5_1", "q2": "who5_2", "q3": "who5_3"})
    data = data.assign(who5_4=data["who5_1"] % 6, who5_5=data["who5_2"] % 6)
    data[["who5_1", "who5_2", "who5_3"]] = data[["who5_1", "who5_2", "who5_3"]] % 6
    one_day = data.loc[data["day"] == 1]
    tables = multilevel_tables(one_day, [key_file], id_col="id", wave_col="day")
    assert tables.multilevel.empty and tables.components.empty
    assert tables.notes == (
        "who5.raw: measured at one occasion (1); no multilevel coefficients",
        "who5.percentage: measured at one occasion (1); no multilevel coefficients",
    )


def test_a_scale_nobody_answered_twice_gets_a_note_not_rows():
    data = SHROUT.rename(columns={"q1": "who5_1", "q2": "who5_2", "q3": "who5_3"}) % 6
    data = data.assign(id=SHROUT["id"], day=SHROUT["day"], who5_4=1, who5_5=2)
    once = data.loc[data["day"] == data["id"] % 2 + 1]
    tables = multilevel_tables(once, [load_instrument("who5")], id_col="id", wave_col="day")
    assert tables.multilevel.empty
    assert tables.notes[0] == (
        "who5.raw: no participant answered at two or more occasions; no multilevel coefficients"
    )


def test_study_state_scales_match_the_exports_read_by_hand():
    with warnings.catch_warnings():  # the tiny study's omega and alpha findings
        warnings.simplefilter("ignore")
        study = load_study(STUDIES / "tiny")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        tables = study_multilevel_reliability(study)
        frames = []
        for wave in ("pre", "mid", "post"):
            export = pd.read_csv(STUDIES / "tiny" / "surveys" / f"{wave}.csv")
            frames.append(export.assign(wave=wave))
        by_hand = multilevel_tables(
            pd.concat(frames, ignore_index=True),
            [load_instrument("who5")],
            id_col="participant_id",
            wave_col="wave",
        )
    assert tables.multilevel["scale"].tolist() == ["raw", "percentage"]
    row = tables.multilevel.iloc[0]
    # P4 missed the mid survey: 4 persons, REML components
    assert (row["n_persons"], row["n_occasions"], row["n_items"], row["method"]) == (
        4,
        3,
        5,
        "reml",
    )
    assert_allclose(
        tables.multilevel[COEFFICIENTS].to_numpy(dtype=float),
        by_hand.multilevel[COEFFICIENTS].to_numpy(dtype=float),
        rtol=1e-10,
    )
    assert "only 4 persons" in " ".join(tables.notes)


def test_two_scores_of_the_same_items_share_one_fit(monkeypatch):
    import models

    calls = []

    def counted(data, **options):
        calls.append(len(data))
        return multilevel_reliability(data, **options)

    monkeypatch.setattr(models, "multilevel_reliability", counted)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = load_study(STUDIES / "tiny")
        tables = study_multilevel_reliability(study)
    assert tables.multilevel["scale"].tolist() == ["raw", "percentage"]
    assert len(calls) == 1  # who5's raw sum and its percentage: the same keyed items
    raw, percentage = (tables.multilevel.iloc[[i]].drop(columns="scale") for i in (0, 1))
    pd.testing.assert_frame_equal(raw.reset_index(drop=True), percentage.reset_index(drop=True))
    notes = [n for n in tables.notes if n.startswith("who5.")]
    assert [n.removeprefix("who5.raw: ") for n in notes if n.startswith("who5.raw")] == [
        n.removeprefix("who5.percentage: ") for n in notes if n.startswith("who5.percentage")
    ]


def test_study_function_refuses_other_objects():
    with pytest.raises(InvalidParameterError, match="must be a Study"):  # not a path
        study_multilevel_reliability(STUDIES / "tiny")
