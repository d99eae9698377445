"""Vocabulary shared by the three packages: one error tree, one warning tree, two checks.

Private: import the public names from :mod:`surveys`, :mod:`models` or :mod:`longitudinal`,
which re-export them (``surveys.InvalidParameterError is models.InvalidParameterError``).
This package imports none of the three, so the leaf packages ``surveys`` and ``models`` can
both build on it without importing each other (``docs/architecture.md``, "Errors and
warnings").

Importing this package imports only the standard library: ``longitudinal`` imports it at
package import, which must stay light (Ctrl-C during the command line's first imports ends
with one line). The checks, which need NumPy, are in :mod:`_empathic_base.checks`; the
glossary as data (parameter names and defaults, result columns) in
:mod:`_empathic_base.vocabulary`.
"""

from _empathic_base.errors import (
    DataQualityWarning,
    EmpathicError,
    EmpathicWarning,
    InvalidParameterError,
    LongitudinalError,
    LongitudinalWarning,
    ModelsError,
    ModelsWarning,
    SurveysError,
    SurveysWarning,
)

__all__ = [
    "DataQualityWarning",
    "EmpathicError",
    "EmpathicWarning",
    "InvalidParameterError",
    "LongitudinalError",
    "LongitudinalWarning",
    "ModelsError",
    "ModelsWarning",
    "SurveysError",
    "SurveysWarning",
]
