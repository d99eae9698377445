"""How long a Bayesian fit will sample, said before it samples.

The time of a NUTS run is the time of one iteration (one gradient of the log density times the
leapfrog steps of its trajectory) times the iterations, and the steps are not known before the
sampler has adapted: the study-sized model takes about 7 per iteration, a crossed model with a
thousand levels about 30 (lme4's InstEval, 400 students and 1,037 lecturers), and the first
tuning iterations many more. So a large fit first samples a short probe of :data:`PROBE_TUNE`
tuning and :data:`PROBE_DRAWS` kept iterations per chain (with nutpie the compiled model is
reused by the run that follows), measures the seconds per leapfrog step and the steps per
adapted iteration; a run estimated at :data:`LONG_SECONDS` or more is announced by a
:class:`LongSamplingWarning` that gives the estimate and the draws that would bring it under
that limit, and one estimated over :data:`~models.limits.BAYES_MAX_SECONDS` (a day) is
refused with them.

Before any of that, every fit (whatever the sampler) is checked by :func:`check_storage`: the
draws, tuning steps and chains within their ceilings, and the memory the stored draws will
take (the values of one draw x draws x chains, about three copies: the sampler's, the
data-scale draws and the summaries' working arrays) within
:data:`~models.limits.BAYES_MAX_GB`. A sampler allocates its storage for the draws up front,
so an absurd ``draws`` would otherwise end the process natively rather than raise.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from _empathic_base.durations import duration_text
from _empathic_base.words import caller, parameter
from models._errors import InvalidParameterError, ModelsWarning
from models._threads import task_cores
from models.limits import (
    BAYES_MAX_CHAINS,
    BAYES_MAX_DRAWS,
    BAYES_MAX_GB,
    BAYES_MAX_SECONDS,
    BAYES_MAX_TUNE,
    check_count,
)

PROBE_SIZE = 50_000_000
"""A fit is probed when ``chains x (draws + tune) x rows`` reaches this (the study-sized
default, 804 rows, is 1.7e7 and is not probed)."""

PROBE_TUNE = 30
PROBE_DRAWS = 10

LONG_SECONDS = 600.0
"""A run estimated at this or longer is announced before it starts."""

STORED_COPIES = 3
"""Copies of the draws a fit holds at once: the sampler's, the data-scale draws, the summaries'."""

STATS_PER_DRAW = 12
"""Sampler statistics stored with each draw (step size, tree depth, energy, divergence, ...)."""


class LongSamplingWarning(ModelsWarning):
    """A Bayesian fit is expected to sample for long; the message says how long and the fix."""


@dataclass(frozen=True)
class SamplingEstimate:
    """The probe's measurement and what it predicts for the run."""

    seconds_per_iteration: float  # wall seconds per iteration of every chain (chains in parallel)
    probe_iterations: int
    iterations: int  # tune + draws per chain
    rounds: int  # chains / cores, rounded up: chains that cannot run at once
    seconds: float  # expected sampling time of the run

    def draws_within(self, seconds: float, tune: int) -> int:
        """Draws per chain that keep the run's expected time within ``seconds``."""
        per_iteration = self.seconds_per_iteration * self.rounds
        return max(0, int(seconds / per_iteration) - tune)


def check_counts(draws: Any, tune: Any, chains: Any, *, where: str) -> tuple[int, int, int]:
    """Return ``draws``, ``tune`` and ``chains`` as ints when each is within its ceiling.

    Ceilings (:mod:`models.limits`): draws 1 to :data:`~models.limits.BAYES_MAX_DRAWS`,
    tune 0 to :data:`~models.limits.BAYES_MAX_TUNE`, chains 1 to
    :data:`~models.limits.BAYES_MAX_CHAINS`; a refusal names the parameter (its option on
    the command line).
    """
    return (
        check_count(draws, name="draws", where=where, minimum=1, maximum=BAYES_MAX_DRAWS),
        check_count(tune, name="tune", where=where, minimum=0, maximum=BAYES_MAX_TUNE),
        check_count(chains, name="chains", where=where, minimum=1, maximum=BAYES_MAX_CHAINS),
    )


