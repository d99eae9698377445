"""The "Sample" section: who and what was read, and what was excluded."""

from __future__ import annotations

from typing import Any

import pandas as pd
from markupsafe import Markup

from longitudinal._wording import count_noun, with_article
from longitudinal.narrate.numbers import apa_ci, apa_num
from longitudinal.report.context import EXCLUSIONS_FILE, ReportContext, label
from longitudinal.report.html import render
from longitudinal.report.sections.base import Section
from longitudinal.study.attrition import Attrition, attrition
from longitudinal.study.frames import scale_column


def survey_quantity(wave: str) -> str:
    """Name the row of ``tables/sample.csv`` that counts a wave's surveys.

    Examples
    --------
    >>> from longitudinal.report.sections.sample import survey_quantity
    >>> survey_quantity("intake"), survey_quantity("post")
    ('participants with an intake survey', 'participants with a post survey')
    """
    return f"participants with {with_article(f'{wave} survey')}"


def attrition_sentence(result: Attrition, labels: dict[str, str]) -> str:
    """Say in one sentence who completed the last wave and how the dropouts differed.

    The largest baseline difference (by the size of Hedges' g) is named with its interval
    (the scale by its name in ``labels``); the sentence says so when no difference can be
    estimated (a group with fewer than two scores).
    """
    exit_survey = f"{result.last_wave} survey"
    if not result.n_dropouts:
        return (
            f"All {count_noun(result.n_participants, 'participant')} listed completed "
            f"the {exit_survey}."
        )
    head = (
        f"Of {count_noun(result.n_participants, 'participant')} listed, "
        f"{result.n_completers} completed the {exit_survey} and "
        f"{count_noun(result.n_dropouts, 'dropout')} did not"
    )
    table = result.baseline.dropna(subset=["estimate"])
    if table.empty:
        return (
            head
            + "; no baseline difference could be estimated (a group has fewer than two scores)."
        )
    row = table.loc[table["estimate"].abs().idxmax()]
    return (
        f"{head}; the largest baseline difference (dropouts minus completers) is on "
        f"{labels.get(row['measure'], row['measure'])}, Hedges' g = {apa_num(row['estimate'])}, "
        f"{100 * result.ci_level:g}% CI {apa_ci(row['ci_low'], row['ci_high'])}."
    )


class SampleSection(Section):
    """Counts of participants, sessions, ratings, surveys and exclusions; attrition."""

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
        result = attrition(study, ci_level=ctx.options.ci_level)
        ctx.results["attrition"] = result
        ctx.tables["attrition"] = result.waves
        ctx.tables["attrition_baseline"] = result.baseline
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
            attrition=ctx.tables["attrition"],
            attrition_text=attrition_sentence(ctx.results["attrition"], _labels(ctx.study)),
        )


def _labels(study: Any) -> dict[str, str]:
    """Every scale's column name with its readable name."""
    return {
        scale_column(name, key.name): label(instrument, key.name)
        for name, instrument in study.instruments.items()
        for key in instrument.scales
    }
