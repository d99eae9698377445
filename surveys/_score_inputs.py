"""The checks of :func:`surveys.scoring.score` on its data and parameters, column-wise.

Every problem is collected into one failure table (file, row, column, value, reason); item
columns come back as float arrays (NaN for a missing answer), views of the data where possible.
A parameter is named as :func:`~surveys.scoring.score`'s, or by its option on the command line
(:mod:`_empathic_base.words`).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from _empathic_base.checks import check_bool, check_unit
from _empathic_base.words import parameter
from surveys._errors import FAILURE_COLUMNS, InputValidationError, InvalidParameterError
from surveys.instruments import Instrument

_IMPUTE = (None, "item_mean", "item_median")
"""The ``impute`` options of :func:`surveys.scoring.score`."""


def _check_parameters(
    data: Any,
    *,
    id_col: Any,
    wave_col: Any,
    min_valid: Any,
    prorate: Any,
    impute: Any,
    ci_level: Any,
    row_numbers: Any,
    source_file: Any,
) -> None:
    where = "score"
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {where} must be a pandas DataFrame; got {type(data).__name__}"
        )
    if not isinstance(id_col, str):
        raise InvalidParameterError(
            f"{parameter('id_col', where)} must be a column name (str); got {id_col!r}"
        )
    if wave_col is not None and (not isinstance(wave_col, str) or wave_col == id_col):
        raise InvalidParameterError(
            f"{parameter('wave_col', where)} must be None or a column name (str) other "
            f"than the id column; got {wave_col!r}"
        )
    if isinstance(min_valid, bool) or not isinstance(min_valid, Real):
        raise InvalidParameterError(
            f"{parameter('min_valid', where)} must be a fraction in (0, 1] or an int "
            f">= 1; got {min_valid!r}"
        )
    if isinstance(min_valid, Integral):
        if min_valid < 1:
            raise InvalidParameterError(
                f"{parameter('min_valid', where)} must be an int >= 1 when given as a "
                f"count; got {min_valid!r}"
            )
    elif not (0.0 < float(min_valid) <= 1.0):
        raise InvalidParameterError(
            f"{parameter('min_valid', where)} must be a fraction in (0, 1] (or an int "
            f"count such as 3); got {min_valid!r}"
        )
    check_bool(prorate, name="prorate", where=where)
    if impute not in _IMPUTE:
        raise InvalidParameterError(
            f"the `impute` parameter of {where} must be None, 'item_mean' or 'item_median'; "
            f"got {impute!r}"
        )
    check_unit(ci_level, name="ci_level", where=where)
    if row_numbers is not None:
        if not isinstance(row_numbers, pd.Series):
            raise InvalidParameterError(
                f"the `row_numbers` parameter of {where} must be None or a pandas Series "
                f"aligned to data.index; got {type(row_numbers).__name__}"
            )
        if not row_numbers.index.equals(data.index) and (
            not row_numbers.index.is_unique or not data.index.isin(row_numbers.index).all()
        ):
            raise InvalidParameterError(
                f"the `row_numbers` parameter of {where} must have a value for every label of "
                "data.index"
            )
    if source_file is not None and not isinstance(source_file, str):
        raise InvalidParameterError(
            f"the `source_file` parameter of {where} must be None or a str; got {source_file!r}"
        )


def _line_numbers(data: pd.DataFrame, row_numbers: pd.Series | None) -> np.ndarray:
    if row_numbers is None:
        return np.arange(len(data), dtype=np.int64) + 2
    if row_numbers.index.equals(data.index):
        return row_numbers.to_numpy()
    return row_numbers.reindex(data.index).to_numpy()


def _failures(
    file: str | None, rows: Any, column: str | None, values: Any, reason: str
) -> pd.DataFrame:
    rows_arr = np.atleast_1d(np.asarray(rows, dtype=object)) if rows is not None else [None]
    n = len(rows_arr)
    vals = list(values) if values is not None else [None] * n
    return pd.DataFrame(
        {
            "file": [file] * n,
            "row": list(rows_arr),
            "column": [column] * n,
            "value": vals,
            "reason": [reason] * n,
        },
        columns=FAILURE_COLUMNS,
    )


def _is_number_cell(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool | np.bool_)


def _validated_items(
    data: pd.DataFrame,
    ins: Instrument,
    *,
    id_col: str,
    wave_col: str | None,
    lines: np.ndarray,
    file: str | None,
    whole_numbers: bool = True,
) -> dict[str, np.ndarray]:
    """Check the data; return each item as a float array (NaN = missing; may be a view)."""
    problems: list[pd.DataFrame] = []
    for name, label in ((id_col, "id column"), (wave_col, "wave column")):
        if name is not None and name not in data.columns:
            problems.append(_failures(file, None, name, None, f"missing {label}"))
    absent = [item for item in ins.items if item not in data.columns]
    for item in absent:
        problems.append(_failures(file, None, item, None, f"missing item column of {ins.name!r}"))

    present = [item for item in ins.items if item not in absent]
    duplicated = [item for item in present if isinstance(data[item], pd.DataFrame)]
    for item in duplicated:
        problems.append(_failures(file, None, item, None, "item column appears more than once"))
    usable = [item for item in present if item not in duplicated]

    position = {item: j for j, item in enumerate(ins.items)}
    bounds = {item: (ins.response_min, ins.response_max) for item in ins.items}
    for key in ins.scales:
        for item in key.items:
            bounds[item] = (key.response_min, key.response_max)

    columns: dict[str, np.ndarray] = {}
    cell_problems: list[tuple[np.ndarray, int, str, np.ndarray, str]] = []
    for item in usable:
        series = data[item]
        if _is_plain_numeric(series.dtype):
            # a view of the data where possible; never written to
            values = (
                series.to_numpy(dtype=np.float64)
                if isinstance(series.dtype, np.dtype)
                else series.to_numpy(dtype=np.float64, na_value=np.nan)
            )
        else:
            values, bad = _as_float(series)
            if bad.any():
                pos = np.flatnonzero(bad)
                cell_problems.append(
                    (
                        pos,
                        position[item],
                        item,
                        series.to_numpy(dtype=object)[pos],
                        f"non-numeric value in item column ({series.dtype})",
                    )
                )
        columns[item] = values

    columns = _contiguous(columns, len(data))
    cell_problems += _range_problems(data, columns, bounds, position, ins.name, whole_numbers)

    if cell_problems:
        problems.append(_cell_failures(cell_problems, file, lines))

    problems += _key_failures(data, id_col, wave_col, file, lines)

    if problems:
        table = pd.concat(problems, ignore_index=True)
        table["row"] = pd.array(
            [
                None if r is None or (isinstance(r, float) and np.isnan(r)) else int(r)
                for r in table["row"]
            ],
            dtype="Int64",
        )
        raise InputValidationError(table, summary=f"cannot score {ins.name!r}")
    return columns


_CellProblems = list[tuple[np.ndarray, int, str, np.ndarray, str]]


"""(row positions, item position, item, raw values, reason) per problem found in a column."""


def _range_problems(
    data: pd.DataFrame,
    columns: dict[str, np.ndarray],
    bounds: dict[str, tuple[float, float]],
    position: dict[str, int],
    name: str,
    whole_numbers: bool,
) -> _CellProblems:
    """Cells outside an item's declared range, and fractions where whole numbers are due."""
    cell_problems: _CellProblems = []
    for item, values in columns.items():
        lo, hi = bounds[item]
        checks = []
        # fmin/fmax skip NaN: one pass each, and the cell-level search only when needed
        if values.size and (np.fmin.reduce(values) < lo or np.fmax.reduce(values) > hi):
            checks.append(
                (
                    (values < lo) | (values > hi),
                    f"value outside the declared response range [{lo:g}, {hi:g}]",
                )
            )
        if whole_numbers:
            checks.append(
                (
                    np.isfinite(values) & (values != np.round(values)),
                    f"value is not a whole number; {name} items take whole numbers "
                    f"{lo:g}-{hi:g} (pass whole_numbers=False for continuous responses)",
                )
            )
        for mask, reason in checks:
            if mask.any():
                pos = np.flatnonzero(mask)
                raw = data[item].to_numpy(dtype=object)[pos]
                cell_problems.append((pos, position[item], item, raw, reason))

    return cell_problems


