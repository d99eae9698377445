"""Size limits shared by the report and its command line (a light module: no pandas)."""

from __future__ import annotations

#: With ``lean``, the empathy models of "What predicts empathy" are fitted on a seeded random
#: subsample of at most this many participants (all their ratings), and the figures that draw
#: one mark per participant are left out; see :func:`longitudinal.report.build_report`.
LEAN_MODEL_PARTICIPANTS = 2_000
