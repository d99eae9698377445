"""Tests of surveys/validation.py: every problem kind, reported together, with file rows."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from surveys._errors import FAILURE_COLUMNS, InputValidationError, InvalidParameterError
from surveys.instruments import load_instrument
from surveys.readers import read_responses
from surveys.validation import FailureCollector, validate_responses

DATA = Path(__file__).resolve().parents[1] / "data"
RAW = DATA / "raw"
BAD = DATA / "bad"
TAS4 = ["tas4_1", "tas4_2", "tas4_3", "tas4_4"]


def tas4_frame(**columns):
    frame = pd.DataFrame(
        {
            "id": ["P1", "P2", "P3"],
            "tas4_1": [1.0, 2.0, 3.0],
            "tas4_2": [4.0, 5.0, np.nan],
            "tas4_3": [3.0, 3.0, 3.0],
            "tas4_4": [2.0, 1.0, 5.0],
        }
    )
    for name, values in columns.items():
        frame[name] = values
    return frame


def problems(call) -> pd.DataFrame:
    with pytest.raises(InputValidationError) as err:
        call()
    return err.value.failure_cases


# ----------------------------------------------------------------- valid input


def test_valid_responses_pass():
    assert validate_responses(read_responses(RAW / "tas4_small.csv"), "tas4") is None
    assert validate_responses(tas4_frame(), [load_instrument("tas4")]) is None


def test_long_file_with_waves_passes():
    responses = read_responses(RAW / "tas4_who5_long.csv", id_col="participant_id")
    validate_responses(responses, ["tas4", "who5"], id_col="participant_id", wave_col="wave")


def test_custom_key_file():
    validate_responses(read_responses(RAW / "custom3.csv"), RAW / "custom3.toml")
    validate_responses(read_responses(RAW / "custom3.csv"), str(RAW / "custom3.toml"))


# ----------------------------------------------------------------- one problem kind each


def test_text_in_item_names_row_column_value():
    cases = problems(lambda: validate_responses(read_responses(BAD / "text_in_item.csv"), "tas4"))
    assert cases[FAILURE_COLUMNS[1:4]].values.tolist() == [[3, "tas4_2", "three"]]
    assert "text in a numeric item of tas4" in cases["reason"].iloc[0]
    assert cases["file"].iloc[0] == str(BAD / "text_in_item.csv")


def test_value_outside_declared_range():
    responses = read_responses(BAD / "out_of_range_6.csv")
    cases = problems(lambda: validate_responses(responses, "tas4"))
    assert cases[["row", "column", "value"]].values.tolist() == [[4, "tas4_3", 6]]
    assert "outside the declared range 1-5 of tas4" in cases["reason"].iloc[0]
    assert "--missing-code" not in cases["reason"].iloc[0]  # 6 does not look like a code


def test_who5_range_is_0_to_5():
    validate_responses(tas4_frame(), "tas4")
    frame = pd.DataFrame({"id": ["a", "b"], **{f"who5_{k}": [0.0, 5.0] for k in range(1, 6)}})
    validate_responses(frame, "who5")  # 0 and 5 are the declared bounds
    frame.loc[1, "who5_3"] = 6.0
    cases = problems(lambda: validate_responses(frame, "who5"))
    assert "range 0-5" in cases["reason"].iloc[0]


@pytest.mark.parametrize("code", [-99, -9, 99, 999, -1])
def test_missing_code_lookalikes_get_a_hint(code):
    cases = problems(lambda: validate_responses(tas4_frame(tas4_1=[1.0, code, 3.0]), "tas4"))
    assert f"--missing-code {code}" in cases["reason"].iloc[0]
    assert cases["value"].iloc[0] == code


def test_non_integer_response():
    responses = read_responses(BAD / "non_integer.csv")
    cases = problems(lambda: validate_responses(responses, "who5"))
    assert cases[["row", "column", "value"]].values.tolist() == [[2, "who5_3", 2.5]]
    assert "not a whole number" in cases["reason"].iloc[0]
    validate_responses(responses, "who5", whole_numbers=False)


def test_true_false_items_must_be_0_or_1():
    tas34 = load_instrument("tas34")
    frame = pd.DataFrame({"id": ["a", "b"], **{item: [0.0, 1.0] for item in tas34.items}})
    validate_responses(frame, tas34)
    frame.loc[0, tas34.items[0]] = 2.0
    cases = problems(lambda: validate_responses(frame, tas34))
    assert cases["column"].tolist() == [tas34.items[0]]
    assert "range 0-1" in cases["reason"].iloc[0]


def test_duplicate_id_and_wave_lists_every_row():
    responses = read_responses(BAD / "duplicate_id_wave.csv", id_col="participant_id")
    cases = problems(lambda: validate_responses(responses, "tas4", id_col="participant_id"))
    assert cases["row"].tolist() == [2, 4, 3, 5]  # without a wave, P01 repeats too
    assert "--wave-col" in cases["reason"].iloc[0]
    cases = problems(
        lambda: validate_responses(responses, "tas4", id_col="participant_id", wave_col="wave")
    )
    assert cases["row"].tolist() == [3, 5]
    assert cases["value"].tolist() == ["P02", "P02"]
    assert "duplicate id 'P02' at wave 'pre': 2 rows (3, 5)" in cases["reason"].iloc[0]


def test_duplicate_ids_without_wave(tmp_path):
    frame = tas4_frame(id=["P1", "P2", "P1"])
    cases = problems(lambda: validate_responses(frame, "tas4"))
    assert cases["column"].tolist() == ["id", "id"]
    assert "(index 0)" in cases["reason"].iloc[0]
    assert cases["row"].isna().all()


def test_missing_id_column_and_missing_items():
    frame = tas4_frame().drop(columns=["id", "tas4_4"])
    cases = problems(lambda: validate_responses(frame, "tas4"))
    assert cases["column"].tolist() == ["participant_id", "tas4_4"]
    assert "missing id column" in cases["reason"].iloc[0]
    assert "missing item column of tas4" in cases["reason"].iloc[1]


def test_no_item_present_suggests_an_item_map():
    cases = problems(lambda: validate_responses(read_responses(RAW / "tas4_qcols.csv"), "tas4"))
    assert len(cases) == 1
    assert "none of the 4 item columns of tas4" in cases["reason"].iloc[0]
    assert "--item-map" in cases["reason"].iloc[0]
    # the Qualtrics matrix columns Q1_1 .. Q1_4 are numbered like the items: named, not assumed
    assert (
        "the export has columns Q1_1 ... Q1_4, numbered like them: if Q1_1 holds tas4_1 and so "
        "on, an item map with the lines 'Q1_1,tas4_1' ... 'Q1_4,tas4_4' renames them"
    ) in cases["reason"].iloc[0]


@pytest.mark.parametrize(
    "columns",
    [["Q1_1", "Q1_2", "Q1_3"], ["Q1_1", "Q1_2", "Q1_3", "Q1_4", "Q1_5"], ["a1", "a2", "a3", "a4"]],
)
def test_no_lookalike_hint_unless_one_set_is_numbered_exactly_like_the_items(columns):
    frame = pd.DataFrame({"id": ["P1"], **{c: [1.0] for c in columns}})
    if columns[0] == "a1":  # two sets numbered 1..4: which one is meant is not guessed
        frame = frame.assign(**{f"b{i}": [1.0] for i in range(1, 5)})
    reason = problems(lambda: validate_responses(frame, "tas4"))["reason"].iloc[0]
    assert "none of the 4 item columns of tas4" in reason and "numbered like them" not in reason


def test_unknown_instrument_and_malformed_key():
    frame = tas4_frame()
    cases = problems(lambda: validate_responses(frame, ["tas4", "no_such_scale"]))
    assert cases["value"].tolist() == ["no_such_scale"]
    assert "unknown instrument" in cases["reason"].iloc[0]
    cases = problems(lambda: validate_responses(frame, BAD / "key_malformed.toml"))
    assert "not valid TOML" in cases["reason"].iloc[0]
    cases = problems(lambda: validate_responses(frame, BAD / "key_unknown_items.toml"))
    assert "c3_9" in cases["value"].tolist()


def test_empty_id_and_wave(tmp_path):
    responses = read_responses(BAD / "blank_id.csv")
    cases = problems(lambda: validate_responses(responses, "tas4"))
    assert cases[["row", "column"]].values.tolist() == [[4, "id"]]
    assert cases["reason"].iloc[0] == "empty id"
    frame = tas4_frame(wave=["pre", "", None])
    cases = problems(lambda: validate_responses(frame, "tas4", wave_col="wave"))
    assert cases["column"].tolist() == ["wave", "wave"]


# ----------------------------------------------------------------- everything at once


def test_every_problem_is_reported_together(tmp_path):
    path = tmp_path / "many.csv"
    path.write_text(
        "id,tas4_1,tas4_2,tas4_3\nP1,4,5,3\nP2,two,5,9\n,1,2.5,3\nP2,1,1,-99\n",
        encoding="utf-8",
    )
    cases = problems(lambda: validate_responses(read_responses(path), ["tas4", "nope"]))
    got = {
        (None if pd.isna(row) else int(row), column if isinstance(column, str) else None)
        for row, column in zip(cases["row"], cases["column"], strict=True)
    }
    assert got == {
        (None, None),  # unknown instrument
        (4, "id"),  # empty id
        (3, "id"),  # duplicate P2 ...
        (5, "id"),  # ... on rows 3 and 5
        (None, "tas4_4"),  # missing item column
        (3, "tas4_1"),  # text
        (3, "tas4_3"),  # 9 > 5
        (4, "tas4_2"),  # 2.5
        (5, "tas4_3"),  # -99
    }
    assert len(cases) == 9
    assert str(path) in str(cases["file"].dropna().iloc[0])


# ----------------------------------------------------------------- parameters and helper


def test_parameter_errors():
    with pytest.raises(InvalidParameterError, match="`responses`"):
        validate_responses([1, 2], "tas4")
    with pytest.raises(InvalidParameterError, match="`instruments`"):
        validate_responses(tas4_frame(), 3)
    with pytest.raises(InvalidParameterError, match="`id_col`"):
        validate_responses(tas4_frame(), "tas4", id_col=1)


def test_inputs_not_mutated():
    frame = tas4_frame(tas4_1=[1.0, 9.0, 3.0])
    before = frame.copy()
    with pytest.raises(InputValidationError):
        validate_responses(frame, "tas4")
    pd.testing.assert_frame_equal(frame, before)


def test_failure_collector():
    failures = FailureCollector()
    failures.raise_if_any("nothing")  # no problem: no error
    assert not failures and len(failures) == 0
    failures.add("a.csv", 2, "x", 7, "bad x")
    failures.add("a.csv", None, None, None, "file problem")
    other = pd.DataFrame(
        [{"file": "b.csv", "row": 5.0, "column": "y", "value": "z", "reason": "r"}]
    )
    failures.extend(other)
    frame = failures.to_frame()
    assert list(frame.columns) == FAILURE_COLUMNS
    assert str(frame["row"].dtype) == "Int64"
    assert frame["row"].tolist()[0] == 2 and frame["row"].tolist()[2] == 5
    assert pd.isna(frame["row"].iloc[1])
    with pytest.raises(InputValidationError, match="checking: 3 problems") as err:
        failures.raise_if_any("checking")
    assert err.value.failure_cases["reason"].tolist() == ["bad x", "file problem", "r"]
