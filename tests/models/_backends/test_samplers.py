"""Stopping a nutpie run once its draws suffice (models/_backends/samplers.py: run_nuts)."""

from types import SimpleNamespace

import numpy as np
import pytest
import xarray as xr

from models._backends import samplers
from models._errors import InvalidParameterError


class FakeBackground:
    """A background nutpie run whose chains gain ``pace`` draws per look (the second chain
    lags by ``lag``); draw ``d`` of chain ``c`` has the value ``1000 c + d``."""

    def __init__(self, draws, pace, lag=0):
        self.draws, self.pace, self.lag = draws, pace, lag
        self.looks, self.cancelled = 0, False

    def _trace(self, done):
        value = np.full((2, self.draws), np.nan)
        energy = np.full((2, self.draws), np.nan)
        for chain, n in enumerate((done, max(done - self.lag, 0))):
            value[chain, :n] = 1000 * chain + np.arange(n)
            energy[chain, :n] = 0.0
        ds = xr.Dataset({"b": (("chain", "draw"), value)})
        stats = xr.Dataset({"energy": (("chain", "draw"), energy)})
        import arviz as az

        return az.InferenceData(posterior=ds, sample_stats=stats)

    @property
    def is_finished(self):
        if self.looks * self.pace < self.draws + self.lag:
            raise TimeoutError("Timeout while waiting for sampler to finish")
        return True

    def inspect(self):
        self.looks += 1
        return self._trace(min(self.looks * self.pace, self.draws))

    def cancel(self):
        self.cancelled = True

    def wait(self):
        return self._trace(self.draws)


@pytest.fixture
def background(monkeypatch):
    pytest.importorskip("nutpie")
    import nutpie

    runs = []

    def start(compiled, *, blocking=True, **settings):
        assert blocking is False
        run = FakeBackground(settings["draws"], pace=700, lag=300)
        runs.append(run)
        return run

    monkeypatch.setattr(nutpie, "sample", start)
    monkeypatch.setattr(samplers.CachedModel, "nutpie_model", lambda self: (object(), 0.0))
    monkeypatch.setattr(samplers.time, "sleep", lambda seconds: None)
    return runs


def _run(enough, draws=5000):
    model = samplers.CachedModel(key=(), model=None)
    return samplers.run_nuts(
        model, sampler="nutpie", draws=draws, tune=5, chains=2, target_accept=0.9, seed=1,
        progressbar=False, enough=enough, every=1000,
    )  # fmt: skip


def test_the_run_stops_at_the_first_checkpoint_the_check_accepts(background):
    seen = []

    def enough(idata):
        seen.append(idata.posterior.sizes["draw"])
        return idata.posterior.sizes["draw"] >= 3000

    run = _run(enough)
    # every checkpoint is checked once, on exactly its draws, only once both chains reach it
    assert seen == [1000, 2000, 3000]
    assert background[0].cancelled
    values = run.idata.posterior["b"].values
    np.testing.assert_array_equal(values, [np.arange(3000), 1000 + np.arange(3000)])


def test_a_run_the_check_never_accepts_keeps_every_draw(background):
    seen = []
    run = _run(lambda idata: seen.append(idata.posterior.sizes["draw"]) or False, draws=3500)
    assert seen == [1000, 2000, 3000]
    assert not background[0].cancelled
    assert run.idata.posterior.sizes["draw"] == 3500


def test_a_run_that_ended_before_a_look_is_checked_the_same_way(background, monkeypatch):
    """On a fast machine the run may end before the first look: the draws kept are still the
    first checkpoint the check accepts, as on a slow one."""
    monkeypatch.setattr(FakeBackground, "is_finished", property(lambda self: True))
    run = _run(lambda idata: idata.posterior.sizes["draw"] >= 2000)
    assert run.idata.posterior.sizes["draw"] == 2000
    assert not background[0].cancelled


def test_an_interruption_while_waiting_cancels_the_run(background, monkeypatch):
    def interrupted(seconds):
        raise KeyboardInterrupt

    monkeypatch.setattr(samplers.time, "sleep", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _run(lambda idata: False)
    assert background[0].cancelled


def test_stopping_early_needs_nutpie():
    pm = samplers.import_pymc()
    with pm.Model() as model:
        pm.Normal("m", 0.0, 1.0)
    with pytest.raises(InvalidParameterError, match="needs sampler='nutpie'"):
        samplers.run_nuts(
            model, sampler="pymc", draws=10, tune=5, chains=1, target_accept=0.9, seed=1,
            progressbar=False, enough=lambda idata: True,
        )  # fmt: skip


def test_the_chains_of_a_pool_worker_keep_to_its_share_of_the_cores(monkeypatch):
    """A worker of a pool of two on two cores runs its chains one at a time."""
    pytest.importorskip("nutpie")
    import nutpie

    from models import _threads

    asked = []
    full = SimpleNamespace(posterior=xr.Dataset({"b": (("chain", "draw"), np.zeros((2, 10)))}))

    def sample(compiled, **settings):
        asked.append(settings["cores"])
        return full

    monkeypatch.setattr(nutpie, "sample", sample)
    monkeypatch.setattr(samplers.CachedModel, "nutpie_model", lambda self: (object(), 0.0))
    monkeypatch.setattr(_threads.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_threads, "_TASK_CORES", [])
    model = samplers.CachedModel(key=(), model=None)
    kw = dict(sampler="nutpie", draws=10, tune=5, chains=2, target_accept=0.9, seed=1)
    samplers.run_nuts(model, progressbar=False, **kw)
    _threads.share_cores(2)
    samplers.run_nuts(model, progressbar=False, **kw)
    assert asked == [2, 1]
