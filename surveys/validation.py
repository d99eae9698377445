"""Check questionnaire responses against their instruments and report every problem at once.

:func:`validate_responses` looks at every cell of every item an instrument declares and
collects all problems (text in a numeric item, a value outside the declared range, a
fractional answer, a missing item column, a duplicated id x wave, an empty id, an unknown
instrument) into one :class:`surveys.InputValidationError`, whose ``failure_cases`` table
names the file, row, column and value of each problem.

:class:`FailureCollector` is the small helper behind it; other loaders (a study directory,
ratings files) reuse it so that all data problems reach the user in the same shape.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from surveys._columns import participant_column
from surveys._errors import (
    FAILURE_COLUMNS,
    InputValidationError,
    InvalidParameterError,
    SurveysError,
    UnknownInstrumentError,
)
from surveys._invisible import invisible_problems
from surveys.readers import Responses

__all__ = ["FailureCollector", "validate_responses"]

# Out-of-range whole numbers made only of these digits (or negative) are usually
# missing-data codes (-99, 999, -9, 88, ...); the message then suggests declaring them.
_CODE_DIGITS = frozenset("789")


class FailureCollector:
    """Gather data problems and raise them together as one :class:`InputValidationError`.

    Examples
    --------
    >>> from surveys.validation import FailureCollector
    >>> failures = FailureCollector()
    >>> failures.add("pre.csv", 3, "tas4_2", "three", "text in a numeric item")
    >>> failures.add("pre.csv", None, "tas4_4", None, "missing item column")
    >>> len(failures)
    2
    >>> failures.raise_if_any("pre.csv is not valid")
    Traceback (most recent call last):
    ...
    surveys._errors.InputValidationError: pre.csv is not valid: 2 problems
      - pre.csv, row 3, column 'tas4_2': text in a numeric item (value 'three')
      - pre.csv, column 'tas4_4': missing item column
    """

    def __init__(self) -> None:
        self._rows: list[dict[str, Any]] = []

    def __len__(self) -> int:
        return len(self._rows)

    def __bool__(self) -> bool:
        return bool(self._rows)

    def add(
        self, file: str | None, row: int | None, column: str | None, value: Any, reason: str
    ) -> None:
        """Record one problem.

        Parameters
        ----------
        file : str or None
            The source file (or another label of the input).
        row : int or None
            1-based row of the source file, header = row 1; None for file-level problems.
        column : str or None
            The column concerned, if any.
        value : object
            The offending value, if any (None otherwise).
        reason : str
            What is wrong, and how to fix it when known.
        """
        self._rows.append(
            {
                "file": file,
                "row": None if row is None else int(row),
                "column": column,
                "value": value,
                "reason": reason,
            }
        )

    def extend(self, failure_cases: pd.DataFrame) -> None:
        """Record every row of another failure table (e.g. from a caught error).

        Parameters
        ----------
        failure_cases : pandas.DataFrame
            A table with the columns ``file, row, column, value, reason``.
        """
        for rec in failure_cases.reindex(columns=FAILURE_COLUMNS).itertuples(index=False):
            row = None if pd.isna(rec.row) else int(rec.row)
            self.add(rec.file, row, rec.column, rec.value, rec.reason)

    def to_frame(self) -> pd.DataFrame:
        """Return the problems as a table.

        Returns
        -------
        pandas.DataFrame
            Columns ``file, row`` (nullable integer), ``column, value, reason``.
        """
        frame = pd.DataFrame(self._rows, columns=FAILURE_COLUMNS)
        frame["row"] = frame["row"].astype("Int64")
        return frame

    def raise_if_any(self, summary: str) -> None:
        """Raise :class:`InputValidationError` with every recorded problem, if there is one.

        Parameters
        ----------
        summary : str
            One line saying what was being checked, e.g. ``"pre.csv is not valid"``.

        Raises
        ------
        surveys.InputValidationError
            When at least one problem was recorded.
        """
        if self._rows:
            raise InputValidationError(self.to_frame(), summary)


def _load(instruments: Any, failures: FailureCollector) -> list[Any]:
    """Resolve names, paths and Instrument objects; unknown names become failures."""
    if isinstance(instruments, str | os.PathLike) or hasattr(instruments, "items"):
        instruments = [instruments]
    if not isinstance(instruments, Iterable):
        raise InvalidParameterError(
            "the `instruments` parameter of validate_responses must be an instrument name, a "
            "path to a key TOML, an Instrument, or a list of them; got "
            f"{type(instruments).__name__}"
        )
    loaded = []
    for spec in instruments:
        if isinstance(spec, str | os.PathLike):
            from surveys.instruments import load_instrument

            try:
                loaded.append(load_instrument(spec))
            except UnknownInstrumentError as err:
                failures.add(None, None, None, str(spec), f"unknown instrument: {err}")
            except InputValidationError as err:
                failures.extend(err.failure_cases)
            except SurveysError as err:
                failures.add(str(spec), None, None, None, str(err))
        elif all(hasattr(spec, a) for a in ("name", "items", "response_min", "response_max")):
            loaded.append(spec)
        else:
            raise InvalidParameterError(
                "each entry of the `instruments` parameter of validate_responses must be a name, "
                f"a path or an Instrument; got {type(spec).__name__}"
            )
    return loaded


def _item_ranges(instrument: Any) -> dict[str, tuple[float, float]]:
    """Return the declared range of each item: its scale's range, else the instrument's."""
    ranges = {item: (instrument.response_min, instrument.response_max) for item in instrument.items}
    for scale in getattr(instrument, "scales", ()):
        low = getattr(scale, "response_min", instrument.response_min)
        high = getattr(scale, "response_max", instrument.response_max)
        for item in scale.items:
            ranges.setdefault(item, (low, high))
    return ranges


def _looks_like_code(value: float) -> bool:
    if not float(value).is_integer():
        return False
    digits = str(abs(int(value)))
    return value < 0 or set(digits) <= _CODE_DIGITS


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def _display(value: Any) -> Any:
    """Show a whole-number float as the integer the file most likely held."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool | np.bool_)


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def validate_responses(
    responses: Responses | pd.DataFrame,
    instruments: Any,
    *,
    id_col: str | None = None,
    wave_col: str | None = None,
    whole_numbers: bool = True,
) -> None:
    """Check responses against instruments; raise one error listing every problem.

    Parameters
    ----------
    responses : Responses or pandas.DataFrame
        Output of :func:`surveys.readers.read_responses` (rows are reported as file rows) or
        a DataFrame (rows are then reported by index label in the reason, ``row`` empty).
    instruments : str, path, Instrument, or a sequence of them
        Library names (``"tas4"``), paths to custom key TOML files, or objects from
        :func:`surveys.instruments.load_instrument`.
    id_col : str, optional
        Column holding the respondent id. ``None`` (default): ``participant_id``, or ``id``
        when the data have no ``participant_id`` column.
    wave_col : str, optional
        Column holding the wave label; ids must then be unique within each wave.
    whole_numbers : bool, default True
        Require item responses to be whole numbers (see Notes).

    Returns
    -------
    None
        Returns nothing when the data are valid.

    Raises
    ------
    surveys.InputValidationError
        With ``failure_cases`` (``file, row, column, value, reason``) listing every problem:
        unknown instrument, missing id / wave / item column, empty id or wave, duplicated id
        (x wave), text in an item column, a response outside the item's declared range, and
        a fractional response when ``whole_numbers`` is true.
    surveys.InvalidParameterError
        ``responses`` or ``instruments`` has the wrong type.

    See Also
    --------
    surveys.readers.read_responses : read a raw export.

    Notes
    -----
    The declared range of an item is that of its scale when the scale declares one, else
    that of its instrument; the observed range is never used. Every instrument in the
    library is answered on a rating scale or as true/false (0/1), so a response must be a
    whole number: ``2.5`` on a 1-5 item is a data-entry or export problem, not an answer.
    Pass ``whole_numbers=False`` for a custom instrument with continuous responses (a visual
    analogue scale). Missing cells (NaN) are allowed here; how many items a score needs is
    decided by scoring (``min_valid``). An out-of-range value such as ``-99`` or ``999``
    gets a hint to declare it as a missing-data code.

    Examples
    --------
    >>> import pandas as pd
    >>> from surveys.validation import validate_responses
    >>> data = pd.DataFrame({"id": ["P01", "P02"], "tas4_1": [4.0, 0.0], "tas4_2": [5.0, 1.0],
    ...                      "tas4_3": [3.0, 2.0], "tas4_4": [2.0, 2.0]})
    >>> validate_responses(data, "tas4")
    Traceback (most recent call last):
    ...
    surveys._errors.InputValidationError: responses are not valid for tas4: 1 problem
      - data, column 'tas4_1': value 0 is outside the declared range 1-5 of tas4 (index 1) (value 0)
    """
    if isinstance(responses, Responses):
        data = responses.data
        file = responses.source
        rows: pd.Series | None = responses.row_numbers
    elif isinstance(responses, pd.DataFrame):
        data, file, rows = responses, "data", None
    else:
        raise InvalidParameterError(
            "the `responses` parameter of validate_responses must be a Responses object or a "
            f"pandas DataFrame; got {type(responses).__name__}"
        )
    for name, value in (("id_col", id_col), ("wave_col", wave_col)):
        if value is not None and not isinstance(value, str):
            raise InvalidParameterError(
                f"the `{name}` parameter of validate_responses must be a column name; got {value!r}"
            )

    def where(label: Any) -> tuple[int | None, str]:
        if rows is not None:
            return int(rows.loc[label]), ""
        return None, f" (index {label})"

    id_col = participant_column(data.columns, id_col)
    failures = FailureCollector()
    lines = None if rows is None else rows.reindex(data.index).tolist()
    for problem in invisible_problems(data, id_cols=(id_col, wave_col), file=file, rows=lines):
        failures.add(**problem)
    loaded = _load(instruments, failures)

    _check_keys(data, id_col, wave_col, file=file, where=where, failures=failures)
    _check_items(data, loaded, whole_numbers, file=file, where=where, failures=failures)

    if isinstance(responses, Responses):
        _name_export_columns(failures._rows, responses.meta.get("item_map") or {})
    names = ", ".join(str(getattr(i, "name", i)) for i in loaded) or "the instruments"
    failures.raise_if_any(f"responses are not valid for {names}")


