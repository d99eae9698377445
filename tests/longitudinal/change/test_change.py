"""longitudinal.change: input handling, options, missing waves and simulation recovery.

Numbers compared with R live in test_change_reference.py. Here every expected number is either
an algebraic identity of the design or the known truth of a simulation.
"""

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings
from numpy.testing import assert_allclose

from longitudinal._errors import (
    DataQualityWarning,
    InvalidParameterError,
)
from longitudinal.change import (
    ChangeResult,
    change_analysis,
    describe_waves,
    friedman_test,
    growth_model,
    holm_adjust,
    pairwise_changes,
    reliable_change,
    rm_anova,
)
from surveys import InputValidationError

WAVES = ["pre", "mid", "post"]
COLS = {"id_col": "pid", "wave_col": "wave", "outcome_col": "score", "waves": WAVES}

# Simulation truth: wave means 3.0, 3.4, 3.8, i.e. a linear slope of 0.4 per wave.
TRUE_INTERCEPT = 3.0
TRUE_SLOPE = 0.4
SD_INTERCEPT, SD_SLOPE, SD_RESIDUAL = 0.6, 0.15, 0.4


def simulate(rng, n=60, *, intercept=TRUE_INTERCEPT, slope=TRUE_SLOPE, sd_slope=SD_SLOPE):
    """Person x wave data from a linear growth model with known parameters."""
    t = np.arange(3.0)
    u0 = rng.normal(0.0, SD_INTERCEPT, n)
    u1 = rng.normal(0.0, sd_slope, n)
    y = intercept + u0[:, None] + (slope + u1[:, None]) * t + rng.normal(0, SD_RESIDUAL, (n, 3))
    return pd.DataFrame(
        {
            "pid": np.repeat([f"p{i:03d}" for i in range(n)], 3),
            "wave": np.tile(WAVES, n),
            "score": y.ravel(),
        }
    )


def test_simulated_reference_data_come_from_simulate():
    # tests/longitudinal/reference/growth_simulated.csv feeds change.R (lme4::isSingular)
    path = Path(__file__).resolve().parents[1] / "reference" / "growth_simulated.csv"
    stored = pd.read_csv(path, comment="#", float_precision="round_trip")
    for seed, frame in stored.groupby("seed"):
        fresh = simulate(np.random.default_rng(seed))
        pd.testing.assert_frame_equal(
            frame.drop(columns="seed").reset_index(drop=True), fresh, check_exact=True
        )


@pytest.fixture
def sim():
    return simulate(np.random.default_rng(12345))


@pytest.fixture
def sim_missing(sim):
    """The simulated study with participant p007 absent at 'mid' (row kept, outcome missing)."""
    data = sim.copy()
    data.loc[(data["pid"] == "p007") & (data["wave"] == "mid"), "score"] = np.nan
    return data


# ---------------------------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------------------------
ALL_FUNCTIONS = [describe_waves, rm_anova, pairwise_changes, friedman_test, growth_model]


@pytest.mark.parametrize("func", ALL_FUNCTIONS)
def test_duplicated_subject_wave_is_rejected_not_averaged(func, sim):
    dup = pd.concat([sim, sim.iloc[[4]].assign(score=99.0)], ignore_index=True)
    with pytest.raises(InputValidationError) as info:
        func(dup, **COLS)
    cases = info.value.failure_cases
    assert list(cases.columns) == ["file", "row", "column", "value", "reason"]
    assert len(cases) == 1
    assert cases.loc[0, "value"] == "p001"
    assert "wave 'mid'" in cases.loc[0, "reason"]
    assert isinstance(info.value, ValueError)


def test_every_data_problem_is_reported_at_once(sim):
    bad = sim.copy()
    bad.loc[0, "wave"] = "follow-up"
    bad.loc[1, "pid"] = None
    bad.loc[2, "score"] = np.inf
    bad = pd.concat([bad, bad.iloc[[5]]], ignore_index=True)
    with pytest.raises(InputValidationError) as info:
        rm_anova(bad, **COLS)
    reasons = " | ".join(info.value.failure_cases["reason"])
    assert len(info.value.failure_cases) == 4
    for text in ("not in waves", "missing subject id", "infinite", "has 2 rows"):
        assert text in reasons


