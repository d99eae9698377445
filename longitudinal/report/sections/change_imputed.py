"""The change section's dropouts: complete cases beside multiple imputation, and the tipping point.

When a participant lacks the first or the last wave's score of a state scale, the study's wide
score table is imputed (:func:`longitudinal.impute_scores`, seeded by the report's seed) and,
per such scale, the first-to-last change on the complete cases is shown beside the one pooled
over the imputations (:func:`longitudinal.change.imputed_change`), with the tipping point of
the dropouts' imputed last scores (:func:`longitudinal.change.tipping_point`):
``tables/change_imputed.csv``, ``tables/tipping_point.csv`` and one sentence per scale. A
missing middle wave changes neither analysis, and without a missing first or last score
nothing is imputed and the section says nothing new.

The imputations run on the study as loaded (``ctx.loaded``): their draws follow the rows'
order, so the numbers do not depend on the pseudonym key; nothing per person is written.
"""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from _empathic_base.vocabulary import DEMO_SEED
from longitudinal._errors import InvalidParameterError
from longitudinal._wording import count_noun
from longitudinal.narrate.gates import effect_status, small_sample_caveat
from longitudinal.narrate.numbers import apa_ci, apa_df, apa_num, apa_unit, p_text
from longitudinal.report.context import ReportContext

IMPUTED_TABLE = "change_imputed"
"""``tables/change_imputed.csv``: per scale, the complete-case row and the pooled row."""
TIPPING_TABLE = "tipping_point"
"""``tables/tipping_point.csv``: per scale, the pooled change at each delta."""
RESULT = "change_imputed"
"""Key of ``ctx.results``: the imputation's record and each scale's two results."""


def compute_imputed_change(ctx: ReportContext) -> None:
    """Impute, pool and shift for every analysed state scale missing a first or last score.

    Fills ``ctx.tables`` (:data:`IMPUTED_TABLE`, :data:`TIPPING_TABLE`) and
    ``ctx.results[RESULT]`` (``imputation``: how the scores were imputed; ``scales``: column ->
    ``(ImputedChange, TippingPoint or None)``), or leaves both alone when nothing is missing;
    what prevents an imputation goes to the notes.
    """
    from longitudinal.change.imputed import imputed_change, tipping_point
    from longitudinal.study.score_imputation import impute_scores, score_table

    waves = [str(w) for w in ctx.config.waves]
    if len(waves) < 2 or not ctx.states:
        return
    wide, _ = score_table(ctx.loaded)
    targets = []
    for column, _, _ in ctx.states:
        pair = (f"{column}@{waves[0]}", f"{column}@{waves[-1]}")
        if all(c in wide.columns for c in pair) and wide[list(pair)].isna().any().any():
            targets.append((column, *pair))
    if not targets:
        return
    seed = ctx.options.seed if ctx.options.seed is not None else DEMO_SEED
    imputed, why = None, []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for traits in (True, False):  # a small study cannot take the traits as predictors
            try:
                imputed = impute_scores(ctx.loaded, traits=traits, seed=seed)
                break
            except InvalidParameterError as err:
                why.append(str(err))
    for w in caught:
        ctx.note(ctx.scrub(f"multiple imputation of the scores: {w.message}"))
    if imputed is None:
        ctx.note(ctx.scrub(f"the change was not multiply imputed: {why[-1]}"))
        return
    rows, shifts, scales = [], [], {}
    level = ctx.options.ci_level
    for column, first, last in targets:
        if first not in imputed.wide.columns or last not in imputed.wide.columns:
            ctx.note(
                f"{ctx.labels[column]}: the change was not multiply imputed (fewer than five "
                f"scores at {waves[0]} or {waves[-1]})"
            )
            continue
        args = {"observed": imputed.wide, "first": first, "last": last, "ci_level": level}
        try:
            change = imputed_change(imputed.datasets, **args)
            tipping = tipping_point(imputed.datasets, **args) if change.n_dropouts else None
        except InvalidParameterError as err:  # a scale without spread at the first wave
            ctx.note(f"{ctx.labels[column]}: the change was not multiply imputed: {err}")
            continue
        scales[column] = (change, tipping)
        head = {"scale": column, "wave_from": waves[0], "wave_to": waves[-1]}
        rows.append(change.table.assign(**head)[[*head, *change.table.columns]])
        if tipping is not None:
            shifts.append(tipping.table.assign(scale=column)[["scale", *tipping.table.columns]])
    if not scales:
        return
    ctx.tables[IMPUTED_TABLE] = pd.concat(rows, ignore_index=True)
    if shifts:
        ctx.tables[TIPPING_TABLE] = pd.concat(shifts, ignore_index=True)
    ctx.results[RESULT] = {
        "imputation": {**imputed.to_dict(), "traits": (imputed.columns["role"] == "trait").any()},
        "scales": scales,
    }


