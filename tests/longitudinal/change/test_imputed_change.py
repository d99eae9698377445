"""Complete cases beside multiple imputation, and the tipping point (change/imputed.py).

Every number is computed by hand in the test: six participants measured pre and post, two of
them (rows 5 and 6) without a post score, their post scores supplied as imputations.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from longitudinal import InvalidParameterError
from longitudinal.change import pairwise_changes
from longitudinal.change.imputed import DELTAS, imputed_change, tipping_point

PRE = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
OBSERVED = pd.DataFrame({"pre": PRE, "post": [2.0, 3.5, 4.0, 5.5, np.nan, np.nan]})
DROPOUT = np.array([0, 0, 0, 0, 1, 1], dtype=float)
SD_PRE = math.sqrt(3.5)  # the SD of 1..6


def _completed(*posts: tuple[float, float]) -> list[pd.DataFrame]:
    """One completed table per pair of imputed post scores (rows 5 and 6)."""
    out = []
    for a, b in posts:
        table = OBSERVED.copy()
        table.loc[4:5, "post"] = [a, b]
        out.append(table)
    return out


def test_the_tipping_point_of_identical_imputations_by_hand():
    # Both imputations give the dropouts 7 and 7: no between-imputation variance, so the pooled
    # change is the paired t test of all six with Barnard & Rubin's (1999) df at lambda = 0,
    # (dfcom + 1) / (dfcom + 3) dfcom = 6/8 * 5 = 3.75.
    result = tipping_point(_completed((7.0, 7.0), (7.0, 7.0)), observed=OBSERVED,
                           first="pre", last="post")  # fmt: skip
    table = result.to_frame()
    change = np.array([1.0, 1.5, 1.0, 1.5, 2.0, 1.0])
    crit = stats.t.ppf(0.975, 3.75)
    low = []
    for k, delta in enumerate(DELTAS):
        shifted = change - delta * SD_PRE * DROPOUT  # the change rose: shifted down
        est = shifted.mean()
        se = shifted.std(ddof=1) / math.sqrt(6)
        np.testing.assert_allclose(table.loc[k, ["estimate", "se", "df"]].to_numpy(float),
                                   [est, se, 3.75],
                                   rtol=1e-12)  # fmt: skip
        np.testing.assert_allclose(table.loc[k, "ci_low"], est - crit * se, rtol=1e-10)
        low.append(est - crit * se)
    # By hand: the lower limit is 0.117 at delta 0.7 and -0.040 at 0.8.
    assert low[7] > 0 > low[8] and all(v > 0 for v in low[:8])
    assert result.direction == -1 and result.tipping_delta == 0.8 and result.changes
    assert table["excludes_zero"].tolist() == [True] * 8 + [False] * 13
    assert result.n == 6 and result.n_dropouts == 2 and result.sd == pytest.approx(SD_PRE)


def test_the_shift_moves_the_pooled_change_by_delta_sd_times_the_dropouts_share():
    datasets = _completed((7.0, 6.0), (5.5, 8.0), (6.5, 7.5))
    table = tipping_point(datasets, observed=OBSERVED, first="pre", last="post").to_frame()
    moved = table["estimate"] - table["estimate"].iloc[0]
    np.testing.assert_allclose(moved, -DELTAS * SD_PRE * 2 / 6, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(table["shift"], -DELTAS * SD_PRE, rtol=1e-15)
    # the total variance: within (the mean of var(change) / n) plus (1 + 1/m) between, the
    # between variance the same at every delta (every imputation shifted alike)
    changes = np.array([t["post"].to_numpy() - t["pre"].to_numpy() for t in datasets])
    between = changes.mean(axis=1).var(ddof=1)
    for k, delta in enumerate(DELTAS):
        shifted = changes - delta * SD_PRE * DROPOUT
        within = (shifted.var(axis=1, ddof=1) / 6).mean()
        np.testing.assert_allclose(table.loc[k, "se"] ** 2, within + (1 + 1 / 3) * between,
                                   rtol=1e-12)  # fmt: skip


def test_an_interval_that_includes_zero_tips_when_it_excludes_it():
    # Ten people, five without a post score; a pooled fall of -0.045 whose interval includes
    # zero. Shifted up (against it) the change becomes a clear rise.
    pre = np.arange(1.0, 11.0)
    post = pre + np.array([0.3, -0.4, 0.2, -0.3, 0.1, *[np.nan] * 5])
    observed = pd.DataFrame({"pre": pre, "post": post})
    datasets = []
    for change in ([-0.2, 0.1, -0.3, 0.2, 0.0], [0.1, -0.2, 0.0, -0.1, -0.3]):
        table = observed.copy()
        table.loc[5:9, "post"] = pre[5:] + np.array(change)
        datasets.append(table)
    result = tipping_point(datasets, observed=observed, first="pre", last="post")
    table = result.to_frame()
    np.testing.assert_allclose(table["estimate"].iloc[0], -0.045, rtol=1e-12)
    assert result.direction == 1 and not table["excludes_zero"].iloc[0]
    k = int(np.flatnonzero(table["excludes_zero"])[0])
    assert result.tipping_delta == DELTAS[k] and table["ci_low"].iloc[k] > 0
    assert 0 < k < len(DELTAS) - 1 and not table["excludes_zero"].iloc[:k].any()


def test_no_tipping_point_within_the_deltas():
    result = tipping_point(_completed((7.0, 7.0), (7.5, 7.0)), observed=OBSERVED, first="pre",
                           last="post", deltas=[0, 0.1, 0.2])  # fmt: skip
    assert math.isnan(result.tipping_delta) and not result.changes
    assert "does not change up to delta = 0.2 SD" in repr(result)
    forced = tipping_point(_completed((7.0, 7.0), (7.5, 7.0)), observed=OBSERVED, first="pre",
                           last="post", direction=1)  # fmt: skip
    assert (forced.to_frame()["shift"] >= 0).all() and not forced.changes


def test_complete_cases_beside_the_pooled_change():
    datasets = _completed((7.0, 6.0), (5.5, 8.0))
    result = imputed_change(datasets, observed=OBSERVED, first="pre", last="post")
    cc, mi = result.to_frame().iloc[0], result.to_frame().iloc[1]
    # the complete cases: the paired t test of the first four, as pairwise_changes gives it
    long = OBSERVED.assign(id=range(6)).melt(id_vars="id", var_name="wave", value_name="y")
    pairs = pairwise_changes(long, id_col="id", wave_col="wave", outcome_col="y",
                             waves=["pre", "post"]).tests.iloc[0]  # fmt: skip
    for column in ("estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high"):
        np.testing.assert_allclose(cc[column], pairs[column], rtol=1e-10)
    assert cc["n"] == 4 and cc["estimate"] == 1.25 and pd.isna(cc["m"])
    # the pooled change: the mean over imputations of the six changes' mean
    assert mi["n"] == 6 and mi["m"] == 2 and result.n_dropouts == 2
    np.testing.assert_allclose(mi["estimate"], ((1 + 1.5 + 1 + 1.5) * 2 + 2 + 0 + 0.5 + 2) / 12)
    assert 0 < mi["fmi"] < 1


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"deltas": [0.1, 0.2]}, "starting at 0"),
        ({"deltas": [0, 0.2, 0.1]}, "increasing"),
        ({"direction": 0}, "-1, 1 or None"),
        ({"first": "post"}, "two different columns"),
        ({"datasets": _completed((7.0, 7.0))}, "at least 2"),
        ({"datasets": [OBSERVED, OBSERVED]}, "missing or infinite"),
    ],
)
def test_bad_input_is_refused_with_one_clear_error(change, match):
    args = {"datasets": _completed((7.0, 7.0), (7.0, 6.0)), "observed": OBSERVED,
            "first": "pre", "last": "post", **change}  # fmt: skip
    with pytest.raises(InvalidParameterError, match=match):
        tipping_point(args.pop("datasets"), **args)
