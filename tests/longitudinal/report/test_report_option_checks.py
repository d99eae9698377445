"""Report options refused before any analysis: ``retest`` names, sampling counts.

A ``retest`` name the report would not use is refused, with the names it takes.

The change section looks a scale's test-retest reliability up by the scale's column, then
by its instrument; a misspelled name matched neither and the reliable change index was
computed from alpha without a word. ``build_report`` (``longitudinal report --retest``)
now refuses it once the study is read, before any analysis (the command line's words are
in the corpus case ``safety_report_retest_unknown``). The Bayesian model's draws, tuning
steps and chains past their ceilings are refused with the options, not when the model's turn
comes.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from longitudinal._errors import InvalidParameterError
from longitudinal.report import build_report
from longitudinal.report.retest import check_retest_names, retest_names
from longitudinal.study.loaded import load_study

TINY = Path(__file__).parents[2] / "data" / "studies" / "tiny"


@pytest.fixture(scope="module")
def tiny():
    with warnings.catch_warnings():  # its reliability warnings are the loader's tests' matter
        warnings.simplefilter("ignore")
        return load_study(TINY)


def test_the_names_are_the_analysed_state_scales_and_their_instruments(tiny):
    # WHO-5's raw score is a rescaling of its percentage: only the percentage is analysed
    assert retest_names(tiny) == ["who5_percentage", "who5"]
    check_retest_names({"who5_percentage": 0.8, "who5": 0.7}, tiny, func="build_report")


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("who5_percentag", "'who5_percentag' (did you mean 'who5_percentage'?)"),
        ("tas4", "'tas4', not a state scale or state instrument of this study (a trait"),
        ("who5_raw", "'who5_raw' (did you mean"),
        ("x", "'x', not a state scale"),
    ],
)
def test_an_unknown_name_is_refused_with_the_names_it_takes(tiny, name, says):
    with pytest.raises(InvalidParameterError) as info:
        check_retest_names({name: 0.8}, tiny, func="build_report")
    message = str(info.value)
    assert says in message
    assert message.startswith("the `retest` parameter of build_report names ")
    assert message.endswith("the names it takes: who5_percentage, who5")


def test_build_report_refuses_it_before_any_analysis(tmp_path, monkeypatch):
    import longitudinal.report.build as build

    def analysed(*args, **kwargs):
        raise AssertionError("the report ran its analyses")

    monkeypatch.setattr(build, "write_report", analysed)
    out = tmp_path / "report"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidParameterError, match="did you mean 'who5_percentage'"):
            build_report(TINY, out, retest={"who5_percentag": 0.8}, bayes=False)
    assert list(tmp_path.iterdir()) == []  # no report, no pseudonym key


def test_report_sampling_counts_past_their_ceiling_are_refused_with_the_options():
    from conftest import run_command

    from longitudinal.report.options import check_options

    base = dict(seed=None, pseudonymize=False, retest=None, random_slope=True, ci_level=0.95,
                bayes=True, overwrite=False, func="build_report")  # fmt: skip
    with pytest.raises(
        InvalidParameterError, match="`draws` option of build_report must be at most 1,000,000"
    ):
        check_options(**base, sampling={"draws": 10**9})
    with pytest.raises(
        InvalidParameterError, match="`chains` option of build_report must be at most 64"
    ):
        check_options(**base, sampling={"chains": 65})
    assert check_options(**base, sampling={"draws": 1000}).sampling == {"draws": 1000}
    # draws="auto" (stop at the first 1,000 that pass) is an option of its own; other text is not
    assert check_options(**base, sampling={"draws": "auto"}).sampling == {"draws": "auto"}
    with pytest.raises(InvalidParameterError, match="`draws` sampling option of build_report"):
        check_options(**base, sampling={"draws": "many"})
    for command in ("report", "evaluate"):
        run = run_command([command, str(TINY), "--out", "never", "--draws", "many"])
        assert run.code == 2 and "--draws: expected a whole number or 'auto'; got 'many'" in run.err


def test_the_invariance_estimator_is_checked_and_recorded():
    from conftest import run_command

    from longitudinal.report.options import check_options

    base = dict(seed=None, pseudonymize=False, retest=None, random_slope=True, ci_level=0.95,
                bayes=False, overwrite=False, func="build_report")  # fmt: skip
    assert check_options(**base).invariance_estimator == "auto"
    assert "invariance_estimator" not in check_options(**base).as_dict()
    chosen = check_options(**base, invariance_estimator="WLSMV")
    assert chosen.as_dict()["invariance_estimator"] == "WLSMV"  # provenance says so
    with pytest.raises(
        InvalidParameterError,
        match="`invariance_estimator` parameter of build_report must be one of auto, WLSMV, "
        "MLR, ML; got 'wlsmv'",
    ):
        check_options(**base, invariance_estimator="wlsmv")
    run = run_command(["report", str(TINY), "--out", "never", "--estimator", "DWLS"])
    assert run.code == 2 and "--estimator: invalid choice: 'DWLS'" in run.err
