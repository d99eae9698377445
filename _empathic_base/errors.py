"""The one error tree and the one warning tree of the distribution.

::

    EmpathicError(Exception)
    ├── SurveysError          surveys' own: UnknownInstrumentError, InputValidationError
    ├── ModelsError           models' own: FormulaError, NotFittedError, ConvergenceError
    ├── LongitudinalError
    └── InvalidParameterError(SurveysError, ModelsError, LongitudinalError, ValueError, TypeError)

    EmpathicWarning(UserWarning)
    ├── SurveysWarning        surveys' own: UndefinedStatisticWarning
    ├── ModelsWarning         models' own: ConvergenceWarning, SingularFitWarning, SamplingWarning
    ├── LongitudinalWarning
    └── DataQualityWarning(SurveysWarning, ModelsWarning, LongitudinalWarning)

``InvalidParameterError`` and ``DataQualityWarning`` are one class each for the whole
distribution, raised and issued by every package. Each is also a subclass of every package's
base, so ``except ModelsError`` or ``filterwarnings(..., category=SurveysWarning)`` written
before the classes were shared still catch them. The package-specific classes derive from
their own package's base only. ``except EmpathicError`` and ``category=EmpathicWarning``
catch everything the distribution raises or issues on purpose.

Examples
--------
>>> import warnings
>>> from _empathic_base.errors import DataQualityWarning, EmpathicWarning, ModelsWarning
>>> issubclass(DataQualityWarning, ModelsWarning) and issubclass(ModelsWarning, EmpathicWarning)
True
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     warnings.filterwarnings("ignore", category=DataQualityWarning)
...     warnings.warn("few respondents", DataQualityWarning, stacklevel=1)
>>> caught
[]
"""

from __future__ import annotations


class EmpathicError(Exception):
    """Base class of every error raised on purpose by surveys, models and longitudinal."""


class SurveysError(EmpathicError):
    """Base class of every error raised by :mod:`surveys`."""


class ModelsError(EmpathicError):
    """Base class of every error raised by :mod:`models`."""


class LongitudinalError(EmpathicError):
    """Base class of every error raised by :mod:`longitudinal`."""


class InvalidParameterError(SurveysError, ModelsError, LongitudinalError, ValueError, TypeError):
    """A function argument has the wrong type or an invalid value.

    One class for the three packages; it is a :class:`SurveysError`, a :class:`ModelsError`
    and a :class:`LongitudinalError`, and also a ``ValueError`` and a ``TypeError`` for callers
    who do not know the package.
    """


class EmpathicWarning(UserWarning):
    """Base class of every warning issued by surveys, models and longitudinal."""


class SurveysWarning(EmpathicWarning):
    """Base class of the warnings issued by :mod:`surveys`."""


class ModelsWarning(EmpathicWarning):
    """Base class of the warnings issued by :mod:`models`."""


class LongitudinalWarning(EmpathicWarning):
    """Base class of the warnings issued by :mod:`longitudinal`."""


class DataQualityWarning(SurveysWarning, ModelsWarning, LongitudinalWarning):
    """A result is defined but rests on weak data (few items, few respondents, a sparse wave).

    One class for the three packages: filtering it once silences it everywhere.
    """
