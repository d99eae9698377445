"""Durations in words for estimates printed before long work (seconds, minutes or hours)."""

from __future__ import annotations


def duration_text(seconds: float) -> str:
    """Return ``"45 s"``, ``"12 min"`` or ``"2.5 h"``: the unit a reader plans with."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
