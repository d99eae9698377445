"""measurement_invariance(estimator="WLSMV") against lavaan 0.6-14 + semTools 0.5-6.

reference/wlsmv_ladder.R fits the ordinal ladder (``measEq.syntax(ordered = ...,
parameterization = "theta", ID.fac = "std.lv", ID.cat = "Wu.Estabrook.2016")``, ``cfa(estimator
= "WLSMV")``) to three sets of psychTools' ``sai`` items (1-4): ``flat`` (three waves, 167
participants), ``rim`` (two waves, 334) and ``flat_collapsed`` (flat with one binary and one
three-category item), and to the five-point SF-36 general health items of mosaicData's
``HELPfull`` at baseline and 6 months (``help``, 254 patients). Through
:func:`measurement_invariance` on the long answers: npar and df exactly; the scaled chi-square
to 1e-3; its p-value, scaling factor, the scaled CFI, TLI and RMSEA (with its interval), SRMR
and the robust indices where lavaan gives them to 1e-4; every estimate (thresholds, loadings,
intercepts, residual variances, latent means and variances) to 1e-4 and standard error to
1e-3; lavTestLRT's scaled differences to 1e-3.

reference/wlsmv_partial.R gives lavTestScore's statistics of every restriction the scalar and
strict steps add (an intercept fixed at 0 and a residual variance fixed at 1 written as a
constraint), and replays the partial search at a tighter CFI cut-off on flat (the metric step
is rejected; one loading freed) and rim (the scalar step; two intercepts freed): the score
tests that chose each restriction, each partial model's fit, difference test and estimates,
to the same tolerances. The real data never reject a step at the default cut-offs, so a
simulated scale with one item's intercept shifted at the second wave checks that the search
finds it.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models import ConvergenceWarning, InvalidParameterError
from models.sem import InvarianceResult, invariance_tables, measurement_invariance
from models.sem._ladder_wlsmv import ordinal_frame, release_score
from models.sem._ordinal_stats import ordinal_sample_stats
from models.sem._wlsmv import fit_wlsmv

HERE = Path(__file__).resolve().parents[1]
DATA = HERE.parent / "data"
REF = HERE / "reference"
LEVELS = ("configural", "thresholds", "metric", "scalar", "strict")
ITEMS = {
    "flat": ["tense", "anxious", "nervous", "jittery"],
    "rim": ["calm", "at.ease", "relaxed", "content"],
    "help": ["B1", "B11A", "B11B", "B11C", "B11D"],
}
SETS = ("flat", "rim", "flat_collapsed", "help")


def _data(name: str) -> tuple[pd.DataFrame, list[str]]:
    if name == "flat_collapsed":
        data = pd.read_csv(DATA / "psychTools_sai_flat.csv")
        data["nervous"] = data["nervous"].clip(upper=2)
        data["jittery"] = data["jittery"].clip(upper=3)
        return data, ITEMS["flat"]
    if name == "help":
        return pd.read_csv(DATA / "mosaicData_HELPfull_gh.csv"), ITEMS["help"]
    return pd.read_csv(DATA / f"psychTools_sai_{name}.csv"), ITEMS[name]


def _ladder(name: str, **options) -> InvarianceResult:
    data, items = _data(name)
    return measurement_invariance(
        data, items=items, id_col="id", wave_col="time", estimator="WLSMV", **options
    )


@pytest.fixture(scope="module")
def ref() -> dict:
    return json.loads((REF / "wlsmv_ladder.json").read_text(encoding="utf-8"))["datasets"]


@pytest.fixture(scope="module")
def partial_ref() -> dict:
    return json.loads((REF / "wlsmv_partial.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def results() -> dict[str, InvarianceResult]:
    return {name: _ladder(name) for name in SETS}


# our column -> lavaan's fitMeasures name, tolerance
MEASURES = {
    "chisq": ("chisq.scaled", 1e-3),
    "chisq_scaled": ("chisq.scaled", 1e-3),
    "df_scaled": ("df.scaled", 0),
    "p_value": ("pvalue.scaled", 1e-4),
    "p_value_scaled": ("pvalue.scaled", 1e-4),
    "scaling_factor": ("chisq.scaling.factor", 1e-4),
    "cfi": ("cfi.scaled", 1e-4),
    "cfi_scaled": ("cfi.scaled", 1e-4),
    "tli": ("tli.scaled", 1e-4),
    "tli_scaled": ("tli.scaled", 1e-4),
    "rmsea": ("rmsea.scaled", 1e-4),
    "rmsea_scaled": ("rmsea.scaled", 1e-4),
    "rmsea_ci_low": ("rmsea.ci.lower.scaled", 1e-4),
    "rmsea_ci_high": ("rmsea.ci.upper.scaled", 1e-4),
    "srmr": ("srmr", 1e-4),
}


def _check_fit(row: pd.Series, expected: dict) -> None:
    assert row["converged"]
    assert row["estimator"] == "WLSMV"
    assert row["npar"] == expected["npar"]
    assert row["df"] == expected["df"]
    for column, (key, tol) in MEASURES.items():
        assert row[column] == pytest.approx(expected[key], abs=tol), column


def _check_parameters(ours: pd.DataFrame, expected: dict) -> None:
    keys = list(zip(expected["lhs"], expected["op"], expected["rhs"], strict=True))
    table = ours.set_index(["lhs", "op", "rhs"])
    assert sorted(table.index) == sorted(keys)
    table = table.loc[keys]
    np.testing.assert_allclose(table["estimate"], expected["est"], rtol=0, atol=1e-4)
    free = table["free"].to_numpy(dtype=bool)
    se = np.array([np.nan if v is None else v for v in expected["se"]], dtype=float)
    np.testing.assert_allclose(table["se"].to_numpy()[free], se[free], rtol=0, atol=1e-3)
    # fixed here; in lavaan fixed, or held at a constant by a constraint (SE 0 or NA)
    fixed = se[~free]
    assert np.all(np.isnan(fixed) | (np.abs(fixed) < 1e-6))


CASES = [(name, level) for name in SETS for level in LEVELS]


@pytest.mark.parametrize(("name", "level"), CASES)
def test_fit_measures_match_lavaan(results, ref, name, level):
    res = results[name]
    row = res.fits.set_index("model").loc[level]
    expected = ref[name]["models"][level]["fit"]
    assert row["n"] == ref[name]["n"] == res.meta["n_used"]
    _check_fit(row, expected)
    for ours, theirs in (("cfi_robust", "cfi.robust"), ("rmsea_robust", "rmsea.robust")):
        if expected[theirs] is None:  # lavaan 0.6-14 gives them for the configural model only
            assert np.isnan(row[ours])
        else:
            assert row[ours] == pytest.approx(expected[theirs], abs=1e-4)
    # no likelihood under WLSMV, and its difference test is not a likelihood ratio
    assert row[["chisq_ml", "loglik", "aic", "bic", "lrt_chisq"]].isna().all()


@pytest.mark.parametrize(("name", "level"), CASES)
def test_estimates_match_lavaan(results, ref, name, level):
    params = results[name].parameters.query("model == @level")
    _check_parameters(params, ref[name]["models"][level]["params"])


@pytest.mark.parametrize("name", SETS)
def test_difference_tests_match_lavTestLRT(results, ref, name):
    fits = results[name].fits.set_index("model")
    assert np.isnan(fits.loc["configural", "delta_chisq"])
    for level in LEVELS[1:]:
        expected = ref[name]["lrt"][level]
        row = fits.loc[level]
        assert row["delta_df"] == expected["df_diff"]
        assert row["delta_chisq"] == pytest.approx(expected["chisq_diff"], abs=1e-3)
        assert row["delta_p"] == pytest.approx(expected["p"], abs=1e-3)
        previous = fits.loc[LEVELS[LEVELS.index(level) - 1]]
        assert row["delta_cfi"] == pytest.approx(previous["cfi_scaled"] - row["cfi_scaled"])
        assert row["delta_rmsea"] == pytest.approx(row["rmsea_scaled"] - previous["rmsea_scaled"])


@pytest.mark.parametrize("name", SETS)
def test_every_step_holds_at_the_default_cutoffs_and_the_latent_change_is_the_strict_models(
    results, ref, name
):
    res = results[name]
    assert res.fits["model"].tolist() == list(LEVELS)
    assert res.fits["decision"].tolist() == ["baseline"] + ["holds"] * 4
    assert res.level_held == "strict" and res.score_tests.empty
    assert res.meta["partial_search"] == {}
    latent = res.latent.set_index(["quantity", "wave"])
    expected = ref[name]["models"]["strict"]["params"]
    later = ref[name]["times"][1:]
    assert latent.index.tolist() == [("mean", t) for t in later] + [("variance", t) for t in later]
    table = pd.DataFrame(expected).set_index(["lhs", "op", "rhs"])
    for t in later:
        mean = table.loc[(f"F.{t}", "~1", "")]
        variance = table.loc[(f"F.{t}", "~~", f"F.{t}")]
        assert latent.loc[("mean", t), "estimate"] == pytest.approx(mean["est"], abs=1e-4)
        assert latent.loc[("mean", t), "se"] == pytest.approx(mean["se"], abs=1e-3)
        assert latent.loc[("variance", t), "estimate"] == pytest.approx(variance["est"], abs=1e-4)
        assert latent.loc[("variance", t), "se"] == pytest.approx(variance["se"], abs=1e-3)
    assert (res.latent["model"] == "strict").all()


# -- score tests ---------------------------------------------------------------------------
def _fit(name: str, level: str):
    data, items = _data(name)
    waves = sorted(data["time"].unique())
    wide = data.set_index(["id", "time"])[items].unstack("time")
    y = wide.reindex(columns=[(i, w) for w in waves for i in items]).to_numpy(float)
    stats = ordinal_sample_stats(ordinal_frame(y, items, waves))
    return fit_wlsmv(stats, n_items=len(items), n_waves=len(waves), level=level), items, waves


def _entry(param: str, items: list[str], waves: list) -> tuple:
    """Our entry for lavaan's ``lhs op rhs`` of a later wave's restriction."""
    lhs, op, *rest = param.split(" ")

    def where(name: str) -> tuple[int, int]:
        item, wave = name.rsplit(".", 1)
        return items.index(item), waves.index(int(wave))

    if op == "|":
        return ("tau", *where(lhs), int(rest[0][1:]) - 1)
    if op == "=~":
        return ("lambda", *where(rest[0]))
    if op == "~1":
        return ("nu", *where(lhs))
    return ("theta", *where(lhs))


@pytest.mark.parametrize(
    ("name", "level"), [(n, lv) for n in ("flat", "rim") for lv in ("metric", "scalar", "strict")]
)
def test_release_scores_match_lavTestScore(ref, partial_ref, name, level):
    fit, items, waves = _fit(name, level)
    # equalities of thresholds and loadings: lavaan's own constraints
    equal = ref[name]["score"][level]
    triples = zip(equal["lhs"], equal["op"], equal["rhs"], strict=True)
    params = [f"{a} {b} {c}" for a, b, c in triples]
    expected = dict(zip(params, equal["X2"], strict=True))
    if level in partial_ref["score"][name]:
        fixed = partial_ref["score"][name][level]
        expected.update(zip(fixed["param"], fixed["X2"], strict=True))
    for param, x2 in expected.items():
        stat, _identified = release_score(fit, _entry(param, items, waves))
        assert stat == pytest.approx(x2, abs=1e-3), param


@pytest.mark.parametrize("name", ["flat", "rim"])
def test_the_partial_search_matches_lavaan(partial_ref, name):
    expected = partial_ref["search"][name]
    res = _ladder(name, delta_cfi=expected["cut_cfi"])
    rejected, below = expected["rejected"], expected["below"]
    fits = res.fits.set_index("model")
    assert fits.loc[rejected, "decision"] == "rejected"
    models = expected["models"]
    names = [f"{rejected} (partial {k})" for k in range(1, len(models) + 1)]
    assert res.fits["model"].tolist() == [*LEVELS, *names]
    for model, theirs in zip(names, models, strict=True):
        row = fits.loc[model]
        assert row["level"] == rejected
        assert row["freed"] == "; ".join(theirs["freed"])
        _check_fit(row, theirs["fit"])
        assert row["delta_df"] == theirs["lrt"]["df_diff"]
        assert row["delta_chisq"] == pytest.approx(theirs["lrt"]["chisq_diff"], abs=1e-3)
        assert row["delta_p"] == pytest.approx(theirs["lrt"]["p"], abs=1e-3)
        assert row["delta_cfi"] == pytest.approx(fits.loc[below, "cfi"] - row["cfi"])
        assert row["decision"] == ("holds" if theirs["holds"] else "rejected")
        _check_parameters(res.parameters.query("model == @model"), theirs["params"])
    # each model's score tests chose the next restriction to free
    chooser = [rejected, *names[:-1]]
    for model, theirs in zip(chooser, models, strict=True):
        tests = res.score_tests[res.score_tests["model"] == model]
        assert tests["statistic"].is_monotonic_decreasing
        labels = (tests["lhs"] + " " + tests["op"] + " " + tests["rhs"]).str.strip()
        ours = dict(zip(labels, tests["statistic"], strict=True))
        assert set(ours) == set(theirs["scored"]["param"])
        for param, x2 in zip(theirs["scored"]["param"], theirs["scored"]["X2"], strict=True):
            assert ours[param] == pytest.approx(x2, abs=1e-3), param
    assert res.level_held == names[-1]
    assert res.meta["partial_search"]["stopped"] == f"{names[-1]} holds"
    assert any("the search stopped because" in note for note in res.meta["notes"])
    assert (res.latent["model"] == names[-1]).all()


def test_the_search_stops_when_nothing_is_left_that_can_be_freed(monkeypatch):
    from models.sem import _ladder_wlsmv

    # every partial model judged rejected: the rim scalar search frees three of the four
    # later intercepts; the fourth would leave the latent mean unidentified
    monkeypatch.setattr(_ladder_wlsmv, "step_holds", lambda *args: False)
    res = _ladder("rim", delta_cfi=0.002)
    search = res.meta["partial_search"]
    assert search["step"] == "scalar" and search["models"] == 3
    assert search["stopped"] == (
        "none of the 1 remaining scalar restrictions can be freed on its own (the model "
        "would not be identified)"
    )
    assert res.level_held == "metric"
    partial = res.fits[res.fits["level"] == "scalar"].iloc[1:]
    assert (partial["decision"] == "rejected").all()
    assert partial["freed"].iloc[-1].count(";") == 2
    assert "the search stopped because none of the 1 remaining" in str(res.summary())


def _simulated(shift: float, n: int = 1500, seed: int = 3) -> pd.DataFrame:
    """Four 4-point items at two waves; item x2's latent response shifted at wave 2."""
    rng = np.random.default_rng(seed)
    loadings = np.array([0.9, 0.8, 0.8, 0.7])
    cuts = np.array([-1.0, 0.0, 1.0])
    eta = rng.multivariate_normal([0.0, 0.3], [[1.0, 0.5], [0.5, 1.0]], size=n)
    frames = []
    for t in range(2):
        latent = eta[:, [t]] * loadings + rng.normal(size=(n, 4))
        latent[:, 2] += shift if t == 1 else 0.0
        answers = 1 + (latent[:, :, None] > cuts * np.sqrt(1 + loadings[:, None] ** 2)).sum(2)
        frame = pd.DataFrame(answers, columns=["x0", "x1", "x2", "x3"])
        frames.append(frame.assign(id=np.arange(n), wave=t + 1))
    return pd.concat(frames, ignore_index=True)


