"""APA results sentences, with the honesty gates of the HTML report.

Each function takes the tables of one analysis (the same DataFrames the report writes to
``tables/``) and returns marked-up text (``*F*`` italic, ``_{G}`` subscript); every label,
wave and name from the study enters it through :func:`longitudinal.narrate.markup.literal`,
so it is read as itself by every writer (escaped for Markdown in ``results.md``). The gates are
the report's (:mod:`longitudinal.narrate.gates`): an interval that includes zero is given no
direction, a singular or unconverged model is reported as such and its estimates are not
interpreted, and below 20 participants every inferential paragraph carries the small-sample
caveat. No sentence turns a p value into a claim of change; directions come from intervals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._wording import count_noun
from longitudinal.narrate.gates import (
    BAYES_ENGINES,
    bayes_name,
    effect_status,
    is_failed,
    small_sample_caveat,
)
from longitudinal.narrate.markup import literal
from longitudinal.narrate.numbers import apa_ci, apa_df, apa_num, apa_unit, p_text

__all__ = [
    "anova_apa",
    "choose_correction",
    "effects_apa",
    "friedman_apa",
    "growth_apa",
    "pairwise_apa",
    "reliable_change_apa",
]

HUYNH_FELDT_ABOVE = 0.75
"""Greenhouse–Geisser ε above which the Huynh–Feldt correction is reported (Girden, 1992)."""

_CORRECTION_NAMES = {
    "none": "no correction",
    "greenhouse-geisser": "Greenhouse–Geisser",
    "huynh-feldt": "Huynh–Feldt",
}


def _p(value: Any) -> str:
    """Write a p value as a manuscript sentence does, in italics: ``*p* = .022``."""
    return p_text(value, name="*p*")


def _pct(level: float) -> str:
    return f"{100 * level:g}%"


def choose_correction(rm_anova: pd.DataFrame) -> pd.Series | None:
    """Return the row of the RM-ANOVA table a manuscript reports.

    With two waves sphericity holds trivially (ε = 1) and the uncorrected test is reported.
    Otherwise the Greenhouse–Geisser correction, or Huynh–Feldt when the Greenhouse–Geisser
    ε is above :data:`HUYNH_FELDT_ABOVE` (where Greenhouse–Geisser is too conservative).
    Returns None for an empty table.
    """
    if rm_anova.empty:
        return None
    rows = rm_anova.set_index("correction")
    if "greenhouse-geisser" not in rows.index:
        return rows.reset_index().iloc[0]
    gg = rows.loc["greenhouse-geisser"]
    if float(rows.loc["none", "df1"]) <= 1:
        pick = "none"
    elif gg["epsilon"] > HUYNH_FELDT_ABOVE and "huynh-feldt" in rows.index:
        pick = "huynh-feldt"
    else:
        pick = "greenhouse-geisser"
    return rows.reset_index().set_index("correction", drop=False).loc[pick]


def correction_name(row: pd.Series) -> str:
    """How the table note and the sentence name the correction of a chosen row."""
    return _CORRECTION_NAMES.get(str(row["correction"]), str(row["correction"]))


def anova_apa(
    rm_anova: pd.DataFrame,
    *,
    label: str,
    n_waves: int,
    n_excluded: int = 0,
    left_out: str | None = None,
) -> str:
    """One sentence on the repeated-measures ANOVA of a scale, e.g. *F*(1.92, 26.9) = 0.33.

    ``left_out`` says why the ``n_excluded`` participants have no score at some wave
    (:func:`longitudinal._wording.left_out_reasons`: "2 did not take the exit survey, 1 was
    not scored at exit (too few items answered)"); without it they are "left out for a
    missing wave".

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.narrate.sentences import anova_apa
    >>> table = pd.DataFrame({"correction": ["none", "greenhouse-geisser", "huynh-feldt"],
    ...     "epsilon": [1.0, 0.7, 0.74], "df1": [2.0, 1.4, 1.48], "df2": [28.0, 19.6, 20.72],
    ...     "statistic": [4.2] * 3, "p_value": [0.025, 0.042, 0.040],
    ...     "eta_sq_generalized": [0.031] * 3, "n": [15] * 3})
    >>> print(anova_apa(table, label="Well-being", n_waves=3, n_excluded=1))
    A repeated-measures ANOVA of well-being across the 3 waves gave *F*(1.40, 19.6) = 4.20,
    *p* = .042, η²_{G} = .031 (Greenhouse–Geisser correction, ε = .700; 15 complete cases, 1
    participant left out for a missing wave).
    """
    row = choose_correction(rm_anova)
    if row is None:
        return f"The repeated-measures ANOVA of {literal(_lower(label))} could not be computed."
    if row["correction"] == "none":
        how = "no sphericity correction: with two waves sphericity holds"
    else:
        how = f"{correction_name(row)} correction, ε = {apa_unit(row['epsilon'], 3)}"
    left = ""
    if n_excluded:
        left = f", {count_noun(n_excluded, 'participant')} left out" + (
            f": {literal(left_out)}" if left_out else " for a missing wave"
        )
    return (
        f"A repeated-measures ANOVA of {literal(_lower(label))} across the {n_waves} waves gave "
        f"*F*({apa_df(row['df1'])}, {apa_df(row['df2'])}) = {apa_num(row['statistic'])}, "
        f"{_p(row['p_value'])}, η²_{{G}} = {apa_unit(row['eta_sq_generalized'], 3)} "
        f"({how}; {int(row['n'])} complete cases{left})."
    )


def friedman_apa(friedman: pd.DataFrame) -> str:
    """One sentence on the Friedman test: χ²(df) = ..., *p*, Kendall's *W*, n."""
    if friedman.empty:
        return ""
    rec = friedman.iloc[0]
    return (
        f"The Friedman test on the same complete cases gave χ²({apa_df(rec['df'])}) = "
        f"{apa_num(rec['statistic'])}, {_p(rec['p_value'])}, Kendall's *W* = "
        f"{apa_unit(rec['kendall_w'], 3)} (*n* = {int(rec['n'])})."
    )


def _effect_size(effect_sizes: pd.DataFrame, term: str, measure: str) -> pd.Series | None:
    hit = effect_sizes[(effect_sizes["term"] == term) & (effect_sizes["measure"] == measure)]
    return None if hit.empty else hit.iloc[0]


def pairwise_apa(
    pairwise: pd.DataFrame,
    effect_sizes: pd.DataFrame,
    *,
    label: str,
    ci_level: float = 0.95,
    unit: str = "points",
) -> list[str]:
    """Write one sentence per pair of waves.

    The change with its interval, *t*, *p*, Holm *p*, *d*_z and *g*_av; a direction (rose,
    fell) only when the interval excludes zero.
    """
    pct = _pct(ci_level)
    alpha = 1 - ci_level
    out = []
    for rec in pairwise.itertuples(index=False):
        status = effect_status(rec.ci_low, rec.ci_high)
        size = apa_num(abs(rec.estimate)) if status == "clear" else apa_num(rec.estimate)
        verb = {"clear": "rose" if rec.estimate > 0 else "fell"}.get(status, "changed")
        text = (
            f"From {literal(rec.wave_from)} to {literal(rec.wave_to)}, {literal(_lower(label))} "
            f"{verb} by {size} {unit}, "
            f"{pct} CI {apa_ci(rec.ci_low, rec.ci_high)}, *t*({apa_df(rec.df)}) = "
            f"{apa_num(rec.statistic)}, {_p(rec.p_value)}, Holm-adjusted "
            f"{_p(rec.p_holm)}"
        )
        for measure, name in (("d_z", "*d*_{z}"), ("g_av", "*g*_{av}")):
            es = _effect_size(effect_sizes, rec.term, measure)
            if es is not None:
                text += (
                    f", {name} = {apa_num(es['estimate'])}, {pct} CI "
                    f"{apa_ci(es['ci_low'], es['ci_high'])}"
                )
        if status == "includes zero":
            text += "; the interval includes zero, so these data do not show a direction"
        elif status == "unusable":
            text += "; the interval is not usable, so the change is not interpreted"
        elif rec.p_holm >= alpha:
            text += (
                f"; after the Holm adjustment the change is not significant at {apa_unit(alpha)}"
            )
        out.append(text + ".")
    return out


def growth_apa(
    fixed: pd.DataFrame,
    random: pd.DataFrame,
    *,
    label: str,
    model: Mapping[str, Any],
    time_unit: str | None = "weeks",
    ci_level: float = 0.95,
) -> str:
    """Write the growth model's slope in one or two sentences, gated on the fit.

    ``model`` holds ``problems`` (the shown model's problems: singular, unconverged; text or
    list), ``fallback_reason`` (why the random slope was dropped), ``n_obs`` and
    ``n_subjects``. A model with a problem is reported as such and its slope is not read.
    """
    slope = fixed[fixed["term"] != "Intercept"]
    if slope.empty:
        return f"The growth model of {literal(_lower(label))} could not be fitted."
    rec = slope.iloc[0]
    per = _per(time_unit, model.get("time_coding"))
    problems = model.get("problems") or ""
    if not isinstance(problems, str):
        problems = "; ".join(problems)
    fallback = model.get("fallback_reason")
    random_text = (
        f"a random intercept only (the random slope was dropped: {fallback})"
        if isinstance(fallback, str) and fallback
        else "a random intercept and slope"
        if (random["term"] == "time").any()
        else "a random intercept"
    )
    text = (
        f"In a linear growth model with {random_text}, fitted to {_int(model.get('n_obs'))} "
        f"observations of {_int(model.get('n_subjects'))} participants, "
        f"{literal(_lower(label))} changed by *b* = "
        f"{apa_num(rec['estimate'], 3)} points per {per}, "
        f"{_pct(ci_level)} CI {apa_ci(rec['ci_low'], rec['ci_high'], 3)}, "
        f"*t*({apa_df(rec['df'])}) = {apa_num(rec['statistic'])}, {_p(rec['p_value'])}"
    )
    if problems:
        return text + f". The model is not interpreted: {problems}; its estimates rest on that fit."
    status = effect_status(rec["ci_low"], rec["ci_high"], rec["df"])
    if status == "clear":
        way = "rose" if rec["estimate"] > 0 else "fell"
        return text + f"; the interval excludes zero: the scale {way} over the study."
    if status == "unusable":
        return text + "; the model cannot estimate the slope reliably, so it is not interpreted."
    return text + "; the interval includes zero, so these data do not show a direction."


def reliable_change_apa(
    counts: pd.DataFrame, *, label: str, source: str | None, wave_from: str, wave_to: str
) -> str:
    """Write the counts of reliable improvement and deterioration (Jacobson–Truax)."""
    if counts.empty:
        return f"Reliable change in {literal(_lower(label))} was not computed" + (
            f": {literal(source)}." if source else "."
        )
    by = counts.set_index("category")
    total = int(by["n"].sum())

    def part(category: str) -> str:
        n = int(by.loc[category, "n"]) if category in by.index else 0
        share = float(by.loc[category, "proportion"]) if category in by.index else 0.0
        return f"{n} ({100 * share:.0f}%)"

    return (
        f"By the reliable change index (Jacobson–Truax; {literal(source)}), of the {total} "
        f"participants observed at {literal(wave_from)} and {literal(wave_to)}, "
        f"{part('improved')} improved reliably on "
        f"{literal(_lower(label))}, {part('deteriorated')} deteriorated reliably and "
        f"{part('unchanged')} showed no reliable change."
    )


def effects_apa(
    effects: pd.DataFrame,
    *,
    ci_level: float = 0.95,
    n_participants: int | None = None,
    n_obs: int | None = None,
    lmm_problem: str | None = None,
    clmm_problem: str | None = None,
    bayes_problem: str | None = None,
) -> list[str]:
    """Write what predicts the empathy ratings, one sentence per predictor, gated as the report.

    Linear mixed model: *b*, interval, *t*(Satterthwaite df), *p*; the cumulative link mixed
    model's logit with *z* and *p*; the Bayesian model's average marginal effect (the
    Bayesian linear mixed model's coefficient, for a continuous scale) with its
    highest-density interval. A model named in a ``*_problem`` is said to have failed its
    checks, with the reason, and none of its estimates is given; the reasons say what failed,
    never how to refit (that advice is the researcher's, in the report's notes).
    """
    pct = _pct(ci_level)
    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    clmm = effects[(effects["engine"] == "clmm") & (effects["scale"] == "logit")].set_index("term")

    bayes = effects[effects["engine"].isin(list(BAYES_ENGINES)) & (effects["scale"] == "rating")]
    bayes = bayes.set_index("term")
    bayes_model = bayes_name(effects)
    sizes = (
        f" ({_int(n_obs)} ratings of {_int(n_participants)} participants)"
        if n_obs is not None
        else ""
    )
    out = []
    if lmm_problem:
        out.append(
            f"The linear mixed model of the empathy ratings{sizes} failed its checks "
            f"({lmm_problem}), so none of its estimates is reported."
        )
    else:
        out.append(
            f"In the linear mixed model of the empathy ratings{sizes}, effects are per SD of "
            f"each predictor (time: per week), with {pct} CIs and Satterthwaite df."
        )
    if clmm_problem and not clmm.empty:
        out.append(
            f"The ordinal mixed model failed its checks ({clmm_problem}), so none of its "
            "estimates is reported."
        )
    if bayes_problem and not bayes.empty:
        out.append(
            f"The {bayes_model} failed its checks ({bayes_problem}), so none of its estimates "
            "is reported."
        )
    for rec in lmm.itertuples(index=False):
        name = literal(rec.label[:1].upper() + rec.label[1:])
        if getattr(rec, "part", "") in ("between", "within"):
            name += f" ({rec.part}-person part)"
        status = effect_status(rec.ci_low, rec.ci_high, rec.df)
        if lmm_problem:
            continue
        if status == "unusable":
            out.append(
                f"{name}: the model cannot estimate this effect reliably (Satterthwaite df "
                f"{apa_df(rec.df)}, {pct} CI {apa_ci(rec.ci_low, rec.ci_high)}); it is not "
                "interpreted."
            )
            continue
        t = rec.estimate / rec.se if rec.se > 0 else np.nan
        text = (
            f"{name}: *b* = {apa_num(rec.estimate)}, {pct} CI "
            f"{apa_ci(rec.ci_low, rec.ci_high)}, *t*({apa_df(rec.df)}) = {apa_num(t)}, "
            f"{_p(rec.p_value)}"
        )
        if status == "clear":
            way = "higher" if rec.estimate > 0 else "lower"
            text += f"; the interval excludes zero: higher values went with {way} ratings"
        else:
            text += "; the interval includes zero, so these data do not show a direction"
        if rec.term in clmm.index and not clmm_problem:
            c = clmm.loc[rec.term]
            z = c["estimate"] / c["se"] if c["se"] > 0 else np.nan
            text += (
                f". In the ordinal mixed model the logit was {apa_num(c['estimate'])}, {pct} CI "
                f"{apa_ci(c['ci_low'], c['ci_high'])}, *z* = {apa_num(z)}, "
                f"{_p(c['p_value'])}"
            )
        if rec.term in bayes.index and not bayes_problem:
            b = bayes.loc[rec.term]
            text += (
                f". The {bayes_model} gave {apa_num(b['estimate'])} points, {pct} HDI "
                f"{apa_ci(b['ci_low'], b['ci_high'])}"
            )
        out.append(text + ".")
    caveat = small_sample_caveat(n_participants, what="these estimates are").strip()
    if caveat:
        out.append(caveat)
    return out


def _per(time_unit: str | None, coding: Any) -> str:
    """Return the unit of the slope.

    ``week`` for weeks; without a unit, ``wave`` when the time is the wave's position (0, 1,
    2, ...), else ``unit of time``.
    """
    if time_unit:
        return time_unit[:-1] if time_unit.endswith("s") else time_unit
    if isinstance(coding, Mapping) and list(coding.values()) == list(range(len(coding))):
        return "wave"
    return "unit of time"


def _lower(label: str) -> str:
    """Lower-case the first letter of a label unless it is an acronym (WHO-5)."""
    if len(label) > 1 and label[1].isupper():
        return label
    return label[:1].lower() + label[1:]


def _int(value: Any) -> str:
    try:
        return str(int(value))
    except (TypeError, ValueError):
        return "–"


def _share(value: float) -> str:
    """Write a proportion as a percentage: one decimal below 10%, whole percents above."""
    pct = 100.0 * value
    return f"{pct:.1f}%" if abs(pct) < 9.95 else f"{pct:.0f}%"


_FACTORS = {"story_id": "story", "session_id": "session"}


def _factor(column: str) -> str:
    return _FACTORS.get(column, column)


def _and(items: list[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def describe_r2(table: pd.DataFrame) -> str:
    """Say in one sentence how much of the ratings the LMM explains, or why it is not read.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`longitudinal.predict.variance_explained.empathy_r2`.

    Returns
    -------
    str
        The sentence (percentages of variance; the measures named): Nakagawa's pair and the
        share of each grouping factor besides the participant, then the split within and
        between persons, naming the two-level model it comes from, its ratings and
        participants and the predictors split into their two parts, or why it is missing.
    """
    reported = table[table["model"] == "reported"]
    status = str(reported["status"].iloc[0])
    if is_failed(status):
        why = status.split(": ", 1)[1] if ": " in status else status
        return f"Variance explained by the linear mixed model: not interpreted, because {why}."
    people = reported["n_participants"].iloc[0] if "n_participants" in reported else None
    caveat = small_sample_caveat(
        None if people is None or pd.isna(people) else int(people), what="these shares are"
    )
    return _describe_r2(table, reported) + caveat


def _describe_r2(table: pd.DataFrame, reported: pd.DataFrame) -> str:
    """Write the sentence of :func:`describe_r2` for a model that passed its checks."""
    value = {(r.decomposition, r.measure): r.value for r in reported.itertuples()}
    factors = reported[reported["decomposition"] == "share"]
    shares = [f"the {_factor(str(r.measure))} intercept" for r in factors.itertuples()]
    held = [
        f"{name} holds {_share(r.value)}"
        for name, r in zip(shares, factors.itertuples(), strict=True)
    ]
    text = (
        "Variance explained by the linear mixed model: its fixed effects account for "
        f"{_share(value['nakagawa', 'marginal'])} of the variance of the ratings, fixed and "
        f"random effects together for {_share(value['nakagawa', 'conditional'])} (Nakagawa's "
        "marginal and conditional R²)" + (f"; {_and(held)} of the variance" if held else "")
    )
    if ("within", "f1") in value:
        return text + "; " + _within_between(value) + "."
    two_level = table[table["model"] == "two-level"]
    if two_level.empty:
        why = _note(reported)
        return text + f"; no within/between split (Rights & Sterba) is given because {why}."
    return text + ". " + _two_level_sentence(two_level, shares) + "."


def _note(rows: pd.DataFrame) -> str:
    return str(rows["note"].iloc[0])


def _within_between(value: Mapping[tuple[str, str], float]) -> str:
    slopes = value.get(("within", "v"), 0.0)
    return (
        f"the within-person predictors account for {_share(value['within', 'f1'])} of the "
        "variance within persons"
        + (f" (random slopes for {_share(slopes)} more)" if slopes > 0 else "")
        + f" and the between-person predictors for {_share(value['between', 'f2'])} of the "
        "variance between persons"
    )


def _two_level_sentence(rows: pd.DataFrame, left_out: list[str]) -> str:
    """Say the split of the two-level model, naming the model, its rows and the split."""
    first = rows.iloc[0]
    people, ratings = int(first["n_participants"]), int(first["n_ratings"])
    split = [s for s in str(first["split"]).split("; ") if s]
    parts = [
        f"the participant's random effects only ({_and(left_out)} left out)" if left_out else "",
        (
            f"{_and(split)} {'each ' if len(split) > 1 else ''}split into the deviation from "
            "the person's mean (within) and the person's mean (between)"
            if split
            else ""
        ),
    ]
    model = (
        "the two-level model of the same predictors on the same "
        f"{count_noun(ratings, 'rating')} of {count_noun(people, 'participant')}"
        + (", with " + " and with ".join(p for p in parts if p) if any(parts) else "")
    )
    status = str(first["status"])
    if is_failed(status):
        why = status.split(": ", 1)[1] if ": " in status else status
        return (
            f"Rights & Sterba's R² within and between persons, from {model}, is not "
            f"interpreted, because {why}"
        )
    value = {(r.decomposition, r.measure): r.value for r in rows.itertuples()}
    if ("within", "f1") not in value:
        return (
            f"No within/between split (Rights & Sterba) is given from {model}, because "
            f"{_note(rows)}"
        )
    return (
        f"Within and between persons, Rights & Sterba's R² comes from {model}: "
        + _within_between(value)
    )
