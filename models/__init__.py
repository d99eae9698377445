"""Participant-level models: lme4-style mixed models, panel estimators, Bayesian models.

:class:`LinearMixedModel` fits ``lme4`` formulas (crossed, nested, correlated or uncorrelated
random effects) by REML or ML with Satterthwaite degrees of freedom; :func:`parse_formula`
and :func:`build_design` are the formula layer it shares with the Bayesian models. The panel
companions (:func:`fit_within`, :func:`fit_random_effects`, :func:`fit_between`,
:func:`hausman_test`, :func:`within_between`) wrap ``linearmodels``.
"""

from models._errors import (
    ConvergenceError,
    ConvergenceWarning,
    DataQualityWarning,
    FormulaError,
    InvalidParameterError,
    ModelsError,
    ModelsWarning,
    NotFittedError,
    SamplingWarning,
    SingularFitWarning,
)
from models.evaluation import (
    GroupedFold,
    GroupedSplit,
    PredictionMetrics,
    binary_accuracy,
    binary_f1,
    grouped_kfold,
    grouped_split,
    mean_squared_error,
    overlapping_groups,
    pearson_r,
    prediction_metrics,
    spearman_rho,
    summarize_metrics,
)
from models.formula import Design, FormulaSpec, RandomBlock, RandomTerm, build_design, parse_formula
from models.lmm import LikelihoodRatioTest, LinearMixedModel, MixedModelSummary, lrt
from models.panel import (
    HausmanTest,
    PanelFit,
    fit_between,
    fit_random_effects,
    fit_within,
    hausman_test,
    within_between,
)

__all__ = [
    "ConvergenceError",
    "ConvergenceWarning",
    "DataQualityWarning",
    "Design",
    "FormulaError",
    "FormulaSpec",
    "GroupedFold",
    "GroupedSplit",
    "HausmanTest",
    "InvalidParameterError",
    "LikelihoodRatioTest",
    "LinearMixedModel",
    "MixedModelSummary",
    "ModelsError",
    "ModelsWarning",
    "NotFittedError",
    "PanelFit",
    "PredictionMetrics",
    "RandomBlock",
    "RandomTerm",
    "SamplingWarning",
    "SingularFitWarning",
    "binary_accuracy",
    "binary_f1",
    "build_design",
    "fit_between",
    "fit_random_effects",
    "fit_within",
    "grouped_kfold",
    "grouped_split",
    "hausman_test",
    "lrt",
    "mean_squared_error",
    "overlapping_groups",
    "parse_formula",
    "pearson_r",
    "prediction_metrics",
    "spearman_rho",
    "summarize_metrics",
    "within_between",
]
