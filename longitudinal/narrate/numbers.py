"""How the package writes a number in text: one format for the report page and the manuscript.

The rules (APA 7, and the same on the page):

* a true minus sign (U+2212), fixed decimals; a number that prints as zero has no sign
  (``0.00``, never ``−0.00``: the sign of a value too small to show is not shown either);
* a missing value (None, NaN, text that is not a number) prints as an en dash ``–``; an
  infinite one as ``∞`` or ``−∞`` (it is a value, e.g. an unbounded interval);
* no leading zero where a value cannot exceed 1 in size (:func:`apa_unit`: η², α, an ICC);
* a p value with three decimals and no leading zero, bounded on both sides: ``< .001`` below
  .001 and ``> .999`` above .999, so a p value is never printed as 0 or 1 (``.000`` or
  ``1.000`` would claim a certainty the test does not give);
* intervals in brackets (:func:`apa_ci`), degrees of freedom as whole numbers when they are.

:func:`num` writes a table cell of any kind (a count as a whole number, a flag as yes/no, a
measurement by :func:`apa_num`). The report's tables and text (:mod:`longitudinal.report.html`,
:mod:`longitudinal.predict.reading`) and the manuscript's tables and sentences
(:mod:`longitudinal.manuscript.tables`, :mod:`longitudinal.narrate.sentences`) all write their
numbers with these functions, so the page and the manuscript never print one value two ways.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "DASH",
    "MINUS",
    "apa_ci",
    "apa_df",
    "apa_num",
    "apa_p",
    "apa_unit",
    "num",
    "p_text",
    "signed",
]

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


def _not_a_number(value: Any) -> bool:
    """Whether a value is missing rather than infinite (None, NaN, text that is no number)."""
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return True


def apa_num(value: Any, decimals: int = 2) -> str:
    """Format a number with ``decimals`` decimals and a true minus sign; a dash when missing.

    A value that rounds to zero prints without a sign (``0.00``, never ``−0.00``); an infinite
    one as ``∞`` or ``−∞``.

    Examples
    --------
    >>> from longitudinal.narrate.numbers import apa_num
    >>> apa_num(-0.2238), apa_num(12.0, 1), apa_num(-0.0004), apa_num(float("nan"))
    ('−0.22', '12.0', '0.00', '–')
    >>> apa_num(float("-inf"))
    '−∞'
    """
    if _missing(value):
        return DASH if _not_a_number(value) else ("∞" if float(value) > 0 else f"{MINUS}∞")
    text = f"{float(value):.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", MINUS)


def apa_unit(value: Any, decimals: int = 2) -> str:
    """Format a value that cannot exceed 1 in size without the leading zero.

    For η², W, α, an ICC or a correlation: ``.03``, ``−.25``.

    Examples
    --------
    >>> from longitudinal.narrate.numbers import apa_unit
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
    >>> from longitudinal.narrate.numbers import apa_p
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


def p_text(value: Any, *, name: str = "p") -> str:
    """Write a p value as it stands in a sentence: ``p = .022``, ``p < .001``, ``p > .999``.

    The sign is part of the text: a bounded p value reads ``p < .001``, never ``p = < .001``;
    a missing one reads ``p = –``. The manuscript names it in italics (``name="*p*"``).

    Examples
    --------
    >>> from longitudinal.narrate.numbers import p_text
    >>> p_text(0.0217), p_text(1e-6), p_text(0.99999), p_text(0.0081, name="*p*")
    ('p = .022', 'p < .001', 'p > .999', '*p* = .008')
    """
    shown = apa_p(value)
    return f"{name} {shown}" if shown[0] in "<>" else f"{name} = {shown}"


def apa_df(value: Any) -> str:
    """Degrees of freedom: whole numbers as integers, others with one decimal (two below 10).

    Infinite df (a z test) print as a dash: there is no df to report.

    Examples
    --------
    >>> from longitudinal.narrate.numbers import apa_df
    >>> apa_df(14.0), apa_df(26.911), apa_df(1.9222), apa_df(float("inf"))
    ('14', '26.9', '1.92', '–')
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
    >>> from longitudinal.narrate.numbers import apa_ci
    >>> apa_ci(-0.2238, 0.4357), apa_ci(0.72, 0.94, unit=True)
    ('[−0.22, 0.44]', '[.72, .94]')
    """
    fmt = apa_unit if unit else apa_num
    return f"[{fmt(low, decimals)}, {fmt(high, decimals)}]"


def num(value: Any, decimals: int = 2) -> str:
    """Write a table cell or a number in the report's text.

    A flag as ``yes``/``no``, a whole number (an int) as itself, a float by :func:`apa_num`,
    None as a dash, anything else as its text.

    Examples
    --------
    >>> from longitudinal.narrate.numbers import num
    >>> num(-0.2238), num(12), num(True), num(None), num(float("inf")), num("pre")
    ('−0.22', '12', 'yes', '–', '∞', 'pre')
    """
    if value is None:
        return DASH
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return apa_num(value, decimals)
    return str(value)


def signed(value: float, decimals: int = 2) -> str:
    """Write a number with its sign, ``+0.25``, ``−0.25``: ``+`` unless it prints negative.

    A missing value prints as a dash, without a sign.

    Examples
    --------
    >>> from longitudinal.narrate.numbers import signed
    >>> signed(0.25), signed(-0.25), signed(-0.0004)
    ('+0.25', '−0.25', '+0.00')
    """
    text = num(value, decimals)
    return text if text.startswith((MINUS, DASH)) else "+" + text
