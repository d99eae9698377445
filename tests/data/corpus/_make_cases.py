"""Write the corpus cases about readers and rows (``readers_*``), inputs and ``case.toml``.

Run from anywhere: ``python tests/data/corpus/_make_cases.py``. The output is deterministic
(fixed workbook timestamps, no random steps), so re-running it leaves git clean. Text cases
are written here too, beside the binary ones (workbooks, UTF-16 text), to keep every reader
case in one place.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pyreadstat

HERE = Path(__file__).resolve().parent
TAS4 = ["tas4_1", "tas4_2", "tas4_3", "tas4_4"]
SCORE = ["score", "{in}/{file}", "--instrument", "tas4", "--out", "{out}/scores.csv"]
META = [
    "StartDate",
    "EndDate",
    "Status",
    "IPAddress",
    "Progress",
    "Duration (in seconds)",
    "Finished",
    "RecordedDate",
    "ResponseId",
    "DistributionChannel",
    "UserLanguage",
]
FIXED = dt.datetime(2024, 1, 1)


def _toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)


def _case(
    name: str,
    description: str,
    args: list[str],
    exit: int,
    message: list[str],
    *,
    rows: dict | None = None,
    absent: list[str] | None = None,
    prefix: str = "readers",
) -> Path:
    folder = HERE / f"{prefix}_{name}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    lines = [
        f"description = {_toml_value(description)}",
        f"args = {_toml_value(args)}",
        f"exit = {exit}",
        f"message = {_toml_value(message)}",
        f"absent = {_toml_value(['Traceback', *(absent or [])])}",
    ]
    if rows:
        lines.append("[rows]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in rows.items()]
    (folder / "case.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _score(file: str, *extra: str, instrument: str = "tas4") -> list[str]:
    args = [a.replace("{file}", file) for a in SCORE]
    args[3] = instrument
    return [*args, *extra]


def _rows(n: int, excluded: int | None = None) -> dict:
    rows = {"input": n, "scored": "{out}/scores.csv", "excluded": "{out}/excluded.csv"}
    if excluded is not None:
        rows["excluded_rows"] = excluded
    return rows


WHO5_ROWS = {
    "input": 2,
    "scored": "{out}/scores.csv",
    "excluded": "{out}/none.csv",
    "scores_per_row": 2,
}


def _qualtrics(folder: Path, flags: list[tuple[str, str]]) -> None:
    """A Qualtrics CSV export: one response per ``(Status, Finished)`` pair."""
    header = [*META, *TAS4, "participant_id"]
    text = [f"Q{i}" for i in range(len(header))]
    ids = [json.dumps({"ImportId": name}) for name in header]
    body = []
    for k, (status, finished) in enumerate(flags, start=1):
        meta = [
            "2024-01-01 10:00:00",
            "2024-01-01 10:05:00",
            status,
            "",
            "100",
            "300",
            finished,
            "2024-01-01 10:05:00",
            f"R_{k}",
            "anonymous",
            "EN",
        ]
        body.append([*meta, "4", "3", "2", str(1 + k % 5), f"P{k:02d}"])
    frame = pd.DataFrame([text, ids, *body], columns=header)
    frame.to_csv(folder / "export.csv", index=False, lineterminator="\n")


def _workbook(path: Path, sheets: dict[str, list[list]], formats: dict | None = None) -> None:
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for values in rows:
            sheet.append(values)
        for cell, fmt in (formats or {}).items():
            sheet[cell].number_format = fmt
    workbook.properties.created = workbook.properties.modified = FIXED
    workbook.save(path)
    _fix_zip_times(path)


def _fix_zip_times(path: Path) -> None:
    """Rewrite a zip with fixed member timestamps so the bytes do not depend on the clock."""
    with zipfile.ZipFile(path) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info, data in members:
            info.date_time = (2024, 1, 1, 0, 0, 0)
            if info.filename == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:\w+[^>]*>)[^<]*", rb"\g<1>2024-01-01T00:00:00Z", data)
            target.writestr(info, data)


TAS4_ROWS = [["id", *TAS4], ["P01", 4, 5, 3, 4], ["P02", 2, 1, 2, 3]]


def sheets() -> None:
    more = [["id", *TAS4], ["P03", 1, 2, 1, 1], ["P04", 3, 3, 3, 3]]
    folder = _case(
        "sheets_unnamed",
        "responses continue on a second sheet: refused until a sheet is named",
        _score("export.xlsx"),
        2,
        ["export.xlsx", "'wave1', 'more'", "--sheet"],
    )
    _workbook(folder / "export.xlsx", {"wave1": TAS4_ROWS, "more": more})
    folder = _case(
        "sheets_named",
        "--sheet reads the named sheet and says that another sheet holds data",
        _score("export.xlsx", "--sheet", "more"),
        0,
        ["'wave1'", "also hold data"],
        rows={"input": 2, "scored": "{out}/scores.csv", "excluded": "{out}/none.csv"},
    )
    _workbook(folder / "export.xlsx", {"wave1": TAS4_ROWS, "more": more})
    folder = _case(
        "sheets_unknown",
        "--sheet naming a sheet the workbook lacks lists its sheets",
        _score("export.xlsx", "--sheet", "wave2"),
        2,
        ["export.xlsx", "no sheet 'wave2'", "'wave1'"],
    )
    _workbook(folder / "export.xlsx", {"wave1": TAS4_ROWS})
    folder = _case(
        "uncalculated_formula",
        "a formula never calculated (workbook written by a program) is refused, not read blank",
        _score("export.xlsx"),
        2,
        ["export.xlsx", "row 3", "tas4_2", "cell C3", "=B3-1"],
        absent=["too few items"],
    )
    _workbook(folder / "export.xlsx", {"data": [*TAS4_ROWS[:2], ["P02", 2, "=B3-1", 2, 3]]})
    folder = _case(
        "ids_zero_format",
        "ids typed as numbers but shown as 007 in Excel are read as 007",
        _score("export.xlsx"),
        0,
        ["scored 2 response row(s)"],
        rows={"input": 2, "scored": "{out}/scores.csv", "excluded": "{out}/none.csv"},
    )
    rows = [["id", *TAS4], [7, 4, 5, 3, 4], [12, 2, 1, 2, 3]]
    _workbook(folder / "export.xlsx", {"data": rows}, {"A2": "000", "A3": "000"})


def qualtrics() -> None:
    numeric = [
        ("0", "1"),
        ("1", "1"),
        ("2", "1"),
        ("4", "1"),
        ("8", "1"),
        ("16", "1"),
        ("12", "1"),
        ("17", "1"),
        ("9", "1"),
        ("0", "0"),
    ]
    text = [
        ("IP Address", "True"),
        ("Survey Preview", "True"),
        ("Survey Test", "True"),
        ("Imported", "True"),
        ("Spam", "True"),
        ("Offline", "True"),
        ("Imported Spam", "True"),
        ("Offline Survey Preview", "True"),
        ("Survey Preview Spam", "True"),
        ("IP Address", "False"),
    ]
    excl = ["--exclude-flagged", "--id-col", "participant_id", "--exclusions", "{out}/excluded.csv"]
    for name, flags in (("status_numeric", numeric), ("status_text", text)):
        folder = _case(
            name,
            f"Qualtrics {name.split('_')[1]} Status: IP Address, Imported and Offline kept; "
            "preview, test, spam and unfinished rows logged with their rule",
            _score("export.csv", *excl),
            0,
            [
                "left out 7 flagged row(s)",
                "row 6: survey test (Status 2 = Survey Test)",
                "row 13: unfinished response",
            ],
            rows=_rows(10, 7),
        )
        _qualtrics(folder, flags)
    folder = _case(
        "status_test_refused",
        "a Survey Test row (numeric 2) is refused unless flagged rows are excluded",
        _score("export.csv", "--id-col", "participant_id"),
        2,
        ["export.csv", "row 5", "column 'Status'", "survey test", "--exclude-flagged"],
    )
    _qualtrics(folder, [("0", "1"), ("2", "1")])
    for name, flags, column, value in (
        ("status_unknown_code", [("0", "1"), ("3", "1")], "Status", "'3'"),
        ("status_unknown_text", [("Deleted", "True")], "Status", "'Deleted'"),
        ("finished_unknown", [("0", "maybe")], "Finished", "'maybe'"),
        ("finished_two", [("0", "2")], "Finished", "'2'"),
    ):
        folder = _case(
            name,
            "a flag value outside Qualtrics' table is refused, not guessed",
            _score("export.csv", *excl),
            2,
            ["export.csv", f"column '{column}'", value, "unknown"],
        )
        _qualtrics(folder, flags)
    for name, finished in (
        ("finished_truefalse", ("True", "False")),
        ("finished_numeric", ("1", "0")),
        ("finished_localized", ("Ja", "Nein")),
    ):
        folder = _case(
            name,
            f"Finished written as {finished[0]}/{finished[1]}: the unfinished row is logged",
            _score("export.csv", *excl),
            0,
            ["left out 1 flagged row(s)", "row 5: unfinished response"],
            rows=_rows(3, 1),
        )
        _qualtrics(folder, [("0", finished[0]), ("0", finished[1]), ("0", finished[0])])


def _text_case(name, description, file, content, args, exit, message, **kw) -> None:
    folder = _case(name, description, args, exit, message, **kw)
    data = content if isinstance(content, bytes) else content.encode("utf-8")
    (folder / file).write_bytes(data)


def text_files() -> None:
    body = "id\ttas4_1\ttas4_2\ttas4_3\ttas4_4\nP01\t4\t5\t3\t4\nP02\t2\t1\t2\t3\n"
    ok_rows = {"input": 2, "scored": "{out}/scores.csv", "excluded": "{out}/none.csv"}
    _text_case(
        "utf16_bom",
        "Excel 'Unicode text': UTF-16 with a BOM, tab-delimited, is read",
        "export.txt",
        b"\xff\xfe" + body.replace("\n", "\r\n").encode("utf-16-le"),
        _score("export.txt", "--format", "csv"),
        0,
        ["scored 2 response row(s)"],
        rows=ok_rows,
    )
    _text_case(
        "utf16_no_bom",
        "UTF-16 without a BOM gets a UTF-16 hint, not a latin-1 one",
        "export.csv",
        body.encode("utf-16-le"),
        _score("export.csv"),
        2,
        ["export.csv", "UTF-16", "--encoding utf-16-le"],
        absent=["latin-1"],
    )
    _text_case(
        "tab_delimited",
        "a tab-delimited export is read (delimiter from the header)",
        "export.csv",
        body,
        _score("export.csv"),
        0,
        ["scored 2 response row(s)"],
        rows=ok_rows,
    )
    semi = "id;tas4_1;tas4_2;tas4_3;tas4_4;weight\nP01;4;5;3;4;1,5\nP02;2;1;2;3;0,75\n"
    _text_case(
        "semicolon_decimal_comma",
        "European Excel: semicolons and decimal commas read",
        "export.csv",
        semi,
        _score("export.csv", "--decimal", ","),
        0,
        ["scored 2 response row(s)"],
        rows=ok_rows,
    )
    semi_items = "id;tas4_1;tas4_2;tas4_3;tas4_4\nP01;4,0;5;3;4\nP02;2;1;2;3\n"
    _text_case(
        "decimal_comma_hint",
        "a decimal comma in an item names --decimal",
        "export.csv",
        semi_items,
        _score("export.csv"),
        2,
        ["export.csv", "row 2", "tas4_1", "'4,0'", "--decimal ,"],
    )
    _text_case(
        "bom_offset",
        "the byte offset of a bad byte counts the UTF-8 BOM",
        "export.csv",
        b"\xef\xbb\xbfid,tas4_1,tas4_2,tas4_3,tas4_4\nP\xe901,4,5,3,4\n",
        _score("export.csv"),
        2,
        ["export.csv", "byte offset 35 (line 2)"],
    )
    _text_case(
        "header_only",
        "a header without rows is refused with a message",
        "export.csv",
        "id,tas4_1,tas4_2,tas4_3,tas4_4\n",
        _score("export.csv"),
        2,
        ["export.csv", "row 1", "no data rows"],
    )
    _text_case(
        "half_point",
        "a half-point answer is refused",
        "export.csv",
        "id,tas4_1,tas4_2,tas4_3,tas4_4\nP01,4,5,3,4\nP02,2.5,1,2,3\n",
        _score("export.csv"),
        2,
        ["export.csv", "row 3", "tas4_1", "not a whole number"],
    )
    _text_case(
        "ids_leading_zeros",
        "ids with leading zeros are read as text",
        "export.csv",
        "id,tas4_1,tas4_2,tas4_3,tas4_4\n007,4,5,3,4\n7,2,1,2,3\n",
        _score("export.csv"),
        0,
        ["scored 2 response row(s)"],
        rows=ok_rows,
    )
    _text_case(
        "identical_values",
        "identical answers everywhere: scored, reliability flagged",
        "export.csv",
        "id,tas4_1,tas4_2,tas4_3,tas4_4\nP01,3,3,3,3\nP02,3,3,3,3\nP03,3,3,3,3\n",
        _score("export.csv", "--reliability", "{out}/rel.csv"),
        0,
        ["scored 3 response row(s)", "warning:"],
        rows={"input": 3, "scored": "{out}/scores.csv", "excluded": "{out}/none.csv"},
    )
    who5 = ["id", *[f"Q2_{k}" for k in range(1, 6)]]
    qualtrics_coded = ",".join(who5) + "\nP01,6,5,4,6,3\nP02,2,1,2,3,6\n"
    item_map = "column,item\n" + "".join(f"Q2_{k},who5_{k}\n" for k in range(1, 6))
    for name, extra, code, message in (
        ("recode_hint", [], 2, ["export.csv", "row 2", "'Q2_1 (who5_1)'", "--recode 1-6:0-5"]),
        ("recode", ["--recode", "1-6:0-5"], 0, ["scored 2 response row(s)"]),
        (
            "recode_outside",
            ["--recode", "2-7:0-5"],
            2,
            ["export.csv", "row 3", "'Q2_2 (who5_2)'", "outside the --recode range 2-7"],
        ),
    ):
        folder = _case(
            name,
            "Qualtrics' default 1-6 coding of a 0-5 scale",
            _score("export.csv", "--item-map", "{in}/map.csv", *extra, instrument="who5"),
            code,
            message,
            rows=WHO5_ROWS if code == 0 else None,
        )
        (folder / "export.csv").write_text(qualtrics_coded, encoding="utf-8")
        (folder / "map.csv").write_text(item_map, encoding="utf-8")
    missing = "id,who5_1,who5_2,who5_3,who5_4,who5_5\nP01,5,4,,3,4\nP02,2,1,2,3,2\n"
    _text_case(
        "sum_without_prorate",
        "a sum scale with a missing answer is not scored",
        "export.csv",
        missing,
        _score("export.csv", instrument="who5"),
        0,
        ["2 not computed"],
        rows=WHO5_ROWS,
    )
    _text_case(
        "prorate",
        "--prorate scores a sum scale from the answered items",
        "export.csv",
        missing,
        _score("export.csv", "--prorate", instrument="who5"),
        0,
        ["scored 2 response row(s)"],
        absent=["not computed"],
        rows=WHO5_ROWS,
    )
    _text_case(
        "old_xls",
        "an old .xls workbook is named, not misread",
        "export.xls",
        b"\xd0\xcf\x11\xe0not really",
        _score("export.xls"),
        2,
        ["export.xls", "save the file as .xlsx"],
    )


def outputs() -> None:
    folder = _case(
        "out_is_a_folder",
        "--out naming a folder is refused before reading, without internal file names",
        ["score", "{in}/export.csv", "--instrument", "tas4", "--out", "{out}"],
        2,
        ["--out", "is a folder", "out.csv"],
        absent=[".tmp", "Is a directory"],
    )
    (folder / "export.csv").write_text("id,tas4_1,tas4_2,tas4_3,tas4_4\nP1,4,5,3,4\n", "utf-8")


def spss() -> None:
    folder = _case(
        "ids_spss_n_format",
        "an SPSS id in N3 format (shown 007) is read as 007",
        _score("export.sav"),
        0,
        ["scored 2 response row(s)"],
        rows={"input": 2, "scored": "{out}/scores.csv", "excluded": "{out}/none.csv"},
    )
    frame = pd.DataFrame({"id": [7.0, 12.0], **{c: [4.0, 2.0] for c in TAS4}})
    path = folder / "export.sav"
    pyreadstat.write_sav(frame, str(path), variable_format={"id": "N3"})
    raw = bytearray(path.read_bytes())
    raw[92:109] = b"01 Jan 2400:00:00"  # creation date and time of the SAV header
    path.write_bytes(bytes(raw))


def studies() -> None:
    folder = _case(
        "ratings_header_only",
        "a study whose ratings.csv has a header only is refused with a message",
        ["report", "{in}/study", "--out", "{out}/report"],
        2,
        ["ratings.csv", "row 1", "no ratings"],
    )
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")
    ratings = folder / "study" / "ratings.csv"
    ratings.write_text(ratings.read_text(encoding="utf-8").splitlines()[0] + "\n", "utf-8")
    folder = _case(
        "ratings_identical",
        "identical ratings everywhere: the model says the response does not vary",
        ["report", "{in}/study", "--out", "{out}/report"],
        2,
        ["empathy", "response varies"],
    )
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")
    ratings = folder / "study" / "ratings.csv"
    frame = pd.read_csv(ratings, dtype=str, keep_default_na=False)
    frame.loc[frame["empathy"] != "", "empathy"] = "3"
    frame.to_csv(ratings, index=False, lineterminator="\n")


DEEP = "[" * 5000 + "]" * 5000


def _hardening(name: str, description: str, args: list[str], exit: int, message, **kw) -> Path:
    return _case(name, description, args, exit, message, prefix="hardening", **kw)


def hardening() -> None:
    """Inputs built to crash, hang or leak: deep TOML, invisible characters, formula cells."""
    folder = _hardening(
        "toml_deep_instrument",
        "an instrument key nesting arrays 5000 deep is refused with a message, not a crash",
        _score("export.csv", instrument="{in}/key.toml"),
        2,
        ["key.toml", "nested 5000 deep"],
        absent=["RecursionError"],
    )
    (folder / "export.csv").write_text("id,tas4_1,tas4_2,tas4_3,tas4_4\nP1,4,5,3,4\n", "utf-8")
    (folder / "key.toml").write_text(f'[instrument]\nname = "deep"\nx = {DEEP}\n', "utf-8")
    folder = _hardening(
        "toml_deep_design",
        "a power design nesting arrays 5000 deep is refused with a message, not a crash",
        [
            "power",
            "--design",
            "{in}/design.toml",
            "--effect",
            "trait=0.2",
            "--participants",
            "10",
            "--sims",
            "2",
            "--out",
            "{out}/power",
        ],
        2,
        ["design.toml", "nested too deeply"],
        absent=["RecursionError"],
    )
    (folder / "design.toml").write_text(f"x = {DEEP}\n", "utf-8")
    folder = _hardening(
        "toml_deep_study",
        "a study.toml nesting arrays 5000 deep is refused with a message, not a crash",
        ["report", "{in}/study", "--out", "{out}/report", "--no-bayes"],
        2,
        ["study.toml", "nested 5000 deep"],
        absent=["RecursionError"],
    )
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")
    config = folder / "study" / "study.toml"
    config.write_text(f"deep = {DEEP}\n" + config.read_text(encoding="utf-8"), "utf-8")

    outputs_by_identity()
    formulas()
    invisible()


KEY = (
    '[instrument]\nname = "mykey"\ntitle = "My key"\nresponse_min = 1\nresponse_max = 5\n'
    '[scales.total]\nitems = ["tas4_1", "tas4_2"]\nscoring = "mean"\n'
)
EXPORT = "id,tas4_1,tas4_2,tas4_3,tas4_4\nP1,4,5,3,4\nP2,2,1,2,3\n"


def outputs_by_identity() -> None:
    """Outputs compared with inputs by what they are, not by their name."""
    for name, key in (("upper_case_toml", "key.TOML"), ("no_extension", "keys/mykey")):
        folder = _hardening(
            f"out_score_is_instrument_{name}",
            f"score --out naming its instrument key {key} is refused before any work",
            _score("export.csv", "--out", "{in}/" + key, instrument="{in}/" + key),
            2,
            ["--out", "is the input", key],
        )
        (folder / "export.csv").write_text(EXPORT, "utf-8")
        (folder / key).parent.mkdir(parents=True, exist_ok=True)
        (folder / key).write_text(KEY, "utf-8")
    folder = _hardening(
        "out_score_is_a_device",
        "score --out /dev/null (a device) is refused before any work",
        _score("export.csv", "--out", "/dev/null"),
        2,
        ["--out", "/dev/null", "is a device", "expected a regular file"],
    )
    (folder / "export.csv").write_text(EXPORT, "utf-8")
    folder = _hardening(
        "overwrite_folder_with_provenance_json",
        "--overwrite never replaces a user's folder that holds a provenance.json like a report",
        ["report", "{in}/study", "--out", "{in}/thesis", "--overwrite", "--no-bayes"],
        2,
        ["was not written by `longitudinal report`", "nothing was replaced"],
    )
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")
    (folder / "thesis").mkdir()
    (folder / "thesis" / "thesis.txt").write_text("Chapter 1\n", "utf-8")
    provenance = {"package": "empathic-longitudinal", "version": "0.1.0"}
    (folder / "thesis" / "provenance.json").write_text(json.dumps(provenance) + "\n", "utf-8")
    folder = _hardening(
        "out_report_is_working_folder",
        "report --out . (the working folder) is refused before any work",
        ["report", "{in}/study", "--out", ".", "--no-bayes"],
        2,
        ["must name a folder to create or replace", "working folder"],
    )
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")
    folder = _hardening(
        "out_report_is_a_symlink",
        "report --out naming a symbolic link to a folder is refused before any work",
        ["report", "{in}/study", "--out", "{in}/linked", "--overwrite", "--no-bayes"],
        2,
        ["must not be a symbolic link", "linked"],
    )
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")
    (folder / "_outside" / "target").mkdir(parents=True)
    (folder / "_outside" / "target" / "keep.txt").write_text("mine\n", "utf-8")
    with (folder / "case.toml").open("a", encoding="utf-8") as fh:
        fh.write('[symlinks]\n"linked" = "{outside}/target"\n')


FORMULA_IDS = {
    "P1": '=HYPERLINK("http://x","click")',
    "P2": "+1+1",
    "P3": "-cmd",
    "P4": "@SUM(1)",
}


def _cells(folder: Path, path: str, column: str, values: list[str], absent: list[str]) -> None:
    with (folder / "case.toml").open("a", encoding="utf-8") as fh:
        fh.write(f"[cells.{_toml_value(path)}]\n")
        fh.write(f"column = {_toml_value(column)}\nvalues = {_toml_value(values)}\n")
        fh.write(f"absent = {_toml_value(absent)}\n")


def formulas() -> None:
    """Ids and labels a spreadsheet would run as formulas: written with a leading apostrophe."""
    folder = _hardening(
        "formula_ids_score",
        "ids that a spreadsheet runs as formulas are written with an apostrophe; +1 is a number",
        _score("export.csv", "--id-col", "id"),
        0,
        ["scored 5 response row(s)"],
        rows={"input": 5, "scored": "{out}/scores.csv", "excluded": "{out}/none.csv"},
    )
    ids = [*FORMULA_IDS.values(), "+1"]
    body = [[i, 4, 5 - k % 3, 3, 1 + k % 5] for k, i in enumerate(ids)]
    pd.DataFrame(body, columns=["id", *TAS4]).to_csv(
        folder / "export.csv", index=False, lineterminator="\n"
    )
    safe = ["'" + i for i in FORMULA_IDS.values()]
    _cells(folder, "{out}/scores.csv", "id", [*safe, "+1"], list(FORMULA_IDS.values()))
    folder = _hardening(
        "formula_ids_report",
        "a study whose ids a spreadsheet runs as formulas: the report's tables hold them with an "
        "apostrophe (--no-pseudonymize), the HTML as they are",
        ["report", "{in}/study", "--out", "{out}/report", "--no-bayes", "--no-pseudonymize"],
        0,
        ["wrote the change report"],
    )
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")
    for path in sorted((folder / "study").rglob("*.csv")):
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        frame["participant_id"] = frame["participant_id"].map(FORMULA_IDS)
        frame.to_csv(path, index=False, lineterminator="\n")
    people = "{out}/report/tables/reliable_change_people.csv"
    _cells(folder, people, "id", safe, list(FORMULA_IDS.values()))


def _tiny_with(folder: Path, file: str, edit) -> None:
    """Copy the tiny study into ``folder``/study and rewrite one of its files with ``edit``."""
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")
    path = folder / "study" / file
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8", newline="\n")


def invisible() -> None:
    """Invisible characters in a header or an id: named, never a bare "missing column"."""
    for name, column, char, label in (
        ("zwsp", "tas4_1\u200b", "\\u200b", "U+200B ZERO WIDTH SPACE"),
        ("bom", "\ufefftas4_3", "\\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ):
        folder = _hardening(
            f"invisible_header_{name}",
            f"a survey header naming {label} inside an item column is refused by name",
            _score("export.csv", "--id-col", "id"),
            2,
            ["export.csv", "row 1", char, label, "delete it from the header"],
            absent=["missing item column"],
        )
        header = ",".join(["id", *TAS4]).replace(column.strip("\u200b\ufeff"), column, 1)
        text = "\ufeff" + header + "\nP1,4,5,3,4\nP2,2,1,2,3\n"  # the file BOM is fine
        (folder / "export.csv").write_text(text, encoding="utf-8", newline="\n")
    folder = _hardening(
        "invisible_ids_survey",
        "survey ids holding U+200C, U+200D, U+2060 or NUL are refused with row and value",
        _score("export.csv", "--id-col", "id"),
        2,
        [
            "export.csv",
            "row 3, column 'id'",
            "U+200C ZERO WIDTH NON-JOINER",
            "row 4, column 'id'",
            "U+200D ZERO WIDTH JOINER",
            "row 5, column 'id'",
            "U+2060 WORD JOINER",
            "row 6, column 'id'",
            "U+0000 NULL",
            "'P\\x004'",
        ],
    )
    ids = ["P1", "P\u200c1", "P\u200d2", "P3\u2060", "P\x004"]
    body = "".join(f"{i},4,5,3,{k + 1}\n" for k, i in enumerate(ids))
    text = ",".join(["id", *TAS4]) + "\n" + body
    (folder / "export.csv").write_text(text, encoding="utf-8", newline="\n")
    for file, old, new, where, label in (
        (
            "ratings.csv",
            "\nP2,s05",
            "\nP2\u200b,s05",
            "row 15, column 'participant_id'",
            "U+200B ZERO WIDTH SPACE",
        ),
        (
            "sessions.csv",
            "\nP1,s02",
            "\nP1,s02\u2060",
            "row 3, column 'session_id'",
            "U+2060 WORD JOINER",
        ),
        ("participants.csv", "\nP3,", "\nP3\x00,", "row 4, column 'participant_id'", "U+0000 NULL"),
        (
            "sessions.csv",
            "session_id",
            "session_id\u200d",
            "column 'session_id\\u200d'",
            "U+200D ZERO WIDTH JOINER",
        ),
    ):
        stem = file.removesuffix(".csv") + ("_header" if "\n" not in old else "")
        folder = _hardening(
            f"invisible_study_{stem}",
            f"a study whose {file} holds {label} in an id"
            + (" column name" if "header" in stem else "")
            + " is refused with file, row and column",
            ["report", "{in}/study", "--out", "{out}/report", "--no-bayes"],
            2,
            [file, where, label],
            absent=["missing required column"],
        )
        _tiny_with(folder, file, lambda text, old=old, new=new: text.replace(old, new, 1))


def _texts(folder: Path, path: str, *, contains=(), absent=(), starts=None) -> None:
    """Add what an output text file must hold (``starts``, ``contains``) and must not."""
    with (folder / "case.toml").open("a", encoding="utf-8") as fh:
        fh.write(f"[texts.{_toml_value(path)}]\n")
        if starts is not None:
            fh.write(f"starts = {_toml_value(starts)}\n")
        fh.write(f"contains = {_toml_value(list(contains))}\n")
        fh.write(f"absent = {_toml_value(list(absent))}\n")


#: Text from the study that Markdown, HTML or LaTeX would run: a tag with a script, a
#: javascript: link, a TeX command reading a system file, emphasis and code spans.
PAYLOAD_NAME = (
    "<img src=x onerror=alert(1)> [x](javascript:alert(1)) \\input{/etc/passwd} **bold** `tick`"
)
PAYLOAD_WAVE = "<img src=x onerror=alert(1)>"
PAYLOAD_TITLE = "[x](javascript:alert(1)) \\input{/etc/passwd}"
PAYLOAD_FEATURE = "**bold** `code` <b>"


def _payload_study(folder: Path) -> None:
    """The tiny study with every kind of user text replaced by a payload.

    The study's name, the mid wave's label, the title of its state instrument (a key file
    with the WHO-5 items) and the name of a session feature (``words``).
    """
    study = folder / "study"
    shutil.copytree(HERE.parent / "studies" / "tiny", study)
    (study / "mood.toml").write_text(
        "[instrument]\n"
        'name = "mood"\n'
        f"title = {_toml_value(PAYLOAD_TITLE)}\n"
        'items = ["who5_1", "who5_2", "who5_3", "who5_4", "who5_5"]\n'
        "response_min = 0\nresponse_max = 5\n"
        'scoring = "mean"\n\n'
        "[scales.total]\n"
        'items = ["who5_1", "who5_2", "who5_3", "who5_4", "who5_5"]\n',
        encoding="utf-8",
    )
    config = study / "study.toml"
    text = config.read_text(encoding="utf-8")
    for old, new in (
        ('name = "tiny hand-made study"', f"name = {_toml_value(PAYLOAD_NAME)}"),
        ('"mid"', _toml_value(PAYLOAD_WAVE)),
        ('"who5"', '"mood.toml"'),
    ):
        assert old in text, old
        text = text.replace(old, new)
    config.write_text(text, encoding="utf-8", newline="\n")
    sessions = study / "sessions.csv"
    frame = pd.read_csv(sessions, dtype=str, keep_default_na=False)
    frame = frame.rename(columns={"words": PAYLOAD_FEATURE})
    frame.to_csv(sessions, index=False, lineterminator="\n")


def escaping() -> None:
    """Text from the study in the manuscript: escaped for Markdown and LaTeX, or refused."""
    report = ["report", "{in}/study", "--out", "{out}/report", "--no-bayes"]
    folder = _case(
        "markdown_payloads",
        "a study name, wave label, instrument title and feature name holding HTML, Markdown "
        "links, emphasis, code spans and \\input{/etc/passwd}: results.md holds them escaped, "
        "tables.tex and report.html too",
        [*report, "--formats", "html,docx,latex"],
        0,
        ["wrote the change report"],
        prefix="escaping",
    )
    _payload_study(folder)
    manuscript = "{out}/report/manuscript"
    _texts(
        folder,
        f"{manuscript}/results.md",
        starts=(
            "# Results: \\<img src=x onerror=alert\\(1\\)\\> \\[x\\]\\(javascript\\:alert\\(1\\)"
            "\\) \\\\input\\{/etc/passwd\\} \\*\\*bold\\*\\* \\`tick\\`\n"
        ),
        contains=[
            "## Change in \\[x\\]\\(javascript\\:alert\\(1\\)\\) \\\\input\\{/etc/passwd\\}\n",
            "From pre to \\<img src=x onerror=alert\\(1\\)\\>, ",
            "did not take the \\<img src=x onerror=alert\\(1\\)\\> survey",
            "\\*\\*bold\\*\\* \\`code\\` \\<b\\> (within-person part): *b* = ",
            "95% CI [−",
        ],
        absent=[
            " <img",
            "[x](",
            "](javascript",
            " **bold**",
            "`tick`",
            "`code`",
            "<b>",
            " \\input{",
        ],  # fmt: skip
    )
    _texts(
        folder,
        f"{manuscript}/tables.tex",
        starts="% Compile with pdflatex.\n",
        contains=["\\textbackslash{}input\\{/etc/passwd\\}", "\\textless{}img src=x"],
        absent=["\\input{/etc/passwd}", "<img"],
    )
    _texts(folder, "{out}/report/report.html", absent=["<img src=x onerror", "<b>"])
    folder = _case(
        "latex_cyrillic_name",
        "a study named in Cyrillic: tables.tex names the engine that sets it (xelatex) on its "
        "first line and loads fontspec; results.md keeps the name",
        [*report, "--formats", "html,latex"],
        0,
        ["wrote the change report"],
        prefix="escaping",
    )
    _tiny_with(
        folder,
        "study.toml",
        lambda text: text.replace("tiny hand-made study", "Исследование эмпатии"),
    )
    _texts(
        folder,
        f"{manuscript}/tables.tex",
        starts="% Compile with xelatex (or lualatex), not pdflatex",
        contains=["U+0418 CYRILLIC CAPITAL LETTER I", "\\usepackage{fontspec}", "Исследование"],
        absent=["\\usepackage[utf8]{inputenc}"],
    )
    _texts(folder, f"{manuscript}/results.md", starts="# Results: Исследование эмпатии\n")
    for name, description, edit, message in (
        (
            "study_name_control_character",
            "a study name holding a control character (BEL) is refused when study.toml is "
            "read: Word cannot carry it",
            lambda text: text.replace('"tiny hand-made study"', '"tiny\\u0007 study"'),
            ["study.toml", "study.name", "U+0007 (a control character)", "delete it"],
        ),
        (
            "study_name_too_long",
            "a study name of 300 characters is refused when study.toml is read: Word's "
            "document properties hold 255",
            lambda text: text.replace("tiny hand-made study", "x" * 300),
            ["study.toml", "study.name", "300 characters long", "at most 255"],
        ),
        (
            "wave_line_separator",
            "a wave label holding U+2028 LINE SEPARATOR is refused when study.toml is read",
            lambda text: text.replace('"mid"', '"mid\\u2028"'),
            ["study.toml", "study.waves", "U+2028 LINE SEPARATOR"],
        ),
    ):
        folder = _case(name, description, report, 2, message, prefix="escaping")
        _tiny_with(folder, "study.toml", edit)


def _rewrite_member(path: Path, member: str, edit) -> None:
    """Rewrite one member of a zip (a workbook part) with ``edit``, times kept fixed."""
    with zipfile.ZipFile(path) as source:
        members = [(info, source.read(info)) for info in source.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as target:
        for info, data in members:
            target.writestr(info, edit(data) if info.filename == member else data)


#: An entity bomb (the "billion laughs", three levels here: the reader refuses the
#: declaration itself, however small its expansion).
BOMB = (
    b'<!DOCTYPE worksheet [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
)


def workbook_declarations() -> None:
    """Workbooks whose XML declares a document type or entities: refused before parsing."""
    sheet = "xl/worksheets/sheet1.xml"
    for name, description, edit, message in (
        (
            "xlsx_entity_bomb",
            "a workbook whose sheet declares entities (an entity bomb) is refused before "
            "openpyxl parses it, naming the file and the part",
            lambda data: BOMB + data,
            ["export.xlsx", sheet, "<!DOCTYPE or <!ENTITY", "entity bomb"],
        ),
        (
            "xlsx_entity_bomb_utf16",
            "the same declaration in a sheet written as UTF-16 is found and refused",
            lambda data: b"\xff\xfe" + (BOMB + data).decode("utf-8").encode("utf-16-le"),
            ["export.xlsx", sheet, "<!DOCTYPE or <!ENTITY"],
        ),
        (
            "xlsx_declared_utf7",
            "a sheet whose XML declaration names UTF-7 (which hides a declaration from a "
            "search) is refused before parsing",
            lambda data: b'<?xml version="1.0" encoding="UTF-7"?>' + data,
            ["export.xlsx", sheet, "utf-7", "UTF-8 or UTF-16"],
        ),
    ):
        folder = _case(name, description, _score("export.xlsx"), 2, message)
        _workbook(folder / "export.xlsx", {"data": TAS4_ROWS})
        _rewrite_member(folder / "export.xlsx", sheet, edit)


LONG = "pid,wave,tas4_1,tas4_2,tas4_3,tas4_4\nP1,pre,4,5,3,4\nP1,post,3,5,3,4\nP2,pre,2,1,2,3\n"


def users_words() -> None:
    """Options and study.toml values refused in the user's words before any work."""
    for codec, why in (("punycode", "domain names"), ("base64", "does not turn bytes into")):
        folder = _case(
            f"encoding_{codec}",
            f"--encoding {codec} is refused with the encodings it takes, before the file is read",
            _score("export.csv", "--id-col", "id", "--encoding", codec),
            2,
            ["--encoding", repr(codec), why, "utf-8", "latin-1", "utf-16-le"],
        )
        (folder / "export.csv").write_text(EXPORT, "utf-8")
    folder = _case(
        "reliability_wave_is_id",
        "reliability with --wave-col naming the --id-col column is refused before reading "
        "(was a pandas traceback)",
        [
            "reliability",
            "{in}/long.csv",
            "--instrument",
            "tas4",
            "--id-col",
            "pid",
            "--wave-col",
            "pid",
            "--out",
            "{out}/reliability",
        ],  # fmt: skip
        2,
        ["--wave-col", "--id-col", "'pid'", "another column"],
        absent=["Grouper"],
    )
    (folder / "long.csv").write_text(LONG, "utf-8")
    report = ["report", "{in}/study", "--out", "{out}/report", "--no-bayes"]
    for value in ("inf", "nan"):
        folder = _case(
            f"study_scale_max_{value}",
            f"scale_max = {value} in study.toml is refused as not finite when the file is read",
            report,
            2,
            ["study.toml", "ratings.scale_max", "must be a finite number", value],
            prefix="limits",
        )
        _tiny_with(
            folder,
            "study.toml",
            lambda text, v=value: text.replace("scale_max = 5", f"scale_max = {v}"),
        )
    folder = _case(
        "report_retest_unknown",
        "a misspelled --retest scale is refused with the names it takes, before any analysis "
        "(was ignored without a word)",
        [*report, "--retest", "who5_percentag=0.8"],
        2,
        ["--retest", "'who5_percentag'", "did you mean 'who5_percentage'?", "who5"],
        prefix="safety",
    )
    shutil.copytree(HERE.parent / "studies" / "tiny", folder / "study")