@pytest.mark.parametrize(
    ("override", "match"),
    [
        ({"id_col": "person"}, "id_col"),
        ({"wave_col": 3}, "wave_col"),
        ({"outcome_col": "note"}, "outcome column 'note'.*numeric"),
        ({"waves": "pre"}, "waves"),
        ({"waves": ["pre"]}, "at least two"),
        ({"waves": ["pre", "pre", "post"]}, "repeat"),
        ({"id_col": "score"}, "three different columns"),
    ],
)
def test_bad_parameters_name_the_parameter_and_function(sim, override, match):
    with pytest.raises(InvalidParameterError, match=match) as info:
        rm_anova(sim.assign(note="text"), **{**COLS, **override})
    assert "rm_anova" in str(info.value)


def test_data_must_be_a_dataframe(sim):
    with pytest.raises(InvalidParameterError, match="pandas DataFrame"):
        describe_waves(sim.to_dict(), **COLS)


@pytest.mark.parametrize("func", [describe_waves, pairwise_changes, growth_model])
@pytest.mark.parametrize("level", [95, 0.0, 1.0, True, "0.95"])
def test_ci_level_must_be_in_unit_interval(func, sim, level):
    with pytest.raises(InvalidParameterError, match="ci_level"):
        func(sim, **COLS, ci_level=level)


def test_inputs_are_not_mutated(sim_missing):
    before = sim_missing.copy(deep=True)
    change_analysis(sim_missing, **COLS, reliability=0.8)
    pd.testing.assert_frame_equal(sim_missing, before)


def test_row_order_of_the_long_table_does_not_matter(sim_missing):
    a = change_analysis(sim_missing, **COLS, reliability=0.8)
    shuffled = sim_missing.sample(frac=1.0, random_state=np.random.RandomState(3))
    b = change_analysis(shuffled, **COLS, reliability=0.8)
    for name in ("rm_anova", "sphericity", "pairwise", "effect_sizes", "friedman", "growth_fixed"):
        num_a = getattr(a, name).select_dtypes("number").to_numpy(dtype=float)
        num_b = getattr(b, name).select_dtypes("number").to_numpy(dtype=float)
        assert_allclose(num_a, num_b, rtol=1e-10, err_msg=name)
    people_b = b.reliable_change.set_index("id").loc[a.reliable_change["id"]]
    assert_allclose(a.reliable_change["rci"], people_b["rci"], rtol=1e-12)


def test_same_input_gives_identical_output(sim_missing):
    a = change_analysis(sim_missing, **COLS, reliability=0.8)
    b = change_analysis(sim_missing, **COLS, reliability=0.8)
    for f in dataclasses.fields(ChangeResult):
        if f.name != "meta":
            pd.testing.assert_frame_equal(getattr(a, f.name), getattr(b, f.name))


# ---------------------------------------------------------------------------------------------
# The participant with a missing wave
# ---------------------------------------------------------------------------------------------
def test_missing_wave_participant_is_kept_in_growth_model_and_counted_out_of_rm_anova(
    sim, sim_missing
):
    n = sim["pid"].nunique()
    anova = rm_anova(sim_missing, **COLS)
    assert anova.meta["n_used"] == n - 1
    assert anova.meta["n_excluded"] == 1
    assert anova.meta["excluded_ids"] == ["p007"]
    assert anova.excluded.to_dict("records") == [
        {"id": "p007", "n_observed": 2, "missing_waves": "mid"}
    ]
    assert (anova.table["n"] == n - 1).all()
    assert friedman_test(sim_missing, **COLS).loc[0, ["n", "n_excluded"]].tolist() == [n - 1, 1]

    growth = growth_model(sim_missing, **COLS)
    assert growth.meta["n_subjects"] == n
    assert growth.meta["n_obs"] == 3 * n - 1
    assert growth.meta["n_subjects_incomplete"] == 1
    # The person's two observations enter the fit: leaving them out changes the estimates.
    without = growth_model(sim_missing[sim_missing["pid"] != "p007"], **COLS)
    assert without.meta["n_subjects"] == n - 1
    assert without.meta["n_obs"] == 3 * n - 3
    diff = growth.fixed["estimate"].to_numpy() - without.fixed["estimate"].to_numpy()
    assert np.all(np.abs(diff) > 1e-6)

    # Pairwise tests use every complete pair: only pairs with 'mid' lose the person.
    pairs = pairwise_changes(sim_missing, **COLS).tests.set_index("term")["n"]
    assert pairs.to_dict() == {"mid - pre": n - 1, "post - mid": n - 1, "post - pre": n}

    # A participant missing the outcome at every wave is a subject with no data.
    gone = sim_missing.copy()
    gone.loc[gone["pid"] == "p010", "score"] = np.nan
    res = change_analysis(gone, **COLS)
    assert res.meta["n_excluded"] == 2
    assert res.meta["growth"]["n_subjects"] == n - 1
    assert res.meta["growth"]["n_subjects_no_data"] == 1


