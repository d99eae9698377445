"""Change in each state scale across the waves, with its figures.

Descriptives, RM-ANOVA, pairwise changes, the model-based wave means and their contrasts
(:mod:`longitudinal.report.sections.change_means`), Friedman, the growth model and reliable
change.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from longitudinal._errors import LongitudinalError
from longitudinal._wording import (
    NOT_SCORED,
    NOT_TAKEN,
    count_noun,
    left_out_reasons,
    missing_reason,
)
from longitudinal.report.context import ReportContext, study_span
from longitudinal.report.html import figure, num, p_text, render
from longitudinal.report.sections.base import Section, SectionUnavailable
from longitudinal.report.sections.change_imputed import compute_imputed_change, imputed_view
from longitudinal.report.sections.change_means import compute_wave_means, wave_means_view
from models import ModelsError
from surveys import SurveysError

_RESULT_TABLES = {  # attribute of ChangeResult -> report table
    "descriptives": "descriptives",
    "rm_anova": "rm_anova",
    "sphericity": "sphericity",
    "excluded": "complete_case_exclusions",
    "pairwise": "pairwise",
    "effect_sizes": "effect_sizes",
    "friedman": "friedman",
    "growth_fixed": "growth_fixed",
    "growth_random": "growth_random",
    "reliable_change": "reliable_change_people",
    "reliable_change_counts": "reliable_change_counts",
}
_FIGURES = ("trajectories", "wave_distributions", "state_course", "reliable_change")


def growth_time(ctx: ReportContext) -> None:
    """Time of each wave in weeks since the first wave (median over participants)."""
    cfg = ctx.config
    dates = ctx.study.survey_dates
    first = dates.loc[dates["wave"] == cfg.waves[0]].set_index(cfg.id_col)["completed_at"]
    times: dict[str, float] = {}
    for wave in cfg.waves:
        sub = dates.loc[dates["wave"] == wave].set_index(cfg.id_col)["completed_at"]
        days = (sub.dt.normalize() - first.reindex(sub.index).dt.normalize()).dt.days.dropna()
        times[wave] = float(days.median()) / 7.0 if len(days) else float("nan")
    values = list(times.values())
    if any(not math.isfinite(v) for v in values) or len(set(values)) != len(values):
        ctx.growth_time = {w: float(i) for i, w in enumerate(cfg.waves)}
        ctx.growth_time_unit = "waves"
    else:
        ctx.growth_time = times
        ctx.growth_time_unit = "weeks"


def reliability_for(ctx: ReportContext, column: str, instrument: str, scale: str):
    """Find the reliability for a scale's reliable change index and where it came from."""
    retest = ctx.options.retest
    for key in (column, instrument):
        if key in retest:
            return retest[key], "test-retest"
    rel = ctx.study.reliability
    first = ctx.config.waves[0]
    if rel.empty:
        return None, None
    hit = rel.loc[
        (rel["instrument"] == instrument) & (rel["scale"] == scale) & (rel["wave"] == first),
        "alpha",
    ]
    if len(hit) and np.isfinite(hit.iloc[0]) and 0 <= hit.iloc[0] < 1:
        return float(hit.iloc[0]), "alpha"
    return None, None


def _reliability_note(kind: str | None) -> str:
    if kind == "test-retest":
        return "given with --retest"
    return "computed from the item responses at the first wave"


