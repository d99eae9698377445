"""The WLSMV ordinal invariance ladder against lavaan 0.6-14 + semTools 0.5-6.

reference/wlsmv_ladder.R fits ``measEq.syntax(ordered = ..., parameterization = "theta",
ID.fac = "std.lv", ID.cat = "Wu.Estabrook.2016", auto = "all")`` with
``cfa(estimator = "WLSMV")`` to three sets of psychTools' ``sai`` items (1-4): ``flat`` (three
waves, 167 participants), ``rim`` (two waves, 334) and ``flat_collapsed`` (flat with one
binary and one three-category item), and to five-point items: ``help``, the SF-36 general
health items of mosaicData's ``HELPfull`` at baseline and 6 months (254 patients; two of the
five are worded the other way, so their loadings are negative). The sample statistics come
from the same JSON (lavaan's ``wls.obs``, ``gamma``, ``wls.v``, thresholds and polychoric
correlations).

For the five levels of each: the free, fixed and equal entries exactly as the syntax writes
them; npar and df exactly; the standard and scaled chi-square to 1e-3; the scaling factor,
CFI, TLI, RMSEA (with its intervals), the robust indices where lavaan gives them, and SRMR to
1e-4; every estimate to 1e-4 and standard error to 1e-3; lavTestLRT's scaled difference and
lavTestScore's statistics to 1e-3. The partial thresholds and metric models that release the
constraint with the largest score statistic, and the configural to scalar levels in the delta
parameterisation, to the same tolerances. lavaan's estimates are converged to about 1e-5,
which sets them.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from models import InvalidParameterError
from models.sem._wlsmv import fit_wlsmv
from models.sem._wlsmv_compare import wlsmv_difference, wlsmv_score_tests
from models.sem._wlsmv_spec import LEVELS

REF = Path(__file__).resolve().parents[1] / "reference" / "wlsmv_ladder.json"
SETS = ("flat", "rim", "flat_collapsed", "help")


@dataclass(frozen=True)
class _Stats:
    """The fields of the ordinal sample statistics, as lavaan gives them."""

    names: list
    n: int
    thresholds: list
    polychoric: np.ndarray
    wls_obs: np.ndarray
    gamma: np.ndarray
    wls_v: np.ndarray


def _stats(entry: dict) -> _Stats:
    s = entry["stats"]
    return _Stats(
        names=list(entry["names"]),
        n=int(entry["n"]),
        thresholds=[np.asarray(th, dtype=float) for th in s["thresholds"]],
        polychoric=np.asarray(s["polychoric"], dtype=float),
        wls_obs=np.asarray(s["wls_obs"], dtype=float),
        gamma=np.asarray(s["gamma"], dtype=float),
        wls_v=np.asarray(s["wls_v"], dtype=float),
    )


def _shape(entry: dict) -> dict:
    return {"n_items": len(entry["items"]), "n_waves": len(entry["times"])}


@pytest.fixture(scope="module")
def ref() -> dict:
    return json.loads(REF.read_text(encoding="utf-8"))["datasets"]


@pytest.fixture(scope="module")
def fits(ref):
    out = {}
    for name in SETS:
        stats = _stats(ref[name])
        for level in LEVELS:
            out[name, level] = fit_wlsmv(stats, **_shape(ref[name]), level=level)
            if level != "strict":
                out[name, level, "delta"] = fit_wlsmv(
                    stats, **_shape(ref[name]), level=level, parameterization="delta"
                )
    return out


def _case(fits, ref, name, level, parameterization):
    """Our fit and lavaan's (fit measures, parameters, syntax) of one model."""
    if parameterization == "theta":
        model = ref[name]["models"][level]
        return fits[name, level], {**model, "syntax": ref[name]["syntax"][level]}
    return fits[name, level, "delta"], ref[name]["delta"][level]


CASES = [(name, level, "theta") for name in SETS for level in LEVELS]
CASES += [(name, level, "delta") for name in SETS for level in LEVELS[:-1]]
STEPS = [(name, level) for name in SETS for level in LEVELS[1:]]

