"""Questionnaire scoring for longitudinal studies: instruments, readers, scoring, reliability."""

from surveys._errors import (
    DataQualityWarning,
    InputValidationError,
    InvalidParameterError,
    SurveysError,
    SurveysWarning,
    UndefinedStatisticWarning,
    UnknownInstrumentError,
)

__all__ = [
    "DataQualityWarning",
    "InputValidationError",
    "InvalidParameterError",
    "SurveysError",
    "SurveysWarning",
    "UndefinedStatisticWarning",
    "UnknownInstrumentError",
]
