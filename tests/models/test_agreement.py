"""Agreement between raters: published examples, a brute-force twin, the bootstrap, bad input.

Published values used (each checked in its source text):

* Krippendorff's reliability data, 4 coders x 12 units with missing values (Krippendorff 2011,
  "Computing Krippendorff's Alpha-Reliability", the worked example): alpha nominal .743,
  ordinal .815, interval .849, ratio .797. The PDF itself could not be read here; the data
  matrix and the four values were checked in two texts that quote it: the documented example
  of ``DescTools::KrippAlpha`` (formerly ``irr::kripp.alpha``), whose printed output gives the
  nominal value to seven digits, 0.7434211, and a published test that quotes the same table
  and the four values from Krippendorff (2019), *Content Analysis*, 4th ed., ch. 12, p. 290.
* Fleiss (1971), 30 patients x 6 psychiatrists, 5 diagnoses: kappa .430; 0.4302445 in
  ``irr::kappam.fleiss(diagnoses)`` (the data set ``irr::diagnoses``).
* Gwet's ``irrCAC`` 1.0 vignette "Calculating Chance-corrected Agreement Coefficients", the
  table ``cont3x3abstractors`` (2 abstractors x 100 pregnant women, 3 categories):
  Gwet's AC1 0.8493305, Krippendorff's alpha 0.7972585, Scott's pi 0.7962397 (Fleiss' kappa
  of two raters), percent agreement 0.89. Its "weighting" vignette prints Gwet's weights on
  the categories 1:3: ordinal 0.6666667 and quadratic 0.75 between neighbours.
"""

from __future__ import annotations

import json
import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from models import AgreementResult, InvalidParameterError, agreement
from models._agreement_stats import _bootstrap_alpha, _gwet_weight

# Krippendorff (2011): rows are the coders A-D, columns the units 1-12; None is missing
KRIPPENDORFF = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
# Fleiss (1971) as irr::diagnoses: one row per patient, the diagnosis (1-5) of each rater
FLEISS = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]  # fmt: skip
# irrCAC::cont3x3abstractors: rows abstractor 1, columns abstractor 2 (Ectopic, AIU, NIU)
ABSTRACTORS = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
COLS = {"unit_col": "unit", "rater_col": "rater", "value_col": "value"}


def _long(matrix, raters_in_rows: bool) -> pd.DataFrame:
    rows = []
    grid = np.array(matrix, dtype=object)
    if raters_in_rows:
        grid = grid.T
    for u, unit in enumerate(grid):
        for r, value in enumerate(unit):
            rows.append((f"u{u + 1}", f"r{r + 1}", np.nan if value is None else float(value)))
    return pd.DataFrame(rows, columns=["unit", "rater", "value"])


@pytest.fixture(scope="module")
def krippendorff() -> pd.DataFrame:
    return _long(KRIPPENDORFF, raters_in_rows=True)


def _abstractors() -> pd.DataFrame:
    rows, unit = [], 0
    for i, line in enumerate(ABSTRACTORS):
        for j, count in enumerate(line):
            for _ in range(count):
                rows += [(unit, "one", i + 1), (unit, "two", j + 1)]
                unit += 1
    return pd.DataFrame(rows, columns=["unit", "rater", "value"])


def _estimates(result: AgreementResult) -> dict[str, float]:
    return dict(zip(result.coefficients["term"], result.coefficients["estimate"], strict=True))


# ----------------------------------------------------------------- published values


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_published_alphas(krippendorff, level, published):
    result = agreement(krippendorff, **COLS, level=level, n_boot=0)
    row = result.coefficients.iloc[0]
    # printed to three decimals
    assert row["estimate"] == pytest.approx(published, abs=5e-4)
    # unit 12 has one rating: left out, said; 40 pairable values of 11 units by 4 coders
    assert (row["n_units"], row["n_raters"], row["n_pairable"]) == (11, 4, 40)
    assert "1 unit(s) with one rating left out" in row["note"]


def test_krippendorff_nominal_to_seven_digits(krippendorff):
    alpha = _estimates(agreement(krippendorff, **COLS, n_boot=0))["krippendorff_alpha"]
    assert alpha == pytest.approx(0.7434211, abs=5e-8)  # DescTools::KrippAlpha example


