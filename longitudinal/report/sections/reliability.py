"""The section "How reliable are the measures?" (anchor ``reliability``).

Four parts, each flagging every coefficient below .70 (never hiding it):

* internal consistency of each scale at each wave: Cronbach's α (Feldt interval) and ω total
  (``tables/reliability.csv``);
* the multilevel reliability of every state scale measured at two or more waves
  (``tables/multilevel_reliability.csv``): rendered when a step has put that table in
  ``ctx.tables[MULTILEVEL_TABLE]`` (one row per instrument and scale: ``instrument, scale,
  n_persons, n_occasions, n_items, method, RkF, R1R, RkR, Rc, RkRn, Rcn``); this section adds
  its ``flag`` column;
* the G and D study of the empathy ratings (:func:`longitudinal.ratings_g_study`):
  ``tables/ratings_g_components.csv``, ``ratings_g_coefficient.csv`` and
  ``ratings_d_study.csv``; a study whose ratings cannot identify the components gets one line
  saying so, and a small or singular one a line saying the G study is imprecise;
* which reliability each state scale's reliable change index used (from the change
  section's ``change_models`` table).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from longitudinal.report.context import ReportContext, join_words, reported_scales
from longitudinal.report.html import num, render
from longitudinal.report.sections.base import Section
from models.generalizability import FLAG_LOW, GOOD_ENOUGH, MIN_PARTICIPANTS_PRECISE

MULTILEVEL_TABLE = "multilevel_reliability"
"""``ctx.tables`` key of the multilevel reliability table (rendered when present)."""

MULTILEVEL_COEFFICIENTS = ("RkF", "R1R", "RkR", "Rc", "RkRn", "Rcn")
"""Coefficients of the multilevel table checked against .70."""

G_TABLES = ("ratings_g_components", "ratings_g_coefficient", "ratings_d_study")
"""``ctx.tables`` keys of the G study of the ratings."""


def low_flags(frame: pd.DataFrame, labels: dict[str, str]) -> list[str]:
    """One flag per row naming the coefficients (``labels``: column -> shown name) below .70."""
    out = []
    for _, row in frame.iterrows():
        low = [
            shown
            for column, shown in labels.items()
            if column in frame.columns and np.isfinite(row[column]) and row[column] < GOOD_ENOUGH
        ]
        out.append(" and ".join(low) + " below .70" if low else "")
    return out


def imprecision_line(result: Any) -> str:
    """One line saying why a G study is imprecise (few participants, singular, unconverged)."""
    reasons = []
    if result.n_participants < MIN_PARTICIPANTS_PRECISE:
        reasons.append(f"only {result.n_participants} participants")
    if result.singular:
        comps = result.components
        total = comps["variance"].sum()
        zero = comps.loc[comps["variance"] <= 1e-8 * max(total, 1e-300), "component"]
        what = join_words([f"the {c} variance" for c in zero]) or "a variance"
        reasons.append(f"a singular fit ({what} estimated at zero)")
    if not result.converged:
        reasons.append("a fit that did not converge")
    return (
        "The G study is imprecise: "
        + join_words(reasons)
        + "; read G and the D study as rough guides (no interval is computed)."
    )


def _alpha_flags(rel: pd.DataFrame) -> list[str]:
    flags = []
    for rec, low in zip(
        rel.itertuples(index=False),
        low_flags(rel, {"alpha": "α", "omega_total": "ω"}),
        strict=True,
    ):
        if not np.isfinite(rec.alpha):
            flags.append("α undefined" + (f"; {low}" if low else ""))
        elif rec.alpha < 0:
            flags.append("negative α: check keys and coding")
        else:
            flags.append(low)
    return flags


class ReliabilitySection(Section):
    """Internal consistency, multilevel reliability, the G/D study of the ratings, the RCI."""

    anchor = "reliability"
    heading = "How reliable are the measures?"

    def _compute(self, ctx: ReportContext) -> None:
        rel = ctx.study.reliability.copy()
        if not rel.empty:
            keep = [
                rec.scale in reported_scales(ctx.study.instruments[rec.instrument])
                for rec in rel.itertuples(index=False)
            ]
            rel = rel.loc[keep]
            order = {w: i for i, w in enumerate(ctx.config.waves)}
            rel = rel.assign(_w=rel["wave"].map(order)).sort_values(["_w"], kind="mergesort")
            rel = rel.drop(columns="_w").reset_index(drop=True)
            rel["flag"] = _alpha_flags(rel)
        ctx.tables["reliability"] = rel
        self._multilevel(ctx)
        self._invariance(ctx)
        self._g_study(ctx)

    @staticmethod
    def _multilevel(ctx: ReportContext) -> None:
        """Multilevel reliability of the state scales at two or more waves, flagged below .70.

        Computed here (:func:`longitudinal.study_multilevel_reliability`) unless an earlier
        step has put the table in ``ctx.tables``; its notes (a scale at one wave, the method,
        negative or zero components, few people) go to the report's notes.
        """
        table = ctx.tables.get(MULTILEVEL_TABLE)
        if table is None and ctx.options.lean:
            ctx.note("Multilevel reliability left out (--lean).")
        elif table is None:
            table = _study_multilevel(ctx)
        if table is None or table.empty:
            return
        table = table.copy()
        table["flag"] = low_flags(table, {c: c for c in MULTILEVEL_COEFFICIENTS})
        ctx.tables[MULTILEVEL_TABLE] = table

    @staticmethod
    def _invariance(ctx: ReportContext) -> None:
        """Test the invariance of every reported state scale, or say in one line why not."""
        from longitudinal.psychometrics.invariance import estimator_rule, study_invariance
        from models import ModelsError
        from surveys import SurveysError

        if ctx.options.lean:
            ctx.results["invariance_lines"] = ["Measurement invariance left out (--lean)."]
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the ladder's findings are its notes
            try:
                result = study_invariance(ctx.loaded, estimator=ctx.options.invariance_estimator)
            except (ModelsError, SurveysError, ValueError) as why:
                ctx.note(ctx.scrub(f"Measurement invariance not tested: {why}"))
                return
        shown = {
            f"{name}.{scale}"
            for name, instrument in ctx.study.instruments.items()
            for scale in reported_scales(instrument)
        }
        # the ladders fitted (a sample below the rule of thumb is skipped: study_invariance);
        # a scale without one is told by its line, not by rows without numbers
        table = result.invariance
        table = table.loc[table["note"].isna()].drop(columns=["sample_flag", "note"])
        if not table.empty:
            keep = [f"{r.instrument}.{r.scale}" in shown for r in table.itertuples(index=False)]
            table = table.loc[keep].reset_index(drop=True)
        ctx.tables["invariance"] = table
        if not table.empty:
            ctx.results["invariance_rule"] = estimator_rule(ctx.options.invariance_estimator)
        lines = [n for n in result.notes if n.split(":", 1)[0] in shown]
        ctx.results["invariance_lines"] = [ctx.scrub(line) for line in lines]

    @staticmethod
    def _g_study(ctx: ReportContext) -> None:
        from longitudinal.psychometrics.generalizability import ratings_g_study
        from models import InvalidParameterError, ModelsError

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = ratings_g_study(ctx.loaded)
            except InvalidParameterError as why:
                result = None
                reason = str(why).split(": ", 2)[-1]
                ctx.results["g_study_line"] = (
                    f"The G study of the ratings is not estimable: {reason}."
                )
            except ModelsError as why:  # the fit failed (ConvergenceError) or was refused
                result = None
                ctx.results["g_study_line"] = (
                    "The G study of the ratings is not estimable: the mixed model could not "
                    f"be fitted ({why})."
                )
        for w in caught:
            ctx.note(ctx.scrub(f"G study of the ratings: {w.message}"))
        ctx.results["g_study"] = result
        if result is None:
            ctx.results["g_study_line"] = ctx.scrub(ctx.results["g_study_line"])
            ctx.note(ctx.results["g_study_line"])
            return
        ctx.tables["ratings_g_components"] = result.components
        ctx.tables["ratings_g_coefficient"] = result.observed
        ctx.tables["ratings_d_study"] = result.d_study
        if not result.precise:
            ctx.results["g_study_line"] = imprecision_line(result)

    def _body(self, ctx: ReportContext) -> Markup | None:
        return render(
            "reliability.html.j2",
            reliability=ctx.tables["reliability"],
            multilevel=ctx.tables.get(MULTILEVEL_TABLE),
            invariance=_invariance_view(ctx),
            g=_g_view(ctx),
            rci=_rci_view(ctx),
        )


def _invariance_view(ctx: ReportContext) -> dict[str, Any] | None:
    """Return the ladder's table and its one-line reasons (None: nothing was tested)."""
    lines = ctx.results.get("invariance_lines")
    table = ctx.tables.get("invariance")
    if lines is None and table is None:
        return None
    return {"lines": lines or [], "table": table if table is not None else pd.DataFrame()}