def test_change_analysis_reports_the_exclusions(sim_missing):
    res = change_analysis(sim_missing, **COLS)
    assert res.meta["n_subjects"] == 60
    assert res.meta["n_complete"] == 59
    assert res.meta["n_excluded"] == 1
    assert res.meta["excluded_ids"] == ["p007"]
    assert res.excluded["id"].tolist() == ["p007"]
    desc = res.descriptives.set_index("wave")
    assert desc.loc["mid", "n"] == 59 and desc.loc["mid", "n_missing"] == 1
    assert desc.loc["pre", "n"] == 60 and desc.loc["pre", "n_missing"] == 0


def test_results_print_briefly_and_show_their_tables(sim_missing):
    """A one-line repr, a compact text summary (no None cells) and notebook HTML per result."""
    res = change_analysis(sim_missing, **COLS, reliability=0.8)
    parts = {
        "ChangeResult": res,
        "RMAnovaResult": rm_anova(sim_missing, **COLS),
        "PairwiseChanges": pairwise_changes(sim_missing, **COLS),
        "GrowthModelResult": growth_model(sim_missing, **COLS),
    }
    for name, result in parts.items():
        line = repr(result)
        assert line.startswith(f"{name}(") and "\n" not in line and len(line) < 200, line
        text = result.summary()
        assert text.startswith(line) and "None" not in text and "DataFrame" not in text
        page = result._repr_html_()
        assert page.count("<caption>") >= 1 and "<table" in page
    anova = rm_anova(sim_missing, **COLS)
    rec = anova.table.iloc[0]
    assert f"F({rec['df1']:.3g}, {rec['df2']:.3g}) = {rec['statistic']:.3g}" in repr(anova)
    assert "59 complete cases, 1 left out" in repr(anova)
    summary = res.summary()
    for caption in ("Descriptives per wave", "Repeated-measures ANOVA", "Friedman test",
                    "Growth model: fixed effects", "Reliable change"):  # fmt: skip
        assert caption in summary
    assert "greenhouse-geisser" in summary


# ---------------------------------------------------------------------------------------------
# Simulation: recovery of known wave effects and slope
# ---------------------------------------------------------------------------------------------
# Rule fixed before running: 20 seeds (0-19), n = 60 people; each interval must cover its true
# value in at least 16 of the 20 seeds. For a 95% interval the chance of 15 or fewer covers is
# 0.3% (binomial), so a failure points to a real defect.
SEEDS = list(range(20))
MIN_COVERED = 16


@pytest.fixture(scope="module")
def recovery():
    rows = []
    for seed in SEEDS:
        data = simulate(np.random.default_rng(seed))
        with package_warnings() as caught:
            # the only expected warning: a seed whose slope variance is estimated at zero falls
            # back to the random-intercept model (by design; the estimate is then the same)
            res = change_analysis(data, **COLS, random_slope=True)
        assert all("refitted with a random intercept only" in str(w.message) for w in caught)
        assert len(caught) == (res.meta["growth"]["random_effects"] == "intercept")
        rows.append(res)
    return rows


def _covered(lo, hi, truth):
    return bool(lo <= truth <= hi)


def test_wave_means_are_recovered(recovery):
    truth = {w: TRUE_INTERCEPT + TRUE_SLOPE * i for i, w in enumerate(WAVES)}
    for wave, mu in truth.items():
        hits = [
            _covered(*r.descriptives.set_index("wave").loc[wave, ["ci_low", "ci_high"]], mu)
            for r in recovery
        ]
        assert sum(hits) >= MIN_COVERED, (wave, sum(hits))


@pytest.mark.parametrize(
    ("term", "truth"),
    [("mid - pre", TRUE_SLOPE), ("post - mid", TRUE_SLOPE), ("post - pre", 2 * TRUE_SLOPE)],
)
def test_pairwise_differences_are_recovered(recovery, term, truth):
    hits = [
        _covered(*r.pairwise.set_index("term").loc[term, ["ci_low", "ci_high"]], truth)
        for r in recovery
    ]
    assert sum(hits) >= MIN_COVERED, sum(hits)
    mean_est = np.mean([r.pairwise.set_index("term").loc[term, "estimate"] for r in recovery])
    # SE of the mean over 20 seeds is about 0.014 for these designs; 0.05 is > 3 SE
    assert abs(mean_est - truth) < 0.05