class ChangeSection(Section):
    """One subsection per state scale (:func:`longitudinal.change.change_analysis`)."""

    anchor = "change"
    heading = "Change in the states"

    def _compute(self, ctx: ReportContext) -> None:
        cfg = ctx.config
        if len(cfg.waves) < 2 and ctx.states:
            ctx.note("change analyses need at least two waves; the study declares one")
            ctx.states = []
        growth_time(ctx)
        parts: dict[str, list[pd.DataFrame]] = {}
        models = []
        analysed, failed = [], []
        for column, instrument, scale in ctx.states:
            try:
                result = self._analyse(ctx, column, instrument, scale)
            except (LongitudinalError, ModelsError, SurveysError) as err:
                failed.append(f"{ctx.labels[column]}: {err}")  # saw pseudonyms only
                continue
            analysed.append((column, instrument, scale))
            ctx.results[column] = result
            excluded, counts = exclusion_reasons(ctx, result.excluded, instrument, scale)
            ctx.results[f"{column}:left_out"] = counts
            for name in _RESULT_TABLES:
                table = excluded if name == "excluded" else getattr(result, name)
                parts.setdefault(name, []).append(
                    table.assign(scale=column)[["scale", *table.columns]]
                )
            models.append(self._model_row(ctx, column, result, counts))
        for name, tables in parts.items():
            tables = [t for t in tables if not t.empty]
            if tables:
                ctx.tables[_RESULT_TABLES[name]] = pd.concat(tables, ignore_index=True)
        ctx.tables["change_models"] = pd.DataFrame(models)
        for text in failed:
            ctx.note(f"change not analysed for {text}")
        if failed and not analysed:
            ctx.states = []
            raise SectionUnavailable(
                "the change analyses could not be computed: "
                + "; ".join(failed)
                + ". They need at least two participants observed at two or more waves."
            )
        ctx.states = analysed
        if ctx.states:
            compute_imputed_change(ctx)
            compute_wave_means(ctx)
            self._figures(ctx)

    @staticmethod
    def _analyse(ctx: ReportContext, column: str, instrument: str, scale: str) -> Any:
        from longitudinal.change import change_analysis

        cfg = ctx.config
        reliability, kind = reliability_for(ctx, column, instrument, scale)
        data = ctx.frames["person_wave"][[cfg.id_col, "wave", column]].copy()
        data["wave"] = data["wave"].astype(str)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = change_analysis(
                data,
                id_col=cfg.id_col,
                wave_col="wave",
                outcome_col=column,
                waves=list(cfg.waves),
                time=ctx.growth_time,
                random_slope=ctx.options.random_slope,
                reliability=reliability,
                reliability_kind=kind or "alpha",
                reliability_note=_reliability_note(kind),
                ci_level=ctx.options.ci_level,
            )
        for w in caught:
            ctx.note(f"{ctx.labels[column]}: {w.message}")  # the models saw pseudonyms only
        return result

    @staticmethod
    def _model_row(
        ctx: ReportContext, column: str, result: Any, counts: list[tuple[str, str, int]]
    ) -> dict[str, Any]:
        growth = result.meta["growth"]
        rc = result.meta["reliable_change"]
        return {
            "scale": column,
            "formula": growth.get("formula"),
            "random_effects": growth.get("random_effects"),
            "fallback_reason": growth.get("fallback_reason"),
            "problems": "; ".join(growth.get("problems", [])),
            "converged": growth.get("converged"),
            "n_obs": growth.get("n_obs"),
            "n_subjects": growth.get("n_subjects"),
            "time_unit": ctx.growth_time_unit,
            **{f"time_{w}": ctx.growth_time[w] for w in ctx.config.waves},
            "rm_n_complete": result.meta.get("n_complete"),
            "rm_n_excluded": result.meta.get("n_excluded"),
            "rm_n_survey_not_taken": sum(n for kind, _, n in counts if kind == NOT_TAKEN),
            "rm_n_not_scored": sum(n for kind, _, n in counts if kind == NOT_SCORED),
            "rm_left_out": left_out_reasons(counts),
            "rci_reliability": rc.get("reliability"),
            "rci_reliability_source": rc.get("reliability_source"),
            "rci_sd_baseline": rc.get("sd_baseline"),
            "rci_s_diff": rc.get("s_diff"),
            "rci_criterion": rc.get("criterion"),
        }

    @staticmethod
    def _figures(ctx: ReportContext) -> None:
        from longitudinal import plotting

        cfg = ctx.config
        person_wave = ctx.frames["person_wave"]
        waves = list(cfg.waves)
        states = [c for c, _, _ in ctx.states]
        level = ctx.options.ci_level
        per_person = {
            "scales": states,
            "id_col": cfg.id_col,
            "waves": waves,
            "labels": ctx.labels,
            "ci_level": level,
        }
        save = _saver(ctx)
        lean = ctx.options.lean  # --lean: no figure that draws one mark per participant
        if not lean:
            save(
                "trajectories",
                plotting.plot_trajectories(person_wave, **per_person),
                "State scales per wave: each participant (grey) and the mean of the complete "
                f"cases with {level:.0%} within-subject confidence intervals (Cousineau-Morey).",
            )
        save(
            "wave_distributions",
            plotting.plot_wave_distributions(
                person_wave, scales=states, waves=waves, labels=ctx.labels
            ),
            "Distribution of each state scale at each wave (violins with quartiles).",
        )
        if not lean:
            save(
                "state_course",
                plotting.plot_state_course(person_wave, **per_person),
                f"The course of the states over {study_span(ctx)} on the study calendar (day 0 "
                "= the participant's first session): each participant's surveys and the wave "
                "means at the median survey day.",
            )
        rc = ctx.tables.get("reliable_change_people")
        models = ctx.tables["change_models"].set_index("scale")
        if rc is not None and not rc.empty and not lean:
            data = rc.assign(
                threshold=rc["scale"].map(models["rci_s_diff"] * models["rci_criterion"])
            )
            save(
                "reliable_change",
                plotting.plot_reliable_change(
                    data,
                    pre_col="baseline",
                    post_col="followup",
                    labels=ctx.labels,
                    pre_label=waves[0],
                    post_label=waves[-1],
                ),
                f"Reliable change from {waves[0]} to {waves[-1]}: participants outside the "
                "shaded band changed reliably (|RCI| > criterion, Jacobson-Truax).",
            )

    def _body(self, ctx: ReportContext) -> Markup | None:
        if not ctx.states:
            return None
        states = [_state_view(ctx, column) for column, _, _ in ctx.states]
        figures = [figure(ctx.figures, ctx.out, name) for name in _FIGURES]
        return render("change.html.j2", states=states, figures=figures, imputed=imputed_view(ctx))


