"""The methods paragraph, generated from what the other sections did."""

from __future__ import annotations

import numpy as np
import pandas as pd
from markupsafe import Markup

from longitudinal._wording import count_noun
from longitudinal.report.context import (
    EXCLUSIONS_FILE,
    ReportContext,
    join_words,
    reported_scales,
)
from longitudinal.report.html import num, render
from longitudinal.report.sections.base import Section
from longitudinal.report.sections.change_imputed import imputation_methods
from longitudinal.report.sections.effects_imputed import imputed_effects_methods
from longitudinal.study.frames import scale_column
from models.generalizability import GOOD_ENOUGH


class MethodsSection(Section):
    """Scoring, reliability, time coding, exclusions and the change models, in prose."""

    anchor = "methods"
    heading = "Methods"

    def _body(self, ctx: ReportContext) -> Markup:
        return render("methods.html.j2", text=methods_text(ctx))


def methods_text(ctx: ReportContext) -> str:
    """Write the methods paragraph from what the sections computed."""
    study = ctx.study
    waves = list(ctx.config.waves)
    excl = study.exclusions
    n_drop = int((excl["scope"] == "study").sum())
    n_nr = int((excl["scope"] == "story_frame").sum())
    sentences = [_scoring_sentence(ctx) + _alpha_sentence(ctx)]
    for extra in (_multilevel_sentence(ctx), _invariance_sentence(ctx), _g_sentence(ctx)):
        if extra:
            sentences.append(extra)
    traits = list(study.trait_instruments)
    sentences.append(
        (
            f"Traits ({join_words(traits)}) were taken from the {waves[0]} survey; each "
            if traits
            else "Each "
        )
        + "session was paired with the state scores of the participant's nearest "
        "preceding survey (completed on or before the session's start). Time was coded from "
        "the session start as days and weeks since the participant's first session and as the "
        "session index."
    )
    counts = ctx.tables["exclusion_counts"]
    dropped = counts.loc[counts["scope"] == "study"]
    if dropped.empty:
        text = "No row of the input files was excluded"
    else:
        text = (
            f"{n_drop} row{'s' if n_drop != 1 else ''} of the input files "
            f"{'were' if n_drop != 1 else 'was'} excluded: "
            + "; ".join(f"{r.n} in {r.file} ({r.reason})" for r in dropped.itertuples())
        )
    if n_nr:
        text += (
            f"; {n_nr} session{'s' if n_nr != 1 else ''} without ratings "
            f"{'were' if n_nr != 1 else 'was'} kept for session-level summaries only"
        )
    sentences.append(text + f". Every excluded row is listed in {EXCLUSIONS_FILE}.")
    models = ctx.tables.get("change_models", pd.DataFrame())
    if ctx.states and not models.empty:
        sentences.append(_change_sentence(ctx, models))
        imputed = imputation_methods(ctx)
        if imputed:
            sentences.append(imputed)
    plan = ctx.results.get("predictor_rule")
    if plan is not None:
        sentences.append(plan.sentence())
        imputed_effects = imputed_effects_methods(ctx)
        if imputed_effects:
            sentences.append(imputed_effects)
    return " ".join(sentences)


def _complete_cases(ctx: ReportContext, models: pd.DataFrame) -> str:
    """Complete cases of each state scale, in the scales' order, with who was left out.

    One n when every scale has the same complete cases and reasons; otherwise one clause
    per scale, so that each n stands next to its own scale.
    """
    clauses = []
    for rec in models.itertuples(index=False):
        n = "–" if pd.isna(rec.rm_n_complete) else str(int(rec.rm_n_complete))
        left = 0 if pd.isna(rec.rm_n_excluded) else int(rec.rm_n_excluded)
        reasons = getattr(rec, "rm_left_out", "")
        reasons = reasons if isinstance(reasons, str) else ""
        who = (
            f"{count_noun(left, 'participant')} left out" + (f": {reasons}" if reasons else "")
            if left
            else "no participant left out"
        )
        clauses.append((n, ctx.labels.get(rec.scale, rec.scale), who))
    if len({(n, who) for n, _, who in clauses}) == 1:
        n, _, who = clauses[0]
        return f"n = {n}, with {who}"
    return "; ".join(f"n = {n} for {name}, with {who}" for n, name, who in clauses)


