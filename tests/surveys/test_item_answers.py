"""surveys.keyed_item_answers: a scale's answers, reverse keyed from the declared range, long."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from surveys import InvalidParameterError, ScaleKey, keyed_item_answers

KEY = ScaleKey("mood", ("a", "b", "c"), ("b",), 1, 5, "mean")
WIDE = pd.DataFrame(
    {
        "pid": ["p1", "p1", "p2"],
        "wave": ["pre", "post", "pre"],
        "a": [1.0, 2.0, 5.0],
        "b": [2.0, np.nan, 3.0],
        "c": [4.0, 4.0, 1.0],
        "other": ["x", "y", "z"],
    }
)


def test_wide_answers_are_reversed_from_the_declared_range_and_stacked():
    out = keyed_item_answers(WIDE, KEY, id_col="pid", wave_col="wave")
    assert list(out.columns) == ["pid", "wave", "item", "value"]
    assert out["item"].tolist() == ["a", "b", "c"] * 3
    # b: 1 + 5 - x
    np.testing.assert_array_equal(out["value"].to_numpy(), [1, 4, 4, 2, np.nan, 4, 5, 3, 1])
    observed_2_to_3 = WIDE.assign(a=[2.0, 2.0, 3.0], c=[3.0, 3.0, 2.0])
    b = keyed_item_answers(observed_2_to_3, KEY, id_col="pid", wave_col="wave")
    assert b.loc[b["item"] == "b", "value"].iloc[0] == 4  # 1 + 5 - 2; psych: 2 + 3 - 2


def test_long_answers_give_the_wide_result():
    long = WIDE.melt(id_vars=["pid", "wave"], value_vars=["a", "b", "c"], var_name="q")
    long = pd.concat([long, long.assign(q="unrelated", value=99.0)])
    out = keyed_item_answers(long, KEY, id_col="pid", wave_col="wave", format="long", item_col="q")
    wide = keyed_item_answers(WIDE, KEY, id_col="pid", wave_col="wave")
    key = ["pid", "wave", "item"]
    pd.testing.assert_frame_equal(
        out.sort_values(key).reset_index(drop=True), wide.sort_values(key).reset_index(drop=True)
    )


def test_every_answer_outside_the_range_is_listed():
    bad = WIDE.assign(a=[0.0, 2.0, 6.0])
    with pytest.raises(InvalidParameterError, match=r"2 answer\(s\).*row 0 item 'a': 0; row 2 "):
        keyed_item_answers(bad, KEY, id_col="pid", wave_col="wave")


@pytest.mark.parametrize(
    ("data", "options", "match"),
    [
        (WIDE.drop(columns="c"), {}, r"no column\(s\) \['c'\]"),
        (WIDE.assign(b=["2", "x", "3"]), {}, r"\['b'\] .* not numeric"),
        (WIDE, {"format": "tall"}, "'wide' or 'long'"),
    ],
)
def test_bad_input_is_refused(data, options, match):
    with pytest.raises(InvalidParameterError, match=match):
        keyed_item_answers(data, KEY, id_col="pid", wave_col="wave", **options)


def test_input_is_not_modified():
    before = WIDE.copy()
    keyed_item_answers(WIDE, KEY, id_col="pid", wave_col="wave")
    pd.testing.assert_frame_equal(WIDE, before)


def test_rows_in_index_order_melt_as_rows_out_of_order_do():
    # a frame in index order takes the row-major path; the same rows with the index reversed
    # take the general melt, whose order (by index label, then key order) is the truth
    rng = np.random.default_rng(3)
    n = 40
    wide = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "wave": rng.choice(["pre", "post"], n),
            "a": rng.integers(1, 6, n).astype(float),
            "b": pd.array(rng.integers(1, 6, n), dtype="Int64"),
            "c": rng.integers(1, 6, n),
        }
    )
    wide.loc[rng.random(n) < 0.2, "a"] = np.nan
    wide.loc[rng.random(n) < 0.2, "b"] = pd.NA
    fast = keyed_item_answers(wide, KEY, id_col="pid", wave_col="wave")
    reverse = wide.iloc[::-1].set_axis(np.arange(n)[::-1])  # same labels, not monotonic
    general = keyed_item_answers(reverse, KEY, id_col="pid", wave_col="wave")
    pd.testing.assert_frame_equal(fast, general, check_exact=True)
    assert fast["item"].tolist() == ["a", "b", "c"] * n
