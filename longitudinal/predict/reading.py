"""How the effects are read in words: one sentence per predictor, gated on the fits."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal.narrate.gates import (
    BAYES_ENGINES,
    SMALL_SAMPLE,
    bayes_name,
    effect_status,
    small_sample_caveat,
)
from longitudinal.narrate.numbers import num, signed
from longitudinal.predict.effects import check_effects_table

_CLEAR = {  # how a clear effect is read, by kind and part of the predictor
    ("trait", "person"): "people with a higher {label} score gave {direction} empathy ratings",
    ("state", "between"): (
        "people whose {label} was higher on average across the surveys gave {direction} "
        "empathy ratings"
    ),
    ("state", "within"): (
        "when a person's {label} at the latest survey was above their own average, their "
        "empathy ratings were {direction}"
    ),
    ("session", "between"): (
        "people with more {label} on average across their sessions gave {direction} empathy ratings"
    ),
    ("session", "within"): (
        "in sessions with more {label} than the person's own average, empathy ratings were "
        "{direction}"
    ),
    ("time", "time"): "empathy ratings were {direction} as the weeks went by",
}

__all__ = ["SMALL_SAMPLE", "describe_effects"]


def describe_effects(
    effects: pd.DataFrame,
    *,
    ci_level: float = 0.95,
    n_participants: int | None = None,
    lmm_problem: str | None = None,
    bayes_problem: str | None = None,
) -> pd.DataFrame:
    """Read each effect in plain language, saying no more than the model supports.

    Parameters
    ----------
    effects : pandas.DataFrame
        :attr:`EmpathyEffects.effects`.
    ci_level : float, default 0.95
        The level the intervals were computed at (used in the wording).
    n_participants : int, optional
        Participants in the model; up to :data:`SMALL_SAMPLE` every paragraph says so.
    lmm_problem, bayes_problem : str, optional
        Why a model's estimates must not be read (a singular or unconverged fit, failed
        sampling diagnostics); that model's effects are then not narrated.

    Returns
    -------
    pandas.DataFrame
        One row per predictor: ``term``, ``label``, ``kind``, ``part``, ``direction``
        (``higher``, ``lower``, or missing when the interval includes zero or cannot be
        trusted), ``clear`` (the LMM interval excludes 0), ``agree`` (the Bayesian average
        marginal effect has the same sign as the LMM estimate; missing without a usable
        Bayesian fit) and ``text``.

    Raises
    ------
    longitudinal.InvalidParameterError
        When ``effects`` lacks the columns of :data:`EFFECT_COLUMNS` or LMM rows.

    Notes
    -----
    The gates: an interval that includes zero is never read as a direction; an estimate whose
    Satterthwaite df is below 1 or whose interval is not finite or absurdly wide (more than
    100 times the rating scale's usual range) is reported as unusable; a model named in
    ``lmm_problem`` or ``bayes_problem`` is not narrated at all.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.predict import EFFECT_COLUMNS, describe_effects
    >>> row = dict.fromkeys(EFFECT_COLUMNS, float("nan"))
    >>> row.update(engine="lmm", scale="rating", quantity="coefficient", term="week",
    ...            label="weeks since the first session", kind="time", part="time",
    ...            estimate=0.05, ci_low=-0.02, ci_high=0.12, df=80.0)
    >>> print(describe_effects(pd.DataFrame([row]))["text"].iloc[0])
    Weeks since the first session: +0.05 rating points per week, 95% CI −0.02 to 0.12. The
    interval includes zero, so these data do not show a direction.
    """
    func = "describe_effects"
    check_effects_table(effects, func=func)
    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    if lmm.empty:
        raise InvalidParameterError(f"the `effects` parameter of {func} has no LMM rows")
    bayes = effects[effects["engine"].isin(list(BAYES_ENGINES)) & (effects["scale"] == "rating")]
    bayes = bayes.set_index("term")
    bayes_model = bayes_name(effects)
    pct = f"{100 * ci_level:g}%"
    caveat = small_sample_caveat(n_participants)
    rows = []
    for rec in lmm.itertuples(index=False):
        unit = "week" if rec.kind == "time" else "SD"
        label = rec.label[:1].upper() + rec.label[1:]
        status = effect_status(rec.ci_low, rec.ci_high, rec.df)
        usable = status != "unusable"
        clear = status == "clear"
        direction: Any = pd.NA
        if lmm_problem:
            text = f"{label}: not interpreted, because {lmm_problem}."
        elif not usable:
            text = (
                f"{label}: the model cannot estimate this effect reliably (Satterthwaite df "
                f"{num(rec.df)}, {pct} CI {num(rec.ci_low)} to {num(rec.ci_high)}); it is "
                "not interpreted."
            )
        else:
            text = (
                f"{label}: {signed(rec.estimate)} rating points per {unit}, {pct} CI "
                f"{num(rec.ci_low)} to {num(rec.ci_high)}. "
            )
            if clear:
                direction = "higher" if rec.estimate >= 0 else "lower"
                reading = _CLEAR.get(
                    (rec.kind, rec.part), "higher {label} went with {direction} empathy ratings"
                ).format(label=rec.label, direction=direction)
                text += f"The interval excludes zero: in these data, {reading}."
            else:
                text += "The interval includes zero, so these data do not show a direction."
            text += caveat
        agree: Any = pd.NA
        if rec.term in bayes.index and not bayes_problem:
            b = bayes.loc[rec.term]
            agree = bool(np.sign(b["estimate"]) == np.sign(rec.estimate))
            text += (
                f" The {bayes_model} gives {signed(b['estimate'])} points "
                f"({pct} HDI {num(b['ci_low'])} to {num(b['ci_high'])}); posterior "
                f"probability of a positive effect {_share(b['prob_positive'])}."
            )
        rows.append(
            {
                "term": rec.term,
                "label": rec.label,
                "kind": rec.kind,
                "part": rec.part,
                "direction": direction,
                "clear": clear,
                "agree": agree,
                "text": text,
            }
        )
    return pd.DataFrame(rows)


def _share(p: float) -> str:
    if p >= 0.995:
        return "above 99%"
    if p <= 0.005:
        return "below 1%"
    return f"{100 * p:.0f}%"


def term_label(rec: Any) -> str:
    if rec.part in ("between", "within"):
        return f"{rec.label} [{rec.part}]"
    return str(rec.label)
