"""The ceilings of the counts a caller chooses: resamples, simulations, nodes, draws, workers.

A count sets how much memory or time a function takes, so each has a ceiling, checked before
any work, and refused in the caller's words (:func:`check_count`: the Python parameter, or
the command's option on the command line). The command line prints them in its ``--help``,
so this module imports nothing heavy.
"""

from __future__ import annotations

import numbers
from typing import Any

from _empathic_base.words import parameter
from models._errors import InvalidParameterError

__all__ = [
    "AGREEMENT_LIMIT_SECONDS",
    "AGREEMENT_MAX_N_BOOT",
    "AGREEMENT_MAX_PAIRS",
    "BAYES_MAX_CHAINS",
    "BAYES_MAX_DRAWS",
    "BAYES_MAX_GB",
    "BAYES_MAX_SECONDS",
    "BAYES_MAX_TUNE",
    "EVALUATE_MAX_BOOT_CELLS",
    "EVALUATE_MAX_KFOLD",
    "EVALUATE_MAX_N_BOOT",
    "EVALUATE_MAX_SEEDS",
    "EVALUATE_MAX_SPLITS",
    "FORMULA_MAX_RANDOM_TERMS",
    "MAX_WORKERS_PER_CPU",
    "ORDINAL_MAX_N_AGQ",
    "POWER_MAX_GRID",
    "POWER_MAX_PARTICIPANTS",
    "POWER_MAX_ROWS",
    "POWER_MAX_SESSIONS",
    "POWER_MAX_SIMS",
    "POWER_MAX_SIMULATED_ROWS",
    "POWER_MAX_STORIES",
    "POWER_ROWS_PER_SIMULATION",
    "check_count",
]

AGREEMENT_MAX_N_BOOT = 100_000
"""Most bootstrap resamples of :func:`models.agreement` (the Monte Carlo error of a 95%
percentile bound is then below 0.001 of the alpha scale for any data)."""

AGREEMENT_MAX_PAIRS = 10_000_000
"""Most within-unit pairs of distinct values (the sum over units of the squared number of
distinct values a unit received): about 1.5 GB of working memory."""

AGREEMENT_LIMIT_SECONDS = 600.0
"""Agreement estimated to take longer than this (alpha and its bootstrap) is refused."""

POWER_MAX_SIMS = 100_000
"""Most simulations per grid point (the binomial SE of a power is then at most 0.0016)."""

POWER_MAX_PARTICIPANTS = 100_000
"""Most participants at one grid point."""

POWER_MAX_SESSIONS = 1_000
"""Most sessions per participant."""

POWER_MAX_STORIES = 1_000_000
"""Most stories in a design's pool (and stories rated per session at most this)."""

POWER_MAX_GRID = 100
"""Most grid points (participant counts x session settings)."""

POWER_MAX_ROWS = 1_000_000
"""Most rows of one simulated study (about 1 GB while it is refitted)."""

POWER_MAX_SIMULATED_ROWS = 2_000_000_000
"""Most rows simulated and refitted in all: grid points x simulations x (rows per study +
:data:`POWER_ROWS_PER_SIMULATION`); about 1.5 h on one core for a random-intercept model,
more for richer ones."""

POWER_ROWS_PER_SIMULATION = 2_000
"""A simulation's fixed cost in rows: a random-intercept refit takes about 2.5 us per row and
3 to 5 ms whatever its size (measured on a shared two-core machine: 4,000 rows at 109
simulations/s, 40,000 at 10/s, 400,000 at 1/s)."""

ORDINAL_MAX_N_AGQ = 100
"""Most quadrature nodes of the ordinal mixed model."""

BAYES_MAX_DRAWS = 1_000_000
"""Most draws per chain of the Bayesian model."""

BAYES_MAX_TUNE = 1_000_000
"""Most tuning steps per chain of the Bayesian model."""

BAYES_MAX_CHAINS = 64
"""Most chains of the Bayesian model."""

BAYES_MAX_GB = 8.0
"""Most memory, in GB, that the stored draws of a Bayesian fit are estimated to take."""

BAYES_MAX_SECONDS = 86_400.0
"""A Bayesian fit whose probe estimates a longer sampling time is refused."""

EVALUATE_MAX_SEEDS = 1_000
"""Most split seeds of the prediction benchmark. Each seed refits every model once for the
70/20/10 holdout and K times for the K-fold; the mean and SD over seeds settle within a few
dozen seeds, and a thousand already take hours on the paper's 41-person study."""

EVALUATE_MAX_KFOLD = 1_000
"""Most folds of the benchmark's grouped K-fold (each fold refits every model); a fold needs
a participant, so a study also bounds K by its participants."""

EVALUATE_MAX_SPLITS = 10_000
"""Most fitted splits per model: seeds x (K + 1), the holdout and the K folds of each seed
(a second per fit of the linear models on the paper's study makes this about three hours per
model; the Bayesian model takes about 45 s a fit)."""

EVALUATE_MAX_N_BOOT = 100_000
"""Most participant-cluster bootstrap replicates of the K-fold metrics (as
:data:`AGREEMENT_MAX_N_BOOT`: the Monte Carlo error of a 95% bound is then negligible)."""

EVALUATE_MAX_BOOT_CELLS = 50_000_000
"""Most replicate weights of the K-fold bootstrap, (replicates + 1) x ratings: the weights
and the weighted metrics' working arrays take about 8 bytes each several times over, so this
keeps the bootstrap within about 2 GB (2,000 replicates fit a study of 24,000 ratings)."""

FORMULA_MAX_RANDOM_TERMS = 100
"""Most random-effects terms of a formula (``models.formula.MAX_RANDOM_TERMS``)."""

MAX_WORKERS_PER_CPU = 4
"""``processes:N`` and ``local:N`` start at most this many workers per CPU."""


def check_count(value: Any, *, name: str, where: str, minimum: int, maximum: int) -> int:
    """Return ``value`` as an int when it is a whole number from ``minimum`` to ``maximum``.

    Raises
    ------
    InvalidParameterError
        Naming the parameter (its option on the command line) and both bounds.

    Examples
    --------
    >>> check_count(2000, name="n_boot", where="agreement", minimum=0, maximum=100_000)
    2000
    >>> check_count(10**12, name="n_boot", where="agreement", minimum=0, maximum=100_000)
    Traceback (most recent call last):
    ...
    _empathic_base.errors.InvalidParameterError: the `n_boot` parameter of agreement must be a whole number from 0 to 100,000; got 1000000000000
    """  # noqa: E501
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not minimum <= value <= maximum
    ):
        raise InvalidParameterError(
            f"{parameter(name, where)} must be a whole number from {minimum:,} to {maximum:,}; "
            f"got {value!r}"
        )
    return int(value)
