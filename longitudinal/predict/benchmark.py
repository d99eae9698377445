"""The out-of-person prediction benchmark (EmpathicStories++; Shen et al., ACL Findings 2024).

:func:`evaluate_predictions` fits the package's models on the training participants of each
split (:func:`longitudinal.predict.splits.draw_splits`) and scores them, and a researcher's own
predictions (:mod:`longitudinal.predict.user_predictions`), with the metrics of
:mod:`models.evaluation` on the participants no model saw.

This module is the benchmark's front door: it checks the options and runs the steps, and
its ``__all__`` gives the benchmark's public names. The steps live by question in
:mod:`~longitudinal.predict.benchmark_models` (the models and baselines),
:mod:`~longitudinal.predict.benchmark_scoring` (the threshold, units and verdicts),
:mod:`~longitudinal.predict.benchmark_runs` (where and in which order the fits run) and
:mod:`~longitudinal.predict.benchmark_result` (:class:`EvaluationResult` and its parameters).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from longitudinal._checks import check_bool, check_int, check_unit
from longitudinal._errors import InvalidParameterError
from longitudinal.predict.benchmark_models import (
    BASELINES_TO_BEAT,
    CONSTANT_MODELS,
    CONTINUOUS_MAJORITY_VOTE,
    MODEL_DESCRIPTIONS,
    _chosen_models,
    _whole_ratings_for_ordinal,
    majority_rating,
    majority_vote,
)
from longitudinal.predict.benchmark_result import EvaluationResult, _parameters
from longitudinal.predict.benchmark_runs import _check_scheduler, _Runner
from longitudinal.predict.benchmark_scoring import (
    CONTINUOUS_MSE_FACTOR,
    METRIC_BOUNDS,
    NOT_COMPARED,
    THRESHOLD_SOURCES,
    _checked_threshold,
    _kfold_intervals,
    _sorted_metrics,
    artifact_correlations,
    benchmark_threshold,
    mse_factor,
    spread_bounds,
    threshold_rule,
    withhold_verdicts,
)
from longitudinal.predict.common import _empty, check_study, sampling_settings
from longitudinal.predict.left_out import left_out_summary
from longitudinal.predict.selection import _benchmark_data
from longitudinal.predict.splits import SPLIT_SIZES, draw_splits, seed_list, splits_table
from models.bayes import default_sampler
from models.evaluation import BOOTSTRAP_COLUMNS, COMPARISON_COLUMNS, summarize_metrics

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.study.loaded import Study

__all__ = [
    "BASELINES_TO_BEAT",
    "CONSTANT_MODELS",
    "CONTINUOUS_MAJORITY_VOTE",
    "CONTINUOUS_MSE_FACTOR",
    "METRIC_BOUNDS",
    "MODEL_DESCRIPTIONS",
    "NOT_COMPARED",
    "THRESHOLD_SOURCES",
    "EvaluationResult",
    "artifact_correlations",
    "benchmark_threshold",
    "check_benchmark_counts",
    "check_bootstrap_size",
    "evaluate_predictions",
    "majority_rating",
    "majority_vote",
    "mse_factor",
    "spread_bounds",
    "threshold_rule",
    "withhold_verdicts",
]


def check_benchmark_counts(n_seeds: int, k: int, n_boot: Any, *, func: str) -> None:
    """Refuse, before any work, counts of the benchmark past their ceilings.

    Seeds at most :data:`~models.limits.EVALUATE_MAX_SEEDS`, folds ``k`` 0 or 2 to
    :data:`~models.limits.EVALUATE_MAX_KFOLD`, fitted splits per model ``n_seeds x (k + 1)``
    at most :data:`~models.limits.EVALUATE_MAX_SPLITS` and bootstrap replicates ``n_boot``
    0 to :data:`~models.limits.EVALUATE_MAX_N_BOOT`. Each refusal names the parameter (its
    option on the command line: ``--seeds``, ``--kfold``, ``--n-boot``) and says why.

    Parameters
    ----------
    n_seeds : int
        Number of split seeds.
    k : int
        Folds of the grouped K-fold (0: none).
    n_boot : int
        Bootstrap replicates of the K-fold metrics (0: none).
    func : str
        The calling function, named in the messages outside the command line.

    Raises
    ------
    longitudinal.InvalidParameterError
        For a count past its ceiling.

    Examples
    --------
    >>> from longitudinal.predict.benchmark import check_benchmark_counts
    >>> check_benchmark_counts(5, 5, 2000, func="evaluate_predictions")
    >>> check_benchmark_counts(5, 5, 10**12, func="evaluate_predictions")
    Traceback (most recent call last):
    ...
    _empathic_base.errors.InvalidParameterError: the `n_boot` parameter of evaluate_predictions must be a whole number from 0 to 100,000; got 1000000000000 (more replicates do not change a 95% bound at the printed precision)
    """  # noqa: E501
    from _empathic_base.words import parameter
    from models.limits import (
        EVALUATE_MAX_KFOLD,
        EVALUATE_MAX_N_BOOT,
        EVALUATE_MAX_SEEDS,
        EVALUATE_MAX_SPLITS,
    )

    if not 1 <= n_seeds <= EVALUATE_MAX_SEEDS:
        raise InvalidParameterError(
            f"{parameter('seeds', func)} must give from 1 to {EVALUATE_MAX_SEEDS:,} seeds; got "
            f"{n_seeds} (each seed refits every model for its holdout and its K folds)"
        )
    if k == 1 or not 0 <= k <= EVALUATE_MAX_KFOLD:
        raise InvalidParameterError(
            f"{parameter('k', func)} must be 0 (no K-fold) or a number of folds from 2 to "
            f"{EVALUATE_MAX_KFOLD:,}; got {k} (each fold refits every model)"
        )
    if n_seeds * (k + 1) > EVALUATE_MAX_SPLITS:
        raise InvalidParameterError(
            f"{parameter('seeds', func)} x ({parameter('k', func)} + 1) = {n_seeds:,} x "
            f"{k + 1:,} = {n_seeds * (k + 1):,} fitted splits per model, more than the limit of "
            f"{EVALUATE_MAX_SPLITS:,} (hours per model even for the linear ones); use fewer "
            "seeds or folds"
        )
    if (
        isinstance(n_boot, bool)
        or not isinstance(n_boot, int | np.integer)
        or not 0 <= n_boot <= EVALUATE_MAX_N_BOOT
    ):
        raise InvalidParameterError(
            f"{parameter('n_boot', func)} must be a whole number from 0 to "
            f"{EVALUATE_MAX_N_BOOT:,}; got {n_boot!r} (more replicates do not change a 95% "
            "bound at the printed precision)"
        )


def check_bootstrap_size(n_boot: int, n_ratings: int, *, func: str) -> None:
    """Refuse a K-fold bootstrap whose replicate weights would not fit in memory.

    The weights are ``(n_boot + 1) x n_ratings`` numbers, at most
    :data:`~models.limits.EVALUATE_MAX_BOOT_CELLS`; the refusal gives the most replicates
    that fit the study. Checked once the study's ratings are counted, before any fit.

    Examples
    --------
    >>> from longitudinal.predict.benchmark import check_bootstrap_size
    >>> check_bootstrap_size(2000, 807, func="evaluate_predictions")
    >>> check_bootstrap_size(100_000, 807, func="evaluate_predictions")
    Traceback (most recent call last):
    ...
    _empathic_base.errors.InvalidParameterError: the `n_boot` parameter of evaluate_predictions is 100,000: the bootstrap would weigh 807 ratings 100,001 times (80,700,807 weights, more than the limit of 50,000,000, about 2 GB of memory); at most 61,956 replicates fit this study
    """  # noqa: E501
    from _empathic_base.words import parameter
    from models.limits import EVALUATE_MAX_BOOT_CELLS

    cells = (int(n_boot) + 1) * int(n_ratings)
    if n_boot and cells > EVALUATE_MAX_BOOT_CELLS:
        fits = max(EVALUATE_MAX_BOOT_CELLS // max(int(n_ratings), 1) - 1, 0)
        raise InvalidParameterError(
            f"{parameter('n_boot', func)} is {int(n_boot):,}: the bootstrap would weigh "
            f"{int(n_ratings):,} ratings {int(n_boot) + 1:,} times ({cells:,} weights, more than "
            f"the limit of {EVALUATE_MAX_BOOT_CELLS:,}, about 2 GB of memory); at most "
            f"{fits:,} replicates fit this study"
        )


def evaluate_predictions(
    study: Study,
    *,
    seeds: int | Sequence[int] = 5,
    k: int = 5,
    models: Sequence[str] | None = None,
    bayes: bool = True,
    bayes_kfold: bool = False,
    threshold: float | None = None,
    threshold_source: str | None = None,
    sizes: tuple[float, float, float] = SPLIT_SIZES,
    session_features: Sequence[str] | None = None,
    predictors: Sequence[str] | None = None,
    random_slope: bool = True,
    draws: int | None = None,
    tune: int | None = None,
    chains: int | None = None,
    sampler: str | None = None,
    n_boot: int = 2000,
    ci_level: float = 0.95,
    bootstrap_seed: int = 0,
    predictions: pd.DataFrame
    | Mapping[str, pd.DataFrame]
    | str
    | os.PathLike[str]
    | Sequence[str | os.PathLike[str]]
    | None = None,
    scheduler: str | None = None,
    progress: bool = False,
) -> EvaluationResult:
    """Run the out-of-person empathy prediction benchmark on a study.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study.
    seeds : int or sequence of int, default 5
        Split seeds; an int ``n`` means ``0, ..., n - 1``.
    k : int, default 5
        Folds of the grouped K-fold, repeated for every seed; 0 skips the K-fold.
    models : sequence of str, optional
        Subset of :data:`MODEL_DESCRIPTIONS` (default all, ``bayes_ordinal`` only with
        ``bayes``; on a continuous scale of more than 11 points the ordinal models
        ``clmm_full`` and ``bayes_ordinal`` are left out with a note, and refused when named).
    bayes : bool, default True
        Include the Bayesian ordinal model.
    bayes_kfold : bool, default False
        Also fit the Bayesian model in every K-fold fold (``k`` times more sampling).
    threshold : float, optional
        Binarisation cut for accuracy and F1: positive ("empathic") when rating or prediction
        > ``threshold``; it must lie within ``[scale_min, scale_max)`` of the study's scale.
        By default ``[ratings] threshold`` of study.toml, else the midpoint of the declared
        scale (3 on 1-5: whole-number ratings 4 and 5 positive; 4 on 1-7). The paper does not
        state its threshold; the value and its origin are recorded in the output
        (:func:`benchmark_threshold`).
    threshold_source : str, optional
        How an explicit ``threshold`` is named in the outputs (default "the threshold
        argument"; ``longitudinal evaluate`` passes ``"--threshold"``).
    sizes : tuple of float, default (0.7, 0.2, 0.1)
        Train, validation and test shares of the participants.
    session_features : sequence of str, optional
        Session features used by the session and full models; by default the study's (see
        :func:`empathy_data`).
    predictors : sequence of str, optional
        The traits, states and session features the models use (scale score columns,
        instruments or sessions.csv columns; :func:`longitudinal.predict.selection.
        resolve_predictors`); default study.toml's ``[roles] predictors``, else every trait,
        state and session feature of the study. Every named predictor enters (no budget).
    random_slope : bool, default True
        Random week slope per participant in the models that have the week term
        (``lmm_traits`` has a random intercept only).
    draws, tune, chains : int, optional
        Sampler settings of the Bayesian model; by default its own
        (:data:`models.bayes.DEFAULT_SAMPLING`; about 45 s per fit on 2 cores, the model
        compiled once per structure). Failed diagnostics are recorded in ``notes``.
    sampler : str, optional
        Default nutpie when installed, else PyMC.
    n_boot : int, default 2000
        Replicates B of the participant-cluster bootstrap of the K-fold metrics (0: none).
    ci_level : float, default 0.95
        Level of the bootstrap intervals.
    bootstrap_seed : int, default 0
        Seed of the bootstrap draws.
    predictions : CSV path(s), DataFrame or mapping of str to DataFrame, optional
        A researcher's own models' predictions on the splits of
        :func:`longitudinal.predict.selection.participant_splits` (same ``seeds``, ``k`` and
        ``sizes``):
        files, one table, or source name -> table, with the columns ``model, scheme, seed``,
        the study's participant, session and position columns and ``prediction``
        (:mod:`longitudinal.predict.user_predictions`). Each model is scored beside the package's
        models.
    scheduler : str, optional
        Where the fits run: ``None`` (here, one after another), ``"processes:N"`` (N local
        processes), ``"local:N"`` (a Dask LocalCluster of N workers on 127.0.0.1) or
        ``"tcp://host:port"`` (an existing Dask scheduler; the ``dask`` extra). The folds x
        seeds x models are sent out in batches, and the results are those of the serial run
        (each fit depends only on its split, model and seed). The back ends are those of
        :func:`models.power.simulate_power`.
    progress : bool, default False
        A progress line on a terminal's stderr while the fits run elsewhere.

    Returns
    -------
    EvaluationResult
        Metrics per model x split x seed, their summary over seeds, per-fit details,
        the splits, the K-fold bootstrap intervals and paired comparisons, parameters and
        notes.

    Raises
    ------
    longitudinal.InvalidParameterError
        For invalid options, unknown models, or too few participants for the splits.
    surveys.InputValidationError
        For ``predictions`` that cannot be scored, listing every problem (file, row, rating);
        raised before any model is fitted.

    Notes
    -----
    Per seed, the participants are split 70/20/10 (:func:`models.evaluation.grouped_split`)
    and every model is fitted on the training participants only and evaluated on the
    validation and test participants; then, with ``k > 0``, on grouped K-folds
    (:func:`models.evaluation.grouped_kfold`): every participant is predicted by the model
    fitted without their fold, and a seed's K-fold metric is that of all these out-of-fold
    predictions pooled. (The mean of per-fold metrics would not estimate the population
    value: a correlation within a fold of a few people is centred on that fold's own mean.)
    Both are drawn by
    :func:`longitudinal.predict.splits.draw_splits`, which also gives ``longitudinal splits`` its
    splits. The predictors are standardized with the training participants' means and SDs.
    No participant is in two parts of a split (checked before fitting,
    :func:`models.evaluation.overlapping_groups`). A test participant's between-person parts
    come from their own surveys and sessions (never their ratings).

    Predictions for the unseen participants use population-level effects only: ``X beta``
    for the LMMs (``re_form="~0"``); for the Bayesian model, the expected rating ``sum_k k
    P(y = k)`` with the participant effects integrated over their fitted distribution
    (``predict_proba(new_groups="population")``). The prediction models have no story
    effect (stories add nothing to a population-level prediction and cost run time). The
    package's predictions are clipped to the study's declared scale ``[scale_min,
    scale_max]`` before scoring (a linear model may predict below the bottom or above the
    top of the slider; the ordinal models' expected ratings lie on it already); how many
    were outside is recorded per model in ``parameters["clipping"]``. A researcher's
    predictions off the scale are refused, not clipped.

    Metrics (x 100, :func:`models.evaluation.prediction_metrics`): Pearson r, Spearman rho,
    accuracy and binary F1 after binarising at ``threshold``, and MSE on the rating scale.
    The baselines to beat are ``majority_vote`` (the most frequent training rating for
    everyone), ``grand_mean`` (the training mean) and ``lmm_traits``; the first two predict
    one value for everyone, so their r and rho are undefined (NaN) by design.

    The kind of the declared scale decides the categorical parts
    (:mod:`longitudinal.study.rating_scale`). On an ordinal scale (at most 11 points: 1-5, 1-7) all
    is as above. On a continuous scale (more than 11 points, a 0-100 slider) the most
    frequent single value stands for a handful of ratings, so ``majority_vote`` predicts the
    median training rating (:func:`majority_vote`); accuracy and F1 binarise at the same
    ``threshold`` (the midpoint, 50 on 0-100, unless declared); the MSE is reported in
    squared rating points, not x 100 (:func:`mse_factor`; x 100 would print tens of
    thousands), in the metric rows, the summary and the bootstrap intervals and differences;
    and the ordinal models are not run. ``parameters["metric_units"]`` and
    ``parameters["metrics"]`` say which units the numbers are in. A researcher's
    model is scored by the same code on the same ratings: per seed, its predictions of the
    test (and, when given, validation) ratings of the holdout split, and its out-of-fold
    predictions of the K-fold, pooled.

    Uncertainty. The holdout test set of a seed holds few people (4 of 41 participants): its
    mean ± SD over seeds is the spread of the splits, not a sampling interval, and a test
    set of fewer than 10 people supports no inference (``parameters["holdout_caveat"]``).
    For the grouped K-fold, where every participant is predicted once per seed by a model
    that did not see them, :func:`models.evaluation.kfold_bootstrap` gives each model's
    metrics a participant-cluster bootstrap interval (``intervals``; B = ``n_boot``
    replicates drawn with ``bootstrap_seed``, predictions held fixed; estimate ± t SE on
    Fisher's z, the logit or the log, which covered the population value in 94-95% of
    simulated 41-person studies) and every pair of models a paired difference with its
    interval (``comparisons``), which calls a difference better or worse only when its
    interval excludes 0, and never against a baseline whose pooled r or rho is an artifact
    of refitting per fold (its interval reaches 0: :func:`artifact_correlations`; verdict
    :data:`NOT_COMPARED`, listed in ``parameters["bootstrap"]["artifacts"]``).

    Examples
    --------
    >>> from longitudinal.predict import evaluate_predictions
    >>> result = evaluate_predictions(study, seeds=2, bayes=False)  # doctest: +SKIP
    >>> result.summary_table[["model", "split", "r_mean", "r_sd"]]  # doctest: +SKIP
    """
    func = "evaluate_predictions"
    check_study(study, func=func)
    threshold, threshold_from = _checked_threshold(
        study.config.ratings, threshold, source=threshold_source, func=func
    )
    seed_list_ = seed_list(seeds, func=func)
    k = check_int(k, name="k", where=func, minimum=0)
    if k == 1:
        raise InvalidParameterError(f"the `k` parameter of {func} must be 0 (no K-fold) or >= 2")
    check_benchmark_counts(len(seed_list_), k, n_boot, func=func)
    for name, value in (
        ("bayes", bayes),
        ("bayes_kfold", bayes_kfold),
        ("random_slope", random_slope),
    ):
        check_bool(value, name=name, where=func)
    chosen = _chosen_models(models, bayes, func=func)
    settings = sampling_settings(draws, tune, chains, where=func)
    bayes_opts: dict[str, Any] = dict(zip(("draws", "tune", "chains"), settings, strict=True))
    bayes_opts["sampler"] = sampler or default_sampler()
    n_boot = check_int(n_boot, name="n_boot", where=func, minimum=0)
    ci_level = check_unit(ci_level, name="ci_level", where=func)
    bootstrap_seed = check_int(bootstrap_seed, name="bootstrap_seed", where=func, minimum=0)
    check_bool(progress, name="progress", where=func)
    where = _check_scheduler(scheduler, func=func)
    start = time.perf_counter()
    raw, full = _benchmark_data(
        study, session_features=session_features, predictors=predictors, func=func
    )
    chosen, fractional_note = _whole_ratings_for_ordinal(chosen, full, asked=models, func=func)
    groups = full.data[full.id_col].to_numpy(dtype=object)
    if k:
        check_bootstrap_size(n_boot, len(groups), func=func)
    plan = draw_splits(groups, seeds=seed_list_, k=k, sizes=sizes)
    user = None
    if predictions is not None:  # every problem of the user's predictions, before any fit
        from longitudinal.predict.user_predictions import check_predictions

        user = check_predictions(
            predictions,
            study=study,
            frame=full.data,
            splits=plan,
            reserved=list(MODEL_DESCRIPTIONS),
        )
    notes: list[str] = [fractional_note] if fractional_note else []
    if user is not None:
        notes += user.notes()
    runner = _Runner(raw, full, groups, plan, user, bayes_opts, random_slope, notes)
    user_models = list(user.models) if user is not None else []
    ran = {"scheduler": "serial", "workers": 1}
    if where.kind != "serial":
        ran = runner.fit_elsewhere(
            chosen, seed_list_, bayes_kfold=bayes_kfold, scheduler=where, progress=progress
        )
    rows, out_of_fold = runner.score(
        chosen + user_models, seed_list_, threshold=threshold, bayes_kfold=bayes_kfold
    )
    metrics = _sorted_metrics(rows, [*MODEL_DESCRIPTIONS, *user_models])
    summary = summarize_metrics(metrics)
    boot, bootstrap = _kfold_intervals(
        runner.y,
        out_of_fold,
        groups=groups,
        n_boot=n_boot,
        ci_level=ci_level,
        threshold=threshold,
        seed=bootstrap_seed,
        mse_factor=runner.mse_factor,
    )
    parameters = _parameters(
        seeds=seed_list_,
        sizes=sizes,
        k=k,
        plan=plan,
        groups=groups,
        chosen=chosen,
        user=user,
        bayes=(
            {**bayes_opts, "in_kfold": bool(bayes_kfold)} if "bayes_ordinal" in chosen else None
        ),
        threshold=threshold,
        threshold_from=threshold_from,
        scale=study.config.ratings,
        random_slope=random_slope,
        full=full,
        bootstrap=bootstrap,
        clipped=runner.clipped,
        left_out=left_out_summary(study, raw, full),
        seconds=time.perf_counter() - start,
        predictors_source=(
            "--predictors"
            if predictors is not None
            else "study.toml [roles] predictors"
            if study.config.predictors is not None
            else "every trait, state and session feature of the study"
        ),
    )
    parameters["scheduler"] = ran
    return EvaluationResult(
        metrics=metrics,
        summary_table=summary,
        runs=pd.DataFrame(runner.records),
        parameters=parameters,
        notes=tuple(notes),
        splits=splits_table(groups, plan, id_col=study.config.id_col),
        intervals=boot.intervals if boot is not None else _empty(BOOTSTRAP_COLUMNS),
        comparisons=boot.comparisons if boot is not None else _empty(COMPARISON_COLUMNS),
    )
