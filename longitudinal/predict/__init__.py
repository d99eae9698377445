"""What predicts empathy: participant-level empathy models and the out-of-person benchmark.

Two questions about the story-level ratings of a study (one row per story a participant
rated, :meth:`longitudinal.study.loaded.Study.story_frame`):

*Which person and session characteristics go with higher empathy?*
    :func:`empathy_data` builds the predictors (standardized traits; states of the nearest
    preceding survey wave and session features, each split into a between-person and a
    within-person part; weeks since the first session) and :func:`fit_empathy_models` fits
    the same model with two engines: a linear mixed model on the rating, in points of the
    study's declared scale (:class:`models.lmm.LinearMixedModel`, REML) and a Bayesian
    cumulative-logit model (:class:`models.bayes.BayesianMixedModel`; for a continuous scale of
    more than 11 points the gaussian one,
    :mod:`longitudinal.study.rating_scale`), both with a random
    intercept and week slope per participant and a random intercept per story. It returns one
    effects table for both engines, a variance decomposition with ICCs, and
    :func:`plot_effects` draws the forest plot. The report builds its "What predicts
    empathy" section from these (:mod:`longitudinal.report.sections.effects`); this package
    knows no page.

*How well can a person's ratings be predicted when the model has never seen that person?*
    :func:`evaluate_predictions` runs the EmpathicStories++ benchmark (Shen et al., ACL
    Findings 2024) on participant-grouped splits (70/20/10 per seed, and grouped K-fold;
    drawn by :func:`longitudinal.predict.splits.draw_splits`, which ``longitudinal splits`` exports)
    with the metrics of :mod:`models.evaluation`, and scores a researcher's own predictions
    on the same splits beside the package's models (:mod:`longitudinal.predict.user_predictions`);
    :func:`run_evaluation` writes ``metrics.csv``, ``summary.csv``, the table in the paper's
    layout and a figure (the ``longitudinal evaluate`` command).

The modules answer one question each: :mod:`~longitudinal.predict.predictors` (the predictors
and the formula), :mod:`~longitudinal.predict.effects` (fitting both engines),
:mod:`~longitudinal.predict.reading` (the effects in words), :mod:`~longitudinal.predict.plots`
(the figures), :mod:`~longitudinal.predict.benchmark` (the out-of-person benchmark) and
:mod:`~longitudinal.predict.results` (its tables and files).
"""

from __future__ import annotations

from longitudinal.narrate.gates import BAYES_ENGINES
from longitudinal.predict.benchmark import (
    BASELINES_TO_BEAT,
    CONSTANT_MODELS,
    MODEL_DESCRIPTIONS,
    THRESHOLD_SOURCES,
    EvaluationResult,
    benchmark_threshold,
    evaluate_predictions,
    majority_rating,
)
from longitudinal.predict.effects import (
    EFFECT_COLUMNS,
    VARIANCE_COLUMNS,
    EmpathyEffects,
    fit_empathy_models,
)
from longitudinal.predict.plots import plot_effects, plot_metrics
from longitudinal.predict.predictors import (
    PREDICTOR_COLUMNS,
    EmpathyData,
    default_predictors,
    empathy_data,
    empathy_formula,
)
from longitudinal.predict.reading import describe_effects
from longitudinal.predict.results import (
    METRIC_HEADERS,
    difference_note,
    difference_table,
    interval_note,
    interval_table,
    run_evaluation,
    spread_table,
)
from longitudinal.predict.selection import PEOPLE_PER_PREDICTOR, PredictorPlan, plan_predictors

__all__ = [
    "BASELINES_TO_BEAT",
    "BAYES_ENGINES",
    "CONSTANT_MODELS",
    "EFFECT_COLUMNS",
    "METRIC_HEADERS",
    "MODEL_DESCRIPTIONS",
    "PEOPLE_PER_PREDICTOR",
    "PREDICTOR_COLUMNS",
    "THRESHOLD_SOURCES",
    "VARIANCE_COLUMNS",
    "EmpathyData",
    "EmpathyEffects",
    "EvaluationResult",
    "PredictorPlan",
    "benchmark_threshold",
    "default_predictors",
    "describe_effects",
    "difference_note",
    "difference_table",
    "empathy_data",
    "empathy_formula",
    "evaluate_predictions",
    "fit_empathy_models",
    "interval_note",
    "interval_table",
    "majority_rating",
    "plot_effects",
    "plot_metrics",
    "plan_predictors",
    "run_evaluation",
    "spread_table",
]