def test_the_search_finds_the_simulated_non_invariant_intercept():
    data = _simulated(shift=0.8)
    items = ["x0", "x1", "x2", "x3"]
    res = measurement_invariance(data, items=items, id_col="id", wave_col="wave", estimator="WLSMV")
    decisions = res.fits.set_index("model")["decision"]
    assert decisions[["thresholds", "metric"]].tolist() == ["holds", "holds"]
    assert decisions["scalar"] == "rejected"
    assert decisions["strict"] == "not tested (scalar rejected)"
    first = res.score_tests.query("model == 'scalar'").iloc[0]
    assert (first["item"], first["wave"]) == ("x2", 2)
    assert res.level_held == "scalar (partial 1)"
    assert res.fits.iloc[-1]["freed"] == "x2.2 ~1"
    # the latent mean of wave 2 (0.3, the second wave's variance 1) under the partial model
    mean = res.latent.set_index("quantity").loc["mean"]
    assert mean["ci_low"] < 0.3 < mean["ci_high"]
    # without the shift the ladder holds
    clean = measurement_invariance(
        _simulated(shift=0.0), items=items, id_col="id", wave_col="wave", estimator="WLSMV"
    )
    assert clean.level_held == "strict"


# -- refusals and missing answers ----------------------------------------------------------
def test_an_empty_category_at_one_wave_is_refused_naming_item_wave_and_category():
    data, items = _data("rim")
    data.loc[(data["time"] == 3) & (data["calm"] == 4), "calm"] = 3
    data.loc[(data["time"] == 1) & (data["content"] == 1), "content"] = 2
    with pytest.raises(InvalidParameterError) as err:
        measurement_invariance(data, items=items, id_col="id", wave_col="time", estimator="WLSMV")
    message = str(err.value)
    assert "item 'calm' at wave 3: nobody chose 4" in message
    assert "item 'content' at wave 1: nobody chose 1" in message
    assert "Collapse the categories" in message


