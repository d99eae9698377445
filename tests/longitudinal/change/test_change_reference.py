"""longitudinal.change against R on real data (values from tests/longitudinal/reference/change.R).

R wrote every value with 15 significant digits. Closed-form statistics (ANOVA, Mauchly,
epsilons, t-tests, Friedman, Holm, reliable change) are compared at rtol 1e-9; the d_z limits
come from two root finders (R's uniroot on pt, SciPy's brentq on nct.cdf) and are compared at
1e-6; the growth model is an iterative REML fit whose optimizer tolerance sets the looser
bound stated at that test.
"""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from longitudinal._errors import DataQualityWarning
from longitudinal.change import (
    friedman_test,
    growth_model,
    pairwise_changes,
    reliable_change,
    rm_anova,
)

HERE = Path(__file__).resolve().parents[1]
DATA = HERE.parent / "data"
REFERENCE = pd.read_csv(HERE / "reference" / "change_reference.csv", comment="#")
PHASES = ["pre", "post", "fup"]
PHASES_SIM = ["pre", "mid", "post"]
CLOSED_FORM = 1e-9


def ref(dataset, analysis, term, quantity):
    hit = REFERENCE[
        (REFERENCE["dataset"] == dataset)
        & (REFERENCE["analysis"] == analysis)
        & (REFERENCE["term"] == term)
        & (REFERENCE["quantity"] == quantity)
    ]
    assert len(hit) == 1, (dataset, analysis, term, quantity)
    return float(hit["value"].iloc[0])


def _obk_long():
    return pd.read_csv(DATA / "carData_OBrienKaiserLong.csv")


def obk_phase(missing=False):
    """OBrienKaiser averaged over the five hours: one row per subject and phase."""
    df = _obk_long().groupby(["id", "phase"], as_index=False)["score"].mean()
    df = df.sort_values(["id", "phase"], key=lambda s: s.map({p: i for i, p in enumerate(PHASES)}))
    if missing:  # as in change.R: subject 1 lacks 'fup', subject 5 lacks 'post'
        df.loc[(df["id"] == 1) & (df["phase"] == "fup"), "score"] = np.nan
        df.loc[(df["id"] == 5) & (df["phase"] == "post"), "score"] = np.nan
    return df.reset_index(drop=True)


def obk_hour():
    df = _obk_long().groupby(["id", "hour"], as_index=False)["score"].mean()
    df["hour"] = "h" + df["hour"].astype(str)
    return df


def sleep():
    df = pd.read_csv(DATA / "datasets_sleep.csv")
    df["group"] = "g" + df["group"].astype(str)
    return df


def anorexia(treat):
    df = pd.read_csv(DATA / "MASS_anorexia.csv")
    df = df[df["Treat"] == treat].reset_index(drop=True)
    df["row"] = np.arange(1, len(df) + 1)
    long = df.melt(
        id_vars=["row"], value_vars=["Prewt", "Postwt"], var_name="wave", value_name="wt"
    )
    long["wave"] = long["wave"].map({"Prewt": "pre", "Postwt": "post"})
    return long


def affect(scale):
    df = pd.read_csv(DATA / "psychTools_affect.csv", keep_default_na=False, na_values=[""])
    df["person"] = np.arange(len(df))
    long = df.melt(
        id_vars=["person"], value_vars=[f"{scale}1", f"{scale}2"], var_name="wave", value_name="y"
    )
    long["wave"] = long["wave"].map({f"{scale}1": "pre", f"{scale}2": "post"})
    return long


DESIGNS = {
    "obk_phase": (lambda: obk_phase(), "id", "phase", "score", PHASES),
    "obk_phase_missing": (lambda: obk_phase(missing=True), "id", "phase", "score", PHASES),
    "obk_hour": (obk_hour, "id", "hour", "score", ["h1", "h2", "h3", "h4", "h5"]),
    "sleep": (sleep, "ID", "group", "extra", ["g1", "g2"]),
    **{
        f"anorexia_{t}": ((lambda t=t: anorexia(t)), "row", "wave", "wt", ["pre", "post"])
        for t in ("CBT", "Cont", "FT")
    },
    **{
        f"affect_{s}": ((lambda s=s: affect(s)), "person", "wave", "y", ["pre", "post"])
        for s in ("EA", "TA", "PA", "NA")
    },
}