def left_out_text(n_complete: int, n_excluded: int, counts: list[tuple[str, str, int]]) -> str:
    """Say how many complete cases there were and who was left out, and why.

    Examples
    --------
    >>> from longitudinal.report.sections.change import left_out_text
    >>> left_out_text(57, 3, [("not taken", "exit", 2), ("not scored", "exit", 1)])
    '57 complete cases; 3 participants left out: 2 did not take the exit survey, 1 was not
    scored at exit (too few items answered)'
    >>> left_out_text(20, 0, [])
    '20 complete cases; no participant left out'
    """
    text = f"{count_noun(n_complete, 'complete case')}; "
    if not n_excluded:
        return text + "no participant left out"
    reasons = left_out_reasons(counts)
    return (
        text
        + f"{count_noun(n_excluded, 'participant')} left out"
        + (f": {reasons}" if reasons else "")
    )


def exclusion_reasons(
    ctx: ReportContext, excluded: pd.DataFrame, instrument: str, scale: str
) -> tuple[pd.DataFrame, list[tuple[str, str, int]]]:
    """Say why each participant left out of the complete-case analyses lacks a score.

    A wave without the participant's row in the survey holding the instrument is a survey
    not taken; a wave with the row but no score is a scale not scored, with the items
    answered (``study.scores``: ``n_answered`` of ``n_items``).

    Parameters
    ----------
    ctx : ReportContext
        The report (its study's scores and the pseudonyms of the ids).
    excluded : pandas.DataFrame
        ``ChangeResult.excluded``: ``id`` (as in the report's frames), ``n_observed``,
        ``missing_waves``.
    instrument, scale : str
        The scale, as named in ``study.scores``.

    Returns
    -------
    excluded : pandas.DataFrame
        ``excluded`` with ``survey_not_taken`` and ``not_scored`` (the waves of each reason,
        joined with ", ") and ``reason`` (in words, one clause per missing wave).
    counts : list of (kind, wave, n)
        Participants lacking a score at each wave for each reason, waves in study order
        (for :func:`longitudinal._wording.left_out_reasons`).
    """
    cfg = ctx.config
    waves = [str(w) for w in cfg.waves]
    scores = ctx.study.scores
    scores = scores[(scores["instrument"] == instrument) & (scores["scale"] == scale)]
    found = {
        (str(r[0]), str(r[1])): (r[2], r[3], r[4])
        for r in scores[[cfg.id_col, "wave", "score", "n_answered", "n_items"]].itertuples(
            index=False
        )
    }
    tally = {(kind, wave): 0 for wave in waves for kind in (NOT_TAKEN, NOT_SCORED)}
    taken_col, scored_col, reason_col = [], [], []
    for pid in excluded["id"].astype(str):
        not_taken, not_scored, reasons = [], [], []
        for wave in waves:
            hit = found.get((pid, wave))
            if hit is not None and pd.notna(hit[0]):
                continue
            if hit is None:
                not_taken.append(wave)
                tally[(NOT_TAKEN, wave)] += 1
                reasons.append(missing_reason(NOT_TAKEN, wave))
            else:
                not_scored.append(wave)
                tally[(NOT_SCORED, wave)] += 1
                answered = None if pd.isna(hit[1]) else int(hit[1])
                items = None if pd.isna(hit[2]) else int(hit[2])
                reasons.append(missing_reason(NOT_SCORED, wave, answered, items))
        taken_col.append(", ".join(not_taken))
        scored_col.append(", ".join(not_scored))
        reason_col.append("; ".join(reasons))
    table = excluded.assign(survey_not_taken=taken_col, not_scored=scored_col, reason=reason_col)
    counts = [(kind, wave, n) for (kind, wave), n in tally.items() if n]
    return table, counts


