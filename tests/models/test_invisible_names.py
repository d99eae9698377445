"""Invisible characters in the column names and group ids a formula uses are named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from models import InvalidParameterError
from models.formula import build_design, parse_formula

SPEC = parse_formula("y ~ x + (1 | g)")


def _data(**columns):
    rng = np.random.default_rng(1)
    data = pd.DataFrame({"y": rng.normal(size=6), "x": rng.normal(size=6), "g": list("aabbcc")})
    return data.assign(**columns)


def test_a_formula_column_with_a_zero_width_space_is_named():
    data = _data().rename(columns={"x": "x\u200b"})
    with pytest.raises(InvalidParameterError, match="U\\+200B ZERO WIDTH SPACE") as info:
        build_design(SPEC, data)
    assert "column 'x\\u200b'" in str(info.value)


def test_group_ids_holding_a_bom_or_nul_are_named_with_their_row():
    data = _data(g=["a", "a\ufeff", "b", "b", "c\x00", "c"])
    with pytest.raises(InvalidParameterError) as info:
        build_design(SPEC, data)
    message = str(info.value)
    assert "(2)" in message and "U+FEFF ZERO WIDTH NO-BREAK SPACE" in message
    assert "U+0000 NULL" in message and "(index 1)" in message and "(index 4)" in message


def test_unused_columns_and_clean_ids_pass():
    design = build_design(SPEC, _data(**{"note\u200b": ["x"] * 6}))
    assert design.n_obs == 6
