"""Numbers as APA 7 prints them.

True minus signs, no leading zero where a value cannot exceed 1, ``p < .001``, intervals
in brackets.

Every number in the manuscript tables and sentences goes through these functions, so a table
and a sentence never print the same value two ways.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["MINUS", "apa_ci", "apa_df", "apa_num", "apa_p", "apa_p_text", "apa_unit"]

MINUS = "\u2212"
"""The minus sign (U+2212) that APA asks for in place of a hyphen."""

DASH = "\u2013"
"""What a missing value prints as (an en dash)."""


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return not math.isfinite(float(value))
    except (TypeError, ValueError):
        return True


def apa_num(value: Any, decimals: int = 2) -> str:
    """Format a number with ``decimals`` decimals and a true minus sign; a dash when missing.

    A value that rounds to zero prints without a sign (``0.00``, never ``−0.00``).

    Examples
    --------
    >>> from longitudinal.manuscript.numbers import apa_num
    >>> apa_num(-0.2238), apa_num(12.0, 1), apa_num(-0.0004), apa_num(float("nan"))
    ('−0.22', '12.0', '0.00', '–')
    """
    if _missing(value):
        return DASH
    text = f"{float(value):.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", MINUS)


def apa_unit(value: Any, decimals: int = 2) -> str:
    """Format a value that cannot exceed 1 in size without the leading zero.

    For η², W, α, an ICC or a correlation: ``.03``, ``−.25``.

    Examples
    --------
    >>> from longitudinal.manuscript.numbers import apa_unit
    >>> apa_unit(0.0286), apa_unit(-0.2536, 3), apa_unit(1.0)
    ('.03', '−.254', '1.00')
    """
    text = apa_num(value, decimals)
    if text.startswith(f"{MINUS}0."):
        return MINUS + text[2:]
    if text.startswith("0."):
        return text[1:]
    return text


def apa_p(value: Any) -> str:
    """Format a p value: three decimals without the leading zero.

    ``< .001`` below .001 and ``> .999`` above .999 (a p value is never printed as 0 or 1).

    Examples
    --------
    >>> from longitudinal.manuscript.numbers import apa_p
    >>> apa_p(0.0217), apa_p(0.00002), apa_p(0.99999), apa_p(0.0495)
    ('.022', '< .001', '> .999', '.050')
    """
    if _missing(value):
        return DASH
    value = float(value)
    if value < 0.001:
        return "< .001"
    if value > 0.999:
        return "> .999"
    return f"{value:.3f}".lstrip("0")


def apa_p_text(value: Any, *, name: str = "*p*") -> str:
    """Write a p value as it stands in a sentence: ``*p* = .022``, ``*p* < .001``.

    Examples
    --------
    >>> from longitudinal.manuscript.numbers import apa_p_text
    >>> apa_p_text(0.0217), apa_p_text(1e-6)
    ('*p* = .022', '*p* < .001')
    """
    shown = apa_p(value)
    return f"{name} {shown}" if shown[0] in "<>" else f"{name} = {shown}"


def apa_df(value: Any) -> str:
    """Degrees of freedom: whole numbers as integers, others with one decimal (two below 10).

    Examples
    --------
    >>> from longitudinal.manuscript.numbers import apa_df
    >>> apa_df(14.0), apa_df(26.911), apa_df(1.9222)
    ('14', '26.9', '1.92')
    """
    if _missing(value):
        return DASH
    value = float(value)
    if abs(value - round(value)) < 1e-9:
        return str(int(round(value)))
    return apa_num(value, 2 if abs(value) < 10 else 1)


def apa_ci(low: Any, high: Any, decimals: int = 2, *, unit: bool = False) -> str:
    """Write an interval in brackets: ``[−0.22, 0.44]`` (``unit=True``: without leading zeros).

    Examples
    --------
    >>> from longitudinal.manuscript.numbers import apa_ci
    >>> apa_ci(-0.2238, 0.4357), apa_ci(0.72, 0.94, unit=True)
    ('[−0.22, 0.44]', '[.72, .94]')
    """
    fmt = apa_unit if unit else apa_num
    return f"[{fmt(low, decimals)}, {fmt(high, decimals)}]"
