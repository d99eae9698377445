"""Dispatch a PyMC model to one of the NUTS samplers: PyMC's own, nutpie or numpyro.

Models are kept per structure in :data:`MODEL_CACHE`: a refit of the same structure on other
data (cross-validation folds, a report, a benchmark) swaps the data into the model built,
and for nutpie compiled, the first time. Every heavy module is imported inside the function
that runs it.
"""

from __future__ import annotations

import importlib.util
import logging
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from _empathic_base.optional import require
from models._errors import InvalidParameterError
from models._threads import one_blas_thread, task_cores

SAMPLERS = ("pymc", "nutpie", "numpyro")
"""The NUTS implementations; ``BayesianMixedModel(sampler=...)`` also takes ``"auto"``."""

_EXTRAS = {"nutpie": ("nutpie", "fast"), "numpyro": ("numpyro", "jax")}


@dataclass(frozen=True)
class SamplerRun:
    """What one sampler call produced.

    Attributes
    ----------
    idata : arviz.InferenceData
        Posterior draws and sample statistics.
    seconds : float
        Wall time of the whole call, compilation included.
    sampler : str
        The sampler that ran.
    """

    idata: Any
    seconds: float
    sampler: str
    compile_seconds: float = 0.0


def default_sampler() -> str:
    """``"nutpie"`` when it is installed, else ``"pymc"``: what ``sampler="auto"`` runs.

    Returns
    -------
    str
        The sampler name.
    """
    return "nutpie" if importlib.util.find_spec("nutpie") is not None else "pymc"


def check_sampler(sampler: object, *, where: str) -> str:
    """Return ``sampler`` when it names a known sampler, else raise.

    Parameters
    ----------
    sampler : object
        The value to check.
    where : str
        The calling function, used in the message.

    Returns
    -------
    str
        The sampler name.

    Raises
    ------
    InvalidParameterError
        For an unknown name.
    """
    if not isinstance(sampler, str) or sampler not in SAMPLERS:
        raise InvalidParameterError(
            f"the `sampler` parameter of {where} must be one of {list(SAMPLERS)}; got {sampler!r}"
        )
    return sampler


def require_sampler(sampler: str) -> None:
    """Import the optional packages that ``sampler`` needs, or raise ImportError naming the extra.

    Parameters
    ----------
    sampler : str
        One of :data:`SAMPLERS`.

    Raises
    ------
    ImportError
        When the sampler's extra is not installed.
    """
    if sampler in _EXTRAS:
        module, extra = _EXTRAS[sampler]
        feature = f"BayesianMixedModel(sampler={sampler!r})"
        require(module, feature=feature, extra=extra)
        if sampler == "numpyro":
            require("jax", feature=feature, extra=extra)


def import_pymc(feature: str = "BayesianMixedModel.fit") -> Any:
    """Import PyMC, silencing PyTensor's import-time notice about a missing BLAS library.

    Parameters
    ----------
    feature : str
        What needs PyMC, for the ImportError message.

    Returns
    -------
    module
        The ``pymc`` module.

    Raises
    ------
    ImportError
        When PyMC is not installed.
    """
    with warnings.catch_warnings():
        # A pip-installed PyTensor warns once, when it first looks for a BLAS library to link
        # (lazily, at the first compilation), that it found none; it then calls NumPy's BLAS,
        # which is all these models need. The look-up is forced here, where it is silenced.
        warnings.filterwarnings(
            "ignore", message="PyTensor could not link to a BLAS", category=UserWarning
        )
        pm = require("pymc", feature=feature)
        import pytensor

        _ = pytensor.config.blas__ldflags
        return pm


