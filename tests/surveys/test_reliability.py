"""Tests of surveys.reliability.scale_reliability.

Reference values: tests/surveys/reference/psych_bfi.R (R 4.2.2, psych 2.2.9) on psych's bfi,
written with 15 significant digits, so exact statistics are compared at 1e-12.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings
from numpy.testing import assert_allclose, assert_array_equal
from scipy import optimize, stats

from surveys._errors import (
    DataQualityWarning,
    InvalidParameterError,
    SurveysWarning,
    UndefinedStatisticWarning,
)
from surveys._one_factor import one_factor_uls as _one_factor_uls
from surveys.reliability import (
    _complete_moments,
    _pairwise_moments,
    scale_reliability,
)

TESTS = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).resolve().parent / "reference"
RESPONSE_MIN, RESPONSE_MAX = 1, 6
SCALES = ["agree", "conscientious", "extraversion", "neuroticism", "openness"]
SUMMARY_KEYS = [
    "n",
    "n_items",
    "alpha",
    "alpha_ci_low",
    "alpha_ci_high",
    "alpha_standardized",
    "omega_total",
]
ITEM_COLUMNS = ["item", "n", "mean", "sd", "r_item_rest", "alpha_if_deleted"]
EXACT = 1e-12  # R printed 15 significant digits; these statistics are closed-form


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240611)


@pytest.fixture(scope="module")
def bfi() -> pd.DataFrame:
    return pd.read_csv(TESTS / "data" / "psych_bfi.csv", index_col=0)


@pytest.fixture(scope="module")
def bfi_keys() -> dict[str, list[str]]:
    table = pd.read_csv(TESTS / "data" / "psych_bfi_keys.csv", index_col=0)
    return {scale: table[scale].tolist() for scale in table.columns}


@pytest.fixture(scope="module")
def ref_scales() -> pd.DataFrame:
    return pd.read_csv(REFERENCE / "psych_bfi_scales.csv", comment="#").set_index("scale")


@pytest.fixture(scope="module")
def ref_items() -> pd.DataFrame:
    return pd.read_csv(REFERENCE / "psych_bfi_items.csv", comment="#")


def keyed(bfi: pd.DataFrame, key: list[str]) -> tuple[np.ndarray, list[str]]:
    """Reverse-key a bfi scale the way psych does: max + min - x for '-' items."""
    names = [k.removeprefix("-") for k in key]
    x = bfi[names].to_numpy(dtype=float)
    for j, k in enumerate(key):
        if k.startswith("-"):
            x[:, j] = RESPONSE_MAX + RESPONSE_MIN - x[:, j]
    return x, names


# ---------------------------------------------------------------- psych's bfi (R reference)


@pytest.mark.parametrize("scale", SCALES)
def test_bfi_alpha_matches_psych(bfi, bfi_keys, ref_scales, scale):
    x, names = keyed(bfi, bfi_keys[scale])
    ref = ref_scales.loc[scale]
    summary, _ = scale_reliability(x, item_names=names)
    assert list(summary) == SUMMARY_KEYS
    assert summary["n"] == ref["n"] == 2800  # no bfi respondent skipped a whole scale
    assert summary["n_items"] == ref["n_items"]
    assert_allclose(summary["alpha"], ref["raw_alpha"], rtol=0, atol=EXACT)
    # psych::scoreItems(impute = "none") uses the same pairwise covariances
    assert_allclose(summary["alpha"], ref["scoreitems_alpha"], rtol=0, atol=EXACT)
    assert_allclose(summary["alpha_standardized"], ref["std_alpha"], rtol=0, atol=EXACT)


# psych::scoreItems with its default median imputation, as printed (6 decimals) in the shared
# R output reference_values_R.txt; reproduced by psych_bfi.R (scoreitems_alpha_median_imputed).
PRINTED_MEDIAN_IMPUTED_ALPHA = {
    "agree": 0.701237,
    "conscientious": 0.724687,
    "extraversion": 0.759695,
    "neuroticism": 0.811775,
    "openness": 0.596772,
}


@pytest.mark.parametrize("scale", SCALES)
def test_bfi_alpha_is_not_the_median_imputed_one(bfi, bfi_keys, ref_scales, scale):
    # The printed alphas come from median imputation; pairwise deletion (impute = "none")
    # must not silently reproduce them.
    x, names = keyed(bfi, bfi_keys[scale])
    summary, _ = scale_reliability(x, item_names=names)
    imputed = ref_scales.loc[scale, "scoreitems_alpha_median_imputed"]
    assert_allclose(imputed, PRINTED_MEDIAN_IMPUTED_ALPHA[scale], rtol=0, atol=5e-7)
    assert abs(summary["alpha"] - imputed) > 1e-3


@pytest.mark.parametrize("scale", SCALES)
def test_bfi_item_stats_match_psych(bfi, bfi_keys, ref_items, scale):
    x, names = keyed(bfi, bfi_keys[scale])
    ref = ref_items[ref_items["scale"] == scale].reset_index(drop=True)
    _, items = scale_reliability(x, item_names=names)
    assert items.columns.tolist() == ITEM_COLUMNS
    assert items["item"].tolist() == ref["item"].tolist() == names
    assert_array_equal(items["n"].to_numpy(), ref["n"].to_numpy())
    assert_allclose(items["mean"], ref["mean"], rtol=0, atol=EXACT)
    assert_allclose(items["sd"], ref["sd"], rtol=0, atol=EXACT)
    assert_allclose(items["r_item_rest"], ref["r_drop"], rtol=0, atol=EXACT)
    assert_allclose(items["alpha_if_deleted"], ref["alpha_drop"], rtol=0, atol=EXACT)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize(("ci_level", "suffix"), [(0.95, "95"), (0.90, "90")])
def test_bfi_feldt_interval_matches_psych(bfi, bfi_keys, ref_scales, scale, ci_level, suffix):
    x, names = keyed(bfi, bfi_keys[scale])
    ref = ref_scales.loc[scale]
    summary, _ = scale_reliability(x, item_names=names, ci_level=ci_level)
    assert_allclose(summary["alpha_ci_low"], ref[f"feldt_low_{suffix}"], rtol=0, atol=EXACT)
    assert_allclose(summary["alpha_ci_high"], ref[f"feldt_high_{suffix}"], rtol=0, atol=EXACT)
    assert summary["alpha_ci_low"] < summary["alpha"] < summary["alpha_ci_high"]


@pytest.mark.parametrize("scale", SCALES)
def test_bfi_complete_cases_match_psych(bfi, bfi_keys, ref_scales, ref_items, scale):
    x, names = keyed(bfi, bfi_keys[scale])
    ref = ref_scales.loc[scale]
    ref_i = ref_items[ref_items["scale"] == scale].reset_index(drop=True)
    summary, items = scale_reliability(x, item_names=names, missing="complete")
    assert summary["n"] == ref["n_complete"]
    assert (items["n"] == ref["n_complete"]).all()
    assert_allclose(summary["alpha"], ref["raw_alpha_complete"], rtol=0, atol=EXACT)
    assert_allclose(summary["alpha_standardized"], ref["std_alpha_complete"], rtol=0, atol=EXACT)
    assert_allclose(summary["alpha_ci_low"], ref["feldt_low_95_complete"], rtol=0, atol=EXACT)
    assert_allclose(summary["alpha_ci_high"], ref["feldt_high_95_complete"], rtol=0, atol=EXACT)
    assert_allclose(items["r_item_rest"], ref_i["r_drop_complete"], rtol=0, atol=EXACT)
    assert_allclose(items["alpha_if_deleted"], ref_i["alpha_drop_complete"], rtol=0, atol=EXACT)
    pairwise, _ = scale_reliability(x, item_names=names)
    assert summary["alpha"] != pairwise["alpha"]  # the option changes the number


@pytest.mark.parametrize("scale", SCALES)
def test_bfi_omega_matches_r(bfi, bfi_keys, ref_scales, ref_items, scale):
    x, names = keyed(bfi, bfi_keys[scale])
    ref = ref_scales.loc[scale]
    summary, _ = scale_reliability(x, item_names=names)
    # R's one-factor principal-axis iteration run to min.err = 0 reaches the exact minres
    # solution (its fixed point), so the agreement is to rounding.
    assert_allclose(summary["omega_total"], ref["omega_uls"], rtol=0, atol=EXACT)
    # psych::omega(nfactors = 1)$omega_h is the same formula, but psych's minres optimiser
    # (optim, default tolerances) stops up to ~6e-7 away from the optimum on these data.
    assert_allclose(summary["omega_total"], ref["psych_omega_h"], rtol=0, atol=2e-6)
    # psych's omega.tot also counts residual correlations (1 - sum(u2) / sum(R)); it is a
    # different quantity, within 1e-3 here because one factor fits these scales well.
    assert_allclose(summary["omega_total"], ref["psych_omega_tot"], rtol=0, atol=1e-3)

    moments = _pairwise_moments(x, ~np.isnan(x))
    loadings, at_bound = _one_factor_uls(moments.cor)
    ref_i = ref_items[ref_items["scale"] == scale]
    assert_allclose(loadings, ref_i["loading_uls"], rtol=0, atol=EXACT)
    assert not at_bound.any()


# ---------------------------------------------------------------- computational paths


def test_pairwise_and_complete_moments_agree_on_complete_data(rng):
    x = rng.normal(loc=3.0, scale=[1.0, 2.0, 0.5, 1.5], size=(500, 4)) @ np.triu(np.ones((4, 4)))
    complete = _complete_moments(x)
    pairwise = _pairwise_moments(x, np.ones_like(x, dtype=bool))
    for field in ("n", "n_item", "n_pair"):
        assert_array_equal(getattr(pairwise, field), getattr(complete, field))
    for field in ("mean", "cov", "cor"):
        assert_allclose(getattr(pairwise, field), getattr(complete, field), rtol=1e-12, atol=0)
    assert_allclose(complete.cov, np.cov(x, rowvar=False), rtol=1e-12, atol=0)


def test_complete_option_equals_pairwise_on_the_complete_rows(rng):
    x = rng.integers(1, 6, size=(400, 5)).astype(float) + rng.normal(size=(400, 1)).round()
    x[rng.random(x.shape) < 0.05] = np.nan
    names = list("abcde")
    complete_rows = x[~np.isnan(x).any(axis=1)]
    s_opt, i_opt = scale_reliability(x, item_names=names, missing="complete")
    s_sub, i_sub = scale_reliability(complete_rows, item_names=names, missing="pairwise")
    assert s_opt["n"] == s_sub["n"] == len(complete_rows)
    for key in SUMMARY_KEYS[2:]:
        assert_allclose(s_opt[key], s_sub[key], rtol=1e-12, atol=0)
    pd.testing.assert_frame_equal(i_opt, i_sub, check_exact=False, rtol=1e-12, atol=0)


def test_pairwise_moments_match_pandas_pairwise_deletion(rng):
    # pandas' DataFrame.cov/corr use pairwise-complete rows with per-pair means, like R
    x = rng.normal(size=(300, 6)) + rng.normal(size=(300, 1))
    x[rng.random(x.shape) < 0.15] = np.nan
    moments = _pairwise_moments(x, ~np.isnan(x))
    frame = pd.DataFrame(x)
    assert_allclose(moments.cov, frame.cov().to_numpy(), rtol=1e-12, atol=0)
    assert_allclose(moments.cor, frame.corr().to_numpy(), rtol=1e-12, atol=1e-15)
    assert_array_equal(moments.n_item, frame.count().to_numpy())
    assert_allclose(moments.mean, frame.mean().to_numpy(), rtol=1e-12)


def test_pairwise_moments_survive_a_large_offset(rng):
    # centring before the products keeps the pairwise covariances accurate
    x = rng.normal(size=(2000, 3)) + rng.normal(size=(2000, 1))
    x[rng.random(x.shape) < 0.1] = np.nan
    shifted = _pairwise_moments(x + 1e6, ~np.isnan(x))
    plain = _pairwise_moments(x, ~np.isnan(x))
    assert_allclose(shifted.cov, plain.cov, rtol=1e-8)


def test_blockwise_accumulation_spans_blocks(monkeypatch, rng):
    import surveys.reliability as rel

    x = rng.normal(size=(1000, 4)) + rng.normal(size=(1000, 1))
    x[rng.random(x.shape) < 0.1] = np.nan
    whole = scale_reliability(x, item_names=list("abcd"))
    monkeypatch.setattr(rel, "_BLOCK_ROWS", 64)
    blocks = scale_reliability(x, item_names=list("abcd"))
    for key in SUMMARY_KEYS:
        assert_allclose(blocks[0][key], whole[0][key], rtol=1e-12)
    pd.testing.assert_frame_equal(blocks[1], whole[1], check_exact=False, rtol=1e-12)


def test_input_is_not_modified(rng):
    x = rng.integers(1, 6, size=(50, 4)).astype(float) + rng.integers(0, 3, size=(50, 1))
    x[3, 1] = np.nan
    before = x.copy()
    scale_reliability(x, item_names=list("abcd"))
    scale_reliability(x, item_names=list("abcd"), missing="complete")
    assert_array_equal(x, before)


def test_item_stats_on_two_items_use_the_other_item(rng):
    x = rng.normal(size=(200, 2)) + rng.normal(size=(200, 1))
    with pytest.warns(UndefinedStatisticWarning, match="two-item"):
        summary, items = scale_reliability(x, item_names=["a", "b"])
    r = np.corrcoef(x, rowvar=False)[0, 1]
    assert_allclose(items["r_item_rest"], [r, r], rtol=1e-12)
    cov = np.cov(x, rowvar=False)
    assert_allclose(summary["alpha"], 2 * (1 - np.trace(cov) / cov.sum()), rtol=1e-12)
    assert_allclose(summary["alpha_standardized"], 2 * r / (1 + r), rtol=1e-12)
    assert items["alpha_if_deleted"].isna().all()
    assert np.isnan(summary["omega_total"])


def test_three_items_omega_is_the_exact_one_factor_fit():
    # three items are just identified: lambda_i = sqrt(r_ij r_ik / r_jk)
    r = np.array([[1.0, 0.42, 0.35], [0.42, 1.0, 0.30], [0.35, 0.30, 1.0]])
    loadings, at_bound = _one_factor_uls(r)
    expected = np.sqrt([0.42 * 0.35 / 0.30, 0.42 * 0.30 / 0.35, 0.35 * 0.30 / 0.42])
    assert_allclose(loadings, expected, rtol=1e-12)
    assert not at_bound.any()


# ---------------------------------------------------------------- undefined statistics


def test_one_item_gives_nan_and_warns(rng):
    x = rng.integers(1, 6, size=(30, 1)).astype(float)
    with pytest.warns(UndefinedStatisticWarning, match="one-item"):
        summary, items = scale_reliability(x, item_names=["only"])
    assert summary["n"] == 30 and summary["n_items"] == 1
    for key in SUMMARY_KEYS[2:]:
        assert np.isnan(summary[key])
    assert items["r_item_rest"].isna().all() and items["alpha_if_deleted"].isna().all()
    assert_allclose(items["mean"], x.mean())
    assert_allclose(items["sd"], x.std(ddof=1))


@pytest.mark.parametrize("n_rows", [0, 1])
def test_fewer_than_two_respondents_give_nan_and_warn(n_rows):
    x = np.full((n_rows, 3), 2.0)
    with pytest.warns(UndefinedStatisticWarning, match="fewer than 2 respondents"):
        summary, items = scale_reliability(x, item_names=list("abc"))
    assert summary["n"] == n_rows
    for key in SUMMARY_KEYS[2:]:
        assert np.isnan(summary[key])
    assert items["sd"].isna().all()
    assert (items["n"] == n_rows).all()


def test_complete_option_with_no_complete_row_warns():
    x = np.array([[1.0, np.nan], [np.nan, 2.0], [3.0, np.nan]])
    with pytest.warns(UndefinedStatisticWarning, match="fewer than 2 respondents"):
        summary, items = scale_reliability(x, item_names=["a", "b"], missing="complete")
    assert summary["n"] == 0
    assert np.isnan(summary["alpha"])
    assert (items["n"] == 0).all() and items["mean"].isna().all()


def test_zero_variance_item_leaves_raw_alpha_defined(rng):
    x = rng.integers(1, 6, size=(100, 4)).astype(float)
    x[:, :3] += rng.integers(0, 3, size=(100, 1))
    x[:, 3] = 4.0
    with pytest.warns(UndefinedStatisticWarning, match="items without variance.*d"):
        summary, items = scale_reliability(x, item_names=list("abcd"))
    cov = np.cov(x, rowvar=False)
    assert_allclose(summary["alpha"], 4 / 3 * (1 - np.trace(cov) / cov.sum()), rtol=1e-12)
    assert np.isfinite(summary["alpha_ci_low"])
    assert np.isnan(summary["alpha_standardized"]) and np.isnan(summary["omega_total"])
    assert np.isnan(items.loc[3, "r_item_rest"])
    assert items.loc[:2, "r_item_rest"].notna().all()
    assert items["alpha_if_deleted"].notna().all()
    assert items.loc[3, "sd"] == 0.0


def test_all_items_constant_gives_nan_alpha():
    x = np.tile([2.0, 3.0, 4.0], (10, 1))
    with pytest.warns(UndefinedStatisticWarning, match="total score has no variance"):
        summary, items = scale_reliability(x, item_names=list("abc"))
    for key in SUMMARY_KEYS[2:]:
        assert np.isnan(summary[key])
    assert items["r_item_rest"].isna().all() and items["alpha_if_deleted"].isna().all()


def test_items_never_answered_together_warn(rng):
    x = rng.integers(1, 6, size=(40, 3)).astype(float)
    x[:20, 0] = np.nan
    x[20:, 1] = np.nan
    with pytest.warns(UndefinedStatisticWarning, match="a-b"):
        summary, items = scale_reliability(x, item_names=list("abc"))
    assert np.isnan(summary["alpha"]) and np.isnan(summary["omega_total"])
    assert_array_equal(items["n"], [20, 20, 40])
    assert items["sd"].notna().all()


def test_pair_without_joint_variance_leaves_omega_undefined(rng):
    # item a is constant among those who also answered b, though it varies overall
    x = rng.integers(1, 6, size=(40, 3)).astype(float)
    x[:20, 0] = 2.0
    x[20:, 1] = np.nan
    with pytest.warns(UndefinedStatisticWarning, match="omega is undefined"):
        summary, _ = scale_reliability(x, item_names=list("abc"))
    assert np.isnan(summary["omega_total"])
    assert np.isfinite(summary["alpha"]) and np.isfinite(summary["alpha_standardized"])


def test_item_with_one_answer_warns(rng):
    x = rng.integers(1, 6, size=(40, 3)).astype(float)
    x[1:, 2] = np.nan
    with pytest.warns(UndefinedStatisticWarning, match="fewer than 2 answers.*c"):
        summary, items = scale_reliability(x, item_names=list("abc"))
    assert np.isnan(summary["alpha"])
    assert np.isnan(items.loc[2, "sd"]) and items.loc[2, "n"] == 1


def exact_correlation_sample(r, n, seed):
    """A sample whose correlation matrix is exactly r."""
    z = np.random.default_rng(seed).standard_normal((n, r.shape[0]))
    z = (z - z.mean(axis=0)) @ np.linalg.inv(np.linalg.cholesky(np.cov(z, rowvar=False))).T
    return z @ np.linalg.cholesky(r).T


def test_heywood_case_is_bounded_like_psych_and_warns():
    # r_12 r_13 / r_23 = 1.28 > 1: the exact one-factor fit needs a loading above 1, so the
    # communality of item a stops at psych::fa's bound 0.995 and b, c minimise the rest.
    r = np.array([[1.0, 0.8, 0.8], [0.8, 1.0, 0.5], [0.8, 0.5, 1.0]])
    x = exact_correlation_sample(r, 300, seed=7)
    with pytest.warns(DataQualityWarning, match="Heywood case.*communality of a reached"):
        summary, _ = scale_reliability(x, item_names=list("abc"))
    loadings, at_bound = _one_factor_uls(r)
    assert_array_equal(at_bound, [True, False, False])
    assert_allclose(loadings[0], np.sqrt(0.995), rtol=1e-12)

    def rest(free):  # minres criterion with the first loading on the bound
        lam = np.concatenate([[np.sqrt(0.995)], free])
        return sum((r[i, j] - lam[i] * lam[j]) ** 2 for i, j in [(0, 1), (0, 2), (1, 2)])

    best = optimize.minimize(rest, [0.6, 0.6], method="Nelder-Mead", options={"xatol": 1e-12})
    assert_allclose(loadings[1:], best.x, atol=1e-6)
    assert_allclose(summary["omega_total"], loadings.sum() ** 2 / r.sum(), rtol=1e-12)


def test_unkeyed_scale_gets_a_bounded_omega(rng):
    # r_12 r_13 r_23 < 0 (e.g. a forgotten reverse key): no loadings reproduce the signs,
    # the unbounded minres criterion has no minimum, and the bounded fit is used
    r = np.array([[1.0, 0.4, -0.3], [0.4, 1.0, 0.5], [-0.3, 0.5, 1.0]])
    x = exact_correlation_sample(r, 200, seed=3)
    with pytest.warns(DataQualityWarning, match="Heywood"):
        summary, _ = scale_reliability(x, item_names=list("abc"))
    assert 0.0 <= summary["omega_total"] < 1.0


# ---------------------------------------------------------------- invalid arguments


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"x": np.ones(5)}, "two-dimensional"),
        ({"x": np.ones((5, 0))}, "two-dimensional"),
        ({"x": np.array([["a", "b"], ["c", "d"]])}, "numeric"),
        ({"x": np.array([[1.0, np.inf], [2.0, 3.0]])}, "infinite values in columns b"),
        ({"x": pd.DataFrame(np.ones((3, 2)))}, "numpy array"),
        ({"item_names": "ab"}, "sequence of str"),
        ({"item_names": ["a"]}, "one str per column"),
        ({"item_names": ["a", 2]}, "one str per column"),
        ({"item_names": ["a", "a"]}, "unique"),
        ({"ci_level": 95}, "ci_level"),
        ({"ci_level": 0.0}, "ci_level"),
        ({"ci_level": True}, "ci_level"),
        ({"ci_level": "0.9"}, "ci_level"),
        ({"missing": "listwise"}, "missing"),
    ],
)
def test_invalid_arguments_raise(kwargs, match):
    args = {"x": np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 4.0]]), "item_names": ["a", "b"]}
    args.update(kwargs)
    x = args.pop("x")
    with pytest.raises(InvalidParameterError, match=match) as info:
        scale_reliability(x, **args)
    assert isinstance(info.value, ValueError)
    assert "scale_reliability" in str(info.value)


# ---------------------------------------------------------------- simulation with known truth


def simulate_congeneric(rng, *, n, loadings):
    """Standardised items x_j = l_j f + e_j with var(e_j) = 1 - l_j^2."""
    loadings = np.asarray(loadings)
    factor = rng.standard_normal((n, 1))
    noise = rng.standard_normal((n, loadings.size)) * np.sqrt(1 - loadings**2)
    return factor * loadings + noise


def test_parallel_items_recover_the_true_reliability(rng):
    # Parallel items: reliability of the sum = k rho / (1 + (k - 1) rho) with rho = l^2,
    # which alpha and omega both estimate without bias (to O(1/n)).
    k, lam, n, reps = 6, 0.7, 400, 200
    rho = lam**2
    truth = k * rho / (1 + (k - 1) * rho)
    alphas, omegas, covered = [], [], 0
    for _ in range(reps):
        x = simulate_congeneric(rng, n=n, loadings=[lam] * k)
        summary, _ = scale_reliability(x, item_names=[f"i{j}" for j in range(k)])
        alphas.append(summary["alpha"])
        omegas.append(summary["omega_total"])
        covered += summary["alpha_ci_low"] <= truth <= summary["alpha_ci_high"]
    alphas, omegas = np.array(alphas), np.array(omegas)
    # the mean of 200 replicates lies within 4 standard errors of the truth
    assert abs(alphas.mean() - truth) < 4 * alphas.std(ddof=1) / np.sqrt(reps)
    assert abs(omegas.mean() - truth) < 4 * omegas.std(ddof=1) / np.sqrt(reps)
    # Feldt's interval is exact for parallel normal items: coverage ~ Binomial(200, 0.95)
    low, high = stats.binom.ppf([0.0005, 0.9995], reps, 0.95)
    assert low <= covered <= high


def test_congeneric_items_omega_recovers_truth_and_alpha_falls_short(rng):
    # Unequal loadings: omega = (sum l)^2 / ((sum l)^2 + sum(1 - l^2)) is the reliability
    # of the sum; alpha is a lower bound that falls clearly below it.
    loadings = np.array([0.9, 0.8, 0.6, 0.4, 0.3, 0.2])
    truth = loadings.sum() ** 2 / (loadings.sum() ** 2 + (1 - loadings**2).sum())
    reps, n = 100, 1000
    omegas, alphas = np.empty(reps), np.empty(reps)
    for r in range(reps):
        x = simulate_congeneric(rng, n=n, loadings=loadings)
        summary, _ = scale_reliability(x, item_names=[f"i{j}" for j in range(loadings.size)])
        omegas[r], alphas[r] = summary["omega_total"], summary["alpha"]
    assert abs(omegas.mean() - truth) < 4 * omegas.std(ddof=1) / np.sqrt(reps)
    assert (alphas < omegas).mean() > 0.95
    assert truth - alphas.mean() > 10 * alphas.std(ddof=1) / np.sqrt(reps)


def test_standardized_alpha_undefined_when_correlations_cancel():
    # Two perfectly anti-correlated items: the correlation matrix sums to 1 + 1 - 2 = 0, so
    # k / (k - 1) * (1 - k / 0) has no value; it must be NaN with a package warning.
    x = np.array([[1.0, 5.0], [5.0, 1.0], [3.0, 3.0]])
    with pytest.warns(UndefinedStatisticWarning, match="standardized alpha"):
        summary, _ = scale_reliability(x, item_names=["a", "b"])
    assert np.isnan(summary["alpha_standardized"])


def test_omega_undefined_when_pairwise_correlations_sum_to_nothing():
    # Two complete respondents (the second row answers one item): every pairwise correlation
    # is +1 or -1 and the matrix sums to exactly 0, so (sum of loadings)^2 / 1'R1 has no
    # value; omega must be NaN with a package warning, never numpy's RuntimeWarning.
    x = np.array([[5.0, 0.0, 3.0, 3.0], [np.nan, 4.0, np.nan, np.nan], [2.0, 5.0, 1.0, 4.0]])
    with package_warnings() as caught:  # numpy's RuntimeWarning would fail the test
        summary, _ = scale_reliability(x, item_names=["a", "b", "c", "d"])
    assert np.isnan(summary["omega_total"])
    assert caught and all(issubclass(w.category, SurveysWarning) for w in caught)
