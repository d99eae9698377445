"""Tests of surveys/readers/: every format, the Qualtrics flags, item maps, missing codes.

The expected values are the cells written in the test files (tests/data/raw, tests/data/bad)
or in the fixtures below.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from surveys._errors import DataQualityWarning, InputValidationError, InvalidParameterError
from surveys.readers import Responses, read_responses
from surveys.validation import validate_responses

DATA = Path(__file__).resolve().parents[1] / "data"
RAW = DATA / "raw"
BAD = DATA / "bad"
TAS4 = ["tas4_1", "tas4_2", "tas4_3", "tas4_4"]


def failure(err: pytest.ExceptionInfo) -> pd.DataFrame:
    return err.value.failure_cases


# ----------------------------------------------------------------- plain CSV


def test_csv_values_rows_and_types():
    responses = read_responses(RAW / "tas4_small.csv")
    assert isinstance(responses, Responses)
    data = responses.data
    assert list(data.columns) == ["id", *TAS4, "comment"]
    assert data["id"].tolist() == ["P01", "P02", "P03", "P04"]
    expected = np.array([[4, 5, 3, 4], [2, 1, 2, 3], [5, 5, 4, np.nan], [1, 2, 1, 1]])
    np.testing.assert_array_equal(data[TAS4].to_numpy(dtype=float), expected)
    assert all(data[c].dtype == float for c in TAS4)
    assert data["comment"].tolist()[0] == "likes reading"
    assert pd.isna(data["comment"].iloc[1])
    assert responses.row_numbers.tolist() == [2, 3, 4, 5]
    assert responses.row_numbers.index.equals(data.index)
    assert responses.source == str(RAW / "tas4_small.csv")
    assert responses.excluded.empty
    assert list(responses.excluded.columns) == ["file", "row", "rule", "reason"]
    assert responses.meta["format"] == "csv"
    assert responses.meta["n_rows_read"] == 4


def test_ids_keep_their_labels(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("id,wave,tas4_1\n007,1,4\n 12 ,2,3\n", encoding="utf-8")
    data = read_responses(path, wave_col="wave").data
    assert data["id"].tolist() == ["007", "12"]
    assert data["wave"].tolist() == ["1", "2"]


def test_text_is_kept_not_coerced(tmp_path):
    path = tmp_path / "text.csv"
    path.write_text("id,a,b,c\nP1,three,2.5,3\nP2,4,3,5\nP3,,NA,3,5\n", encoding="utf-8")
    with pytest.raises(InputValidationError):  # ragged row 4
        read_responses(path)
    path.write_text('id,a,b,c\nP1,three,2.5,3\nP2,4,3,"3,5"\nP3,,NA,inf\n', encoding="utf-8")
    data = read_responses(path).data
    assert data["a"].dtype == object
    assert data["a"].tolist()[:2] == ["three", 4.0]
    assert pd.isna(data["a"].iloc[2])
    assert data["b"].dtype == float
    assert data["b"].tolist()[:2] == [2.5, 3.0]
    assert pd.isna(data["b"].iloc[2])  # NA is missing
    assert data["c"].tolist() == [3.0, "3,5", "inf"]


def test_blank_lines_are_counted_but_skipped(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_text("id,a\nP1,1\n\nP2,2\n", encoding="utf-8")
    responses = read_responses(path)
    assert responses.data["id"].tolist() == ["P1", "P2"]
    assert responses.row_numbers.tolist() == [2, 4]


def test_quoted_line_break_counts_as_one_row(tmp_path):
    path = tmp_path / "multiline.csv"
    path.write_text('id,note,a\nP1,"two\nlines",1\nP2,x,2\n', encoding="utf-8")
    responses = read_responses(path)
    assert responses.data["note"].tolist() == ["two\nlines", "x"]
    assert responses.row_numbers.tolist() == [2, 3]


def test_utf8_bom_is_stripped():
    data = read_responses(RAW / "tas4_bom.csv").data
    assert list(data.columns) == ["id", *TAS4]
    assert data["tas4_2"].tolist() == [5.0, 1.0]


def test_latin1_is_refused_with_offset_and_line():
    with pytest.raises(InputValidationError) as err:
        read_responses(BAD / "latin1_bytes.csv")
    cases = failure(err)
    assert len(cases) == 1
    assert cases["row"].iloc[0] == 3
    reason = cases["reason"].iloc[0]
    raw = (BAD / "latin1_bytes.csv").read_bytes()
    offset = raw.index(bytes([0xE9]))
    assert f"byte offset {offset}" in reason
    assert "0xE9" in reason and "UTF-8" in reason and "re-save" in reason


def test_latin1_reads_with_explicit_encoding():
    data = read_responses(BAD / "latin1_bytes.csv", encoding="latin-1").data
    assert data["comment"].tolist()[1] == "caf\u00e9"


def test_wrong_delimiter_is_named_and_the_header_decides_by_default():
    with pytest.raises(InputValidationError) as err:
        read_responses(BAD / "semicolon_delimiter.csv", delimiter=",")
    assert "delimiter looks wrong" in failure(err)["reason"].iloc[0]
    assert "semicolon" in failure(err)["reason"].iloc[0]
    responses = read_responses(BAD / "semicolon_delimiter.csv")
    assert responses.meta["delimiter"] == ";"
    assert list(responses.data.columns) == ["id", *TAS4]
    assert responses.data["tas4_1"].tolist() == [4.0, 2.0]


def test_utf16_with_bom_tabs_and_decimal_commas(tmp_path):
    text = "id\ttas4_1\ttas4_2\nP01\t4\t5\nP02\t2\t1\n"
    path = tmp_path / "unicode.txt"
    path.write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    responses = read_responses(path, format="csv")
    assert responses.meta["encoding"] == "utf-16-le"
    assert responses.meta["delimiter"] == "\t"
    assert responses.data["tas4_2"].tolist() == [5.0, 1.0]
    path = tmp_path / "euro.csv"
    path.write_text("id;tas4_1;weight\nP01;4;2,5\nP02;2;1,25\n", encoding="utf-8")
    assert read_responses(path).data["weight"].tolist() == ["2,5", "1,25"]
    assert read_responses(path, decimal=",").data["weight"].tolist() == [2.5, 1.25]


def test_offset_after_a_utf8_bom_counts_the_bom(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfid,tas4_1\nP\xe901,4\n")
    with pytest.raises(InputValidationError) as err:
        read_responses(path)
    assert "byte offset 14 (line 2)" in failure(err)["reason"].iloc[0]


@pytest.mark.parametrize(
    ("name", "row", "phrase"),
    [
        ("empty.csv", None, "empty"),
        ("header_only.csv", 1, "no data rows"),
        ("duplicate_columns.csv", 1, "used 2 times"),
        ("ragged_row.csv", 3, "6 fields but the header has 5"),
        ("unclosed_quote.csv", 3, "unclosed or stray quote"),
        (
            "missing_id_column.csv",
            1,
            "id column 'participant_id' is missing (nor is there one named 'id')",
        ),
    ],
)
def test_structural_problems(name, row, phrase):
    with pytest.raises(InputValidationError) as err:
        read_responses(BAD / name)
    cases = failure(err)
    assert len(cases) == 1
    assert phrase in cases["reason"].iloc[0]
    assert (pd.isna(cases["row"].iloc[0]) and row is None) or cases["row"].iloc[0] == row
    assert cases["file"].iloc[0] == str(BAD / name)


def test_missing_wave_column():
    with pytest.raises(InputValidationError) as err:
        read_responses(BAD / "wave_column_missing.csv", id_col="participant_id", wave_col="wave")
    cases = failure(err)
    assert cases["column"].tolist() == ["wave"]
    assert "participant_id" in cases["reason"].iloc[0]  # lists the columns found


def test_unnamed_empty_columns_are_dropped_unnamed_filled_ones_refused(tmp_path):
    path = tmp_path / "trailing.csv"
    path.write_text("id,a,\nP1,1,\nP2,2,\n", encoding="utf-8")
    assert list(read_responses(path).data.columns) == ["id", "a"]
    path.write_text("id,a,\nP1,1,x\n", encoding="utf-8")
    with pytest.raises(InputValidationError, match="column 3 has values but no name"):
        read_responses(path)


# ----------------------------------------------------------------- Qualtrics

QUALTRICS = RAW / "qualtrics_tas4.csv"


def test_qualtrics_is_recognised_and_flags_raise_by_default():
    with pytest.raises(InputValidationError) as err:
        read_responses(QUALTRICS, id_col="participant_id")
    cases = failure(err)
    # row 5 is the preview (Status and DistributionChannel say so), row 7 is unfinished
    assert cases["row"].tolist() == [5, 7]
    assert cases["column"].tolist() == ["Status", "Finished"]
    assert cases["value"].tolist() == ["Survey Preview", "False"]
    assert "survey preview" in cases["reason"].iloc[0]
    assert "unfinished" in cases["reason"].iloc[1]
    assert "--exclude-flagged" in cases["reason"].iloc[0]


def test_qualtrics_exclude_records_exclusions():
    responses = read_responses(QUALTRICS, id_col="participant_id", flagged="exclude")
    assert responses.meta["format"] == "qualtrics"
    assert responses.data["participant_id"].tolist() == ["P01", "P02", "P04"]
    assert responses.row_numbers.tolist() == [4, 6, 8]
    excluded = responses.excluded
    assert excluded["row"].tolist() == [5, 7]
    assert excluded["file"].tolist() == [str(QUALTRICS)] * 2
    assert "survey preview" in excluded["reason"].iloc[0]
    assert "unfinished" in excluded["reason"].iloc[1]
    assert responses.meta["n_excluded"] == 2
    assert responses.meta["n_rows_read"] == 5
    assert responses.meta["question_text"]["Q1_2"] == "Absorption - item 2"
    assert responses.meta["import_ids"]["Q1_2"] == "QID1_2"
    assert responses.meta["import_ids"]["StartDate"] == "startDate"
    np.testing.assert_array_equal(responses.data["Q1_1"], [4.0, 2.0, 1.0])


def test_qualtrics_keep_marks_rows():
    data = read_responses(QUALTRICS, id_col="participant_id", flagged="keep").data
    assert data["_flagged"].tolist() == [False, True, False, True, False]
    assert data["_flag_reason"].iloc[0] == ""
    assert "survey preview" in data["_flag_reason"].iloc[1]
    assert data["_flagged"].dtype == bool


def _qualtrics_row(tmp_path, status, finished, channel):
    """Write the first response of the Qualtrics fixture with the given flag cells."""
    lines = QUALTRICS.read_text(encoding="utf-8").splitlines()
    row = lines[3].split(",")
    row[2], row[6], row[9] = status, finished, channel
    path = tmp_path / "export.csv"
    path.write_text("\n".join([*lines[:3], ",".join(row)]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("status", "channel", "finished", "reason"),
    [
        ("1", "anonymous", "1", "survey preview"),
        ("2", "anonymous", "1", "survey test (Status 2 = Survey Test)"),
        ("2.0", "anonymous", "True", "survey test (Status 2 = Survey Test)"),
        ("9", "anonymous", "1", "survey preview, spam"),
        ("12", "anonymous", "1", "spam (Status 12 = Imported Spam)"),
        ("17", "anonymous", "1", "survey preview (Status 17"),
        ("Offline Survey Preview", "anonymous", "1", "survey preview (Status 17"),
        ("0", "anonymous", "Nein", "unfinished"),
        ("0", "anonymous", "False", "unfinished"),
        ("0", "test", "1", "survey test"),
        ("Survey Test", "anonymous", "True", "survey test"),
        ("8", "anonymous", "1", "spam"),
        ("Spam", "anonymous", "True", "spam"),
        ("0", "anonymous", "0", "unfinished"),
    ],
)
def test_qualtrics_flag_codes(tmp_path, status, channel, finished, reason):
    path = _qualtrics_row(tmp_path, status, finished, channel)
    responses = read_responses(path, id_col="participant_id", flagged="keep")
    assert responses.data["_flagged"].tolist() == [True]
    assert reason in responses.data["_flag_reason"].iloc[0]


@pytest.mark.parametrize("status", ["0", "IP Address", "4", "Imported", "16", "Offline"])
@pytest.mark.parametrize("finished", ["1", "True", "true", "yes", "Ja", "1.0"])
def test_qualtrics_kept_rows(tmp_path, status, finished):
    path = _qualtrics_row(tmp_path, status, finished, "anonymous")
    responses = read_responses(path, id_col="participant_id", flagged="keep")
    assert responses.data["_flagged"].tolist() == [False]


@pytest.mark.parametrize(
    ("status", "finished", "column"),
    [
        ("3", "1", "Status"),
        ("Deleted", "1", "Status"),
        ("0", "maybe", "Finished"),
        ("0", "2", "Finished"),
    ],
)
def test_qualtrics_unknown_flag_values_are_refused(tmp_path, status, finished, column):
    path = _qualtrics_row(tmp_path, status, finished, "anonymous")
    with pytest.raises(InputValidationError) as err:
        read_responses(path, id_col="participant_id", flagged="exclude")
    case = failure(err).iloc[0]
    assert (case["row"], case["column"]) == (4, column)
    assert "unknown" in case["reason"]


def test_qualtrics_explicit_csv_format_reads_header_rows_as_rows_and_judges_their_flags():
    # read as a plain CSV, the question-text and ImportId rows are rows: their Status and
    # Finished cells are judged like any response's, and refused, never scored
    with pytest.raises(InputValidationError) as caught:
        read_responses(QUALTRICS, format="csv", id_col="participant_id")
    cases = caught.value.failure_cases
    assert cases["row"].tolist() == [2, 2, 3, 3]
    assert cases["column"].tolist() == ["Status", "Finished"] * 2
    assert cases["value"].tolist()[2:] == ['{"ImportId":"status"}', '{"ImportId":"finished"}']
    assert cases["reason"].str.contains("read as Qualtrics writes them").all()


def test_plain_csv_as_qualtrics_is_refused():
    with pytest.raises(InputValidationError, match="not a Qualtrics export"):
        read_responses(BAD / "plain_csv_as_qualtrics.csv", format="qualtrics")


def test_qualtrics_with_item_map_and_missing_codes_leaves_metadata_alone():
    mapping = {f"Q1_{k}": f"tas4_{k}" for k in range(1, 5)}
    original = dict(mapping)
    responses = read_responses(
        QUALTRICS,
        id_col="participant_id",
        item_map=mapping,
        missing_codes=[300, 1],
        flagged="exclude",
    )
    assert mapping == original  # not mutated
    data = responses.data
    assert TAS4 == [c for c in data.columns if c.startswith("tas4_")]
    # Duration (in seconds) is 300 everywhere: a metadata column, so not a missing code
    assert data["Duration (in seconds)"].tolist() == [300.0] * 3
    # code 1: P02 answered 1 to item 2, P04 answered 1 to items 1, 3 and 4
    assert responses.meta["missing_codes"] == {"tas4_1": 1, "tas4_2": 1, "tas4_3": 1, "tas4_4": 1}
    assert data.loc[2, TAS4].isna().tolist() == [True, False, True, True]
    assert responses.meta["question_text"]["tas4_1"] == "Absorption - item 1"


# ----------------------------------------------------------------- item maps


def test_item_map_file():
    responses = read_responses(RAW / "tas4_qcols.csv", item_map=RAW / "tas4_qcols_map.csv")
    assert list(responses.data.columns) == ["id", *TAS4, "Q2"]
    assert responses.data["tas4_3"].tolist() == [3.0, 2.0]
    assert responses.meta["item_map"]["Q1_3"] == "tas4_3"


def test_item_map_entries_the_export_lacks_are_listed_not_fatal():
    # one map may serve several exports; what an instrument then misses is validation's to say
    responses = read_responses(RAW / "tas4_qcols.csv", item_map=BAD / "item_map_unknown_column.csv")
    assert responses.meta["item_map_unmatched"] == ["Q4_4"]
    assert list(responses.data.columns) == ["id", "tas4_1", "tas4_2", "tas4_3", "Q1_4", "Q2"]
    with pytest.raises(InputValidationError) as err:
        validate_responses(responses, ["tas4"], id_col="id")
    cases = failure(err)
    assert cases["column"].tolist() == ["Q4_4 (tas4_4)"]
    assert "the item map names the column 'Q4_4'" in cases["reason"].iloc[0]


def test_item_map_collision_and_duplicates(tmp_path):
    with pytest.raises(InputValidationError, match="after renaming, 2 columns"):
        read_responses(RAW / "tas4_qcols.csv", item_map={"Q2": "Q1_1"})
    path = tmp_path / "map.csv"
    path.write_text("column,item\nQ1_1,tas4_1\nQ1_1,tas4_2\nQ1_2,tas4_1\nQ1_3,\n", "utf-8")
    with pytest.raises(InputValidationError) as err:
        read_responses(RAW / "tas4_qcols.csv", item_map=path)
    assert failure(err)["row"].tolist() == [3, 4, 5]
    path.write_text("from,to\nQ1_1,tas4_1\n", "utf-8")
    with pytest.raises(InputValidationError, match="'column'"):
        read_responses(RAW / "tas4_qcols.csv", item_map=path)
    with pytest.raises(InvalidParameterError, match="same item id"):
        read_responses(RAW / "tas4_qcols.csv", item_map={"Q1_1": "x", "Q1_2": "x"})


# ----------------------------------------------------------------- missing codes


def test_missing_codes_numeric_and_string_forms_agree():
    numeric = read_responses(RAW / "tas4_minus99.csv", missing_codes=[-99])
    text = read_responses(RAW / "tas4_minus99.csv", missing_codes=["-99"])
    pd.testing.assert_frame_equal(numeric.data, text.data)
    assert numeric.meta["missing_codes"] == {"tas4_1": 1, "tas4_2": 1, "tas4_3": 1}
    assert int(numeric.data[TAS4].isna().sum().sum()) == 3
    kept = read_responses(RAW / "tas4_minus99.csv")
    assert kept.data.loc[0, "tas4_2"] == -99.0
    assert kept.meta["missing_codes"] == {}


def test_text_missing_code_and_id_column_untouched(tmp_path):
    path = tmp_path / "codes.csv"
    path.write_text("id,a,b\nn/a,n/a,1\nP2,2,n/a\n", encoding="utf-8")
    responses = read_responses(path, missing_codes=["n/a"])
    assert responses.data["id"].tolist() == ["n/a", "P2"]
    assert responses.data["a"].dtype == float
    assert responses.meta["missing_codes"] == {"a": 1, "b": 1}


# ----------------------------------------------------------------- xlsx and sav


@pytest.fixture
def xlsx_path(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["id", "tas4_1", "tas4_2", "note"])
    sheet.append([7, 4, 5, "ok"])
    sheet.append(["P2", 2, "three", None])
    sheet.append([None, None, None, None])
    sheet.append(["P4", 1.0, None, 3.5])
    path = tmp_path / "wave1.xlsx"
    workbook.save(path)
    return path


def test_xlsx(xlsx_path):
    responses = read_responses(xlsx_path)
    data = responses.data
    assert responses.meta["format"] == "xlsx"
    assert data["id"].tolist() == ["7", "P2", "P4"]
    assert data["tas4_1"].tolist() == [4.0, 2.0, 1.0]
    assert data["tas4_2"].tolist()[:2] == [5.0, "three"]
    assert pd.isna(data["tas4_2"].iloc[2])
    assert responses.row_numbers.tolist() == [2, 3, 5]  # spreadsheet rows; row 4 is empty


def test_xlsx_that_is_not_a_workbook():
    with pytest.raises(InputValidationError, match="cannot be read as an Excel"):
        read_responses(BAD / "not_a_workbook.xlsx")


@pytest.fixture
def sav_path(tmp_path):
    pyreadstat = pytest.importorskip("pyreadstat")
    frame = pd.DataFrame(
        {
            "id": [1.0, 2.0, 3.0],
            "wave": ["pre", "pre", "pre"],
            "who5_1": [3.0, np.nan, 5.0],
            "who5_2": [0.0, 1.0, 2.0],
        }
    )
    path = tmp_path / "pre.sav"
    pyreadstat.write_sav(frame, str(path))
    return path


def test_sav(sav_path):
    responses = read_responses(sav_path, wave_col="wave")
    data = responses.data
    assert responses.meta["format"] == "sav"
    assert data["id"].tolist() == ["1", "2", "3"]
    assert data["wave"].tolist() == ["pre"] * 3
    np.testing.assert_array_equal(data["who5_1"], [3.0, np.nan, 5.0])
    assert data["who5_2"].tolist() == [0.0, 1.0, 2.0]
    assert responses.row_numbers.tolist() == [2, 3, 4]


def test_sav_without_pyreadstat_names_the_extra(sav_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyreadstat", None)
    with pytest.raises(ImportError, match=r"empathic-longitudinal\[readers\]"):
        read_responses(sav_path)


# ----------------------------------------------------------------- parameters


def test_format_inference_and_parameter_errors(tmp_path):
    with pytest.raises(InvalidParameterError, match="format="):
        read_responses(tmp_path / "export.json")
    old = tmp_path / "old.xls"
    old.write_bytes(b"x")
    with pytest.raises(InputValidationError, match=r"\.xls format is not supported"):
        read_responses(old)
    with pytest.raises(InvalidParameterError, match="`flagged`"):
        read_responses(RAW / "tas4_small.csv", flagged="drop")
    with pytest.raises(InvalidParameterError, match="`format`"):
        read_responses(RAW / "tas4_small.csv", format="json")
    with pytest.raises(InvalidParameterError, match="`missing_codes`"):
        read_responses(RAW / "tas4_small.csv", missing_codes=-99)
    with pytest.raises(InvalidParameterError, match="`encoding`"):
        read_responses(RAW / "tas4_small.csv", encoding="no-such-codec")
    with pytest.raises(FileNotFoundError):
        read_responses(tmp_path / "missing.csv")


# ----------------------------------------------------------------- workbooks: sheets, formulas


def _workbook(path, sheets):
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for values in rows:
            sheet.append(values)
    workbook.save(path)
    return path


def test_workbook_with_data_on_two_sheets_needs_a_sheet(tmp_path):
    first = [["id", "tas4_1"], ["P1", 4], ["P2", 3]]
    path = _workbook(tmp_path / "w.xlsx", {"wave1": first, "more": [["id", "tas4_1"], ["P3", 1]]})
    with pytest.raises(InputValidationError) as err:
        read_responses(path)
    assert "'wave1', 'more'" in failure(err)["reason"].iloc[0]
    assert "--sheet" in failure(err)["reason"].iloc[0]
    with pytest.warns(DataQualityWarning, match="'wave1' also hold data"):
        assert read_responses(path, sheet="more").data["id"].tolist() == ["P3"]
    with pytest.raises(InputValidationError, match="no sheet 'nope'"):
        read_responses(path, sheet="nope")


def test_workbook_formula_without_saved_value_is_refused(tmp_path):
    path = _workbook(tmp_path / "f.xlsx", {"data": [["id", "tas4_1"], ["P1", "=2+2"]]})
    with pytest.raises(InputValidationError) as err:
        read_responses(path)
    case = failure(err).iloc[0]
    assert (case["row"], case["column"], case["value"]) == (2, "tas4_1", "=2+2")
    assert "cell B2" in case["reason"]


def test_ids_shown_with_leading_zeros_stay_labels(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["id", "tas4_1"])
    for pid, answer in ((7, 4), (12, 3)):
        sheet.append([pid, answer])
        sheet.cell(row=sheet.max_row, column=1).number_format = "000"
    workbook.save(tmp_path / "ids.xlsx")
    assert read_responses(tmp_path / "ids.xlsx").data["id"].tolist() == ["007", "012"]
    path = tmp_path / "ids.csv"
    path.write_text("id,tas4_1\n007,4\n012,3\n", encoding="utf-8")
    assert read_responses(path).data["id"].tolist() == ["007", "012"]
    pyreadstat = pytest.importorskip("pyreadstat")
    frame = pd.DataFrame({"id": [7.0, 12.0], "tas4_1": [4.0, 3.0]})
    pyreadstat.write_sav(frame, str(tmp_path / "ids.sav"), variable_format={"id": "N3"})
    assert read_responses(tmp_path / "ids.sav").data["id"].tolist() == ["007", "012"]


def test_id_labels_are_read_column_wise_unless_a_cell_has_edges_to_trim():
    import pyarrow as pa

    from surveys.readers.text import _arrow_labels

    labels = _arrow_labels(pa.chunked_array([["P1", "NA", "", "007", "P 4"]]))
    assert labels.tolist() == ["P1", None, None, "007", "P 4"]
    for edge in (" P1", "P1\t", "Zoë", "\u00a0P1", "P1\x1c"):
        assert _arrow_labels(pa.chunked_array([["P2", edge]])) is None


@pytest.mark.parametrize(
    "text",
    [
        "id,tas4_1,tas4_2\n007,4,5\n7,+2,1.\n008,.5,1e0\n",
        '"id","tas4_1","tas4_2"\n007,4,5\n7,"2",1\n',
        '"id","tas4_1","tas4_2"\nP1,4,5\n',
        "id,tas4_1,tas4_2\r\nP1,4,NA\r\nP2,,-99\r\n",
        "id,tas4_1,tas4_2\nP1,inf,3\nP2, 4,n/a\n",
        "id,tas4_1,tas4_2\nP1,4,3\n , , \nP3,2,2\n",
        "id;tas4_1;tas4_2\nP1;4;3\nP2;2;nan\n",
        "id\ttas4_1\ttas4_2\nP1\t4\t0x1\nP2\t2\t1_0\n",
        'id,tas4_1,tas4_2\n"P1"," 4 ",\x1c3\n"P2","-99",\u20073\n',
        "id,tas4_1,tas4_2\nP1,4,3\nNA,2,2\n,1,1\nP 4,5,5\n",  # ids read column-wise
        "id,tas4_1,tas4_2\n P1 ,4,3\nMüller,2,2\n\u00a0P3,1,1\nP4\x1c,5,5\n",  # cell by cell
    ],
)
def test_column_wise_reader_agrees_with_the_record_reader(tmp_path, monkeypatch, text):
    path = tmp_path / "export.csv"
    path.write_text(text, encoding="utf-8", newline="")
    fast = read_responses(path, missing_codes=[-99, "n/a"])
    import surveys.readers.read as reading  # where read_responses looks the readers up

    monkeypatch.setattr(reading, "_read_csv_fast", lambda *args: None)
    records = read_responses(path, missing_codes=[-99, "n/a"])
    monkeypatch.setattr(reading, "_text_numbers", lambda *args: None)
    cells = read_responses(path, missing_codes=[-99, "n/a"])
    for other in (records, cells):
        pd.testing.assert_frame_equal(fast.data, other.data)
        pd.testing.assert_series_equal(fast.row_numbers, other.row_numbers)
        assert fast.meta == other.meta
