"""The vocabulary of the public API, as data: one name per concept, and its default.

``tests/test_glossary.py`` walks every public module of ``surveys``, ``models`` and
``longitudinal`` (every module whose name and package names do not start with ``_``) and
checks each public function and method against :data:`PARAMETERS` and :data:`EARLIER_NAMES`,
and the result tables against :data:`RESULT_COLUMNS` and :data:`EARLIER_COLUMNS`.
``docs/architecture.md`` ("Glossary") explains the choices in words.

A name that a report or a command writes into a file (a CSV column, a JSON key) stays as it
is written; :data:`WRITTEN_NAMES` lists those that differ from the Python name of the same
concept.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "DEMO_SEED",
    "EARLIER_COLUMNS",
    "EARLIER_NAMES",
    "PARAMETERS",
    "PARTICIPANT_COLUMN",
    "REQUIRED",
    "RESULT_COLUMNS",
    "WRITTEN_NAMES",
]

PARTICIPANT_COLUMN = "participant_id"
"""The participant column's name wherever a function has a default for it."""

DEMO_SEED = 2024
"""The seed of the demo (``longitudinal demo``, ``longitudinal simulate`` and
:func:`longitudinal.report.run_demo`), and of the report's random steps when no seed is
given: the same seed gives the same files."""

REQUIRED = object()
"""Marks a parameter given without a default in :data:`PARAMETERS`."""

PARAMETERS: dict[str, tuple[Any, ...]] = {
    "id_col": (REQUIRED, None, PARTICIPANT_COLUMN),
    "seed": (REQUIRED, None),
    "ci_level": (REQUIRED, 0.95),
    "n_participants": (),
    "bayes": (),
    "decimals": (),
}
"""The one name of each concept, with the defaults it may have (any, when empty):

* ``id_col``: the participant column (None: ``participant_id``, or an export's ``id``);
* ``seed``: randomness, an int; None draws a fresh seed (only the demo has a fixed one,
  :data:`DEMO_SEED`);
* ``ci_level``: the level of every interval;
* ``n_participants``: a count of participants;
* ``bayes``: whether the Bayesian model is fitted;
* ``decimals``: decimals of a displayed number.
"""

EARLIER_NAMES: dict[str, str] = {
    "participant_col": "id_col",
    "person_col": "id_col",
    "subject_col": "id_col",
    "n_subjects": "n_participants",
    "n_persons": "n_participants",
    "n_people": "n_participants",
    "include_bayes": "bayes",
    "digits": "decimals",
    "random_state": "seed",
    "rng_seed": "seed",
    "confidence": "ci_level",
}
"""Names that no public parameter or attribute may use, with the name to use instead."""

RESULT_COLUMNS = (
    "term",
    "estimate",
    "se",
    "df",
    "statistic",
    "p_value",
    "ci_low",
    "ci_high",
    "n",
)
"""The columns of a result table (``surveys/_columns.py`` and ``models/_columns.py``)."""

EARLIER_COLUMNS: dict[str, str] = {
    "p_val": "p_value",
    "pval": "p_value",
    "p_unc": "p_value",
    "std_err": "se",
    "stderr": "se",
    "ci_lower": "ci_low",
    "ci_upper": "ci_high",
    "lower": "ci_low",
    "upper": "ci_high",
    "coef": "estimate",
    "n_people": "n_participants",
}
"""Result columns that no public table may use, with the name to use instead."""

WRITTEN_NAMES: dict[str, str] = {
    "n_persons": "the multilevel reliability tables (reliability.csv, the report's tables)",
    "n_subjects": "the change results' meta (the report's change tables)",
}
"""Names of a participant count that files written by a report or a command carry; kept so
that those files do not change, and allowed in result columns and ``meta`` only."""