# attribute -> lavaan's fitMeasures name, tolerance
MEASURES = {
    "chisq": ("chisq", 1e-3),
    "chisq_scaled": ("chisq.scaled", 1e-3),
    "p_value": ("pvalue", 1e-4),
    "p_value_scaled": ("pvalue.scaled", 1e-4),
    "scaling_factor": ("chisq.scaling.factor", 1e-4),
    "shift": ("shift", 1e-3),
    "baseline_chisq": ("baseline.chisq", 1e-3),
    "baseline_chisq_scaled": ("baseline.chisq.scaled", 1e-3),
    "baseline_scaling_factor": ("baseline.chisq.scaling.factor", 1e-4),
    "cfi": ("cfi", 1e-4),
    "tli": ("tli", 1e-4),
    "rmsea": ("rmsea", 1e-4),
    "rmsea_ci_low": ("rmsea.ci.lower", 1e-4),
    "rmsea_ci_high": ("rmsea.ci.upper", 1e-4),
    "cfi_scaled": ("cfi.scaled", 1e-4),
    "tli_scaled": ("tli.scaled", 1e-4),
    "rmsea_scaled": ("rmsea.scaled", 1e-4),
    "rmsea_scaled_ci_low": ("rmsea.ci.lower.scaled", 1e-4),
    "rmsea_scaled_ci_high": ("rmsea.ci.upper.scaled", 1e-4),
    "srmr": ("srmr", 1e-4),
}
ROBUST = {"cfi_robust": "cfi.robust", "tli_robust": "tli.robust", "rmsea_robust": "rmsea.robust"}


@pytest.mark.parametrize(("name", "level", "parameterization"), CASES)
def test_fit_measures_match_lavaan(fits, ref, name, level, parameterization):
    fit, lavaan = _case(fits, ref, name, level, parameterization)
    expected = lavaan["fit"]
    assert fit.converged
    assert fit.parameterization == parameterization
    assert fit.n == ref[name]["n"]
    assert fit.npar == expected["npar"]
    assert fit.df == expected["df"]
    assert fit.df_scaled == expected["df.scaled"]
    assert fit.baseline_df == expected["baseline.df"]
    for attribute, (key, tol) in MEASURES.items():
        assert getattr(fit, attribute) == pytest.approx(expected[key], abs=tol), attribute


@pytest.mark.parametrize(("name", "level", "parameterization"), CASES)
def test_robust_indices_where_lavaan_gives_them(fits, ref, name, level, parameterization):
    fit, lavaan = _case(fits, ref, name, level, parameterization)
    expected = lavaan["fit"]
    for attribute, key in ROBUST.items():
        if expected[key] is None:
            assert np.isnan(getattr(fit, attribute)), attribute
        else:
            assert getattr(fit, attribute) == pytest.approx(expected[key], abs=1e-4), attribute
    # lavaan 0.6.14 gives them for the configural models only
    assert (expected["cfi.robust"] is not None) == (level == "configural")


