"""Tests of models/power.py: simulation-based power for linear mixed models."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from models import InvalidParameterError, LinearMixedModel
from models.power import (
    FAILURE_COLUMNS,
    POWER_COLUMNS,
    SIMULATION_COLUMNS,
    PowerDesign,
    PowerResult,
    clopper_pearson,
    read_design,
    simulate_power,
)
from models.power._design import extend_frame, generate_frame

REFERENCE = Path(__file__).resolve().parents[1] / "reference"


def paired_dict(sd_person: float = 1.0, sd_residual: float = 1.0) -> dict:
    """Two sessions per participant, condition 0 then 1: a paired comparison."""
    return {
        "design": {"formula": "y ~ condition + (1 | participant_id)", "sessions": 2},
        "predictors": {
            "condition": {"level": "session", "distribution": "cycle", "values": [0, 1]}
        },
        "fixed": {"Intercept": 0.0},
        "random": {"participant_id": {"sd": {"Intercept": sd_person}}},
        "residual": {"sd": sd_residual},
    }


def paired(sd_person: float = 1.0, sd_residual: float = 1.0) -> PowerDesign:
    return read_design(paired_dict(sd_person, sd_residual))


STUDY_TOML = """
[design]
formula = "empathy ~ trait + week + (1 + week | participant_id) + (1 | story_id)"
participants = 40
sessions = [6, 12]
stories_per_session = 3
stories = 120
days = 30

[predictors.trait]
level = "participant"
distribution = "normal"

[fixed]
Intercept = 3.3
trait = 0.2
week = 0.05

[random.participant_id]
sd = { Intercept = 0.6, week = 0.1 }
corr = [["Intercept", "week", -0.2]]

[random.story_id]
sd = { Intercept = 0.3 }

