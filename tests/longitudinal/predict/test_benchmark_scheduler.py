"""evaluate_predictions(scheduler=...): the fits run elsewhere, the tables are the serial run's.

A small simulated study (14 participants), two split seeds, grouped 2-fold, a constant, a
linear and an ordinal model on two predictors: 18 fits, run here, on two processes and on a
local Dask cluster bound to 127.0.0.1. Every table (metrics, summary, runs but their seconds,
bootstrap intervals and comparisons, notes) must be identical, value for value.
"""

import pandas as pd
import pytest

from longitudinal import InvalidParameterError
from longitudinal.predict import evaluate_predictions
from longitudinal.simulate import simulate_study
from longitudinal.study.loaded import load_study

OPTIONS = {
    "seeds": 2,
    "k": 2,
    "models": ["grand_mean", "lmm_traits", "clmm_full"],
    "predictors": ["bfi44_agreeableness", "words"],
    "bayes": False,
    "n_boot": 50,
    "bootstrap_seed": 3,
}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = simulate_study(tmp_path_factory.mktemp("sched") / "study", seed=11, n_participants=14)
    return load_study(root)


@pytest.fixture(scope="module")
def serial(study):
    return evaluate_predictions(study, **OPTIONS)


def _same(serial, other):
    for name in ("metrics", "summary_table", "intervals", "comparisons"):
        pd.testing.assert_frame_equal(
            getattr(serial, name), getattr(other, name), check_exact=True, obj=name
        )
    runs = [r.drop(columns="seconds") for r in (serial.runs, other.runs)]
    pd.testing.assert_frame_equal(*runs, check_exact=True, obj="runs")
    assert serial.notes == other.notes


@pytest.mark.parametrize("scheduler", ["processes:2", "local:2"])
def test_the_fits_elsewhere_give_the_serial_tables(study, serial, scheduler):
    if scheduler.startswith("local"):
        pytest.importorskip("distributed")
    other = evaluate_predictions(study, scheduler=scheduler, **OPTIONS)
    _same(serial, other)
    assert serial.parameters["scheduler"] == {"scheduler": "serial", "workers": 1}
    ran = other.parameters["scheduler"]
    assert ran["scheduler"] == scheduler and ran["workers"] == 2
    assert ran["fits"] == 18


def test_the_fit_list_is_the_serial_loop(study):
    """18 fits: 3 models x 2 seeds x (1 holdout + 2 folds), in the serial run's order."""
    from longitudinal.predict import benchmark
    from longitudinal.predict.benchmark_runs import _Runner

    raw, full = benchmark._benchmark_data(
        study, session_features=None, predictors=OPTIONS["predictors"], func="test"
    )
    groups = full.data[full.id_col].to_numpy(dtype=object)
    plan = benchmark.draw_splits(groups, seeds=[0, 1], k=2, sizes=benchmark.SPLIT_SIZES)
    runner = _Runner(raw, full, groups, plan, None, {}, True, [])
    fits = runner.fits(OPTIONS["models"], [0, 1], bayes_kfold=False)
    assert [(f.model, f.split, f.seed, f.fold) for f in fits[:6]] == [
        ("grand_mean", "holdout", 0, None),
        ("lmm_traits", "holdout", 0, None),
        ("clmm_full", "holdout", 0, None),
        ("grand_mean", "kfold", 0, 0),
        ("grand_mean", "kfold", 0, 1),
        ("lmm_traits", "kfold", 0, 0),
    ]
    assert len(fits) == 18


@pytest.mark.parametrize("scheduler", ["threads:2", "local:0", 2])
def test_a_bad_scheduler_is_refused_before_any_fit(study, scheduler):
    with pytest.raises(InvalidParameterError, match="scheduler"):
        evaluate_predictions(study, scheduler=scheduler, **OPTIONS)


def test_the_command_refuses_a_bad_scheduler_with_exit_2(study, tmp_path, capsys):
    from longitudinal.cli import main

    out = tmp_path / "evaluate"
    args = ["evaluate", str(study.root), "--out", str(out), "--seeds", "1", "--no-bayes"]
    assert main([*args, "--scheduler", "threads:2"]) == 2
    err = capsys.readouterr().err
    assert "scheduler" in err and "processes:N" in err and "Traceback" not in err
    assert not out.exists()
