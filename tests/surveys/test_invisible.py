"""Invisible characters in the column names and ids of DataFrames given to the public API."""

from __future__ import annotations

import pandas as pd
import pytest

from surveys import InputValidationError
from surveys._invisible import invisible_problems
from surveys.scoring import score
from surveys.validation import validate_responses


def _tas4(ids, **renames):
    data = pd.DataFrame(
        {
            "id": ids,
            "tas4_1": [4, 2, 3],
            "tas4_2": [5, 1, 2],
            "tas4_3": [3, 2, 4],
            "tas4_4": [4, 3, 2],
        }
    )
    return data.rename(columns=renames)


def test_score_names_an_invisible_character_in_a_column_name():
    data = _tas4(["P1", "P2", "P3"], tas4_2="tas4_2\u200b")
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4")
    cases = info.value.failure_cases
    assert cases["column"].tolist() == ["tas4_2\u200b"]
    assert "U+200B ZERO WIDTH SPACE" in cases.loc[0, "reason"]
    assert "score: column names or ids hold invisible characters" in str(info.value)


def test_score_names_every_id_holding_one_with_its_line():
    data = _tas4(["P1", "P2\ufeff", "P\x003"])
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4", source_file="export.csv")
    cases = info.value.failure_cases
    assert cases["row"].tolist() == [3, 4]  # lines of a plain CSV: header is line 1
    assert cases["file"].tolist() == ["export.csv", "export.csv"]
    assert cases["value"].tolist() == ["P2\ufeff", "P\x003"]
    assert "U+FEFF ZERO WIDTH NO-BREAK SPACE" in cases.loc[0, "reason"]
    assert "U+0000 NULL" in cases.loc[1, "reason"]


def test_validate_responses_reports_them_with_every_other_problem():
    data = _tas4(["P1", "P2\u200d", "P3"]).set_axis([10, 11, 12])
    data.loc[12, "tas4_1"] = 9  # outside 1-5
    with pytest.raises(InputValidationError) as info:
        validate_responses(data, "tas4")
    reasons = info.value.failure_cases["reason"].tolist()
    assert any("U+200D ZERO WIDTH JOINER" in r and "(index 11)" in r for r in reasons), reasons
    assert any("outside the declared range" in r for r in reasons), reasons


def test_clean_frames_and_numeric_ids_give_no_problem():
    assert invisible_problems(_tas4(["P1", "P2", "P3"]), id_cols=["id"]) == []
    assert invisible_problems(_tas4([1, 2, 3]), id_cols=["id", None, "absent"]) == []