def _check_keys(data, id_col, wave_col, *, file, where, failures) -> None:
    """Report empty ids or waves, missing key columns and duplicated id (x wave) rows."""
    for column, what in ((id_col, "id"), (wave_col, "wave")):
        if column is None:
            continue
        if column not in data.columns:
            shown = ", ".join(map(str, data.columns[:30]))
            failures.add(
                file,
                None,
                column,
                None,
                f"missing {what} column; the columns are: {shown}; name the right one with "
                f"{what}_col",
            )
            continue
        labels = data[column]
        empty = labels.isna().to_numpy()
        if labels.dtype == object:
            empty |= np.fromiter(
                (isinstance(v, str) and not v.strip() for v in labels.to_numpy()),
                dtype=bool,
                count=len(labels),
            )
        for label in labels.index[empty]:
            row, suffix = where(label)
            failures.add(file, row, column, None, f"empty {what}{suffix}")

    keys = [c for c in (id_col, wave_col) if c is not None]
    if all(c in data.columns for c in keys):
        complete = data[keys].notna().all(axis=1)
        for c in keys:
            complete &= data[c].astype(str).str.strip() != ""
        subset = data.loc[complete, keys]
        dup = subset.duplicated(keep=False)
        if dup.any():
            groups = subset[dup].groupby(keys, sort=False).groups
            for key, labels in groups.items():
                key = key if isinstance(key, tuple) else (key,)
                positions = [where(label) for label in labels]
                shown = ", ".join(str(r) if r is not None else s.strip(" ()") for r, s in positions)
                what = f"id {key[0]!r}" + (f" at wave {key[1]!r}" if wave_col else "")
                hint = (
                    ""
                    if wave_col
                    else " (for a file with several waves, name the wave column with wave_col, "
                    "CLI: --wave-col)"
                )
                for row, suffix in positions:
                    failures.add(
                        file,
                        row,
                        id_col,
                        key[0],
                        f"duplicate {what}: {len(labels)} rows ({shown}); keep one row per "
                        f"{'id and wave' if wave_col else 'id'}{hint}{suffix}",
                    )


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def _numbered_lookalikes(items: list[str], columns: pd.Index) -> str:
    """Name export columns numbered 1..k like the items (``BFI_1`` for ``bfi44_1``), or "".

    Only a suggestion: which column holds which item is the survey's, and the message says so.
    """
    numbers = [_NUMBERED.match(item) for item in items]
    if not all(numbers) or [int(m.group(2)) for m in numbers] != list(range(1, len(items) + 1)):
        return ""
    by_prefix: dict[str, dict[int, str]] = {}
    for column in map(str, columns):
        match = _NUMBERED.match(column)
        if match:
            by_prefix.setdefault(match.group(1), {})[int(match.group(2))] = column
    found = [cols for cols in by_prefix.values() if sorted(cols) == list(range(1, len(items) + 1))]
    if len(found) != 1:
        return ""
    cols = found[0]
    return (
        f"; the export has columns {cols[1]} ... {cols[len(items)]}, numbered like them: if "
        f"{cols[1]} holds {items[0]} and so on, an item map with the lines "
        f"'{cols[1]},{items[0]}' ... '{cols[len(items)]},{items[-1]}' renames them"
    )