def design(name):
    make, subject, wave, outcome, waves = DESIGNS[name]
    return make(), {
        "id_col": subject,
        "wave_col": wave,
        "outcome_col": outcome,
        "waves": waves,
    }


def test_obk_long_and_wide_files_agree():
    wide = pd.read_csv(DATA / "carData_OBrienKaiser.csv")
    expected = np.column_stack(
        [wide[[f"{p}.{h}" for h in range(1, 6)]].mean(axis=1) for p in PHASES]
    )
    got = obk_phase().pivot(index="id", columns="phase", values="score")[PHASES].to_numpy()
    assert_allclose(got, expected, rtol=1e-15)


@pytest.mark.parametrize("name", ["obk_phase", "obk_hour", "obk_phase_missing"])
def test_rm_anova_matches_car_anova(name):
    data, cols = design(name)
    res = rm_anova(data, **cols)
    table = res.table.set_index("correction")
    none, gg, hf = table.loc["none"], table.loc["greenhouse-geisser"], table.loc["huynh-feldt"]
    r = lambda q: ref(name, "rm_anova", "wave", q)  # noqa: E731
    assert none["n"] == r("n")
    assert_allclose(none["ss_effect"], r("ss_effect"), rtol=CLOSED_FORM)
    assert_allclose(none["ss_error"], r("ss_error"), rtol=CLOSED_FORM)
    assert_allclose(none["ss_subjects"], r("ss_subjects"), rtol=CLOSED_FORM)
    assert_allclose(none["df1"], r("df1"), rtol=CLOSED_FORM)
    assert_allclose(none["df2"], r("df2"), rtol=CLOSED_FORM)
    assert_allclose(none["statistic"], r("F"), rtol=CLOSED_FORM)
    assert_allclose(none["p_value"], r("p_value"), rtol=CLOSED_FORM)
    sph = res.sphericity.iloc[0]
    assert_allclose(sph["statistic"], r("mauchly_W"), rtol=CLOSED_FORM)
    assert_allclose(sph["statistic"], r("stats_mauchly_W"), rtol=CLOSED_FORM)
    assert_allclose(sph["p_value"], r("mauchly_p"), rtol=CLOSED_FORM)
    assert_allclose(sph["p_value"], r("stats_mauchly_p"), rtol=CLOSED_FORM)
    assert_allclose(sph["chi2"], r("mauchly_chi2"), rtol=CLOSED_FORM)
    assert_allclose(sph["df"], r("mauchly_df"), rtol=CLOSED_FORM)
    assert_allclose(sph["gg_epsilon"], r("gg_epsilon"), rtol=CLOSED_FORM)
    assert_allclose(sph["hf_epsilon"], r("hf_epsilon"), rtol=CLOSED_FORM)
    assert_allclose(gg["epsilon"], r("gg_epsilon"), rtol=CLOSED_FORM)
    assert_allclose(gg["df1"], r("gg_epsilon") * r("df1"), rtol=CLOSED_FORM)
    assert_allclose(gg["df2"], r("gg_epsilon") * r("df2"), rtol=CLOSED_FORM)
    assert_allclose(gg["p_value"], r("gg_p_value"), rtol=CLOSED_FORM)
    assert_allclose(hf["epsilon"], min(1.0, r("hf_epsilon")), rtol=CLOSED_FORM)
    assert_allclose(hf["p_value"], r("hf_p_value"), rtol=CLOSED_FORM)
    assert_allclose(
        none["eta_sq_generalized"],
        r("ss_effect") / (r("ss_effect") + r("ss_subjects") + r("ss_error")),
        rtol=CLOSED_FORM,
    )
    assert_allclose(
        none["eta_sq_partial"], r("ss_effect") / (r("ss_effect") + r("ss_error")), rtol=CLOSED_FORM
    )


def test_rm_anova_counts_out_the_two_incomplete_obk_subjects():
    data, cols = design("obk_phase_missing")
    res = rm_anova(data, **cols)
    assert res.meta["n_used"] == 14
    assert res.meta["n_excluded"] == 2
    assert sorted(res.meta["excluded_ids"]) == [1, 5]
    assert res.excluded.set_index("id").loc[1, "missing_waves"] == "fup"
    assert res.excluded.set_index("id").loc[5, "missing_waves"] == "post"


