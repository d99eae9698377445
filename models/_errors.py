"""Exception and warning tree of :mod:`models`."""

from __future__ import annotations


class ModelsError(Exception):
    """Base class of every error raised by :mod:`models`."""


class InvalidParameterError(ModelsError, ValueError, TypeError):
    """A function argument has the wrong type or an invalid value."""


class FormulaError(ModelsError, ValueError):
    """A model formula cannot be parsed or does not match the data."""


class NotFittedError(ModelsError, AttributeError):
    """A method that needs a fitted model was called before ``fit``."""


class ConvergenceError(ModelsError, RuntimeError):
    """An optimizer or sampler failed in a way that leaves no usable result."""


class ModelsWarning(UserWarning):
    """Base class of the warnings issued by :mod:`models`."""


class ConvergenceWarning(ModelsWarning):
    """The optimizer stopped without meeting its convergence criteria."""


class SingularFitWarning(ModelsWarning):
    """A variance component is at zero or a correlation at +/-1."""


class SamplingWarning(ModelsWarning):
    """A Bayesian fit failed one of the diagnostics gates (R-hat, ESS, divergences, E-BFMI)."""


class DataQualityWarning(ModelsWarning):
    """The data support the result only weakly."""
