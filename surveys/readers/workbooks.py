"""Workbook and SPSS exports: Excel sheets (with cached formulas) and ``.sav`` files."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from surveys.readers._common import (
    _ZEROS,
    _fail,
    _Problems,
    _RawTable,
    _require,
)
from surveys.readers.text import (
    _is_blank,
)

#: Bounds of a sheet read from a workbook: Excel's own maximum rows and columns, and the
#: uncompressed size of any one member of the workbook's zip (a sheet's XML, shared strings).
MAX_SHEET_ROWS = 1_048_576
MAX_SHEET_COLUMNS = 16_384
MAX_MEMBER_BYTES = 512 * 1024 * 1024

#: A row or cell start tag (``<row ...>``, ``<c ...>``, any namespace prefix) and its attributes.
_TAG = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(row|c)(?=[\s/>])([^>]*)>")
_REF = re.compile(rb'\sr="([A-Z]*)(\d+)"')
_DIMENSION = re.compile(
    rb'<(?:[A-Za-z_][\w.-]*:)?dimension\s+ref="[A-Z]*\d*:?([A-Z]{1,4})(\d{1,12})"'
)


def _row_number(digits: bytes) -> int:
    """Return the row of a reference (10**12, past any bound, when it has over 12 digits)."""
    digits = digits.lstrip(b"0")
    return 10**12 if len(digits) > 12 else int(digits or b"0")


def _column_number(letters: bytes) -> int:
    if len(letters) > 6:
        return 26**6
    number = 0
    for ch in letters:
        number = number * 26 + ch - 64
    return number


def _check_members(path: Path, file: str) -> None:
    """Refuse a workbook whose zip holds a member larger than :data:`MAX_MEMBER_BYTES` unpacked.

    The sizes are read from the zip's directory, before anything is unpacked. Then every
    member is scanned for a document type or entity declaration (:func:`_declaration_problem`)
    before any XML parser sees it.
    """
    import zipfile
    import zlib

    unreadable = (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError)
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (*unreadable, ValueError) as err:
        _fail(file, f"the file cannot be read as an Excel .xlsx workbook ({err})")
    for info in members:
        if info.file_size > MAX_MEMBER_BYTES:
            _fail(
                file,
                f"the workbook part {info.filename} unpacks to {info.file_size:,} bytes, more "
                f"than the limit of {MAX_MEMBER_BYTES:,} bytes (a workbook bomb or a sheet too "
                "large to read); save the sheet as CSV instead",
                summary=f"{file} is too large to read",
            )
    problem = None
    try:
        with zipfile.ZipFile(path) as archive:
            for info in members:
                if not info.is_dir() and problem is None:
                    with archive.open(info) as stream:
                        problem = _declaration_problem(info.filename, stream)
    except (*unreadable, RuntimeError) as err:  # RuntimeError: an encrypted member
        _fail(file, f"the file cannot be read as an Excel .xlsx workbook ({err})")
    if problem is not None:
        _fail(file, problem, summary=f"{file} cannot be read safely")


#: A document type or entity declaration, in any letter case.
_DECLARATION = re.compile(rb"<!(?i:doctype|entity)")
_DECLARATION_TEXT = re.compile(r"<!(?i:doctype|entity)")
_XML_ENCODING = re.compile(rb"""\s*<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']""")
#: How a part starts -> the encoding it is searched in (None: refused, the search cannot see
#: through it). UTF-32 and EBCDIC first, then the byte order marks, then UTF-16 without one.
_STARTS = (
    (b"\x00\x00\xfe\xff", None),
    (b"\xff\xfe\x00\x00", None),
    (b"\x00\x00\x00<", None),
    (b"<\x00\x00\x00", None),
    (b"\x4c\x6f\xa7\x94", None),  # "<?xm" in EBCDIC
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"<\x00", "utf-16-le"),
    (b"\x00<", "utf-16-be"),
)
_ASCII_NAMES = ("utf-8", "utf8", "us-ascii", "ascii")