def test_rm_anova_two_waves_is_the_squared_paired_t():
    data, cols = design("sleep")
    res = rm_anova(data, **cols)
    row = res.table.iloc[0]
    assert_allclose(row["statistic"], ref("sleep", "rm_anova", "wave", "F"), rtol=CLOSED_FORM)
    assert_allclose(row["p_value"], ref("sleep", "rm_anova", "wave", "p_value"), rtol=CLOSED_FORM)
    assert_allclose(
        row["statistic"], ref("sleep", "pairwise", "g2 - g1", "statistic") ** 2, rtol=CLOSED_FORM
    )
    sph = res.sphericity.iloc[0]
    assert sph["statistic"] == 1.0 and sph["gg_epsilon"] == 1.0 and sph["hf_epsilon"] == 1.0
    assert np.isnan(sph["p_value"])


PAIRWISE_DESIGNS = [
    "obk_phase",
    "obk_phase_missing",
    "sleep",
    "anorexia_CBT",
    "anorexia_Cont",
    "anorexia_FT",
    "affect_EA",
    "affect_TA",
    "affect_PA",
    "affect_NA",
]


@pytest.mark.parametrize("name", PAIRWISE_DESIGNS)
def test_paired_t_tests_match_t_test(name):
    data, cols = design(name)
    res = pairwise_changes(data, **cols)
    expected_terms = REFERENCE.query("dataset == @name and analysis == 'pairwise'")["term"]
    assert list(res.tests["term"]) == list(dict.fromkeys(expected_terms))
    for row in res.tests.itertuples():
        for col in ("estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high", "n"):
            (
                assert_allclose(
                    getattr(row, col), ref(name, "pairwise", row.term, col), rtol=CLOSED_FORM
                ),
                col,
            )
        if len(res.tests) > 1:
            assert_allclose(row.p_holm, ref(name, "pairwise", row.term, "p_holm"), rtol=CLOSED_FORM)
        else:
            assert row.p_holm == row.p_value


@pytest.mark.parametrize("name", PAIRWISE_DESIGNS)
def test_effect_sizes_match_r(name):
    data, cols = design(name)
    sizes = pairwise_changes(data, **cols).effect_sizes
    for row in sizes.itertuples():
        assert_allclose(
            row.estimate, ref(name, row.measure, row.term, "estimate"), rtol=CLOSED_FORM
        )
        if row.measure == "d_z":
            # two independent root finders on two noncentral-t implementations
            assert ref(name, "d_z", row.term, "pt_precision_warnings_at_root") == 0
            assert_allclose(row.ci_low, ref(name, "d_z", row.term, "ci_low"), rtol=1e-6)
            assert_allclose(row.ci_high, ref(name, "d_z", row.term, "ci_high"), rtol=1e-6)
        else:
            for col in ("se", "ci_low", "ci_high"):
                assert_allclose(
                    getattr(row, col), ref(name, "g_av", row.term, col), rtol=CLOSED_FORM
                )


def test_published_paired_tests_reproduce():
    """The values printed in /work/shared/reference/reference_values_R.txt (R's own print)."""
    data, cols = design("sleep")
    got = pairwise_changes(data, **cols).tests.iloc[0]
    # R prints t = -4.06213 (group 1 - group 2) and p = 0.0028329; we report group 2 - group 1
    assert_allclose(got["statistic"], 4.06213, atol=5e-6)
    assert_allclose(got["p_value"], 0.0028329, atol=5e-8)
    assert_allclose([got["ci_low"], got["ci_high"]], [0.70011424, 2.45988576], atol=5e-9)
    printed = {"CBT": (2.2155878, 0.035022598), "Cont": (-0.28722539, 0.77630706)}
    printed["FT"] = (4.1849081, 0.00070025311)
    for treat, (t, p) in printed.items():
        data, cols = design(f"anorexia_{treat}")
        row = pairwise_changes(data, **cols).tests.iloc[0]
        assert_allclose(row["statistic"], t, rtol=1e-7)
        assert_allclose(row["p_value"], p, rtol=1e-7)


@pytest.mark.parametrize("name", ["obk_phase", "obk_hour"])
def test_friedman_matches_friedman_test(name):
    data, cols = design(name)
    row = friedman_test(data, **cols).iloc[0]
    for col in ("statistic", "df", "p_value", "kendall_w", "n"):
        assert_allclose(row[col], ref(name, "friedman", "wave", col), rtol=CLOSED_FORM)