def test_standardized_pre_post_change_is_recovered(recovery):
    var_pre = SD_INTERCEPT**2 + SD_RESIDUAL**2
    var_post = SD_INTERCEPT**2 + 4 * SD_SLOPE**2 + SD_RESIDUAL**2
    var_diff = 4 * SD_SLOPE**2 + 2 * SD_RESIDUAL**2
    truth = {
        "d_z": 2 * TRUE_SLOPE / math.sqrt(var_diff),
        "g_av": 2 * TRUE_SLOPE / ((math.sqrt(var_pre) + math.sqrt(var_post)) / 2),
    }
    for measure, value in truth.items():
        hits = []
        for r in recovery:
            es = r.effect_sizes.set_index(["term", "measure"]).loc[("post - pre", measure)]
            hits.append(_covered(es["ci_low"], es["ci_high"], value))
        assert sum(hits) >= MIN_COVERED, (measure, sum(hits))


def test_growth_slope_and_intercept_are_recovered(recovery):
    for term, truth in (("time", TRUE_SLOPE), ("Intercept", TRUE_INTERCEPT)):
        rows = [r.growth_fixed.set_index("term").loc[term] for r in recovery]
        hits = [_covered(row["ci_low"], row["ci_high"], truth) for row in rows]
        assert sum(hits) >= MIN_COVERED, (term, sum(hits))
        assert abs(np.mean([row["estimate"] for row in rows]) - truth) < 0.05


def test_rm_anova_detects_the_wave_effect(recovery):
    # With a 0.4 per-wave change, residual SD 0.4 and n = 60 the power is essentially 1.
    assert all(r.rm_anova.loc[0, "p_value"] < 0.001 for r in recovery)
    assert all(r.friedman.loc[0, "p_value"] < 0.05 for r in recovery)


@pytest.mark.slow
def test_effect_size_intervals_have_nominal_coverage():
    # Rule fixed before running: seed 2024, 400 replications of n = 30 pairs, correlation 0.6;
    # coverage of each 95% interval within [0.915, 0.98] (about -2.8 and +2.5 binomial SEs).
    rng = np.random.default_rng(2024)
    n, reps, rho = 30, 400, 0.6
    mu = np.array([0.0, 0.5])
    sd = np.array([1.0, 1.4])
    cov = np.array([[1.0, rho * 1.4], [rho * 1.4, 1.96]])
    sd_diff = math.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    truth = {"d_z": 0.5 / sd_diff, "g_av": 0.5 / sd.mean()}
    hits = {"d_z": 0, "g_av": 0}
    for _ in range(reps):
        y = rng.multivariate_normal(mu, cov, size=n)
        data = pd.DataFrame(
            {"pid": np.repeat(np.arange(n), 2), "wave": np.tile(["a", "b"], n), "y": y.ravel()}
        )
        es = pairwise_changes(
            data, id_col="pid", wave_col="wave", outcome_col="y", waves=["a", "b"]
        ).effect_sizes.set_index("measure")
        for m in hits:
            hits[m] += _covered(es.loc[m, "ci_low"], es.loc[m, "ci_high"], truth[m])
    for m, h in hits.items():
        assert 0.915 <= h / reps <= 0.98, (m, h / reps)


# ---------------------------------------------------------------------------------------------
# Parts and options
# ---------------------------------------------------------------------------------------------
def test_describe_waves_by_hand():
    data = pd.DataFrame(
        {
            "pid": [1, 1, 2, 2, 3, 3, 4],
            "wave": ["pre", "post", "pre", "post", "pre", "post", "pre"],
            "score": [1.0, 2.0, 2.0, 4.0, 3.0, np.nan, 6.0],
        }
    )
    out = describe_waves(
        data, id_col="pid", wave_col="wave", outcome_col="score", waves=["pre", "post"]
    ).set_index("wave")
    assert out.loc["pre", "n"] == 4 and out.loc["post", "n"] == 2
    assert out.loc["post", "n_missing"] == 2
    assert_allclose(out.loc["pre", "mean"], 3.0)
    assert_allclose(out.loc["pre", "sd"], math.sqrt(14 / 3))
    assert_allclose(out.loc["post", "sd"], math.sqrt(2.0))
    assert_allclose(out.loc["pre", ["median", "min", "max"]].to_numpy(dtype=float), [2.5, 1, 6])
    wide = describe_waves(
        data,
        id_col="pid",
        wave_col="wave",
        outcome_col="score",
        waves=["pre", "post"],
        ci_level=0.99,
    ).set_index("wave")
    assert wide.loc["pre", "ci_high"] - wide.loc["pre", "ci_low"] > (
        out.loc["pre", "ci_high"] - out.loc["pre", "ci_low"]
    )


