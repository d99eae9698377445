"""Tests of models/evaluation.py: participant-grouped splits and the benchmark metrics.

Reference values: Pearson and Spearman correlations come from scipy.stats (an independent
implementation: ``pearsonr`` normalises the vectors before the dot product, ``spearmanr``
ranks internally); accuracy, F1 and MSE are counted by hand in the comments. The bootstrap's
weighted metrics are checked against prediction_metrics of the sample with every pair
repeated as often as it is drawn.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats

from models._errors import DataQualityWarning, InvalidParameterError
from models.evaluation import (
    METRIC_NAMES,
    binarize,
    binary_accuracy,
    binary_f1,
    grouped_kfold,
    grouped_split,
    kfold_bootstrap,
    mean_squared_error,
    overlapping_groups,
    pearson_r,
    prediction_metrics,
    spearman_rho,
    summarize_metrics,
    weighted_metrics,
)

# Fixed vectors: ratings on 1-5 with ties, and continuous predictions.
Y_TRUE = np.array([1, 2, 3, 4, 5, 4, 2, 5, 3, 1], dtype=float)
Y_PRED = np.array([1.8, 2.4, 3.4, 3.9, 4.6, 2.9, 3.1, 4.2, 2.2, 1.2])


def _fixed_pairs():
    rng = np.random.default_rng(20240611)
    y = rng.integers(1, 6, size=200).astype(float)
    yhat = 0.4 * y + rng.normal(3.0, 0.8, size=200)
    return [
        (Y_TRUE, Y_PRED),
        (y, yhat),
        (y, -yhat),  # negative correlation
        (y + 1e6, yhat * 1e-3),  # large offset, tiny scale
        (np.array([1.0, 1, 1, 2, 2, 3, 5, 5]), np.array([3.0, 3, 2, 2, 4, 4, 4, 1])),  # ties
    ]


# ---------------------------------------------------------------------------------------------
# metrics against references


@pytest.mark.parametrize("pair", range(5))
def test_pearson_matches_scipy(pair):
    a, b = _fixed_pairs()[pair]
    assert_allclose(pearson_r(a, b), stats.pearsonr(a, b).statistic, rtol=0, atol=1e-12)


@pytest.mark.parametrize("pair", range(5))
def test_spearman_matches_scipy(pair):
    a, b = _fixed_pairs()[pair]
    assert_allclose(spearman_rho(a, b), stats.spearmanr(a, b).statistic, rtol=0, atol=1e-12)


def test_binary_metrics_hand_counts():
    # threshold 3 (positive: > 3):
    # y_true > 3: F F F T T T F T F F
    # y_pred > 3: F F T T T F T T F F
    # TP = 3 (rows 3, 4, 7), FP = 2 (rows 2, 6), FN = 1 (row 5), TN = 4 (rows 0, 1, 8, 9)
    assert binary_accuracy(Y_TRUE, Y_PRED, threshold=3.0) == pytest.approx(7 / 10, abs=1e-12)
    assert binary_f1(Y_TRUE, Y_PRED, threshold=3.0) == pytest.approx(
        2 * 3 / (2 * 3 + 2 + 1), abs=1e-12
    )
    # threshold 4: y_true > 4: rows 4, 7; y_pred > 4: rows 4, 7 -> TP 2, FP 0, FN 0, acc 1
    assert binary_accuracy(Y_TRUE, Y_PRED, threshold=4) == 1.0
    assert binary_f1(Y_TRUE, Y_PRED, threshold=4) == 1.0
    # threshold 2: y_true > 2: rows 2,3,4,5,7,8 ; y_pred > 2: rows 1,2,3,4,5,6,7,8
    # TP 6, FP 2 (rows 1, 6), FN 0, TN 2 -> acc 8/10, F1 12/14
    assert binary_accuracy(Y_TRUE, Y_PRED, threshold=2) == pytest.approx(0.8, abs=1e-12)
    assert binary_f1(Y_TRUE, Y_PRED, threshold=2) == pytest.approx(12 / 14, abs=1e-12)


def test_f1_equals_harmonic_mean_of_precision_and_recall():
    a, b = _fixed_pairs()[1]
    t, p = a > 3, b > 3
    precision = np.sum(t & p) / np.sum(p)
    recall = np.sum(t & p) / np.sum(t)
    assert_allclose(
        binary_f1(a, b, threshold=3.0), 2 * precision * recall / (precision + recall), atol=1e-12
    )


def test_mse_hand_computed():
    # squared errors: .64 .16 .16 .01 .16 1.21 1.21 .64 .64 .04 -> sum 4.87
    assert_allclose(mean_squared_error(Y_TRUE, Y_PRED), 4.87 / 10, rtol=0, atol=1e-12)
    a, b = _fixed_pairs()[1]
    assert_allclose(mean_squared_error(a, b), np.mean((a - b) ** 2), rtol=0, atol=1e-12)


def test_binarize_rule_is_strictly_greater():
    assert binarize([2.99, 3.0, 3.0001, 4], threshold=3).tolist() == [False, False, True, True]
    assert binarize([3.5, 4.0], threshold=3.5).tolist() == [False, True]


def test_prediction_metrics_scaled_by_100():
    m = prediction_metrics(Y_TRUE, Y_PRED, threshold=3.0)
    assert m.scale == 100.0 and m.threshold == 3.0 and m.n == 10
    assert_allclose(m.r, 100 * stats.pearsonr(Y_TRUE, Y_PRED).statistic, atol=1e-10)
    assert_allclose(m.rho, 100 * stats.spearmanr(Y_TRUE, Y_PRED).statistic, atol=1e-10)
    assert_allclose(m.acc, 70.0, atol=1e-10)
    assert_allclose(m.f1, 100 * 6 / 9, atol=1e-10)
    assert_allclose(m.mse, 48.7, atol=1e-10)
    raw = prediction_metrics(Y_TRUE, Y_PRED, scale=1, threshold=4)
    assert (raw.acc, raw.f1) == (1.0, 1.0)
    assert_allclose(raw.mse, 0.487, atol=1e-12)
    assert set(m.to_dict()) == {"r", "rho", "acc", "f1", "mse", "n", "threshold", "scale"}


# ---------------------------------------------------------------------------------------------
# undefined metrics and bad input


def test_constant_prediction_gives_nan_correlations_with_warning():
    with pytest.warns(DataQualityWarning, match="constant"):
        assert np.isnan(pearson_r(Y_TRUE, np.full(10, 3.3)))
    with pytest.warns(DataQualityWarning, match="constant"):
        assert np.isnan(spearman_rho(np.full(10, 2.0), Y_PRED))
    with pytest.warns(DataQualityWarning, match="at least 2"):
        assert np.isnan(pearson_r([1.0], [2.0]))


def test_f1_without_positives_is_nan_with_warning():
    with pytest.warns(DataQualityWarning, match="F1 is undefined"):
        assert np.isnan(binary_f1([1, 2, 3], [1.5, 2.5, 2.9], threshold=3.0))
    # positives only in the truth: defined and 0
    assert binary_f1([1, 4, 3], [1.5, 2.5, 2.9], threshold=3.0) == 0.0


def test_nan_policy():
    a = np.array([1.0, 2.0, np.nan, 4.0, 5.0])
    b = np.array([1.1, 2.2, 3.0, np.nan, 4.7])
    with pytest.raises(InvalidParameterError, match="nan_policy"):
        mean_squared_error(a, b)
    assert_allclose(
        mean_squared_error(a, b, nan_policy="omit"),
        (0.1**2 + 0.2**2 + 0.3**2) / 3,
        atol=1e-12,
    )
    assert_allclose(
        pearson_r(a, b, nan_policy="omit"),
        stats.pearsonr([1, 2, 5], [1.1, 2.2, 4.7]).statistic,
        atol=1e-12,
    )
    with pytest.raises(InvalidParameterError, match="nan_policy"):
        pearson_r(a, b, nan_policy="drop")


@pytest.mark.parametrize(
    ("y_true", "y_pred", "match"),
    [
        ([1, 2, 3], [1, 2], "same length"),
        ([[1, 2], [3, 4]], [[1, 2], [3, 4]], "1-d"),
        ([1, 2, np.inf], [1, 2, 3], "finite"),
        (["a", "b"], [1, 2], "numeric"),
        ([], [], "no complete"),
    ],
)
def test_bad_vectors_raise(y_true, y_pred, match):
    binary = [functools.partial(f, threshold=3.0) for f in (binary_accuracy, binary_f1)]
    for func in (pearson_r, spearman_rho, *binary, mean_squared_error):
        with pytest.raises(InvalidParameterError, match=match):
            func(y_true, y_pred)


@pytest.mark.parametrize("threshold", [True, "3", np.nan, None])
def test_bad_threshold_raises(threshold):
    with pytest.raises(InvalidParameterError, match="threshold"):
        binary_f1(Y_TRUE, Y_PRED, threshold=threshold)


@pytest.mark.parametrize("scale", [0, -100, np.inf, True, "100"])
def test_bad_scale_raises(scale):
    with pytest.raises(InvalidParameterError, match="scale"):
        prediction_metrics(Y_TRUE, Y_PRED, scale=scale, threshold=3.0)


# ---------------------------------------------------------------------------------------------
# summary over seeds


def test_summarize_metrics_mean_and_sample_sd():
    m = pd.DataFrame(
        {
            "model": ["lmm"] * 3 + ["mean"] * 3,
            "split": ["test"] * 6,
            "seed": [0, 1, 2] * 2,
            "r": [20.0, 25.0, 33.0, np.nan, np.nan, np.nan],
            "rho": [10.0, 20.0, 30.0, np.nan, np.nan, np.nan],
            "acc": [60.0, 61.0, 65.0, 55.0, 57.0, 59.0],
            "f1": [70.0, 71.0, 72.0, 70.0, np.nan, 72.0],
            "mse": [120.0, 118.0, 125.0, 140.0, 139.0, 141.0],
        }
    )
    out = summarize_metrics(m)
    assert out["model"].tolist() == ["lmm", "mean"]
    lmm = out.iloc[0]
    assert_allclose(lmm["r_mean"], 26.0, atol=1e-12)
    # sample SD of 20, 25, 33: deviations -6, -1, 7 -> sqrt(86 / 2)
    assert_allclose(lmm["r_sd"], np.sqrt(43.0), atol=1e-12)
    mean = out.iloc[1]
    assert np.isnan(mean["r_mean"]) and mean["r_n"] == 0
    assert_allclose(mean["f1_mean"], 71.0, atol=1e-12)
    assert mean["f1_n"] == 2 and mean["n"] == 3
    with pytest.raises(InvalidParameterError, match="lacks"):
        summarize_metrics(m.drop(columns="rho"))


# ---------------------------------------------------------------------------------------------
# splits: no participant in two parts


def _study_groups(n_people=41, seed=7):
    """Participant ids of a story-level frame: 6-12 sessions x 3 ratings per person."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(6, 13, size=n_people) * 3
    ids = np.array([f"P{i + 1:02d}" for i in range(n_people)], dtype=object)
    groups = np.repeat(ids, counts)
    return groups[rng.permutation(groups.size)]  # rows in no particular order