def _cell_failures(cell_problems: _CellProblems, file: str | None, lines: np.ndarray):
    """One failure table of every cell problem, in row order, then item order."""
    pos = np.concatenate([c[0] for c in cell_problems])
    order = np.concatenate([np.full(len(c[0]), c[1]) for c in cell_problems])
    frame = pd.DataFrame(
        {
            "file": file,
            "row": lines[pos],
            "column": np.concatenate(
                [np.full(len(c[0]), c[2], dtype=object) for c in cell_problems]
            ),
            "value": np.concatenate([np.asarray(c[3], dtype=object) for c in cell_problems]),
            "reason": np.concatenate(
                [np.full(len(c[0]), c[4], dtype=object) for c in cell_problems]
            ),
            "_pos": pos,
            "_order": order,
        }
    )
    frame = frame.sort_values(["_pos", "_order"], kind="stable").drop(columns=["_pos", "_order"])
    return frame


def _key_failures(
    data: pd.DataFrame, id_col: str, wave_col: str | None, file: str | None, lines: np.ndarray
) -> list[pd.DataFrame]:
    """Missing ids or waves, and duplicated ids (per wave)."""
    out: list[pd.DataFrame] = []
    keys = [c for c in (id_col, wave_col) if c is not None and c in data.columns]
    for name, label in ((id_col, "id"), (wave_col, "wave")):
        if name is not None and name in data.columns:
            empty = data[name].isna().to_numpy()
            if empty.any():
                pos = np.flatnonzero(empty)
                out.append(_failures(file, lines[pos], name, [None] * len(pos), f"missing {label}"))
    if id_col in keys:
        dup = data.duplicated(subset=keys, keep=False).to_numpy()
        dup &= ~data[keys].isna().any(axis=1).to_numpy()
        if dup.any():
            pos = np.flatnonzero(dup)
            ids = data[id_col].to_numpy(dtype=object)[pos]
            if wave_col is not None and wave_col in keys:
                waves = data[wave_col].to_numpy(dtype=object)[pos]
                reasons = [f"duplicate id x wave (wave {w!r})" for w in waves]
                frame = _failures(file, lines[pos], id_col, ids, "")
                frame["reason"] = reasons
            else:
                frame = _failures(file, lines[pos], id_col, ids, "duplicate id")
            out.append(frame)

    return out


