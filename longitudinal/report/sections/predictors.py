"""The "What predicts empathy" section: the empathy models, under the predictor rule."""

from __future__ import annotations

from markupsafe import Markup

from _empathic_base.vocabulary import DEMO_SEED
from longitudinal._wording import count_noun
from longitudinal.predict.selection import PEOPLE_PER_PREDICTOR
from longitudinal.report.context import ReportContext
from longitudinal.report.html import render
from longitudinal.report.options import LEAN_MODEL_PARTICIPANTS
from longitudinal.report.sections.base import Section, SectionUnavailable


class PredictorsSection(Section):
    """Traits, states and session behaviour as predictors of the ratings (mixed models)."""

    anchor = "predictors"
    heading = "What predicts empathy"

    def _compute(self, ctx: ReportContext) -> None:
        from longitudinal._errors import LongitudinalError
        from longitudinal.predict.results import left_out_lines
        from longitudinal.predict.selection import plan_left_out, plan_predictors
        from longitudinal.report.pseudonyms import pseudonymize_left_out
        from longitudinal.report.sections.effects import empathy_effects_section
        from longitudinal.report.sections.effects_imputed import compute_imputed_effects
        from models import ModelsError

        story = ctx.frames["story"]
        n_people = int(story[ctx.config.id_col].nunique())
        if n_people < 3:
            raise SectionUnavailable(
                f"the empathy models need ratings from at least 3 participants; this study has "
                f"ratings from {n_people}. More participants would make the section possible."
            )
        if story[ctx.config.rating_col].nunique() < 2:
            raise SectionUnavailable(
                "every rating has the same value, so nothing can predict it; the models need "
                "ratings that vary."
            )
        try:
            plan = plan_predictors(ctx.loaded, ctx.options.predictors, n_participants=n_people)
        except LongitudinalError as err:
            raise SectionUnavailable(str(err)) from err
        if plan.empty:
            raise SectionUnavailable(
                f"with {n_people} participants the stated rule (one person-level predictor per "
                f"{PEOPLE_PER_PREDICTOR} participants) allows no predictor, and no session "
                "feature is among the candidates (its within-person part would need none); "
                f"at least {PEOPLE_PER_PREDICTOR} participants with ratings are needed."
            )
        ctx.results["predictor_rule"] = plan
        if plan.left_out:
            ctx.note(
                f"What predicts empathy: with {plan.fitted_text} the models take at most "
                f"{count_noun(plan.budget, 'person-level predictor')} (one per "
                f"{PEOPLE_PER_PREDICTOR} "
                f"participants, {plan.order_text}); left out: " + plan.left_out_text()
            )
        seed = ctx.options.seed if ctx.options.seed is not None else DEMO_SEED
        try:
            section = empathy_effects_section(
                ctx.loaded,
                ctx.out,
                bayes=ctx.options.bayes,
                seed=seed,
                ci_level=ctx.options.ci_level,
                **ctx.options.sampling,
                **plan.data_kwargs(),
                max_participants=LEAN_MODEL_PARTICIPANTS if ctx.options.lean else None,
                ordinal_bins=ctx.options.ordinal_bins,
            )
        except (ModelsError, LongitudinalError) as err:
            raise SectionUnavailable(
                f"the empathy models could not be fitted ({err}). With few participants, "
                "name fewer predictors in study.toml ([roles]) or collect more data."
            ) from err
        ctx.tables.update(section.tables)
        ctx.figures.update(section.figures)
        ctx.note(*(ctx.scrub(n) for n in section.notes))
        ctx.results["predictors"] = section
        compute_imputed_effects(ctx, complete=section.fitted, data_kwargs=plan.data_kwargs())
        used = section.fitted.predictors
        between = used[(used["kind"] == "state") & (used["part"] == "between")]
        within = set(used.loc[used["part"] == "within", "source"])
        ctx.results["predictors_no_within"] = no_within_line(
            [
                (c, lab)
                for c, lab in zip(between["source"], between["label"], strict=True)
                if c not in within
            ]  # fmt: skip
        )
        summary = plan_left_out(ctx.loaded, plan, func=self.heading)
        if ctx.options.pseudonymize:  # each participant's line under the pseudonym, by position
            summary, withheld = pseudonymize_left_out(summary, ctx.id_map)
            if withheld:
                ctx.note(f"What predicts empathy: {withheld} participant(s) left out not named")
        left_out = left_out_lines({"left_out": summary})
        ctx.results["predictors_left_out"] = left_out
        if left_out:
            ctx.note(f"What predicts empathy: {left_out[0]} The section names each participant.")

    def _body(self, ctx: ReportContext) -> Markup | None:
        from longitudinal.report.sections.effects_imputed import imputed_effects_sentence

        section = ctx.results.get("predictors")
        if section is None:
            return None
        plan = ctx.results["predictor_rule"]
        imputed = imputed_effects_sentence(ctx)
        return (
            render(
                "predictors.html.j2",
                plan=plan,
                per=PEOPLE_PER_PREDICTOR,
                left_out=ctx.results.get("predictors_left_out") or [],
                no_within=ctx.results.get("predictors_no_within") or "",
            )
            + Markup(section.html)
            + (Markup('<p class="note">{}</p>').format(imputed) if imputed else "")
        )


def no_within_line(states: list[tuple[str, str]]) -> str:
    """Say in one line which states have no within-person part, and why; "" when none.

    ``states`` holds ``(column, label)`` of each state that enters with its person mean only
    (:func:`longitudinal.predict.empathy_data` leaves its within part out).

    Examples
    --------
    >>> print(no_within_line([("rapport", "rapport")]))  # doctest: +NORMALIZE_WHITESPACE
    The state rapport enters with its person mean only: no participant's score on it changed
    between the surveys taken before their ratings (a survey taken after a rating never predicts
    it), so it has no within-person part.
    """
    if not states:
        return ""
    labels = [str(label) for _, label in states]
    one = len(labels) == 1
    names = labels[0] if one else ", ".join(labels[:-1]) + " and " + labels[-1]
    return (
        f"{'The state' if one else 'The states'} {names} {'enters' if one else 'enter'} with "
        f"{'its' if one else 'their'} person mean only: no participant's score on "
        f"{'it' if one else 'them'} changed between the surveys taken before their ratings (a "
        f"survey taken after a rating never predicts it), so {'it has' if one else 'they have'} "
        "no within-person part."
    )
