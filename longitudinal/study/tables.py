"""The plain CSV tables of a study directory (participants, sessions, ratings), read as text.

Every cell is kept as a stripped string with its file row (the header is row 1), so the
loader can name the row of any problem; numbers and times are parsed here with the reason
of each failure.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from _empathic_base.invisible import INVISIBLE, describe_invisible
from longitudinal.study.config import Failures, _is_missing

#: Columns of :attr:`longitudinal.study.loaded.Study.exclusions`.
EXCLUSION_COLUMNS = ["file", "row", "reason", "scope"]

_SESSION_REQUIRED = ("session_id", "started_at")
_RATING_REQUIRED = ("session_id", "story_id", "position")


@dataclass
class _Table:
    file: str
    data: pd.DataFrame  # every cell a stripped string
    rows: pd.Series  # file row of each record


def read_table(
    root: Path,
    rel: str,
    failures: Failures,
    *,
    required: Sequence[str],
    names: Mapping[str, str] | None = None,
    section: str | None = None,
):
    """Read a CSV into strings with file rows; None when unusable (failures recorded).

    ``names`` maps internal column names to the file's own (``[columns]`` of study.toml): the
    file's columns are renamed to the internal names, and every failure of this file names
    the column as the file does. ``section`` is the table of study.toml naming the file: a
    missing file's message says where to name another.
    """
    names = {k: v for k, v in (names or {}).items() if k != v}
    if names:
        failures.aliases[rel] = dict(names)
    path = root / rel
    if not path.is_file():
        where = (
            f" in the study directory; name the study's file with [{section}] file = ... in "
            "study.toml"
            if section
            else ""
        )
        failures.add(rel, f"file not found{where}")
        return None
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        failures.add(rel, f"not UTF-8 text ({err.reason} at byte {err.start}); save as CSV UTF-8")
        return None
    records: list[tuple[int, list[str]]] = []
    try:
        for row, fields in enumerate(csv.reader(text.splitlines(keepends=True), strict=True), 1):
            records.append((row, fields))
    except csv.Error as err:
        failures.add(rel, f"broken CSV structure near row {len(records) + 1} ({err})")
        return None
    records = [(r, f) for r, f in records if any(c.strip() for c in f)]
    if not records:
        failures.add(rel, "the file is empty")
        return None
    header_row, header = records[0]
    header = [h.strip() for h in header]
    ok = True
    seen: set[str] = set()
    for name in header:
        if not name:
            failures.add(rel, "a column has no name", row=header_row)
            ok = False
        elif name in seen:
            failures.add(rel, "the column name is repeated", row=header_row, column=name)
            ok = False
        seen.add(name)
    for name in header:
        found = describe_invisible(name)
        if found:
            failures.add(
                rel, f"column {name!r} holds {found}; delete it from the header", row=header_row
            )
            ok = False
    visible = {INVISIBLE.sub("", h) for h in header}
    for name in required:
        if names.get(name, name) not in header and names.get(name, name) not in visible:
            failures.add(
                rel,
                f"missing required column; the columns are: {', '.join(header)}",
                row=header_row,
                column=name,
            )
            ok = False
    for internal, own in names.items():
        if internal in header and own in header:
            failures.add(
                rel,
                f"the file has both {own!r} (named in [columns]) and a column {internal!r}; "
                "rename one of them",
                row=header_row,
                column=internal,
            )
            ok = False
    body: list[list[str]] = []
    numbers: list[int] = []
    for row, fields in records[1:]:
        if len(fields) != len(header):
            failures.add(
                rel, f"the row has {len(fields)} fields but the header has {len(header)}", row=row
            )
            ok = False
            continue
        body.append([c.strip() for c in fields])
        numbers.append(row)
    for j, name in enumerate(header):
        if not any(name == names.get(r, r) for r in required):
            continue
        cells = [fields[j] for fields in body]
        if not INVISIBLE.search("\n".join(cells)):
            continue  # one search over the column: no cell holds one
        for row, cell in zip(numbers, cells, strict=True):
            found = describe_invisible(cell)
            if found:
                reason = f"the cell holds {found}; delete it"
                failures.add(rel, reason, row=row, column=name, value=cell)
                ok = False
    if not ok:
        return None
    header = [{own: internal for internal, own in names.items()}.get(h, h) for h in header]
    data = pd.DataFrame(body, columns=header, dtype=object)
    if data.empty:
        data = pd.DataFrame({h: pd.Series(dtype=object) for h in header})
    return _Table(rel, data, pd.Series(numbers, index=data.index, dtype="int64"))


def _to_float(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _floats(values: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_to_float` of every cell, read once per distinct value.

    Returns the numbers (NaN where ``_to_float`` gives None), whether each cell is a finite
    number, and whether it is the empty string.
    """
    codes, distinct = pd.factorize(values.to_numpy(dtype=object), use_na_sentinel=False)
    parsed = [None if v == "" else _to_float(v) for v in distinct]
    numbers = np.array([np.nan if p is None else p for p in parsed], dtype="float64")
    finite = np.array([p is not None for p in parsed], dtype=bool)
    empty = np.array([isinstance(v, str) and v == "" for v in distinct], dtype=bool)
    return numbers[codes], finite[codes], empty[codes]