def _contiguous(columns: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """Make every column a contiguous array, copying strided views in cache-sized row blocks.

    A DataFrame built from a row-major 2-D array holds its columns as strided views; copying
    them one at a time would read the whole block once per column.
    """
    strided = [item for item, values in columns.items() if not values.flags.c_contiguous]
    if not strided:
        return columns
    block = np.empty((len(strided), n))
    step = 4096
    for start in range(0, n, step):
        stop = start + step
        for r, item in enumerate(strided):
            block[r, start:stop] = columns[item][start:stop]
    out = dict(columns)
    for r, item in enumerate(strided):
        out[item] = block[r]
    return out


def _is_plain_numeric(dtype: Any) -> bool:
    return bool(
        ptypes.is_bool_dtype(dtype)
        or (ptypes.is_numeric_dtype(dtype) and not ptypes.is_complex_dtype(dtype))
    )


def _as_float(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Convert a non-numeric-dtype item column; return (values, mask of non-numeric cells)."""
    dtype = series.dtype
    if ptypes.is_object_dtype(dtype):
        cells = series.to_numpy()
        missing = series.isna().to_numpy()
        numeric = np.fromiter((_is_number_cell(v) for v in cells), dtype=bool, count=len(cells))
        bad = ~numeric & ~missing
        out = np.full(len(cells), np.nan)
        good = numeric & ~missing
        if good.any():
            out[good] = np.asarray(cells[good], dtype=np.float64)
        return out, bad
    # categorical, string, datetime, complex, ...: every non-missing cell is non-numeric
    missing = series.isna().to_numpy()
    return np.full(len(series), np.nan), ~missing