[residual]
sd = 0.9
"""


@pytest.fixture(scope="module")
def study_design(tmp_path_factory) -> PowerDesign:
    path = tmp_path_factory.mktemp("design") / "study.toml"
    path.write_text(STUDY_TOML, encoding="utf-8")
    return read_design(path)


@pytest.fixture(scope="module")
def pilot() -> tuple[LinearMixedModel, pd.DataFrame]:
    rng = np.random.default_rng(7)
    n, k = 12, 4
    pid = np.repeat([f"p{i:02d}" for i in range(n)], k * 2)
    session = np.repeat([f"s{i:03d}" for i in range(n * k)], 2)
    trait = np.repeat(rng.normal(size=n), k * 2)
    y = 1 + 0.3 * trait + np.repeat(rng.normal(0, 0.7, n), k * 2) + rng.normal(0, 1, n * k * 2)
    data = pd.DataFrame({"pid": pid, "session": session, "trait": trait, "y": y})
    return LinearMixedModel("y ~ trait + (1 | pid)").fit(data), data


# ---------------------------------------------------------------------------------------------
# pieces


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (512, 1000)])
def test_clopper_pearson_matches_the_exact_binomial_interval(k, n):
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    np.testing.assert_allclose(clopper_pearson(k, n, 0.95), (ci.low, ci.high), rtol=1e-12)


def test_generated_design_has_the_declared_shape(study_design):
    frame = generate_frame(
        study_design,
        n_participants=25,
        sessions=(6, 12),
        rng=np.random.default_rng(1),
        response="empathy",
    )
    per_person = frame.groupby("participant_id")["session_id"].nunique()
    assert len(per_person) == 25
    assert per_person.between(6, 12).all()
    assert (frame.groupby("session_id").size() == 3).all()
    assert (frame.groupby("session_id")["story_id"].nunique() == 3).all()
    assert frame["week"].between(0, 30 / 7).all()
    # a participant-level predictor is constant within a participant
    assert (frame.groupby("participant_id")["trait"].nunique() == 1).all()


def test_extend_frame_copies_whole_sessions_with_new_ids(pilot):
    _, data = pilot
    out = extend_frame(
        data,
        participant_col="pid",
        session_col="session",
        n_participants=30,
        sessions=(2, 6),
        rng=np.random.default_rng(3),
    )
    per_person = out.groupby("pid")["session"].nunique()
    assert len(per_person) == 30 and per_person.between(2, 6).all()
    assert (out.groupby("session").size() == 2).all()  # every row of a session comes along
    assert (out.groupby("pid")["trait"].nunique() == 1).all()
    # donors are cycled: 30 = 2 x 12 + 6, so every pilot participant is used 2 or 3 times
    donors = out.groupby("pid")["trait"].first().value_counts()
    assert set(donors.to_numpy()) <= {2, 3}


# ---------------------------------------------------------------------------------------------
# results


def test_result_shape_and_bookkeeping(study_design):
    result = simulate_power(
        study_design, effect={"trait": 0.3}, n_participants=[10, 20], n_sims=20, seed=3,
        progress=False,
    )  # fmt: skip
    assert isinstance(result, PowerResult)
    assert repr(result).startswith("PowerResult(term='trait', 2 design(s), 20 simulations each")
    assert "\n" not in repr(result) and "n_participants" in result.summary()
    assert "<table" in result._repr_html_()
    assert list(result.table.columns) == POWER_COLUMNS
    assert list(result.failures.columns) == FAILURE_COLUMNS
    assert list(result.simulations.columns) == SIMULATION_COLUMNS
    table = result.table
    assert table["n_participants"].tolist() == [10, 20]
    assert table["n_sessions"].tolist() == ["6-12", "6-12"]
    # nothing dropped silently: every simulation is used or listed as failed
    for row in table.itertuples():
        sims = result.simulations[result.simulations["n_participants"] == row.n_participants]
        listed = result.failures[result.failures["n_participants"] == row.n_participants]
        assert len(sims) == row.n_sims
        assert row.n_failed == int((~listed["used"]).sum())
        assert row.n_singular == int((listed["reason"] == "singular").sum())
        used = sims[sims["p_value"].notna()]
        assert len(used) == row.n_sims - row.n_failed
        assert row.n_rejected == int((used["p_value"] < 0.05).sum())
        assert row.power == pytest.approx(row.n_rejected / len(used), rel=1e-12)
    meta = result.meta
    assert meta["seed"] == 3 and meta["term"] == "trait" and meta["effect"] == 0.3
    assert meta["truth"]["fixed"] == {"Intercept": 3.3, "trait": 0.3, "week": 0.05}
    assert meta["package_version"]


def test_same_seed_same_result_whatever_the_batches(study_design):
    kw = {"effect": {"trait": 0.2}, "n_participants": [12], "n_sims": 12, "seed": 5}
    a = simulate_power(study_design, batch_size=1, progress=False, **kw)
    b = simulate_power(study_design, batch_size=5, progress=False, **kw)
    pd.testing.assert_frame_equal(a.simulations, b.simulations, check_exact=True)
    c = simulate_power(study_design, progress=False, **{**kw, "seed": 6})
    assert not np.array_equal(a.simulations["estimate"], c.simulations["estimate"])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_serial_processes_and_dask_give_identical_tables(method, monkeypatch):
    pytest.importorskip("distributed")
    import models.parallel as _runners

    _skip_without_start_method(method)
    monkeypatch.setattr(_runners, "_start_method", lambda quick: method)
    design = paired()
    kw = {
        "effect": {"condition": 0.5},
        "n_participants": [8, 16],
        "n_sims": 24,
        "seed": 11,
        "progress": False,
        "batch_size": 5,
    }
    serial = simulate_power(design, **kw)
    procs = simulate_power(design, scheduler="processes:2", **kw)
    dask = simulate_power(design, scheduler="local:2", **kw)
    for other in (procs, dask):
        pd.testing.assert_frame_equal(serial.table, other.table, check_exact=True)
        pd.testing.assert_frame_equal(serial.failures, other.failures, check_exact=True)
        pd.testing.assert_frame_equal(serial.simulations, other.simulations, check_exact=True)
    assert procs.meta["scheduler"] == "processes:2" and dask.meta["scheduler"] == "local:2"
    assert procs.meta["start_method"] == method
    assert dask.meta["start_method"] == method  # not forking: as Dask is configured (spawn)
    assert dask.meta["workers"] == 2


def test_a_process_pool_forks_only_for_quick_jobs_from_one_thread_on_linux():
    import subprocess
    import threading

    from models.parallel import _start_method

    code = "from models.parallel import _start_method; print(_start_method(True))"
    alone = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    linux = sys.platform.startswith("linux")
    assert alone.stdout.strip() == ("fork" if linux else "spawn"), alone.stderr
    assert _start_method(False) == "spawn"  # jobs of seconds: a new interpreter each
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:  # a lock held by another thread would stay held in a forked child
        assert _start_method(True) == "spawn"
    finally:
        release.set()
        other.join()


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_local_dask_workers_keep_glibc_memory_reuse_and_leave_this_environment_alone(
    method, monkeypatch
):
    # Dask's nannies set MALLOC_TRIM_THRESHOLD_=65536 in their workers (the refits ran at half
    # speed there) and write it, with the BLAS thread limits, into the parent's environment.
    distributed = pytest.importorskip("distributed")
    import models.parallel as _runners
    from models.parallel import local_cluster

    _skip_without_start_method(method)
    # set here, after every import: only a forked worker has it
    monkeypatch.setattr(_runners, "_MARK_OF_THIS_PROCESS", True, raising=False)
    before = dict(os.environ)
    cluster = local_cluster(distributed, 1, method)
    try:
        assert dict(os.environ) == before
        with distributed.Client(cluster, set_as_default=False) as client:
            seen = client.run(
                lambda: {
                    k: os.environ.get(k) for k in ("MALLOC_TRIM_THRESHOLD_", "OPENBLAS_NUM_THREADS")
                }
            )
            profiling = client.run(_worker_profiles)
            forked = client.run(_worker_was_forked)
    finally:
        cluster.close()
    assert list(seen.values()) == [{"MALLOC_TRIM_THRESHOLD_": None, "OPENBLAS_NUM_THREADS": "1"}]
    assert list(profiling.values()) == [False]  # no dashboard to show the samples
    assert list(forked.values()) == [method == "fork"]


def _skip_without_start_method(method):
    import multiprocessing as mp

    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method!r} start method on {sys.platform}")


def _worker_was_forked():
    runners = sys.modules.get("models.parallel")
    return getattr(runners, "_MARK_OF_THIS_PROCESS", False)


def _worker_profiles():
    import dask

    return dask.config.get("distributed.worker.profile.enabled")


def test_an_existing_dask_cluster_by_its_tcp_address_gives_the_same_table():
    distributed = pytest.importorskip("distributed")
    design = paired()
    kw = {"effect": {"condition": 0.5}, "n_participants": [8], "n_sims": 12, "seed": 13}
    serial = simulate_power(design, progress=False, **kw)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp", host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:  # fmt: skip
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        remote = simulate_power(design, scheduler=address, progress=False, batch_size=4, **kw)
    pd.testing.assert_frame_equal(serial.simulations, remote.simulations, check_exact=True)
    assert remote.meta["scheduler"] == address and remote.meta["workers"] == 1


def test_pilot_with_sessions_and_effect_override(pilot):
    model, data = pilot
    result = simulate_power(
        model,
        data=data,
        effect={"trait": 0.0},
        n_participants=[20],
        n_sessions="3-5",
        session_col="session",
        n_sims=10,
        seed=1,
        progress=False,
    )
    row = result.table.iloc[0]
    assert row["n_sessions"] == "3-5"
    assert 20 * 3 * 2 <= row["n_obs"] <= 20 * 5 * 2
    assert result.meta["truth"]["fixed"]["trait"] == 0.0
    # the other parameters stay as the pilot estimated them
    assert result.meta["truth"]["fixed"]["Intercept"] == model.beta_["Intercept"]


@pytest.mark.parametrize("test", ["satterthwaite", "wald", "lrt"])
def test_every_test_detects_a_large_effect_and_keeps_level_at_zero(test):
    design = paired()
    big = simulate_power(
        design, effect={"condition": 1.5}, n_participants=[20], n_sims=40, seed=2, test=test,
        progress=False,
    )  # fmt: skip
    assert big.table["power"].iloc[0] > 0.9
    null = simulate_power(
        design, effect={"condition": 0.0}, n_participants=[20], n_sims=40, seed=2, test=test,
        progress=False,
    )  # fmt: skip
    assert null.table["power"].iloc[0] < 0.25
    assert big.meta["test"] == test


# ---------------------------------------------------------------------------------------------
# agreement with analytic and R results


def test_paired_design_agrees_with_ttestpower():
    from statsmodels.stats.power import TTestPower

    n, delta = 20, 0.5
    # y_i2 - y_i1 = delta + e_i2 - e_i1: SD of the difference sqrt(2) * residual SD
    dz = delta / math.sqrt(2.0)
    expected = TTestPower().power(effect_size=dz, nobs=n, alpha=0.05, alternative="two-sided")
    result = simulate_power(
        paired(), effect={"condition": delta}, n_participants=[n], n_sims=1000, seed=2024,
        progress=False,
    )  # fmt: skip
    row = result.table.iloc[0]
    se = math.sqrt(expected * (1 - expected) / (row["n_sims"] - row["n_failed"]))
    # Monte Carlo error only: within 3.5 standard errors (a false alarm once in ~2,000 runs)
    assert abs(row["power"] - expected) < 3.5 * se, (row["power"], expected)


def test_mixed_design_agrees_with_lme4_loop():
    ref = json.loads((REFERENCE / "power_lme4.json").read_text(encoding="utf-8"))
    d = ref["design"]
    design = read_design(
        {
            "design": {
                "formula": d["formula"],
                "participants": d["participants"],
                "sessions": d["sessions"],
            },
            "predictors": {
                "t": {
                    "level": "session",
                    "distribution": "cycle",
                    "values": list(range(d["sessions"])),
                }
            },
            "fixed": {"Intercept": d["beta"][0]},
            "random": {
                "participant_id": {
                    "sd": {"Intercept": d["sds"][0], "t": d["sds"][1]},
                    "corr": [["Intercept", "t", d["corr"]]],
                }
            },
            "residual": {"sd": d["residual_sd"]},
        }
    )
    result = simulate_power(
        design, effect={"t": d["beta"][1]}, n_sims=1000, seed=99, progress=False
    )
    row = result.table.iloc[0]
    ours, theirs = row["power"], float(ref["power"])
    n_ours = row["n_sims"] - row["n_failed"]
    n_theirs = ref["n_sims"] - ref["n_failed"]
    se = math.sqrt(theirs * (1 - theirs) * (1 / n_ours + 1 / n_theirs))
    # two independent Monte Carlo estimates: within 3.5 standard errors of their difference
    assert abs(ours - theirs) < 3.5 * se, (ours, theirs)


@pytest.mark.slow
def test_type_one_error_at_forty_participants(study_design):
    """With the effect at 0 the rejection rate is within the 99% binomial interval of alpha."""
    n_sims, alpha = 2000, 0.05
    result = simulate_power(
        study_design, effect={"trait": 0.0}, n_participants=[40], n_sims=n_sims, alpha=alpha,
        seed=20240501, progress=False, scheduler="processes:2",
    )  # fmt: skip
    row = result.table.iloc[0]
    used = row["n_sims"] - row["n_failed"]
    assert row["n_failed"] <= 0.01 * n_sims
    low, high = stats.binom.interval(0.99, used, alpha)
    assert low <= row["n_rejected"] <= high, row.to_dict()


# ---------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"effect": {"nope": 1.0}}, "not a fixed-effect term"),
        ({"effect": {"condition": 1.0, "x": 2.0}}, "mapping of one fixed-effect term"),
        ({"effect": {"condition": "big"}}, "finite number"),
        ({"effect": {"condition": 1.0}, "n_participants": [1]}, "whole number from 2 to"),
        ({"effect": {"condition": 1.0}, "n_participants": [10, 10]}, "twice"),
        ({"effect": {"condition": 1.0}, "n_sims": 0}, "n_sims"),
        ({"effect": {"condition": 1.0}, "alpha": 5}, "alpha"),
        ({"effect": {"condition": 1.0}, "test": "f"}, "test"),
        ({"effect": {"condition": 1.0}, "scheduler": "cluster"}, "scheduler"),
        ({"effect": {"condition": 1.0}, "scheduler": "local:0"}, "N must be a whole number"),
        ({"effect": {"condition": 1.0}, "n_sessions": "6-2"}, "min <= max"),
        ({"effect": {"condition": 1.0}, "session_col": "s"}, "apply to a pilot"),
    ],
)
def test_bad_parameters_are_named(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        simulate_power(paired(), n_sims=kwargs.pop("n_sims", 2), progress=False, **kwargs)


def test_pilot_needs_its_data(pilot):
    model, data = pilot
    with pytest.raises(InvalidParameterError, match="`data` parameter .* required"):
        simulate_power(model, effect={"trait": 0.1}, n_sims=2, progress=False)
    with pytest.raises(InvalidParameterError, match="needs `session_col`"):
        simulate_power(
            model, data=data, effect={"trait": 0.1}, n_sessions=4, n_sims=2, progress=False
        )
    with pytest.raises(InvalidParameterError, match="fitted LinearMixedModel"):
        simulate_power(LinearMixedModel("y ~ trait + (1 | pid)"), effect={"trait": 0.1})


def test_dask_without_the_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"empathic-longitudinal\[dask\]"):
        simulate_power(
            paired(), effect={"condition": 1.0}, n_sims=2, scheduler="local:1", progress=False
        )


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d.pop("fixed"), r"\[fixed\] is missing"),
        (lambda d: d["design"].update(colour="red"), r"unknown key\(s\) \['colour'\]"),
        (lambda d: d["design"].update(formula="y ~ __import__('os') + (1|g)"), "formula"),
        (lambda d: d["predictors"]["condition"].update(level="day"), "level must be one of"),
        (lambda d: d.update(thresholds={"cut": [1, 2]}), "ordinal design"),
        (lambda d: d["residual"].update(sd=-1), ">= 0"),
        (lambda d: d["random"]["participant_id"].update(corr=[["a", "b", 2]]), r"\(-1, 1\)"),
    ],
)
def test_bad_design_files_name_the_key(edit, match):
    raw = paired_dict()
    edit(raw)
    from models import FormulaError

    with pytest.raises((InvalidParameterError, FormulaError), match=match):
        read_design(raw)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda d: d["fixed"].pop("Intercept"), r"missing \['Intercept'\]"),
        (lambda d: d["fixed"].update(age=1.0), r"not in the formula \['age'\]"),
        (lambda d: d["random"].update(story_id={"sd": {"Intercept": 1}}), "no grouping factor"),
        (lambda d: d["random"]["participant_id"]["sd"].pop("Intercept"), "missing"),
    ],
)
def test_design_not_matching_its_formula_is_refused(edit, match):
    raw = paired_dict()
    edit(raw)
    with pytest.raises(InvalidParameterError, match=match):
        simulate_power(read_design(raw), effect={"condition": 1.0}, n_sims=2, progress=False)


def test_design_file_errors_name_the_file(tmp_path):
    path = tmp_path / "d.toml"
    path.write_text("[design\nformula = 1", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="d.toml is not valid TOML"):
        read_design(path)
    with pytest.raises(InvalidParameterError, match="cannot read the design"):
        read_design(tmp_path / "missing.toml")


@pytest.mark.parametrize("test", ["satterthwaite", "wald", "lrt"])
def test_newton_refits_give_the_p_values_of_linear_mixed_model_refit(test, monkeypatch):
    """Newton's method on the exact derivatives reaches refit's optimum and its test."""
    import models.power._lmm as power_lmm

    design = read_design({**paired_dict(), "design": {**paired_dict()["design"], "sessions": 4}})
    kw = {"effect": {"condition": 0.4}, "n_participants": [12, 30], "n_sims": 25, "seed": 8}
    calls = []
    real = power_lmm.AnalyticRefit.test
    monkeypatch.setattr(
        power_lmm.AnalyticRefit, "test", lambda self, i, y: calls.append(i) or real(self, i, y)
    )
    fast = simulate_power(design, test=test, progress=False, **kw)
    assert len(calls) == 50
    monkeypatch.setattr(
        power_lmm.LmmPowerJob, "one", lambda self, i: self.slow(i, self.response(i))
    )
    slow = simulate_power(design, test=test, progress=False, **kw)
    # the two optimizers stop within their tolerances (1e-6 in theta) of one optimum:
    # estimates agree to 1e-7, p values (through the df and the deviances) to 1e-5 relative
    pd.testing.assert_frame_equal(fast.simulations, slow.simulations, rtol=1e-5)
    np.testing.assert_allclose(
        fast.simulations["estimate"], slow.simulations["estimate"], rtol=1e-7
    )
    pd.testing.assert_frame_equal(fast.table, slow.table, check_exact=True)


def test_fast_refit_gives_the_p_values_of_linear_mixed_model_refit(monkeypatch):
    """Where Newton's method gives up, the reduced mixedlm refit tests exactly as refit does."""
    import models.power._lmm as power_lmm

    design = read_design({**paired_dict(), "design": {**paired_dict()["design"], "sessions": 4}})
    kw = {"effect": {"condition": 0.4}, "n_participants": [12, 30], "n_sims": 25, "seed": 8}
    monkeypatch.setattr(power_lmm.AnalyticRefit, "test", lambda self, i, y: None)
    fast = simulate_power(design, test="satterthwaite", progress=False, **kw)
    monkeypatch.setattr(
        power_lmm.LmmPowerJob, "one", lambda self, i: self.slow(i, self.response(i))
    )
    slow = simulate_power(design, test="satterthwaite", progress=False, **kw)
    pd.testing.assert_frame_equal(fast.simulations, slow.simulations, rtol=1e-12)
    pd.testing.assert_frame_equal(fast.table, slow.table, check_exact=True)


