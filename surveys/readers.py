"""Read raw questionnaire exports (CSV, Excel, Qualtrics, SPSS) into an item table.

The readers turn a file as a survey platform wrote it into a :class:`Responses` object: a
DataFrame with one row per response, plus the file line of every row so that later checks
(:func:`surveys.validation.validate_responses`) can point at the exact cell to fix.

The readers never guess silently. What the file declares is used (a byte-order mark selects
UTF-8 or UTF-16; the header line shows the delimiter); they refuse files that are not UTF-8
(unless an ``encoding`` is given), that are empty, that repeat a column name, whose rows do
not line up with the header, workbooks with data on several sheets when no sheet is named,
formulas without a saved value, and Qualtrics ``Status``/``Finished`` values outside the
known table; every such problem is raised as :class:`surveys.InputValidationError` naming the
file, row and column. Text found in an item column is kept as it is (validation reports it);
it is never converted to a number or to a missing value. Ids are labels, read as text.
"""

from __future__ import annotations

import csv
import datetime as _dt
import importlib
import io
import json
import math
import os
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import numpy as np
import pandas as pd

from surveys._errors import DataQualityWarning, InputValidationError, InvalidParameterError

__all__ = ["FORMATS", "QUALTRICS_METADATA_COLUMNS", "Responses", "read_responses"]

#: Formats understood by :func:`read_responses`.
FORMATS = ("csv", "xlsx", "qualtrics", "sav")

#: Columns Qualtrics writes before the question columns; they are never item columns,
#: so missing-value codes are not applied to them.
QUALTRICS_METADATA_COLUMNS = (
    "StartDate",
    "EndDate",
    "Status",
    "IPAddress",
    "Progress",
    "Duration (in seconds)",
    "Finished",
    "RecordedDate",
    "ResponseId",
    "RecipientLastName",
    "RecipientFirstName",
    "RecipientEmail",
    "ExternalReference",
    "LocationLatitude",
    "LocationLongitude",
    "DistributionChannel",
    "UserLanguage",
)

_EXTENSIONS = {".csv": "csv", ".xlsx": "xlsx", ".xlsm": "xlsx", ".sav": "sav", ".zsav": "sav"}
_FLAG_MODES = ("raise", "exclude", "keep")
# Cells that mean "no answer" in every format: an empty cell, and R's NA.
_MISSING_TOKENS = frozenset({"", "NA"})
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_ZEROS = re.compile(r"0{2,}")
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
_OTHER_DELIMITERS = {";": "semicolon", "\t": "tab", "|": "pipe"}

# Qualtrics response types (the ``Status`` column), numeric export code -> label, and
# what each means here: ``None`` keeps the row, text names the flag. The codes are those
# listed by the SPSS syntax Qualtrics exports; see docs/readers.md for their sources.
_STATUS_CODES: dict[str, tuple[str, str | None]] = {
    "0": ("IP Address", None),
    "1": ("Survey Preview", "survey preview"),
    "2": ("Survey Test", "survey test"),
    "4": ("Imported", None),
    "8": ("Spam", "spam"),
    "9": ("Survey Preview Spam", "survey preview, spam"),
    "12": ("Imported Spam", "spam"),
    "16": ("Offline", None),
    "17": ("Offline Survey Preview", "survey preview"),
}
_STATUS_TEXT = {label.lower(): code for code, (label, _) in _STATUS_CODES.items()}
_CHANNEL_FLAGS = {"preview": "survey preview", "test": "survey test"}
# ``Finished``: text, numeric and localized forms Qualtrics writes.
_FINISHED_TRUE = frozenset({"true", "1", "yes", "ja", "oui", "si", "s\u00ed", "sim", "wahr"})
_FINISHED_FALSE = frozenset({"false", "0", "no", "nein", "non", "n\u00e3o", "nao", "falsch"})
_FLAG_HINT = "leave flagged rows out with flagged='exclude' (CLI: --exclude-flagged)"

Cell = str | float | None


@dataclass(frozen=True)
class Responses:
    """Responses read from one raw export.

    Attributes
    ----------
    data : pandas.DataFrame
        One row per response: the id column and the optional wave column as strings (labels
        exactly as written; integral numbers from Excel or SPSS cells written without a
        decimal point), item columns as float where every cell is a number, ``object``
        columns (numbers as float, text as the stripped raw string) where some cell holds
        text, and every other column of the export. With ``flagged="keep"`` two more
        columns: ``_flagged`` (bool) and ``_flag_reason`` (str, ``""`` when not flagged).
    source : str
        The path that was read.
    row_numbers : pandas.Series
        Aligned to ``data.index``: the row of the source file each response came from
        (header = row 1; first data row of a plain CSV = 2, of a Qualtrics export = 4; the
        spreadsheet row for Excel; case number + 1 for SPSS).
    excluded : pandas.DataFrame
        Rows left out (``flagged="exclude"``), with the columns ``file, row, rule, reason``:
        ``rule`` is the flag cell that removed the row (``Status=2``, ``Finished=False``).
    meta : dict
        Provenance: ``format``, ``encoding``, ``n_rows_read``, ``n_excluded``,
        ``missing_codes`` (``{column: number of cells turned into NaN}``), ``item_map``
        (``{export column: item id}`` applied) and, for Qualtrics exports,
        ``question_text`` and ``import_ids`` (``{column: text}``).
    """

    data: pd.DataFrame
    source: str
    row_numbers: pd.Series
    excluded: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class _RawTable:
    """A parsed file before any interpretation: header, cells, and row of each record."""

    file: str
    header: list[str]
    rows: list[list[Any]]
    row_numbers: list[int]
    fmt: str
    question_text: dict[str, str] = field(default_factory=dict)
    import_ids: dict[str, str] = field(default_factory=dict)
    encoding: str | None = None
    delimiter: str | None = None
    note: str | None = None
    # zero-padded display width of numeric columns (Excel "000", SPSS N3): ids keep it
    pad: dict[str, int] = field(default_factory=dict)
    # column-major cells (one pyarrow string array per column) from the fast CSV path;
    # ``rows`` is then empty
    arrow: list[Any] | None = None