@pytest.mark.parametrize("scale", ["EA", "TA", "PA", "NA"])
def test_friedman_two_waves_affect(scale):
    data, cols = design(f"affect_{scale}")
    row = friedman_test(data, **cols).iloc[0]
    name = f"affect_{scale}"
    assert_allclose(row["statistic"], ref(name, "friedman", "wave", "statistic"), rtol=CLOSED_FORM)
    assert_allclose(row["p_value"], ref(name, "friedman", "wave", "p_value"), rtol=CLOSED_FORM)


# Relative tolerances per fit. Each fit is iterative (lme4: bobyqa; lmm: mixedlm's L-BFGS-B with
# exact gradients; statsmodels, the cross-check: BFGS to gradient 1e-10) and lmerTest's df come
# from numerical derivatives. Largest differences seen: lmm 2e-8 (estimates, SEs), 6e-7
# (variance components), 4e-8 (df); statsmodels 2e-6, 6e-5 and 8e-6.
GROWTH_TOL = {
    "lmm": {"fixed": 1e-6, "df": 1e-5, "variance": 1e-5},
    "statsmodels": {"fixed": 1e-5, "df": 1e-4, "variance": 5e-4},
}


@pytest.mark.parametrize("backend", ["lmm"])
@pytest.mark.parametrize("name", ["obk_phase", "obk_phase_missing"])
def test_growth_model_matches_lmer_reml(name, backend):
    data, cols = design(name)
    res = growth_model(data, **cols)
    tol = GROWTH_TOL[backend]
    assert res.meta["backend"] == backend
    assert res.meta["random_effects"] == "intercept + slope"
    assert res.meta["inference"] == "t, Satterthwaite df"
    assert ref(name, "growth", "model", "singular") == 0
    assert res.meta["n_obs"] == ref(name, "growth", "model", "n_obs")
    assert res.meta["n_subjects"] == ref(name, "growth", "model", "n_subjects")
    # the criterion is flat at the optimum: far less sensitive to the stopping point
    assert_allclose(
        res.meta["reml_criterion"], ref(name, "growth", "model", "reml_criterion"), rtol=1e-10
    )
    fixed = res.fixed.set_index("term")
    for term in ("Intercept", "time"):
        for col in ("estimate", "se", "statistic"):
            expected = ref(name, "growth", term, col)
            assert_allclose(fixed.loc[term, col], expected, rtol=tol["fixed"])
        assert_allclose(fixed.loc[term, "df"], ref(name, "growth", term, "df"), rtol=tol["df"])
        # p depends on t and df; the df tolerance dominates
        expected_p = ref(name, "growth", term, "p_value")
        assert_allclose(fixed.loc[term, "p_value"], expected_p, rtol=100 * tol["df"])
    rand = res.random.set_index(["group", "term"])
    pairs = [
        (("id", "Intercept"), "variance", "id: Intercept"),
        (("id", "time"), "variance", "id: time"),
        (("id", "time"), "correlation", "id: Intercept, time"),
        (("Residual", ""), "variance", "Residual"),
    ]
    for row, col, term in pairs:
        quantity = "correlation" if col == "correlation" else "variance"
        expected = ref(name, "growth", term, quantity)
        assert_allclose(rand.loc[row, col], expected, rtol=tol["variance"])


@pytest.mark.parametrize("name", ["obk_phase", "obk_phase_missing"])
def test_growth_model_cross_checked_by_statsmodels_mixedlm(name):
    # statsmodels is no engine of the package; its REML fit of the same model is a second,
    # independent check of the estimates (tolerances: GROWTH_TOL["statsmodels"], above)
    from statsmodels.regression.mixed_linear_model import MixedLM

    data, cols = design(name)
    res = growth_model(data, **cols)
    long = data.dropna(subset=[cols["outcome_col"]])
    t = long[cols["wave_col"]].map({w: float(i) for i, w in enumerate(cols["waves"])})
    x = np.column_stack([np.ones(len(long)), t.to_numpy(dtype=float)])
    with warnings.catch_warnings():
        # statsmodels reports a failed convergence at gradient 0 here; the values are checked
        warnings.simplefilter("ignore")
        sm = MixedLM(
            long[cols["outcome_col"]].to_numpy(dtype=float),
            x,
            groups=long[cols["id_col"]].to_numpy(),
            exog_re=x,
        ).fit(reml=True, method=["lbfgs"], pgtol=1e-10, factr=10)
    tol = GROWTH_TOL["statsmodels"]
    fixed = res.fixed.set_index("term")
    assert_allclose(fixed["estimate"], np.asarray(sm.fe_params), rtol=tol["fixed"])
    # (statsmodels' bse_fe come from its full observed information, not the GLS covariance
    # that lme4 reports, and differ by 0.3 % with a missing wave: not compared)
    rand = res.random.set_index(["group", "term"])
    assert_allclose(rand.loc[("Residual", ""), "variance"], sm.scale, rtol=tol["variance"])
    assert_allclose(
        rand.loc[("id", "time"), "variance"], np.asarray(sm.cov_re)[1, 1], rtol=tol["variance"]
    )