def test_wald_and_lrt_refits_read_the_standard_error_without_the_df(pilot):
    """Without the Satterthwaite test a refit's table (and its df Hessian) is never built."""
    from models.power._lmm import term_test

    model, data = pilot
    refit = model.refit(data["y"].to_numpy() + 0.1)
    estimate, se, p = term_test(refit, "trait", satterthwaite=False)
    assert "fixed_" not in refit._lazy and math.isnan(p)
    row = refit.fixed_.set_index("term").loc["trait"]
    assert estimate == pytest.approx(row["estimate"], rel=1e-12)
    assert se == pytest.approx(row["se"], rel=1e-10)
    assert term_test(refit, "trait", satterthwaite=True)[2] == pytest.approx(row["p_value"])


def test_a_clmm_failure_states_the_criterion_that_failed():
    from types import SimpleNamespace

    import pandas as pd

    from models.ordinal._fit import convergence_failure
    from models.power._lmm import refit_outcome

    pgtol = "CONVERGENCE: NORM_OF_PROJECTED_GRADIENT_<=_PGTOL"
    reason = convergence_failure(
        ok=True, message=pgtol, pos_def=True, max_grad=3e-3, newton_step=2e-4
    )
    assert reason == f"max|grad| 3e-3 > 1e-4 and Newton step 2e-4 > 1e-5 (L-BFGS-B: {pgtol})"
    assert convergence_failure(ok=True, message=pgtol, pos_def=True, max_grad=3e-3,
                               newton_step=1e-6) == ""  # fmt: skip
    assert convergence_failure(ok=True, message=pgtol, pos_def=True, max_grad=5e-5,
                               newton_step=1.0) == ""  # fmt: skip
    assert convergence_failure(
        ok=False, message="ABNORMAL: x", pos_def=False, max_grad=1e-6, newton_step=1e-7
    ) == (
        "the optimizer stopped before an optimum; the information matrix is not positive "
        "definite (L-BFGS-B: ABNORMAL: x)"
    )
    # what a power simulation records for a refit of that kind
    fixed = pd.DataFrame({"term": ["x"], "estimate": [0.4], "se": [0.2], "p_value": [0.05]})
    bad = SimpleNamespace(converged_=False, convergence_message_=reason, fixed_=fixed)
    template = SimpleNamespace(refit=lambda y: bad)
    outcome = refit_outcome(0, np.zeros(3), template, None, "x", "wald", refit="refit")
    assert outcome.reason == "not_converged"
    assert outcome.message.startswith("max|grad| 3e-3 > 1e-4")


