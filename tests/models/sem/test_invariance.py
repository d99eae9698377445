"""measurement_invariance against lavaan 0.6-14 + semTools 0.5-6 (reference/invariance.R).

Three real data sets from psychTools' ``sai`` (state anxiety items, 1-4): ``flat`` (study
FLAT, three waves, 167 complete participants), ``rim`` (study RIM, times 1 and 3, 334) and
``vale`` (study VALE, four waves, 67; under MLR its 78 parameters exceed the cases, so the
sandwich is singular and lavaan says so, yet its standard errors are defined and ours equal
them); each also with its incomplete participants by full-information ML. For the
four levels, ML and MLR: chi-square to 1e-3; CFI, TLI, RMSEA (and its interval), SRMR, the MLR
scaling factor to 1e-4; every estimate and standard error to 1e-4; the likelihood-ratio and
Satorra-Bentler differences to 1e-3; lavTestScore's univariate statistics and the partial
model freeing the worst constraint to 1e-3.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models import InvalidParameterError
from models.sem import InvarianceResult, invariance_tables, measurement_invariance
from models.sem._fit import fit_level
from models.sem._ladder_ml import _names, _score_tests
from models.sem._ml import MLProblem
from models.sem._spec import LEVELS, build_spec
from models.sem.invariance import INVARIANCE_CSV_COLUMNS

HERE = Path(__file__).resolve().parents[1]  # tests/models: its reference/ and ../data
DATA = HERE.parent / "data"
REF = HERE / "reference"

SETS = {
    "flat": ["tense", "anxious", "nervous", "jittery"],
    "rim": ["calm", "at.ease", "relaxed", "content"],
    "vale": ["calm", "at.ease", "relaxed", "content"],
}


@pytest.fixture(autouse=True)
def one_blas_thread():
    # the private fits called directly below run as measurement_invariance runs them
    from models.sem._blas import controller

    with controller().limit(limits=1, user_api="blas"):
        yield


def _data(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"psychTools_sai_{name}.csv")


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str], InvarianceResult]:
    out = {}
    for name, items in SETS.items():
        for est in ("ML", "MLR"):
            out[name, est] = measurement_invariance(
                _data(name), items=items, id_col="id", wave_col="time", estimator=est
            )
    return out


@pytest.fixture(scope="module")
def ref_fits() -> pd.DataFrame:
    return pd.read_csv(REF / "invariance_fits.csv")


CASES = [(name, est, level) for name in SETS for est in ("ML", "MLR") for level in LEVELS]


@pytest.mark.parametrize(("name", "est", "level"), CASES)
def test_fit_measures_match_lavaan(results, ref_fits, name, est, level):
    row = results[name, est].fits.set_index("model").loc[level]
    ref = ref_fits.query("dataset == @name and estimator == @est and level == @level").iloc[0]
    assert row["converged"] and bool(ref["converged"])
    assert row["n"] == ref["n"]
    assert row["npar"] == ref["npar"]
    assert row["df"] == ref["df"]
    assert row["chisq_ml"] == pytest.approx(ref["chisq"], abs=1e-3)
    assert row["p_value_ml"] == pytest.approx(ref["pvalue"], abs=1e-4)
    assert row["srmr"] == pytest.approx(ref["srmr"], abs=1e-4)
    assert row["loglik"] == pytest.approx(ref["logl"], abs=1e-3)
    assert row["aic"] == pytest.approx(ref["aic"], abs=1e-3)
    assert row["bic"] == pytest.approx(ref["bic"], abs=1e-3)
    suffix = ".scaled" if est == "MLR" else ""
    assert row["chisq"] == pytest.approx(ref["chisq" + suffix], abs=1e-3)
    assert row["p_value"] == pytest.approx(ref["pvalue" + suffix], abs=1e-4)
    for ours, theirs in [
        ("cfi", "cfi"),
        ("tli", "tli"),
        ("rmsea", "rmsea"),
        ("rmsea_ci_low", "rmsea.ci.lower"),
        ("rmsea_ci_high", "rmsea.ci.upper"),
    ]:
        assert row[ours] == pytest.approx(ref[theirs + suffix], abs=1e-4), ours
    if est == "MLR":
        assert row["scaling_factor"] == pytest.approx(ref["chisq.scaling.factor"], abs=1e-4)
    else:
        assert np.isnan(row["scaling_factor"])
    _check_scaled_and_robust(row, ref, est)


SCALED = [
    ("cfi_scaled", "cfi.scaled"),
    ("tli_scaled", "tli.scaled"),
    ("rmsea_scaled", "rmsea.scaled"),
    ("cfi_robust", "cfi.robust"),
    ("tli_robust", "tli.robust"),
    ("rmsea_robust", "rmsea.robust"),
]


def _check_scaled_and_robust(
    row: pd.Series, ref: pd.Series, est: str, *, fiml: bool = False
) -> None:
    """The explicitly named scaled and robust columns: lavaan's under MLR, NaN under ML.

    Under full-information ML lavaan 0.6-14 corrects the robust indices another way, which is
    not reproduced: they are NaN there.
    """
    if est == "ML":
        assert row[["chisq_scaled", "df_scaled", *(s[0] for s in SCALED)]].isna().all()
        return
    assert row["chisq_scaled"] == pytest.approx(ref["chisq.scaled"], abs=1e-3)
    assert row["df_scaled"] == ref["df.scaled"]
    assert row["p_value_scaled"] == pytest.approx(ref["pvalue.scaled"], abs=1e-4)
    for ours, theirs in SCALED:
        if fiml and ours.endswith("_robust"):
            assert np.isnan(row[ours]) and not np.isnan(ref[theirs]), ours
        else:
            assert row[ours] == pytest.approx(ref[theirs], abs=1e-4), ours
    # the decision columns hold the scaled statistics under MLR
    assert (row["chisq"], row["cfi"], row["rmsea"]) == (
        row["chisq_scaled"],
        row["cfi_scaled"],
        row["rmsea_scaled"],
    )


@pytest.mark.parametrize(("name", "est", "level"), CASES)
def test_estimates_and_standard_errors_match_lavaan(results, name, est, level):
    ref = pd.read_csv(REF / "invariance_params.csv", keep_default_na=False, na_values=["NA"])
    ref = ref.query("dataset == @name and estimator == @est and level == @level")
    ref = ref.rename(columns={"est": "ref_est", "se": "ref_se"})
    ours = results[name, est].parameters.query("model == @level")
    # lavaan names the variables item.time and the factors F.time, as the defaults here do
    merged = ours.merge(ref, on=["lhs", "op", "rhs"], how="outer", indicator=True)
    assert (merged["_merge"] == "both").all(), merged.loc[merged["_merge"] != "both"]
    np.testing.assert_allclose(merged["estimate"], merged["ref_est"], atol=1e-4)
    free = merged["free"].astype(bool)
    np.testing.assert_allclose(merged.loc[free, "se"], merged.loc[free, "ref_se"], atol=1e-4)
    assert (merged.loc[~free, "ref_se"] == 0).all()


def test_likelihood_ratio_and_scaled_differences_match_lavaan(results):
    ref = pd.read_csv(REF / "invariance_lrt.csv").query("not estimator.str.startswith('FIML')")
    for rec in ref.itertuples():
        row = results[rec.dataset, rec.estimator].fits.set_index("model").loc[rec.level]
        assert row["lrt_chisq"] == pytest.approx(rec.chisq_diff, abs=1e-3)
        assert row["lrt_df"] == rec.df_diff
        assert row["lrt_p"] == pytest.approx(rec.p, abs=1e-4)
        # delta_* name the same test as under WLSMV
        assert (row["delta_chisq"], row["delta_df"], row["delta_p"]) == (
            row["lrt_chisq"],
            row["lrt_df"],
            row["lrt_p"],
        )


def _wide_array(data: pd.DataFrame, items: list[str]) -> tuple[np.ndarray, list[int]]:
    waves = sorted(data["time"].unique())
    wide = data.set_index(["id", "time"])[items].unstack("time")
    return wide.reindex(columns=[(i, w) for w in waves for i in items]).to_numpy(float), waves


@pytest.mark.parametrize(
    ("name", "est"), [(name, est) for name in SETS for est in ("ML", "MLR", "FIML")]
)
def test_score_tests_match_lavtestscore(name, est):
    dataset = f"{name}_all" if est == "FIML" else name
    ref = pd.read_csv(REF / "invariance_score.csv").query(
        "dataset == @dataset and estimator == @est"
    )
    items = SETS[name]
    y, waves = _wide_array(pd.read_csv(DATA / f"psychTools_sai_{dataset}.csv"), items)
    assert np.isnan(y).any() == (est == "FIML")
    for level in LEVELS[1:]:
        fit = fit_level(y, len(items), level, estimator="MLR" if est == "MLR" else "ML")
        ours = {}
        for step in LEVELS[1 : LEVELS.index(level) + 1]:
            for constraint, stat in _score_tests(fit, step):
                lhs, op, rhs = _names(constraint, items, waves, "F")
                ours[f"{lhs} {op} {rhs}".strip()] = stat
        theirs = ref.query("level == @level").set_index("param")["X2"]
        assert len(theirs) and set(ours) == set(theirs.index)
        for param, stat in theirs.items():
            assert ours[param] == pytest.approx(stat, abs=1e-3), param


@pytest.mark.parametrize("name", list(SETS))
def test_partial_models_free_the_constraint_lavaan_ranks_worst(name):
    ref = pd.read_csv(REF / "invariance_partial.csv").query("dataset == @name")
    items = SETS[name]
    data = _data(name)
    waves = sorted(data["time"].unique())
    y = np.column_stack(
        [data.loc[data["time"] == w].sort_values("id")[items].to_numpy() for w in waves]
    ).astype(float)
    for rec in ref.itertuples():
        fit = fit_level(y, len(items), rec.level)
        worst, stat = max(_score_tests(fit, rec.level), key=lambda pair: pair[1])
        lhs, op, rhs = _names(worst, items, waves, "F")
        assert f"{lhs} {op} {rhs}".strip() == rec.freed
        assert stat == pytest.approx(rec.X2, abs=1e-3)
        partial = fit_level(y, len(items), rec.level, freed=(worst,))
        assert partial.df == rec.df
        assert partial.chisq == pytest.approx(rec.chisq, abs=1e-3)
        idx = partial.indices()
        assert idx["cfi"] == pytest.approx(rec.cfi, abs=1e-4)
        assert idx["rmsea"] == pytest.approx(rec.rmsea, abs=1e-4)


def test_the_default_cutoffs_keep_every_level_of_flat(results):
    res = results["flat", "ML"]
    assert res.fits["decision"].tolist() == ["baseline", "holds", "holds", "holds"]
    assert res.level_held == "strict"
    assert res.score_tests.empty
    # the latent change is the strict model's later-wave means and variances
    strict = res.parameters.query("model == 'strict' and free and kind in ['alpha', 'psi']")
    assert res.latent["estimate"].tolist() == pytest.approx(
        strict.sort_values("kind")["estimate"].tolist()
    )
    assert res.latent["quantity"].tolist() == ["mean", "mean", "variance", "variance"]
    assert res.latent["wave"].tolist() == [2, 3, 2, 3]


def test_a_rejected_step_gets_score_tests_and_a_partial_model():
    ref = pd.read_csv(REF / "invariance_partial.csv").query("dataset == 'flat'")
    res = measurement_invariance(
        _data("flat"), items=SETS["flat"], id_col="id", wave_col="time", delta_cfi=0.005
    )
    decisions = res.fits.set_index("model")["decision"]
    assert decisions["scalar"] == "rejected"
    assert decisions["strict"] == "not tested (scalar rejected)"
    # freeing nervous.3's intercept, the partial scalar model holds: the latent change is read
    # from it (means and variances of waves 2 and 3)
    assert res.level_held == "scalar (partial)"
    assert res.latent["quantity"].tolist() == ["mean", "mean", "variance", "variance"]
    assert (res.latent["model"] == "scalar (partial)").all()
    assert (res.score_tests["model"] == "scalar").all()
    assert len(res.score_tests) == 8  # 4 intercepts x 2 later waves
    assert res.score_tests["statistic"].is_monotonic_decreasing
    partial = res.fits.set_index("model").loc["scalar (partial)"]
    expected = ref.query("level == 'scalar'").iloc[0]
    assert partial["freed"] == expected["freed"]
    assert partial["chisq"] == pytest.approx(expected["chisq"], abs=1e-3)
    assert partial["df"] == expected["df"]
    assert partial["lrt_df"] == 5  # against metric


def test_analytic_gradient_matches_finite_differences():
    data = _data("flat")
    y = np.column_stack(
        [data.loc[data["time"] == w].sort_values("id")[SETS["flat"]].to_numpy() for w in (1, 2, 3)]
    ).astype(float)
    problem = MLProblem(build_spec(4, 3, "scalar", freed=(("nu", 2, 2),)), y)
    rng = np.random.default_rng(7)
    from models.sem._fit import start_values

    theta = start_values(problem) + rng.normal(scale=0.05, size=problem.spec.n_params)
    grad = problem.gradient(theta)
    numeric = np.empty_like(grad)
    for a in range(theta.size):
        h = 1e-6
        up, down = theta.copy(), theta.copy()
        up[a] += h
        down[a] -= h
        numeric[a] = (problem.fmin(up) - problem.fmin(down)) / (2 * h)
    np.testing.assert_allclose(grad, numeric, atol=1e-7)


def test_the_ladder_degrees_of_freedom_follow_the_constraints():
    # 4 items x 3 waves: 90 moments; each step adds equalities and frees latent parameters
    spec = {level: build_spec(4, 3, level) for level in LEVELS}
    df = {level: 90 - s.n_params for level, s in spec.items()}
    assert df == {"configural": 39, "metric": 45, "scalar": 51, "strict": 59}
    assert len(spec["strict"].constraints) == 3 * 4 * 2


def test_protocol_and_tables(results):
    res = results["rim", "MLR"]
    assert repr(res).startswith("Measurement invariance (MLR): 4 items x 2 waves, n = 334")
    text = str(res.summary())
    assert "treated as continuous" in text and "estimator='WLSMV'" in text
    assert "Cheung & Rensvold, 2002" in text and "Chen, 2007" in text
    assert res.to_frame().equals(res.fits)
    assert set(res.to_dict()["tables"]) >= {"Invariance ladder", "Parameters"}
    inv, params = invariance_tables(res, instrument="sai", scale="calm")
    assert inv.columns.tolist() == INVARIANCE_CSV_COLUMNS
    assert (inv["instrument"] == "sai").all() and (inv["estimator"] == "MLR").all()
    assert params.columns[:4].tolist() == ["instrument", "scale", "model", "estimator"]
    with pytest.raises(InvalidParameterError, match="InvarianceResult"):
        invariance_tables(res.fits, instrument="sai", scale="calm")


def test_same_input_same_output(results):
    again = measurement_invariance(
        _data("rim"), items=SETS["rim"], id_col="id", wave_col="time", estimator="MLR"
    )
    pd.testing.assert_frame_equal(again.fits, results["rim", "MLR"].fits)


# -- full-information ML ------------------------------------------------------------------
@pytest.fixture(scope="module")
def fiml() -> dict[tuple[str, str], InvarianceResult]:
    return {
        (name, est): measurement_invariance(
            pd.read_csv(DATA / f"psychTools_sai_{name}_all.csv"),
            items=items,
            id_col="id",
            wave_col="time",
            nan_policy="fiml",
            estimator=est,
        )
        for name, items in SETS.items()
        for est in ("ML", "MLR")
    }


FIML_CASES = [(name, est, level) for name in SETS for est in ("ML", "MLR") for level in LEVELS]


@pytest.mark.parametrize(("name", "est", "level"), FIML_CASES)
def test_full_information_ml_matches_lavaan(fiml, ref_fits, name, est, level):
    res = fiml[name, est]
    label = "FIML" if est == "ML" else "FIML-MLR"
    dataset = f"{name}_all"
    row = res.fits.set_index("model").loc[level]
    ref = ref_fits[
        (ref_fits["dataset"] == dataset)
        & (ref_fits["estimator"] == label)
        & (ref_fits["level"] == level)
    ].iloc[0]
    assert row["n"] == ref["n"] and row["df"] == ref["df"] and row["converged"]
    assert row["chisq_ml"] == pytest.approx(ref["chisq"], abs=1e-3)
    assert row["loglik"] == pytest.approx(ref["logl"], abs=1e-3)
    assert row["bic"] == pytest.approx(ref["bic"], abs=1e-3)
    assert row["srmr"] == pytest.approx(ref["srmr"], abs=1e-4)
    suffix = ".scaled" if est == "MLR" else ""
    assert row["chisq"] == pytest.approx(ref["chisq" + suffix], abs=1e-3)
    for ours, theirs in [
        ("cfi", "cfi"),
        ("tli", "tli"),
        ("rmsea", "rmsea"),
        ("rmsea_ci_low", "rmsea.ci.lower"),
        ("rmsea_ci_high", "rmsea.ci.upper"),
    ]:
        assert row[ours] == pytest.approx(ref[theirs + suffix], abs=1e-4), ours
    if est == "MLR":
        assert row["scaling_factor"] == pytest.approx(ref["chisq.scaling.factor"], abs=1e-4)
    _check_scaled_and_robust(row, ref, est, fiml=True)
    params = pd.read_csv(REF / "invariance_params.csv", keep_default_na=False, na_values=["NA"])
    params = params[
        (params["dataset"] == dataset) & (params["estimator"] == label) & (params["level"] == level)
    ]
    params = params.rename(columns={"est": "ref_est", "se": "ref_se"})
    merged = res.parameters.query("model == @level").merge(params, on=["lhs", "op", "rhs"])
    assert len(merged) == len(params)
    np.testing.assert_allclose(merged["estimate"], merged["ref_est"], atol=1e-4)
    free = merged["free"].astype(bool)
    np.testing.assert_allclose(merged.loc[free, "se"], merged.loc[free, "ref_se"], atol=1e-4)
    lrt = pd.read_csv(REF / "invariance_lrt.csv")
    lrt = lrt[(lrt["dataset"] == dataset) & (lrt["estimator"] == label) & (lrt["level"] == level)]
    if len(lrt):
        assert row["lrt_chisq"] == pytest.approx(lrt["chisq_diff"].iloc[0], abs=1e-3)
        assert row["lrt_p"] == pytest.approx(lrt["p"].iloc[0], abs=1e-4)
    assert "full-information ML" in str(res.summary())
    assert res.meta["n_incomplete"] == {"flat": 3, "rim": 8, "vale": 10}[name]


# -- bad input ----------------------------------------------------------------------------
def test_incomplete_participants_are_refused_and_counted():
    data = _data("rim")
    data.loc[3, "calm"] = np.nan
    data = data.drop(index=10)
    with pytest.raises(InvalidParameterError, match="2 of 334 participants") as err:
        measurement_invariance(data, items=SETS["rim"], id_col="id", wave_col="time")
    assert "nan_policy='fiml'" in str(err.value)
    res = measurement_invariance(
        data, items=SETS["rim"], id_col="id", wave_col="time", nan_policy="omit"
    )
    assert res.meta["n_excluded"] == 2 and res.meta["n_used"] == 332
    assert "2 participant(s) left out" in str(res.summary())


def test_bad_data_are_reported_together():
    data = _data("flat")
    data = pd.concat([data, data.iloc[[0]]], ignore_index=True)
    data.loc[len(data) - 2, "time"] = 9
    with pytest.raises(InvalidParameterError) as err:
        measurement_invariance(
            data, items=SETS["flat"], id_col="id", wave_col="time", waves=[1, 2, 3]
        )
    message = str(err.value)
    assert "not in waves=[1, 2, 3]" in message and "repeat a participant x wave" in message
    data.loc[0, "id"] = np.nan
    with pytest.raises(InvalidParameterError) as err:
        measurement_invariance(
            data, items=SETS["flat"], id_col="id", wave_col="time", waves=[1, 2, 3, 4]
        )
    message = str(err.value)
    assert "no row has the wave(s) [4]" in message and "1 row(s) have no `id`" in message


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"estimator": "WLS"}, "estimator"),
        ({"estimator": "MLR", "nan_policy": "pairwise"}, "pairwise"),
        ({"nan_policy": "drop"}, "nan_policy"),
        ({"ci_level": 95}, "ci_level"),
        ({"delta_cfi": -0.01}, "delta_cfi"),
        ({"items": "tense"}, "items"),
        ({"items": ["tense", "nope"]}, "nope"),
    ],
)
def test_bad_parameters(kwargs, match):
    args = {"items": SETS["flat"], "id_col": "id", "wave_col": "time", **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        measurement_invariance(_data("flat"), **args)


def test_text_waves_need_their_order_and_items_must_be_numeric():
    data = _data("rim").assign(time=lambda d: d["time"].map({1: "pre", 3: "post"}))
    with pytest.raises(InvalidParameterError, match="waves=\\['pre', 'mid', 'post'\\]"):
        measurement_invariance(data, items=SETS["rim"], id_col="id", wave_col="time")
    res = measurement_invariance(
        data, items=SETS["rim"], id_col="id", wave_col="time", waves=["pre", "post"]
    )
    assert "F.post ~~ F.post" in set(res.parameters["lhs"] + " ~~ " + res.parameters["rhs"])
    data["calm"] = data["calm"].astype(str)
    with pytest.raises(InvalidParameterError, match="calm"):
        measurement_invariance(
            data, items=SETS["rim"], id_col="id", wave_col="time", waves=["pre", "post"]
        )


def test_simulated_latent_change_is_recovered():
    # invariant items (loading 0.8, residual SD 0.6); wave 2: latent mean 0.3, variance 1.44
    means, variances, covered = [], [], []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        eta = rng.normal(size=(300, 2)) * [1.0, 1.2] + [0.0, 0.3]
        y = np.hstack([0.8 * eta[:, [w]] + rng.normal(scale=0.6, size=(300, 3)) for w in (0, 1)])
        data = pd.DataFrame({"id": np.repeat(np.arange(300), 2), "wave": np.tile([1, 2], 300)})
        data[["x0", "x1", "x2"]] = y.reshape(600, 3)
        res = measurement_invariance(data, items=["x0", "x1", "x2"], id_col="id", wave_col="wave")
        strict = res.parameters.query("model == 'strict' and free")
        mean = strict.query("kind == 'alpha'").iloc[0]
        means.append(mean["estimate"])
        covered.append(mean["ci_low"] < 0.3 < mean["ci_high"])
        variances.append(strict.query("kind == 'psi'")["estimate"].iloc[0])
    # the means' sampling SD is about 0.09: their average lies within 3 SE of the truth
    assert abs(np.mean(means) - 0.3) < 3 * 0.1 / np.sqrt(20)
    assert abs(np.mean(variances) - 1.44) < 0.1
    assert np.mean(covered) >= 0.8


def test_the_sample_size_rule():
    from models.sem import invariance_sample_note

    # 4 items x 3 waves: 36 item parameters + 12 residual + 3 factor covariances = 51
    note = invariance_sample_note(167, n_items=4, n_waves=3)
    assert note.startswith("167 participants") and "51 free parameters" in note
    assert "at least 255" in note and "Bentler & Chou, 1987" in note
    assert invariance_sample_note(255, n_items=4, n_waves=3) is None
    # 4 items x 2 waves: 24 + 4 + 1 = 29
    assert invariance_sample_note(334, n_items=4, n_waves=2) is None
    assert "at least 290" in invariance_sample_note(10, n_items=4, n_waves=2, per_parameter=10)
    with pytest.raises(InvalidParameterError, match="n_waves"):
        invariance_sample_note(10, n_items=4, n_waves=1)


def test_a_negative_variance_is_stated():
    from models import SingularFitWarning

    # two facets a, b: x0 = a + b, x1 mostly a, x2 mostly b. One factor makes x0's
    # loading exceed its SD, so its residual variance goes below zero (a Heywood case)
    rng = np.random.default_rng(0)
    cols = []
    for _ in range(2):
        a, b = rng.normal(size=(2, 200))
        cols += [
            a + b + rng.normal(scale=0.3, size=200),
            a + 0.4 * b + rng.normal(scale=0.5, size=200),
            b + 0.4 * a + rng.normal(scale=0.5, size=200),
        ]
    data = pd.DataFrame({"id": np.repeat(np.arange(200), 2), "wave": np.tile([1, 2], 200)})
    data[["x0", "x1", "x2"]] = np.column_stack(cols).reshape(400, 3)
    with pytest.warns(SingularFitWarning, match="negative variance"):
        res = measurement_invariance(data, items=["x0", "x1", "x2"], id_col="id", wave_col="wave")
    assert res.meta["notes"] and "not admissible" in str(res.summary())


def test_a_model_that_does_not_converge_is_stated_and_not_judged(monkeypatch):
    from models import ConvergenceWarning
    from models.sem import _ml

    original = _ml.MLProblem.fit

    def fit(self, start, **kwargs):
        theta, converged, iterations = original(self, start, **kwargs)
        return theta, converged and self.spec.level != "metric", iterations

    monkeypatch.setattr(_ml.MLProblem, "fit", fit)
    with pytest.warns(ConvergenceWarning, match="metric did not converge"):
        res = measurement_invariance(_data("rim"), items=SETS["rim"], id_col="id", wave_col="time")
    decisions = res.fits.set_index("model")["decision"]
    assert decisions["metric"] == "not tested (a model did not converge)"
    assert decisions["scalar"].startswith("not tested")
    assert res.level_held == "configural" and res.latent.empty
    assert "Did not converge: metric; their numbers are not to be read" in str(res.summary())