def assert_grouped_partition(groups, parts):
    """The leakage check every split must pass: parts are disjoint in groups and cover rows."""
    groups = np.asarray(groups, dtype=object)
    sets = [set(groups[p].tolist()) for p in parts]
    for i in range(len(sets)):
        for j in range(i + 1, len(sets)):
            assert not (sets[i] & sets[j]), f"groups in parts {i} and {j}: {sets[i] & sets[j]}"
    assert overlapping_groups(groups, parts) == []
    rows = np.concatenate([np.asarray(p) for p in parts])
    assert np.array_equal(np.sort(rows), np.arange(groups.size)), "rows lost or duplicated"


def _row_level_split(groups, *, sizes=(0.7, 0.2, 0.1), seed):
    """What a leaky splitter does: permute rows, not participants."""
    n = len(groups)
    perm = np.random.default_rng(seed).permutation(n)
    a, b = round(sizes[0] * n), round((sizes[0] + sizes[1]) * n)
    return [np.sort(perm[:a]), np.sort(perm[a:b]), np.sort(perm[b:])]


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_grouped_split_has_no_leakage(seed):
    groups = _study_groups()
    split = grouped_split(groups, seed=seed, sizes=(0.7, 0.2, 0.1))
    parts = [split.train, split.val, split.test]
    assert_grouped_partition(groups, parts)
    # the participant counts of a 70/20/10 split of 41 people (largest remainder)
    assert (len(split.train_groups), len(split.val_groups), len(split.test_groups)) == (29, 8, 4)
    for part, names in zip(
        parts, [split.train_groups, split.val_groups, split.test_groups], strict=True
    ):
        assert set(groups[part].tolist()) == set(names)
        # every row of each of these participants is in this part
        assert np.array_equal(part, np.flatnonzero(np.isin(groups, list(names))))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_leakage_check_detects_row_level_split(seed):
    groups = _study_groups()
    parts = _row_level_split(groups, seed=seed)
    assert len(overlapping_groups(groups, parts)) > 30
    with pytest.raises(AssertionError):
        assert_grouped_partition(groups, parts)


