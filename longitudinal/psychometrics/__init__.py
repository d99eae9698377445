"""Psychometrics of a study: how well its scales and ratings measure.

``reliability`` multilevel reliability of the state scales over waves and ``invariance`` the
driver of the measurement-invariance ladder (the estimation lives in :mod:`models.reliability`
and :mod:`models.sem`); ``generalizability`` the G and D study of the empathy ratings;
``agreement`` agreement between raters from a CSV file (the coefficients in
:mod:`models.agreement`).

The names below are imported on first use.
"""

from _empathic_base.lazy import lazy_exports

_LAZY = {
    "agreement_from_file": "longitudinal.psychometrics.agreement",
    "ratings_g_study": "longitudinal.psychometrics.generalizability",
    "InvarianceTables": "longitudinal.psychometrics.invariance",
    "MultilevelTables": "longitudinal.psychometrics.reliability",
    "invariance_ladders": "longitudinal.psychometrics.invariance",
    "multilevel_tables": "longitudinal.psychometrics.reliability",
    "scale_multilevel_reliability": "longitudinal.psychometrics.reliability",
    "study_invariance": "longitudinal.psychometrics.invariance",
    "study_multilevel_reliability": "longitudinal.psychometrics.reliability",
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