def test_fleiss_1971_kappa():
    result = agreement(_long(FLEISS, raters_in_rows=False), **COLS, n_boot=0)
    kappa = result.coefficients.set_index("term").loc["fleiss_kappa"]
    assert kappa["estimate"] == pytest.approx(0.4302445, abs=5e-8)  # Fleiss: .430
    assert (kappa["n_units"], kappa["n_raters"], kappa["n_pairable"]) == (30, 6, 180)


def test_gwet_abstractors_table():
    found = _estimates(agreement(_abstractors(), **COLS, n_boot=0))
    assert found["gwet_ac1"] == pytest.approx(0.8493305, abs=5e-8)
    assert found["krippendorff_alpha"] == pytest.approx(0.7972585, abs=5e-8)
    assert found["fleiss_kappa"] == pytest.approx(0.7962397, abs=5e-8)  # Scott's pi
    assert found["percent_agreement"] == pytest.approx(0.89, abs=1e-12)


def test_gwet_weights_on_three_categories():
    x = np.array([1.0, 2.0, 3.0])
    a, b = np.repeat(x, 3), np.tile(x, 3)
    ordinal = _gwet_weight("ordinal", a - 1, b - 1, x - 1).reshape(3, 3)
    quadratic = _gwet_weight("quadratic", a, b, x).reshape(3, 3)
    np.testing.assert_allclose(ordinal[0], [1, 0.6666667, 0], atol=5e-8)
    np.testing.assert_allclose(quadratic[0], [1, 0.75, 0], atol=1e-12)
    np.testing.assert_allclose(np.diag(ordinal), 1)
    np.testing.assert_allclose(ordinal, ordinal.T)


# ----------------------------------------------------------------- a brute-force twin


def _brute(data: pd.DataFrame, level: str, levels=None) -> dict[str, float]:
    """The textbook formulas, unit by unit and pair by pair (no matrices)."""
    data = data.dropna(subset=["value"])
    units = [g["value"].tolist() for _, g in data.groupby("unit") if len(g) >= 2]
    values = [v for u in units for v in u]
    cats = sorted(set(values)) if levels is None else list(levels)
    n = len(values)
    n_c = {c: values.count(c) for c in cats}

    def delta(c, k):
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (c - k) ** 2
        if level == "ratio":
            return 0.0 if c + k == 0 else ((c - k) / (c + k)) ** 2
        lo, hi = sorted((cats.index(c), cats.index(k)))
        between = sum(n_c[cats[g]] for g in range(lo, hi + 1))
        return (between - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(
        sum(delta(u[i], u[j]) for i in range(len(u)) for j in range(len(u)) if i != j)
        / (len(u) - 1)
        for u in units
    )
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in cats for k in cats)
    alpha = 1 - (n - 1) * observed / expected

    q = len(cats)
    span = max(cats) - min(cats) if level != "nominal" else 1

    def weight(c, k):
        if level == "nominal":
            return float(c == k)
        if level == "ordinal":
            d = abs(cats.index(c) - cats.index(k))
            return 1 - math.comb(d + 1, 2) / math.comb(q, 2)
        if level == "interval":
            return 1 - (c - k) ** 2 / span**2
        top = ((max(cats) - min(cats)) / (max(cats) + min(cats))) ** 2
        return 1 - (0.0 if c + k == 0 else ((c - k) / (c + k)) ** 2) / top

    p_a = np.mean(
        [
            sum(u.count(c) * (sum(weight(c, k) * u.count(k) for k in cats) - 1) for c in cats)
            / (len(u) * (len(u) - 1))
            for u in units
        ]
    )
    pi = {c: np.mean([u.count(c) / len(u) for u in units]) for c in cats}
    t_w = sum(weight(c, k) for c in cats for k in cats)
    p_e = t_w / (q * (q - 1)) * sum(pi[c] * (1 - pi[c]) for c in cats)
    pairs = np.mean(
        [sum(a == b for a, b in combinations(u, 2)) / math.comb(len(u), 2) for u in units]
    )
    return {"alpha": alpha, "ac": (p_a - p_e) / (1 - p_e), "percent": pairs}


