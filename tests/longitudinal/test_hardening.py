"""Inputs the corpus (tests/data/corpus/) cannot hold: hard links, FIFOs and devices made here.

Each refusal is exit 2 with one message naming the path, and nothing is written or changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from longitudinal.cli import main

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX files"),
    # the reports' files are searched as text; a figure's text is in its SVG, still written
    pytest.mark.usefixtures("figures_as_drafts"),
]

EXPORT = "id,tas4_1,tas4_2,tas4_3,tas4_4\nP1,4,5,3,4\nP2,2,1,2,3\n"
DATA = "y,x,g\n" + "".join(f"{(k * 7) % 5 + k % 3},{k % 4},{'abc'[k % 3]}\n" for k in range(30))


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def test_fit_out_a_hard_link_to_the_data_is_refused(tmp_path, capsys):
    data = tmp_path / "DATA.csv"
    data.write_text(DATA, encoding="utf-8")
    link = tmp_path / "HARDLINK"
    os.link(data, link)
    before = _digest(tmp_path)
    code = main(["fit", str(data), "--formula", "y ~ x + (1 | g)", "--out", str(link)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--out" in err and "is the input" in err and "HARDLINK" in err
    assert _digest(tmp_path) == before


def test_score_out_a_fifo_is_refused_without_blocking(tmp_path, capsys):
    (tmp_path / "export.csv").write_text(EXPORT, encoding="utf-8")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code = main(["score", str(tmp_path / "export.csv"), "--instrument", "tas4", "--out", str(fifo)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "pipe" in err and "named pipe (FIFO)" in err and "expected a regular file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv", "pipe"]


@pytest.mark.parametrize("option", ["--reliability", "--exclusions"])
def test_score_side_outputs_that_are_devices_are_refused(tmp_path, capsys, option):
    (tmp_path / "export.csv").write_text(EXPORT, encoding="utf-8")
    out = tmp_path / "s.csv"
    args = ["score", str(tmp_path / "export.csv"), "--instrument", "tas4", "--out", str(out)]
    code = main([*args, option, "/dev/zero"])
    err = capsys.readouterr().err
    assert code == 2 and "/dev/zero" in err and "is a device" in err, err
    assert not out.exists()


def test_report_out_a_fifo_is_refused(tmp_path, capsys):
    fifo = tmp_path / "rep"
    os.mkfifo(fifo)
    study = Path(__file__).resolve().parents[1] / "data" / "studies" / "tiny"
    code = main(["report", str(study), "--out", str(fifo), "--no-bayes"])
    err = capsys.readouterr().err
    assert code == 2 and "named pipe (FIFO)" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_score_out_the_instrument_key_through_a_symlink_is_refused(tmp_path, capsys):
    (tmp_path / "export.csv").write_text(EXPORT, encoding="utf-8")
    key = tmp_path / "keys" / "mykey"
    key.parent.mkdir()
    key.write_text('[instrument]\nname = "mykey"\n', encoding="utf-8")
    (tmp_path / "alias.csv").symlink_to(key)
    before = _digest(tmp_path)
    code = main(
        [
            "score",
            str(tmp_path / "export.csv"),
            "--instrument",
            str(key),
            "--out",
            str(tmp_path / "alias.csv"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "is the input" in err, err
    assert _digest(tmp_path) == before


def _raw_ids_in(folder: Path, ids: list[str]) -> dict[str, list[str]]:
    """Raw ids found as whole tokens in the files of ``folder``.

    PNG pixels, PDF streams (compressed, glyphs by number) and the base64 images embedded in
    report.html are not text (their bytes hold any two-letter sequence by chance); each PDF is
    checked through the SVG of the same figure, which holds its text as text, and each Word file
    through the XML parts of its zip. Every other byte is searched.
    """
    import re

    pattern = re.compile(
        rb"(?<![\w.])(?:" + b"|".join(re.escape(i.encode()) for i in ids) + rb")(?![\w])"
    )
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix == ".pdf":
            assert path.with_suffix(".svg").is_file(), path
        elif path.is_file() and path.suffix != ".png":
            data = path.read_bytes()
            if path.suffix == ".docx":  # a zip: its XML parts are searched, not the deflated bytes
                import zipfile

                with zipfile.ZipFile(path) as archive:
                    parts = [n for n in archive.namelist() if n.endswith((".xml", ".rels"))]
                    data = b"\n".join(archive.read(name) for name in parts)
            data = re.sub(rb"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+", b"", data)
            hits = sorted({m.decode() for m in pattern.findall(data)})
            if hits:
                found[str(path.relative_to(folder))] = hits
    return found


def test_report_copies_no_raw_id_from_evaluate(tmp_path, capsys):
    """evaluate/ holding a splits export, a per-person file and links: no raw id reaches the
    report folder, links are not followed, and the notes say what was left out."""
    import csv
    import shutil

    study = tmp_path / "study"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "studies" / "tiny", study)
    (study / "raw").mkdir()
    (study / "ratings.csv").rename(study / "raw" / "ratings.csv")
    (study / "ratings.csv").symlink_to(Path("raw") / "ratings.csv")
    with (study / "participants.csv").open(newline="", encoding="utf-8") as fh:
        ids = [row["participant_id"] for row in csv.DictReader(fh)]
    evaluate = study / "evaluate"
    evaluate.mkdir()
    (evaluate / "metrics.csv").write_text(
        "model,split,seed,r,rho,acc,f1,mse\nlmm,test,0,31.0,30.0,40.0,38.0,90.0\n", "utf-8"
    )
    (evaluate / "summary.csv").write_text("model,split,metric,mean,sd,n\n", "utf-8")
    (evaluate / "table.md").write_text("| model | r |\n|---|---|\n| lmm | 31.0 |\n", "utf-8")
    note = json.dumps({"notes": [f"worst fit: {ids[0]}"]})
    (evaluate / "evaluation.json").write_text(note + "\n", "utf-8")
    (evaluate / "runs.csv").write_text(
        "model,participant_id,seconds\n" + "".join(f"lmm,{i},0.1\n" for i in ids), "utf-8"
    )
    (evaluate / "splits.csv").write_text(
        "scheme,seed,participant_id,split\n"
        + "".join(f"holdout_70_20_10,0,{i},train\n" for i in ids),
        "utf-8",
    )
    (evaluate / "comparisons.csv").symlink_to(Path("..") / "raw" / "ratings.csv")
    (evaluate / "metrics.svg").symlink_to(study / "participants.csv")
    out = tmp_path / "report"
    code = main(["report", str(study), "--out", str(out), "--no-bayes"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert _raw_ids_in(out, ids) == {}
    copied = sorted(p.name for p in (out / "evaluate").iterdir())
    # evaluation.json and table.md name the participants evaluate left out: they are copied
    # with the report's pseudonyms in place of the raw ids; other files naming people are not.
    # A note of evaluation.json naming a raw id outside quotes is left out of the copy, counted
    assert copied == ["evaluation.json", "metrics.csv", "summary.csv", "table.md"]
    copy = json.loads((out / "evaluate" / "evaluation.json").read_text(encoding="utf-8"))
    assert copy["notes"] == [
        "1 note(s) left out of this copy: they may name a participant (the study's "
        "evaluate/evaluation.json holds them)"
    ]
    notes = (out / "notes.csv").read_text(encoding="utf-8")
    assert "evaluate/runs.csv names participants" in notes
    assert "evaluate/splits.csv" not in copied
    assert "evaluate/comparisons.csv is a symbolic link" in notes
    assert "evaluate/metrics.svg is a symbolic link" in notes
    assert not any(p.is_symlink() for p in out.rglob("*"))


TINY = Path(__file__).resolve().parents[1] / "data" / "studies" / "tiny"


def _key_case(tmp_path, key, capsys):
    out = tmp_path / "rep"
    code = main(["report", str(TINY), "--out", str(out), "--no-bayes", "--pseudonym-key", key])
    return code, capsys.readouterr().err


def test_a_short_key_is_refused_with_how_to_make_one(tmp_path, capsys):
    key = tmp_path / "k"
    key.write_text("hunter2\n", encoding="utf-8")
    code, err = _key_case(tmp_path, str(key), capsys)
    assert code == 2 and "holds 7 bytes" in err and "secrets.token_hex(32)" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_key_that_is_not_a_regular_file_is_refused_before_reading(tmp_path, capsys, kind):
    key = tmp_path / "k"
    if kind == "fifo":
        os.mkfifo(key)  # nobody writes it: opening it to read would block
    elif kind == "folder":
        key.mkdir()
    code, err = _key_case(tmp_path, "/dev/zero" if kind == "device" else str(key), capsys)
    assert code == 2 and "must be a regular file" in err, err
    assert not (tmp_path / "rep").exists()


def test_a_new_key_in_a_missing_folder_or_through_a_dangling_link_fails_first(tmp_path, capsys):
    code, err = _key_case(tmp_path, str(tmp_path / "nowhere" / "k"), capsys)
    assert code == 2 and "does not exist" in err and "nowhere" in err, err
    (tmp_path / "k").symlink_to(tmp_path / "gone")
    code, err = _key_case(tmp_path, str(tmp_path / "k"), capsys)
    assert code == 2 and "link to a missing file" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]


def test_report_out_a_hard_link_to_a_study_file_is_refused_in_the_commands_terms(tmp_path, capsys):
    import shutil

    study = tmp_path / "study"
    shutil.copytree(TINY, study)
    link = tmp_path / "LINKED"
    os.link(study / "participants.csv", link)
    before = _digest(tmp_path)
    code = main(["report", str(study), "--out", str(link)])
    err = capsys.readouterr().err
    assert code == 2 and "is the input" in err and "LINKED" in err, err
    assert "never writes over its inputs" in err
    assert "build_report" not in err  # the Python function means nothing on the command line
    assert _digest(tmp_path) == before


def test_a_key_that_is_an_input_of_the_study_is_refused(tmp_path, capsys):
    import shutil

    study = tmp_path / "study"
    shutil.copytree(TINY, study)
    os.link(study / "participants.csv", tmp_path / "key")
    out = tmp_path / "rep"
    code = main(["report", str(study), "--out", str(out), "--pseudonym-key", str(tmp_path / "key")])
    err = capsys.readouterr().err
    assert code == 2 and "is the input" in err and "participants.csv" in err, err
    assert not out.exists()


def test_no_person_tables_and_the_relinking_line(tmp_path, capsys, sections_only):
    sections_only("change")  # the section that writes the two per-person tables checked here
    key = tmp_path / "k"
    key.write_text("b84e1f07c3a95d26e0f4b7a1c9d3528e\n", encoding="utf-8")
    both = []
    for flag in ([], ["--no-person-tables", "--raw-csv"]):
        out = tmp_path / ("rep" + "".join(flag))
        args = ["report", str(TINY), "--out", str(out), "--no-bayes", "--pseudonym-key", str(key)]
        assert main([*args, *flag]) == 0, capsys.readouterr().err
        both.append(out)
    raw = [json.loads((o / "provenance.json").read_text("utf-8"))["raw_csv"] for o in both]
    assert raw == [False, True]  # --raw-csv is recorded
    html = (both[0] / "report.html").read_text(encoding="utf-8")
    assert "can be re-linked to participants by anyone holding the raw data" in html
    assert (both[0] / "tables" / "reliable_change_people.csv").is_file()
    assert not (both[1] / "tables" / "reliable_change_people.csv").exists()
    assert not (both[1] / "tables" / "complete_case_exclusions.csv").exists()
    assert "Per-person tables are left out" in (both[1] / "report.html").read_text("utf-8")
    provenance = json.loads((both[1] / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["options"]["person_tables"] is False
    assert "tables/reliable_change_people.csv" not in provenance["files"]
    # the fingerprint is not a plain hash of the key (a guessed key cannot be checked quickly)
    plain = hashlib.sha256(b"empathic-longitudinal pseudonym key\0" + key.read_bytes().strip())
    assert provenance["pseudonym_key_fingerprint"] != plain.hexdigest()[:16]


FORMULAS = 'id,tas4_1,tas4_2,tas4_3,tas4_4\n"=1+1",4,5,3,4\n-0.5,2,1,2,3\n@x,1,2,3,4\n'


@pytest.mark.parametrize("where", ["before", "after", "none"])
def test_raw_csv_writes_text_cells_as_they_are(tmp_path, capsys, where):
    (tmp_path / "export.csv").write_text(FORMULAS, encoding="utf-8")
    out = tmp_path / "s.csv"
    args = ["score", str(tmp_path / "export.csv"), "--instrument", "tas4", "--out", str(out)]
    args += ["--id-col", "id"]
    args = {"before": ["--raw-csv", *args], "after": [*args, "--raw-csv"], "none": args}[where]
    assert main(args) == 0, capsys.readouterr().err
    ids = [line.split(",")[0] for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    if where == "none":
        assert ids == ["'=1+1", "-0.5", "'@x"]
    else:
        assert ids == ["=1+1", "-0.5", "@x"]


def test_write_csv_leaves_numbers_and_safe_text_alone(tmp_path):
    import pandas as pd

    from longitudinal._output import write_csv

    frame = pd.DataFrame(
        {
            "n": [-1, 2, -3],
            "x": [-0.5, 1.5, float("nan")],
            "t": pd.array(["-1e-3", "@me", None], dtype="string"),
            "c": pd.Categorical(["=a", "b", "=a"]),
            "o": ["+", "\tx", 3],
        },
        index=[0, 0, 1],  # duplicate labels
    )
    write_csv(frame, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_text(encoding="utf-8").splitlines() == [
        "n,x,t,c,o",
        "-1,-0.5,-1e-3,'=a,'+",
        "2,1.5,'@me,b,'\tx",
        "-3,,,'=a,3",
    ]


def test_lavaan_operators_are_left_alone_and_formulas_still_guarded(tmp_path):
    import pandas as pd

    from longitudinal._output import write_csv

    # whole cells that are lavaan operators stay; anything a spreadsheet could run, including
    # an operator with more after it, gets the apostrophe
    cells = {
        "=~": "=~",
        "~~": "~~",
        "~1": "~1",
        "~": "~",
        "|": "|",
        "==": "==",
        "=~A1": "'=~A1",
        "=HYPERLINK(x)": "'=HYPERLINK(x)",
        "=1+1": "'=1+1",
        "@SUM(1)": "'@SUM(1)",
        "+cmd": "'+cmd",
        "-cmd": "'-cmd",
        " =~": " =~",
    }
    write_csv(pd.DataFrame({"op": list(cells)}), tmp_path / "p.csv")
    lines = (tmp_path / "p.csv").read_text(encoding="utf-8").splitlines()
    assert lines == ["op", *cells.values()]


def _xlsx(path: Path, sheet_xml: str, extra: dict[str, bytes] | None = None) -> None:
    """A minimal workbook of one sheet 'Data' whose sheet XML is ``sheet_xml``."""
    import zipfile

    ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    pkg = "http://schemas.openxmlformats.org/package/2006"
    ct = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    parts = {
        "[Content_Types].xml": f'<?xml version="1.0"?><Types xmlns="{pkg}/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{ct}.sheet.main+xml"/>'
        f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{ct}.worksheet+xml"/>'
        "</Types>",
        "_rels/.rels": f'<?xml version="1.0"?><Relationships xmlns="{pkg}/relationships">'
        f'<Relationship Id="rId1" Type="{rel}/officeDocument" Target="xl/workbook.xml"/>'
        "</Relationships>",
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook {ns} xmlns:r="{rel}"><sheets>'
        '<sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<?xml version="1.0"?><Relationships '
        f'xmlns="{pkg}/relationships"><Relationship Id="rId1" Type="{rel}/worksheet" '
        'Target="worksheets/sheet1.xml"/></Relationships>',
        "xl/worksheets/sheet1.xml": f'<?xml version="1.0"?><worksheet {ns}>{sheet_xml}</worksheet>',
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)


def _inline_row(r: int, values: list) -> str:
    cells = []
    for j, v in enumerate(values):
        ref = f"{'ABCDE'[j]}{r}"
        if isinstance(v, str):
            cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{v}</t></is></c>')
        else:
            cells.append(f'<c r="{ref}"><v>{v}</v></c>')
    return f'<row r="{r}">' + "".join(cells) + "</row>"


TABLE = _inline_row(1, ["id", *[f"tipi_{k}" for k in range(1, 5)]]) + _inline_row(
    2, ["P1", 4, 5, 3, 4]
)


def _score_workbook(tmp_path, capsys):
    import time

    out = tmp_path / "out.csv"
    start = time.perf_counter()
    code = main(
        ["score", str(tmp_path / "bomb.xlsx"), "--instrument", "tas4", "--id-col", "id"]
        + ["--out", str(out)]
    )
    seconds = time.perf_counter() - start
    err = capsys.readouterr().err
    assert not out.exists()
    return code, err, seconds


@pytest.mark.parametrize(
    "sheet, fragment",
    [
        ('<dimension ref="A1:Z5000000"/><sheetData>' + TABLE + "</sheetData>", "declares rows"),
        ('<dimension ref="A1:XFE2"/><sheetData>' + TABLE + "</sheetData>", "declares columns"),
        (
            "<sheetData>" + TABLE + '<row r="5000000"><c r="A5000000"><v>1</v></c></row>'
            "</sheetData>",
            "holds a row numbered 5,000,000",
        ),
        (
            "<sheetData>" + TABLE + '<row r="3"><c r="XFE3"><v>1</v></c></row></sheetData>',
            "holds a column numbered 16,385",
        ),
        ("<sheetData>" + TABLE + "<row/>" * 1_100_000 + "</sheetData>", "holds rows past"),
        # cells and rows without an r= reference sit one past the cell or row before them
        (
            "<sheetData>" + TABLE + '<row r="3">' + "<c><v>1</v></c>" * 16_385 + "</row>"
            "</sheetData>",
            "holds a column numbered 16,385",
        ),
        (
            "<sheetData>" + TABLE + '<row r="3"><c r="XFD3"><v>1</v></c><c><v>1</v></c></row>'
            "</sheetData>",
            "holds a column numbered 16,385",
        ),
        (
            "<sheetData>" + TABLE + '<row r="1048576"><c r="A1048576"><v>1</v></c></row>'
            "<row><c><v>1</v></c></row></sheetData>",
            "holds a row numbered 1,048,577",
        ),
    ],
    ids=[
        "declared_rows",
        "declared_columns",
        "row_number",
        "column_number",
        "empty_rows",
        "cells_without_r",
        "cell_after_the_last_column",
        "row_without_r_after_the_last_row",
    ],
)
def test_workbook_bombs_are_refused_in_seconds(tmp_path, capsys, sheet, fragment):
    _xlsx(tmp_path / "bomb.xlsx", sheet)
    assert (tmp_path / "bomb.xlsx").stat().st_size < 200_000
    code, err, seconds = _score_workbook(tmp_path, capsys)
    assert code == 2, err
    assert "bomb.xlsx" in err and "sheet 'Data'" in err and fragment in err, err
    assert "Traceback" not in err
    assert seconds < 10, seconds


def test_a_workbook_part_too_large_unpacked_is_refused_before_unpacking(
    tmp_path, capsys, monkeypatch
):
    from surveys.readers import workbooks

    monkeypatch.setattr(workbooks, "MAX_MEMBER_BYTES", 1_000_000)
    _xlsx(
        tmp_path / "bomb.xlsx",
        "<sheetData>" + TABLE + "</sheetData>",
        {"xl/sharedStrings.xml": b" " * 2_000_000},
    )
    code, err, _ = _score_workbook(tmp_path, capsys)
    assert code == 2, err
    assert "xl/sharedStrings.xml unpacks to 2,000,000 bytes" in err and "1,000,000" in err, err


def _plain_row(values: list) -> str:
    """A row whose cells carry no r= reference (the reader places them by position)."""
    cells = [
        f'<c t="inlineStr"><is><t>{v}</t></is></c>' if isinstance(v, str) else f"<c><v>{v}</v></c>"
        for v in values
    ]
    return "<row>" + "".join(cells) + "</row>"


def test_a_workbook_without_cell_references_is_read_by_position(tmp_path, capsys):
    header = ["id", *[f"tas4_{k}" for k in range(1, 5)]]
    plain = _plain_row(header) + _plain_row(["P1", 4, 5, 3, 4])
    scores = []
    for name, sheet in (("refs", TABLE.replace("tipi", "tas4")), ("plain", plain)):
        _xlsx(tmp_path / f"{name}.xlsx", "<sheetData>" + sheet + "</sheetData>")
        out = tmp_path / f"{name}.csv"
        args = ["score", str(tmp_path / f"{name}.xlsx"), "--instrument", "tas4"]
        assert main([*args, "--id-col", "id", "--out", str(out)]) == 0, capsys.readouterr().err
        scores.append(out.read_text(encoding="utf-8"))
    assert scores[1] == scores[0] and scores[0].splitlines()[1].startswith("P1,tas4,")


def test_a_small_workbook_with_a_wide_declared_dimension_is_read(tmp_path, capsys):
    _xlsx(
        tmp_path / "bomb.xlsx",
        '<dimension ref="A1:XFD1048576"/><sheetData>'
        + TABLE.replace("tipi", "tas4")
        + "</sheetData>",
    )
    out = tmp_path / "out.csv"
    code = main(
        [
            "score",
            str(tmp_path / "bomb.xlsx"),
            "--instrument",
            "tas4",
            "--id-col",
            "id",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert out.read_text(encoding="utf-8").splitlines()[1].startswith("P1,tas4,")


#: Costs for the tests (seconds per rating or participant): the full report of TINY (34 ratings,
#: 4 participants) is estimated at 34 * 2 + 4 * 60 + 4 * 100 = 708 s, 12 min; with --lean at
#: 34 * 2 + 4 * 1 = 72 s.
FAKE_PARTS = (
    ("reading and checking the study files", "r", 2.0, 2.0),
    ("scores, reliability and change analyses of the surveys", "p", 1.0, 1.0),
    ("figures that draw one mark per participant", "p", 60.0, 0.0),
    ("empathy models (linear and ordinal mixed models)", "r", 100 * 4 / 34, 0.0),
    ("other sections, figures and writing the folder", "p", 0.0, 0.0),
)


def _fake_costs(monkeypatch, study_cli):
    monkeypatch.setattr(study_cli, "ESTIMATE_FROM_RATINGS", 5)
    monkeypatch.setattr(study_cli, "_PARTS", FAKE_PARTS)
    monkeypatch.setattr(study_cli, "_LEAN_MODEL_SECONDS", 0.0)
    monkeypatch.setattr(study_cli, "_BASE_SECONDS", 0.0)
    monkeypatch.setattr(study_cli, "_BASE_MB", 1024.0)
    monkeypatch.setattr(study_cli, "_MB_PER_RATING", 30.0)  # 1 + 34 * 30 / 1024 = 2.0 GB
    monkeypatch.setattr(study_cli, "_LEAN_MB_PER_RATING", 15.0)  # 1.5 GB


def test_a_report_of_too_many_ratings_is_refused_up_front_with_an_estimate(
    tmp_path, capsys, monkeypatch
):
    from longitudinal.cli import study as study_cli

    _fake_costs(monkeypatch, study_cli)
    monkeypatch.setattr(study_cli, "_count_lines", _lines(study_cli._count_lines))
    out = tmp_path / "rep"
    code = main(["report", str(TINY), "--out", str(out), "--no-bayes"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "ratings.csv holds about 34 ratings of 4 participants" in err, err
    assert (
        "the full report 12 min and 2.0 GB of memory; reading and checking the study files "
        "68 s, scores, reliability and change analyses of the surveys 4 s, figures that draw "
        "one mark per participant 4 min, empathy models (linear and ordinal mixed models) 7 min"
    ) in err, err
    assert "with --lean 72 s and 1.5 GB of memory; reading and checking the study files 68 s" in err
    assert "over 10 min or 4 GB is refused before any work. --lean reduces it" in err, err
    assert "--large runs the full report anyway" in err and "Traceback" not in err, err
    assert sorted(tmp_path.iterdir()) == []  # no report, no pseudonym key


def test_a_report_over_the_limit_even_lean_says_so(tmp_path, capsys, monkeypatch):
    from longitudinal.cli import study as study_cli

    _fake_costs(monkeypatch, study_cli)
    monkeypatch.setattr(study_cli, "LIMIT_MINUTES", 1)
    out = tmp_path / "rep"
    for flags, fragment in (
        ([], "(even so it is estimated over 1 min or 4 GB: add --large)"),
        (["--lean"], "Even with --lean the report is estimated over 1 min or 4 GB"),
    ):
        code = main(["report", str(TINY), "--out", str(out), "--no-bayes", *flags])
        err = capsys.readouterr().err
        assert code == 2 and fragment in err, err
    assert sorted(tmp_path.iterdir()) == []


def _lines(count_lines):
    """``count_lines``, checked against the lines Python finds."""

    def checked(path):
        counted = count_lines(path)
        assert counted == len(path.read_bytes().splitlines())
        return counted

    return checked


def test_large_runs_the_report_after_printing_the_estimate(
    tmp_path, capsys, monkeypatch, sections_only
):
    from longitudinal.cli import study as study_cli

    sections_only("sample")  # the estimate, then a report: its lead says it is not reduced

    _fake_costs(monkeypatch, study_cli)
    out = tmp_path / "rep"
    code = main(["report", str(TINY), "--out", str(out), "--no-bayes", "--large"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "note: ratings.csv holds about 34 ratings of 4 participants" in captured.err
    assert "the full report 12 min" in captured.err
    assert (out / "report.html").is_file()
    assert "Reduced report" not in (out / "report.html").read_text(encoding="utf-8")


def test_lean_under_the_limit_runs_the_reduced_report(tmp_path, capsys, monkeypatch, sections_only):
    from longitudinal.cli import study as study_cli

    # the lead of the page and provenance say --lean (test_report_lean.py: its sections)
    sections_only("sample")

    _fake_costs(monkeypatch, study_cli)
    out = tmp_path / "rep"
    code = main(["report", str(TINY), "--out", str(out), "--no-bayes", "--lean"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "note: ratings.csv holds about 34 ratings" in captured.err
    assert "with --lean 72 s and 1.5 GB" in captured.err
    assert "Reduced report (--lean)" in (out / "report.html").read_text(encoding="utf-8")
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["options"]["lean"] is True


def test_the_estimate_is_printed_for_a_long_report_of_few_ratings(capsys, monkeypatch):
    # many participants with few ratings each: the ratings count alone would not warn
    from longitudinal.cli import study as study_cli

    study_cli._check_size(TINY, large=False)  # the measured costs: a few seconds, no note
    assert capsys.readouterr().err == ""
    _fake_costs(monkeypatch, study_cli)
    monkeypatch.setattr(study_cli, "ESTIMATE_FROM_RATINGS", 10**9)
    study_cli._check_size(TINY, large=True)
    assert "note: ratings.csv holds about 34 ratings of 4 participants" in capsys.readouterr().err
    monkeypatch.setattr(study_cli, "ESTIMATE_FROM_SECONDS", 10**6)
    study_cli._check_size(TINY, large=True)
    assert capsys.readouterr().err == ""