class _Problems:
    """Failure rows gathered while reading; raised together."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, file: str, row: int | None, column: str | None, value: Any, reason: str):
        self.rows.append(
            {"file": file, "row": row, "column": column, "value": value, "reason": reason}
        )

    def raise_if_any(self, summary: str) -> None:
        if self.rows:
            cases = pd.DataFrame(self.rows, columns=["file", "row", "column", "value", "reason"])
            cases["row"] = cases["row"].astype("Int64")
            raise InputValidationError(cases, summary)


def _fail(file: str, reason: str, *, row=None, column=None, value=None, summary=None) -> None:
    problems = _Problems()
    problems.add(file, row, column, value, reason)
    problems.raise_if_any(summary or f"cannot read {file}")


def _require(module: str, *, feature: str) -> ModuleType:
    """Import an optional reader dependency or say how to install it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name is None or not module.startswith(err.name):
            raise
        raise ImportError(
            f"{feature} needs the optional package {module!r}; "
            "install it with pip install 'empathic-longitudinal[readers]'"
        ) from err


# --------------------------------------------------------------------------- cells


def _parse_number(text: str) -> float | None:
    """Return the float written in ``text`` or None when it is not a plain decimal number."""
    if _NUMBER.fullmatch(text):
        return float(text)
    return None


def _normalise_cell(value: Any) -> Cell:
    """Map a raw cell to None (missing), a float, or stripped text. Never guesses."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        return None if math.isnan(number) else number
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, pd.Timestamp):
        return None if pd.isna(value) else value.isoformat()
    text = str(value).strip()
    if text in _MISSING_TOKENS:
        return None
    number = _parse_number(text)
    return text if number is None else number


def _label(value: Any) -> str | None:
    """Return an id or wave label as a string (integral numbers without a ``.0``)."""
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return None
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    text = str(value).strip()
    return None if text in _MISSING_TOKENS else text


def _missing_code_sets(missing_codes: Iterable[Any]) -> tuple[set[float], set[str]]:
    numbers: set[float] = set()
    texts: set[str] = set()
    if isinstance(missing_codes, str | bytes) or not isinstance(missing_codes, Iterable):
        raise InvalidParameterError(
            "the `missing_codes` parameter of read_responses must be a sequence of numbers or "
            f"strings, e.g. (-99, 'n/a'); got {missing_codes!r}"
        )
    for code in missing_codes:
        if isinstance(code, bool | np.bool_) or not isinstance(
            code, int | float | str | np.integer | np.floating
        ):
            raise InvalidParameterError(
                "each entry of the `missing_codes` parameter of read_responses must be a number "
                f"or a string; got {code!r} ({type(code).__name__})"
            )
        if isinstance(code, str):
            text = code.strip()
            number = _parse_number(text)
            if number is None:
                texts.add(text)
            else:
                numbers.add(number)
        else:
            numbers.add(float(code))
    return numbers, texts


# --------------------------------------------------------------------------- file formats


def _infer_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in _EXTENSIONS:
        return _EXTENSIONS[suffix]
    if suffix == ".xls":
        _fail(
            str(path),
            "the old Excel .xls format is not supported; save the file as .xlsx "
            "(Excel Workbook) or as CSV UTF-8",
        )
    raise InvalidParameterError(
        f"read_responses cannot tell the format of {str(path)!r} from its extension "
        f"{suffix or '(none)'!r}; pass format= one of {', '.join(FORMATS)}"
    )


_BOMS = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


def _read_text(path: Path, encoding: str) -> tuple[str, str]:
    """Decode a text file; return ``(text, encoding used)``.

    A byte-order mark decides the encoding when the default UTF-8 is asked for: Excel's
    "Unicode text" is UTF-16 with a BOM. Offsets in messages count from the file's first
    byte, the BOM included.
    """
    file = str(path)
    raw = path.read_bytes()
    utf8 = encoding.lower().replace("_", "-") in {"utf-8", "utf8", "utf-8-sig"}
    skip, used = 0, encoding
    if utf8:
        used = "utf-8"
        for bom, name in _BOMS:
            if raw.startswith(bom):
                skip, used = len(bom), name
                break
    head = raw[:4000]
    if used == "utf-8" and head and head.count(b"\x00") > len(head) // 4:
        _fail(
            file,
            "the file looks like UTF-16 text without a byte-order mark (every other byte is "
            "0); pass encoding='utf-16-le' (CLI: --encoding utf-16-le), or re-save the file "
            "as 'CSV UTF-8'",
            summary=f"cannot decode {file}",
        )
    try:
        text = raw[skip:].decode(used)
    except UnicodeDecodeError as err:
        start = err.start + skip
        line = raw[:start].count(b"\n") + 1
        bad = raw[start : start + 1].hex().upper()
        name = "UTF-8" if used == "utf-8" else used
        if used == "utf-8":
            hint = (
                "re-save the file as 'CSV UTF-8' (Excel: File > Save As > CSV UTF-8) or pass "
                "the file's encoding (encoding='latin-1', CLI: --encoding latin-1)"
            )
        else:
            hint = "check which encoding the file was saved with"
        _fail(
            file,
            f"the file is not valid {name}: byte 0x{bad} "
            f"at byte offset {start} (line {line}) cannot be decoded; {hint}",
            row=line,
            summary=f"cannot decode {file}",
        )
    except LookupError as err:
        raise InvalidParameterError(
            f"the `encoding` parameter of read_responses must be a codec Python knows, "
            f"e.g. 'utf-8' or 'latin-1'; got {encoding!r}"
        ) from err
    return text.lstrip("\ufeff"), used


def _sniff_delimiter(text: str) -> str:
    """Return the header line's delimiter: comma, else tab, else semicolon (comma if none)."""
    for line in text.splitlines():
        if line.strip():
            for candidate in (",", "\t", ";"):
                if candidate in line:
                    return candidate
            break
    return ","


