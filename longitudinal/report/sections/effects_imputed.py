"""What predicts empathy on the complete cases beside the multiply imputed scores.

When ratings are left out of the empathy models only because a trait or state score used as a
predictor is missing, the study's scores are imputed (:func:`longitudinal.impute_scores`,
seeded by the report's seed, as the change section's), the model frame is rebuilt from each
completed table (:func:`longitudinal.predict.imputed_effects.imputed_frames`), the linear
mixed model's formula refitted and its fixed effects pooled
(:func:`longitudinal.predict.imputed_effects.imputed_empathy_effects`):
``tables/empathy_effects_imputed.csv`` and one sentence. Without such a rating nothing runs.
"""

from __future__ import annotations

import warnings
from typing import Any

from _empathic_base.vocabulary import DEMO_SEED
from longitudinal._errors import InvalidParameterError
from longitudinal._wording import count_noun
from longitudinal.narrate.gates import effect_status, fit_problem, small_sample_caveat
from longitudinal.narrate.numbers import apa_unit
from longitudinal.report.context import ReportContext

TABLE = "empathy_effects_imputed"
"""``tables/empathy_effects_imputed.csv``: per predictor, complete cases beside pooled."""
RESULT = "empathy_effects_imputed"
"""Key of ``ctx.results``: the imputation's record and the :class:`ImputedEffects`."""
MAX_M = 30
"""At most this many imputations are refitted (the first ones when von Hippel's rule asks
for more), to keep the report fast: each is a full mixed-model fit."""


def compute_imputed_effects(ctx: ReportContext, *, complete: Any, data_kwargs: dict) -> None:
    """Refit the empathy LMM over imputed scores when a missing score left ratings out.

    ``complete`` is the section's :class:`~longitudinal.predict.EmpathyEffects`,
    ``data_kwargs`` the predictors it was built with. Fills ``ctx.tables[TABLE]`` and
    ``ctx.results[RESULT]``, or leaves both alone; what prevents it goes to the notes.
    """
    from longitudinal.predict.imputed_effects import imputed_empathy_effects, imputed_frames
    from longitudinal.predict.predictors import empathy_data
    from longitudinal.report.options import LEAN_MODEL_PARTICIPANTS
    from longitudinal.study.score_imputation import impute_scores

    observed = empathy_data(ctx.loaded, **data_kwargs)
    scored = observed.predictors.loc[observed.predictors["kind"].isin(["trait", "state"])]
    if not set(observed.meta["dropped_by_column"]) & set(scored["predictor"]):
        return
    people = observed.data[observed.id_col].nunique()
    if ctx.options.lean and people > LEAN_MODEL_PARTICIPANTS:
        ctx.note("What predicts empathy: the model was not refitted over imputed scores (--lean)")
        return
    seed = ctx.options.seed if ctx.options.seed is not None else DEMO_SEED
    used = list(dict.fromkeys(scored["source"]))
    with_traits = list(dict.fromkeys([*used, *_trait_scales(ctx)]))
    imputed, why = None, ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for scales in (None, with_traits):  # a small study cannot impute every scale at once
            try:
                imputed = impute_scores(ctx.loaded, seed=seed, scales=scales)
                break
            except InvalidParameterError as err:
                why = str(err)
        if imputed is not None:
            frames = imputed_frames(ctx.loaded, imputed, m=MAX_M, **data_kwargs)
    if imputed is None:
        ctx.note(ctx.scrub(f"What predicts empathy: the scores were not imputed: {why}"))
        return
    for w in caught:
        ctx.note(ctx.scrub(f"multiple imputation of the scores: {w.message}"))
    if len(frames[0].data) <= int(complete.meta["n_obs"]):
        return  # the missing scores are not those of rated sessions: nobody comes back
    result = imputed_empathy_effects(frames, complete=complete, ci_level=ctx.options.ci_level)
    table = result.table.copy()
    table["label"] = table["term"].map(complete.predictors.set_index("predictor")["label"])
    ctx.tables[TABLE] = table
    ctx.results[RESULT] = {
        "imputation": imputed.to_dict(),
        "scales": list(dict.fromkeys(imputed.columns["scale"])),
        "effects": result,
        "complete_problem": fit_problem(complete.lmm),
    }


