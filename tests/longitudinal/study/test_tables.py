"""The column parsers of the study's CSV tables give what their one-cell forms give."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from longitudinal.study.tables import _floats, _numeric_column, _parse_time, _times, _to_float

CELLS = [
    "2023-03-13T16:27:51",
    "2023-03-13",
    "2023-03-13 16:27",
    "2023-03-13T16:27:51.123456789",
    "2023-03-13T16:27:51.1",
    "2023-02-30",
    "2023-13-01",
    "2023-03-13T25:00",
    "1500-01-01",
    "2262-05-01",
    "2023-03-13T16:27:51Z",
    "2023-03-13T16:27:51+05:00",
    " 2023-03-13 ",
    "",
    "garbage",
    None,
    np.nan,
    pd.Timestamp("2020-01-01 10:00", tz="UTC"),
    dt.datetime(2021, 5, 5, 1, 2, 3),
]


def test_a_column_of_times_parses_as_each_cell_does():
    values = pd.Series(CELLS, index=range(7, 7 + len(CELLS)), dtype=object)
    one_by_one = [_parse_time(v) for v in CELLS]
    expected = pd.Series(
        pd.to_datetime([pd.NaT if p is None else p for p in one_by_one]), index=values.index
    )
    out = _times(values)
    pd.testing.assert_series_equal(out, expected, check_exact=True)
    assert out.notna().sum() == 10  # the checks above compare something


def test_a_column_of_numbers_reads_each_distinct_cell_as_one_cell_does():
    cells = ["1", "", "2.5", "1_0", " 3", "inf", "nan", "x", "1e400", "-0", "1", "2.5"]
    numbers, finite, empty = _floats(pd.Series(cells, dtype=object))
    for k, cell in enumerate(cells):
        one = None if cell == "" else _to_float(cell)
        assert finite[k] == (one is not None)
        assert empty[k] == (cell == "")
        assert (np.isnan(numbers[k]) and one is None) or numbers[k] == one
    assert _numeric_column(pd.Series(cells, dtype=object)) is None
    column = _numeric_column(pd.Series(["4", "", "1_0", "2.5"], dtype=object))
    np.testing.assert_array_equal(column.to_numpy(), [4.0, np.nan, 10.0, 2.5])
