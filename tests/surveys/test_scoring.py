"""Tests of surveys/scoring.py.

Expected scores are worked out by hand in the comments (reverse keying on the declared range:
x' = min + max - x), checked against psych::scoreItems (R 4.2.2, psych 2.2.9; reference file
written by tests/surveys/reference/psych_bfi.R), or follow from an equivalent computation.
"""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings
from numpy.testing import assert_allclose

from surveys._errors import (
    InputValidationError,
    InvalidParameterError,
    SurveysWarning,
    UndefinedStatisticWarning,
)
from surveys.instruments import derive_items, load_instrument
from surveys.reliability import scale_reliability
from surveys.scoring import ScaleScores, reverse_score, score

TESTS = Path(__file__).resolve().parents[1]
KEYS = TESTS / "data" / "keys"


def score_checked(data, instrument, **kwargs):
    """Score, allowing only the package's own (reliability) warnings.

    Tiny hand-made samples leave some reliability statistics undefined; the package then warns
    with its own categories, which is expected here and tested separately.
    """
    with package_warnings() as records:  # any other warning (RuntimeWarning ...) fails
        result = score(data, instrument, **kwargs)
    unexpected = [r for r in records if not issubclass(r.category, SurveysWarning)]
    assert not unexpected, [str(r.message) for r in unexpected]
    return result


def frame(instrument, rows, ids=None):
    """Respondents as rows of item values in the instrument's item order."""
    items = load_instrument(instrument).items
    data = pd.DataFrame(rows, columns=list(items), dtype=float)
    data.insert(0, "id", ids if ids is not None else [f"r{i + 1}" for i in range(len(rows))])
    return data


def scores_of(result):
    """{(id, scale): score} from the tidy table."""
    tidy = result.scores
    return {(i, s): v for i, s, v in zip(tidy["id"], tidy["scale"], tidy["score"], strict=True)}


# ---------------------------------------------------------------------------------------------
# One or more respondents scored by hand for every instrument of the library