@pytest.mark.parametrize(("name", "level", "parameterization"), CASES)
def test_estimates_and_standard_errors_match_lavaan(fits, ref, name, level, parameterization):
    fit, lavaan = _case(fits, ref, name, level, parameterization)
    table = fit.parameters
    expected = lavaan["params"]
    keys = list(zip(expected["lhs"], expected["op"], expected["rhs"], strict=True))
    ours = table.set_index(["lhs", "op", "rhs"])
    assert sorted(ours.index) == sorted(keys)
    est = ours.loc[keys, "est"].to_numpy()
    se = ours.loc[keys, "se"].to_numpy()
    np.testing.assert_allclose(est, expected["est"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(se, expected["se"], rtol=0, atol=1e-3)


SYNTAX_LINE = re.compile(r"^(\S+) (=~|\||~~|~) (\S+)\*(\S+) \+ (\S+)\*(\S+)$")
SCALE_LINE = re.compile(r"^(\S+) ~\*~ (\S+)\*(\S+)$")  # a scale: no label


def _syntax_entries(text: str) -> dict:
    """``(lhs, op, rhs) -> (fixed value or None, label)`` from measEq.syntax's text."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if match := SCALE_LINE.match(line):
            lhs, value, rhs = match.groups()
            out[lhs, "~*~", rhs] = (None if value == "NA" else float(value), f"scale {lhs}")
            continue
        if not (match := SYNTAX_LINE.match(line)):
            continue
        lhs, op, value, rhs, label, rhs2 = match.groups()
        assert rhs == rhs2
        if op == "~":
            op, rhs = "~1", ""
        out[lhs, op, rhs] = (None if value == "NA" else float(value), label)
    return out


@pytest.mark.parametrize(("name", "level", "parameterization"), CASES)
def test_free_fixed_and_equal_entries_are_measEq_syntax(fits, ref, name, level, parameterization):
    fit, lavaan = _case(fits, ref, name, level, parameterization)
    syntax = _syntax_entries(lavaan["syntax"])
    table = fit.parameters
    # the delta parameterisation's residual variances are derived, not in the syntax
    assert table["derived"].any() == (parameterization == "delta")
    table = table[~table["derived"]].set_index(["lhs", "op", "rhs"])
    assert sorted(syntax) == sorted(table.index)
    index_of_label: dict = {}
    for key, (value, label) in syntax.items():
        free, est = table.loc[key, "free"], table.loc[key, "est"]
        if value is None:
            assert free >= 0, key
            # one parameter per label: equal labels share a parameter, others do not
            assert index_of_label.setdefault(label, free) == free, key
        else:
            assert free == -1, key
            assert est == value, key
    assert len(set(index_of_label.values())) == len(index_of_label)


@pytest.mark.parametrize(("name", "level"), STEPS)
def test_difference_test_matches_lavTestLRT(fits, ref, name, level):
    previous = LEVELS[LEVELS.index(level) - 1]
    expected = ref[name]["lrt"][level]
    assert "satorra.2000" in expected["method"]
    result = wlsmv_difference(fits[name, level], fits[name, previous])
    assert result.df_diff == expected["df_diff"]
    assert result.chisq_diff == pytest.approx(expected["chisq_diff"], abs=1e-3)
    assert result.p_value == pytest.approx(expected["p"], abs=1e-3)
    # the order of the two models does not matter
    swapped = wlsmv_difference(fits[name, previous], fits[name, level])
    assert swapped.chisq_diff == result.chisq_diff


@pytest.mark.parametrize(("name", "level"), STEPS)
def test_score_tests_match_lavTestScore(fits, ref, name, level):
    tests = wlsmv_score_tests(fits[name, level], ref[name]["names"])
    expected = ref[name]["score"][level]
    table = tests.univariate
    assert table["statistic"].is_monotonic_decreasing
    ours = table.set_index(["lhs", "op", "rhs"])
    keys = list(zip(expected["lhs"], expected["op"], expected["rhs"], strict=True))
    assert sorted(ours.index) == sorted(keys)
    np.testing.assert_allclose(ours.loc[keys, "statistic"], expected["X2"], rtol=0, atol=1e-3)
    np.testing.assert_allclose(ours.loc[keys, "p_value"], expected["p"], rtol=0, atol=1e-3)
    firsts = zip(expected["first_lhs"], expected["first_op"], expected["first_rhs"], strict=True)
    columns = ["first_lhs", "first_op", "first_rhs"]
    assert [tuple(row) for row in ours.loc[keys, columns].to_numpy()] == list(firsts)
    assert tests.df == expected["total"]["df"]
    assert tests.statistic == pytest.approx(expected["total"]["X2"], abs=1e-3)


def _freed_entry(freed: dict, names: list, n_items: int) -> tuple:
    """Our entry for lavaan's ``lhs op rhs`` of a later wave's threshold or loading."""
    if freed["op"] == "|":
        j = names.index(freed["lhs"])
        return ("tau", j % n_items, j // n_items, int(freed["rhs"][1:]) - 1)
    j = names.index(freed["rhs"])
    return ("lambda", j % n_items, j // n_items)


PARTIAL = [(name, level) for name in SETS for level in ("thresholds", "metric")]


@pytest.mark.parametrize(("name", "level"), PARTIAL)
def test_the_partial_model_matches_lavaan(ref, name, level):
    expected = ref[name]["partial"][level]
    shape = _shape(ref[name])
    entry = _freed_entry(expected["freed"], ref[name]["names"], shape["n_items"])
    fit = fit_wlsmv(_stats(ref[name]), **shape, level=level, freed=(entry,))
    assert fit.npar == expected["fit"]["npar"]
    assert fit.df == expected["fit"]["df"]
    for attribute in ("chisq", "chisq_scaled"):
        key = MEASURES[attribute][0]
        assert getattr(fit, attribute) == pytest.approx(expected["fit"][key], abs=1e-3)
    for attribute in ("cfi_scaled", "tli_scaled", "rmsea_scaled", "srmr"):
        key = MEASURES[attribute][0]
        assert getattr(fit, attribute) == pytest.approx(expected["fit"][key], abs=1e-4)
    params = expected["params"]
    keys = list(zip(params["lhs"], params["op"], params["rhs"], strict=True))
    ours = fit.parameters.set_index(["lhs", "op", "rhs"])
    assert sorted(ours.index) == sorted(keys)
    np.testing.assert_allclose(ours.loc[keys, "est"], params["est"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(ours.loc[keys, "se"], params["se"], rtol=0, atol=1e-3)


def test_the_ladder_is_ten_times_faster_than_lavaan(ref):
    lavaan_seconds = sum(ref[name]["models"][level]["seconds"] for name in SETS for level in LEVELS)
    data = [(_stats(ref[name]), _shape(ref[name])) for name in SETS]
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        for stats, shape in data:
            for level in LEVELS:
                fit_wlsmv(stats, **shape, level=level)
        best = min(best, time.perf_counter() - start)
    assert best < lavaan_seconds / 10


def test_a_diagonal_weight_matrix_gives_the_same_fit(ref, fits):
    stats = _stats(ref["rim"])
    matrix = _Stats(**{**stats.__dict__, "wls_v": np.diag(stats.wls_v)})
    fit = fit_wlsmv(matrix, **_shape(ref["rim"]), level="metric")
    assert fit.chisq_scaled == fits["rim", "metric"].chisq_scaled


def test_bad_input_raises_one_clear_error(ref):
    stats = _stats(ref["rim"])
    shape = _shape(ref["rim"])
    with pytest.raises(InvalidParameterError, match="level"):
        fit_wlsmv(stats, **shape, level="weak")
    with pytest.raises(InvalidParameterError, match="parameterization"):
        fit_wlsmv(stats, **shape, level="metric", parameterization="probit")
    with pytest.raises(InvalidParameterError, match="delta"):
        fit_wlsmv(stats, **shape, level="strict", parameterization="delta")
    with pytest.raises(InvalidParameterError, match="n_items=3"):
        fit_wlsmv(stats, n_items=3, n_waves=2, level="metric")
    with pytest.raises(InvalidParameterError, match="freed"):
        fit_wlsmv(stats, **shape, level="metric", freed=(("lambda", 0, 0),))
    with pytest.raises(InvalidParameterError, match="freed"):
        fit_wlsmv(stats, **shape, level="metric", freed=(("psi", 1),))
    uneven = _Stats(**{**stats.__dict__, "thresholds": stats.thresholds[:-1] + [np.zeros(2)]})
    with pytest.raises(InvalidParameterError, match="content.3"):
        fit_wlsmv(uneven, **shape, level="metric")
    with pytest.raises(InvalidParameterError, match="gamma"):
        fit_wlsmv(object(), **shape, level="metric")
    # nervous is binary there: its one threshold released, its intercept is not identified
    collapsed = _stats(ref["flat_collapsed"])
    with pytest.raises(InvalidParameterError, match="not identified"):
        fit_wlsmv(
            collapsed,
            **_shape(ref["flat_collapsed"]),
            level="thresholds",
            freed=(("tau", 2, 1, 0),),
        )
