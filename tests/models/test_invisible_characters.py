"""The invisible-character rule (_empathic_base/invisible.py): line separators and bidi controls.

U+2028 and U+2029 break a line where nothing is seen; U+202A-U+202E and U+2066-U+2069 reorder
the text around them (an id ``P1`` followed by U+202E shows as another). Each is named, in a
formula's grouping factor as in any id the package checks.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import pandas as pd
import pytest

from _empathic_base.invisible import INVISIBLE, describe_invisible, invisible_problems
from models import InvalidParameterError
from models.formula import build_design, parse_formula

ADDED = ["\u2028", "\u2029", *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))]


@pytest.mark.parametrize("char", ADDED, ids=[f"U+{ord(c):04X}" for c in ADDED])
def test_each_separator_and_direction_character_is_named(char):
    name = unicodedata.name(char)
    assert describe_invisible(f"P1{char}") == f"an invisible character (U+{ord(char):04X} {name})"
    frame = pd.DataFrame({"id": ["P1", f"P{char}2"], "x": [1, 2]})
    problems = invisible_problems(frame, id_cols=["id"], file="ratings.csv", rows=[2, 3])
    assert [(p["row"], p["column"], p["value"]) for p in problems] == [(3, "id", f"P{char}2")]
    assert f"U+{ord(char):04X} {name}" in problems[0]["reason"]


def test_the_characters_around_them_stay_visible():
    # U+2027 HYPHENATION POINT and U+2070 SUPERSCRIPT ZERO are seen; U+2065 is unassigned
    for text in ("P\u20271", "P\u20701", "P\u20651", "P 1", "Pé1", "P\t1"):
        assert INVISIBLE.search(text) is None, repr(text)


@pytest.mark.parametrize("char", ["\u2028", "\u202e", "\u2067"])
def test_a_grouping_factor_holding_one_is_refused_by_the_formula_design(char):
    rng = np.random.default_rng(1)
    data = pd.DataFrame(
        {
            "y": rng.normal(size=6),
            "x": rng.normal(size=6),
            "g": ["a", "a", "b", f"b{char}", "c", "c"],
        }
    )
    with pytest.raises(InvalidParameterError, match=f"U\\+{ord(char):04X}") as info:
        build_design(parse_formula("y ~ x + (1 | g)"), data)
    assert "(index 3)" in str(info.value)