def _saver(ctx: ReportContext):
    """Return a function that saves a figure under figures/ and records its caption."""
    from longitudinal import plotting

    def save(name: str, fig: Any, caption: str) -> None:
        plotting.save_figure(
            fig, ctx.out / "figures" / f"{name}.png", dpi=plotting.JOURNAL_DPI, vector=True
        )
        ctx.figures[name] = (f"figures/{name}.png", caption)

    return save


def _state_view(ctx: ReportContext, column: str) -> dict[str, Any]:
    """Collect what the template shows of one state scale (tables, sentences)."""
    result = ctx.results[column]
    meta = result.meta
    view: dict[str, Any] = {"column": column, "label": ctx.labels[column], "result": result}
    sph = result.sphericity
    view["mauchly"] = ""
    if not sph.empty:
        rec = sph.iloc[0]
        view["mauchly"] = (
            f"Mauchly's W = {num(rec['statistic'], 3)}, χ²({num(rec['df'], 0)}) = "
            f"{num(rec['chi2'], 2)}, {p_text(rec['p_value'])}. "
        )
    view["n_complete"] = int(meta.get("n_complete") or 0)
    view["n_excluded"] = int(meta.get("n_excluded") or 0)
    view["left_out"] = left_out_text(
        view["n_complete"], view["n_excluded"], ctx.results.get(f"{column}:left_out", [])
    )
    view["pairs"] = None
    if not result.pairwise.empty:
        eff = result.effect_sizes.pivot(
            index="term", columns="measure", values=["estimate", "ci_low", "ci_high"]
        )
        eff.columns = [f"{m}_{v}" for v, m in eff.columns]
        view["pairs"] = result.pairwise.merge(eff, left_on="term", right_index=True, how="left")
    view["wave_means"] = wave_means_view(ctx, column)
    fr = result.friedman
    view["friedman"] = None if fr.empty else fr.iloc[0]
    growth = meta.get("growth", {})
    view["growth"] = growth
    view["growth_caption"] = (
        f"Growth model: {growth.get('formula', '')} (time in {ctx.growth_time_unit}; "
        "t tests with Satterthwaite df)"
    )
    view["random_text"] = ", ".join(
        f"SD({r.term or 'residual'}) = {num(r.sd, 3)}"
        for r in result.growth_random.itertuples(index=False)
    )
    rc_meta = meta.get("reliable_change", {})
    view["rc"] = rc_meta
    view["rc_caption"] = f"Reliable change {ctx.config.waves[0]} → {ctx.config.waves[-1]}"
    view["rc_smallest"] = rc_meta.get("s_diff", np.nan) * rc_meta.get("criterion", np.nan)
    view["reliability_source"] = meta.get("reliability_source")
    return view