def _change_sentence(ctx: ReportContext, models: pd.DataFrame) -> str:
    waves = list(ctx.config.waves)
    fallback = models["random_effects"].eq("intercept").sum() if ctx.options.random_slope else 0
    time_text = ", ".join(f"{w} = {ctx.growth_time[w]:.2f}" for w in waves)
    criterion = (
        float(models["rci_criterion"].dropna().iloc[0])
        if models["rci_criterion"].notna().any()
        else float("nan")
    )
    return (
        f"Change in each state scale ({join_words([ctx.labels[c] for c, _, _ in ctx.states])}) "
        f"across {join_words(waves)} was tested with a one-way repeated-measures ANOVA on "
        f"complete cases ({_complete_cases(ctx, models)}), "
        "with Mauchly's test of sphericity and Greenhouse-Geisser and Huynh-Feldt "
        "corrections; with paired t tests between every pair of waves (Holm-adjusted "
        "p values) and the standardized mean changes d_z (noncentral-t interval) and g_av "
        "(delta-method interval); with the Friedman test as a rank-based check; and with a "
        "linear growth model fitted by REML to all observations (random intercept"
        + (" and slope" if ctx.options.random_slope else "")
        + f" per participant; time in {ctx.growth_time_unit} since {waves[0]}: {time_text})"
        + (
            f", reduced to a random intercept for {count_noun(int(fallback), 'scale')} whose "
            "slope variance was not estimable"
            if fallback
            else ""
        )
        + f". Reliable change from {waves[0]} to {waves[-1]} used the Jacobson-Truax index "
        "RCI = (x_post − x_pre) / (SD_pre √2 √(1 − r)), reliable when |RCI| > "
        f"{num(criterion, 2)}, with r = {_rci_sources(ctx, models)}"
        + f". Intervals are {ctx.options.ci_level:.0%} confidence intervals."
    )


def _scoring_sentence(ctx: ReportContext) -> str:
    """How the scales were scored: the rule of each, reverse keys, the items each needed."""
    study = ctx.study
    groups: dict[str, list[str]] = {}
    reversed_any = False
    for name, instrument in study.instruments.items():
        for key in instrument.scales:
            if key.name not in reported_scales(instrument):
                continue
            rule = {
                "mean": "the mean of the answered items",
                "sum": "the sum of the items",
                "count": "the number of items endorsed",
            }.get(key.scoring, key.scoring)
            if key.multiplier != 1:
                rule += f" multiplied by {key.multiplier:g}"
            groups.setdefault(rule, [])
            if name not in groups[rule]:
                groups[rule].append(name)
            reversed_any = reversed_any or bool(key.reverse)
    parts = [f"{rule} ({join_words(names)})" for rule, names in groups.items()]
    cfg = study.config
    text = "Scale scores were computed from the raw survey exports as " + join_words(parts)
    if reversed_any:
        text += (
            ", after reverse-keying negatively keyed items from the declared response range "
            "as (min + max) − x"
        )
    return text + ". " + _missing_items_sentence(study, cfg.min_valid, cfg.prorate)


def _missing_items_sentence(study, min_valid: float, prorate: bool) -> str:
    """How many answered items each kind of scale needed, as :func:`surveys.score` applies it.

    Mean scales need ``ceil(min_valid x items)`` answers (``[scoring] min_valid``, rounded up)
    and average them. Sum and count scales need every item, unless ``[scoring] prorate`` is
    true: then they need the same share as mean scales, and a partial sum is scaled up to all
    items (the mean of the answered items x the number of items). The study never imputes.
    """
    from surveys.scoring import required_answers

    share = f"{min_valid:.0%}"
    needs: dict[str, dict[str, list[str]]] = {}  # scoring -> instrument -> "k of n"
    for name, instrument in study.instruments.items():
        for key in instrument.scales:
            if key.name not in reported_scales(instrument):
                continue
            counts = needs.setdefault(key.scoring, {}).setdefault(name, [])
            need = f"{required_answers(min_valid, key.n_items)} of {key.n_items}"
            if need not in counts:
                counts.append(need)

    def shares(kind: str) -> str:
        found = needs[kind]
        detail = "; ".join(f"{name}: {join_words(counts)}" for name, counts in found.items())
        return (
            f"{kind} scales ({join_words(list(found))}) required at least {share} of their "
            f"items to be answered, rounded up ({detail} items)"
        )

    parts = []
    if "mean" in needs:
        parts.append(shares("mean"))
    for kind in ("sum", "count"):
        if kind not in needs:
            continue
        if prorate:
            parts.append(
                shares(kind) + ", the sum of the answered items scaled up to all items "
                "(their mean times the number of items)"
            )
        else:
            parts.append(
                f"{kind} scales ({join_words(list(needs[kind]))}) required every item to be "
                "answered (no prorating)"
            )
    text = "; ".join(parts)
    text = text[:1].upper() + text[1:]
    return (text + "; no" if text else "No") + " answers were imputed."