def _records(text: str, file: str, delimiter: str) -> list[tuple[int, list[str]]]:
    """Parse CSV text into ``(row, fields)``; ``row`` counts records, blank ones included."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    out: list[tuple[int, list[str]]] = []
    row = 0
    try:
        for row, fields in enumerate(reader, start=1):
            out.append((row, fields))
    except csv.Error as err:
        _fail(
            file,
            f"the CSV structure is broken near row {row + 1} ({err}); check for an unclosed "
            "or stray quote",
            row=row + 1,
        )
    return out


def _is_blank(fields: Sequence[Any]) -> bool:
    return all(f is None or (isinstance(f, str) and not f.strip()) for f in fields)


def _looks_like_import_ids(fields: Sequence[str]) -> bool:
    """Qualtrics writes ``{"ImportId":"QID1_1"}`` style JSON in every cell of its row 3."""
    found = False
    for cell in fields:
        cell = cell.strip()
        if not cell:
            continue
        if not cell.startswith("{"):
            return False
        try:
            parsed = json.loads(cell)
        except json.JSONDecodeError:
            return False
        if not isinstance(parsed, dict) or "ImportId" not in parsed:
            return False
        found = True
    return found


def _check_delimiter(header: list[str], file: str, delimiter: str) -> None:
    if len(header) != 1:
        return
    for other, name in _OTHER_DELIMITERS.items():
        if other != delimiter and other in header[0]:
            _fail(
                file,
                f"the delimiter looks wrong: the header is one column that contains {name} "
                f"characters ({other!r}), so the file seems to be {name}-separated; save it as "
                f"comma-separated CSV or pass delimiter={other!r} (CLI: --delimiter {other!r})",
                row=1,
                value=header[0][:60],
                summary=f"cannot read {file}",
            )


def _table_from_records(
    records: list[tuple[int, list[str]]], *, file: str, header_at: int, fmt: str, delimiter: str
) -> _RawTable:
    header_row, header = records[header_at]
    header = [name.strip() for name in header]
    _check_delimiter(header, file, delimiter)
    data = [(row, fields) for row, fields in records[header_at + 1 :] if not _is_blank(fields)]
    if fmt == "qualtrics":
        data = [(row, fields) for row, fields in records[3:] if not _is_blank(fields)]
    if not data:
        _fail(
            file,
            "the file has a header row but no data rows",
            row=header_row,
            summary=f"no responses in {file}",
        )
    problems = _Problems()
    width = len(header)
    rows: list[list[Any]] = []
    numbers: list[int] = []
    for row, fields in data:
        if len(fields) > width and not _is_blank(fields[width:]):
            problems.add(
                file,
                row,
                None,
                None,
                f"the row has {len(fields)} fields but the header has {width}; check for an "
                "unquoted delimiter inside a value",
            )
            continue
        if len(fields) < width:
            problems.add(
                file,
                row,
                None,
                None,
                f"the row has {len(fields)} fields but the header has {width}",
            )
            continue
        rows.append(list(fields[:width]))
        numbers.append(row)
    problems.raise_if_any(f"rows of {file} do not match its header")
    return _RawTable(file=file, header=header, rows=rows, row_numbers=numbers, fmt=fmt)


def _read_csv_like(
    path: Path, *, fmt: str | None, encoding: str, delimiter: str | None
) -> _RawTable:
    file = str(path)
    text, used = _read_text(path, encoding)
    if not text.strip():
        _fail(file, "the file is empty", summary=f"no responses in {file}")
    delimiter = delimiter or _sniff_delimiter(text)
    records = _records(text, file, delimiter)
    while records and _is_blank(records[0][1]):
        records.pop(0)
    first_three = [fields for _, fields in records[:3]]
    qualtrics = len(first_three) == 3 and _looks_like_import_ids(first_three[2])
    if fmt == "qualtrics" and not qualtrics:
        _fail(
            file,
            "this is not a Qualtrics export: row 3 should hold the ImportId JSON of every "
            'column (e.g. {"ImportId":"QID1_1"}); export from Qualtrics as CSV with the '
            "default three header rows, or read the file with format='csv'",
            row=3 if len(records) >= 3 else None,
        )
    fmt = fmt or ("qualtrics" if qualtrics else "csv")
    table = _table_from_records(records, file=file, header_at=0, fmt=fmt, delimiter=delimiter)
    table.encoding, table.delimiter = used, delimiter
    if fmt == "qualtrics":
        names = table.header
        texts = [t.strip() for t in records[1][1]]
        ids = [t.strip() for t in records[2][1]]
        table.question_text = dict(zip(names, texts, strict=False))
        table.import_ids = {}
        for name, cell in zip(names, ids, strict=False):
            try:
                table.import_ids[name] = str(json.loads(cell).get("ImportId", ""))
            except (json.JSONDecodeError, AttributeError):
                table.import_ids[name] = cell
    return table


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
        for row, cells in enumerate(workbook[sheet_name].iter_rows(values_only=True), start=1):
            for j, value in enumerate(cells):
                if (row, j) in blanks and isinstance(value, str) and value.startswith("="):
                    found.append((row, get_column_letter(j + 1), value))
    finally:
        workbook.close()
    return found


def _read_csv_fast(path: Path, delimiter: str | None) -> _RawTable | None:
    """Read a plain UTF-8 CSV column-wise with pyarrow, or return None to use the full reader.

    Only files where both readers must agree take this path: no quote character after the
    header line, no byte-order mark, no blank or whitespace-only line, a header of at least
    two distinct, non-empty names without surrounding spaces, and every record on one line
    with as many fields as the header. Anything else (and a missing pyarrow) goes to the
    record reader, which also produces the messages.
    """
    try:
        pa = importlib.import_module("pyarrow")
        pacsv = importlib.import_module("pyarrow.csv")
    except ModuleNotFoundError:
        return None
    raw = path.read_bytes()
    end = raw.find(b"\n")
    if (
        end < 0
        or b'"' in raw[end:]
        or raw.startswith(b"\xef\xbb\xbf")
        or raw[:1] in (b"\n", b"\r", b"")
        or b"\n\n" in raw
        or b"\n\r\n" in raw
        or b"\r" in raw.replace(b"\r\n", b"")
    ):
        return None
    try:
        header_line = raw[:end].decode("utf-8").rstrip("\r")
        delimiter = delimiter or _sniff_delimiter(header_line)
        names = next(csv.reader([header_line], delimiter=delimiter, strict=True))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return None
    if (
        len(names) < 2
        or len(set(names)) != len(names)
        or any(not n or n != n.strip() for n in names)
    ):
        return None
    columns = [f"c{j}" for j in range(len(names))]
    try:
        table = pacsv.read_csv(
            io.BytesIO(raw),
            read_options=pacsv.ReadOptions(column_names=columns, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False),
            convert_options=pacsv.ConvertOptions(
                column_types=dict.fromkeys(columns, pa.string()),
                null_values=[],
                strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    n = table.num_rows
    if n == 0 or _has_blank_record(table):
        return None  # the full reader says "no data rows" or skips the blank record
    return _RawTable(
        file=str(path),
        header=names,
        rows=[],
        row_numbers=list(range(2, n + 2)),
        fmt="csv",
        encoding="utf-8",
        delimiter=delimiter,
        arrow=[table.column(j) for j in range(len(names))],
    )


def _has_blank_record(table: Any) -> bool:
    """Whether a record has only empty or whitespace fields (only when its first field is)."""
    pc = importlib.import_module("pyarrow.compute")
    blank = pc.equal(pc.utf8_trim_whitespace(table.column(0)), "")
    if not pc.any(blank).as_py():
        return False
    for j in range(1, table.num_columns):
        blank = pc.and_(blank, pc.equal(pc.utf8_trim_whitespace(table.column(j)), ""))
    return bool(pc.any(blank).as_py())


_ARROW_NUMBER = r"^" + _NUMBER.pattern + r"$"


def _arrow_numbers(cells: Any, codes: set[float]) -> tuple[np.ndarray, int] | None:
    """Return a column of plain decimal numbers and empty/NA cells as floats, or None.

    None when any cell is something else (text, spaces, ``inf``): the cell-wise rules then
    decide, so both paths give the same values.
    """
    pc = importlib.import_module("pyarrow.compute")
    empty = pc.or_(pc.equal(cells, ""), pc.equal(cells, "NA"))
    plain = pc.match_substring_regex(cells, _ARROW_NUMBER)
    if not pc.all(pc.or_(empty, plain)).as_py():
        return None
    values = pc.cast(pc.if_else(empty, None, cells), "float64").to_numpy(zero_copy_only=False)
    values = np.array(values, dtype=np.float64)  # writable, owned
    replaced = 0
    if codes:
        hit = np.isin(values, list(codes))
        replaced = int(hit.sum())
        values[hit] = np.nan
    return values, replaced


def _text_numbers(cells: list[str], codes: set[float], decimal: str) -> Any:
    """Parse a column of CSV text cells column-wise (see :func:`_arrow_numbers`), or None.

    Cells are trimmed of ASCII whitespace only, a subset of what ``str.strip`` removes, so
    a cell this path accepts is read the same by the cell-wise rules.
    """
    if decimal != ".":
        return None
    try:
        pa = importlib.import_module("pyarrow")
        pc = importlib.import_module("pyarrow.compute")
    except ModuleNotFoundError:
        return None
    return _arrow_numbers(pc.ascii_trim_whitespace(pa.array(cells, type=pa.string())), codes)


def _read_xlsx(path: Path, sheet: str | None) -> _RawTable:
    file = str(path)
    openpyxl = _require("openpyxl", feature="read_responses(format='xlsx')")
    from zipfile import BadZipFile

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


# --------------------------------------------------------------------------- interpretation


def _check_header(table: _RawTable) -> None:
    """Drop unnamed empty columns; reject unnamed non-empty and repeated column names."""
    problems = _Problems()
    keep = []
    for j, name in enumerate(table.header):
        if name:
            keep.append(j)
            continue
        values = [r[j] for r in table.rows]
        if _is_blank(values):
            continue
        problems.add(
            table.file,
            1,
            None,
            None,
            f"column {j + 1} has values but no name in the header; add a column name",
        )
    seen: dict[str, list[int]] = {}
    for j in keep:
        seen.setdefault(table.header[j], []).append(j + 1)
    for name, positions in seen.items():
        if len(positions) > 1:
            problems.add(
                table.file,
                1,
                name,
                None,
                f"the column name is used {len(positions)} times (columns "
                f"{', '.join(map(str, positions))}); every column needs a unique name",
            )
    problems.raise_if_any(f"the header of {table.file} is not usable")
    if len(keep) != len(table.header):
        table.header = [table.header[j] for j in keep]
        table.rows = [[r[j] for j in keep] for r in table.rows]


def _flag_value(cell: Any) -> str:
    """Return a flag cell as text: integral numbers without ``.0`` (``2.0`` -> ``"2"``)."""
    text = _label(cell) or ""
    number = _parse_number(text)
    if number is not None and number.is_integer():
        return str(int(number))
    return text


def _qualtrics_flags(table: _RawTable) -> list[list[tuple[str, str, str]]]:
    """Per row, the ``(column, value, rule)`` of every Qualtrics flag that applies.

    ``Status`` and ``Finished`` values that are not in the tables (:data:`_STATUS_CODES`,
    ``_FINISHED_TRUE``/``_FINISHED_FALSE``) are refused, never guessed: the same row is
    treated the same whichever export option (numeric or text values) wrote it.
    """
    index = {name: j for j, name in enumerate(table.header)}
    problems = _Problems()
    known_status = ", ".join(f"{code} {label}" for code, (label, _) in _STATUS_CODES.items())
    flags: list[list[tuple[str, str, str]]] = []
    for row, cells in zip(table.row_numbers, table.rows, strict=True):
        found: list[tuple[str, str, str]] = []
        if "Status" in index:
            value = _flag_value(cells[index["Status"]])
            code = value if value in _STATUS_CODES else _STATUS_TEXT.get(value.lower())
            if code is None:
                problems.add(
                    table.file,
                    row,
                    "Status",
                    value or None,
                    "unknown Qualtrics response type; expected one of the codes or labels "
                    f"{known_status}",
                )
            else:
                label, flag = _STATUS_CODES[code]
                if flag:
                    found.append(("Status", value, f"{flag} (Status {code} = {label})"))
        if "DistributionChannel" in index:
            value = _label(cells[index["DistributionChannel"]]) or ""
            flag = _CHANNEL_FLAGS.get(value.lower())
            if flag and not any(rule.startswith(flag) for _, _, rule in found):
                found.append(("DistributionChannel", value, f"{flag} (DistributionChannel)"))
        if "Finished" in index:
            value = _flag_value(cells[index["Finished"]])
            if value.lower() in _FINISHED_FALSE:
                found.append(("Finished", value, "unfinished response (Finished = false)"))
            elif value.lower() not in _FINISHED_TRUE:
                problems.add(
                    table.file,
                    row,
                    "Finished",
                    value or None,
                    "unknown Finished value; expected True/False, 1/0 or yes/no "
                    "(also ja/nein, oui/non, si/no, sim/n\u00e3o)",
                )
        flags.append(found)
    problems.raise_if_any(f"{table.file} has Qualtrics flag values that cannot be read")
    return flags


def _describe_flags(found: list[tuple[str, str, str]]) -> str:
    """Say why a row is flagged, e.g. ``survey preview (Status 1 = Survey Preview)``."""
    return "; ".join(rule for _, _, rule in found)


def _load_item_map(item_map: str | os.PathLike | Mapping[str, str]) -> dict[str, str]:
    """Read an item map (``column,item`` CSV or dict) into ``{export column: item id}``."""
    if isinstance(item_map, Mapping):
        bad = [k for k, v in item_map.items() if not isinstance(k, str) or not isinstance(v, str)]
        if bad:
            raise InvalidParameterError(
                "the `item_map` parameter of read_responses must map export column names (str) "
                f"to item ids (str); got non-string entries for {bad!r}"
            )
        mapping = {k.strip(): v.strip() for k, v in item_map.items()}
        targets = list(mapping.values())
        duplicates = sorted({v for v in targets if targets.count(v) > 1})
        if duplicates:
            raise InvalidParameterError(
                "the `item_map` parameter of read_responses maps several columns to the same "
                f"item id: {', '.join(duplicates)}"
            )
        return mapping
    if not isinstance(item_map, str | os.PathLike):
        raise InvalidParameterError(
            "the `item_map` parameter of read_responses must be a path to a 'column,item' CSV "
            f"or a dict; got {type(item_map).__name__}"
        )
    path = Path(item_map)
    file = str(path)
    text, _ = _read_text(path, "utf-8")
    if not text.strip():
        _fail(file, "the item map is empty; it needs the header 'column,item' and one row each")
    records = [(r, f) for r, f in _records(text, file, ",") if not _is_blank(f)]
    header = [h.strip() for h in records[0][1]]
    if "column" not in header or "item" not in header:
        _fail(
            file,
            "the item map must have the columns 'column' (name in the export) and 'item' "
            f"(item id); found {', '.join(header) or 'no columns'}",
            row=records[0][0],
        )
    col_at, item_at = header.index("column"), header.index("item")
    problems = _Problems()
    mapping: dict[str, str] = {}
    first_row: dict[str, int] = {}
    target_row: dict[str, int] = {}
    for row, fields in records[1:]:
        fields = fields + [""] * (len(header) - len(fields))
        column, item = fields[col_at].strip(), fields[item_at].strip()
        if not column or not item:
            problems.add(file, row, "item" if column else "column", None, "empty entry")
        elif column in mapping:
            problems.add(
                file,
                row,
                "column",
                column,
                f"column listed twice (first on row {first_row[column]})",
            )
        elif item in target_row:
            problems.add(
                file,
                row,
                "item",
                item,
                f"two export columns map to the same item (first on row {target_row[item]})",
            )
        else:
            mapping[column] = item
            first_row[column] = row
            target_row[item] = row
    problems.raise_if_any(f"the item map {file} is not usable")
    return mapping


def _apply_item_map(table: _RawTable, mapping: dict[str, str], map_file: str) -> None:
    problems = _Problems()
    unknown = [c for c in mapping if c not in table.header]
    for column in unknown:
        problems.add(
            map_file,
            None,
            column,
            None,
            f"the item map names a column that is not in {table.file}",
        )
    renamed = [mapping.get(name, name) for name in table.header]
    counts: dict[str, int] = {}
    for name in renamed:
        counts[name] = counts.get(name, 0) + 1
    for name, count in counts.items():
        if count > 1:
            sources = [h for h, r in zip(table.header, renamed, strict=True) if r == name]
            problems.add(
                map_file,
                None,
                name,
                None,
                f"after renaming, {count} columns are called {name!r} "
                f"({', '.join(sources)}); map only one of them to it",
            )
    problems.raise_if_any(f"the item map does not fit {table.file}")
    table.header = renamed
    table.question_text = {mapping.get(k, k): v for k, v in table.question_text.items()}
    table.import_ids = {mapping.get(k, k): v for k, v in table.import_ids.items()}


def _column_values(
    cells: list[Any], *, numbers: set[float], texts: set[str], apply_codes: bool, decimal: str
) -> tuple[np.ndarray, int]:
    values: list[Cell] = []
    replaced = 0
    for raw in cells:
        value = _normalise_cell(raw)
        if decimal == "," and isinstance(value, str) and _DECIMAL_COMMA.fullmatch(value):
            value = float(value.replace(",", "."))
        if apply_codes and value is not None:
            if isinstance(value, float) and value in numbers:
                value, replaced = None, replaced + 1
            elif isinstance(value, str) and value in texts:
                value, replaced = None, replaced + 1
        values.append(value)
    if all(v is None or isinstance(v, float) for v in values):
        return np.array([np.nan if v is None else v for v in values], dtype=float), replaced
    out = np.empty(len(values), dtype=object)
    out[:] = [np.nan if v is None else v for v in values]
    return out, replaced


def read_responses(
    path: str | os.PathLike,
    *,
    format: Literal["csv", "xlsx", "qualtrics", "sav"] | None = None,
    id_col: str = "id",
    wave_col: str | None = None,
    item_map: str | os.PathLike | Mapping[str, str] | None = None,
    missing_codes: Iterable[float | str] = (),
    flagged: Literal["raise", "exclude", "keep"] = "raise",
    encoding: str = "utf-8",
    delimiter: str | None = None,
    decimal: str = ".",
    sheet: str | None = None,
) -> Responses:
    r"""Read a raw questionnaire export into a :class:`Responses` table.

    Parameters
    ----------
    path : str or path-like
        The export file.
    format : {"csv", "xlsx", "qualtrics", "sav"}, optional
        File format. ``None`` (default) infers it from the extension: ``.csv`` is read as
        ``"qualtrics"`` when its row 3 holds Qualtrics ImportId JSON (see Notes), otherwise
        as ``"csv"``; ``.xlsx``/``.xlsm`` as ``"xlsx"``; ``.sav``/``.zsav`` as ``"sav"``.
    id_col : str, default "id"
        Column holding the respondent id (after ``item_map`` renaming). Must exist.
    wave_col : str, optional
        Column holding the wave label of a long file. Must exist when given.
    item_map : path or dict, optional
        Renames export columns to item ids: a CSV with the columns ``column,item``, or a dict
        ``{column: item}``. Every mapped column must exist in the export.
    missing_codes : sequence of numbers or str, default ()
        Values that mean "no answer" (e.g. ``-99``, ``"n/a"``), turned into NaN in every
        column except the id, the wave and the Qualtrics metadata columns. A string that is
        a number (``"-99"``) is matched as that number. Empty cells and ``NA`` are always
        missing.
    flagged : {"raise", "exclude", "keep"}, default "raise"
        What to do with Qualtrics previews, test responses, spam and unfinished responses:
        raise an error listing them, leave them out (recorded in ``Responses.excluded``), or
        keep them with the columns ``_flagged`` and ``_flag_reason``. Ignored by other formats.
    encoding : str, default "utf-8"
        Text encoding of CSV files. With the default, a byte-order mark decides: UTF-8,
        or UTF-16 (what Excel writes for "Unicode text").
    delimiter : str, optional
        Field delimiter of CSV files. ``None`` (default) takes the first of comma, tab and
        semicolon found in the header line (``meta["delimiter"]`` says which).
    decimal : {".", ","}, default "."
        Decimal mark of numbers in CSV files; ``","`` reads ``3,5`` as 3.5 (European Excel
        writes semicolon-separated files with decimal commas).
    sheet : str, optional
        Worksheet of an Excel workbook to read. ``None`` reads the first sheet and refuses a
        workbook whose other sheets hold data too; with a name, other sheets holding data are
        reported by a :class:`surveys.DataQualityWarning`.

    Returns
    -------
    Responses
        ``data`` (id, optional wave, item and other columns; see :class:`Responses`),
        ``source``, ``row_numbers``, ``excluded`` (``file, row, rule, reason``) and ``meta``.

    Raises
    ------
    surveys.InputValidationError
        The file cannot be used as it is: not valid UTF-8 (names the byte offset and line),
        another delimiter, empty or header only, unnamed or repeated column names, rows whose
        field count differs from the header, a missing id or wave column, item-map entries
        naming columns not in the export, or flagged Qualtrics rows with ``flagged="raise"``.
        ``failure_cases`` lists every problem with ``file, row, column, value, reason``.
    surveys.InvalidParameterError
        A parameter has the wrong type or value.
    ImportError
        ``openpyxl`` (xlsx) or ``pyreadstat`` (sav) is not installed (extra ``readers``).
    OSError
        The file cannot be opened.

    See Also
    --------
    surveys.validation.validate_responses : check the items against instruments.

    Notes
    -----
    Qualtrics CSV exports have three header rows: column names, question text, and the
    ImportId JSON of each column (``{"ImportId":"QID1_1"}``). A ``.csv`` file is read as a
    Qualtrics export only when every non-empty cell of its row 3 is such a JSON object; this
    is explicit structure written by the platform, not a guess from the values. Data rows
    start at row 4. ``Status`` is read from one table, numeric code or label alike:
    0 IP Address, 4 Imported and 16 Offline are kept; 1 Survey Preview, 2 Survey Test,
    8 Spam, 9 Survey Preview Spam, 12 Imported Spam and 17 Offline Survey Preview are
    flagged (``DistributionChannel`` "preview"/"test" too). ``Finished`` false (False, 0, no,
    Nein, non, ...) flags an unfinished response. Any other ``Status`` or ``Finished`` value
    is refused rather than guessed. See docs/readers.md for the sources of the codes.

    Excel workbooks are read from one worksheet (``sheet``), with the header in row 1 and
    formulas replaced by their cached values; a formula without a saved value is refused
    (naming the cell), never read as a blank. SPSS files are read with their numeric codes
    (value labels are not applied); SPSS user-missing values become NaN.

    Rows are numbered as a spreadsheet shows them: a record whose quoted text spans two
    physical lines still counts as one row, and blank rows are counted but skipped.

    Cells are stripped of surrounding spaces. A cell is a number only when written as a
    plain decimal number (``3``, ``-2.5``, ``1e3``); ``"3,5"``, ``"inf"`` or ``"three"``
    stay text, so :func:`~surveys.validation.validate_responses` can report them.

    Examples
    --------
    >>> import pathlib, shutil, tempfile
    >>> from surveys.readers import read_responses
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "pre.csv").write_text("id,tas4_1,tas4_2\nP01,4,5\nP02,2,-99\n")
    >>> responses = read_responses(folder / "pre.csv", missing_codes=[-99])
    >>> responses.data
        id  tas4_1  tas4_2
    0  P01     4.0     5.0
    1  P02     2.0     NaN
    >>> responses.row_numbers.tolist()
    [2, 3]
    >>> responses.meta["missing_codes"]
    {'tas4_2': 1}
    >>> shutil.rmtree(folder)
    """
    if not isinstance(path, str | os.PathLike):
        raise InvalidParameterError(
            f"the `path` parameter of read_responses must be a path; got {type(path).__name__}"
        )
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise InvalidParameterError(
            f"the `format` parameter of read_responses must be one of {', '.join(FORMATS)} or "
            f"None; got {format!r}"
        )
    if flagged not in _FLAG_MODES:
        raise InvalidParameterError(
            "the `flagged` parameter of read_responses must be 'raise', 'exclude' or 'keep'; "
            f"got {flagged!r}"
        )
    if not isinstance(id_col, str) or not id_col:
        raise InvalidParameterError(
            f"the `id_col` parameter of read_responses must be a column name; got {id_col!r}"
        )
    if wave_col is not None and (not isinstance(wave_col, str) or not wave_col):
        raise InvalidParameterError(
            "the `wave_col` parameter of read_responses must be a column name or None; "
            f"got {wave_col!r}"
        )
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise InvalidParameterError(
            f"the `delimiter` parameter of read_responses must be one character; got {delimiter!r}"
        )
    if decimal not in (".", ","):
        raise InvalidParameterError(
            f"the `decimal` parameter of read_responses must be '.' or ','; got {decimal!r}"
        )
    code_numbers, code_texts = _missing_code_sets(missing_codes)
    mapping = _load_item_map(item_map) if item_map is not None else {}
    map_file = str(item_map) if isinstance(item_map, str | os.PathLike) else "item_map"

    fmt = format or _infer_format(path)
    if not path.is_file():
        raise FileNotFoundError(f"read_responses: no such file: {str(path)!r}")
    table = None
    if fmt == "csv" and format != "qualtrics" and encoding.lower() in ("utf-8", "utf8"):
        table = _read_csv_fast(path, delimiter)  # None: the record reader below decides
    if table is None and fmt in ("csv", "qualtrics"):
        table = _read_csv_like(path, fmt=format, encoding=encoding, delimiter=delimiter)
    elif table is None and fmt == "xlsx":
        table = _read_xlsx(path, sheet)
    elif table is None:
        table = _read_sav(path)
    _check_header(table)
    file = table.file
    if table.note:
        warnings.warn(table.note, DataQualityWarning, stacklevel=2)
    n_read = len(table.row_numbers)

    # Qualtrics flags, judged on the columns as exported (before any renaming).
    excluded_rows: list[dict[str, Any]] = []
    flag_reasons: list[str] | None = None
    if table.fmt == "qualtrics":
        flags = _qualtrics_flags(table)
        if flagged == "raise":
            problems = _Problems()
            for row, found in zip(table.row_numbers, flags, strict=True):
                for column, value, rule in found:
                    problems.add(file, row, column, value, f"{rule}; {_FLAG_HINT}")
            n_flagged = sum(bool(f) for f in flags)
            problems.raise_if_any(
                f"{file} has {n_flagged} flagged Qualtrics "
                f"row{'s' if n_flagged != 1 else ''} (previews, tests, spam or unfinished)"
            )
        elif flagged == "exclude":
            keep_rows, keep_numbers = [], []
            for cells, row, found in zip(table.rows, table.row_numbers, flags, strict=True):
                if found:
                    reason = _describe_flags(found)
                    rule = "; ".join(f"{column}={value}" for column, value, _ in found)
                    excluded_rows.append({"file": file, "row": row, "rule": rule, "reason": reason})
                else:
                    keep_rows.append(cells)
                    keep_numbers.append(row)
            table.rows, table.row_numbers = keep_rows, keep_numbers
        else:
            flag_reasons = [_describe_flags(found) for found in flags]

    if mapping:
        _apply_item_map(table, mapping, map_file)

    missing_cols = [c for c in (id_col, wave_col) if c is not None and c not in table.header]
    if missing_cols:
        problems = _Problems()
        shown = ", ".join(table.header[:30]) + (" ..." if len(table.header) > 30 else "")
        for column in missing_cols:
            what = "id" if column == id_col else "wave"
            problems.add(
                file,
                1 if table.fmt != "sav" else None,
                column,
                None,
                f"the {what} column {column!r} is missing; the columns are: {shown}; "
                f"name the right one with {what}_col (CLI: --{what}-col)",
            )
        problems.raise_if_any(f"{file} lacks a required column")

    metadata = set(QUALTRICS_METADATA_COLUMNS) if table.fmt == "qualtrics" else set()
    columns: dict[str, Any] = {}
    code_counts: dict[str, int] = {}
    for j, name in enumerate(table.header):
        apply = bool(code_numbers or code_texts) and name not in metadata
        if table.arrow is not None:
            cells_arrow, table.arrow[j] = table.arrow[j], None  # free each column once read
            fast = None
            if name not in (id_col, wave_col) and decimal == ".":
                fast = _arrow_numbers(cells_arrow, code_numbers if apply else set())
            if fast is not None:
                columns[name], replaced = fast
                if replaced:
                    code_counts[name] = replaced
                continue
            cells = cells_arrow.to_pylist()
        else:
            cells = [r[j] for r in table.rows]
            if table.fmt in ("csv", "qualtrics") and name not in (id_col, wave_col):
                fast = _text_numbers(cells, code_numbers if apply else set(), decimal)
                if fast is not None:
                    columns[name], replaced = fast
                    if replaced:
                        code_counts[name] = replaced
                    continue
        if name in (id_col, wave_col):
            labels = [_label(c) for c in cells]
            width = table.pad.get(name)
            if width:  # shown zero-padded in the file: 7 displayed as 007 is the label 007
                labels = [v.zfill(width) if v is not None and v.isdigit() else v for v in labels]
            columns[name] = np.array(labels, dtype=object)
            continue
        values, replaced = _column_values(
            cells, numbers=code_numbers, texts=code_texts, apply_codes=apply, decimal=decimal
        )
        columns[name] = values
        if replaced:
            code_counts[name] = replaced
    # copy=False: one array per column, no consolidated copy of the item matrix
    data = pd.DataFrame(columns, index=pd.RangeIndex(len(table.row_numbers)), copy=False)
    if flag_reasons is not None:
        data["_flagged"] = np.array([bool(r) for r in flag_reasons], dtype=bool)
        data["_flag_reason"] = np.array(flag_reasons, dtype=object)
    row_numbers = pd.Series(table.row_numbers, index=data.index, dtype="int64", name="row")
    excluded = pd.DataFrame(excluded_rows, columns=["file", "row", "rule", "reason"])
    excluded["row"] = excluded["row"].astype("int64")
    meta: dict[str, Any] = {
        "format": table.fmt,
        "encoding": table.encoding,
        "delimiter": table.delimiter,
        "n_rows_read": n_read,
        "n_excluded": len(excluded),
        "missing_codes": code_counts,
        "item_map": dict(mapping),
    }
    if table.fmt == "qualtrics":
        meta["question_text"] = dict(table.question_text)
        meta["import_ids"] = dict(table.import_ids)
    return Responses(data=data, source=file, row_numbers=row_numbers, excluded=excluded, meta=meta)
