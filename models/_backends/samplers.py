"""Dispatch a PyMC model to one of the NUTS samplers: PyMC's own, nutpie or numpyro.

Every heavy module is imported inside the function that runs it.
"""

from __future__ import annotations

import logging
import os
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from models._errors import InvalidParameterError
from models._optional import require

SAMPLERS = ("pymc", "nutpie", "numpyro")
"""Names accepted by ``BayesianMixedModel(sampler=...)``."""

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
) -> SamplerRun:
    """Sample ``model`` with NUTS through ``pm.sample`` and the chosen back end.

    Parameters
    ----------
    model : pymc.Model
        The model to sample.
    sampler : str
        ``"pymc"``, ``"nutpie"`` or ``"numpyro"``.
    draws, tune, chains : int
        Draws kept per chain, tuning steps per chain, number of chains.
    target_accept : float
        Step-size adaptation target.
    seed : int or None
        Random seed; the same seed gives the same draws for a given sampler.
    progressbar : bool
        Show the sampler's progress bar.

    Returns
    -------
    SamplerRun
        The draws, the wall time (compilation included) and the sampler name.

    Raises
    ------
    ImportError
        When the sampler's optional extra is missing.
    """
    sampler = check_sampler(sampler, where="run_nuts")
    require_sampler(sampler)
    pm = import_pymc()
    kwargs: dict[str, Any] = {
        "draws": draws,
        "tune": tune,
        "chains": chains,
        "target_accept": target_accept,
        "random_seed": seed,
        "progressbar": progressbar,
        "model": model,
        "compute_convergence_checks": False,
        "nuts_sampler": sampler,
    }
    cores = max(1, min(chains, os.cpu_count() or 1))
    if sampler == "pymc":
        kwargs["cores"] = cores
        kwargs["idata_kwargs"] = {"log_likelihood": False}
    elif sampler == "nutpie":
        kwargs["nuts_sampler_kwargs"] = {"cores": cores, "save_warmup": False}
    else:  # numpyro: one CPU device, so chains run vectorised rather than on parallel devices
        kwargs["nuts_sampler_kwargs"] = {"chain_method": "vectorized"}
    start = time.perf_counter()
    with quiet_sampling():
        idata = pm.sample(**kwargs)
    seconds = time.perf_counter() - start
    return SamplerRun(idata=idata, seconds=seconds, sampler=sampler)