def imputed_view(ctx: ReportContext) -> dict[str, Any] | None:
    """Return what the change section shows of the imputations: table, note, sentences."""
    found = ctx.results.get(RESULT)
    if not found:
        return None
    table = ctx.tables[IMPUTED_TABLE].assign(
        scale=lambda t: t["scale"].map(lambda c: ctx.labels.get(c, c))
    )
    table["m"] = table["m"].astype(object).where(table["m"].notna(), None)
    sentences = []
    for column, (change, tipping) in found["scales"].items():
        text = change_sentence(change, label=ctx.labels[column])
        text += " " + tipping_sentence(tipping, change=change)
        sentences.append(text)
    return {
        "table": table,
        "methods": imputation_note(ctx),
        "sentences": sentences,
        "files": [f"tables/{n}.csv" for n in (IMPUTED_TABLE, TIPPING_TABLE) if n in ctx.tables],
    }


def imputation_note(ctx: ReportContext) -> str:
    """Say in one line how the pooled rows were made (the methods paragraph says it all)."""
    info = ctx.results[RESULT]["imputation"]
    rule = "von Hippel's rule" if info["m_reason"] != "given" else "given"
    return (
        f"Pooled over m = {info['m']} imputations ({rule}; chained equations with predictive "
        f"mean matching, seed {info['seed']}): in each, the paired mean change over every "
        "participant listed; Rubin's rules with Barnard and Rubin's df for a complete-data "
        "df of n − 1; fmi: fraction of missing information."
    )


def imputation_methods(ctx: ReportContext) -> str:
    """Say how the scores were imputed and pooled, and how the tipping point was found."""
    found = ctx.results.get(RESULT)
    if not found:
        return ""
    info = found["imputation"]
    waves = [str(w) for w in ctx.config.waves]
    m = info["m"]
    how_many = (
        f"m = {m} times, m by von Hippel's (2020) two-stage rule (the largest fraction of "
        f"missing information of a column mean in the pilot imputations, "
        f"{apa_unit(info['fmi_pilot'], 3)}, asks for {m} for a 5% coefficient of variation "
        "of the standard errors; at least the pilot's 20)"
        if info["m_reason"] != "given"
        else f"m = {m} times"
    )
    n_all = next(iter(found["scales"].values()))[0].table["n"].iloc[1]
    deltas = next((s.table["delta"] for _, s in found["scales"].values() if s is not None), None)
    shift = (
        ""
        if deltas is None
        else (
            f" For the tipping point the imputed {waves[-1]} scores of the participants "
            f"without one were shifted by δ SD of the observed {waves[0]} scores, δ from 0 "
            f"to {apa_num(deltas.iloc[-1], 1)} in steps of {apa_num(deltas.iloc[1], 1)}, in "
            "the direction that removes the pooled change, and the change re-pooled at each "
            "δ; the tipping point is the smallest δ at which its interval includes zero when it "
            "did not at δ = 0, or excludes it when it did."
        )
    )
    predictors = "the state scales at every wave" + (
        " and the trait scales of the first wave" if info["traits"] else ""
    )
    return (
        f"Where participants lacked the {waves[0]} or {waves[-1]} score of a state scale, "
        f"the change from {waves[0]} to {waves[-1]} was also estimated with every participant "
        f"listed ({n_all}): the survey scores ({predictors}) were imputed by chained "
        f"equations with Bayesian linear regression (Rubin 1987; {info['burn_in']} cycles "
        f"per chain; statsmodels' MICEData; seed {info['seed']}), "
        f"{how_many}. In each imputation the analysis is the paired mean "
        f"change from {waves[0]} to {waves[-1]}, pooled by Rubin's rules with Barnard and "
        "Rubin's (1999) degrees of freedom for a complete-data df of n − 1 (the paired t "
        "test's; the growth model's slope is not pooled, its Satterthwaite df being no "
        "complete-data df); fmi is the fraction of missing information." + shift
    )