def test_a_non_converged_ordinal_fit_reports_its_failing_criterion(monkeypatch):
    import warnings

    import pandas as pd

    import models.ordinal._fit as fit_module
    from models.ordinal import OrdinalMixedModel

    rng = np.random.default_rng(3)
    n_people, per = 30, 6
    person = np.repeat(np.arange(n_people), per)
    x = rng.standard_normal(n_people * per)
    latent = 0.6 * x + rng.standard_normal(n_people)[person] + rng.logistic(size=x.size)
    frame = pd.DataFrame(
        {"y": np.digitize(latent, [-1.5, 0.0, 1.5]) + 1, "x": x, "pid": person.astype(str)}
    )
    # an impossible bound on the gradient: the optimizer succeeds, the criterion fails
    monkeypatch.setattr(fit_module, "GRAD_TOL", 0.0)
    monkeypatch.setattr(fit_module, "STEP_TOL", 0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = OrdinalMixedModel("y ~ x + (1 | pid)").fit(frame)
    assert not model.converged_
    assert re.match(r"max\|grad\| \S+ > 0e0 and Newton step \S+ > 0e0 \(L-BFGS-B: ",
                    model.convergence_message_)  # fmt: skip
    assert any("max|grad|" in str(w.message) for w in caught)


def captured_jobs(monkeypatch, *args, **kwargs):
    """Run ``simulate_power(*args, **kwargs)``; return its result and the jobs it handed to
    its runner."""
    import models.parallel as runners

    captured = {}
    real = runners.run

    def capture(jobs, **kw):
        captured["jobs"] = list(jobs)
        return real(jobs, **kw)

    monkeypatch.setattr(runners, "run", capture)
    result = simulate_power(*args, **kwargs)
    return result, captured["jobs"]


def pickled_jobs(monkeypatch, path, *args, **kwargs):
    """Run ``simulate_power(*args, **kwargs)``, write the jobs it handed to its runner to
    ``path`` (as a process worker receives them) and return its result."""
    import pickle

    result, jobs = captured_jobs(monkeypatch, *args, **kwargs)
    path.write_bytes(pickle.dumps(jobs))
    return result


def test_a_worker_unpickles_a_job_without_pandas_scipy_stats_or_mixedlm(tmp_path, monkeypatch):
    """A process worker starts with NumPy and SciPy's linear algebra; the fitted template is
    unpickled only for a fallback refit, and then gives the same outcome."""
    import subprocess

    path = tmp_path / "jobs.pkl"
    pickled_jobs(
        monkeypatch, path, paired(), effect={"condition": 0.5}, n_participants=[10], n_sims=3,
        seed=4,
    )  # fmt: skip
    code = (
        "import pickle, sys; jobs = pickle.loads(open(sys.argv[1], 'rb').read()); "
        "out = jobs[0].run(0, 3); "
        "print([m for m in ('pandas', 'scipy.stats', 'mixedlm') if m in sys.modules]); "
        "print(jobs[0].slow(0, jobs[0].response(0)).p_value, out[0].p_value)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    loaded, p_values = done.stdout.splitlines()
    assert loaded == "[]"
    slow, fast = map(float, p_values.split())
    assert fast == pytest.approx(slow, rel=1e-5)


def test_a_worker_whose_script_imported_numpy_first_gives_the_same_numbers(
    study_design, tmp_path, monkeypatch
):
    """BLAS is held to one thread before a worker computes anything: a worker whose main
    script imported NumPy before the limit (BLAS threaded) gives this process's numbers."""
    import subprocess

    path = tmp_path / "jobs.pkl"
    here = pickled_jobs(
        monkeypatch, path, study_design, effect={"trait": 0.0}, n_participants=[40], n_sims=8,
        seed=6, progress=False,
    )  # fmt: skip
    code = (
        "import numpy, pickle, sys; from models.parallel import _init_worker, "
        "_process_batch; _init_worker(open(sys.argv[1], 'rb').read(), 2); "
        "print(repr([o.p_value for o in _process_batch((0, 0, 8))[1]]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
        env=env,
    )  # fmt: skip
    assert done.stdout.strip() == repr(here.simulations["p_value"].tolist())


def test_this_process_simulates_while_a_local_cluster_starts_and_hands_over_the_rest():
    import models.parallel as _runners

    class Counting:
        quick = True

        def run(self, start, stop):
            return list(range(start, stop))

    class Starting:  # "done" after three simulations here
        calls = 0

        def done(self):
            self.calls += 1
            return self.calls > 3

    todo = _runners.batches([2, 5], 4)  # (0,0,2), (1,0,4), (1,4,5)
    here = _runners._simulate_here_until([Counting(), Counting()], todo, Starting())
    done = []
    try:
        while True:
            done.append(next(here))
    except StopIteration as end:
        left = end.value
    assert done == [((0, 0, 1), [0]), ((0, 1, 2), [1]), ((1, 0, 1), [0])]
    assert left == [(1, 1, 4), (1, 4, 5)]


def test_a_forked_helper_simulates_in_chunks_until_the_cluster_starts_then_hands_over():
    from concurrent.futures import Future

    import models.parallel as _runners

    started = Future()

    class Helper:  # the first two chunks come back at once; the cluster starts at the third
        def __init__(self):
            self.sent, self.closed = [], False

        def submit(self, fn, batch):
            assert fn is _runners._process_batch
            self.sent.append(batch)
            future = Future()
            job, start, stop = batch
            if len(self.sent) <= 2:
                future.set_result((batch, list(range(start, stop))))
            if len(self.sent) == 3:
                started.set_result("cluster")
            return future

        def shutdown(self, **kw):
            self.closed = True

    helper = Helper()
    todo = _runners.batches([3, 6], 6)  # (0,0,3), (1,0,6)
    steps = _runners._helper_until(helper, todo, started, chunk=2)
    done = []
    try:
        while True:
            done.append(next(steps))
    except StopIteration as end:
        left, flight = end.value
    assert done == [((0, 0, 2), [0, 1]), ((0, 2, 3), [2])]
    # two chunks were in flight when the cluster came up: they finish beside it
    assert helper.sent[2:] == [(1, 0, 2), (1, 2, 4)] and len(flight) == 2
    assert left == [(1, 4, 6)]
    for future, batch in zip(flight, helper.sent[2:], strict=True):
        future.set_result((batch, list(range(batch[1], batch[2]))))
    assert list(_runners._drain(helper, flight)) == [((1, 0, 2), [0, 1]), ((1, 2, 4), [2, 3])]
    assert helper.closed


def test_refits_start_from_the_truths_relative_factors(study_design, monkeypatch):
    """The Newton refits start where the optima scatter around: the truth's covariance over the
    residual variance as lme4's theta, not the template's one-draw estimate."""
    _, jobs = captured_jobs(
        monkeypatch, study_design, effect={"trait": 0.3}, n_participants=[20], n_sims=2, seed=3
    )
    job = jobs[0]
    # STUDY_TOML: person SDs 0.6 and 0.1 correlated -0.2, story SD 0.3, residual SD 0.9
    cov = np.array([[0.36, -0.2 * 0.06], [-0.2 * 0.06, 0.01]])
    T = np.linalg.cholesky(cov) / 0.9
    expected = np.array([T[0, 0], T[1, 0], T[1, 1], 0.3 / 0.9])
    np.testing.assert_allclose(job.truth.theta(), expected, rtol=1e-12)
    # every diagonal is above the start's floor (0.1), so the start is the truth itself
    np.testing.assert_allclose(job.__dict__["_analytic"].full.start, expected, rtol=1e-12)
    assert not np.allclose(expected, job.template.theta_, rtol=1e-3)


def test_lower_factor_of_a_semidefinite_covariance():
    """Cholesky's columns, a zero pivot's column left at zero: T T' equals the covariance."""
    from models.power._lmm import lower_factor

    rng = np.random.default_rng(2)
    B = rng.standard_normal((3, 3))
    cov = B @ B.T
    np.testing.assert_allclose(lower_factor(cov), np.linalg.cholesky(cov), rtol=1e-12)
    # a variance explained by the column before it (correlation 1), and one at zero
    singular = np.array([[4.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    T = lower_factor(singular)
    np.testing.assert_allclose(T @ T.T, singular, atol=1e-12)
    assert np.all(np.diag(T) >= 0) and T[1, 1] == 0.0 and T[2, 2] == 0.0


def test_batches_cover_every_simulation_once_and_shrink_at_the_end():
    """With two workers the last batches are small, so neither worker runs a whole batch of 100
    alone at the end; each simulation is in exactly one batch, in order."""
    import models.parallel as _runners

    todo = _runners.batches([1300, 700], 100, workers=2)
    covered = [(job, i) for job, start, stop in todo for i in range(start, stop)]
    assert covered == [(0, i) for i in range(1300)] + [(1, i) for i in range(700)]
    sizes = [stop - start for _, start, stop in todo]
    assert max(sizes) == 100 and sizes[-8:] == [10] * 7 + [9]
    assert sizes == sorted(sizes, reverse=True)  # the jobs' boundary falls between batches
    assert _runners.batches([1300, 700], 100) == [
        (job, start, min(n, start + 100))
        for job, n in ((0, 1300), (1, 700))
        for start in range(0, n, 100)
    ]
    # a size per job: a job of long tasks one per batch, beside one of quick ones
    # (a quarter of what is left per worker: 40 left -> 5, 26 -> 4, 22 -> 3, 16 -> 2, 8 -> 1)
    assert _runners.batches([3, 40], [1, 10], workers=2) == [
        (0, 0, 1), (0, 1, 2), (0, 2, 3), (1, 0, 5), (1, 5, 10), (1, 10, 14), (1, 14, 18),
        (1, 18, 21), (1, 21, 24), (1, 24, 26), (1, 26, 28), (1, 28, 30), (1, 30, 32),
        *[(1, i, i + 1) for i in range(32, 40)],
    ]  # fmt: skip