# BFI-44, mean of 1-5 items, reverse = 6 - x.
#   r1 answers 1 everywhere, r2 answers 5 everywhere, r3 answers ((k - 1) // 9) + 1 to item k
#   (items 1-9 -> 1, 10-18 -> 2, 19-27 -> 3, 28-36 -> 4, 37-44 -> 5).
# r1: E = (5 x 1 + 3 reversed x 5) / 8 = 20/8; A = (5 + 4 x 5) / 9 = 25/9; C = 25/9;
#     N = (5 + 3 x 5) / 8 = 20/8; O = (8 + 2 x 5) / 10 = 18/10
# r2: E = (5 x 5 + 3 x 1) / 8 = 28/8; A = (25 + 4) / 9 = 29/9; C = 29/9; N = 28/8; O = 42/10
# r3: E: 1->1, 6R 1->5, 11->2, 16->2, 21R 3->3, 26->3, 31R 4->2, 36->4 = 22 -> 22/8
#     A: 2R 1->5, 7->1, 12R 2->4, 17->2, 22->3, 27R 3->3, 32->4, 37R 5->1, 42->5 = 28 -> 28/9
#     C: 3->1, 8R 1->5, 13->2, 18R 2->4, 23R 3->3, 28->4, 33->4, 38->5, 43R 5->1 = 29 -> 29/9
#     N: 4->1, 9R 1->5, 14->2, 19->3, 24R 3->3, 29->4, 34R 4->2, 39->5 = 25 -> 25/8
#     O: 5->1, 10->2, 15->2, 20->3, 25->3, 30->4, 35R 4->2, 40->5, 41R 5->1, 44->5 = 28 -> 28/10
BFI44_ROWS = [[1] * 44, [5] * 44, [(k - 1) // 9 + 1 for k in range(1, 45)]]
BFI44_EXPECTED = {
    "r1": [20 / 8, 25 / 9, 25 / 9, 20 / 8, 18 / 10],
    "r2": [28 / 8, 29 / 9, 29 / 9, 28 / 8, 42 / 10],
    "r3": [22 / 8, 28 / 9, 29 / 9, 25 / 8, 28 / 10],
}

# IPIP-50, sum of 1-5 items, reverse = 6 - x. Per factor (+ keyed, - keyed):
#   E (5, 5), A (6, 4), C (6, 4), ES (2, 8), I (7, 3).
# r1 all 1: E = 5 + 5 x 5 = 30; A = 6 + 20 = 26; C = 26; ES = 2 + 40 = 42; I = 7 + 15 = 22
# r2 all 5: E = 25 + 5 = 30; A = 30 + 4 = 34; C = 34; ES = 10 + 8 = 18; I = 35 + 3 = 38
# r3 answers 3 everywhere except 5 on items 1, 2, 4 and 1 on items 6, 9:
#   E: 1->5, 6R 1->5, 8 more items at 3 = 34; A: 2R 5->1, 9 more at 3 = 28; C: 10 x 3 = 30;
#   ES: 4R 5->1, 9->1, 8 more at 3 = 26; I: 10 x 3 = 30
IPIP50_R3 = [5, 5, 3, 5, 3, 1, 3, 3, 1] + [3] * 41
IPIP50_ROWS = [[1] * 50, [5] * 50, IPIP50_R3]
IPIP50_EXPECTED = {
    "r1": [30, 26, 26, 42, 22],
    "r2": [30, 34, 34, 18, 38],
    "r3": [34, 28, 30, 26, 30],
}

# Mini-IPIP, sum of 1-5 items. r1 all 1: E = 1 + 1 + 5 + 5 = 12, A = 12, C = 12, N = 12,
# I = 1 + 3 x 5 = 16. r2 all 5: 12, 12, 12, 12, I = 5 + 3 x 1 = 8.
# r3 answers ((k - 1) // 4) + 1 to item k (1-4 -> 1, 5-8 -> 2, 9-12 -> 3, 13-16 -> 4, 17-20 -> 5):
#   E: 1->1, 6R 2->4, 11->3, 16R 4->2 = 10; A: 2->1, 7R 2->4, 12->3, 17R 5->1 = 9
#   C: 3->1, 8R 2->4, 13->4, 18R 5->1 = 10; N: 4->1, 9R 3->3, 14->4, 19R 5->1 = 9
#   I: 5->2, 10R 3->3, 15R 4->2, 20R 5->1 = 8
MINI_ROWS = [[1] * 20, [5] * 20, [(k - 1) // 4 + 1 for k in range(1, 21)]]
MINI_EXPECTED = {"r1": [12, 12, 12, 12, 16], "r2": [12, 12, 12, 12, 8], "r3": [10, 9, 10, 9, 8]}

# TIPI, mean of 1-7 items, reverse = 8 - x (items 2, 4, 6, 8, 10).
# r1 = 1, 7, 1, 7, ...: every scale = (1 + (8 - 7)) / 2 = 1
# r2 = 2, 3, 4, 5, 6, 7, 1, 2, 3, 4: E = (2 + (8 - 7)) / 2 = 1.5; A = ((8 - 3) + 1) / 2 = 3;
#      C = (4 + (8 - 2)) / 2 = 5; ES = ((8 - 5) + 3) / 2 = 3; O = (6 + (8 - 4)) / 2 = 5
TIPI_ROWS = [[1, 7] * 5, [2, 3, 4, 5, 6, 7, 1, 2, 3, 4]]
TIPI_EXPECTED = {"r1": [1, 1, 1, 1, 1], "r2": [1.5, 3, 5, 3, 5]}

# BFI-10, mean of 1-5 items, reverse = 6 - x (items 1, 3, 4, 5, 7).
# r1 all 1: each scale = (5 + 1) / 2 = 3
# r2 = 1, 2, 3, 4, 5, 5, 4, 3, 2, 1: E = ((6 - 1) + 5) / 2 = 5; A = (2 + (6 - 4)) / 2 = 2;
#      C = ((6 - 3) + 3) / 2 = 3; N = ((6 - 4) + 2) / 2 = 2; O = ((6 - 5) + 1) / 2 = 1
# r3 = 2, 3, 4, 5, 1, 4, 2, 3, 5, 1: E = ((6 - 2) + 4) / 2 = 4; A = (3 + (6 - 2)) / 2 = 3.5;
#      C = ((6 - 4) + 3) / 2 = 2.5; N = ((6 - 5) + 5) / 2 = 3; O = ((6 - 1) + 1) / 2 = 3
BFI10_ROWS = [[1] * 10, [1, 2, 3, 4, 5, 5, 4, 3, 2, 1], [2, 3, 4, 5, 1, 4, 2, 3, 5, 1]]
BFI10_EXPECTED = {"r1": [3, 3, 3, 3, 3], "r2": [5, 2, 3, 2, 1], "r3": [4, 3.5, 2.5, 3, 3]}

# TAS-34, count of true (1) answers: r1 = 1 on odd items -> 17; r2 all true -> 34.
TAS34_ROWS = [[k % 2 for k in range(1, 35)], [1] * 34]
TAS34_EXPECTED = {"r1": [17], "r2": [34]}

# MPQ-BF Absorption, count: r1 true on items 13, 24, 36, 48, 59 -> 5; r2 all false -> 0.
MPQ_ROWS = [[1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], [0] * 12]
MPQ_EXPECTED = {"r1": [5], "r2": [0]}

# Study TAS subset, mean of 1-5: (1 + 5 + 2 + 4) / 4 = 3; (5 + 5 + 5 + 4) / 4 = 4.75
TAS4_ROWS = [[1, 5, 2, 4], [5, 5, 5, 4]]
TAS4_EXPECTED = {"r1": [3], "r2": [4.75]}

# CLS (21 items, mean of 1-7): r1 answers ((k - 1) % 7) + 1 -> 3 x (1 + ... + 7) / 21 = 84/21;
# r2 answers 7 except 1 on item 21 -> (20 x 7 + 1) / 21 = 141/21
CLS21_ROWS = [[(k - 1) % 7 + 1 for k in range(1, 22)], [7] * 20 + [1]]
CLS21_EXPECTED = {"r1": [84 / 21], "r2": [141 / 21]}

# CLS study subset, mean of 9 items: (1 + 2 + ... + 7 + 7 + 7) / 9 = 42/9; all 1 -> 1
CLS9_ROWS = [[1, 2, 3, 4, 5, 6, 7, 7, 7], [1] * 9]
CLS9_EXPECTED = {"r1": [42 / 9], "r2": [1]}

# SCBCS, sum of 5 items: 7 + 6 + 5 + 4 + 3 = 25; all 1 -> 5
SCBCS_ROWS = [[7, 6, 5, 4, 3], [1] * 5]
SCBCS_EXPECTED = {"r1": [25], "r2": [5]}

# UBC-SSCS, mean of 1-7, reverse = 8 - x (items 1, 2, 3, 5):
# r1 all 1: (4 x 7 + 6 x 1) / 10 = 3.4; r2 all 7: (4 x 1 + 6 x 7) / 10 = 4.6
# r3 = 1, 7, 1, 7, ...: 1R->7, 2R->1, 3R->7, 4->7, 5R->7, 6->7, 7->1, 8->7, 9->1, 10->7 = 52 -> 5.2
UBC_ROWS = [[1] * 10, [7] * 10, [1, 7] * 5]
UBC_EXPECTED = {"r1": [3.4], "r2": [4.6], "r3": [5.2]}

# WHO-5, 0-5 items: raw = sum, percentage = raw x 4. r1: 5+4+3+2+1 = 15 -> 60; r2: 0 -> 0
WHO5_ROWS = [[5, 4, 3, 2, 1], [0] * 5]
WHO5_EXPECTED = {"r1": [15, 60], "r2": [0, 0]}

HAND_SCORED = {
    "bfi44": (BFI44_ROWS, BFI44_EXPECTED),
    "ipip50": (IPIP50_ROWS, IPIP50_EXPECTED),
    "mini_ipip": (MINI_ROWS, MINI_EXPECTED),
    "tipi": (TIPI_ROWS, TIPI_EXPECTED),
    "bfi10": (BFI10_ROWS, BFI10_EXPECTED),
    "tas34": (TAS34_ROWS, TAS34_EXPECTED),
    "mpq_bf_absorption": (MPQ_ROWS, MPQ_EXPECTED),
    "tas4": (TAS4_ROWS, TAS4_EXPECTED),
    "cls21_humanity": (CLS21_ROWS, CLS21_EXPECTED),
    "cls21_close": (CLS21_ROWS, CLS21_EXPECTED),
    "cls9_humanity": (CLS9_ROWS, CLS9_EXPECTED),
    "scbcs5": (SCBCS_ROWS, SCBCS_EXPECTED),
    "ubc_sscs10": (UBC_ROWS, UBC_EXPECTED),
    "who5": (WHO5_ROWS, WHO5_EXPECTED),
}


@pytest.mark.parametrize("name", sorted(HAND_SCORED))
def test_hand_scored_respondents(name):
    rows, expected = HAND_SCORED[name]
    data = frame(name, rows)
    result = score_checked(data, name)
    scales = [k.name for k in load_instrument(name).scales]
    got = scores_of(result)
    for rid, values in expected.items():
        assert_allclose([got[(rid, s)] for s in scales], values, rtol=1e-12)
    # every scale of every respondent is in the tidy table, respondents in input order
    assert len(result.scores) == len(rows) * len(scales)
    assert result.scores["id"].tolist() == [r for r in data["id"] for _ in scales]
    assert (result.scores["n_answered"] == result.scores["n_items"]).all()


def test_sites_is_the_raw_item_and_alpha_is_undefined():
    data = frame("sites", [[4], [1], [5]])
    with pytest.warns(UndefinedStatisticWarning, match=r"sites\.empathy"):
        result = score(data, "sites")
    assert result.scores["score"].tolist() == [4.0, 1.0, 5.0]
    rel = result.reliability.iloc[0]
    assert rel["n"] == 3 and rel["n_items"] == 1
    assert np.isnan(rel["alpha"]) and np.isnan(rel["omega_total"])


def test_mpq_t_scores_from_the_shipped_table():
    result = score_checked(frame("mpq_bf_absorption", MPQ_ROWS), "mpq_bf_absorption")
    table = load_instrument("mpq_bf_absorption").norms["t_score"]
    raw = result.scores["score"].astype(int).tolist()
    assert [table[r] for r in raw] == [49.0, 29.0]  # raw 5 -> T 49, raw 0 -> T 29


# ---------------------------------------------------------------------------------------------
# Short forms derived from long forms


def random_items(instrument, n, *, rng, missing=0.0):
    ins = load_instrument(instrument)
    lo, hi = int(ins.response_min), int(ins.response_max)
    values = rng.integers(lo, hi + 1, size=(n, len(ins.items))).astype(float)
    values[rng.random(values.shape) < missing] = np.nan
    data = pd.DataFrame(values, columns=list(ins.items))
    data.insert(0, "id", np.arange(n))
    return data


@pytest.mark.parametrize(
    ("short", "long_form"),
    [("bfi10", "bfi44"), ("mini_ipip", "ipip50"), ("cls9_humanity", "cls21_humanity")],
)
def test_short_form_from_long_form_equals_direct_scoring(short, long_form):
    rng = np.random.default_rng(7)
    long_data = random_items(long_form, 300, rng=rng, missing=0.05)
    derived = derive_items(long_data, short, source=long_form)
    mapping = load_instrument(short).derive[long_form]
    direct = pd.DataFrame({own: long_data[src] for own, src in mapping.items()})
    direct.insert(0, "id", long_data["id"])
    a = score_checked(derived, short, min_valid=1)
    b = score_checked(direct, short, min_valid=1)
    pd.testing.assert_frame_equal(a.scores, b.scores, rtol=1e-12)
    pd.testing.assert_frame_equal(a.reliability, b.reliability, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# Missing answers: min_valid, prorate, impute


def extraversion_rows(n_answered_list):
    """BFI-44 rows answering 2 to the first n extraversion items (others missing)."""
    ins = load_instrument("bfi44")
    e_items = ins.scale("extraversion").items
    rows = []
    for n_ans in n_answered_list:
        row = dict.fromkeys(ins.items, 3.0)
        for i, item in enumerate(e_items):
            row[item] = 2.0 if i < n_ans else np.nan
        rows.append(row)
    data = pd.DataFrame(rows, columns=list(ins.items))
    data.insert(0, "id", [f"n{k}" for k in n_answered_list])
    return data


def test_min_valid_fraction_rounds_up():
    # 0.8 x 8 extraversion items = 6.4 -> 7 items required. Answers of 2 on items 1, 6, 11, ...:
    # item 6 (2nd) and 21 (5th) are reversed to 6 - 2 = 4 (item 31, the 7th, is reversed too).
    data = extraversion_rows([8, 7, 6])
    result = score_checked(data, "bfi44")
    e = result.scores[result.scores["scale"] == "extraversion"].set_index("id")
    # 8 answered: 2, 4, 2, 2, 4, 2, 4, 2 -> 22/8; 7 answered (no item 36): 2,4,2,2,4,2,4 -> 20/7
    assert_allclose(e.loc["n8", "score"], 22 / 8, rtol=1e-12)
    assert_allclose(e.loc["n7", "score"], 20 / 7, rtol=1e-12)
    assert np.isnan(e.loc["n6", "score"])
    assert e["n_answered"].tolist() == [8, 7, 6]
    miss = result.missing.set_index("scale")
    assert miss.loc["extraversion", ["n", "n_scored", "n_unscored"]].tolist() == [3, 2, 1]
    assert miss.loc["extraversion", "min_answered"] == 7
    assert miss.loc["extraversion", "n_items_missing"] == 0 + 1 + 2
    assert miss.loc["agreeableness", "n_unscored"] == 0
    assert result.meta["min_answered"]["extraversion"] == 7
    assert result.meta["min_answered"]["openness"] == 8  # 0.8 x 10


def test_min_valid_count_and_the_int_float_difference():
    data = extraversion_rows([8, 2, 1])
    e = lambda r: r.scores[r.scores["scale"] == "extraversion"]["score"].to_numpy()  # noqa: E731
    # int 2: at least two items; 1 answered -> NaN; 2 answered: (2 + 4) / 2 = 3
    assert_allclose(e(score_checked(data, "bfi44", min_valid=2)), [22 / 8, 3.0, np.nan])
    # int 1: any item (psych's impute = "none"); one answer of 2 -> 2
    assert_allclose(e(score_checked(data, "bfi44", min_valid=1)), [22 / 8, 3.0, 2.0])
    # float 1.0: every item
    assert_allclose(e(score_checked(data, "bfi44", min_valid=1.0)), [22 / 8, np.nan, np.nan])
    # a count larger than a scale is capped at the scale's length
    assert_allclose(e(score_checked(data, "bfi44", min_valid=50)), [22 / 8, np.nan, np.nan])


def who5_with_gap():
    # r1 answers 4, 3, missing, 5, 2; r2 answers everything: 1, 2, 3, 4, 5 (sum 15)
    return frame("who5", [[4, 3, np.nan, 5, 2], [1, 2, 3, 4, 5]])


def test_sum_scales_need_every_item_unless_prorated():
    result = score_checked(who5_with_gap(), "who5")
    got = scores_of(result)
    assert np.isnan(got[("r1", "raw")]) and np.isnan(got[("r1", "percentage")])
    assert (got[("r2", "raw")], got[("r2", "percentage")]) == (15, 60)
    # prorated: mean of the 4 answers (4 + 3 + 5 + 2) / 4 = 3.5, x 5 items = 17.5; x 4 = 70
    pro = scores_of(score_checked(who5_with_gap(), "who5", prorate=True))
    assert_allclose([pro[("r1", "raw")], pro[("r1", "percentage")]], [17.5, 70.0], rtol=1e-12)
    assert (pro[("r2", "raw")], pro[("r2", "percentage")]) == (15, 60)
    # prorating still obeys min_valid: 4 of 5 answered fails min_valid = 1.0
    strict = scores_of(score_checked(who5_with_gap(), "who5", prorate=True, min_valid=1.0))
    assert np.isnan(strict[("r1", "raw")])


def test_prorate_count_scale():
    # TAS-34 with 30 answered items, 15 true: 15 / 30 x 34 = 17; without prorating: NaN
    row = [1.0, 0.0] * 15 + [np.nan] * 4
    data = frame("tas34", [row, [1.0] * 34])
    plain = scores_of(score_checked(data, "tas34"))
    assert np.isnan(plain[("r1", "absorption")]) and plain[("r2", "absorption")] == 34
    pro = scores_of(score_checked(data, "tas34", prorate=True))
    assert_allclose(pro[("r1", "absorption")], 17.0, rtol=1e-12)


def test_mean_scales_ignore_prorate():
    data = extraversion_rows([7])
    a = score_checked(data, "bfi44")
    b = score_checked(data, "bfi44", prorate=True)
    pd.testing.assert_frame_equal(a.scores, b.scores)


def test_impute_item_mean_and_median_within_wave():
    # SCBCS (sum of 5 items, 1-7), two waves. Item scbcs5_3 is missing for p1 at "pre".
    # pre answers to item 3 by the others: 2, 3, 7 -> mean 4, median 3.
    # post answers to item 3: 6, 6, 6, 6 -> would give 6 if waves were mixed up.
    pre = [[5, 5, np.nan, 5, 5], [1, 1, 2, 1, 1], [2, 2, 3, 2, 2], [7, 7, 7, 7, 7]]
    post = [[6, 6, 6, 6, 6]] * 4
    data = frame("scbcs5", pre + post, ids=["p1", "p2", "p3", "p4"] * 2)
    data.insert(1, "wave", ["pre"] * 4 + ["post"] * 4)
    none = score_checked(data, "scbcs5", wave_col="wave")
    assert np.isnan(none.scores["score"].iloc[0])
    mean = score_checked(data, "scbcs5", wave_col="wave", impute="item_mean")
    median = score_checked(data, "scbcs5", wave_col="wave", impute="item_median")
    assert mean.scores["score"].iloc[0] == 4 * 5 + 4  # 5 + 5 + 4 + 5 + 5
    assert median.scores["score"].iloc[0] == 4 * 5 + 3  # 5 + 5 + 3 + 5 + 5
    assert mean.scores["n_answered"].iloc[0] == 4  # imputed answers are not counted as answered
    pre_missing = mean.missing.set_index("wave").loc["pre"]
    assert (pre_missing["n_imputed"], pre_missing["n_items_missing"]) == (1, 1)
    assert mean.meta["parameters"]["impute"] == "item_mean"
    assert "item_mean" in mean.meta["imputation"]
    # imputed values never enter the reliability estimates
    pd.testing.assert_frame_equal(mean.reliability, none.reliability)


def test_impute_respects_min_valid():
    # r1 answered 1 of 4 TAS-4 items: below min_valid, so it is not imputed and stays unscored
    data = frame("tas4", [[5, np.nan, np.nan, np.nan], [1, 2, 3, 4], [3, 3, 3, 3]])
    result = score_checked(data, "tas4", impute="item_mean")
    assert np.isnan(result.scores["score"].iloc[0])
    assert result.missing["n_imputed"].iloc[0] == 0


# ---------------------------------------------------------------------------------------------
# Waves and the wide table


def long_panel():
    rng = np.random.default_rng(11)
    pre = random_items("ubc_sscs10", 40, rng=rng)
    post = random_items("ubc_sscs10", 40, rng=rng)
    pre.insert(1, "session", "pre")
    post.insert(1, "session", "post")
    data = pd.concat([pre, post], ignore_index=True)
    return data.rename(columns={"id": "participant"})


def test_waves_keep_labels_and_get_their_own_reliability():
    data = long_panel()
    result = score_checked(data, "ubc_sscs10", id_col="participant", wave_col="session")
    assert result.scores.columns.tolist() == [
        "id",
        "wave",
        "instrument",
        "scale",
        "score",
        "n_items",
        "n_answered",
    ]
    assert result.scores["wave"].tolist() == ["pre"] * 40 + ["post"] * 40
    assert result.scores["id"].tolist() == data["participant"].tolist()
    assert result.reliability["wave"].tolist() == ["pre", "post"]
    assert result.missing["wave"].tolist() == ["pre", "post"]
    # the per-wave reliability is scale_reliability on that wave's reverse-keyed answers
    ins = load_instrument("ubc_sscs10")
    key = ins.scales[0]
    for wave in ("pre", "post"):
        x = data.loc[data["session"] == wave, list(key.items)].to_numpy(dtype=float)
        rev = [item in key.reverse for item in key.items]
        x[:, rev] = 8 - x[:, rev]
        summary, items = scale_reliability(x, item_names=list(key.items))
        row = result.reliability.set_index("wave").loc[wave]
        for name in ("n", "alpha", "alpha_ci_low", "alpha_ci_high", "omega_total"):
            assert_allclose(row[name], summary[name], rtol=1e-12)
        stats = result.item_stats[result.item_stats["wave"] == wave]
        assert_allclose(stats["r_item_rest"], items["r_item_rest"], rtol=1e-12)
        assert stats["reversed"].tolist() == rev


def test_categorical_wave_order_is_kept():
    data = long_panel()
    data["session"] = pd.Categorical(data["session"], categories=["pre", "post"], ordered=True)
    data = data.iloc[::-1].reset_index(drop=True)  # post rows first
    result = score_checked(data, "ubc_sscs10", id_col="participant", wave_col="session")
    assert result.reliability["wave"].tolist() == ["pre", "post"]


def test_wide_has_one_row_per_id_and_wave():
    data = frame("who5", WHO5_ROWS * 2, ids=["a", "b", "a", "b"])
    data.insert(1, "t", ["pre", "pre", "post", "post"])
    result = score_checked(data, "who5", wave_col="t")
    wide = result.wide()
    assert wide.columns.tolist() == ["id", "wave", "who5.raw", "who5.percentage"]
    assert wide[["id", "wave"]].to_numpy().tolist() == [
        ["a", "pre"],
        ["b", "pre"],
        ["a", "post"],
        ["b", "post"],
    ]
    assert wide["who5.raw"].tolist() == [15, 0, 15, 0]
    assert wide["who5.percentage"].tolist() == [60, 0, 60, 0]
    no_wave = score_checked(frame("tipi", TIPI_ROWS), "tipi").wide()
    assert no_wave.columns.tolist() == ["id"] + [
        f"tipi.{s}"
        for s in ("extraversion", "agreeableness", "conscientiousness", "emotional_stability")
    ] + ["tipi.openness"]
    assert no_wave.iloc[1, 1:].tolist() == [1.5, 3, 5, 3, 5]


# ---------------------------------------------------------------------------------------------
# Agreement with psych::scoreItems on psych's bfi data


def test_scores_equal_psych_score_items():
    items = pd.read_csv(TESTS / "data" / "psych_bfi.csv")
    reference = pd.read_csv(TESTS / "surveys" / "reference" / "psych_bfi_scores.csv", comment="#")
    data = items.rename(columns={"rownames": "id"})
    # scoreItems(impute = "none") averages whatever items were answered: min_valid = 1 item
    result = score_checked(data, KEYS / "bfi25.toml", min_valid=1)
    wide = result.wide()
    assert wide["id"].astype(str).tolist() == reference["id"].astype(str).tolist()
    for scale in ("agree", "conscientious", "extraversion", "neuroticism", "openness"):
        # R wrote 15 significant digits
        assert_allclose(wide[f"bfi25.{scale}"], reference[scale], rtol=1e-13)


# ---------------------------------------------------------------------------------------------
# Data problems are reported together, with file lines


def test_out_of_range_and_non_numeric_values_are_all_listed():
    data = frame("tas4", [[1, 2, 3, 4], [5, 5, 5, 5], [1, 1, 1, 1]])
    data["tas4_2"] = data["tas4_2"].astype(object)
    data.loc[1, "tas4_2"] = "five"
    data.loc[0, "tas4_4"] = 6.0  # above the declared maximum of 5
    data.loc[2, "tas4_1"] = 0.0  # below the minimum of 1
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4", source_file="pre.csv")
    cases = info.value.failure_cases
    assert cases["file"].eq("pre.csv").all()
    # rows are file lines: header = line 1, so data row i is line i + 2
    got = list(zip(cases["row"], cases["column"], cases["value"], strict=True))
    assert got == [(2, "tas4_4", 6.0), (3, "tas4_2", "five"), (4, "tas4_1", 0.0)]
    assert "non-numeric" in cases["reason"].iloc[1]
    assert "[1, 5]" in cases["reason"].iloc[0]


def test_row_numbers_come_from_the_reader():
    data = frame("tas4", [[1, 2, 3, 4], [5, 9, 5, 5]])
    data.index = [10, 20]
    lines = pd.Series([4, 5], index=[10, 20])  # e.g. a Qualtrics export: data start at line 4
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4", row_numbers=lines)
    assert info.value.failure_cases["row"].tolist() == [5]


def test_missing_item_columns_one_line_each():
    data = frame("tipi", TIPI_ROWS).drop(columns=["tipi_3", "tipi_8"])
    with pytest.raises(InputValidationError) as info:
        score(data, "tipi")
    cases = info.value.failure_cases
    assert cases["column"].tolist() == ["tipi_3", "tipi_8"]
    assert cases["row"].isna().all()


def test_duplicate_ids_and_missing_id_column():
    data = frame("tas4", [[1, 2, 3, 4], [2, 2, 2, 2], [3, 3, 3, 3]], ids=["a", "b", "a"])
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4")
    cases = info.value.failure_cases
    assert cases[["row", "column", "value"]].to_numpy().tolist() == [[2, "id", "a"], [4, "id", "a"]]
    with pytest.raises(InputValidationError, match="missing id column"):
        score(data, "tas4", id_col="participant")


def test_duplicates_are_per_wave():
    data = frame("tas4", [[1, 2, 3, 4], [2, 2, 2, 2], [3, 3, 3, 3]], ids=["a", "a", "a"])
    data["wave"] = ["pre", "post", "post"]
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4", wave_col="wave")
    cases = info.value.failure_cases
    assert cases["row"].tolist() == [3, 4]
    assert "wave 'post'" in cases["reason"].iloc[0]
    data.loc[2, "wave"] = "mid"
    assert len(score_checked(data, "tas4", wave_col="wave").scores) == 3


def test_missing_ids_and_waves_are_listed():
    data = frame("tas4", [[1, 2, 3, 4], [2, 2, 2, 2], [3, 3, 3, 3]], ids=["a", None, "c"])
    data["wave"] = [1, 1, np.nan]
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4", wave_col="wave")
    cases = info.value.failure_cases
    assert cases[["row", "column", "reason"]].to_numpy().tolist() == [
        [3, "id", "missing id"],
        [4, "wave", "missing wave"],
    ]


def test_wave_labels_keep_their_type():
    data = frame("tas4", [[1, 2, 3, 4], [2, 2, 2, 3], [3, 3, 4, 3], [1, 2, 3, 4]], ids=list("abab"))
    data["month"] = [0, 0, 1, 1]
    result = score_checked(data, "tas4", wave_col="month")
    assert result.scores["wave"].tolist() == [0, 0, 1, 1]
    assert result.reliability["wave"].tolist() == [0, 1]
    assert result.meta["waves"] == [0, 1]


def test_accepted_numeric_dtypes():
    data = frame("tas34", TAS34_ROWS)
    as_bool = data.copy()
    for item in load_instrument("tas34").items:
        as_bool[item] = as_bool[item].astype(bool)
    nullable = data.copy()
    nullable["tas34_1"] = pd.array([1, None], dtype="Int64")
    as_object = data.copy()
    as_object["tas34_2"] = pd.Series([0, None], dtype=object)
    expected = score_checked(data, "tas34").scores["score"].tolist()
    assert score_checked(as_bool, "tas34").scores["score"].tolist() == expected
    got = score_checked(nullable, "tas34", prorate=True).scores
    assert got["n_answered"].tolist() == [34, 33]
    assert score_checked(as_object, "tas34").scores["n_answered"].tolist() == [34, 33]


def test_category_codes_are_not_converted():
    data = frame("tas4", [[1, 2, 3, 4], [2, 2, 2, 2]])
    data["tas4_3"] = data["tas4_3"].astype("category")
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4")
    assert info.value.failure_cases["column"].tolist() == ["tas4_3", "tas4_3"]


# ---------------------------------------------------------------------------------------------
# Parameters


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"min_valid": 0}, "min_valid"),
        ({"min_valid": 0.0}, "min_valid"),
        ({"min_valid": 1.5}, "min_valid"),
        ({"min_valid": True}, "min_valid"),
        ({"min_valid": "all"}, "min_valid"),
        ({"impute": "mean"}, "impute"),
        ({"prorate": 1}, "prorate"),
        ({"ci_level": 95}, "ci_level"),
        ({"ci_level": 1.0}, "ci_level"),
        ({"id_col": 3}, "id_col"),
        ({"wave_col": "id"}, "wave_col"),
        ({"row_numbers": [2, 3]}, "row_numbers"),
        ({"row_numbers": pd.Series([2], index=[0])}, "row_numbers"),
    ],
)
def test_invalid_parameters(kwargs, match):
    data = frame("tas4", TAS4_ROWS)
    with pytest.raises(InvalidParameterError, match=match):
        score(data, "tas4", **kwargs)


def test_data_must_be_a_dataframe():
    with pytest.raises(InvalidParameterError, match="DataFrame"):
        score(np.ones((2, 4)), "tas4")


def test_ci_level_changes_the_interval():
    data = random_items("tipi", 200, rng=np.random.default_rng(3))
    r95 = score_checked(data, "tipi").reliability
    r80 = score_checked(data, "tipi", ci_level=0.8).reliability
    assert_allclose(r95["alpha"], r80["alpha"], rtol=1e-14)
    assert (r80["alpha_ci_low"] > r95["alpha_ci_low"]).all()
    assert (r80["alpha_ci_high"] < r95["alpha_ci_high"]).all()


# ---------------------------------------------------------------------------------------------
# Result structure


def test_result_tables_and_meta():
    data = frame("bfi44", BFI44_ROWS)
    before = data.copy()
    result = score_checked(data, "bfi44")
    pd.testing.assert_frame_equal(data, before)
    assert isinstance(result, ScaleScores)
    assert result.reliability.columns.tolist() == [
        "instrument",
        "scale",
        "n",
        "n_items",
        "alpha",
        "alpha_ci_low",
        "alpha_ci_high",
        "alpha_standardized",
        "omega_total",
    ]
    assert result.item_stats.columns.tolist() == [
        "instrument",
        "scale",
        "item",
        "reversed",
        "n",
        "mean",
        "sd",
        "r_item_rest",
        "alpha_if_deleted",
    ]
    assert result.missing.columns.tolist() == [
        "instrument",
        "scale",
        "n",
        "n_scored",
        "n_unscored",
        "min_answered",
        "n_items_missing",
        "n_imputed",
    ]
    assert len(result.item_stats) == 44
    flagged = set(result.item_stats.loc[result.item_stats["reversed"], "item"])
    assert flagged == {item for key in load_instrument("bfi44").scales for item in key.reverse}
    # item means are of the reverse-keyed answers: item 6 answered 1, 5, 1 -> 5, 1, 5
    mean6 = result.item_stats.set_index("item").loc["bfi44_6", "mean"]
    assert_allclose(mean6, 11 / 3, rtol=1e-12)
    meta = result.meta
    assert meta["instrument"] == "bfi44" and meta["instrument_grade"] == "V2"
    assert meta["parameters"] == {
        "id_col": "id",
        "wave_col": None,
        "min_valid": 0.8,
        "prorate": False,
        "impute": None,
        "ci_level": 0.95,
    }
    assert (meta["n_rows"], meta["n_scored"], meta["n_excluded"]) == (3, 3, 0)
    assert meta["version"]


def test_respondent_with_no_answers_is_excluded_and_counted():
    data = frame("tas4", [[1, 2, 3, 4], [np.nan] * 4, [2, 2, 3, 3], [4, 5, 4, 5]])
    result = score_checked(data, "tas4")
    assert (result.meta["n_scored"], result.meta["n_excluded"]) == (3, 1)
    assert result.reliability["n"].iloc[0] == 3


def test_reverse_score():
    assert reverse_score(1, response_min=1, response_max=5) == 5
    assert reverse_score(0, response_min=0, response_max=5) == 5
    assert_allclose(
        reverse_score(np.array([1.0, np.nan, 7.0]), response_min=1, response_max=7),
        [7.0, np.nan, 1.0],
    )
    with pytest.raises(InvalidParameterError, match="response_min"):
        reverse_score(1, response_min=5, response_max=1)
    with pytest.raises(InvalidParameterError, match="response_max"):
        reverse_score(1, response_min=1, response_max=None)


def test_half_point_answers_are_refused_as_validation_refuses_them():
    data = pd.DataFrame(
        {
            "id": ["a", "b"],
            "tas4_1": [4.0, 2.5],
            "tas4_2": [5.0, 1.0],
            "tas4_3": [3.0, 2.0],
            "tas4_4": [4.0, 3.0],
        }
    )
    with pytest.raises(InputValidationError) as info:
        score(data, "tas4", row_numbers=pd.Series([2, 3]), source_file="pre.csv")
    case = info.value.failure_cases.iloc[0]
    assert (case["row"], case["column"], case["value"]) == (3, "tas4_1", 2.5)
    assert "not a whole number" in case["reason"]
    with package_warnings():
        result = score(data, "tas4", whole_numbers=False)
    assert result.scores["score"].notna().all()


def test_result_prints_one_line_and_a_reliability_table():
    rows, _ = HAND_SCORED["who5"]
    data = frame("who5", rows)
    result = score_checked(data, "who5")
    text = repr(result)
    n_scales = len(load_instrument("who5").scales)
    assert text.startswith(f"ScaleScores(who5: {n_scales} scale(s), ")
    assert f"{len(rows)} row(s)" in text and "\n" not in text
    html = result._repr_html_()
    assert html.startswith("<p><strong>ScaleScores(who5") and "<table" in html
    assert "<caption>Reliability</caption>" in html and "alpha" in html
    # the result protocol: summary() prints as text, to_frame() is the scores, to_dict() JSON
    assert result.summary().startswith(text) and "Reliability" in result.summary()
    assert result.to_frame().equals(result.scores)
    assert result.to_dict()["title"] == text
