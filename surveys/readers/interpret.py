"""From a raw table to named item columns: the header, Qualtrics flags, item maps, values."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from surveys._errors import InvalidParameterError
from surveys._invisible import describe_invisible
from surveys.readers._common import (
    _CHANNEL_FLAGS,
    _DECIMAL_COMMA,
    _FINISHED_FALSE,
    _FINISHED_TRUE,
    _STATUS_CODES,
    _STATUS_TEXT,
    QUALTRICS_METADATA_COLUMNS,
    Cell,
    _fail,
    _label,
    _normalise_cell,
    _parse_number,
    _Problems,
    _RawTable,
)
from surveys.readers.text import (
    _is_blank,
    _read_text,
    _records,
)


def _check_header(table: _RawTable) -> None:
    """Drop unnamed empty columns; reject unnamed non-empty and repeated column names.

    A name holding an invisible character is refused by name (``tipi_1`` followed by a
    zero-width space would otherwise be reported as a missing column ``tipi_1``).
    """
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
    for j in keep:
        found = describe_invisible(table.header[j])
        if found:
            problems.add(
                table.file,
                1 if table.fmt != "sav" else None,
                table.header[j],
                None,
                f"column {table.header[j]!r} holds {found}; delete it from the header",
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
    treated the same whichever export option (numeric or text values) wrote it. In a file
    that is not a Qualtrics export (:func:`~surveys.readers._common._has_qualtrics_flags`) the
    message says why the column was read as Qualtrics' and how to keep it as the study's own.
    """
    index = {name: j for j, name in enumerate(table.header)}
    problems = _Problems()
    known_status = ", ".join(f"{code} {label}" for code, (label, _) in _STATUS_CODES.items())
    read_as = ""
    if table.fmt != "qualtrics":
        present = [c for c in QUALTRICS_METADATA_COLUMNS if c in index]
        read_as = (
            f" (the file has Qualtrics' columns {', '.join(present)}, so its Status and "
            "Finished are read as Qualtrics writes them; rename the column if it is the "
            "study's own)"
        )
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
                    f"{known_status}{read_as}",
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
                    f"(also ja/nein, oui/non, si/no, sim/n\u00e3o){read_as}",
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


def _apply_item_map(table: _RawTable, mapping: dict[str, str], map_file: str) -> list[str]:
    """Rename the export's columns; return the map's columns this export does not have.

    A study often keeps one map for all its exports, and a wave may lack an instrument: such
    entries are not an error here. An item an instrument needs that stays missing is reported
    by validation, naming the column the map expected.
    """
    problems = _Problems()
    unmatched = [c for c in mapping if c not in table.header]
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
    return unmatched


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