def test_grouped_split_is_reproducible_and_order_invariant():
    groups = _study_groups()
    a = grouped_split(groups, seed=11, sizes=(0.7, 0.2, 0.1))
    b = grouped_split(groups, seed=11, sizes=(0.7, 0.2, 0.1))
    assert np.array_equal(a.test, b.test) and a.train_groups == b.train_groups
    assert grouped_split(groups, seed=12, sizes=(0.7, 0.2, 0.1)).test_groups != a.test_groups
    shuffled = groups[np.random.default_rng(3).permutation(groups.size)]
    c = grouped_split(shuffled, seed=11, sizes=(0.7, 0.2, 0.1))
    assert (c.train_groups, c.val_groups, c.test_groups) == (
        a.train_groups,
        a.val_groups,
        a.test_groups,
    )


def test_grouped_split_without_validation_part():
    groups = _study_groups(n_people=10)
    split = grouped_split(groups, sizes=(0.8, 0.0, 0.2), seed=0)
    assert split.val.size == 0 and len(split.test_groups) == 2
    assert_grouped_partition(groups, [split.train, split.test])


@pytest.mark.parametrize("seed", [0, 5])
@pytest.mark.parametrize("k", [2, 5, 41])
def test_grouped_kfold_tests_every_participant_once(seed, k):
    groups = _study_groups()
    folds = grouped_kfold(groups, k=k, seed=seed)
    assert len(folds) == k
    tested = [g for f in folds for g in f.test_groups]
    assert sorted(tested) == sorted(set(groups.tolist()))
    sizes = [len(f.test_groups) for f in folds]
    assert max(sizes) - min(sizes) <= 1
    for f in folds:
        assert_grouped_partition(groups, [f.train, f.test])
    assert_grouped_partition(groups, [f.test for f in folds])


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(st.integers(0, 30), min_size=10, max_size=200),
    seed=st.integers(0, 2**31),
)
def test_splits_never_leak_property(labels, seed):
    groups = np.array([f"id{v}" for v in labels], dtype=object)
    n_groups = len(set(labels))
    if n_groups >= 3:
        split = grouped_split(groups, sizes=(0.5, 0.2, 0.3), seed=seed)
        assert_grouped_partition(groups, [split.train, split.val, split.test])
    if n_groups >= 2:
        folds = grouped_kfold(groups, k=2, seed=seed)
        assert_grouped_partition(groups, [f.test for f in folds])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": (0.7, 0.2, 0.2)}, "summing to 1"),
        ({"sizes": (0.7, 0.3)}, "sizes"),
        ({"sizes": (1.1, -0.2, 0.1)}, "non-negative"),
        ({"sizes": (0.7, 0.3, 0.0)}, "test > 0"),
        ({"sizes": "70/20/10"}, "sizes"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": True}, "seed"),
    ],
)
def test_grouped_split_bad_parameters(kwargs, match):
    params = {"seed": 0, "sizes": (0.7, 0.2, 0.1), **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        grouped_split(_study_groups(), **params)


def test_grouped_split_bad_groups():
    with pytest.raises(InvalidParameterError, match="too few"):
        grouped_split(["a", "a", "b"], seed=0, sizes=(0.7, 0.2, 0.1))
    with pytest.raises(InvalidParameterError, match="missing label"):
        grouped_split(["a", None, "b", "c"], seed=0, sizes=(0.7, 0.2, 0.1))
    with pytest.raises(InvalidParameterError, match="empty"):
        grouped_split([], seed=0, sizes=(0.7, 0.2, 0.1))
    with pytest.raises(InvalidParameterError, match="1-d"):
        grouped_split([["a", "b"], ["c", "d"]], seed=0, sizes=(0.7, 0.2, 0.1))
    with pytest.raises(InvalidParameterError, match="groups"):
        grouped_split("abc", seed=0, sizes=(0.7, 0.2, 0.1))


@pytest.mark.parametrize("k", [1, 42, 2.0, True])
def test_grouped_kfold_bad_k(k):
    with pytest.raises(InvalidParameterError, match="`k`"):
        grouped_kfold(_study_groups(), k=k, seed=0)


def test_overlapping_groups_rejects_bad_positions():
    with pytest.raises(InvalidParameterError, match="row positions"):
        overlapping_groups(["a", "b"], [[0, 2]])
    with pytest.raises(InvalidParameterError, match="row positions"):
        overlapping_groups(["a", "b"], [[0.5]])


# ---------------------------------------------------------------------------------------------
# the participant-cluster bootstrap of the K-fold metrics


def _expanded(y, p, counts):
    idx = np.repeat(np.arange(y.size), counts.astype(int))
    return y[idx], p[idx]


def test_weighted_metrics_equal_the_metrics_of_the_repeated_sample():
    rng = np.random.default_rng(11)
    y = rng.integers(1, 6, 60).astype(float)
    p = np.clip(y + rng.normal(0, 1.2, 60), 1, 5)
    p[:6] = 3.0  # ties at the threshold
    w = rng.multinomial(60, np.full(60, 1 / 60), size=150).astype(float)
    got = weighted_metrics(y, p, w, threshold=3.0)
    for b in range(w.shape[0]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataQualityWarning)
            expected = prediction_metrics(*_expanded(y, p, w[b]), threshold=3.0)
        for name in METRIC_NAMES:
            assert_allclose(got[name][b], getattr(expected, name), rtol=0, atol=1e-10)


def test_weighted_metrics_undefined_cases():
    y = np.array([1.0, 2.0, 4.0, 5.0])
    p = np.array([2.0, 2.0, 4.5, 3.5])
    m = weighted_metrics(
        y, p, [[0, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 0]], threshold=3.0
    )
    assert np.isnan(m["mse"][0]) and np.isnan(m["r"][0])  # nothing drawn
    assert np.isnan(m["r"][1]) and np.isnan(m["rho"][1])  # p constant among the drawn
    assert np.isnan(m["f1"][1]) and m["acc"][1] == 100.0  # no positive at all
    assert np.isfinite(m["r"][2]) and np.isnan(m["r"][3])  # one pair: no correlation
    with pytest.raises(InvalidParameterError, match="weights"):
        weighted_metrics(y, p, [[1, 1, -1, 1]], threshold=3.0)
    with pytest.raises(InvalidParameterError, match="weights"):
        weighted_metrics(y, p, [[1, 1, 1]], threshold=3.0)


def _kfold_data(seed=0, n_people=24, per=6, n_seeds=2):
    rng = np.random.default_rng(seed)
    groups = np.repeat([f"P{i:02d}" for i in range(n_people)], per)
    latent = np.repeat(rng.normal(0, 1, n_people), per) + rng.normal(0, 0.7, groups.size)
    y = np.clip(np.round(3 + latent), 1, 5)
    good = np.clip(3 + latent + rng.normal(0, 0.5, groups.size), 1, 5)
    noise = np.clip(3 + rng.normal(0, 1, (n_seeds, groups.size)), 1, 5)
    preds = {"copy": np.tile(y, (n_seeds, 1)), "good": np.tile(good, (n_seeds, 1)), "noise": noise}
    return y, groups, preds


def test_kfold_bootstrap_estimate_is_the_pooled_out_of_fold_metric():
    y, groups, preds = _kfold_data()
    boot = kfold_bootstrap(y, preds, groups=groups, n_boot=50, seed=3, threshold=3.0)
    ci = boot.intervals.set_index(["model", "metric"])
    for model, p in preds.items():
        per_seed = [prediction_metrics(y, p[s], threshold=3.0) for s in range(p.shape[0])]
        for m in METRIC_NAMES:
            expected = np.mean([getattr(x, m) for x in per_seed])
            assert_allclose(ci.loc[(model, m), "estimate"], expected, rtol=0, atol=1e-10)
    copy = ci.loc["copy"]
    assert_allclose(copy.loc["r", ["estimate", "ci_low", "ci_high"]].astype(float), 100, atol=1e-10)
    assert copy.loc["r", "interval"] == "percentile"  # Fisher's z is infinite at r = 100
    assert copy.loc["mse", "ci_high"] == 0
    assert (ci["ci_low"] <= ci["estimate"] + 1e-9).all() and (
        ci["estimate"] <= ci["ci_high"] + 1e-9
    ).all()
    assert set(ci["n_groups"]) == {24} and set(ci["ci_level"]) == {0.95}
    assert ci.loc[("good", "r"), "interval"] == "fisher_z"
    assert ci.loc[("good", "acc"), "interval"] == "logit"
    assert ci.loc[("good", "mse"), "interval"] == "log"
    assert boot.meta["n_boot"] == 50 and "cluster bootstrap" in boot.meta["method"]
    assert boot.meta["t_df"] == 23


def test_kfold_bootstrap_interval_equals_an_independent_computation():
    """Replicates recomputed by repeating each drawn participant's rows; the interval is
    estimate ± t(G - 1) SE on Fisher's z / the logit / the log, mapped back."""
    from scipy import special, stats

    y, groups, preds = _kfold_data(n_seeds=1)
    p = preds["good"][0]
    boot = kfold_bootstrap(y, {"good": p}, groups=groups, n_boot=40, seed=11, threshold=3.0)
    people = np.unique(groups)
    counts = np.random.default_rng(11).multinomial(people.size, np.full(people.size, 1 / 24), 40)
    reps = {m: [] for m in METRIC_NAMES}
    for c in counts:
        rows = np.concatenate(
            [np.repeat(np.flatnonzero(groups == g), n) for g, n in zip(people, c, strict=True)]
        )
        m = prediction_metrics(y[rows], p[rows], threshold=3.0)
        for k in METRIC_NAMES:
            reps[k].append(getattr(m, k))
    full = prediction_metrics(y, p, threshold=3.0)
    q = stats.t.ppf(0.975, 23)
    to = {
        "r": (lambda v: np.arctanh(v / 100), lambda z: 100 * np.tanh(z)),
        "rho": (lambda v: np.arctanh(v / 100), lambda z: 100 * np.tanh(z)),
        "acc": (lambda v: special.logit(v / 100), lambda z: 100 * special.expit(z)),
        "f1": (lambda v: special.logit(v / 100), lambda z: 100 * special.expit(z)),
        "mse": (np.log, np.exp),
    }
    ci = boot.intervals.set_index("metric")
    for k, (fwd, back) in to.items():
        centre, se = fwd(getattr(full, k)), np.std(fwd(np.array(reps[k])), ddof=1)
        assert_allclose(
            ci.loc[k, ["ci_low", "ci_high"]].astype(float),
            [back(centre - q * se), back(centre + q * se)],
            rtol=1e-9,
        )


def test_kfold_bootstrap_is_seeded_and_paired():
    y, groups, preds = _kfold_data()
    a = kfold_bootstrap(y, preds, groups=groups, n_boot=200, seed=5, threshold=3.0)
    b = kfold_bootstrap(y, preds, groups=groups, n_boot=200, seed=5, threshold=3.0)
    c = kfold_bootstrap(y, preds, groups=groups, n_boot=200, seed=6, threshold=3.0)
    pd.testing.assert_frame_equal(a.intervals, b.intervals)
    pd.testing.assert_frame_equal(a.comparisons, b.comparisons)
    assert not np.allclose(a.intervals["ci_low"].dropna(), c.intervals["ci_low"].dropna())
    comp = a.comparisons.set_index(["model", "versus", "metric"])
    assert list(comp.index.unique(level="model")) == ["good", "noise"]
    # copying the ratings beats noise on every metric (MSE: lower is better)
    for m in METRIC_NAMES:
        rec = comp.loc[("noise", "copy", m)]
        assert rec["verdict"] == "worse", m
        assert rec["estimate"] < 0 if m != "mse" else rec["estimate"] > 0
    # a model compared with itself is never called better or worse
    same = kfold_bootstrap(
        y, {"a": preds["good"], "b": preds["good"]}, groups=groups, n_boot=50, seed=1, threshold=3.0
    )
    assert set(same.comparisons["verdict"]) == {"interval includes 0"}
    assert (same.comparisons["estimate"] == 0).all()


def test_kfold_bootstrap_resamples_participants_not_ratings():
    """Ratings of one person move together: duplicating every rating of every person (more
    ratings, the same people) must not narrow the interval, as a rating bootstrap would."""
    y, groups, preds = _kfold_data(n_seeds=1)
    one = kfold_bootstrap(
        y, {"good": preds["good"]}, groups=groups, n_boot=400, seed=2, threshold=3.0
    )
    twice = kfold_bootstrap(
        np.r_[y, y],
        {"good": np.c_[preds["good"], preds["good"]]},
        groups=np.r_[groups, groups],
        n_boot=400,
        seed=2,
        threshold=3.0,
    )
    width = lambda b: (b.intervals["ci_high"] - b.intervals["ci_low"]).to_numpy()  # noqa: E731
    assert_allclose(width(twice), width(one), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_boot": 1}, "n_boot"),
        ({"ci_level": 95}, "ci_level"),
        ({"seed": -1}, "seed"),
        ({"predictions": {"m": np.zeros((1, 5))}}, "predictions"),
        ({"predictions": {"a": np.zeros((1, 144)), "b": np.zeros((2, 144))}}, "predictions"),
        ({"predictions": {}}, "predictions"),
        ({"groups": ["a", "b"]}, "groups"),
    ],
)
def test_kfold_bootstrap_bad_input(kwargs, match):
    y, groups, preds = _kfold_data(n_seeds=1)
    params = {"groups": groups, "n_boot": 10, "seed": 0, "threshold": 3.0, **kwargs}
    p = params.pop("predictions", {"good": preds["good"]})
    with pytest.raises(InvalidParameterError, match=match):
        kfold_bootstrap(y, p, **params)


def test_kfold_bootstrap_shows_one_line_and_tables():
    y, groups, preds = _kfold_data(n_seeds=1)
    boot = kfold_bootstrap(y, preds, groups=groups, n_boot=20, seed=1, threshold=3.0)
    line = repr(boot)
    assert line.startswith(f"KFoldBootstrap({len(preds)} model(s)") and "\n" not in line
    assert "verdict" in boot.summary() and "<table" in boot._repr_html_()
