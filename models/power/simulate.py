"""Simulation-based power for mixed models, from a pilot fit or from a design file.

:func:`simulate_power` answers "how many participants (and sessions) for a given power to detect
an effect of this size?" the way ``simr::powerSim``/``powerCurve`` do (Green & MacLeod 2016):
simulate responses from a model with the effect set to the value of interest, refit, test, and
count rejections. The model comes either from a fitted pilot (:class:`models.lmm.LinearMixedModel`
or :class:`models.ordinal.OrdinalMixedModel`, and the data it was fitted to; the design is
extended to more participants and sessions by resampling the pilot's, as simr's ``extend``) or
from a design written in TOML (:func:`read_design`; ``engine = "clmm"`` for ordinal ratings).

Determinism: one :class:`numpy.random.SeedSequence` per simulation, derived from the seed by its
spawn key (grid point, simulation), and every refit starts from the same template fit, so the
result is the same whatever the number of workers or the back end (serial, local processes,
Dask).
"""

from __future__ import annotations

import functools
import math
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats

import models.parallel as power_runners
import models.power._lmm as power_lmm
import models.power._ordinal as power_ordinal
from _empathic_base.results import Result
from _empathic_base.words import caller, parameter
from models._checks import check_bool, check_int, check_unit
from models._errors import ConvergenceError, InvalidParameterError, ModelsError
from models._version import __version__
from models.limits import (
    POWER_MAX_GRID,
    POWER_MAX_PARTICIPANTS,
    POWER_MAX_ROWS,
    POWER_MAX_SIMS,
    POWER_MAX_SIMULATED_ROWS,
    POWER_ROWS_PER_SIMULATION,
    check_count,
)
from models.power._design import (
    PowerDesign,
    extend_frame,
    generate_frame,
    read_design,
    recode_groups,
    session_range,
)

__all__ = ["POWER_COLUMNS", "PowerDesign", "PowerResult", "read_design", "simulate_power"]

POWER_COLUMNS = [
    "n_participants",
    "n_sessions",
    "n_obs",
    "n_sims",
    "n_failed",
    "n_singular",
    "n_rejected",
    "power",
    "ci_low",
    "ci_high",
]
"""Columns of :attr:`PowerResult.table`."""

FAILURE_COLUMNS = ["n_participants", "n_sessions", "sim", "reason", "used", "message"]
"""Columns of :attr:`PowerResult.failures`."""

SIMULATION_COLUMNS = ["n_participants", "n_sessions", "sim", "estimate", "p_value", "reason"]
"""Columns of :attr:`PowerResult.simulations`."""

REASONS = {
    "error": "the fit raised an error (no test)",
    "not_converged": "the optimizer did not converge (no test)",
    "singular": "boundary (singular) fit: a variance at 0 or a correlation at +-1 (test used)",
}
"""Why a simulation is listed in :attr:`PowerResult.failures`."""


