"""Column vocabulary shared by every table :mod:`surveys` returns."""

from __future__ import annotations

from collections.abc import Iterable

ID = "id"
PARTICIPANT = "participant_id"
"""The participant column's default name; an export without it may name it ``id``."""
WAVE = "wave"
INSTRUMENT = "instrument"
SCALE = "scale"
SCORE = "score"
N_ITEMS = "n_items"
N_ANSWERED = "n_answered"
ITEM = "item"
N = "n"
ESTIMATE = "estimate"
CI_LOW = "ci_low"
CI_HIGH = "ci_high"


def participant_column(columns: Iterable[str], id_col: str | None) -> str:
    """Return the participant column of a table: ``id_col`` when given, else the default rule.

    The default is ``participant_id`` (the name every study-level function uses); an export
    that has no such column but has one named ``id`` (what many survey tools and hand-made
    sheets call it) is read under that name. Otherwise ``participant_id`` is returned, for the
    caller's missing-column check to name.

    >>> participant_column(["id", "x_1"], None), participant_column(["pid"], "pid")
    ('id', 'pid')
    """
    if id_col is not None:
        return id_col
    names = set(columns)
    if PARTICIPANT not in names and ID in names:
        return ID
    return PARTICIPANT