def test_integer_wave_labels_and_ids_and_a_tuple_of_waves():
    data = pd.DataFrame(
        {"pid": [7, 7, 8, 8, 9, 9], "wave": [2, 1, 1, 2, 1, 2], "y": [2.0, 1, 3, 5, 2, 5]}
    )
    cols = {"id_col": "pid", "wave_col": "wave", "outcome_col": "y", "waves": (1, 2)}
    tests = pairwise_changes(data, **cols).tests
    assert tests.loc[0, "term"] == "2 - 1"
    assert_allclose(tests.loc[0, "estimate"], np.mean([1.0, 2.0, 3.0]))
    assert describe_waves(data, **cols)["wave"].tolist() == [1, 2]


def test_describe_waves_with_one_observation_is_nan_without_numpy_warnings():
    data = pd.DataFrame({"pid": [1, 2, 1], "wave": ["pre", "pre", "post"], "score": [1, 2, 5]})
    out = describe_waves(
        data, id_col="pid", wave_col="wave", outcome_col="score", waves=["pre", "post"]
    ).set_index("wave")
    assert out.loc["post", "mean"] == 5.0
    assert np.isnan(out.loc["post", "sd"]) and np.isnan(out.loc["post", "ci_low"])


def test_holm_adjust_by_hand():
    assert_allclose(holm_adjust([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    assert_allclose(holm_adjust([0.5, 0.001]), [0.5, 0.002])
    out = holm_adjust([0.02, np.nan, 0.6])
    assert_allclose(out[[0, 2]], [0.04, 0.6])
    assert np.isnan(out[1])
    assert_allclose(holm_adjust([0.9, 0.8]), [1.0, 1.0])


def test_pairwise_ci_level_changes_every_interval(sim):
    a = pairwise_changes(sim, **COLS)
    b = pairwise_changes(sim, **COLS, ci_level=0.80)
    assert np.all(
        (b.tests["ci_high"] - b.tests["ci_low"]) < (a.tests["ci_high"] - a.tests["ci_low"])
    )
    width = lambda r: r.effect_sizes["ci_high"] - r.effect_sizes["ci_low"]  # noqa: E731
    assert np.all(width(b) < width(a))
    assert_allclose(a.tests["estimate"], b.tests["estimate"], rtol=1e-15)
    assert b.meta["parameters"]["ci_level"] == 0.80


def test_pair_without_variance_warns_and_is_nan():
    data = pd.DataFrame(
        {"pid": [1, 1, 2, 2, 3, 3], "wave": ["a", "b"] * 3, "y": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}
    )
    with pytest.warns(DataQualityWarning, match="no variance in change"):
        res = pairwise_changes(
            data, id_col="pid", wave_col="wave", outcome_col="y", waves=["a", "b"]
        )
    assert res.tests.loc[0, "estimate"] == 1.0
    assert np.isnan(res.tests.loc[0, "statistic"])


def test_rm_anova_with_too_few_complete_subjects_warns(sim_missing):
    data = sim_missing[sim_missing["pid"].isin(["p007", "p008"])]
    with pytest.warns(DataQualityWarning, match="needs at least 2"):
        res = rm_anova(data, **COLS)
    assert res.meta["n_used"] == 1 and res.meta["n_excluded"] == 1
    assert res.table["p_value"].isna().all()


def test_growth_model_falls_back_to_random_intercept_when_singular():
    # Every person has exactly the same OLS slope (residual pattern +e, -2e, +e is orthogonal to
    # intercept and slope), so the slope variance is estimated at zero.
    rng = np.random.default_rng(5)
    n = 30
    u0 = rng.normal(0, 1, n)
    e = rng.normal(0, 0.5, n)
    y = 2.0 + u0[:, None] + 0.3 * np.arange(3) + e[:, None] * np.array([1.0, -2.0, 1.0])
    data = pd.DataFrame({"pid": np.repeat(np.arange(n), 3), "wave": np.tile(WAVES, n)})
    data["score"] = y.ravel()
    with pytest.warns(DataQualityWarning, match="random intercept only"):
        res = growth_model(data, **COLS)
    assert res.meta["random_effects"] == "intercept"
    assert res.meta["fallback_reason"]
    assert res.meta["problems"] == []
    assert res.meta["formula"] == "score ~ time + (1 | pid)"
    assert res.random["term"].tolist() == ["Intercept", ""]
    assert_allclose(res.fixed.set_index("term").loc["time", "estimate"], 0.3, rtol=1e-6)


def test_growth_model_names_the_problem_of_the_model_it_returns():
    # No between-person variance at all: the intercept-only model is singular too, and says so.
    rng = np.random.default_rng(11)
    n = 12
    data = pd.DataFrame({"pid": np.repeat(np.arange(n), 3), "wave": np.tile(WAVES, n)})
    e = rng.normal(0, 1, (n, 3))
    data["score"] = (2.0 + e - e.mean(axis=1, keepdims=True)).ravel()  # equal person means
    with pytest.warns(DataQualityWarning, match="intercept model for 'score' is questionable"):
        res = growth_model(data, **COLS, random_slope=False)
    assert res.meta["problems"] == ["singular fit (a variance at zero or a correlation at +/-1)"]
    assert res.random.loc[0, "sd"] == 0.0


def test_random_intercept_growth_model_matches_the_balanced_closed_form(sim):
    # Balanced, complete data: the REML random-intercept slope equals the within-subject OLS
    # slope, sigma^2 = SSE_within / (n (k - 1) - 1) and se(slope) = sqrt(sigma^2 / (n Sxx)).
    res = growth_model(sim, **COLS, random_slope=False)
    assert res.meta["random_effects"] == "intercept"
    y = sim["score"].to_numpy().reshape(-1, 3)
    n = y.shape[0]
    t = np.arange(3.0) - 1.0
    yc = y - y.mean(axis=1, keepdims=True)
    slope = (yc @ t).sum() / (n * (t @ t))
    sse = ((yc - slope * t) ** 2).sum()
    sigma2 = sse / (n * 2 - 1)
    fixed = res.fixed.set_index("term")
    assert_allclose(fixed.loc["time", "estimate"], slope, rtol=1e-8)
    resid = res.random.set_index("group").loc["Residual", "variance"]
    assert_allclose(resid, sigma2, rtol=1e-5)  # REML optimizer tolerance
    assert_allclose(fixed.loc["time", "se"], math.sqrt(sigma2 / (n * (t @ t))), rtol=1e-5)
    # Satterthwaite df of a within-subject effect in the balanced random-intercept model is the
    # between-within df N - n - 1 (here 180 - 60 - 1)
    assert_allclose(fixed.loc["time", "df"], 3 * n - n - 1, rtol=1e-6)
    assert res.meta["inference"] == "t, Satterthwaite df"
    z = fixed.loc["time", "statistic"]
    assert_allclose(z, fixed.loc["time", "estimate"] / fixed.loc["time", "se"], rtol=1e-12)


def test_growth_time_coding_rescales_the_slope(sim):
    a = growth_model(sim, **COLS, random_slope=False)
    b = growth_model(sim, **COLS, random_slope=False, time={"pre": 0, "mid": 2, "post": 4})
    slope_a = a.fixed.set_index("term").loc["time", "estimate"]
    slope_b = b.fixed.set_index("term").loc["time", "estimate"]
    assert_allclose(slope_b, slope_a / 2, rtol=1e-6)
    assert b.meta["time_coding"] == {"pre": 0.0, "mid": 2.0, "post": 4.0}
    with pytest.raises(InvalidParameterError, match="time"):
        growth_model(sim, **COLS, time={"pre": 0, "post": 1})


def test_the_removed_backend_parameter_is_refused(sim):
    with pytest.raises(TypeError, match="backend"):
        growth_model(sim, **COLS, backend="lmm")
    with pytest.raises(TypeError, match="backend"):
        change_analysis(sim, **COLS, backend="lmm")


def test_reliable_change_by_hand_and_direction():
    data = pd.DataFrame(
        {
            "pid": [1, 1, 2, 2, 3, 3, 4, 4, 5],
            "wave": ["pre", "post"] * 4 + ["pre"],
            "score": [10.0, 16.0, 12.0, 12.5, 14.0, 8.0, 16.0, 17.0, 18.0],
        }
    )
    cols = {"id_col": "pid", "wave_col": "wave", "outcome_col": "score"}
    res = reliable_change(data, **cols, waves=["pre", "post"], reliability=0.8)
    sd_pre = np.std([10.0, 12.0, 14.0, 16.0, 18.0], ddof=1)
    s_diff = sd_pre * math.sqrt(2) * math.sqrt(0.2)
    assert_allclose(res.meta["s_diff"], s_diff, rtol=1e-14)
    assert_allclose(res.people["rci"], np.array([6.0, 0.5, -6.0, 1.0]) / s_diff, rtol=1e-14)
    assert res.people["category"].tolist() == ["improved", "unchanged", "deteriorated", "unchanged"]
    assert res.meta["n"] == 4 and res.meta["n_excluded"] == 1 and res.meta["excluded_ids"] == [5]
    assert_allclose(res.meta["criterion"], 1.959963984540054, rtol=1e-12)
    counts = res.counts.set_index("category")
    assert counts["n"].tolist() == [1, 2, 1]
    assert_allclose(counts["proportion"].to_numpy(dtype=float), [0.25, 0.5, 0.25])

    lower = reliable_change(
        data, **cols, waves=["pre", "post"], reliability=0.8, higher_is_better=False
    )
    assert lower.people["category"].tolist() == [
        "deteriorated",
        "unchanged",
        "improved",
        "unchanged",
    ]
    # a looser criterion (ci_level 0.50: z = 0.674) turns small changes into reliable ones
    # with r = 0.95, S_diff = 1: RCIs 6, 0.5, -6, 1; the 0.50 criterion (z = 0.674) makes the
    # change of 1 reliable, the 0.95 criterion (z = 1.96) does not
    strict = reliable_change(data, **cols, waves=["pre", "post"], reliability=0.95)
    loose = reliable_change(data, **cols, waves=["pre", "post"], reliability=0.95, ci_level=0.5)
    assert_allclose(loose.meta["s_diff"], 1.0, rtol=1e-14)
    assert strict.people["category"].tolist()[3] == "unchanged"
    assert loose.people["category"].tolist()[3] == "improved"
    # a normative SD replaces the sample SD
    normed = reliable_change(data, **cols, waves=["pre", "post"], reliability=0.8, sd_baseline=2.0)
    assert_allclose(normed.meta["s_diff"], 2.0 * math.sqrt(2) * math.sqrt(0.2), rtol=1e-14)
    assert normed.meta["sd_baseline_source"] == "given"
    alpha = reliable_change(
        data, **cols, waves=["pre", "post"], reliability=0.84, reliability_kind="alpha"
    )
    assert alpha.meta["reliability_source"] == "Cronbach's alpha at pre = 0.84 (given)"


def test_reliable_change_compares_chosen_waves(sim):
    a = reliable_change(sim, **COLS, reliability=0.7)
    b = reliable_change(sim, **COLS, reliability=0.7, from_wave="pre", to_wave="mid")
    assert a.meta["parameters"]["to_wave"] == "post"
    mid = sim[sim["wave"] == "mid"].set_index("pid")["score"]
    assert_allclose(b.people.set_index("id")["followup"], mid.loc[b.people["id"]])
    assert not np.allclose(a.people["rci"], b.people["rci"])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "exactly one"),
        ({"reliability": 0.8, "baseline_items": pd.DataFrame({"pid": []})}, "exactly one"),
        ({"reliability": 1.0}, r"\[0, 1\)"),
        ({"reliability": -0.1}, r"\[0, 1\)"),
        ({"reliability": True}, r"\[0, 1\)"),
        ({"reliability": 0.8, "reliability_kind": "omega"}, "reliability_kind"),
        ({"reliability": 0.8, "from_wave": "baseline"}, "from_wave"),
        ({"reliability": 0.8, "from_wave": "post", "to_wave": "post"}, "must differ"),
        ({"baseline_items": pd.DataFrame({"pid": [1], "i1": [1]})}, "at least two"),
        (
            {"baseline_items": pd.DataFrame({"pid": [1, 2], "i1": [1.0, np.inf], "i2": [1.0, 2]})},
            "finite",
        ),
        (
            {"baseline_items": pd.DataFrame({"pid": [1, 2], "i1": [1.0, np.nan], "i2": [1.0, 2]})},
            "cannot be computed",
        ),
        ({"reliability": 0.8, "higher_is_better": "yes"}, "higher_is_better"),
    ],
)
def test_reliable_change_rejects_bad_parameters(sim, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        reliable_change(sim, **COLS, **kwargs)


def test_reliable_change_alpha_from_items_by_hand():
    # Two items with variances 2/3 and 2/3 and total variance 2 (cov 1/3): alpha = 2/3
    items = pd.DataFrame({"pid": [1, 2, 3, 4], "i1": [1.0, 2, 3, 2], "i2": [1.0, 3, 2, 2]})
    x = items[["i1", "i2"]].to_numpy()
    expected = 2 * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))
    data = pd.DataFrame(
        {
            "pid": [1, 1, 2, 2, 3, 3, 4, 4],
            "wave": ["pre", "post"] * 4,
            "score": [1, 2, 2.5, 2, 2.5, 3, 2, 2],
        }
    )
    res = reliable_change(
        data,
        id_col="pid",
        wave_col="wave",
        outcome_col="score",
        waves=["pre", "post"],
        baseline_items=items,
    )
    assert_allclose(res.meta["reliability"], expected, rtol=1e-14)
    assert (
        res.meta["reliability_source"]
        == f"Cronbach's alpha at pre = {expected:.2f} (2 items, n = 4)"
    )
    assert res.meta["parameters"]["reliability_kind"] == "alpha"


