"""Agreement on hostile ratings: extreme magnitudes, thousands of labels, huge units, bad ids.

Each test names the input that went wrong before: interval values near 1e200 or 1e-200 read
as "every rating has the same value"; 35,000 nominal labels made a dense units x labels
array for Fleiss' kappa; a zero-width space in a rater id made a new rater; bootstrap
resamples had no ceiling.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from models import InvalidParameterError, agreement
from models._agreement_stats import _fleiss, _rescaled
from models.limits import AGREEMENT_MAX_N_BOOT, AGREEMENT_MAX_PAIRS

COLS = {"unit_col": "unit", "rater_col": "rater", "value_col": "value"}


def _ratings(values, raters: int = 3) -> pd.DataFrame:
    n_units = len(values) // raters
    return pd.DataFrame(
        {
            "unit": np.repeat([f"u{k}" for k in range(n_units)], raters),
            "rater": np.tile([f"r{k}" for k in range(raters)], n_units),
            "value": values,
        }
    )


@pytest.fixture(scope="module")
def spread():
    """Thirty units of three raters: agreement well above chance, no ties."""
    rng = np.random.default_rng(7)
    truth = np.repeat(rng.normal(size=30) * 2.0, 3)
    return truth + rng.normal(size=90)


# ------------------------------------------------------------------------ extreme magnitudes


@pytest.mark.parametrize("level", ["interval", "ratio"])
@pytest.mark.parametrize("factor", [1e200, 1e-200, 1e300, 1e-300])
def test_alpha_does_not_depend_on_the_unit_of_the_values(spread, level, factor):
    x = np.abs(spread) + 0.1 if level == "ratio" else spread
    plain = agreement(_ratings(x), level=level, n_boot=200, seed=3, **COLS).coefficients
    scaled = agreement(_ratings(x * factor), level=level, n_boot=200, seed=3, **COLS)
    got = scaled.coefficients
    assert np.isfinite(plain["estimate"]).all()
    np.testing.assert_allclose(got["estimate"], plain["estimate"], rtol=0, atol=1e-10)
    for column in ("se", "ci_low", "ci_high"):
        np.testing.assert_allclose(got[column][0], plain[column][0], rtol=0, atol=1e-10)
    assert "every rating has the same value" not in got["note"][0]
    # the coincidence table keeps the values as given
    assert got is not None and scaled.coincidences["value_a"].abs().max() > 0


def test_interval_alpha_does_not_change_with_a_shift(spread):
    plain = agreement(_ratings(spread), level="interval", n_boot=0, **COLS)
    shifted = agreement(_ratings(spread + 1e6), level="interval", n_boot=0, **COLS)
    a, b = (r.coefficients["estimate"][0] for r in (plain, shifted))
    assert b == pytest.approx(a, abs=1e-8)  # the input rounding of x + 1e6 only


def test_ratio_alpha_is_not_shift_invariant_and_is_not_shifted(spread):
    x = np.abs(spread) + 0.1
    plain = agreement(_ratings(x), level="ratio", n_boot=0, **COLS).coefficients
    shifted = agreement(_ratings(x + 10.0), level="ratio", n_boot=0, **COLS).coefficients
    assert abs(shifted["estimate"][0] - plain["estimate"][0]) > 0.01


def test_the_values_are_brought_near_one_and_a_ratio_keeps_its_zero():
    x = np.array([1e200, 2e200, 4e200])
    interval = _rescaled(x, "interval")
    np.testing.assert_allclose(interval, [-1.0, -1.0 / 3.0, 1.0], rtol=1e-15)
    assert _rescaled(x, "ratio").tolist() == [0.25, 0.5, 1.0]
    assert _rescaled(np.array([0.0, 1e-300]), "ratio").tolist() == [0.0, 1.0]
    # neither max + min nor max - min may overflow
    wide = _rescaled(np.array([-1.7e308, 0.0, 1.7e308]), "interval")
    assert wide.tolist() == [-1.0, 0.0, 1.0]


@pytest.mark.parametrize("level", ["interval", "ratio"])
@pytest.mark.parametrize("value", [3.0, 1e200, 1e-200])
def test_equal_values_still_leave_alpha_undefined(level, value):
    result = agreement(_ratings([value] * 12), level=level, n_boot=50, **COLS)
    row = result.coefficients.iloc[0]
    assert np.isnan(row["estimate"])
    assert "every rating has the same value" in row["note"]


# ---------------------------------------------------------------------- many nominal labels


def _dense_fleiss(counts: np.ndarray, n_raters: int) -> float:
    """Fleiss' kappa on a dense array, as it was computed before."""
    n_units = counts.shape[0]
    agree = ((counts * counts).sum(axis=1) - n_raters) / (n_raters * (n_raters - 1.0))
    shares = counts.sum(axis=0) / (n_units * n_raters)
    chance = float(np.sum(shares * shares))
    return (float(agree.mean()) - chance) / (1.0 - chance)


def test_sparse_fleiss_equals_the_dense_result():
    rng = np.random.default_rng(11)
    counts = np.stack([np.bincount(rng.integers(0, 7, size=6), minlength=7) for _ in range(40)])
    from scipy import sparse

    dense = _dense_fleiss(counts.astype(float), 6)
    assert _fleiss(sparse.csr_matrix(counts.astype(float)), 6) == dense
    assert _fleiss(counts.astype(float), 6) == dense


