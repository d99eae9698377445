"""Structural equation models: longitudinal confirmatory factor analysis and invariance.

:func:`measurement_invariance` fits one scale's factor model at every wave (maximum
likelihood with a mean structure, ML or MLR, for continuous items; WLSMV for ordered items,
with a thresholds level after the configural one) through the configural, metric, scalar and
strict levels as lavaan and semTools do, with score tests and partial models for a rejected
step and the latent means and variances of the later waves; :func:`invariance_tables` gives the
CSV tables of ``longitudinal reliability --invariance`` and :func:`invariance_sample_note`
the one-line reason a sample is too small for the model.
"""

from models.sem.invariance import (
    INVARIANCE_CSV_COLUMNS,
    InvarianceResult,
    invariance_sample_note,
    invariance_tables,
    measurement_invariance,
)

__all__ = [
    "INVARIANCE_CSV_COLUMNS",
    "InvarianceResult",
    "invariance_sample_note",
    "invariance_tables",
    "measurement_invariance",
]
