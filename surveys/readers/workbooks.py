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