def change_sentence(change: Any, *, label: str) -> str:
    """Write the complete-case and the pooled first-to-last change of one scale, gated.

    A direction is read only from an interval that excludes zero (:func:`effect_status`);
    the two analyses are said to agree or not; up to
    :data:`~longitudinal.narrate.gates.SMALL_SAMPLE` participants the sentence says the
    estimates are imprecise.
    """
    cc, mi = change.table.iloc[0], change.table.iloc[1]
    pct = f"{100 * change.ci_level:g}%"

    def numbers(rec: pd.Series) -> str:
        return (
            f"{pct} CI {apa_ci(rec['ci_low'], rec['ci_high'])}, t({apa_df(rec['df'])}) = "
            f"{apa_num(rec['statistic'])}, {p_text(rec['p_value'])}"
        )

    wave_from, wave_to = change.first.rsplit("@", 1)[-1], change.last.rsplit("@", 1)[-1]
    text = (
        f"From {wave_from} to {wave_to}, {label} changed by {apa_num(cc['estimate'])} points "
        f"in the {count_noun(int(cc['n']), 'complete case')} ({numbers(cc)}) and by "
        f"{apa_num(mi['estimate'])} points with the missing scores multiply imputed (n = "
        f"{int(mi['n'])}, m = {int(mi['m'])}; {numbers(mi)}; fmi = {apa_unit(mi['fmi'])})."
    )
    status = [effect_status(r["ci_low"], r["ci_high"], r["df"]) for r in (cc, mi)]
    if "unusable" in status:
        text += " An interval is not usable, so the change is not interpreted."
    elif status == ["clear", "clear"] and (cc["estimate"] > 0) == (mi["estimate"] > 0):
        way = "rose" if mi["estimate"] > 0 else "fell"
        text += f" Both intervals exclude zero: the scale {way} either way."
    elif status == ["includes zero", "includes zero"]:
        text += " Both intervals include zero, so neither shows a direction."
    elif status == ["clear", "clear"]:
        text += (
            " Both intervals exclude zero, on opposite sides: the direction depends on how the "
            "missing scores are treated."
        )
    else:
        clear = "complete-case" if status[0] == "clear" else "imputed"
        text += (
            f" The two disagree: only the {clear} interval excludes zero, so the direction "
            "depends on how the missing scores are treated."
        )
    return text + small_sample_caveat(int(mi["n"]), what="these estimates are")


def tipping_point_sentence(tipping: Any) -> str:
    """Say at which shift of the dropouts' imputed last scores the conclusion changes."""
    wave_from, wave_to = tipping.first.rsplit("@", 1)[-1], tipping.last.rsplit("@", 1)[-1]
    table = tipping.table
    way = "down" if tipping.direction < 0 else "up"
    head = (
        f"Tipping point: with the imputed {wave_to} scores of the "
        f"{count_noun(tipping.n_dropouts, 'participant')} without one shifted {way} by δ SD "
        f"of the {wave_from} scores (SD = {apa_num(tipping.sd)} points)"
    )
    before = "excludes" if table["excludes_zero"].iloc[0] else "includes"
    after = "includes" if before == "excludes" else "excludes"
    if not tipping.changes:
        return (
            f"{head}, the pooled interval {before} zero at every δ up to "
            f"{apa_num(table['delta'].iloc[-1], 1)} (a shift of "
            f"{apa_num(abs(table['shift'].iloc[-1]))} points): the conclusion does not change "
            "within that range (tables/tipping_point.csv)."
        )
    row = table.loc[table["delta"] == tipping.tipping_delta].iloc[0]
    return (
        f"{head}, the pooled interval, which {before} zero at δ = 0, first {after} it at "
        f"δ = {apa_num(tipping.tipping_delta, 1)} (a shift of {apa_num(abs(row['shift']))} "
        f"points; pooled change {apa_num(row['estimate'])}, {100 * tipping.ci_level:g}% CI "
        f"{apa_ci(row['ci_low'], row['ci_high'])}; tables/tipping_point.csv)."
    )


def tipping_sentence(tipping: Any, *, change: Any) -> str:
    """Return the tipping-point sentence, or say why there is none (no dropout to shift)."""
    if tipping is not None:
        return tipping_point_sentence(tipping)
    wave_to = change.last.rsplit("@", 1)[-1]
    return (
        f"Every participant has the {wave_to} score (the missing scores are at the first "
        "wave), so there is no dropout whose imputed scores could be shifted: no tipping point."
    )
