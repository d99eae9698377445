"""Tests of the `longitudinal score` and `longitudinal instruments` commands (longitudinal/cli/).

The bad-input corpus is tests/data/bad/: every file there has a case below, and each case
must end with exit code 2, one error message naming the row and column where there is one,
no traceback, and no output file. Reference scores and alphas for the good long file come
from tests/longitudinal/reference/cli_score.R (psych 2.2.9).
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from longitudinal.cli import COMMANDS, main
from surveys.readers import read_responses
from surveys.scoring import score

DATA = Path(__file__).resolve().parents[2] / "data"
RAW = DATA / "raw"
BAD = DATA / "bad"
REFERENCE = Path(__file__).resolve().parents[1] / "reference"


def run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ----------------------------------------------------------------- bad-input corpus

# file in tests/data/bad -> (arguments, expected row, expected column, phrase in the message)
# "{bad}" is the corpus file; the raw export comes first unless the corpus file is a key or map.
TAS4 = ["--instrument", "tas4"]
PID = ["--id-col", "participant_id"]
CORPUS = {
    "text_in_item.csv": (["{bad}", *TAS4], 3, "tas4_2", "text in a numeric item"),
    "out_of_range_6.csv": (["{bad}", *TAS4], 4, "tas4_3", "outside the declared range 1-5"),
    "who5_out_of_range.csv": (
        ["{bad}", "--instrument", "who5"],
        3,
        "who5_5",
        "outside the declared range 0-5",
    ),
    "duplicate_id_wave.csv": (
        ["{bad}", *TAS4, *PID, "--wave-col", "wave"],
        3,
        "participant_id",
        "duplicate id 'P02' at wave 'pre'",
    ),
    "empty.csv": (["{bad}", *TAS4], None, None, "the file is empty"),
    "header_only.csv": (["{bad}", *TAS4], 1, None, "no data rows"),
    "semicolon_delimiter.csv": (
        ["{bad}", *TAS4, "--delimiter", ","],
        1,
        None,
        "delimiter looks wrong",
    ),
    # The BOM itself is fine (tests/data/raw/tas4_bom.csv reads); this file is broken by its
    # "n/a" cell, and the message naming column 'id' correctly shows the BOM was stripped.
    "bom_text_in_item.csv": (["{bad}", *TAS4], 2, "tas4_1", "text in a numeric item"),
    "latin1_bytes.csv": (["{bad}", *TAS4], 3, None, "not valid UTF-8"),
    "missing_id_column.csv": (
        ["{bad}", *TAS4],
        1,
        "participant_id",
        "id column 'participant_id' is missing (nor is there one named 'id')",
    ),
    "wave_column_missing.csv": (
        ["{bad}", *TAS4, *PID, "--wave-col", "wave"],
        1,
        "wave",
        "wave column 'wave' is missing",
    ),
    "missing_item_column.csv": (["{bad}", *TAS4], None, "tas4_4", "missing item column"),
    "minus99_undeclared.csv": (["{bad}", *TAS4], 3, "tas4_1", "--missing-code -99"),
    "non_integer.csv": (["{bad}", "--instrument", "who5"], 2, "who5_3", "not a whole number"),
    "duplicate_columns.csv": (["{bad}", *TAS4], 1, "tas4_2", "used 2 times"),
    "blank_id.csv": (["{bad}", *TAS4], 4, "id", "empty id"),
    "ragged_row.csv": (["{bad}", *TAS4], 3, None, "6 fields but the header has 5"),
    "unclosed_quote.csv": (["{bad}", *TAS4], 3, None, "unclosed or stray quote"),
    "choice_text.csv": (["{bad}", *TAS4], 2, "tas4_1", "export numeric values"),
    "qualtrics_preview.csv": (["{bad}", *TAS4, *PID], 4, "Status", "survey preview"),
    "qualtrics_unfinished.csv": (["{bad}", *TAS4, *PID], 5, "Finished", "unfinished response"),
    "plain_csv_as_qualtrics.csv": (
        ["{bad}", *TAS4, "--format", "qualtrics"],
        3,
        None,
        "not a Qualtrics export",
    ),
    "not_a_workbook.xlsx": (["{bad}", *TAS4], None, None, "cannot be read as an Excel"),
    "key_unknown_items.toml": (
        [RAW / "custom3.csv", "--instrument", "{bad}"],
        None,
        "scales.warmth.items",
        "not declared in instrument.items",
    ),
    "key_malformed.toml": ([RAW / "custom3.csv", "--instrument", "{bad}"], None, None, "TOML"),
    "item_map_unknown_column.csv": (
        [RAW / "tas4_qcols.csv", *TAS4, "--item-map", "{bad}"],
        None,
        "Q4_4 (tas4_4)",
        "the item map names the column 'Q4_4' for it, which the export does not have",
    ),
}


def test_every_corpus_file_has_a_case():
    assert sorted(p.name for p in BAD.iterdir() if p.is_file()) == sorted(CORPUS)
    assert len(CORPUS) >= 15


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bad_input_exits_2_with_one_clear_message(name, tmp_path, capsys):
    args, row, column, phrase = CORPUS[name]
    args = [str(BAD / name) if a == "{bad}" else a for a in args]
    out, rel = tmp_path / "scores.csv", tmp_path / "alpha.csv"
    code, stdout, stderr = run(capsys, "score", *args, "--out", out, "--reliability", rel)
    assert code == 2
    assert "Traceback" not in stderr
    assert stderr.startswith("error: ")
    assert stderr.count("error: ") == 1
    assert phrase in stderr
    if row is not None:
        assert f"row {row}" in stderr
    if column is not None:
        assert f"column {column!r}" in stderr
    assert stdout == ""
    assert list(tmp_path.iterdir()) == []  # no output, no temporary file left behind


def test_failed_run_keeps_an_existing_output(tmp_path, capsys):
    out = tmp_path / "scores.csv"
    out.write_text("previous results\n", encoding="utf-8")
    code, _, _ = run(capsys, "score", BAD / "text_in_item.csv", *TAS4, "--out", out)
    assert code == 2
    assert out.read_text(encoding="utf-8") == "previous results\n"
    assert [p.name for p in tmp_path.iterdir()] == ["scores.csv"]


def test_unknown_instrument_is_listed_with_the_data_problems(tmp_path, capsys):
    code, _, stderr = run(
        capsys,
        "score",
        BAD / "text_in_item.csv",
        "--instrument",
        "tas4",
        "tas5",
        "--out",
        tmp_path / "s.csv",
    )
    assert code == 2
    assert "unknown instrument 'tas5'" in stderr
    assert "row 3, column 'tas4_2'" in stderr
    assert "(2 problems)" in stderr


@pytest.mark.parametrize(
    ("args", "phrase"),
    [
        (["score", "missing.csv", *TAS4, "--out", "x.csv"], "no such file"),
        (["score", RAW / "tas4_small.csv", *TAS4], "--out"),  # required option
        (["score", RAW / "tas4_small.csv", "--out", "x.csv"], "--instrument"),
        (["frobnicate"], "invalid choice"),
        ([], "COMMAND"),
    ],
)
def test_usage_errors_exit_2(args, phrase, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, stderr = run(capsys, *args)
    assert code == 2
    assert phrase in stderr
    assert "Traceback" not in stderr
    assert not (tmp_path / "x.csv").exists()


def test_unwritable_output_exits_2(tmp_path, capsys):
    out = tmp_path / "no_such_dir" / "scores.csv"
    code, _, stderr = run(capsys, "score", RAW / "tas4_small.csv", *TAS4, "--out", out)
    assert code == 2
    assert "error: cannot write --out" in stderr and "does not exist" in stderr
    assert "Traceback" not in stderr


def test_same_path_for_both_outputs(tmp_path, capsys):
    out = tmp_path / "s.csv"
    code, _, stderr = run(
        capsys, "score", RAW / "tas4_small.csv", *TAS4, "--out", out, "--reliability", out
    )
    assert code == 2
    assert "same file" in stderr


# ----------------------------------------------------------------- help


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help_with_an_example(command, capsys):
    code, stdout, _ = run(capsys, command, "--help")
    assert code == 0
    assert "example" in stdout
    assert f"longitudinal {command}" in stdout


def test_top_level_help_lists_commands(capsys):
    code, stdout, _ = run(capsys, "--help")
    assert code == 0
    for command in COMMANDS:
        assert command in stdout


# ----------------------------------------------------------------- good input


def read_reference(name):
    return pd.read_csv(REFERENCE / name, comment="#")


def test_scores_and_reliability_match_r(tmp_path, capsys):
    out, rel = tmp_path / "scores.csv", tmp_path / "alpha.csv"
    code, stdout, stderr = run(
        capsys,
        "score",
        RAW / "tas4_who5_long.csv",
        "--instrument",
        "tas4",
        "who5",
        "--id-col",
        "participant_id",
        "--wave-col",
        "wave",
        "--out",
        out,
        "--reliability",
        rel,
    )
    assert code == 0, stderr
    assert "360 scale scores" in stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alpha.csv", "scores.csv"]

    scores = pd.read_csv(out, dtype={"id": str, "wave": str})
    assert list(scores.columns) == [
        "id",
        "wave",
        "instrument",
        "scale",
        "score",
        "n_items",
        "n_answered",
    ]
    expected = read_reference("cli_score_scores.csv")
    merged = expected.merge(scores, on=["id", "wave", "instrument", "scale"], validate="1:1")
    assert len(merged) == len(expected) == 360
    # R writes 15 significant digits; the scores are means and sums of whole numbers
    np.testing.assert_allclose(merged["score_y"], merged["score_x"], rtol=1e-12)

    reliability = pd.read_csv(rel)
    assert list(reliability.columns) == [
        "instrument",
        "scale",
        "wave",
        "n",
        "alpha",
        "alpha_ci_low",
        "alpha_ci_high",
        "omega_total",
    ]
    expected = read_reference("cli_score_alpha.csv")
    merged = expected.merge(reliability, on=["instrument", "scale", "wave"], validate="1:1")
    assert len(merged) == 9
    assert (merged["n_x"] == merged["n_y"]).all()
    # psych::alpha raw_alpha, written with 15 significant digits
    np.testing.assert_allclose(merged["alpha_y"], merged["alpha_x"], rtol=1e-12)


def test_reliability_file_equals_the_library_result(tmp_path, capsys):
    # equivalence of the CLI path and the library path, through the CSV round trip
    rel = tmp_path / "alpha.csv"
    args = ["--id-col", "participant_id", "--wave-col", "wave"]
    code, _, stderr = run(
        capsys,
        "score",
        RAW / "tas4_who5_long.csv",
        *TAS4,
        *args,
        "--out",
        tmp_path / "s.csv",
        "--reliability",
        rel,
    )
    assert code == 0, stderr
    responses = read_responses(RAW / "tas4_who5_long.csv", id_col="participant_id")
    direct = score(responses.data, "tas4", id_col="participant_id", wave_col="wave").reliability
    written = pd.read_csv(rel, dtype={"wave": str})
    for column in ["alpha", "alpha_ci_low", "alpha_ci_high", "omega_total", "n"]:
        np.testing.assert_allclose(written[column], direct[column], rtol=1e-15)


def test_qualtrics_export_with_item_map_and_exclusions(tmp_path, capsys):
    item_map = tmp_path / "map.csv"
    item_map.write_text(
        "column,item\n" + "".join(f"Q1_{k},tas4_{k}\n" for k in range(1, 5)), encoding="utf-8"
    )
    out = tmp_path / "scores.csv"
    base = ["score", RAW / "qualtrics_tas4.csv", *TAS4, *PID, "--item-map", item_map]
    code, _, stderr = run(capsys, *base, "--out", out)
    assert code == 2  # flagged rows are refused unless excluded
    assert "row 5, column 'Status'" in stderr and "row 7, column 'Finished'" in stderr
    assert not out.exists()

    excl = tmp_path / "excluded.csv"
    code, stdout, stderr = run(
        capsys, *base, "--exclude-flagged", "--out", out, "--exclusions", excl
    )
    assert code == 0, stderr
    assert "left out 2 flagged row(s)" in stderr
    assert "row 5: survey preview" in stderr and "row 7: unfinished" in stderr
    log = pd.read_csv(excl, dtype=str)
    assert log["row"].tolist() == ["5", "7"]
    assert log["rule"].tolist() == ["Status=Survey Preview", "Finished=False"]
    scores = pd.read_csv(out, dtype={"id": str})
    assert scores["id"].tolist() == ["P01", "P02", "P04"]
    # means of the items written in the export: (4+5+3+4)/4, (2+1+2+3)/4, (1+2+1+1)/4
    np.testing.assert_allclose(scores["score"], [4.0, 2.0, 1.25], rtol=1e-15)


# A Qualtrics export saved without its two extra header rows (question text, ImportIds): its
# Status and Finished columns flag rows all the same, by label or by numeric code.
PLAIN_QUALTRICS = (
    "StartDate,Status,Finished,ResponseId,participant_id,tas4_1,tas4_2,tas4_3,tas4_4\n"
    "2024-01-01,IP Address,True,R_1,P01,4,3,2,2\n"
    "2024-01-01,Survey Preview,True,R_2,P02,4,3,2,3\n"
    "2024-01-01,0,False,R_3,P03,1,2,3,4\n"
    "2024-01-01,1,1,R_4,P04,1,2,3,4\n"
    "2024-01-01,0,1,R_5,P05,2,2,3,5\n"
)


def test_flagged_rows_of_a_plain_csv_with_qualtrics_columns_are_refused(tmp_path, capsys):
    raw = tmp_path / "export.csv"
    raw.write_text(PLAIN_QUALTRICS, encoding="utf-8")
    out = tmp_path / "scores.csv"
    code, _, stderr = run(capsys, "score", raw, *TAS4, *PID, "--out", out)
    assert code == 2, stderr
    assert "export.csv has 3 flagged Qualtrics rows" in stderr
    assert "row 3, column 'Status': survey preview (Status 1 = Survey Preview)" in stderr
    assert "row 4, column 'Finished': unfinished response" in stderr
    assert "row 5, column 'Status': survey preview" in stderr  # numeric code 1
    assert "--exclude-flagged" in stderr and "Traceback" not in stderr
    assert not out.exists()


def test_exclude_flagged_works_on_a_plain_csv_with_qualtrics_columns(tmp_path, capsys):
    raw = tmp_path / "export.csv"
    raw.write_text(PLAIN_QUALTRICS, encoding="utf-8")
    out, excl = tmp_path / "scores.csv", tmp_path / "excluded.csv"
    code, stdout, stderr = run(
        capsys, "score", raw, *TAS4, *PID, "--exclude-flagged", "--out", out, "--exclusions", excl
    )
    assert code == 0, stderr
    assert "left out 3 flagged row(s)" in stderr
    assert "row 3: survey preview (Status 1 = Survey Preview)" in stderr
    assert "row 4: unfinished response (Finished = false)" in stderr
    assert "row 5: survey preview (Status 1 = Survey Preview)" in stderr
    log = pd.read_csv(excl, dtype=str)
    assert log["row"].tolist() == ["3", "4", "5"]
    assert log["rule"].tolist() == ["Status=Survey Preview", "Finished=False", "Status=1"]
    scores = pd.read_csv(out, dtype={"id": str})
    assert scores["id"].tolist() == ["P01", "P05"]
    # tas4 is the mean of its four items: (4+3+2+2)/4 and (2+2+3+5)/4
    np.testing.assert_allclose(scores["score"], [11 / 4, 12 / 4], rtol=1e-15)
    assert "scored 2 response row(s)" in stdout


def test_a_lone_status_column_is_the_studys_own_and_an_unknown_flag_says_why(tmp_path, capsys):
    lone = tmp_path / "lone.csv"
    lone.write_text(
        "participant_id,Status,tas4_1,tas4_2,tas4_3,tas4_4\nP1,active,1,2,3,4\nP2,left,2,2,3,4\n",
        encoding="utf-8",
    )
    code, _, stderr = run(capsys, "score", lone, *TAS4, "--out", tmp_path / "a.csv")
    assert code == 0, stderr  # no other Qualtrics column: not Qualtrics' Status
    both = tmp_path / "both.csv"
    both.write_text(
        "participant_id,Status,Finished,tas4_1,tas4_2,tas4_3,tas4_4\nP1,active,True,1,2,3,4\n",
        encoding="utf-8",
    )
    code, _, stderr = run(capsys, "score", both, *TAS4, "--out", tmp_path / "b.csv")
    assert code == 2
    assert "row 2, column 'Status': unknown Qualtrics response type" in stderr
    assert "rename the column if it is the study's own" in stderr and "'active'" in stderr


def test_missing_codes(tmp_path, capsys):
    out = tmp_path / "scores.csv"
    raw = RAW / "tas4_minus99.csv"
    code, _, stderr = run(capsys, "score", raw, *TAS4, "--out", out)
    assert code == 2 and "--missing-code -99" in stderr
    code, _, stderr = run(capsys, "score", raw, *TAS4, "--missing-code", "-99", "--out", out)
    assert code == 0, stderr
    scores = pd.read_csv(out)
    # each respondent answered 3 of 4 items (0.8 x 4 rounds up to 4 required items: unscored)
    assert scores["n_answered"].tolist() == [3, 3, 3]
    assert scores["score"].isna().all()
    code, _, stderr = run(
        capsys, "score", raw, *TAS4, "--missing-code", "-99", "--min-valid", "3", "--out", out
    )
    assert code == 0, stderr
    # mean of the answered items: (4+3+4)/3, (2+1+3)/3, (5+4+5)/3
    np.testing.assert_allclose(pd.read_csv(out)["score"], [11 / 3, 2.0, 14 / 3], rtol=1e-15)


def test_xlsx_and_custom_key(tmp_path, capsys):
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["id", "c3_1", "c3_2", "c3_3"])
    for row in (["A", 5, 1, 4], ["B", 2, 4, 2], ["C", 3, 3, 3]):
        sheet.append(row)
    raw = tmp_path / "custom.xlsx"
    workbook.save(raw)
    out = tmp_path / "scores.csv"
    code, _, stderr = run(capsys, "score", raw, "--instrument", RAW / "custom3.toml", "--out", out)
    assert code == 0, stderr
    # c3_2 is reverse keyed on 1-5: (5 + (6-1) + 4)/3, (2 + 2 + 2)/3, (3 + 3 + 3)/3
    np.testing.assert_allclose(pd.read_csv(out)["score"], [14 / 3, 2.0, 3.0], rtol=1e-15)


def test_instruments_command_lists_the_library(capsys):
    code, stdout, _ = run(capsys, "instruments")
    assert code == 0
    lines = stdout.splitlines()
    assert lines[0].split() == ["name", "items", "scoring", "range", "grade"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:]}
    assert rows["tas4"] == ["4", "mean", "1-5", "S"]
    assert rows["who5"] == ["5", "sum", "0-5", "V2"]


@pytest.mark.parametrize("ids", [["P01", "P02"], ['P "1"', "P,2"]])
def test_scores_read_back_the_same_whichever_writer_wrote_them(tmp_path, capsys, ids):
    raw = tmp_path / "export.csv"
    pd.DataFrame(
        {"id": ids, "tas4_1": [4, 2], "tas4_2": [5, 1], "tas4_3": [3, 2], "tas4_4": [4, 3]}
    ).to_csv(raw, index=False)
    out = tmp_path / "scores.csv"
    code, _, stderr = run(capsys, "score", raw, *TAS4, "--out", out)
    assert code == 0, stderr
    scores = pd.read_csv(out, dtype={"id": str})
    assert scores["id"].tolist() == ids
    np.testing.assert_allclose(scores["score"], [4.0, 2.0], rtol=1e-15)
    assert scores["n_items"].tolist() == [4, 4]


def test_the_column_wise_scores_writer_reads_back_as_the_pandas_writer(tmp_path):
    """Same header line (unquoted), same values read back, NaN as an empty cell."""
    from longitudinal._output import write_csv
    from longitudinal.cli._common import _scores_writer

    frame = pd.DataFrame(
        {
            "id": ["007", "P 2", "x"],
            "instrument": "tas4",
            "score": [4.0, np.nan, 1 / 3],
            "n_items": np.array([4, 4, 4], dtype=np.int64),
        }
    )
    _scores_writer(frame)(tmp_path / "arrow.csv")
    write_csv(frame, tmp_path / "pandas.csv")
    arrow, plain = (tmp_path / "arrow.csv").read_text(), (tmp_path / "pandas.csv").read_text()
    assert arrow.splitlines()[0] == plain.splitlines()[0] == "id,instrument,score,n_items"
    assert arrow.splitlines()[2] == "P 2,tas4,,4"
    read = {
        name: pd.read_csv(tmp_path / name, dtype={"id": str})
        for name in ("arrow.csv", "pandas.csv")
    }
    pd.testing.assert_frame_equal(read["arrow.csv"], read["pandas.csv"])
