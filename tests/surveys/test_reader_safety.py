"""Reader options and workbook parts refused before a file is parsed (surveys/readers).

An encoding that is not one files are written in (punycode, base64), a wave column that is
the id column, and a workbook part that declares a document type or entities (an entity
bomb) or hides its text in an encoding the check cannot read.
"""

from __future__ import annotations

import io

import openpyxl
import pytest

from surveys._errors import InputValidationError, InvalidParameterError
from surveys.readers import read_responses
from surveys.readers.text import check_encoding
from surveys.readers.workbooks import _declaration_problem

EXPORT = "pid,wave,tas4_1,tas4_2\nP1,pre,4,5\nP1,post,3,5\n"


@pytest.mark.parametrize(
    "name", ["utf-8", "UTF8", "utf-8-sig", "utf-16-le", "latin-1", "cp1252", "shift_jis", "utf-7"]
)
def test_text_encodings_of_files_are_accepted(name):
    assert check_encoding(name) == name


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("punycode", "domain names"),
        ("idna", "domain names"),
        ("unicode_escape", "Python string literals"),
        ("raw_unicode_escape", "Python string literals"),
        ("undefined", "decodes nothing"),
        ("base64", "does not turn bytes into text"),
        ("rot13", "does not turn bytes into text"),
        ("zlib", "does not turn bytes into text"),
        ("no-such-codec", "not a codec Python knows"),
        ("", "not the name of an encoding"),
        (None, "not the name of an encoding"),
    ],
)
def test_other_codecs_are_refused_with_the_accepted_forms(name, why):
    with pytest.raises(InvalidParameterError) as info:
        check_encoding(name)
    message = str(info.value)
    assert why in message and "utf-8, utf-8-sig, utf-16" in message and "latin-1" in message


def test_read_responses_refuses_the_encoding_before_reading(tmp_path):
    with pytest.raises(InvalidParameterError, match="`encoding` parameter of read_responses"):
        read_responses(tmp_path / "absent.csv", encoding="punycode")  # no file needed


def test_a_wave_column_that_is_the_id_column_is_refused(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text(EXPORT, encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="the same column as the `id_col`"):
        read_responses(path, id_col="pid", wave_col="pid")
    default = tmp_path / "default.csv"
    default.write_text(EXPORT.replace("pid", "id"), encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="read as the participant ids by default"):
        read_responses(default, wave_col="id")
    assert list(read_responses(path, id_col="pid", wave_col="wave").data["wave"]) == [
        "pre",
        "post",
    ]


CLEAN = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet><sheetData/></worksheet>'
)
DECLARATION = b'<!DOCTYPE w [<!ENTITY a "lol">]>'


@pytest.mark.parametrize(
    "data",
    [CLEAN, b"\xef\xbb\xbf" + CLEAN, CLEAN.decode().encode("utf-16"), b"\x89PNG\r\n\x1a\n\x00"],
    ids=["utf-8", "utf-8 with bom", "utf-16", "binary"],
)
def test_a_clean_part_passes(data):
    assert _declaration_problem("xl/part.xml", io.BytesIO(data)) is None


@pytest.mark.parametrize(
    "data",
    [
        DECLARATION + CLEAN,
        b"<!doctype w>" + CLEAN,
        b'<!ENTITY a "x">' + CLEAN,
        (DECLARATION + CLEAN).decode().encode("utf-16-le"),  # "<\\0" without a byte order mark
        (DECLARATION + CLEAN).decode().encode("utf-16-be"),
        b" " * ((1 << 20) + 4090) + DECLARATION,  # across the first two blocks read
    ],
    ids=["doctype", "lower case", "entity", "utf-16-le", "utf-16-be", "block boundary"],
)
def test_a_declaration_is_found(data):
    problem = _declaration_problem("xl/part.xml", io.BytesIO(data))
    assert problem is not None and "xl/part.xml" in problem and "<!DOCTYPE" in problem


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (CLEAN.decode().encode("utf-32"), "UTF-32 or EBCDIC"),
        (CLEAN.decode().encode("cp037"), "UTF-32 or EBCDIC"),
        (CLEAN.replace(b"UTF-8", b"UTF-7"), "utf-7"),
        (CLEAN.replace(b"UTF-8", b"ISO-8859-1"), "iso-8859-1"),
    ],
    ids=["utf-32", "ebcdic", "utf-7", "latin-1"],
)
def test_a_part_the_search_cannot_read_is_refused(data, named):
    problem = _declaration_problem("xl/part.xml", io.BytesIO(data))
    assert problem is not None and f"encoded as {named}" in problem


def test_a_workbook_from_openpyxl_reads_and_a_bomb_is_refused_before_parsing(tmp_path):
    import zipfile

    path = tmp_path / "export.xlsx"
    book = openpyxl.Workbook()
    for row in (["id", "tas4_1"], ["P1", 4]):
        book.active.append(row)
    book.save(path)
    assert read_responses(path).data["id"].tolist() == ["P1"]
    with zipfile.ZipFile(path) as source:
        parts = [(info, source.read(info)) for info in source.infolist()]
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(bomb, "w") as target:
        for info, data in parts:
            target.writestr(info, DECLARATION + data if info.filename == "xl/styles.xml" else data)
    with pytest.raises(InputValidationError) as info:
        read_responses(bomb)
    assert "xl/styles.xml" in str(info.value.failure_cases["reason"].iloc[0])