def _study_multilevel(ctx: ReportContext) -> Any:
    """Return the multilevel table of the study's reported state scales (None: a note)."""
    from longitudinal.psychometrics.reliability import study_multilevel_reliability
    from models import ModelsError
    from surveys import SurveysError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = study_multilevel_reliability(ctx.loaded)
        except (ModelsError, SurveysError, ValueError) as why:
            ctx.note(ctx.scrub(f"Multilevel reliability not computed: {why}"))
            return None
    for w in caught:
        ctx.note(ctx.scrub(f"Multilevel reliability: {w.message}"))
    for text in result.notes:
        ctx.note(ctx.scrub(f"Multilevel reliability, {text}"))
    table = result.multilevel
    if table.empty:
        return table
    keep = [
        rec.instrument in ctx.study.instruments
        and rec.scale in reported_scales(ctx.study.instruments[rec.instrument])
        for rec in table.itertuples(index=False)
    ]
    table = table.loc[keep].reset_index(drop=True)
    ctx.tables[MULTILEVEL_TABLE] = table
    ctx.tables["multilevel_components"] = result.components
    return table


def _g_view(ctx: ReportContext) -> dict[str, Any]:
    """Prepare the G study for the template: tables, the D study as a grid, one line."""
    result = ctx.results.get("g_study")
    view: dict[str, Any] = {"line": ctx.results.get("g_study_line"), "result": result}
    if result is None:
        return view
    d = result.d_study
    grid = d.pivot(index="n_stories", columns="n_sessions", values="g")
    shown = pd.DataFrame({"n_stories": grid.index.astype(int)})
    headers = {"n_stories": "stories per session"}
    for n_s in grid.columns:
        key = f"s{n_s:g}"
        shown[key] = [num(v, 2) + (" †" if v < GOOD_ENOUGH else "") for v in grid[n_s].to_numpy()]
        headers[key] = f"{n_s:g} sessions"
    view["grid"] = shown
    view["grid_headers"] = headers
    view["any_low"] = bool((d["flag"] == FLAG_LOW).any())
    row = result.observed.iloc[0]
    view["observed"] = row
    view["design_text"] = (
        "stories repeat across participants, so story is a crossed facet"
        if result.design == "crossed"
        else "no story is rated by two participants, so a story's own effect is part of the "
        "residual"
    )
    return view


def _rci_view(ctx: ReportContext) -> pd.DataFrame | None:
    """Per state scale: the reliability its reliable change index used, and where it came from."""
    models = ctx.tables.get("change_models")
    if models is None or models.empty or "rci_reliability" not in models.columns:
        return None
    rows = []
    for rec in models.itertuples(index=False):
        value = rec.rci_reliability
        finite = value is not None and np.isfinite(value)
        rows.append(
            {
                "scale": ctx.labels.get(rec.scale, rec.scale),
                "reliability": value if finite else np.nan,
                "source": rec.rci_reliability_source or "no reliability available",
                "flag": FLAG_LOW if finite and value < GOOD_ENOUGH else "",
            }
        )
    return pd.DataFrame(rows, columns=["scale", "reliability", "source", "flag"])
