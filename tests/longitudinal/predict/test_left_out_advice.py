"""The advice for a scale left unscored: given only where it would score the person.

Each case states what the scoring rules of :func:`surveys.scoring.score` do with ``answered``
of ``k`` items (a scale is scored from ``ceil(min_valid x k)`` answered items; a sum scale only
when complete, unless prorated), and the advised settings are then checked by scoring the
person with them: the advice holds, the settings it rules out fail.
"""

from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from longitudinal.predict.left_out import _remedy
from surveys import score


def _key(scoring: str, k: int) -> dict:
    return {
        "instrument": {
            "name": "made_up",
            "title": "made-up key",
            "response_min": 1,
            "response_max": 5,
            "scoring": scoring,
        },
        "scales": {"total": {"items": [f"i{j}" for j in range(1, k + 1)]}},
    }


def _scored(scoring: str, k: int, answered: int, *, min_valid: float, prorate: bool) -> bool:
    """Whether one person who answered the first ``answered`` items is scored."""
    row = {f"i{j}": (3.0 if j <= answered else np.nan) for j in range(1, k + 1)}
    data = pd.DataFrame([{"id": "p1", **row}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # alpha of one respondent is undefined
        result = score(data, _key(scoring, k), min_valid=min_valid, prorate=prorate)
    return bool(result.scores["score"].notna().iloc[0])


def test_a_sum_scale_meeting_min_valid_is_rescued_by_prorate():
    # 3 of 4 items, min_valid 0.75: ceil(0.75 x 4) = 3 items needed, met; a sum scale is
    # scored only complete without prorate
    assert math.ceil(0.75 * 4) == 3
    text = _remedy(SimpleNamespace(scoring="sum"), 3, 4, min_valid=0.75, prorate=False)
    assert text == (
        "answered 3 of 4 items, enough for `min_valid` 0.75 (3 needed), but a sum scale is "
        "scored only when complete: `[scoring] prorate = true` in study.toml would score them"
    )
    assert not _scored("sum", 4, 3, min_valid=0.75, prorate=False)
    assert _scored("sum", 4, 3, min_valid=0.75, prorate=True)


def test_prorate_is_not_advised_where_the_80_percent_rule_keeps_a_sum_scale_out():
    # 3 of 4 items, min_valid 0.8: ceil(3.2) = 4 items needed, so prorate alone cannot score;
    # 3 / 4 = 0.75 is the largest min_valid that 3 answered items meet
    assert math.ceil(0.8 * 4) == 4
    text = _remedy(SimpleNamespace(scoring="sum"), 3, 4, min_valid=0.8, prorate=False)
    assert text == (
        "answered 3 of 4 items, fewer than `min_valid` 0.8 needs (4): `prorate = true` alone "
        "would not score them; a `min_valid` of 0.75 or lower with `prorate = true` in "
        "study.toml's [scoring] would"
    )
    assert not _scored("sum", 4, 3, min_valid=0.8, prorate=True)
    assert not _scored("sum", 4, 3, min_valid=0.75, prorate=False)
    assert _scored("sum", 4, 3, min_valid=0.75, prorate=True)


def test_prorate_already_on_is_not_advised_again():
    text = _remedy(SimpleNamespace(scoring="sum"), 3, 4, min_valid=0.8, prorate=True)
    assert text == (
        "answered 3 of 4 items, fewer than `min_valid` 0.8 needs (4): a `min_valid` of 0.75 "
        "or lower in study.toml's [scoring] would score them (prorate is on already)"
    )


@pytest.mark.parametrize("prorate", [False, True])
def test_a_mean_scale_is_never_advised_prorate(prorate):
    # 2 of 3 items of a mean scale, min_valid 0.8: ceil(2.4) = 3 needed; 2 / 3 = 0.666...,
    # of which 0.66 (two decimals, rounded down) is met: ceil(0.66 x 3) = ceil(1.98) = 2
    assert math.ceil(0.8 * 3) == 3 and math.ceil(0.66 * 3) == 2 and math.ceil(0.67 * 3) == 3
    text = _remedy(SimpleNamespace(scoring="mean"), 2, 3, min_valid=0.8, prorate=prorate)
    assert text == (
        "answered 2 of 3 items, fewer than `min_valid` 0.8 needs (3): a `min_valid` of 0.66 "
        "or lower in study.toml's [scoring] would score them (prorate does nothing for a mean "
        "scale)"
    )
    assert not _scored("mean", 3, 2, min_valid=0.8, prorate=True)
    assert not _scored("mean", 3, 2, min_valid=0.67, prorate=prorate)
    assert _scored("mean", 3, 2, min_valid=0.66, prorate=prorate)


def test_nothing_is_advised_for_no_answer_and_no_remedy_for_a_scored_person():
    text = _remedy(SimpleNamespace(scoring="sum"), 0, 4, min_valid=0.8, prorate=False)
    assert text == "answered none of the 4 items: no scoring rule can score them"
    # the rules score 4 of 5 items of a mean scale at min_valid 0.8: no advice to give
    assert _remedy(SimpleNamespace(scoring="mean"), 4, 5, min_valid=0.8, prorate=False) is None
    assert _scored("mean", 5, 4, min_valid=0.8, prorate=False)