def _check_items(data, loaded, whole_numbers, *, file, where, failures) -> None:
    """Report missing item columns and every cell outside an instrument's declared range."""
    checked: set[tuple[str, float, float]] = set()
    for instrument in loaded:
        ranges = _item_ranges(instrument)
        absent = [item for item in ranges if item not in data.columns]
        if absent and len(absent) == len(ranges):
            failures.add(
                file,
                None,
                None,
                None,
                f"none of the {len(ranges)} item columns of {instrument.name} is present "
                f"(expected {', '.join(list(ranges)[:6])}{' ...' if len(ranges) > 6 else ''}); "
                "rename the export's columns with an item map (CLI: --item-map)"
                f"{_numbered_lookalikes(list(ranges), data.columns)}",
            )
        else:
            for item in absent:
                failures.add(file, None, item, None, f"missing item column of {instrument.name}")
        for item, (low, high) in ranges.items():
            if item not in data.columns or (item, low, high) in checked:
                continue
            checked.add((item, low, high))
            _check_item(
                data[item],
                item,
                low,
                high,
                instrument.name,
                whole_numbers,
                file=file,
                where=where,
                failures=failures,
            )


def _check_item(column, item, low, high, name, whole_numbers, *, file, where, failures) -> None:
    """Report the cells of one item column that are text, out of range or not whole."""
    if isinstance(column, pd.DataFrame):  # repeated column name
        failures.add(file, None, item, None, "the column name is used more than once")
        return
    span = f"{_fmt(low)}-{_fmt(high)}"
    first = len(failures._rows)
    above: set[float] = set()
    for label, value in _suspect_cells(column, low, high, whole_numbers):
        row, suffix = where(label)
        if not _is_number(value):
            failures.add(
                file,
                row,
                item,
                value,
                f"text in a numeric item of {name}; expected a number "
                f"{span} or an empty cell (if the export holds answer labels, export "
                f"numeric values instead){_decimal_hint(value)}{suffix}",
            )
            continue
        number = float(value)
        if not math.isfinite(number) or number < low or number > high:
            above.add(number - high)
            hint = ""
            if math.isfinite(number) and _looks_like_code(number):
                hint = (
                    f"; if {_fmt(number)} marks a missing answer, declare it with "
                    f"missing_codes (CLI: --missing-code {_fmt(number)})"
                )
            failures.add(
                file,
                row,
                item,
                _display(value),
                f"value {_fmt(number) if math.isfinite(number) else number} is outside "
                f"the declared range {span} of {name}{hint}{suffix}",
            )
        elif whole_numbers and not number.is_integer():
            failures.add(
                file,
                row,
                item,
                value,
                f"value {number!r} is not a whole number; {name} items "
                f"take whole numbers {span}{suffix}",
            )

    if above == {1.0}:
        _hint_off_by_one(failures._rows[first:], low, high)


