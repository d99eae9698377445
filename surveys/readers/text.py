"""Delimited text exports (CSV, Qualtrics CSV): encodings, delimiters, records, numeric columns."""

from __future__ import annotations

import csv
import importlib
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from surveys._errors import InvalidParameterError
from surveys.readers._common import (
    _EXTENSIONS,
    _MISSING_TOKENS,
    _NUMBER,
    _OTHER_DELIMITERS,
    FORMATS,
    _fail,
    _Problems,
    _RawTable,
)


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


#: Codecs Python counts as text encodings that do not read files: domain names (idna,
#: punycode), Python string literals (unicode_escape, raw_unicode_escape), and one that
#: decodes nothing (undefined). Named by :func:`codecs.lookup`'s canonical names.
NOT_FILE_ENCODINGS = {
    "idna": "a codec for domain names, not for files",
    "punycode": "a codec for domain names, not for files",
    "unicode-escape": "a codec for Python string literals, not for files",
    "raw-unicode-escape": "a codec for Python string literals, not for files",
    "undefined": "a codec that decodes nothing",
}

#: Encodings a message offers as examples of what ``encoding`` takes.
ENCODING_EXAMPLES = (
    "utf-8",
    "utf-8-sig",
    "utf-16",
    "utf-16-le",
    "utf-16-be",
    "latin-1",
    "cp1252",
    "mac-roman",
    "shift_jis",
    "gb18030",
)


def check_encoding(encoding: Any, *, func: str = "read_responses") -> str:
    """Return ``encoding`` when it names a text encoding that files are written in.

    Accepted: any codec :func:`codecs.lookup` knows whose ``_is_text_encoding`` is true
    (bytes to text), except those of :data:`NOT_FILE_ENCODINGS`; so ``base64``, ``rot13``
    and ``zlib`` (bytes to bytes or text to text) and ``punycode`` or ``unicode_escape``
    (domain names, Python literals) are refused, naming the accepted forms.

    Raises
    ------
    surveys.InvalidParameterError
        Naming the parameter (``--encoding`` on the command line), the value, why, and
        examples of what it takes.

    Examples
    --------
    >>> from surveys.readers.text import check_encoding
    >>> check_encoding("latin-1")
    'latin-1'
    >>> check_encoding("punycode")
    Traceback (most recent call last):
    ...
    _empathic_base.errors.InvalidParameterError: the `encoding` parameter of read_responses must be a text encoding of files, such as utf-8, utf-8-sig, utf-16, utf-16-le, utf-16-be, latin-1, cp1252, mac-roman, shift_jis or gb18030 (any of Python's text codecs but idna, punycode, unicode_escape, raw_unicode_escape and undefined); got 'punycode', a codec for domain names, not for files
    """  # noqa: E501
    import codecs

    from _empathic_base.words import parameter

    def refuse(why: str) -> InvalidParameterError:
        return InvalidParameterError(
            f"{parameter('encoding', func)} must be a text encoding of files, such as "
            f"{', '.join(ENCODING_EXAMPLES[:-1])} or {ENCODING_EXAMPLES[-1]} (any of Python's "
            "text codecs but idna, punycode, unicode_escape, raw_unicode_escape and "
            f"undefined); got {encoding!r}, {why}"
        )

    if not isinstance(encoding, str) or not encoding.strip():
        raise refuse("not the name of an encoding")
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        raise refuse("which is not a codec Python knows") from None
    if not getattr(info, "_is_text_encoding", True):
        raise refuse("a codec that does not turn bytes into text (bytes to bytes, or text to text)")
    if info.name in NOT_FILE_ENCODINGS:
        raise refuse(NOT_FILE_ENCODINGS[info.name])
    return encoding


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


def _arrow_labels(cells: Any) -> np.ndarray | None:
    """Return a text column as id or wave labels column-wise (``_label``'s rules), or None.

    None when a cell begins or ends with anything but a printable ASCII character (a space, a
    non-ASCII letter): ``str.strip``'s idea of white space then decides, cell by cell.
    """
    pa = importlib.import_module("pyarrow")
    pc = importlib.import_module("pyarrow.compute")
    if pc.any(pc.match_substring_regex(cells, r"^[^\x21-\x7e]|[^\x21-\x7e]$")).as_py():
        return None
    tokens = pa.array(sorted(_MISSING_TOKENS), type=pa.string())
    missing = pc.fill_null(pc.is_in(cells, value_set=tokens), True)
    labels = np.array(cells.to_numpy(zero_copy_only=False), dtype=object)
    labels[np.asarray(missing.to_numpy(zero_copy_only=False), dtype=bool)] = None
    return labels


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
