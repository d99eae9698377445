"""What the readers share: the formats, the result type, failures and the reading of one cell."""

from __future__ import annotations

import datetime as _dt
import importlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd

from surveys._errors import InputValidationError, InvalidParameterError

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


#: The Qualtrics columns whose values flag a row (previews, tests, spam, unfinished).
_FLAG_COLUMNS = ("Status", "Finished")


def _has_qualtrics_flags(table: Any) -> bool:
    """Whether a file's rows carry Qualtrics flags: a Qualtrics export, or any file with them.

    A Qualtrics export (its ImportId header rows) always does. Any other file (a Qualtrics
    export saved without its two extra header rows, as Excel or SPSS) does when its header
    has ``Status`` or ``Finished`` and at least one more of Qualtrics' metadata columns
    (:data:`QUALTRICS_METADATA_COLUMNS`): ``Status`` and ``Finished`` together, or one of
    them with ``ResponseId``, ``StartDate``, .... A lone ``Status`` column is the study's own.
    """
    if table.fmt == "qualtrics":
        return True
    names = set(table.header)
    return bool(names & set(_FLAG_COLUMNS)) and len(names & set(QUALTRICS_METADATA_COLUMNS)) >= 2


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