@pytest.fixture(scope="module")
def messy() -> pd.DataFrame:
    """Seeded ratings 0-6 of 40 units by 7 raters, a third of the cells missing."""
    rng = np.random.default_rng(20261126)
    truth = rng.integers(0, 7, 40)
    rows = []
    for u in range(40):
        for r in range(7):
            if rng.random() < 0.35:
                continue
            value = int(np.clip(truth[u] + rng.integers(-2, 3), 0, 6))
            rows.append((f"unit{u}", f"rater{r}", float(value)))
    return pd.DataFrame(rows, columns=["unit", "rater", "value"])


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_matrix_path_equals_the_brute_force_formulas(messy, level):
    found = _estimates(agreement(messy, **COLS, level=level, n_boot=0))
    twin = _brute(messy, level)
    ac = "gwet_ac1" if level == "nominal" else "gwet_ac2"
    assert found["krippendorff_alpha"] == pytest.approx(twin["alpha"], rel=1e-10)
    assert found[ac] == pytest.approx(twin["ac"], rel=1e-10)
    assert found["percent_agreement"] == pytest.approx(twin["percent"], rel=1e-10)


def test_declared_levels_set_gwets_categories(messy):
    """Levels never used still count in Gwet's q (as irrCAC's categ.labels); alpha ignores them."""
    levels = [float(v) for v in range(-2, 9)]
    declared = _estimates(agreement(messy, **COLS, levels=levels, n_boot=0))
    observed = _estimates(agreement(messy, **COLS, n_boot=0))
    twin = _brute(messy, "nominal", levels=levels)
    assert declared["gwet_ac1"] == pytest.approx(twin["ac"], rel=1e-10)
    assert declared["gwet_ac1"] != pytest.approx(observed["gwet_ac1"], rel=1e-3)
    assert declared["krippendorff_alpha"] == pytest.approx(observed["krippendorff_alpha"])


def test_ordinal_text_levels_equal_their_codes(messy):
    names = ["none", "slight", "some", "moderate", "marked", "strong", "extreme"]
    text = messy.assign(value=[names[int(v)] for v in messy["value"]])
    coded = agreement(messy, **COLS, level="ordinal", n_boot=50, seed=3).coefficients
    named = agreement(text, **COLS, level="ordinal", levels=names, n_boot=50, seed=3)
    numbers = ["estimate", "se", "ci_low", "ci_high"]
    np.testing.assert_allclose(
        named.coefficients[numbers].to_numpy(float), coded[numbers].to_numpy(float), rtol=1e-10
    )


# ----------------------------------------------------------------- the bootstrap


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_bootstrap_replicate_is_alpha_of_the_resampled_units(messy, level):
    """Each replicate equals alpha computed afresh on the units it drew (ordinal: new ranks)."""
    from models._agreement_stats import _build_counts

    result = agreement(messy, **COLS, level=level, n_boot=0)
    assert np.isfinite(result.coefficients["estimate"].iloc[0])
    used = messy[messy.groupby("unit")["unit"].transform("size") >= 2]
    units = pd.factorize(used["unit"])[1]
    values, codes = np.unique(used["value"].to_numpy(), return_inverse=True)
    built = _build_counts(pd.factorize(used["unit"])[0], codes, len(values))
    built = type(built)(**{**built.__dict__, "x": values, "labels": list(values)})
    replicates = _bootstrap_alpha(level, built, 3, seed=11)
    draws = np.random.default_rng(11).integers(0, len(units), size=(3, len(units)))
    for k in range(3):
        parts = [
            used[used["unit"] == units[i]].assign(unit=f"draw{j}") for j, i in enumerate(draws[k])
        ]
        again = agreement(pd.concat(parts), **COLS, level=level, n_boot=0)
        assert replicates[k] == pytest.approx(again.coefficients["estimate"].iloc[0], rel=1e-10)