def _trait_scales(ctx: ReportContext) -> list[str]:
    from longitudinal.study.score_imputation import score_table

    _, columns = score_table(ctx.loaded)
    return columns.loc[columns["role"] == "trait", "scale"].tolist()


def imputed_effects_sentence(ctx: ReportContext) -> str:
    """Say how many the imputed model adds back and whether any conclusion differs, gated.

    A conclusion is whether the interval excludes zero (and on which side); a fit that failed
    its checks or an interval that is not usable (:func:`effect_status`) is not read.
    """
    found = ctx.results.get(RESULT)
    if not found:
        return ""
    result = found["effects"]
    meta = result.meta
    table = ctx.tables[TABLE]
    added = meta["n_participants_mi"] - meta["n_participants_cc"]
    text = (
        f"With the missing survey scores multiply imputed (m = {meta['m']}), the linear mixed "
        f"model adds back {count_noun(added, 'participant')} and "
        f"{count_noun(meta['n_obs_mi'] - meta['n_obs_cc'], 'rating')} ("
        f"{meta['n_participants_cc']} → {meta['n_participants_mi']} participants; "
        f"tables/{TABLE}.csv, with the fraction of missing information of each effect, at most "
        f"{apa_unit(float(table['fmi'].max()))})."
    )
    caveat = small_sample_caveat(meta["n_participants_mi"], what="these estimates are")
    if found["complete_problem"]:
        return text + " The complete-case model failed its checks, so the two are not compared."
    if meta["problems"]:
        n_bad = int(table["failed_fits"].iloc[0])
        return text + (
            f" {n_bad} of the {meta['m']} imputed fits failed their checks "
            f"({'; '.join(meta['problems'])}), so the pooled effects are not interpreted."
        )
    differ, unusable = [], []
    for rec in table.itertuples():
        cc = effect_status(rec.ci_low_cc, rec.ci_high_cc, rec.df_cc)
        mi = effect_status(rec.ci_low_mi, rec.ci_high_mi, rec.df_mi)
        if "unusable" in (cc, mi):
            unusable.append(rec.label)
        elif cc != mi or (cc == "clear" and (rec.estimate_cc > 0) != (rec.estimate_mi > 0)):
            differ.append(f"{rec.label} ({_which(cc, mi)})")
    if unusable:
        text += f" Not compared, an interval not being usable: {', '.join(unusable)}."
    if differ:
        text += (
            " The conclusion differs between the two for "
            + "; ".join(differ)
            + ": it depends on how the missing scores are treated."
        )
    else:
        text += (
            " No predictor's conclusion differs: each "
            + ("other " if unusable else "")
            + "interval excludes zero, on the same side, in both analyses or in neither."
        )
    return text + caveat


def _which(cc: str, mi: str) -> str:
    if cc == mi:
        return "both intervals exclude zero, on opposite sides"
    return f"only the {'complete-case' if cc == 'clear' else 'imputed'} interval excludes zero"


def imputed_effects_methods(ctx: ReportContext) -> str:
    """Say in one sentence how the imputed empathy model was made."""
    found = ctx.results.get(RESULT)
    if not found:
        return ""
    info, meta = found["imputation"], found["effects"].meta
    rule = (
        f"m by von Hippel's rule, at most {MAX_M} (the first {MAX_M} when it asks for more)"
        if info["m_reason"] != "given"
        else "m as given"
    )
    return (
        "Where ratings were left out of the empathy models only for a missing survey score, "
        f"the linear mixed model was also fitted to each of m = {meta['m']} completed score "
        f"tables ({rule}; chained equations, seed {info['seed']}), its predictors built and "
        "standardized within each imputation by that imputation's means and SDs, and its "
        "fixed effects pooled by Rubin's rules with Barnard and Rubin's (1999) df, each "
        "term's complete-data df being its Satterthwaite df in the completed data (averaged "
        "over the imputations). The imputation model holds the survey scores only, not the "
        "ratings, which pulls the pooled effects of the imputed scores towards zero."
    )
