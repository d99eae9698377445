"""Questionnaire scoring for longitudinal studies.

The package turns raw survey exports into scale scores a researcher can trust: an instrument
library stored as checked data files (:func:`list_instruments`), readers for CSV, Excel,
Qualtrics and SPSS exports (:func:`read_responses`), validation that reports every problem at
once (:func:`validate_responses`), exact scoring from the declared response range
(:func:`score`) and reliability per scale and wave (:func:`scale_reliability`);
:func:`check_export` and :func:`score_export` chain them for one export.
"""

from surveys._errors import (
    FAILURE_COLUMNS,
    DataQualityWarning,
    EmpathicDeprecationWarning,
    EmpathicError,
    EmpathicWarning,
    InputValidationError,
    InvalidParameterError,
    SurveysError,
    SurveysWarning,
    UndefinedStatisticWarning,
    UnknownInstrumentError,
)
from surveys._version import __version__
from surveys.instruments import (
    Instrument,
    ScaleKey,
    derive_items,
    list_instruments,
    load_instrument,
)
from surveys.item_answers import keyed_item_answers
from surveys.pipeline import CheckedExport, ScoreExportResult, check_export, score_export
from surveys.readers import Responses, read_responses
from surveys.reliability import scale_reliability
from surveys.scoring import ScaleScores, reverse_score, score
from surveys.validation import FailureCollector, validate_responses

__all__ = [
    "FAILURE_COLUMNS",
    "__version__",
    "CheckedExport",
    "DataQualityWarning",
    "EmpathicDeprecationWarning",
    "EmpathicError",
    "EmpathicWarning",
    "ScoreExportResult",
    "FailureCollector",
    "InputValidationError",
    "Instrument",
    "InvalidParameterError",
    "Responses",
    "ScaleKey",
    "ScaleScores",
    "SurveysError",
    "SurveysWarning",
    "UndefinedStatisticWarning",
    "UnknownInstrumentError",
    "check_export",
    "derive_items",
    "keyed_item_answers",
    "list_instruments",
    "load_instrument",
    "read_responses",
    "reverse_score",
    "scale_reliability",
    "score",
    "score_export",
    "validate_responses",
]