def _member(values: np.ndarray, known: Collection[Any] | None) -> np.ndarray:
    """Whether each value is in ``known`` (every one when ``known`` is None)."""
    if known is None:
        return np.ones(len(values), dtype=bool)
    return np.fromiter((v in known for v in values), dtype=bool, count=len(values))


def _numeric_column(values: pd.Series) -> pd.Series | None:
    """Float column when every non-empty cell is a finite number, else None."""
    numbers, finite, empty = _floats(values)
    if not (finite | empty).all():
        return None
    return pd.Series(numbers, index=values.index, dtype="float64")


def _parse_time(value: Any) -> pd.Timestamp | None:
    """Parse ISO 8601 into a naive wall-clock Timestamp; None when unparseable."""
    if _is_missing(value):
        return None
    if isinstance(value, pd.Timestamp):
        ts = value
    elif hasattr(value, "isoformat") and not isinstance(value, str):
        ts = pd.Timestamp(value)
    else:
        text = str(value).strip()
        if not text:
            return None
        try:
            ts = pd.to_datetime(text, format="ISO8601")
        except (ValueError, TypeError, OverflowError):
            return None
    if pd.isna(ts):
        return None
    if ts.tzinfo is not None:
        ts = ts.tz_localize(None)  # keep the participant's wall-clock time
    return ts


def _time_problem(value: Any) -> str:
    """Say why a date/time cell could not be read."""
    match = re.match(r"\s*([+-]?\d{4,})-\d{2}", str(value))
    if match and not 1678 <= int(match.group(1)) <= 2261:
        return (
            f"the year {int(match.group(1))} is outside the years 1678-2261 that dates can have "
            "here; check the year"
        )
    return "unparseable date/time; use ISO 8601, e.g. 2024-03-01T18:30:00"


#: ISO 8601 without a time zone: parsed for the whole column at once.
_PLAIN_ISO = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?")


def _times(values: pd.Series) -> pd.Series:
    """Parse a column as :func:`_parse_time` parses each cell (NaT where it gives None)."""
    cells = values.to_numpy(dtype=object)
    plain = np.fromiter(
        (isinstance(v, str) and _PLAIN_ISO.fullmatch(v) is not None for v in cells),
        dtype=bool,
        count=len(cells),
    )
    out = np.full(len(cells), np.datetime64("NaT", "ns"))
    if plain.any():
        fast = pd.to_datetime(pd.Series(cells[plain]), format="ISO8601", errors="coerce")
        out[plain] = fast.to_numpy(dtype="datetime64[ns]")
    # a cell outside the plain form (zone, Excel date, blank) or one the column parse refused
    for k in np.flatnonzero(~plain | np.isnat(out)):
        parsed = _parse_time(cells[k])
        if parsed is not None:
            out[k] = parsed.as_unit("ns").to_datetime64()
    return pd.Series(pd.to_datetime(out), index=values.index)


def _duplicate_reason(rows: pd.Series, label: str) -> dict[int, str]:
    """For each duplicated row: a reason naming the other rows."""
    out: dict[int, str] = {}
    for idx in rows.index:
        others = [int(r) for r in rows if r != rows[idx]]
        out[idx] = f"duplicate {label} (also on row{'s' if len(others) > 1 else ''} " + (
            ", ".join(map(str, others)) + ")"
        )
    return out
