"""The "Empathy ratings" section: distribution, by position, per participant, over the study.

The smooth course of the mean rating (a thin plate smooth of the week in a mixed model, with
the test of whether it is curved) comes from :mod:`longitudinal.report.sections._smooth_course`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from longitudinal.report.context import ReportContext, join_words, study_span
from longitudinal.report.html import figure, render
from longitudinal.report.options import LEAN_MODEL_PARTICIPANTS
from longitudinal.report.sections._smooth_course import MAX_K, MIN_TIMES, smooth_course
from longitudinal.report.sections.base import Section, SectionUnavailable
from longitudinal.report.sections.change import _saver
from longitudinal.study.rating_scale import DISTRIBUTION_BINS, binned_counts, scale_rule

MIN_WEEK_PARTICIPANTS = 5
"""Study weeks rated by fewer participants get no interval in the empathy course."""


class RatingsSection(Section):
    """Distribution of the ratings, by position, per participant, and over the study.

    The distribution (``ratings_distribution`` table and figure) counts every point of an
    ordinal scale; a continuous scale (more than 11 points, :mod:`longitudinal.study.rating_scale`)
    is counted in :data:`~longitudinal.study.rating_scale.DISTRIBUTION_BINS` bins of equal width
    over the declared scale (10 points wide on 0-100), the last one closed at the top, and
    the section says so.

    The course over the study (``empathy_course`` table and figure) has a t interval per
    study week across participants, clipped to the declared rating scale; weeks rated by
    fewer than :data:`MIN_WEEK_PARTICIPANTS` participants keep their mean (flagged
    ``too_few``, an open circle in the figure) without an interval. The caption says both.

    The smooth course (``empathy_smooth`` and ``empathy_smooth_curve`` tables, the
    ``empathy_smooth`` figure and one sentence) is ``rating ~ s(week) + (1 | participant)
    (+ (1 | story))`` beside the straight line, with the test of whether the course is curved;
    its rules (basis size, when it is not fitted or not read) are
    :mod:`longitudinal.report.sections._smooth_course`'s.
    """

    anchor = "ratings"
    heading = "Empathy ratings"

    def _compute(self, ctx: ReportContext) -> None:
        from longitudinal import plotting

        cfg = ctx.config
        story = ctx.frames["story"]
        if story.empty:
            raise SectionUnavailable(
                "no rating was kept (every rating row is listed with its reason in exclusions.csv)."
            )
        spec = cfg.ratings
        values = story[cfg.rating_col].astype(float)
        ctx.tables["ratings_distribution"] = _distribution(values, spec)
        summary = [_summary_row("all", values)]
        per_position = story.groupby("position")[cfg.rating_col].agg(
            ["size", "mean", "std", "median"]
        )
        for pos, rec in per_position.iterrows():
            summary.append(
                {
                    "group": f"position {pos}",
                    "n": int(rec["size"]),
                    "mean": rec["mean"],
                    "sd": rec["std"],
                    "median": rec["median"],
                }
            )
        weeks = story.assign(study_week=np.floor(story["week"]).astype("int64"))
        ctx.tables["empathy_course"] = plotting.empathy_course_table(
            weeks,
            rating_col=cfg.rating_col,
            id_col=cfg.id_col,
            time_col="study_week",
            ci_level=ctx.options.ci_level,
            scale_min=spec.scale_min,
            scale_max=spec.scale_max,
            min_participants=MIN_WEEK_PARTICIPANTS,
        )
        smooth = smooth_course(
            story,
            rating_col=cfg.rating_col,
            id_col=cfg.id_col,
            ci_level=ctx.options.ci_level,
            rating_name=cfg.rating_col,
            max_participants=LEAN_MODEL_PARTICIPANTS if ctx.options.lean else None,
        )
        smooth.sentence = ctx.scrub(ctx.own_names(smooth.sentence))
        smooth.table["formula"] = smooth.table["formula"].map(
            lambda f: f if f is None else ctx.own_names(f)
        )
        ctx.tables["empathy_smooth"] = smooth.table
        if not smooth.curve.empty:
            ctx.tables["empathy_smooth_curve"] = smooth.curve
        ctx.note(*smooth.notes)
        ctx.results["empathy_smooth"] = smooth
        person_means = story.groupby(cfg.id_col)[cfg.rating_col].mean()
        summary.append(_summary_row("participant means", person_means))
        ctx.tables["ratings_summary"] = pd.DataFrame(summary)

        save = _saver(ctx)
        save(
            "empathy_ratings",
            plotting.plot_rating_distribution(
                story, rating_col=cfg.rating_col, scale_min=spec.scale_min, scale_max=spec.scale_max
            ),
            f"Distribution of the {cfg.rating_col} ratings"
            + (f", {_bins_text(spec)}." if spec.kind == "continuous" else "."),
        )
        if not ctx.options.lean:  # --lean: no figure that draws one mark per participant
            save(
                "empathy_course",
                plotting.plot_empathy_course(
                    weeks,
                    rating_col=cfg.rating_col,
                    id_col=cfg.id_col,
                    time_col="study_week",
                    scale_min=spec.scale_min,
                    scale_max=spec.scale_max,
                    min_participants=MIN_WEEK_PARTICIPANTS,
                    ci_level=ctx.options.ci_level,
                ),
                _course_caption(ctx),
            )

        if not smooth.curve.empty:
            save(
                "empathy_smooth",
                plotting.plot_smooth_course(
                    smooth.curve,
                    line=smooth.line,
                    rating_col=cfg.rating_col,
                    scale_min=spec.scale_min,
                    scale_max=spec.scale_max,
                    ci_level=ctx.options.ci_level,
                ),
                _smooth_caption(ctx),
            )

    def _body(self, ctx: ReportContext) -> Markup:
        cfg = ctx.config
        binned = cfg.ratings.kind == "continuous"
        return render(
            "ratings.html.j2",
            summary=ctx.tables["ratings_summary"],
            distribution=ctx.tables["ratings_distribution"],
            distribution_columns={"label": "ratings", "n": "n", "proportion": "share"}
            if binned
            else {"value": "value", "n": "n", "proportion": "share"},
            distribution_caption=f"Distribution {_bins_text(cfg.ratings)}. "
            + scale_rule(cfg.ratings.scale_min, cfg.ratings.scale_max)
            if binned
            else "Distribution",
            caption=f"{cfg.rating_col} ratings ({cfg.ratings.scale_min:g}–"
            f"{cfg.ratings.scale_max:g})",
            figures=[
                figure(ctx.figures, ctx.out, n) for n in ("empathy_ratings", "empathy_course")
            ],
            smooth_sentence=ctx.results["empathy_smooth"].sentence,
            smooth_figure=figure(ctx.figures, ctx.out, "empathy_smooth"),
        )


def _course_caption(ctx: ReportContext) -> str:
    """Caption of the empathy course: what is drawn, the clipping and the small weeks."""
    cfg = ctx.config
    course = ctx.tables["empathy_course"]
    text = (
        f"{cfg.rating_col.capitalize()} ratings over {study_span(ctx)} by study week (week 0 "
        "= days 0-6 after the first session): participants' weekly means (grey) and their mean "
        f"with its {ctx.options.ci_level:.0%} t interval across participants, kept within the "
        f"{cfg.ratings.label} scale"
    )
    clipped = course.loc[course["clipped"], "study_week"].tolist()
    if clipped:
        text += f" (cut at the scale's end in week {_weeks(clipped)})"
    text += (
        f". Weeks rated by fewer than {MIN_WEEK_PARTICIPANTS} participants are drawn as open "
        "circles without an interval"
    )
    few = course.loc[course["too_few"], "study_week"].tolist()
    text += f" (week {_weeks(few)})." if few else " (none here)."
    return text


def _smooth_caption(ctx: ReportContext) -> str:
    """Caption of the smooth course: the model, its basis rule and what is drawn."""
    row = ctx.tables["empathy_smooth"].iloc[0]
    return (
        f"Smooth course of the mean {ctx.config.rating_col} rating over {study_span(ctx)}: "
        f"{row['formula']}, fitted as gamm4 fits it (thin plate smooth of the week since each "
        f"participant's first session; k = the number of distinct days, at most {MAX_K}, here "
        f"{int(row['k'])}; no curve is fitted with fewer than {MIN_TIMES}), with its "
        f"{ctx.options.ci_level:.0%} pointwise interval (shaded), beside the straight line of "
        "the same model with a linear week term (dashed)."
    )


def _weeks(weeks: list[Any]) -> str:
    return join_words([str(int(w)) for w in weeks])


def _bins_text(spec: Any) -> str:
    """Describe the bins of a continuous scale's distribution, with the rule that set them."""
    width = (float(spec.scale_max) - float(spec.scale_min)) / DISTRIBUTION_BINS
    return (
        f"in {DISTRIBUTION_BINS} bins of equal width {width:g} over the {spec.label} scale (the "
        f"last one includes {float(spec.scale_max):g})"
    )