@dataclass(frozen=True, repr=False)
class PowerResult(Result):
    """Result of :func:`simulate_power`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per grid point (:data:`POWER_COLUMNS`): ``n_participants``, ``n_sessions``
        (sessions per participant as set: ``"8"``, ``"6-12"``, or ``"pilot"`` for the pilot's
        own), ``n_obs`` (rows of the simulated design), ``n_sims``, ``n_failed`` (simulations
        without a test: the fit raised or did not converge), ``n_singular`` (boundary fits;
        their test is used), ``n_rejected``, ``power`` (``n_rejected / (n_sims - n_failed)``)
        and its exact Clopper-Pearson interval ``ci_low, ci_high``.
    failures : pandas.DataFrame
        One row per simulation that failed or was singular (:data:`FAILURE_COLUMNS`):
        ``reason`` (``error``, ``not_converged``, ``singular``), ``used`` (whether its test
        counted) and the message. Nothing is dropped silently.
    simulations : pandas.DataFrame
        Every simulation (:data:`SIMULATION_COLUMNS`): the estimate of the term and its p value
        (NaN without a test).
    meta : dict
        Provenance: package version, engine, test, alpha, ci_level, seed (and the entropy it
        gave), effect, grid, truth, scheduler and workers, seconds, simulations per second.
    """

    table: pd.DataFrame
    failures: pd.DataFrame
    simulations: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        power = self.table["power"].dropna()
        span = f", power {power.min():.2f} to {power.max():.2f}" if len(power) else ""
        return (
            f"PowerResult(term={self.meta.get('term')!r}, {len(self.table)} design(s), "
            f"{self.meta.get('n_sims', '?')} simulations each{span})"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Power per design", self.table), ("Failed simulations", self.failures)]


def clopper_pearson(k: int, n: int, ci_level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for ``k`` successes in ``n`` trials (NaN for ``n = 0``)."""
    if n == 0:
        return math.nan, math.nan
    a = 1.0 - ci_level
    low = 0.0 if k == 0 else float(stats.beta.ppf(a / 2, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - a / 2, k + 1, n - k))
    return low, high


# ---------------------------------------------------------------------------------------------
# checks

_WHERE = "simulate_power"


def _check_effect(effect: Any) -> tuple[str, float]:
    if (
        not isinstance(effect, Mapping)
        or len(effect) != 1
        or not isinstance(next(iter(effect)), str)
    ):
        raise InvalidParameterError(
            f"the `effect` parameter of {_WHERE} must be a mapping of one fixed-effect term to "
            f"its value, e.g. {{'trait': 0.2}}; got {effect!r}"
        )
    term, value = next(iter(effect.items()))
    if isinstance(value, bool) or not isinstance(value, float | int) or not math.isfinite(value):
        raise InvalidParameterError(
            f"the `effect` parameter of {_WHERE} must give a finite number for {term!r}; "
            f"got {value!r}"
        )
    return term, float(value)


def _check_participants(value: Any) -> list[int]:
    single = isinstance(value, int | np.integer) and not isinstance(value, bool)
    values = [value] if single else value
    if (
        isinstance(values, str | bytes)
        or not isinstance(values, Sequence | np.ndarray)
        or len(values) == 0
        or any(
            isinstance(v, bool)
            or not isinstance(v, int | np.integer)
            or not 2 <= v <= POWER_MAX_PARTICIPANTS
            for v in values
        )
    ):
        raise InvalidParameterError(
            f"{parameter('n_participants', _WHERE)} must be a whole number from 2 to "
            f"{POWER_MAX_PARTICIPANTS:,} or a list of them, e.g. [20, 40, 60]; got {value!r}"
        )
    if len(set(int(v) for v in values)) != len(values):
        raise InvalidParameterError(
            f"{parameter('n_participants', _WHERE)} lists a value twice; got {list(values)!r}"
        )
    return [int(v) for v in values]


def _check_sessions(value: Any) -> list[tuple[int, int] | None]:
    if value is None:
        return [None]
    items = value if isinstance(value, list) else [value]
    if not items:
        raise InvalidParameterError(
            f"the `n_sessions` parameter of {_WHERE} must not be an empty list"
        )
    out: list[tuple[int, int] | None] = []
    for item in items:
        out.append(session_range(item, source=_WHERE, key="the `n_sessions` parameter"))
    return out


def _rows_per_study(setup: _Setup, n: int, sessions: tuple[int, int] | None) -> int:
    """Most rows a simulated study of ``n`` participants can have, before it is built.

    A design gives each participant up to its most sessions of ``stories_per_session``
    ratings; a pilot's participants are copied in turn (each at most ``ceil(n / n0)`` times),
    or given up to the most sessions of its fullest session each.
    """
    if setup.spec is not None:
        hi = (sessions or setup.spec.sessions)[1]
        return n * hi * setup.spec.stories_per_session
    frame = setup.frame
    assert frame is not None and setup.participant_col is not None
    if sessions is None:
        people = int(frame[setup.participant_col].nunique())
        return math.ceil(n / max(people, 1)) * len(frame)
    assert setup.session_col is not None
    fullest = int(frame.groupby([setup.participant_col, setup.session_col]).size().max())
    return n * sessions[1] * fullest


def _check_size(
    setup: _Setup, participants: list[int], session_grid: list[Any], n_sims: int
) -> None:
    """Refuse, before any study is built, a grid beyond the ceilings of :mod:`models.limits`."""
    points = len(participants) * len(session_grid)
    if points > POWER_MAX_GRID:
        raise InvalidParameterError(
            f"{caller(_WHERE)}: {len(participants)} participant counts "
            f"({parameter('n_participants', _WHERE)}) x {len(session_grid)} session settings "
            f"({parameter('n_sessions', _WHERE)}) make {points:,} grid points, more than the "
            f"{POWER_MAX_GRID} this runs; choose fewer"
        )
    total = 0
    for n in participants:
        for sessions in session_grid:
            rows = _rows_per_study(setup, n, sessions)
            if rows > POWER_MAX_ROWS:
                shown = "" if sessions is None else f" and {_label(sessions)} sessions each"
                raise InvalidParameterError(
                    f"{caller(_WHERE)}: a simulated study of {n:,} participants{shown} would "
                    f"have up to {rows:,} rows, more than the {POWER_MAX_ROWS:,} a study may "
                    "have here (about 1 GB while it is refitted); lower "
                    f"{parameter('n_participants', _WHERE)} or {parameter('n_sessions', _WHERE)}"
                )
            total += (rows + POWER_ROWS_PER_SIMULATION) * n_sims
    if total > POWER_MAX_SIMULATED_ROWS:
        raise InvalidParameterError(
            f"{caller(_WHERE)}: {points:,} grid point(s) x {n_sims:,} simulations "
            f"({parameter('n_sims', _WHERE)}) would simulate and refit up to {total:,} rows in "
            f"all (each simulation's rows, and {POWER_ROWS_PER_SIMULATION:,} for its own fixed "
            f"cost), more than the {POWER_MAX_SIMULATED_ROWS:,} this runs (hours on one core); "
            f"lower {parameter('n_sims', _WHERE)}, the grid or the participants"
        )


def _label(sessions: tuple[int, int] | None) -> str:
    if sessions is None:
        return "pilot"
    lo, hi = sessions
    return str(lo) if lo == hi else f"{lo}-{hi}"


# ---------------------------------------------------------------------------------------------
# building the jobs


def _template(engine: str, formula: str, design: Any, *, reml: bool, base: dict) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if engine == "clmm":
            from models.ordinal.model import OrdinalMixedModel

            model = OrdinalMixedModel(formula, **base)
            model._fit_design(design, None, time.perf_counter())
            return model
        from models.lmm.model import LinearMixedModel

        params = {**base, "reml": reml, "ddf": "satterthwaite"}
        return LinearMixedModel(formula, **params)._fit_design(design)


def _pilot_grid(
    model: Any,
    *,
    data: pd.DataFrame,
    participant_col: str,
    session_col: str | None,
    n_participants: int,
    sessions: tuple[int, int] | None,
    rng: np.random.Generator,
) -> tuple[Any, np.ndarray]:
    frame = extend_frame(
        data,
        participant_col=participant_col,
        session_col=session_col,
        n_participants=n_participants,
        sessions=sessions,
        rng=rng,
    )
    design = recode_groups(model.design_.transform(frame), frame)
    return design, model.beta_.to_numpy(dtype=float).copy()


def _fixed_names(design: Any, engine: str) -> list[str]:
    if engine == "clmm":
        return power_ordinal.fixed_names(design)
    return [str(c) for c in design.X.columns]


def _design_grid(
    spec: PowerDesign, *, n_participants: int, sessions: tuple[int, int], rng: np.random.Generator
) -> Any:
    from models.formula import build_design, parse_formula

    parsed = parse_formula(spec.formula)
    frame = generate_frame(
        spec, n_participants=n_participants, sessions=sessions, rng=rng, response=parsed.response
    )
    return build_design(parsed, frame)


def _beta_from_design(spec: PowerDesign, design: Any, term: str) -> np.ndarray:
    names = _fixed_names(design, spec.engine)
    missing = [c for c in names if c not in spec.fixed and c != term]
    extra = [c for c in spec.fixed if c not in names]
    if missing or extra:
        raise InvalidParameterError(
            f"{spec.source}: [fixed] must give a value for every fixed-effect column of the "
            f"formula, {names}"
            + (f"; missing {missing}" if missing else "")
            + (f"; not in the formula {extra}" if extra else "")
        )
    return np.array([spec.fixed.get(c, 0.0) for c in names], dtype=float)


def _check_random(spec: PowerDesign, design: Any) -> None:
    groups = {b.group for b in design.random}
    for b in design.random:
        entry = spec.random.get(b.group)
        if entry is None:
            raise InvalidParameterError(
                f"{spec.source}: [random.{b.group}] is missing; the formula has random effects "
                f"for {sorted(groups)}"
            )
        missing = [t for t in b.terms if t not in entry["sd"]]
        if missing:
            raise InvalidParameterError(
                f"{spec.source}: [random.{b.group}] sd must give the terms {list(b.terms)}; "
                f"missing {missing}"
            )
    for group, entry in spec.random.items():
        if group not in groups:
            raise InvalidParameterError(
                f"{spec.source}: [random.{group}] names no grouping factor of the formula; "
                f"expected some of {sorted(groups)}"
            )
        terms = {t for b in design.random if b.group == group for t in b.terms}
        extra = [t for t in entry["sd"] if t not in terms]
        if extra:
            raise InvalidParameterError(
                f"{spec.source}: [random.{group}] sd names terms not in the formula: {extra}; "
                f"expected {sorted(terms)}"
            )
        for t1, t2, _ in entry["corr"]:
            if not any(t1 in b.terms and t2 in b.terms for b in design.random if b.group == group):
                raise InvalidParameterError(
                    f"{spec.source}: [random.{group}] corr [{t1}, {t2}]: the two terms are not "
                    "in one correlated random-effects term of the formula"
                )


def _check_term(term: str, design: Any, source: str, engine: str) -> int:
    names = _fixed_names(design, engine)
    if term not in names:
        raise InvalidParameterError(
            f"the `effect` parameter of {_WHERE} names {term!r}, which is not a fixed-effect "
            f"term of {source}; the terms are {names}"
        )
    return names.index(term)


# ---------------------------------------------------------------------------------------------


def simulate_power(
    model_or_design: Any,
    *,
    effect: Mapping[str, float],
    n_participants: int | Sequence[int] | None = None,
    n_sessions: int | str | tuple[int, int] | list[Any] | None = None,
    n_sims: int = 1000,
    alpha: float = 0.05,
    test: Literal["satterthwaite", "lrt", "wald"] | None = None,
    seed: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    data: pd.DataFrame | None = None,
    id_col: str | None = None,
    session_col: str | None = None,
    ci_level: float = 0.95,
    batch_size: int | None = None,
) -> PowerResult:
    """Estimate power by simulation over a grid of participants (and sessions per participant).

    Parameters
    ----------
    model_or_design : LinearMixedModel, OrdinalMixedModel, PowerDesign, str or path-like
        A fitted pilot model (then ``data`` is required), a design from :func:`read_design`,
        or the path of a design TOML.
    effect : mapping
        ``{term: value}``: the fixed effect to detect (a column name of the model's fixed
        effects, e.g. ``"trait"``) and its true value (for an ordinal model a log odds ratio);
        the other parameters stay as fitted (or as written in the design), like
        ``fixef(model)[term] <- value`` in simr.
    n_participants : int or sequence of int, optional
        Participants at each grid point, 2 to
        :data:`~models.limits.POWER_MAX_PARTICIPANTS` (100,000). Default: the pilot's count,
        or the design's ``participants``.
    n_sessions : int, "lo-hi", (lo, hi) or list of them, optional
        Sessions per participant (a range is drawn uniformly per participant), 1 to
        :data:`~models.limits.POWER_MAX_SESSIONS` (1,000); a list gives a grid. Default: the
        pilot's own sessions (resampled with their participant), or the design's
        ``sessions``. With a pilot, ``session_col`` must name the session column.
    n_sims : int, default 1000
        Simulations per grid point, at most :data:`~models.limits.POWER_MAX_SIMS` (100,000).
    alpha : float, default 0.05
        Level of the test.
    test : {"satterthwaite", "lrt", "wald"}, optional
        ``"satterthwaite"`` (the default for a linear model): the t test of the term with
        Satterthwaite df (lmerTest), on fits by the pilot's criterion (REML for designs);
        ``"lrt"``: likelihood-ratio test of the model against the model without the term, both
        by ML (chi-square, 1 df); ``"wald"`` (the default for an ordinal model, which has no
        Satterthwaite test): the z test ``estimate / se`` against the normal distribution.
    seed : int, optional
        Seed of every random draw. ``None`` draws fresh entropy, recorded in ``meta`` so the
        run can be repeated.
    scheduler : str, optional
        Where the simulations run: ``None`` (in this process), ``"processes:N"`` (``N`` local
        processes, BLAS pinned to one thread each), ``"local:N"`` (a Dask LocalCluster of ``N``
        single-threaded workers on 127.0.0.1, closed at the end) or ``"tcp://host:port"`` (an
        existing Dask cluster). Dask needs the ``dask`` extra. The result does not depend on it.
        Dask's workers start with ``MALLOC_TRIM_THRESHOLD_=65536``, which halves the speed of
        the refits; ``"local:N"`` starts them without it, and a cluster of your own does once
        its configuration sets ``distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_``
        to null.
    progress : bool, default True
        Show a progress bar with rate and ETA on stderr when it is a terminal.
    data : pandas.DataFrame, optional
        The data the pilot was fitted to (required with a pilot; rows are matched on the
        index of ``model.design_.rows``).
    id_col : str, optional
        The pilot's participant column; default the grouping factor of the formula's first
        random-effects term.
    session_col : str, optional
        The pilot's session column (needed with ``n_sessions``; keeps a session's rows
        together).
    ci_level : float, default 0.95
        Level of the Clopper-Pearson interval of the power.
    batch_size : int, optional
        Simulations per task sent to a worker (default: about four tasks per worker and grid
        point, at most 100). It does not change the result.

    Returns
    -------
    PowerResult
        ``table`` (one row per grid point: ``n_participants, n_sessions, n_obs, n_sims,
        n_failed, n_singular, n_rejected, power, ci_low, ci_high``), ``failures`` (every
        simulation that failed or was singular, with its reason), ``simulations`` (estimate and
        p value of each) and ``meta``.

    Raises
    ------
    InvalidParameterError
        For an invalid option, a term that is not in the model, a pilot without its data, or a
        design file with a missing or wrong key (the key is named). Before any study is
        built, also for a grid beyond the ceilings of :mod:`models.limits`: more than 100
        grid points, a simulated study of more than 1,000,000 rows, or more than
        2,000,000,000 rows simulated and refitted in all (grid points x ``n_sims`` x rows,
        each simulation counted 2,000 rows more for its fixed cost).
    ConvergenceError
        When the template fit of a grid point fails (the design cannot carry the model).
    ImportError
        For a Dask scheduler without the ``dask`` extra installed.

    Notes
    -----
    For each grid point the design is built once (the pilot's participants cycled in random
    order, each copy with new ids, sessions resampled within the participant when
    ``n_sessions`` is given; or a study generated from the design file) and a template model is
    fitted to one simulated response. Simulation ``i`` draws ``y = X beta + Z b + e`` with
    ``b ~ N(0, G)`` and ``e ~ N(0, sigma^2)`` at the true parameters and refits the template
    to it (same design matrices; Newton's method on the exact derivatives, started from the
    true covariance parameters, or :meth:`LinearMixedModel.refit` from the template's where it
    does not settle). For an ordinal model the latent response
    ``X beta + Z b + e`` (``e`` logistic for the logit link, normal for probit) is cut at the
    true thresholds into categories, and :meth:`OrdinalMixedModel.refit` starts from the
    template's estimates. ``power = n_rejected / (n_sims - n_failed)``; the
    interval is the exact binomial one (Clopper & Pearson 1934). Singular fits are kept (their
    tests are valid, if conservative) and counted; fits that raise or do not converge are
    counted as failed and listed.

    The type-I error rate at ``effect = 0`` is within its 99% binomial interval around
    ``alpha`` (2,000 simulations, 40 participants; tests, for the Satterthwaite t of the
    linear model and the Wald z of the ordinal one), a paired design agrees with
    ``statsmodels.stats.power.TTestPower``, a mixed design with a seeded
    ``lme4``/``lmerTest`` 3.1-3 simulate/refit loop (``tests/models/reference/power_lme4.R``)
    and an ordinal design with an ``ordinal::clmm`` 2022.11.16 loop
    (``tests/models/reference/power_clmm.R``) within Monte Carlo error.

    References
    ----------
    Green P, MacLeod CJ (2016). SIMR: an R package for power analysis of generalized linear
    mixed models by simulation. Methods in Ecology and Evolution 7(4), 493-498.

    Examples
    --------
    >>> from models.power import read_design, simulate_power
    >>> design = read_design({
    ...     "design": {"formula": "y ~ condition + (1 | participant_id)", "sessions": 2},
    ...     "predictors": {"condition": {"level": "session", "distribution": "cycle",
    ...                                  "values": [0, 1]}},
    ...     "fixed": {"Intercept": 0.0},
    ...     "random": {"participant_id": {"sd": {"Intercept": 1.0}}},
    ...     "residual": {"sd": 1.0},
    ... })
    >>> result = simulate_power(design, effect={"condition": 0.8}, n_participants=[10, 20],
    ...                         n_sims=50, seed=1, progress=False)
    >>> result.table[["n_participants", "n_sims", "power"]]
       n_participants  n_sims  power
    0              10      50   0.28
    1              20      50   0.54
    """
    start_time = time.perf_counter()
    term, value = _check_effect(effect)
    n_sims = check_count(n_sims, name="n_sims", where=_WHERE, minimum=1, maximum=POWER_MAX_SIMS)
    alpha = check_unit(alpha, name="alpha", where=_WHERE)
    ci_level = check_unit(ci_level, name="ci_level", where=_WHERE)
    if seed is not None:
        seed = check_int(seed, name="seed", where=_WHERE, minimum=0)
    check_bool(progress, name="progress", where=_WHERE)
    sched = power_runners.parse_scheduler(scheduler, where=_WHERE)
    if batch_size is not None:
        batch_size = check_int(batch_size, name="batch_size", where=_WHERE, minimum=1)
    entropy = int(np.random.SeedSequence(seed).entropy)  # type: ignore[arg-type]
    setup = _setup(model_or_design, data, id_col, session_col, n_sessions)
    tests = power_ordinal.TESTS if setup.engine == "clmm" else power_lmm.TESTS
    if test is None:
        test = tests[0]
    if test not in tests:
        kind = "an ordinal model" if setup.engine == "clmm" else "a linear mixed model"
        raise InvalidParameterError(
            f"the `test` parameter of {_WHERE} must be one of {list(tests)} for {kind}; "
            f"got {test!r}"
        )
    participants = _check_participants(
        setup.default_n if n_participants is None else n_participants
    )
    session_grid = _check_sessions(n_sessions)
    if setup.spec is not None and session_grid == [None]:
        session_grid = [setup.spec.sessions]
    _check_size(setup, participants, session_grid, n_sims)
    grid = [(n, s) for n in participants for s in session_grid]
    jobs, truths = [], {}
    for g, (n, sessions) in enumerate(grid):
        job, truth = _grid_job(setup, g, n, sessions, term, value, test, n_sims, entropy)
        jobs.append(job)
        truths = truths or truth
    workers = 1 if sched.kind == "serial" else int(sched.workers or os.cpu_count() or 1)
    if batch_size is None:
        batch_size = max(1, min(100, math.ceil(n_sims / (4 * workers))))
    bar = power_runners.Progress(len(grid) * n_sims, enabled=progress)
    try:
        outcomes, info = power_runners.run(
            jobs, scheduler=sched, batch_size=batch_size, progress=bar
        )
    finally:
        bar.close()
    seconds = time.perf_counter() - start_time
    result = _result_tables(grid, jobs, outcomes, n_sims=n_sims, alpha=alpha, ci_level=ci_level)
    pilot = setup.spec is None
    meta = {
        "package_version": __version__,
        "engine": setup.engine,
        "source": "pilot" if pilot else "design",
        "formula": setup.formula,
        "design_file": None if pilot else setup.spec.source,
        "term": term,
        "effect": value,
        "test": test,
        "alpha": alpha,
        "ci_level": ci_level,
        "seed": seed,
        "entropy": entropy,
        "n_sims": n_sims,
        "n_participants": participants,
        "n_sessions": [_label(s) for s in session_grid],
        "truth": truths,
        "participant_col": setup.participant_col if pilot else "participant_id",
        "session_col": setup.session_col if pilot else "session_id",
        "batch_size": batch_size,
        **info,
        "seconds": seconds,
        "simulations_per_second": len(grid) * n_sims / seconds if seconds > 0 else math.nan,
    }
    return PowerResult(**result, meta=meta)


@dataclass(frozen=True)
class _Setup:
    """Where the simulated data come from: a fitted pilot model (with its data) or a design."""

    engine: str  # "lmm" or "clmm"
    source: str  # for messages
    formula: str
    base: dict[str, Any]  # constructor options of the refitted models
    reml: bool
    default_n: int  # participants when no grid is given
    model: Any = None  # the pilot
    frame: pd.DataFrame | None = None  # the pilot's data
    participant_col: str | None = None
    session_col: str | None = None
    spec: PowerDesign | None = None  # the design


def _setup(
    model_or_design: Any,
    data: Any,
    participant_col: Any,
    session_col: Any,
    n_sessions: Any,
) -> _Setup:
    """Check the pilot model or the design (a TOML path is read) and what goes with it."""
    from models.lmm.model import LinearMixedModel
    from models.ordinal.model import OrdinalMixedModel

    if isinstance(model_or_design, str | os.PathLike):
        model_or_design = read_design(model_or_design)
    if isinstance(model_or_design, LinearMixedModel | OrdinalMixedModel):
        model = model_or_design
        if not hasattr(model, "theta_"):
            raise InvalidParameterError(
                f"the `model_or_design` parameter of {_WHERE} must be a fitted "
                f"{type(model).__name__}; call .fit(data) first"
            )
        frame = _pilot_data(model, data)
        participant_col = _pilot_participant(model, participant_col, frame)
        if session_col is not None and session_col not in frame.columns:
            raise InvalidParameterError(
                f"the `session_col` parameter of {_WHERE} must name a column of `data`; got "
                f"{session_col!r}"
            )
        if n_sessions is not None and session_col is None:
            raise InvalidParameterError(
                f"the `n_sessions` parameter of {_WHERE} needs `session_col`, the pilot's session "
                "column, so that a session's rows are resampled together"
            )
        return _Setup(
            engine="clmm" if isinstance(model, OrdinalMixedModel) else "lmm",
            source=f"the pilot model {model.formula!r}",
            formula=model.formula,
            base={
                k: v for k, v in model.get_params().items() if k not in ("formula", "reml", "ddf")
            },
            reml=bool(getattr(model, "reml", False)),
            default_n=int(frame[participant_col].nunique()),
            model=model,
            frame=frame,
            participant_col=participant_col,
            session_col=session_col,
        )
    if isinstance(model_or_design, PowerDesign):
        spec = model_or_design
        if data is not None or participant_col is not None or session_col is not None:
            raise InvalidParameterError(
                f"`data`, `id_col` and `session_col` of {_WHERE} apply to a pilot "
                "model; a design generates its own rows"
            )
        return _Setup(
            engine=spec.engine,
            source=f"the design {spec.source}",
            formula=spec.formula,
            base={"link": spec.link} if spec.engine == "clmm" else {},
            reml=True,
            default_n=spec.participants,
            spec=spec,
        )
    raise InvalidParameterError(
        f"the `model_or_design` parameter of {_WHERE} must be a fitted LinearMixedModel or "
        "OrdinalMixedModel, a PowerDesign or the path of a design TOML; got "
        f"{type(model_or_design).__name__}"
    )


def _grid_job(
    setup: _Setup,
    g: int,
    n: int,
    sessions: tuple[int, int] | None,
    term: str,
    value: float,
    test: str,
    n_sims: int,
    entropy: int,
) -> tuple[Any, dict[str, Any]]:
    """Build grid point ``g``'s design, truth and template fit; return its job and its truth."""
    engine, source = setup.engine, setup.source
    rng = np.random.default_rng(power_lmm.seed_sequence(entropy, g, 0))
    if setup.spec is None:
        design, beta = _pilot_grid(
            setup.model,
            data=setup.frame,
            participant_col=setup.participant_col,
            session_col=setup.session_col,
            n_participants=n,
            sessions=sessions,
            rng=rng,
        )
        beta[_check_term(term, design, source, engine)] = value
        truth = _engine_module(engine).truth_from_pilot(setup.model, design, beta)
    else:
        design = _design_grid(setup.spec, n_participants=n, sessions=sessions, rng=rng)
        j = _check_term(term, design, source, engine)
        beta = _beta_from_design(setup.spec, design, term)
        beta[j] = value
        _check_random(setup.spec, design)
        truth = _engine_module(engine).truth_from_design(setup.spec, design, beta)
    truths: dict[str, Any] = {
        "fixed": dict(zip(_fixed_names(design, engine), beta.tolist(), strict=True))
    }
    if engine == "clmm":
        truths["thresholds"] = truth.cutpoints.tolist()
    design = replace(design, y=truth.draw(rng))
    fit = functools.partial(_template, engine, setup.formula, base=setup.base)
    try:
        if test == "lrt":
            template = fit(design, reml=False)
            null = fit(power_lmm.without_term(design, term), reml=False)
        else:
            template, null = fit(design, reml=setup.reml), None
    except ModelsError as err:
        raise ConvergenceError(
            f"{_WHERE}: the model cannot be fitted to the simulated design with {n} "
            f"participants ({_label(sessions)} sessions): {err}"
        ) from err
    job_class = power_ordinal.OrdinalPowerJob if engine == "clmm" else power_lmm.LmmPowerJob
    job = job_class(
        grid=g,
        entropy=entropy,
        n_sims=n_sims,
        template=template,
        null_template=null,
        truth=truth,
        term=term,
        test=test,
    )
    return job, truths


def _result_tables(
    grid: list[tuple[int, Any]],
    jobs: list[Any],
    outcomes: list[Any],
    *,
    n_sims: int,
    alpha: float,
    ci_level: float,
) -> dict[str, pd.DataFrame]:
    """Power per grid point with its interval, every failed simulation, every simulation."""
    rows, failures, sims = [], [], []
    for (n, sessions), job, outs in zip(grid, jobs, outcomes, strict=True):
        label = _label(sessions)
        used = [o for o in outs if o.reason in ("", "singular")]
        rejected = sum(o.p_value < alpha for o in used)
        low, high = clopper_pearson(rejected, len(used), ci_level)
        rows.append(
            {
                "n_participants": n,
                "n_sessions": label,
                "n_obs": int(job.template.n_obs_),
                "n_sims": n_sims,
                "n_failed": sum(o.reason in ("error", "not_converged") for o in outs),
                "n_singular": sum(o.reason == "singular" for o in outs),
                "n_rejected": rejected,
                "power": rejected / len(used) if used else math.nan,
                "ci_low": low,
                "ci_high": high,
            }
        )
        for o in outs:
            sims.append((n, label, o.sim, o.estimate, o.p_value, o.reason))
            if o.reason:
                failures.append((n, label, o.sim, o.reason, o.reason == "singular", o.message))
    return {
        "table": pd.DataFrame(rows, columns=POWER_COLUMNS),
        "failures": pd.DataFrame(failures, columns=FAILURE_COLUMNS),
        "simulations": pd.DataFrame(sims, columns=SIMULATION_COLUMNS),
    }


def _engine_module(engine: str) -> Any:
    return power_ordinal if engine == "clmm" else power_lmm


def _pilot_data(model: Any, data: Any) -> pd.DataFrame:
    if data is None:
        raise InvalidParameterError(
            f"the `data` parameter of {_WHERE} is required with a pilot model: pass the "
            "DataFrame the model was fitted to, whose rows are resampled"
        )
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {_WHERE} must be a pandas DataFrame; "
            f"got {type(data).__name__}"
        )
    rows = model.design_.rows
    if not rows.isin(data.index).all():
        raise InvalidParameterError(
            f"the `data` parameter of {_WHERE} must be the data the pilot was fitted to; some "
            "rows the fit used are not in its index"
        )
    return data.loc[rows]


def _pilot_participant(model: Any, participant_col: Any, frame: pd.DataFrame) -> str:
    if participant_col is None:
        first = model.design_.random[0]
        if len(first.factors) != 1:
            raise InvalidParameterError(
                f"the `id_col` parameter of {_WHERE} is needed: the first random term "
                f"of {model.formula!r} is grouped by {first.group!r}, not one column"
            )
        return first.factors[0]
    if not isinstance(participant_col, str) or participant_col not in frame.columns:
        raise InvalidParameterError(
            f"the `id_col` parameter of {_WHERE} must name a column of `data`; got "
            f"{participant_col!r}"
        )
    return participant_col