def test_bootstrap_is_seeded(krippendorff):
    first = agreement(krippendorff, **COLS, level="ordinal", n_boot=300, seed=5)
    again = agreement(krippendorff, **COLS, level="ordinal", n_boot=300, seed=5)
    other = agreement(krippendorff, **COLS, level="ordinal", n_boot=300, seed=6)
    pd.testing.assert_frame_equal(first.coefficients, again.coefficients)
    alpha = first.coefficients.iloc[0]
    assert alpha["ci_low"] < alpha["estimate"] < alpha["ci_high"] <= 1
    assert alpha["ci_low"] != other.coefficients.iloc[0]["ci_low"]
    assert "300 bootstrap resamples of the 11 units (seed 5)" in alpha["note"]
    narrow = agreement(krippendorff, **COLS, level="ordinal", n_boot=300, seed=5, ci_level=0.5)
    assert narrow.coefficients.iloc[0]["ci_low"] > alpha["ci_low"]


def test_bootstrap_interval_covers_a_known_alpha():
    """Simulation with known truth: two raters, interval ratings = unit true score + noise.

    With true-score variance 1 and noise variance 1 the population alpha is 1/2 (alpha of
    interval data with two raters is the intraclass correlation). Over 40 seeded data sets of
    150 units, the 90% interval holds 1/2 in at least 30 (binomial(40, .9): P(X < 30) < 1%).
    """
    rng = np.random.default_rng(7)
    held = 0
    for _ in range(40):
        truth = rng.normal(size=150)
        frame = pd.DataFrame(
            {
                "unit": np.repeat(np.arange(150), 2),
                "rater": np.tile(["a", "b"], 150),
                "value": np.repeat(truth, 2) + rng.normal(size=300),
            }
        )
        row = agreement(frame, **COLS, level="interval", n_boot=400, seed=1, ci_level=0.9)
        alpha = row.coefficients.iloc[0]
        held += alpha["ci_low"] <= 0.5 <= alpha["ci_high"]
    assert held >= 30


# ----------------------------------------------------------------- counts and left out


def test_rows_without_value_and_single_units_are_counted(krippendorff):
    result = agreement(krippendorff, **COLS, n_boot=0)
    left = result.left_out.set_index("reason")
    assert left["n_rows"].tolist() == [7, 1] and left["n_units"].iloc[1] == 1
    assert result.meta["n_rows"] == 48 and result.meta["n_rows_used"] == 40
    assert result.meta["n_units_one_rating"] == 1
    # the coincidence matrix holds n = 40 pairable values, symmetric
    table = result.coincidences
    assert table["count"].sum() == pytest.approx(40)
    square = table.pivot(index="value_a", columns="value_b", values="count").fillna(0)
    np.testing.assert_allclose(square.to_numpy(), square.to_numpy().T)


def test_fleiss_kappa_counts_complete_units(krippendorff):
    kappa = agreement(krippendorff, **COLS, n_boot=0).coefficients.iloc[1]
    assert kappa["term"] == "fleiss_kappa"
    assert (kappa["n_units"], kappa["n_raters"], kappa["n_pairable"]) == (8, 4, 32)
    assert "the 8 unit(s) rated by all 4 raters" in kappa["note"]


def test_fleiss_kappa_without_complete_units_is_nan_and_says_why():
    frame = pd.DataFrame(
        {
            "unit": ["a", "a", "b", "b", "c", "c"],
            "rater": ["x", "y", "y", "z", "x", "z"],
            "value": [1, 1, 2, 2, 1, 2],
        }
    )
    result = agreement(frame, **COLS, n_boot=0)
    kappa = result.coefficients.iloc[1]
    assert math.isnan(kappa["estimate"]) and kappa["n_units"] == 0
    assert "no unit was rated by all 3 raters" in kappa["note"]
    assert np.isfinite(result.coefficients.iloc[0]["estimate"])


def test_no_variation_leaves_alpha_undefined():
    frame = pd.DataFrame({"unit": [1, 1, 2, 2], "rater": ["a", "b"] * 2, "value": [3] * 4})
    result = agreement(frame, **COLS)
    alpha = result.coefficients.iloc[0]
    assert math.isnan(alpha["estimate"]) and math.isnan(alpha["ci_low"])
    assert "no variation" in alpha["note"]
    assert result.coefficients.iloc[3]["estimate"] == 1.0


# ----------------------------------------------------------------- bad input


