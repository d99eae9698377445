"""Exception and warning tree of :mod:`longitudinal`.

Input problems in a study directory are reported with :class:`surveys.InputValidationError`
(one failure table for everything), so callers handle one kind of data error.
"""

from __future__ import annotations


class LongitudinalError(Exception):
    """Base class of every error raised by :mod:`longitudinal`."""


class InvalidParameterError(LongitudinalError, ValueError, TypeError):
    """A function argument has the wrong type or an invalid value."""


class LongitudinalWarning(UserWarning):
    """Base class of the warnings issued by :mod:`longitudinal`."""


class DataQualityWarning(LongitudinalWarning):
    """A result is defined but rests on weak data (few people at a wave, ...)."""


class LongitudinalDeprecationWarning(LongitudinalWarning, FutureWarning):
    """A name or parameter still accepted for one release; the message says what replaces it."""
