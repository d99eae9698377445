"""Participant-level models: lme4-style mixed models, panel estimators, Bayesian hierarchical models."""

from models._errors import (
    ConvergenceError,
    ConvergenceWarning,
    FormulaError,
    InvalidParameterError,
    ModelsError,
    ModelsWarning,
    NotFittedError,
    SamplingWarning,
    SingularFitWarning,
)

__all__ = [
    "ConvergenceError",
    "ConvergenceWarning",
    "FormulaError",
    "InvalidParameterError",
    "ModelsError",
    "ModelsWarning",
    "NotFittedError",
    "SamplingWarning",
    "SingularFitWarning",
]
