"""The sampling-time estimate said before a long Bayesian fit (models/bayes/estimate.py)."""

import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from models.bayes import estimate as est


def fake_run(seconds, compile_seconds=0.0, *, warm_steps=100.0, kept_steps=20.0):
    """A probe whose every tuning iteration took ``warm_steps`` leapfrog steps and every kept
    draw ``kept_steps``, on two chains."""
    import xarray as xr

    calls = []

    def stats(n, steps):
        return xr.Dataset({"n_steps": (("chain", "draw"), np.full((2, n), steps))})

    def run_nuts(entry, **kw):
        calls.append(kw)
        idata = SimpleNamespace(
            sample_stats=stats(kw["draws"], kept_steps),
            warmup_sample_stats=stats(kw["tune"], warm_steps),
        )
        return SimpleNamespace(seconds=seconds, compile_seconds=compile_seconds, idata=idata)

    return run_nuts, calls


def test_probe_time_is_scaled_to_the_run(monkeypatch):
    monkeypatch.setattr(est, "task_cores", lambda: 2)
    # 30 tuning iterations x 100 steps + 10 draws x 20 steps = 3,200 steps in 3.2 s of sampling
    run, calls = fake_run(seconds=23.2, compile_seconds=20.0)
    probe = lambda draws, tune: run(None, draws=draws, tune=tune)  # noqa: E731
    found = est.estimate_sampling(probe, draws=10_000, tune=500, chains=2)
    assert calls[0] == {"draws": est.PROBE_DRAWS, "tune": est.PROBE_TUNE}
    assert found.seconds_per_iteration == pytest.approx(0.02)  # 20 steps at 1 ms
    # the probe's tuning (3 s), then 470 + 10,000 iterations at 0.02 s; chains side by side
    assert found.seconds == pytest.approx(3.0 + 0.02 * 10_470)
    # four chains on two cores take two rounds
    found4 = est.estimate_sampling(probe, draws=10_000, tune=500, chains=4)
    assert found4.seconds == pytest.approx(2 * (3.0 + 0.02 * 10_470))
    assert found.draws_within(600.0, tune=500) == 29_500


def test_a_long_run_is_announced_with_the_draws_that_shorten_it():
    found = est.SamplingEstimate(
        seconds_per_iteration=0.115, probe_iterations=40, iterations=10_500, rounds=1,
        seconds=0.115 * 10_500,
    )  # fmt: skip
    with pytest.warns(est.LongSamplingWarning) as caught:
        est.announce(found, draws=10_000, tune=500, chains=2)
    text = str(caught[0].message)
    assert "about 20 min" in text
    assert "draws=4700 (command line: --draws 4700) would take about 10 min" in text
    assert "diagnostics gate" in text


def test_an_auto_run_is_announced_with_the_time_to_each_check():
    found = est.SamplingEstimate(
        seconds_per_iteration=0.06, probe_iterations=40, iterations=10_500, rounds=1,
        seconds=0.06 * 10_500,
    )  # fmt: skip
    with pytest.warns(est.LongSamplingWarning) as caught:
        est.announce(found, draws=10_000, tune=500, chains=2, auto=True)
    text = str(caught[0].message)
    # 1,500 iterations to the first check at 0.06 s: 90 s; 60 s per 1,000 more; 630 s at most
    assert "draws='auto'" in text and "first check after about 90 s" in text
    assert "each further 1,000 draws about 60 s" in text
    assert "at most 10,000 draws in about 10 min" in text


def test_a_long_fixed_run_names_draws_auto_as_a_fix():
    found = est.SamplingEstimate(0.115, 40, 10_500, 1, 0.115 * 10_500)
    with pytest.warns(est.LongSamplingWarning) as caught:
        est.announce(found, draws=10_000, tune=500, chains=2)
    assert "--draws auto" in str(caught[0].message)


def test_a_short_run_is_not_announced():
    found = est.SamplingEstimate(0.01, 40, 10_500, 1, 105.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.announce(found, draws=10_000, tune=500, chains=2)


def test_the_command_prints_the_estimate_at_once_and_records_the_rest(capsys):
    from longitudinal.cli.fit import _announced_at_once

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with _announced_at_once():
            warnings.warn(
                "sampling is expected to take 20 min", est.LongSamplingWarning, stacklevel=2
            )
            assert "note: sampling is expected to take 20 min" in capsys.readouterr().err
            warnings.warn("an ordinary warning", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["an ordinary warning"]


def test_an_interrupted_nutpie_run_is_an_interruption(monkeypatch):
    """nutpie returns the draws it has when interrupted; the fit raises KeyboardInterrupt
    (the command then says "interrupted; nothing was written") instead of summarising none."""
    import xarray as xr

    pytest.importorskip("nutpie")
    import nutpie

    from models._backends import samplers

    partial = SimpleNamespace(posterior=xr.Dataset({"b": (("chain", "draw"), np.zeros((2, 3)))}))
    monkeypatch.setattr(samplers.CachedModel, "nutpie_model", lambda self: (object(), 0.0))
    monkeypatch.setattr(nutpie, "sample", lambda *a, **kw: partial)
    model = samplers.CachedModel(key=(), model=None)
    with pytest.raises(KeyboardInterrupt):
        samplers.run_nuts(
            model, sampler="nutpie", draws=10, tune=5, chains=2, target_accept=0.9, seed=1,
            progressbar=False,
        )  # fmt: skip
    full = SimpleNamespace(posterior=xr.Dataset({"b": (("chain", "draw"), np.zeros((2, 10)))}))
    monkeypatch.setattr(nutpie, "sample", lambda *a, **kw: full)
    run = samplers.run_nuts(
        model, sampler="nutpie", draws=10, tune=5, chains=2, target_accept=0.9, seed=1,
        progressbar=False,
    )  # fmt: skip
    assert run.idata is full