def test_answers_that_are_not_codes_are_refused():
    data, items = _data("rim")
    data["calm"] = data["calm"].astype(float)
    data.loc[0, "calm"] = 2.5
    with pytest.raises(InvalidParameterError, match="integer-coded"):
        measurement_invariance(data, items=items, id_col="id", wave_col="time", estimator="WLSMV")


def test_missing_answers_listwise_or_pairwise_never_fiml():
    data = pd.read_csv(DATA / "psychTools_sai_rim_all.csv")
    items = ITEMS["rim"]
    options = {"items": items, "id_col": "id", "wave_col": "time", "estimator": "WLSMV"}
    with pytest.raises(InvalidParameterError, match="nan_policy='pairwise'") as err:
        measurement_invariance(data, **options)
    assert "nan_policy='omit'" in str(err.value) and "listwise" in str(err.value)
    with pytest.raises(InvalidParameterError, match="full-information ML does not exist"):
        measurement_invariance(data, nan_policy="fiml", **options)
    listwise = measurement_invariance(data, nan_policy="omit", **options)
    n_all = data["id"].nunique()
    assert listwise.meta["missing"] == "listwise"
    assert listwise.meta["n_used"] == 334 and listwise.meta["n_excluded"] == n_all - 334
    assert "listwise deletion" in listwise.meta["estimator_note"]
    pairwise = measurement_invariance(data, nan_policy="pairwise", **options)
    assert pairwise.meta["missing"] == "pairwise" and pairwise.meta["n_used"] == n_all
    assert (pairwise.fits["n"] == n_all).all()
    assert "pairwise" in pairwise.meta["estimator_note"]
    assert "full-information ML does not exist" in str(pairwise.summary())