@contextmanager
def quiet_sampling() -> Iterator[None]:
    """Silence the sampler chatter that our own diagnostics gate replaces.

    PyMC logs its own convergence messages and a few libraries warn about
    things the caller cannot act on; the gate in :mod:`models.bayes` names every
    real problem with a :class:`~models.SamplingWarning` instead.
    """
    loggers = [logging.getLogger(name) for name in ("pymc", "pymc.sampling", "pymc.stats")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            # Floating-point overflow while a trajectory leaves the typical set is how NUTS
            # meets a divergence: the sampler rejects the non-finite energy and records the
            # divergence, which the gate reports. The forked chain processes inherit this filter.
            for what in ("overflow", "invalid value", "divide by zero", "underflow"):
                warnings.filterwarnings(
                    "ignore", message=f"{what} encountered", category=RuntimeWarning
                )
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


@dataclass(eq=False)
class CachedModel:
    """A PyMC model built for one structure, with its data containers and compiled forms.

    Attributes
    ----------
    key : tuple
        The structure (see :func:`models._backends.pymc_model.model_structure`).
    model : pymc.Model
        The model; its data containers hold the data of the latest :meth:`set_data`.
    """

    key: tuple
    model: Any
    _data: dict[str, Any] = field(default_factory=dict)
    _nutpie: Any = None
    _cache: ModelCache | None = None

    def set_data(self, data: Mapping[str, Any]) -> None:
        """Put ``data`` (container name -> array, every container) into the model."""
        import pymc as pm

        pm.set_data(dict(data), model=self.model)
        self._data = dict(data)

    def nutpie_model(self) -> tuple[Any, float]:
        """Return the nutpie-compiled model with the current data, and the seconds compiling took.

        The model is compiled on the first call only; later calls swap the data in
        (``CompiledPyMCModel.with_data``), which takes no compilation.
        """
        seconds = 0.0
        if self._nutpie is None:
            import nutpie

            start = time.perf_counter()
            names = [rv.name for rv in self.model.free_RVs]
            with warnings.catch_warnings():
                # numba cannot cache the compiled callback; nothing for the caller to act on
                warnings.filterwarnings("ignore", message="Cannot cache compiled function")
                self._nutpie = nutpie.compile_pymc_model(self.model, var_names=names)
            seconds = time.perf_counter() - start
            if self._cache is not None:
                self._cache.compilations += 1
        return self._nutpie.with_data(**self._data), seconds


class ModelCache:
    """Models by structure, the most recently used kept (at most ``maxsize``).

    Parameters
    ----------
    maxsize : int, default 8
        Structures kept; the least recently used one is dropped beyond.

    Attributes
    ----------
    builds, hits, compilations : int
        Models built (cache misses), models found, and nutpie compilations so far.
    """

    def __init__(self, maxsize: int = 8) -> None:
        self.maxsize = maxsize
        self._entries: OrderedDict[tuple, CachedModel] = OrderedDict()
        self.builds = 0
        self.hits = 0
        self.compilations = 0

    def get(self, key: tuple, build: Callable[[], Any]) -> CachedModel:
        """Return the cached model of structure ``key``, built by ``build()`` when missing."""
        entry = self._entries.get(key)
        if entry is not None:
            self.hits += 1
            self._entries.move_to_end(key)
            return entry
        entry = CachedModel(key=key, model=build(), _cache=self)
        self.builds += 1
        self._entries[key] = entry
        while len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)
        return entry

    def clear(self) -> None:
        """Drop every cached model and reset the counters."""
        self._entries.clear()
        self.builds = self.hits = self.compilations = 0

    def info(self) -> dict[str, int]:
        """``size``, ``builds``, ``hits`` and ``compilations``."""
        return {
            "size": len(self._entries),
            "builds": self.builds,
            "hits": self.hits,
            "compilations": self.compilations,
        }


MODEL_CACHE = ModelCache()
"""The models of :class:`models.bayes.BayesianMixedModel` fits, by structure."""