def test_reliable_change_warns_when_alpha_is_not_positive():
    # Two items that disagree: variances 2/3 and 35/48, total variance 1/16, so
    # alpha = 2 (1 - (2/3 + 35/48) / (1/16)) = -128/3
    items = pd.DataFrame({"pid": [1, 2, 3, 4], "i1": [1.0, 2, 3, 2], "i2": [3.0, 2, 1, 1.5]})
    data = pd.DataFrame(
        {
            "pid": [1, 1, 2, 2, 3, 3, 4, 4],
            "wave": ["pre", "post"] * 4,
            "score": [1, 2, 2.5, 2, 2.5, 3, 2, 2],
        }
    )
    with pytest.warns(DataQualityWarning, match="internal consistency"):
        res = reliable_change(
            data,
            id_col="pid",
            wave_col="wave",
            outcome_col="score",
            waves=["pre", "post"],
            baseline_items=items,
        )
    assert_allclose(res.meta["reliability"], -128 / 3, rtol=1e-12)


def test_change_result_fields_are_always_present_and_frozen(sim):
    res = change_analysis(sim, **COLS)
    for f in dataclasses.fields(ChangeResult):
        value = getattr(res, f.name)
        assert isinstance(value, dict if f.name == "meta" else pd.DataFrame), f.name
    assert res.reliable_change.empty and list(res.reliable_change.columns) == [
        "id",
        "baseline",
        "followup",
        "change",
        "rci",
        "category",
    ]
    assert res.reliable_change_counts.empty
    assert res.meta["reliability_source"].startswith("not computed")
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.meta = {}  # type: ignore[misc]
    assert set(res.pairwise.columns) >= {
        "term",
        "estimate",
        "se",
        "df",
        "statistic",
        "p_value",
        "ci_low",
        "ci_high",
        "n",
    }
    assert list(res.growth_fixed.columns) == [
        "term",
        "estimate",
        "se",
        "df",
        "statistic",
        "p_value",
        "ci_low",
        "ci_high",
    ]