def test_a_model_that_does_not_converge_has_no_numbers_and_no_decision(monkeypatch):
    from models.sem import _wlsmv

    original = _wlsmv.minimise

    def minimise(model, data, start, **kwargs):
        theta, implied, converged, iterations = original(model, data, start, **kwargs)
        return theta, implied, converged and model.spec.level != "metric", iterations

    monkeypatch.setattr(_wlsmv, "minimise", minimise)
    with pytest.warns(ConvergenceWarning, match="metric did not converge"):
        res = _ladder("rim")
    fits = res.fits.set_index("model")
    assert not fits.loc["metric", "converged"]
    assert fits.loc["metric", ["chisq", "cfi", "rmsea", "delta_chisq", "srmr"]].isna().all()
    assert fits.loc["metric", "decision"] == "not tested (a model did not converge)"
    assert fits.loc["scalar", "decision"].startswith("not tested")
    assert np.isnan(fits.loc["scalar", "delta_chisq"])  # never against a failed model
    assert res.level_held == "thresholds" and res.latent.empty
    assert "metric" not in set(res.parameters["model"])


def test_protocol_and_tables(results):
    res = results["rim"]
    assert repr(res).startswith("Measurement invariance (WLSMV): 4 items x 2 waves, n = 334")
    text = str(res.summary())
    assert "Satorra 2000" in text and "Wu & Estabrook, 2016" in text
    assert "scaled indices under WLSMV" in text
    inv, params = invariance_tables(res, instrument="sai", scale="calm")
    assert inv["model"].tolist() == list(LEVELS)
    for column in ("chisq_scaled", "df_scaled", "cfi_scaled", "tli_scaled", "rmsea_scaled"):
        assert column in inv.columns and inv[column].notna().all()
    for column in ("delta_chisq", "delta_df", "delta_p", "cfi_robust", "rmsea_robust"):
        assert column in inv.columns
    assert (inv["estimator"] == "WLSMV").all()
    assert set(params["op"]) == {"=~", "|", "~1", "~~"}


def test_same_input_same_output(results):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = _ladder("rim")
    pd.testing.assert_frame_equal(again.fits, results["rim"].fits)