def test_every_row_problem_in_one_error():
    frame = pd.DataFrame(
        {
            "unit": ["u1", "u1", "u1", "u2", None, "u3"],
            "rater": ["a", "a", "b", "a", "b", "c"],
            "value": [1.0, 2.0, "high", 3.0, 2.0, -1.0],
        },
        index=[10, 11, 12, 13, 14, 15],
    )
    with pytest.raises(InvalidParameterError) as caught:
        agreement(frame, **COLS, level="ratio")
    text = str(caught.value)
    assert "5 row problem(s)" in text
    assert "row 10" in text and "row 11" in text and "more than once" in text
    assert "row 12, column 'value': a ratio value must be a finite number; got text" in text
    assert "row 14, column 'unit': no unit id" in text
    assert "row 15, column 'value': a ratio value must be 0 or more" in text


def test_values_outside_declared_levels_are_refused(krippendorff):
    with pytest.raises(InvalidParameterError, match="not one of the declared levels"):
        agreement(krippendorff, **COLS, levels=[1.0, 2.0, 3.0, 4.0])


def test_text_in_ordinal_needs_levels():
    frame = pd.DataFrame({"unit": [1, 1], "rater": ["a", "b"], "value": ["low", "high"]})
    with pytest.raises(InvalidParameterError, match="listed in levels to give its order"):
        agreement(frame, **COLS, level="ordinal")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"level": "binary"}, "`level` parameter of agreement"),
        ({"levels": [1, 2], "level": "interval"}, "applies to nominal and ordinal"),
        ({"levels": [1, 1, 2]}, "lists a value twice"),
        ({"levels": "123"}, "list of at least two values"),
        ({"ci_level": 95}, "`ci_level`"),
        ({"n_boot": -1}, "`n_boot`"),
        ({"seed": -1}, "`seed`"),
        ({"unit_col": "story"}, "`unit_col` parameter"),
        ({"rater_col": "unit"}, "three different columns"),
    ],
)
def test_bad_arguments(krippendorff, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        agreement(krippendorff, **{**COLS, **kwargs})


def test_data_must_be_a_frame():
    with pytest.raises(InvalidParameterError, match="pandas DataFrame"):
        agreement([[1, 2]], **COLS)


# ----------------------------------------------------------------- the result protocol


def test_result_protocol(krippendorff):
    result = agreement(krippendorff, **COLS, level="interval", n_boot=100)
    assert repr(result) == (
        "AgreementResult(interval: Krippendorff's alpha 0.849, 11 units, 4 raters)"
    )
    text = str(result.summary())
    assert "krippendorff_alpha" in text and "Left out" in text and "\n" in text
    frame = result.to_frame()
    assert list(frame.columns) == [
        "term", "level", "estimate", "se", "ci_low", "ci_high",
        "n_units", "n_raters", "n_pairable", "note",
    ]  # fmt: skip
    frame.loc[0, "estimate"] = 0.0
    assert result.coefficients.loc[0, "estimate"] != 0.0  # a copy
    json.dumps(result.to_dict(), allow_nan=False)
    assert result.meta["parameters"]["n_boot"] == 100


def test_input_is_not_modified(messy):
    before = messy.copy()
    agreement(messy, **COLS, level="ordinal", n_boot=10)
    pd.testing.assert_frame_equal(messy, before)


def test_no_unit_with_two_ratings_leaves_every_coefficient_undefined():
    frame = pd.DataFrame({"unit": [1, 2, 3], "rater": ["a", "b", "a"], "value": [1, 2, np.nan]})
    result = agreement(frame, **COLS)
    table = result.coefficients
    assert table["estimate"].isna().all() and (table["n_units"] == 0).all()
    assert table["note"].str.startswith("undefined: no unit has two ratings").all()
    assert result.left_out["n_rows"].tolist() == [1, 2]
    assert (
        repr(result)
        == "AgreementResult(nominal: Krippendorff's alpha undefined, 0 units, 0 raters)"
    )


def test_levels_may_be_an_array(messy):
    levels = np.arange(7, dtype=float)
    as_array = agreement(messy, **COLS, level="ordinal", levels=levels, n_boot=0)
    as_list = agreement(messy, **COLS, level="ordinal", levels=list(levels), n_boot=0)
    pd.testing.assert_frame_equal(as_array.coefficients, as_list.coefficients)