SIMULATED = pd.read_csv(
    HERE / "reference" / "growth_simulated.csv", comment="#", float_precision="round_trip"
)


@pytest.mark.parametrize("seed", sorted(SIMULATED["seed"].unique()))
def test_growth_model_singular_fallback_matches_lme4_is_singular(seed):
    name = f"sim_seed{seed}"
    data = SIMULATED[SIMULATED["seed"] == seed].drop(columns="seed")
    cols = {"id_col": "pid", "wave_col": "wave", "outcome_col": "score"}
    singular = ref(name, "growth", "model", "singular") == 1
    if singular:
        with pytest.warns(DataQualityWarning, match="random intercept only"):
            res = growth_model(data, **cols, waves=PHASES_SIM)
        assert res.meta["random_effects"] == "intercept"
    else:
        res = growth_model(data, **cols, waves=PHASES_SIM)
        assert res.meta["random_effects"] == "intercept + slope"
    assert res.meta["backend"] == "lmm"
    assert_allclose(
        res.meta["reml_criterion"], ref(name, "growth", "model", "reml_criterion"), rtol=1e-9
    )
    fixed = res.fixed.set_index("term")
    for term in ("Intercept", "time"):
        for col, tol in (("estimate", 1e-6), ("se", 1e-5), ("df", 1e-5)):
            assert_allclose(fixed.loc[term, col], ref(name, "growth", term, col), rtol=tol)


def test_reliable_change_with_alpha_of_the_pre_items_matches_psych_alpha():
    wide = pd.read_csv(DATA / "carData_OBrienKaiser.csv")
    wide["id"] = np.arange(1, len(wide) + 1)
    items = wide[["id"] + [f"pre.{h}" for h in range(1, 6)]]
    data, cols = design("obk_phase")
    res = reliable_change(data, **cols, baseline_items=items, from_wave="pre", to_wave="fup")
    alpha = ref("obk_phase", "reliable_change", "alpha_pre", "estimate")
    assert_allclose(res.meta["reliability"], alpha, rtol=CLOSED_FORM)
    assert (
        res.meta["reliability_source"] == f"Cronbach's alpha at pre = {alpha:.2f} (5 items, n = 16)"
    )
    assert_allclose(
        res.meta["s_diff"],
        ref("obk_phase", "reliable_change", "s_diff", "estimate"),
        rtol=CLOSED_FORM,
    )
    expected = [ref("obk_phase", "reliable_change", f"id{i}", "rci") for i in range(1, 17)]
    assert_allclose(res.people.set_index("id").loc[range(1, 17), "rci"], expected, rtol=1e-9)
    counts = res.counts.set_index("category")["n"]
    for cat in ("improved", "unchanged", "deteriorated"):
        assert counts[cat] == ref("obk_phase", "reliable_change", cat, "n")


def test_reliable_change_with_given_retest_r_matches_r():
    data, cols = design("anorexia_CBT")
    res = reliable_change(data, **cols, reliability=0.80)
    assert res.meta["reliability_source"] == "test-retest r = 0.80 (given)"
    name = "anorexia_CBT"
    assert_allclose(
        res.meta["s_diff"], ref(name, "reliable_change", "s_diff", "estimate"), rtol=CLOSED_FORM
    )
    n = len(res.people)
    expected = [ref(name, "reliable_change", f"row{i}", "rci") for i in range(1, n + 1)]
    assert_allclose(res.people.set_index("id").loc[range(1, n + 1), "rci"], expected, rtol=1e-9)
    counts = res.counts.set_index("category")["n"]
    for cat in ("improved", "unchanged", "deteriorated"):
        assert counts[cat] == ref(name, "reliable_change", cat, "n")
