"""Read one raw export into :class:`~surveys.readers.Responses` (:func:`read_responses`)."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from surveys._columns import participant_column
from surveys._errors import DataQualityWarning, InvalidParameterError
from surveys._invisible import INVISIBLE, describe_invisible
from surveys.readers._common import (
    _FLAG_HINT,
    _FLAG_MODES,
    FORMATS,
    QUALTRICS_METADATA_COLUMNS,
    Responses,
    _has_qualtrics_flags,
    _label,
    _missing_code_sets,
    _Problems,
)
from surveys.readers.interpret import (
    _apply_item_map,
    _check_header,
    _column_values,
    _describe_flags,
    _load_item_map,
    _qualtrics_flags,
)
from surveys.readers.text import (
    _arrow_labels,
    _arrow_numbers,
    _infer_format,
    _read_csv_fast,
    _read_csv_like,
    _text_numbers,
    check_encoding,
)
from surveys.readers.workbooks import (
    _read_sav,
    _read_xlsx,
)


def read_responses(
    path: str | os.PathLike,
    *,
    format: Literal["csv", "xlsx", "qualtrics", "sav"] | None = None,
    id_col: str | None = None,
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
    id_col : str, optional
        Column holding the respondent id (after ``item_map`` renaming). Must exist. ``None``
        (default): ``participant_id``, or ``id`` when the export has no ``participant_id``
        column.
    wave_col : str, optional
        Column holding the wave label of a long file. Must exist when given, and be
        another column than the participant ids (``id_col``, or the one found by default).
    item_map : path or dict, optional
        Renames export columns to item ids: a CSV with the columns ``column,item``, or a dict
        ``{column: item}``. Entries whose column this export lacks are skipped (one map may
        serve every wave's export) and listed in ``meta["item_map_unmatched"]``; an item an
        instrument needs that stays missing is reported by validation under the column the
        map names for it.
    missing_codes : sequence of numbers or str, default ()
        Values that mean "no answer" (e.g. ``-99``, ``"n/a"``), turned into NaN in every
        column except the id, the wave and the Qualtrics metadata columns. A string that is
        a number (``"-99"``) is matched as that number. Empty cells and ``NA`` are always
        missing.
    flagged : {"raise", "exclude", "keep"}, default "raise"
        What to do with Qualtrics previews, test responses, spam and unfinished responses:
        raise an error listing them, leave them out (recorded in ``Responses.excluded``), or
        keep them with the columns ``_flagged`` and ``_flag_reason``. It applies to a
        Qualtrics export and to any file (CSV, Excel, SPSS) whose header has Qualtrics'
        ``Status`` or ``Finished`` column and another of its metadata columns (``Status`` and
        ``Finished``, or one of them with ``ResponseId``, ``StartDate``, ...): a Qualtrics
        export saved without its two extra header rows is judged the same. Ignored by other
        files.
    encoding : str, default "utf-8"
        Text encoding of CSV files. With the default, a byte-order mark decides: UTF-8,
        or UTF-16 (what Excel writes for "Unicode text"). Any of Python's text codecs that
        files are written in (:func:`surveys.readers.text.check_encoding`); ``base64``,
        ``rot13``, ``idna``, ``punycode`` and ``unicode_escape`` are refused.
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
    is refused rather than guessed. See docs/readers.md for the sources of the codes. The
    same flags are read in any other file whose header has ``Status`` or ``Finished`` with
    another Qualtrics metadata column (see ``flagged``); a lone ``Status`` column is kept as
    the study's own, never judged.

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
    path = _check_options(path, format, flagged, id_col, wave_col, delimiter, decimal)
    check_encoding(encoding)
    code_numbers, code_texts = _missing_code_sets(missing_codes)
    mapping = _load_item_map(item_map) if item_map is not None else {}
    map_file = str(item_map) if isinstance(item_map, str | os.PathLike) else "item_map"

    fmt = format or _infer_format(path)
    if not path.is_file():
        raise FileNotFoundError(f"read_responses: no such file: {str(path)!r}")
    table = None
    if fmt == "csv" and format != "qualtrics" and encoding.lower() in ("utf-8", "utf8"):
        table = _read_csv_fast(path, delimiter)  # None: the record reader below decides
        if table is not None and _has_qualtrics_flags(table):
            table = None  # rows whose flags are judged row by row: the record reader
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
    excluded_rows, flag_reasons = _apply_flags(table, flagged)

    unmatched = _apply_item_map(table, mapping, map_file) if mapping else []

    default_id = id_col is None
    id_col = participant_column(table.header, id_col)
    if default_id and wave_col == id_col:
        _same_id_and_wave(id_col, found=True)
    _require_columns(table, id_col, wave_col, default_id=default_id)

    columns, code_counts = _typed_columns(
        table, id_col, wave_col, code_numbers, code_texts, decimal
    )
    _refuse_invisible_labels(table, columns, (id_col, wave_col))
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
        "item_map_unmatched": unmatched,
    }
    if table.fmt == "qualtrics":
        meta["question_text"] = dict(table.question_text)
        meta["import_ids"] = dict(table.import_ids)
    return Responses(data=data, source=file, row_numbers=row_numbers, excluded=excluded, meta=meta)


def _same_id_and_wave(column: str, *, found: bool) -> None:
    """Refuse a wave column that is the participant id column: each row needs both."""
    from _empathic_base.words import parameter

    wave, ids = parameter("wave_col", "read_responses"), parameter("id_col", "read_responses")
    what = (
        f"{column!r}, the column read as the participant ids by default ({ids} not given)"
        if found
        else f"the same column as {ids} ({column!r})"
    )
    raise InvalidParameterError(
        f"{wave} names {what}; the wave column says which wave each row belongs to (pre, "
        "post, ...) and must be another column than the participant ids"
    )


def _check_options(path, format, flagged, id_col, wave_col, delimiter, decimal) -> Path:
    """Check the options of :func:`read_responses`; return the path."""
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
    if id_col is not None and (not isinstance(id_col, str) or not id_col):
        raise InvalidParameterError(
            f"the `id_col` parameter of read_responses must be a column name; got {id_col!r}"
        )
    if wave_col is not None and (not isinstance(wave_col, str) or not wave_col):
        raise InvalidParameterError(
            "the `wave_col` parameter of read_responses must be a column name or None; "
            f"got {wave_col!r}"
        )
    if id_col is not None and wave_col == id_col:
        _same_id_and_wave(id_col, found=False)
    if delimiter is not None and (not isinstance(delimiter, str) or len(delimiter) != 1):
        raise InvalidParameterError(
            f"the `delimiter` parameter of read_responses must be one character; got {delimiter!r}"
        )
    if decimal not in (".", ","):
        raise InvalidParameterError(
            f"the `decimal` parameter of read_responses must be '.' or ','; got {decimal!r}"
        )
    return path


def _apply_flags(table: Any, flagged: str) -> tuple[list[dict[str, Any]], list[str] | None]:
    """Raise, leave out (logged) or mark the flagged rows of a file with Qualtrics flags.

    A Qualtrics export, or any file whose header has Qualtrics' ``Status`` or ``Finished``
    column with another of its metadata columns (:func:`_has_qualtrics_flags`). Returns the
    excluded rows and, with ``flagged="keep"``, each row's flag reason.
    """
    file = table.file
    excluded_rows: list[dict[str, Any]] = []
    flag_reasons: list[str] | None = None
    if _has_qualtrics_flags(table):
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

    return excluded_rows, flag_reasons


def _refuse_invisible_labels(table: Any, columns: dict[str, Any], keys: tuple) -> None:
    """Refuse ids (and waves) holding an invisible character: P1 and P1 + U+200B look alike."""
    problems = _Problems()
    for column in keys:
        if column is None or column not in columns:
            continue
        labels = columns[column]
        if not INVISIBLE.search("\n".join(v for v in labels if isinstance(v, str))):
            continue  # one search over the column: no label holds one
        for k, label in enumerate(labels):
            found = describe_invisible(label) if isinstance(label, str) else None
            if found:
                problems.add(
                    table.file,
                    table.row_numbers[k],
                    column,
                    label,
                    f"the {'id' if column == keys[0] else 'wave'} holds {found}; delete it",
                )
    problems.raise_if_any(f"{table.file} has ids that hold invisible characters")


def _require_columns(
    table: Any, id_col: str, wave_col: str | None, *, default_id: bool = False
) -> None:
    """Refuse an export without its id (or wave) column, listing the columns it has."""
    file = table.file
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
                f"the {what} column {column!r} is missing"
                + (" (nor is there one named 'id')" if default_id and column == id_col else "")
                + f"; the columns are: {shown}; name the right one with {what}_col "
                f"(CLI: --{what}-col)",
            )
        problems.raise_if_any(f"{file} lacks a required column")


def _typed_columns(
    table: Any,
    id_col: str,
    wave_col: str | None,
    code_numbers: set[float],
    code_texts: set[str],
    decimal: str,
) -> tuple[dict[str, Any], dict[str, int]]:
    """Each column as an array: labels for the id and wave, numbers (missing codes as NaN)."""
    metadata = set(QUALTRICS_METADATA_COLUMNS) if _has_qualtrics_flags(table) else set()
    columns: dict[str, Any] = {}
    code_counts: dict[str, int] = {}
    for j, name in enumerate(table.header):
        apply = bool(code_numbers or code_texts) and name not in metadata
        labels = None
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
            if name in (id_col, wave_col):
                labels = _arrow_labels(cells_arrow)
            cells = cells_arrow.to_pylist() if labels is None else []
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
            if labels is None:
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
    return columns, code_counts