def test_change_analysis_with_items_states_the_reliability_source(sim):
    rng = np.random.default_rng(8)
    pre = sim[sim["wave"] == "pre"].reset_index(drop=True)
    items = pd.DataFrame({"pid": pre["pid"]})
    for j in range(4):
        items[f"i{j}"] = pre["score"] + rng.normal(0, 0.5, len(pre))
    res = change_analysis(sim, **COLS, baseline_items=items, higher_is_better=False)
    source = res.meta["reliability_source"]
    assert source.startswith("Cronbach's alpha at pre = ") and "(4 items, n = 60)" in source
    assert res.meta["reliable_change"]["higher_is_better"] is False
    assert int(res.reliable_change_counts["n"].sum()) == 60


def test_change_result_prints_one_short_line():
    df = pd.DataFrame(
        {"id": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4], "wave": ["pre", "mid", "post"] * 4,
         "score": [2.0, 2.5, 3.5, 3.0, 3.0, 4.0, 2.5, 3.5, 3.5, 4.0, 4.5, 5.0]}
    )  # fmt: skip
    with package_warnings():
        result = change_analysis(df, id_col="id", wave_col="wave", outcome_col="score",
                                 waves=["pre", "mid", "post"])  # fmt: skip
    text = repr(result)
    assert text.startswith("ChangeResult('score': waves pre, mid, post; RM-ANOVA F = ")
    assert "\n" not in text and "DataFrame" not in text


def test_growth_model_formula_writes_odd_column_names_in_backticks():
    rng = np.random.default_rng(5)
    n = 30
    person, outcome = "pid) + (1 | x", "score ~ y"
    data = pd.DataFrame({person: np.repeat(np.arange(n), 3), "wave": np.tile(WAVES, n)})
    data[outcome] = (
        rng.normal(size=n)[:, None] + 0.3 * np.arange(3) + rng.normal(size=(n, 3))
    ).ravel()
    res = growth_model(data, id_col=person, wave_col="wave", outcome_col=outcome, waves=WAVES)
    from models.formula import parse_formula

    spec = parse_formula(res.meta["formula"])
    assert spec.response == outcome and spec.fixed == "time"
    assert [t.factors for t in spec.random] == [(person,)]
