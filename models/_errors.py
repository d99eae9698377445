"""Exception and warning tree of :mod:`models`.

The bases (:class:`ModelsError`, :class:`ModelsWarning`), :class:`InvalidParameterError` and
:class:`DataQualityWarning` are the distribution's shared classes (``_empathic_base.errors``),
re-exported here so that every module of the package imports its errors from this one place.
"""

from __future__ import annotations

from _empathic_base.errors import (
    DataQualityWarning,
    EmpathicError,
    EmpathicWarning,
    InvalidParameterError,
    ModelsError,
    ModelsWarning,
)

__all__ = [
    "CentringWarning",
    "ConvergenceError",
    "ConvergenceWarning",
    "DataQualityWarning",
    "EmpathicError",
    "EmpathicWarning",
    "FormulaError",
    "InvalidParameterError",
    "ModelsError",
    "ModelsWarning",
    "NotFittedError",
    "SamplingWarning",
    "SingularFitWarning",
]


class FormulaError(ModelsError, ValueError):
    """A model formula cannot be parsed or does not match the data."""


class NotFittedError(ModelsError, AttributeError):
    """A method that needs a fitted model was called before ``fit``."""


class ConvergenceError(ModelsError, RuntimeError):
    """An optimizer or sampler failed in a way that leaves no usable result."""


class ConvergenceWarning(ModelsWarning):
    """The optimizer stopped without meeting its convergence criteria."""


class CentringWarning(ModelsWarning):
    """A predictor varies both within and between clusters where a within/between split is asked."""


class SingularFitWarning(ModelsWarning):
    """A variance component is at zero or a correlation at +/-1."""


class SamplingWarning(ModelsWarning):
    """A Bayesian fit failed one of the diagnostics gates (R-hat, ESS, divergences, E-BFMI)."""
