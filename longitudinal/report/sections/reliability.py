"""The "Reliability" section: Cronbach's α and ω total of each scale at each wave."""

from __future__ import annotations

import numpy as np
from markupsafe import Markup

from longitudinal.report.context import ReportContext, reported_scales
from longitudinal.report.html import render
from longitudinal.report.sections.base import Section


class ReliabilitySection(Section):
    """Cronbach's α (Feldt interval) and ω total per scale and wave."""

    anchor = "reliability"
    heading = "Reliability"

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
            rel["flag"] = np.select(
                [rel["alpha"].isna(), rel["alpha"] < 0, rel["alpha"] < 0.5],
                ["undefined", "negative: check keys and coding", "low"],
                default="",
            )
        ctx.tables["reliability"] = rel

    def _body(self, ctx: ReportContext) -> Markup | None:
        rel = ctx.tables["reliability"]
        return None if rel.empty else render("reliability.html.j2", reliability=rel)
