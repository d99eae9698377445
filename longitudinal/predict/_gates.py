"""When an estimate may be read in words: the honesty gates shared by every narrated result.

The report's reading of the empathy effects (:mod:`longitudinal.predict.reading`) and the
manuscript's results sentences (:mod:`longitudinal.manuscript.sentences`) decide with these
functions, so a direction is never claimed in one place and withheld in the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SMALL_SAMPLE = 20
"""Below this many participants every inferential paragraph carries a small-sample caveat."""

WIDEST = 400.0
"""An interval wider than this (in rating points) is not a usable estimate."""


def effect_status(ci_low: float, ci_high: float, df: float = float("nan")) -> str:
    """Say how an estimate with this interval may be read.

    Returns ``"unusable"`` when the interval is not finite or absurdly wide (more than
    :data:`WIDEST`) or the Satterthwaite df is below 1, ``"clear"`` when the interval excludes
    zero (a direction may be stated) and ``"includes zero"`` otherwise (no direction).

    Examples
    --------
    >>> from longitudinal.predict._gates import effect_status
    >>> effect_status(0.03, 0.38), effect_status(-0.2, 0.4), effect_status(-1e3, 1e3)
    ('clear', 'includes zero', 'unusable')
    """
    usable = (
        np.isfinite(ci_low)
        and np.isfinite(ci_high)
        and ci_high - ci_low < WIDEST
        and not (np.isfinite(df) and df < 1)
    )
    if not usable:
        return "unusable"
    return "clear" if (ci_low > 0 or ci_high < 0) else "includes zero"


def fit_problem(model: Any) -> str | None:
    """Why a fitted mixed model's estimates must not be read (unconverged, singular), or None."""
    if not model.converged_:
        return "its fit did not converge"
    if model.singular_:
        return "its fit is singular (a variance estimated at zero or a correlation at ±1)"
    return None


def sampling_problem(bayes: Any) -> str | None:
    """Why a Bayesian model's estimates must not be read (failed diagnostics), or None."""
    if bayes is None:
        return None
    diagnostics = getattr(bayes, "diagnostics_", None) or {}
    if diagnostics.get("passed", True):
        return None
    return "; ".join(diagnostics.get("messages", [])) or "its sampling diagnostics failed"


def small_sample_caveat(n_people: int | None, *, what: str = "this estimate is") -> str:
    """Return the caveat every inferential paragraph carries below :data:`SMALL_SAMPLE` people."""
    if n_people is None or n_people >= SMALL_SAMPLE:
        return ""
    return f" With {n_people} participants {what} imprecise and may not replicate."