def run_nuts(
    model: Any,
    *,
    sampler: str,
    draws: int,
    tune: int,
    chains: int,
    target_accept: float,
    seed: int | None,
    progressbar: bool,
    save_warmup: bool = False,
    enough: Callable[[Any], bool] | None = None,
    every: int = 1000,
) -> SamplerRun:
    """Sample ``model`` with NUTS and the chosen back end.

    Parameters
    ----------
    model : pymc.Model or CachedModel
        The model to sample; a :class:`CachedModel` is sampled with the data of its latest
        ``set_data`` and, for nutpie, compiled only on its first use.
    sampler : str
        ``"pymc"``, ``"nutpie"`` or ``"numpyro"``.
    draws, tune, chains : int
        Draws kept per chain, tuning steps per chain, number of chains.
    target_accept : float
        Step-size adaptation target.
    seed : int or None
        Random seed; the same seed gives the same draws for a given sampler, whether or
        not the model was compiled before.
    progressbar : bool
        Show the sampler's progress bar.
    save_warmup : bool, default False
        nutpie: keep the tuning iterations' statistics too (``warmup_sample_stats``).
    enough : callable, optional
        nutpie only: sample at most ``draws`` per chain, but stop at the first multiple of
        ``every`` draws at which ``enough(idata)`` is true of the draws so far (their first
        ``every``, ``2 every``, ... per chain) and keep just those. The draws kept are the
        same whenever the check runs, so the same seed gives the same result.
    every : int, default 1000
        Draws per chain between two calls of ``enough``.

    Returns
    -------
    SamplerRun
        The draws, the wall time (compilation included), the sampler name and the
        seconds spent compiling (nutpie; 0 when the compiled model was reused).

    Raises
    ------
    ImportError
        When the sampler's optional extra is missing.
    """
    sampler = check_sampler(sampler, where="run_nuts")
    require_sampler(sampler)
    pm = import_pymc()
    cached = model if isinstance(model, CachedModel) else None
    pm_model = cached.model if cached is not None else model
    cores = max(1, min(chains, task_cores()))  # a pool's worker: its share of the cores
    start = time.perf_counter()
    compile_seconds = 0.0
    if sampler == "nutpie":
        import nutpie

        if cached is None:
            cached = CachedModel(key=(), model=pm_model)
        compiled, compile_seconds = cached.nutpie_model()
        settings = {
            "draws": draws,
            "tune": tune,
            "chains": chains,
            "cores": cores,
            "seed": seed,
            "target_accept": target_accept,
            "progress_bar": progressbar,
            "save_warmup": save_warmup,
        }
        # one BLAS thread per chain: the chains already fill the cores, and the gradient's
        # small products wake OpenBLAS's threads at every step (InstEval, 2 chains on 2
        # cores: 41.6 s with them, 12.3 s without)
        with quiet_sampling(), one_blas_thread():
            if enough is None:
                idata = nutpie.sample(compiled, **settings)
            else:
                idata = _sample_until(compiled, settings, enough=enough, every=every)
        if idata.posterior.sizes.get("draw", 0) < min(draws, every if enough else draws):
            # nutpie returns what it has when interrupted (Ctrl-C, or the command's SIGTERM)
            raise KeyboardInterrupt
        return SamplerRun(
            idata=idata,
            seconds=time.perf_counter() - start,
            sampler=sampler,
            compile_seconds=compile_seconds,
        )
    kwargs: dict[str, Any] = {
        "draws": draws,
        "tune": tune,
        "chains": chains,
        "target_accept": target_accept,
        "random_seed": seed,
        "progressbar": progressbar,
        "model": pm_model,
        "compute_convergence_checks": False,
        "nuts_sampler": sampler,
    }
    if sampler == "pymc":
        kwargs["cores"] = cores
        kwargs["idata_kwargs"] = {"log_likelihood": False}
    else:  # numpyro: one CPU device, so chains run vectorised rather than on parallel devices
        kwargs["nuts_sampler_kwargs"] = {"chain_method": "vectorized"}
    if enough is not None:
        raise InvalidParameterError(
            f"run_nuts: stopping once the draws suffice needs sampler='nutpie'; got {sampler!r}"
        )
    with quiet_sampling(), one_blas_thread():
        idata = pm.sample(**kwargs)
    seconds = time.perf_counter() - start
    return SamplerRun(idata=idata, seconds=seconds, sampler=sampler)


def _kept_draws(idata: Any) -> int:
    """Draws after tuning that every chain of a partial nutpie trace has reached."""
    import numpy as np

    stats = idata.sample_stats
    if stats.sizes.get("draw", 0) == 0:
        return 0
    return int(np.isfinite(np.asarray(stats["energy"], dtype=float)).sum(axis=1).min())


def _sample_until(
    compiled: Any, settings: dict[str, Any], *, enough: Callable[[Any], bool], every: int
) -> Any:
    """Sample with nutpie in the background, checked every ``every`` draws per chain."""
    import nutpie

    draws = settings["draws"]
    background = nutpie.sample(compiled, blocking=False, **settings)
    target = every
    seen, seen_at = 0, time.perf_counter()
    pause = 0.5
    try:
        while True:
            time.sleep(pause)
            # a run that ended between two looks is checked the same way, so the draws kept
            # never depend on how fast the machine was
            done = _finished(background)
            if done:
                trace, kept = background.wait(), draws
            else:
                with warnings.catch_warnings():
                    # ArviZ on a trace still tuning: "More chains (2) than draws (0)"
                    warnings.filterwarnings("ignore", message="More chains", category=UserWarning)
                    trace = background.inspect()
                kept = _kept_draws(trace)
            while kept >= target and target < draws:
                first = trace.isel(draw=slice(0, target))
                if enough(first):
                    if not done:
                        background.cancel()
                    return first
                target += every
            if done:
                return trace
            if target >= draws:  # no check left: the whole run
                return background.wait()
            # sleep until the next check is due, from the pace since the last look
            now = time.perf_counter()
            pace = (kept - seen) / max(now - seen_at, 1e-9)
            seen, seen_at = kept, now
            pause = min(max((target - kept) / pace if pace > 0 else 1.0, 0.2), 10.0)
    except BaseException:
        background.cancel()
        raise


def _finished(background: Any) -> bool:
    """Whether a background nutpie run has ended (its check raises while it runs)."""
    try:
        return bool(background.is_finished)
    except TimeoutError:
        return False
