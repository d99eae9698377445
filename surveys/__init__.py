"""Questionnaire scoring for longitudinal studies.

The package turns raw survey exports into scale scores a researcher can trust: an instrument
library stored as checked data files (:func:`list_instruments`), readers for CSV, Excel,
Qualtrics and SPSS exports (:func:`read_responses`), validation that reports every problem at
once (:func:`validate_responses`), exact scoring from the declared response range
(:func:`score`) and reliability per scale and wave (:func:`scale_reliability`);
:func:`check_export` and :func:`score_export` chain them for one export.

Importing the package runs only its error tree and version; every other public name is
imported on first use (``_LAZY`` below), so ``import surveys`` loads neither SciPy nor pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from _empathic_base.lazy import lazy_exports
from surveys._errors import (
    FAILURE_COLUMNS,
    DataQualityWarning,
    EmpathicError,
    EmpathicWarning,
    InputValidationError,
    InvalidParameterError,
    SurveysError,
    SurveysWarning,
    UndefinedStatisticWarning,
    UnknownInstrumentError,
)
from surveys._version import (
    __version__,
)

if TYPE_CHECKING:  # what __getattr__ imports on first use
    from surveys.instruments import (
        Instrument,
        ScaleKey,
        derive_items,
        list_instruments,
        load_instrument,
    )
    from surveys.item_answers import keyed_item_answers
    from surveys.pipeline import (
        CheckedExport,
        ScoreExportResult,
        check_export,
        score_export,
    )
    from surveys.readers import (
        Responses,
        read_responses,
    )
    from surveys.reliability import (
        scale_reliability,
    )
    from surveys.scoring import (
        ScaleScores,
        reverse_score,
        score,
    )
    from surveys.validation import (
        FailureCollector,
        validate_responses,
    )

#: Public name -> the module that defines it, imported on first use
#: (``_empathic_base/lazy.py``); a new public name is one line here and one in __all__.
_LAZY = {
    "Instrument": "surveys.instruments",
    "ScaleKey": "surveys.instruments",
    "derive_items": "surveys.instruments",
    "list_instruments": "surveys.instruments",
    "load_instrument": "surveys.instruments",
    "keyed_item_answers": "surveys.item_answers",
    "CheckedExport": "surveys.pipeline",
    "ScoreExportResult": "surveys.pipeline",
    "check_export": "surveys.pipeline",
    "score_export": "surveys.pipeline",
    "Responses": "surveys.readers",
    "read_responses": "surveys.readers",
    "scale_reliability": "surveys.reliability",
    "ScaleScores": "surveys.scoring",
    "reverse_score": "surveys.scoring",
    "score": "surveys.scoring",
    "FailureCollector": "surveys.validation",
    "validate_responses": "surveys.validation",
}

__all__ = [
    "FAILURE_COLUMNS",
    "__version__",
    "CheckedExport",
    "DataQualityWarning",
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

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