def values_per_draw(inputs: Any) -> int:
    """Numbers stored per draw of one chain: the model's parameters and the sampler's statistics.

    Fixed effects (and the gaussian intercept and sigma), the ordinal cutpoints, and for each
    random-effects block its levels x effects, its sds and correlations.
    """
    n = len(inputs.fixed_terms) + int(inputs.intercept) + STATS_PER_DRAW
    n += max(len(inputs.categories) - 1, 0) if inputs.family == "ordinal" else 1
    for block in inputs.random:
        q = len(block.terms)
        n += len(block.levels) * q + q + q * (q - 1) // 2
    return n


def storage_gb(values: int, *, draws: int, chains: int) -> float:
    """Estimated GB of the stored draws: ``values x draws x chains`` doubles, thrice held."""
    return STORED_COPIES * 8.0 * values * draws * chains / 1e9


def check_storage(inputs: Any, *, draws: int, chains: int, where: str) -> None:
    """Refuse, before anything is sampled, draws whose storage exceeds the memory ceiling.

    The estimate is :func:`storage_gb` of :func:`values_per_draw`; over
    :data:`~models.limits.BAYES_MAX_GB` the refusal gives it, the values per draw and the
    draws that would fit.
    """
    values = values_per_draw(inputs)
    gb = storage_gb(values, draws=draws, chains=chains)
    if gb <= BAYES_MAX_GB:
        return
    fits = int(BAYES_MAX_GB * 1e9 / (STORED_COPIES * 8.0 * values * chains))
    if fits >= 100:
        rounded = fits // 100 * 100
        fix = (
            f"draws={rounded} (command line: --draws {rounded}) with {chains} chains would "
            f"take about {storage_gb(values, draws=rounded, chains=chains):.1f} GB"
        )
    else:
        fix = "even 100 draws per chain would not fit: use fewer chains or a smaller model"
    raise InvalidParameterError(
        f"{caller(where)}: {draws:,} draws ({parameter('draws', where)}) x {chains} chains "
        f"({parameter('chains', where)}) of {values:,} values each (the model's parameters, "
        f"random effects included, and the sampler's statistics) are estimated to need about "
        f"{gb:,.1f} GB of memory, more than the {BAYES_MAX_GB:g} GB this refuses before "
        f"sampling; {fix}"
    )


def estimate_sampling(probe: Any, *, draws: int, tune: int, chains: int) -> SamplingEstimate:
    """Time a short run and scale it to the run's iterations.

    ``probe(draws, tune)`` samples the model as the run will (same sampler, chains, seed and
    target acceptance), keeping the tuning statistics, and returns its
    :class:`models._backends.samplers.SamplerRun`. The first tuning iterations take many more
    leapfrog steps than adapted ones (the step size starts small), so the probe's time is
    turned into seconds per step, and the run is estimated as the probe's tuning plus the
    remaining iterations at the steps per iteration of the probe's kept draws.
    """
    run = probe(PROBE_DRAWS, PROBE_TUNE)
    seconds = max(run.seconds - run.compile_seconds, 0.0)
    kept = np.asarray(run.idata.sample_stats["n_steps"], dtype=float)  # chains x draws
    warm = np.asarray(run.idata.warmup_sample_stats["n_steps"], dtype=float)
    # chains run side by side: the wall time follows the slowest chain's gradient count
    steps = float(np.max(kept.sum(axis=1) + warm.sum(axis=1)))
    per_step = seconds / steps if steps > 0 else 0.0
    warm_seconds = per_step * float(np.max(warm.sum(axis=1)))
    adapted = float(np.mean(kept))  # steps per iteration once the step size has settled
    cores = max(1, min(chains, task_cores()))
    rounds = math.ceil(chains / cores)
    per_iteration = per_step * adapted
    rest = max(tune - PROBE_TUNE, 0) + draws
    return SamplingEstimate(
        seconds_per_iteration=per_iteration,
        probe_iterations=PROBE_TUNE + PROBE_DRAWS,
        iterations=draws + tune,
        rounds=rounds,
        seconds=rounds * (warm_seconds + per_iteration * rest),
    )


