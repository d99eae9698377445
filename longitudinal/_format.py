"""How the package writes numbers in text: one format for reports, notes and summaries."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["num", "p_text", "p_value", "signed"]


def num(value: Any, digits: int = 2) -> str:
    """Format a number: fixed decimals, a true minus sign, a dash for NaN."""
    if value is None or (isinstance(value, float | np.floating) and not np.isfinite(value)):
        return "–" if value is None or np.isnan(value) else ("∞" if value > 0 else "−∞")
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.{digits}f}".replace("-", "−")
    return str(value)


def signed(value: float, digits: int = 2) -> str:
    """Format a number with its sign: ``+0.25``, ``−0.25``."""
    return ("+" if value >= 0 else "") + num(value, digits)


def p_value(value: Any) -> str:
    """Format a p value in APA style: three decimals without the leading zero, ``< .001``."""
    if value is None or not np.isfinite(value):
        return "–"
    if value < 0.001:
        return "< .001"
    return f"{value:.3f}".lstrip("0")


def p_text(value: Any) -> str:
    """Write a p value as it stands in a sentence (APA): ``p = .008``, ``p < .001``.

    The sign is part of the text: a p value below .001 reads ``p < .001``, never
    ``p = < .001``; a missing one reads ``p = –``.

    Examples
    --------
    >>> from longitudinal._format import p_text
    >>> p_text(0.0081), p_text(0.00002)
    ('p = .008', 'p < .001')
    """
    shown = p_value(value)
    return f"p {shown}" if shown.startswith("<") else f"p = {shown}"