def _alpha_sentence(ctx: ReportContext) -> str:
    rel = ctx.tables.get("reliability")
    first = ctx.config.waves[0]
    if rel is None or rel.empty:
        return ""
    sub = rel.loc[(rel["wave"] == first) & rel["alpha"].notna()]
    if sub.empty:
        return ""
    parts = []
    for rec in sub.itertuples(index=False):
        label = ctx.labels.get(scale_column(rec.instrument, rec.scale), rec.scale)
        parts.append(f"{num(rec.alpha, 2).lstrip('0')} ({label})")
    undefined = rel.loc[(rel["wave"] == first) & rel["alpha"].isna(), "instrument"].unique()
    text = f" Cronbach's α at {first} = " + join_words(parts) + "."
    if len(undefined):
        text += f" α is undefined for {join_words(list(undefined))} (single item)."
    shown = []
    for r in rel.itertuples(index=False):
        name = ctx.labels.get(scale_column(r.instrument, r.scale), r.scale)
        values = [
            f"{symbol} = {num(value, 2).lstrip('0')}"
            for symbol, value in (("α", r.alpha), ("ω", r.omega_total))
            if np.isfinite(value) and 0 <= value < GOOD_ENOUGH
        ]
        if values:
            shown.append(f"{name} at {r.wave} ({', '.join(values)})")
    if shown:
        text += (
            f" Internal consistency was below .70 for {join_words(shown)}: these scores carry "
            "more measurement error than is usually accepted, and their tests and changes are "
            "read with that in mind."
        )
    negative = sub.loc[sub["alpha"] < 0]
    if not negative.empty:
        names = [
            ctx.labels.get(scale_column(r.instrument, r.scale), r.scale)
            for r in negative.itertuples(index=False)
        ]
        text += (
            f" A negative α ({join_words(names)}) means the items correlate negatively on "
            "average: check the reverse keys and the item coding before interpreting these "
            "scores."
        )
    return text


def _multilevel_sentence(ctx: ReportContext) -> str:
    """Name the multilevel reliability coefficients below .70, when that table was computed."""
    from longitudinal.report.sections.reliability import MULTILEVEL_TABLE

    table = ctx.tables.get(MULTILEVEL_TABLE)
    if table is None or table.empty or "flag" not in table.columns:
        return ""
    text = (
        "The reliability of the state scales across waves was estimated from person x wave x "
        "item variance components (Shrout & Lane 2012)."
    )
    low = [
        f"{ctx.labels.get(scale_column(r.instrument, r.scale), r.scale)} ({r.flag})"
        for r in table.itertuples(index=False)
        if r.flag
    ]
    if low:
        text += f" Coefficients below .70: {join_words(low)}."
    return text


def _invariance_sentence(ctx: ReportContext) -> str:
    """Say how the invariance ladders were estimated, when one was fitted."""
    rule = ctx.results.get("invariance_rule")
    if not rule:
        return ""
    return (
        "Longitudinal measurement invariance of the state scales (configural to strict, "
        "identified as semTools' measEq.syntax with std.lv; ordinal items with thresholds "
        f"first, as Wu & Estabrook 2016) was estimated with {rule}."
    )


def _g_sentence(ctx: ReportContext) -> str:
    """Describe the G study of the ratings in a sentence or two, or say why there is none."""
    result = ctx.results.get("g_study")
    if result is None:
        line = ctx.results.get("g_study_line")
        return line or ""
    row = result.observed.iloc[0]
    text = (
        "The generalizability of a participant's mean empathy rating was estimated from REML "
        "variance components (participant, session within participant, "
        + ("story, " if result.design == "crossed" else "")
        + f"residual): G = {num(row['g'], 2).lstrip('0')} for the observed "
        f"{num(row['n_sessions'], 1)} sessions of {num(row['n_stories'], 1)} stories "
        "(harmonic means), with new stories in each session"
    )
    if row["g"] < GOOD_ENOUGH:
        text += ", below .70: a participant's mean rating is a noisy measure"
    text += "."
    if not result.precise:
        text += " " + ctx.results.get("g_study_line", "")
    return text


def _rci_sources(ctx: ReportContext, models: pd.DataFrame) -> str:
    """Which reliability each scale's reliable change index used, as a phrase."""
    first = ctx.config.waves[0]
    instrument_of = {col: instrument for col, instrument, _ in ctx.states}
    alpha, retest, missing = [], [], []
    for rec in models.itertuples(index=False):
        label = ctx.labels.get(rec.scale, rec.scale)
        value = rec.rci_reliability
        if value is None or not np.isfinite(value):
            missing.append(label)
        elif any(
            k in ctx.options.retest for k in (rec.scale, instrument_of.get(rec.scale, rec.scale))
        ):
            low = ", below .70" if value < GOOD_ENOUGH else ""
            retest.append(f"{num(value, 2).lstrip('0')} for {label}{low}")
        else:
            alpha.append(num(value, 2).lstrip("0") + (", below .70" if value < GOOD_ENOUGH else ""))
    parts = []
    if alpha:
        parts.append(
            f"Cronbach's α at {first} of each scale ({', '.join(alpha)}; internal consistency, "
            "which gives narrower bands than test-retest reliability would)"
        )
    if retest:
        parts.append("the test-retest reliability given (" + "; ".join(retest) + ")")
    text = " and ".join(parts) or "no reliability available"
    if missing:
        text += f"; not computed for {join_words(missing)} (no reliability available)"
    return text