def _declaration_problem(member: str, stream: Any) -> str | None:
    """Say why a workbook part may not be parsed (``<!DOCTYPE``, ``<!ENTITY``), or None.

    A workbook written by Excel, LibreOffice or openpyxl declares no document type; an entity
    declared in one can expand to gigabytes (the "billion laughs") or reach files outside the
    workbook. The part's bytes are read in blocks and searched as they are (UTF-8 and ASCII)
    or, when the part starts with a byte order mark or a ``<`` in UTF-16, decoded from UTF-16
    first. A part in another encoding (UTF-32, EBCDIC, or another one its XML declaration
    names) is refused too: the search could not see through it, and Office Open XML allows
    only UTF-8 and UTF-16.
    """
    import codecs

    head = stream.read(4096)
    encoding, skip = "utf-8", 0
    for mark, found in _STARTS:
        if head.startswith(mark):
            encoding, skip = found, len(mark) if found == "utf-8" else 0
            break
    declared = _XML_ENCODING.match(head, skip) if encoding == "utf-8" else None
    name = declared.group(1).decode("ascii", "replace").lower() if declared else "utf-8"
    if encoding is None or name not in _ASCII_NAMES:
        return (
            f"the workbook part {member} is encoded as {name if declared else 'UTF-32 or EBCDIC'}"
            "; an Excel workbook's parts are UTF-8 or UTF-16, so this one is damaged or built "
            "to hide its content from checks; save the sheet again from Excel, or as CSV"
        )
    decoder = None if encoding == "utf-8" else codecs.getincrementaldecoder(encoding)("replace")
    carry: Any = b"" if decoder is None else ""
    block = head
    while block:
        text = carry + (block if decoder is None else decoder.decode(block))
        if (_DECLARATION if decoder is None else _DECLARATION_TEXT).search(text):
            return (
                f"the workbook part {member} holds a document type or entity declaration "
                "(<!DOCTYPE or <!ENTITY); an Excel workbook has none, and its entities can "
                "expand to gigabytes or read files outside the workbook (an entity bomb); the "
                "workbook is refused before it is parsed: save the sheet again from Excel, or "
                "as CSV"
            )
        carry = text[-16:]
        block = stream.read(1 << 20)
    return None


def _check_sheet_bounds(file: str, name: str, stream: Any) -> None:
    """Refuse a sheet that declares or holds more rows or columns than Excel allows.

    ``stream`` is the sheet's XML, read in blocks and searched for the declared dimension and
    the row and cell elements, without building the sheet. Each row and cell is placed where
    the reader places it: at its ``r=`` reference when it has one, else one past the row or
    cell before it (a row's cells start again from column 1), so cells and rows written
    without references count too. The scan stops at the first row or column past a bound, so
    a sheet of millions of empty rows is refused in seconds.
    """

    def refuse(what: str, found: int, limit: int) -> None:
        _fail(
            file,
            f"sheet {name!r} {what} {found:,}, more than the limit of {limit:,} (Excel's "
            "maximum); the workbook is damaged or built to stall the reader",
            summary=f"{file} is too large to read",
        )

    rows = row = column = 0
    carry = b""
    first = True
    while True:
        block = stream.read(1 << 20)
        if not block:
            break
        text = carry + block
        end = text.rfind(b">") + 1
        text, carry = text[:end], text[end:]
        if len(carry) > 1 << 20:  # a long text node holds no tag
            carry = carry[-4096:]
        if first:
            first = False
            match = _DIMENSION.search(text)
            if match:
                if int(match.group(2)) > MAX_SHEET_ROWS:
                    refuse("declares rows up to", int(match.group(2)), MAX_SHEET_ROWS)
                if _column_number(match.group(1)) > MAX_SHEET_COLUMNS:
                    refuse(
                        "declares columns up to", _column_number(match.group(1)), MAX_SHEET_COLUMNS
                    )
        for tag, attributes in _TAG.findall(text):
            ref = _REF.search(attributes)
            if tag == b"row":
                rows += 1
                row = _row_number(ref.group(2)) if ref else row + 1
                column = 0
                if rows > MAX_SHEET_ROWS:
                    refuse("holds rows past", rows, MAX_SHEET_ROWS)
                if row > MAX_SHEET_ROWS:
                    refuse("holds a row numbered", row, MAX_SHEET_ROWS)
                continue
            if ref is not None and _row_number(ref.group(2)) > MAX_SHEET_ROWS:
                refuse("holds a row numbered", _row_number(ref.group(2)), MAX_SHEET_ROWS)
            column = _column_number(ref.group(1)) if ref and ref.group(1) else column + 1
            if column > MAX_SHEET_COLUMNS:
                refuse("holds a column numbered", column, MAX_SHEET_COLUMNS)


def _bounded(workbook: Any, file: str) -> None:
    """Check every sheet of a read-only workbook and make its reader ignore the dimension.

    See :func:`_check_sheet_bounds`; rows and columns then end where the cells end.
    """
    for name in workbook.sheetnames:
        sheet = workbook[name]
        member = getattr(sheet, "_worksheet_path", None)
        if member is not None:
            with workbook._archive.open(member) as stream:
                _check_sheet_bounds(file, name, stream)
        if hasattr(sheet, "reset_dimensions"):
            sheet.reset_dimensions()


def _sheet_records(sheet: Any) -> list[tuple[int, list[Any]]]:
    records = [
        (row, list(values))
        for row, values in enumerate(sheet.iter_rows(min_row=1, values_only=True), start=1)
    ]
    return [(row, values) for row, values in records if not _is_blank(values)]


