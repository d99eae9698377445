"""The "Traits and demographics" section: trait scores at the first wave and the demographics."""

from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from longitudinal.report.context import ReportContext, describe, summary_frame
from longitudinal.report.html import figure, render
from longitudinal.report.sections.base import Section
from longitudinal.report.sections.change import _saver
from longitudinal.study.frames import scale_column


class TraitsSection(Section):
    """Trait scores at the first wave (with a radar of the Big Five) and demographics."""

    anchor = "traits"
    heading = "Traits and demographics"

    def _compute(self, ctx: ReportContext) -> None:
        from longitudinal import plotting

        study = ctx.study
        cfg = study.config
        people = ctx.frames["person_wave"].drop_duplicates(cfg.id_col)
        rows = []
        for name in study.trait_instruments:
            for key in study.instruments[name].scales:
                col = scale_column(name, key.name)
                if col in people.columns:
                    rows.append({"scale": col, "instrument": name, **describe(people[col])})
        ctx.tables["traits"] = summary_frame(
            rows, columns=["scale", "instrument", "n", "mean", "sd", "min", "median", "max"]
        )
        # sums over the participants in file order, as loaded: the same digits to the last
        ctx.tables["demographics"] = _demographics(ctx.loaded)

        save = _saver(ctx)
        radar = _radar_instrument(ctx)
        if radar is not None:
            name, columns, lo, hi = radar
            labels = {
                scale_column(name, k.name): k.name.replace("_", " ")
                for k in study.instruments[name].scales
            }
            save(
                "trait_radar",
                plotting.plot_big_five_radar(
                    people, columns=columns, labels=labels, scale_min=lo, scale_max=hi
                ),
                f"Trait profile at {cfg.waves[0]} ({study.instruments[name].title}).",
            )
        if study.demographics:
            save(
                "demographics",
                plotting.plot_demographics(study.participants, columns=list(study.demographics)),
                "Demographics of the participants listed.",
            )

    def _body(self, ctx: ReportContext) -> Markup:
        return render(
            "traits.html.j2",
            traits=ctx.tables["traits"],
            demographics=ctx.tables["demographics"].fillna(""),
            caption=f"Trait scores at {ctx.config.waves[0]}",
            radar=figure(ctx.figures, ctx.out, "trait_radar"),
            demographics_figure=figure(ctx.figures, ctx.out, "demographics"),
        )


def _demographics(study: Any) -> pd.DataFrame:
    rows = []
    participants = study.participants
    for col in study.demographics:
        values = participants[col]
        if pd.api.types.is_numeric_dtype(values):
            rows.append({"variable": col, "level": "", **describe(values)})
        else:
            counts = values.fillna("(missing)").astype(str).value_counts().sort_index()
            for level, n in counts.items():
                rows.append({"variable": col, "level": level, "n": int(n)})
    return summary_frame(
        rows, columns=["variable", "level", "n", "mean", "sd", "min", "median", "max"]
    )


def _radar_instrument(ctx: ReportContext):
    """Find the first trait instrument with at least 3 mean-scored scales (the Big Five)."""
    study = ctx.study
    for name in study.trait_instruments:
        instrument = study.instruments[name]
        keys = [k for k in instrument.scales if k.scoring == "mean" and k.multiplier == 1]
        if len(keys) >= 3:
            columns = [scale_column(name, k.name) for k in keys]
            lo = min(k.response_min for k in keys)
            hi = max(k.response_max for k in keys)
            return name, columns, lo, hi
    return None
