"""Exception and warning tree of :mod:`longitudinal`.

Input problems in a study directory are reported with :class:`surveys.InputValidationError`
(one failure table for everything), so callers handle one kind of data error.

Every class here is the distribution's shared class (``_empathic_base.errors``):
``longitudinal.InvalidParameterError is models.InvalidParameterError is
surveys.InvalidParameterError``, and the same for :class:`DataQualityWarning`.
"""

from __future__ import annotations

from _empathic_base.errors import (
    DataQualityWarning,
    EmpathicError,
    EmpathicWarning,
    InvalidParameterError,
    LongitudinalError,
    LongitudinalWarning,
)

__all__ = [
    "DataQualityWarning",
    "EmpathicError",
    "EmpathicWarning",
    "InvalidParameterError",
    "LongitudinalError",
    "LongitudinalWarning",
]
