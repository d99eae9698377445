"""Cumulative link mixed models (``ordinal::clmm``) in lme4 syntax.

:class:`OrdinalMixedModel` (``model``) is the estimator; beside it are its estimation (optimiser,
start values, storage: ``_fit``), summaries and JSON (``_summary``) and the Laplace and adaptive
quadrature likelihood engine (``_laplace``).
"""

from models.ordinal.model import (
    DICT_KEYS,
    GRAD_TOL,
    SINGULAR_TOL,
    START_FLOOR,
    STEP_TOL,
    THRESHOLD_COLUMNS,
    OrdinalMixedModel,
    OrdinalModelSummary,
)

__all__ = [
    "DICT_KEYS",
    "GRAD_TOL",
    "SINGULAR_TOL",
    "START_FLOOR",
    "STEP_TOL",
    "THRESHOLD_COLUMNS",
    "OrdinalMixedModel",
    "OrdinalModelSummary",
]