def test_small_nominal_results_are_those_of_the_dense_coefficients():
    rng = np.random.default_rng(5)
    labels = rng.choice(["warm", "cold", "mixed", "none"], size=60, p=[0.4, 0.3, 0.2, 0.1])
    data = _ratings(labels, raters=4)
    result = agreement(data, n_boot=0, **COLS).coefficients.set_index("term")
    counts = pd.crosstab(data["unit"], data["value"]).to_numpy(dtype=float)
    assert result.loc["fleiss_kappa", "estimate"] == pytest.approx(
        _dense_fleiss(counts, 4), abs=1e-15
    )


def test_thousands_of_nominal_labels_stay_sparse():
    # 6,000 units x 2 raters with 7,000 labels: the dense units x labels array of Fleiss'
    # kappa alone was 336 MB
    rng = np.random.default_rng(2)
    labels = [f"L{v}" for v in rng.integers(0, 7_000, size=12_000)]
    data = _ratings(labels, raters=2)
    tracemalloc.start()
    try:
        result = agreement(data, n_boot=20, **COLS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 120e6, f"peak {peak / 1e6:.0f} MB"
    kappa = result.coefficients.set_index("term").loc["fleiss_kappa"]
    assert kappa["n_units"] == 6_000 and np.isfinite(kappa["estimate"])


# ------------------------------------------------------------------------ ceilings and time


@pytest.mark.parametrize("n_boot", [AGREEMENT_MAX_N_BOOT + 1, 10**12])
def test_resamples_have_a_ceiling(spread, n_boot):
    with pytest.raises(InvalidParameterError, match="whole number from 0 to 100,000"):
        agreement(_ratings(spread), level="interval", n_boot=n_boot, **COLS)


def test_a_unit_with_thousands_of_distinct_values_is_refused_before_its_pairs():
    raters = 3_163  # 3,163 ** 2 distinct-value pairs in one unit: just over the ceiling
    assert raters**2 > AGREEMENT_MAX_PAIRS
    data = pd.DataFrame(
        {
            "unit": ["crowd"] * raters + ["small", "small"],
            "rater": [f"r{k}" for k in range(raters)] + ["r0", "r1"],
            "value": np.r_[np.arange(raters, dtype=float), 1.0, 2.0],
        }
    )
    with pytest.raises(InvalidParameterError) as info:
        agreement(data, level="interval", n_boot=0, **COLS)
    message = str(info.value)
    assert "10,004,573 pairs of distinct values" in message
    assert "unit crowd has 3,163" in message


def test_work_estimated_over_ten_minutes_is_refused_with_the_resamples_that_fit():
    # ratio alpha compares every two distinct values: 60,000 of them, 2,000 resamples
    rng = np.random.default_rng(4)
    data = _ratings(rng.uniform(1.0, 2.0, size=60_000), raters=2)
    with pytest.raises(InvalidParameterError) as info:
        agreement(data, level="ratio", n_boot=2000, **COLS)
    message = str(info.value)
    assert "ratio agreement of 30,000 units with 60,000 distinct values" in message
    assert "more than the 10 min" in message
    assert "n_boot=160 (command line: --n-boot 160)" in message


# ------------------------------------------------------------------------ invisible characters


@pytest.mark.parametrize(
    ("char", "name"),
    [
        ("\u200b", "ZERO WIDTH SPACE"),
        ("\u2028", "LINE SEPARATOR"),
        ("\u2029", "PARAGRAPH SEPARATOR"),
        ("\u202e", "RIGHT-TO-LEFT OVERRIDE"),
        ("\u2066", "LEFT-TO-RIGHT ISOLATE"),
        ("\u2069", "POP DIRECTIONAL ISOLATE"),
    ],
)
@pytest.mark.parametrize("column", ["unit", "rater"])
def test_an_invisible_character_in_an_id_is_refused_not_a_new_id(char, name, column):
    data = _ratings(["a", "a", "b", "b", "a", "b"], raters=2)
    data.loc[3, column] = data.loc[3, column] + char
    with pytest.raises(InvalidParameterError) as info:
        agreement(data, n_boot=0, **COLS)
    message = str(info.value)
    what = "unit id" if column == "unit" else "rater id"
    assert f"row 3, column '{column}': the {what} holds an invisible character" in message
    assert f"U+{ord(char):04X} {name}" in message


def test_an_invisible_character_in_a_label_is_named_once():
    data = _ratings(["a", "a", "b", "b\u200d", "a", "b"], raters=2)
    with pytest.raises(InvalidParameterError) as info:
        agreement(data, n_boot=0, **COLS)
    message = str(info.value)
    assert "1 row problem(s)" in message and "U+200D ZERO WIDTH JOINER" in message
    # a number written with one is named for it, not called text
    numbers = _ratings(["1", "1", "2", "2\u2060", "1", "2"], raters=2)
    with pytest.raises(InvalidParameterError) as info:
        agreement(numbers, level="ordinal", levels=["1", "2"], n_boot=0, **COLS)
    assert "U+2060 WORD JOINER" in str(info.value)
    assert "declared levels" not in str(info.value)