def _distribution(values: pd.Series, spec: Any) -> pd.DataFrame:
    """Count the ratings per scale point, when the scale and every rating are whole.

    A continuous scale (:func:`longitudinal.study.rating_scale.scale_kind`) is counted in
    :data:`~longitudinal.study.rating_scale.DISTRIBUTION_BINS` equal-width bins instead: one row per
    bin, ``bin, label, low, high, n, proportion``.
    """
    if spec.kind == "continuous":
        counts = binned_counts(values, spec.scale_min, spec.scale_max, DISTRIBUTION_BINS)
        return counts[["bin", "label", "low", "high", "n", "proportion"]]
    whole = float(spec.scale_min).is_integer() and float(spec.scale_max).is_integer()
    if not (whole and bool(values.map(float.is_integer).all())):
        return pd.DataFrame(columns=["value", "n", "proportion"])
    levels = np.arange(int(spec.scale_min), int(spec.scale_max) + 1).astype(float)
    counts = values.value_counts().reindex(levels, fill_value=0)
    return pd.DataFrame(
        {
            "value": levels,
            "n": counts.to_numpy(dtype="int64"),
            "proportion": counts.to_numpy() / max(len(values), 1),
        }
    )


def _summary_row(group: str, values: pd.Series) -> dict[str, Any]:
    return {
        "group": group,
        "n": len(values),
        "mean": values.mean(),
        "sd": values.std(ddof=1),
        "median": values.median(),
    }
