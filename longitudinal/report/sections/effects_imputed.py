"""What predicts empathy on the complete cases beside the multiply imputed predictors.

When ratings are left out of the empathy models only because a trait or state score used as a
predictor is missing, the study's scores are imputed (:func:`longitudinal.impute_scores`,
seeded by the report's seed, as the change section's) with the ratings in the imputation model
(each participant's mean rating and number of ratings, and per wave when states are
predictors: :func:`longitudinal.study.score_imputation.rating_auxiliaries`); when they are left
out only because a session feature is missing, the session features are imputed, sessions
within participants, by the two-level method
(:func:`longitudinal.study.session_imputation.impute_sessions`, each session's mean rating in
the imputation model). The model frame is rebuilt from each completed table
(:func:`longitudinal.predict.imputed_effects.imputed_frames`), the linear mixed model's formula
refitted and its fixed effects pooled
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
    """Refit the empathy LMM over imputed predictors when a missing one left ratings out.

    A missing survey score is imputed with the scores (:func:`_imputed_scores`), a missing
    session feature with the session features, sessions within participants
    (:func:`longitudinal.study.session_imputation.impute_sessions`); each with the ratings in
    its imputation model. ``complete`` is the section's
    :class:`~longitudinal.predict.EmpathyEffects`, ``data_kwargs`` the predictors it was built
    with. Fills ``ctx.tables[TABLE]`` and ``ctx.results[RESULT]``, or leaves both alone; what
    prevents it goes to the notes.
    """
    from longitudinal.predict.imputed_effects import imputed_empathy_effects, imputed_frames
    from longitudinal.predict.predictors import empathy_data
    from longitudinal.report.options import LEAN_MODEL_PARTICIPANTS
    from longitudinal.study.session_imputation import impute_sessions

    observed = empathy_data(ctx.loaded, **data_kwargs)
    preds = observed.predictors
    dropped = preds["predictor"].isin(set(observed.meta["dropped_by_column"]))
    scored = preds.loc[preds["kind"].isin(["trait", "state"])]
    scores_missing = bool((dropped & preds["kind"].isin(["trait", "state"])).any())
    features_missing = bool((dropped & (preds["kind"] == "session")).any())
    if not (scores_missing or features_missing):
        return
    people = observed.data[observed.id_col].nunique()
    if ctx.options.lean and people > LEAN_MODEL_PARTICIPANTS:
        ctx.note("What predicts empathy: the model was not refitted over imputed scores (--lean)")
        return
    seed = ctx.options.seed if ctx.options.seed is not None else DEMO_SEED
    imputed = sessions = None
    why = ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if scores_missing:
            imputed, why = _imputed_scores(ctx, scored, seed=seed)
        if features_missing and not why:
            features = list(observed.meta["session_features"])
            try:
                sessions = impute_sessions(ctx.loaded, features=features, seed=seed)
            except InvalidParameterError as err:
                why = f"the session features were not imputed: {err}"
        if not why:
            frames = imputed_frames(ctx.loaded, imputed, sessions=sessions, m=MAX_M, **data_kwargs)
    if why:
        ctx.note(ctx.scrub(f"What predicts empathy: {why}"))
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
        "imputation": None if imputed is None else imputed.to_dict(),
        "sessions": None if sessions is None else sessions.to_dict(),
        "scales": [] if imputed is None else list(dict.fromkeys(imputed.columns["scale"])),
        "effects": result,
        "complete_problem": fit_problem(complete.lmm),
    }


def _imputed_scores(ctx: ReportContext, scored: Any, *, seed: int) -> tuple[Any, str]:
    """Impute the scores with the ratings; return them, or None and why not."""
    from longitudinal.study.score_imputation import impute_scores, rating_auxiliaries

    used = list(dict.fromkeys(scored["source"]))
    with_traits = list(dict.fromkeys([*used, *_trait_scales(ctx)]))
    # the ratings, the analysis's outcome, enter the imputation model (per wave for states)
    by_wave = bool((scored["kind"] == "state").any())
    ratings = rating_auxiliaries(ctx.loaded, by_wave=by_wave)
    attempts = [(None, ratings), (with_traits, ratings)]
    if by_wave:  # a small study cannot impute every scale, nor every wave's ratings, at once
        attempts.append((with_traits, rating_auxiliaries(ctx.loaded, by_wave=False)))
    why = ""
    for scales, auxiliary in attempts:
        try:
            return impute_scores(ctx.loaded, seed=seed, scales=scales, auxiliary=auxiliary), ""
        except InvalidParameterError as err:
            why = str(err)
    return None, f"the scores were not imputed: {why}"


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
    ratings = count_noun(meta["n_obs_mi"] - meta["n_obs_cc"], "rating")
    back = f"{count_noun(added, 'participant')} and {ratings}" if added else ratings
    text = (
        f"With the missing {_what(found)} multiply imputed (m = {meta['m']}), the linear mixed "
        f"model adds back {back} ("
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


def _what(found: dict) -> str:
    """Name what was imputed: the survey scores, the session features or both."""
    kinds = [
        w
        for w, key in (("survey scores", "imputation"), ("session features", "sessions"))
        if found.get(key)
    ]
    return " and ".join(kinds)


def _which(cc: str, mi: str) -> str:
    if cc == mi:
        return "both intervals exclude zero, on opposite sides"
    return f"only the {'complete-case' if cc == 'clear' else 'imputed'} interval excludes zero"


def imputed_effects_methods(ctx: ReportContext) -> str:
    """Say how the imputed empathy model was made: the pooling, then each imputation model."""
    found = ctx.results.get(RESULT)
    if not found:
        return ""
    info, sessions, meta = found["imputation"], found["sessions"], found["effects"].meta
    first = info or sessions
    rule = (
        f"m by von Hippel's rule, at most {MAX_M} (the first {MAX_M} when it asks for more)"
        if first["m_reason"] != "given"
        else "m as given"
    )
    what = " or ".join(w for w, x in (("survey score", info), ("session feature", sessions)) if x)
    tables = " and ".join(w for w, x in (("score tables", info), ("session tables", sessions)) if x)
    text = (
        f"Where ratings were left out of the empathy models only for a missing {what}, "
        f"the linear mixed model was also fitted to each of m = {meta['m']} completed "
        f"{tables} ({rule}; chained equations, seed {first['seed']}), its predictors built "
        "and standardized within each imputation by that imputation's means and SDs, and its "
        "fixed effects pooled by Rubin's rules with Barnard and Rubin's (1999) df, each "
        "term's complete-data df being its Satterthwaite df in the completed data (averaged "
        "over the imputations)."
    )
    if info:
        text += " " + _score_model(info.get("auxiliary", []))
    if sessions:
        text += (
            " The missing session features were imputed with the session features by a "
            "two-level normal model, sessions within participants (a random intercept per "
            "participant, the other features and their participant means as predictors, its "
            "parameters drawn from their posterior for each imputation)"
            + (
                ", with each session's mean rating in the imputation model"
                if sessions["auxiliary"]
                else ""
            )
            + ("; the scores and the features were imputed separately" if info else "")
            + "."
        )
    return text


def _score_model(auxiliary: list[str]) -> str:
    """Say what the score imputation model holds besides the scores."""
    if any("@" in a for a in auxiliary):
        held = (
            "each participant's mean rating and, for each wave, the mean and number of the "
            "ratings made after it (before the next wave)"
        )
    else:
        held = "each participant's mean rating and number of ratings"
    if auxiliary:
        return (
            f"The imputation model holds, besides the survey scores, {held}, so that it "
            "contains the analysis model's outcome and the imputed scores keep their relation "
            "to the ratings; the ratings only help impute (a state score still predicts only "
            "the ratings made after its wave)."
        )
    return (
        "The imputation model holds the survey scores only, not the ratings, which pulls "
        "the pooled effects of the imputed scores towards zero."
    )