def _suspect_cells(
    column: pd.Series, low: float, high: float, whole_numbers: bool
) -> list[tuple[Any, Any]]:
    """Return ``(label, value)`` of the cells that may fail, in row order (vectorised).

    A float column is checked with masks; in any other column every cell that is not a
    missing value or a number is a suspect, and so are numbers outside the range or
    fractional. The caller judges each suspect cell with the scalar rules.
    """
    if column.dtype.kind in "iuf":
        values = column.to_numpy(dtype=np.float64)
        cells = None
        text = np.zeros(len(values), dtype=bool)
    else:
        cells = column.to_numpy(dtype=object)
        missing = column.isna().to_numpy()
        number = np.fromiter((_is_number(v) for v in cells), dtype=bool, count=len(cells))
        text = ~missing & ~number
        values = np.full(len(cells), np.nan)
        if number.any():
            values[number] = np.asarray(cells[number], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = text | (values < low) | (values > high) | np.isinf(values)
        if whole_numbers:
            bad |= np.isfinite(values) & (values != np.floor(values))
    pos = np.flatnonzero(bad)
    labels = column.index[pos]
    shown = column.to_numpy(dtype=object)[pos] if cells is None else cells[pos]
    return list(zip(labels, shown, strict=True))


def _decimal_hint(value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"[+-]?\d+,\d+", value.strip()):
        return "; a decimal comma: read the file with decimal=',' (CLI: --decimal ,)"
    return ""


def _hint_off_by_one(rows: list[dict[str, Any]], low: float, high: float) -> None:
    """Every out-of-range value of a column is one above the range: say how to recode."""
    shifted = f"{_fmt(low + 1)}-{_fmt(high + 1)}:{_fmt(low)}-{_fmt(high)}"
    for row in rows:
        if "outside the declared range" in row["reason"]:
            row["reason"] += (
                f"; every out-of-range value of this column is exactly one above the range: "
                f"if the export codes {_fmt(low + 1)}-{_fmt(high + 1)} for a "
                f"{_fmt(low)}-{_fmt(high)} scale, recode it (CLI: --recode {shifted})"
            )


def _name_export_columns(rows: list[dict[str, Any]], item_map: dict[str, str]) -> None:
    """Name each column as the user's file does, the item id in parentheses."""
    export = {item: column for column, item in item_map.items()}
    for row in rows:
        column = row["column"]
        if isinstance(column, str) and column in export:
            row["column"] = f"{export[column]} ({column})"
            if str(row["reason"]).startswith("missing item column"):
                row["reason"] += (
                    f"; the item map names the column {export[column]!r} for it, which the "
                    "export does not have"
                )