def _uncached_formulas(path: Path, sheet_name: str, blanks: set[tuple[int, int]]) -> list:
    """Return ``(row, column letter, formula)`` of each blank cell that holds a formula."""
    openpyxl = importlib.import_module("openpyxl")
    from openpyxl.utils import get_column_letter

    found = []
    workbook = openpyxl.load_workbook(path, read_only=True, data_only=False)
    try:
        workbook[sheet_name].reset_dimensions()  # checked by _read_xlsx
        for row, cells in enumerate(workbook[sheet_name].iter_rows(values_only=True), start=1):
            for j, value in enumerate(cells):
                if (row, j) in blanks and isinstance(value, str) and value.startswith("="):
                    found.append((row, get_column_letter(j + 1), value))
    finally:
        workbook.close()
    return found


def _read_xlsx(path: Path, sheet: str | None) -> _RawTable:
    file = str(path)
    openpyxl = _require("openpyxl", feature="read_responses(format='xlsx')")
    from zipfile import BadZipFile

    _check_members(path, file)
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (
        BadZipFile,
        KeyError,
        ValueError,
        openpyxl.utils.exceptions.InvalidFileException,
    ) as err:
        _fail(file, f"the file cannot be read as an Excel .xlsx workbook ({err})")
    try:
        _bounded(workbook, file)
        names = list(workbook.sheetnames)
        if sheet is not None and sheet not in names:
            _fail(
                file,
                f"the workbook has no sheet {sheet!r}; its sheets are "
                + ", ".join(repr(n) for n in names),
                value=sheet,
            )
        filled = {name: _sheet_records(workbook[name]) for name in names}
        chosen = filled[sheet or names[0]]
        formats: list[str] = []
        if len(chosen) > 1:
            first = chosen[1][0]
            cells = next(workbook[sheet or names[0]].iter_rows(min_row=first, max_row=first))
            formats = [str(getattr(cell, "number_format", "") or "") for cell in cells]
    finally:
        workbook.close()
    others = [n for n in names if filled[n] and n != (sheet or names[0])]
    if sheet is None and others:
        _fail(
            file,
            f"the workbook holds data on {len(others) + 1} sheets ("
            + ", ".join(repr(n) for n in [names[0], *others])
            + "); name the sheet to read with sheet= (CLI: --sheet NAME), or join the "
            "sheets into one",
            summary=f"cannot tell which sheet of {file} to read",
        )
    sheet = sheet or names[0]
    records = filled[sheet]
    if not records:
        _fail(file, f"the sheet {sheet!r} is empty", summary=f"no responses in {file}")
    header_row, raw_header = records[0]
    if len(records) == 1:
        _fail(
            file,
            f"the sheet {sheet!r} has a header row but no data rows",
            row=header_row,
            summary=f"no responses in {file}",
        )
    width = max(len(values) for _, values in records)
    header = [("" if h is None else str(h).strip()) for h in raw_header]
    header += [""] * (width - len(header))
    rows = [list(values) + [None] * (width - len(values)) for _, values in records[1:]]
    numbers = [row for row, _ in records[1:]]
    blanks = {
        (row, j)
        for row, values in zip(numbers, rows, strict=True)
        for j, v in enumerate(values)
        if v is None
    }
    if blanks:
        formulas = _uncached_formulas(path, sheet, blanks)
        if formulas:
            problems = _Problems()
            for row, letter, formula in formulas:
                problems.add(
                    file,
                    row,
                    header[openpyxl.utils.column_index_from_string(letter) - 1] or letter,
                    formula,
                    f"cell {letter}{row} holds a formula whose value was never calculated "
                    "and saved; open the workbook in Excel and save it (or paste the values)",
                )
            problems.raise_if_any(f"{file} has formulas without saved values")
    table = _RawTable(file=file, header=header, rows=rows, row_numbers=numbers, fmt="xlsx")
    table.pad = {
        name: len(fmt) for name, fmt in zip(header, formats, strict=False) if _ZEROS.fullmatch(fmt)
    }
    if others:
        table.note = (
            f"read sheet {sheet!r} of {file}; the sheets "
            + ", ".join(repr(n) for n in others)
            + " also hold data and were not read"
        )
    return table


def _read_sav(path: Path) -> _RawTable:
    file = str(path)
    pyreadstat = _require("pyreadstat", feature="read_responses(format='sav')")
    try:
        frame, info = pyreadstat.read_sav(str(path), apply_value_formats=False)
    except (pyreadstat.ReadstatError, pyreadstat.PyreadstatError) as err:
        _fail(file, f"the file cannot be read as an SPSS .sav file ({err})")
    if frame.shape[0] == 0:
        _fail(file, "the file has variables but no cases", summary=f"no responses in {file}")
    header = [str(c) for c in frame.columns]
    rows = [list(values) for values in frame.itertuples(index=False, name=None)]
    numbers = list(range(2, len(rows) + 2))
    table = _RawTable(file=file, header=header, rows=rows, row_numbers=numbers, fmt="sav")
    for name, spss_format in (getattr(info, "original_variable_types", None) or {}).items():
        match = re.fullmatch(r"N(\d+)", str(spss_format))
        if match:  # SPSS N format: a restricted numeric shown with leading zeros
            table.pad[str(name)] = int(match.group(1))
    return table