def refuse_too_long(estimate: SamplingEstimate, *, draws: int, tune: int, where: str) -> None:
    """Refuse a run the probe estimates over :data:`~models.limits.BAYES_MAX_SECONDS`."""
    if estimate.seconds <= BAYES_MAX_SECONDS:
        return
    shorter = estimate.draws_within(BAYES_MAX_SECONDS, tune)
    if shorter >= 100:
        rounded = shorter // 100 * 100
        fix = (
            f"draws={rounded} (command line: --draws {rounded}) would take about "
            f"{duration_text(estimate.seconds_per_iteration * estimate.rounds * (rounded + tune))}"
        )
    else:
        fix = "even the tuning alone exceeds that limit: try fewer chains or a simpler model"
    raise InvalidParameterError(
        f"{caller(where)}: sampling {draws:,} draws ({parameter('draws', where)}) is expected "
        f"to take about {duration_text(estimate.seconds)} (measured on "
        f"{estimate.probe_iterations} probe iterations), more than the "
        f"{duration_text(BAYES_MAX_SECONDS)} this refuses before sampling; {fix}"
    )


def announce(
    estimate: SamplingEstimate, *, draws: int, tune: int, chains: int, auto: bool = False
) -> None:
    """Warn before a long run: the estimate, its basis, and the draws that shorten it.

    With ``auto`` (``draws="auto"``) the run may stop at any 1,000 draws, so the warning
    gives the time to each check and the longest the run can take.
    """
    if estimate.seconds < LONG_SECONDS:
        return
    per_thousand = estimate.seconds_per_iteration * estimate.rounds * 1000
    if auto:
        first = estimate.seconds_per_iteration * estimate.rounds * (1000 + tune)
        warnings.warn(
            f"sampling ({chains} chains, draws='auto') stops at the first 1,000 draws per "
            f"chain that pass the diagnostics gate's R-hat and ESS checks: the first check "
            f"after about {duration_text(first)}, each further 1,000 draws about "
            f"{duration_text(per_thousand)}, at most {draws:,} draws in about "
            f"{duration_text(estimate.seconds)} (at {estimate.seconds_per_iteration:.3f} s per "
            f"iteration, measured on {estimate.probe_iterations} probe iterations)",
            LongSamplingWarning,
            stacklevel=4,
        )
        return
    shorter = estimate.draws_within(LONG_SECONDS, tune)
    if shorter >= 1:
        rounded = max(1, shorter // 100 * 100)
        fix = (
            f"draws={rounded} (command line: --draws {rounded}) would take about "
            f"{duration_text(estimate.seconds_per_iteration * estimate.rounds * (rounded + tune))}"
        )
    else:
        fix = "even the tuning alone exceeds that limit: try fewer chains or a simpler model"
    message = (
        f"sampling is expected to take about {duration_text(estimate.seconds)} "
        f"({chains} chains x {draws + tune:,} iterations at {estimate.seconds_per_iteration:.3f} s "
        f"per iteration, measured on {estimate.probe_iterations} probe iterations; "
        f"{duration_text(per_thousand)} per 1,000 draws). The default of {draws:,} draws per chain "
        f"suits small models; {fix}; or draws='auto' (command line: --draws auto) stops "
        "at the first 1,000 draws per chain that pass the gate's R-hat and ESS checks. "
        "Whether the draws suffice is then decided by the diagnostics gate (R-hat, ESS, "
        "divergences), which names what failed."
    )
    warnings.warn(message, LongSamplingWarning, stacklevel=4)
