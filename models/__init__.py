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
    "HausmanTest",
    "InvalidParameterError",
    "LikelihoodRatioTest",
    "LinearMixedModel",
    "MixedModelSummary",
    "ModelsError",
    "ModelsWarning",
    "NotFittedError",
    "PanelFit",
    "RandomBlock",
    "RandomTerm",
    "SamplingWarning",
    "SingularFitWarning",
    "build_design",
    "fit_between",
    "fit_random_effects",
    "fit_within",
    "hausman_test",
    "lrt",
    "parse_formula",
    "within_between",
]