def evaluate_counts() -> None:
    """Counts of evaluate and splits past their ceilings: refused before the study is read."""
    evaluate = ["evaluate", "{in}/study", "--out", "{out}/evaluate"]
    for name, extra, message in (
        ("n_boot", ["--n-boot", "1000000000000"],
         ["--n-boot must be a whole number from 0 to 100,000", "1000000000000"]),
        ("seeds", ["--seeds", "1000000000"],
         ["--seeds must give from 1 to 1,000 seeds", "1000000000", "refits every model"]),
        ("kfold", ["--kfold", "100000"],
         ["--kfold must be 0 (no K-fold) or a number of folds from 2 to 1,000", "100000"]),
        ("splits", ["--seeds", "1000", "--kfold", "50"],
         ["--seeds x (--kfold + 1)", "51,000 fitted splits", "10,000"]),
        ("draws", ["--bayes", "--draws", "1000000000"],
         ["--draws must be a whole number from 1 to 1,000,000", "1000000000"]),
    ):  # fmt: skip
        _case(
            f"evaluate_{name}",
            f"evaluate {' '.join(extra)} is refused before the study is read",
            [*evaluate, *extra],
            2,
            message,
            absent=["MemoryError", "does not exist"],
            prefix="limits",
        )
    _case(
        "splits_seeds",
        "splits --seeds 1000000000 is refused before the study is read (one row per seed and "
        "participant)",
        ["splits", "{in}/study", "--seeds", "1000000000", "--out", "{out}/splits.csv"],
        2,
        ["--seeds must give from 1 to 1,000 seeds", "1000000000"],
        absent=["MemoryError"],
        prefix="limits",
    )


if __name__ == "__main__":
    hardening()
    studies()
    sheets()
    qualtrics()
    text_files()
    spss()
    outputs()
    escaping()
    workbook_declarations()
    users_words()
    evaluate_counts()
