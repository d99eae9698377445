"""The "Sample" section: who and what was read, and what was excluded."""

from __future__ import annotations

import pandas as pd
from markupsafe import Markup

from longitudinal._wording import with_article
from longitudinal.report.context import EXCLUSIONS_FILE, ReportContext
from longitudinal.report.html import render
from longitudinal.report.sections.base import Section


def survey_quantity(wave: str) -> str:
    """Name the row of ``tables/sample.csv`` that counts a wave's surveys.

    Examples
    --------
    >>> from longitudinal.report.sections.sample import survey_quantity
    >>> survey_quantity("intake"), survey_quantity("post")
    ('participants with an intake survey', 'participants with a post survey')
    """
    return f"participants with {with_article(f'{wave} survey')}"


class SampleSection(Section):
    """Counts of participants, sessions, ratings and surveys; exclusions by file and reason."""

    anchor = "sample"
    heading = "Sample"

    def _compute(self, ctx: ReportContext) -> None:
        study = ctx.study
        cfg = study.config
        sessions, story = ctx.frames["sessions"], ctx.frames["story"]
        files = study.meta["files"]
        excl = study.exclusions
        dropped = excl[excl["scope"] == "study"]
        rows = [
            ("participants listed", len(study.participants)),
            ("participants with a kept session", sessions[cfg.id_col].nunique()),
            ("participants with a kept rating", story[cfg.id_col].nunique()),
            ("session rows read", files[cfg.sessions_file]["rows"]),
            ("sessions kept", len(study.sessions)),
            ("sessions excluded", int((dropped["file"] == cfg.sessions_file).sum())),
            (
                "sessions without ratings (kept; not in the story frame)",
                int(((excl["scope"] == "story_frame") & (excl["file"] == cfg.sessions_file)).sum()),
            ),
            ("rating rows read", files[cfg.ratings.file]["rows"]),
            ("ratings kept", len(study.ratings)),
            ("ratings excluded", int((dropped["file"] == cfg.ratings.file).sum())),
        ]
        for spec in cfg.surveys:
            info = files.get(spec.file, {})
            rows.append((f"survey rows read: {spec.file}", info.get("rows", 0)))
            rows.append((f"survey rows excluded: {spec.file}", info.get("excluded", 0)))
        dates = study.survey_dates
        for wave in cfg.waves:
            rows.append((survey_quantity(wave), int((dates["wave"] == wave).sum())))
        rows.append(("rows in the exclusion log", len(excl)))
        ctx.tables["sample"] = pd.DataFrame(rows, columns=["quantity", "n"])
        ctx.tables["exclusion_counts"] = (
            excl.assign(reason=excl["reason"].map(lambda r: ctx.scrub(str(r))))
            .groupby(["file", "scope", "reason"], sort=False)
            .size()
            .rename("n")
            .reset_index()
        )

    def _body(self, ctx: ReportContext) -> Markup:
        return render(
            "sample.html.j2",
            sample=ctx.tables["sample"],
            exclusions=ctx.tables["exclusion_counts"],
            exclusions_file=EXCLUSIONS_FILE,
        )
