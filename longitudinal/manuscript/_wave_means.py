"""The manuscript's tables of the wave means: observed beside the mixed model's, and its contrasts.

Built from ``tables/change_wave_means.csv`` and ``tables/change_wave_contrasts.csv``
(:mod:`longitudinal.report.sections.change_means`); a scale whose model failed its checks
(singular, unconverged) shows "failed" in place of the model's numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from longitudinal.manuscript.table import ApaTable
from longitudinal.narrate.gates import FAILED, is_failed
from longitudinal.narrate.markup import GroupRow, literal
from longitudinal.narrate.numbers import apa_ci, apa_df, apa_num, apa_p


def wave_means_table(
    tables: Mapping[str, pd.DataFrame], *, labels: Mapping[str, str], ci_level: float, number: int
) -> ApaTable | None:
    """Observed and model-based means of each state scale at each wave, with their intervals."""
    means = tables.get("change_wave_means")
    if means is None or means.empty:
        return None
    rows: list[Any] = []
    failed_any = False
    for column in dict.fromkeys(means["scale"]):
        rows.append(GroupRow(literal(labels.get(column, column.replace("_", " ")))))
        for r in means[means["scale"] == column].itertuples(index=False):
            head = (literal(r.wave), str(int(r.n)), apa_num(r.observed_mean))
            if is_failed(r.status):
                failed_any = True
                rows.append((*head, FAILED, "", "", ""))
                continue
            rows.append((*head, apa_num(r.emmean), apa_num(r.se), apa_df(r.df),
                         apa_ci(r.ci_low, r.ci_high)))  # fmt: skip
    pct = f"{100 * ci_level:g}%"
    note = (
        "*n* = participants with a score at the wave; *M* = observed mean of those scores; "
        "EMM = estimated marginal mean of a linear mixed model of the score on the wave (a "
        "factor) with a random intercept per participant, fitted by REML to every observed "
        f"score; *SE*, *df* and the {pct} CI by Kenward and Roger. When every participant has "
        "every wave the two means coincide; otherwise the model also draws on the other "
        "scores of those who lack a wave. "
        + (
            f"The Holm-adjusted contrasts between waves are in Table {number + 1}."
            if _has(tables, "change_wave_contrasts")
            else ""
        )
        + (
            f" {FAILED} = the model failed its checks; its estimates are not reported."
            if failed_any
            else ""
        )
    )
    return ApaTable(
        number=number,
        name="change_wave_means",
        title="Observed and Model-Based Means of the State Scales per Wave",
        columns=("Scale and wave", "*n*", "*M*", "EMM", "*SE*", "*df*", f"{pct} CI"),
        rows=tuple(rows),
        note=note,
        sources=("change_wave_means",),
    )


def _has(tables: Mapping[str, pd.DataFrame], name: str) -> bool:
    table = tables.get(name)
    return table is not None and not table.empty


def wave_contrasts_table(
    tables: Mapping[str, pd.DataFrame], *, labels: Mapping[str, str], ci_level: float, number: int
) -> ApaTable | None:
    """Tabulate the contrasts between the model-based wave means of each state scale."""
    contrasts = tables.get("change_wave_contrasts")
    if contrasts is None or contrasts.empty:
        return None
    rows: list[Any] = []
    failed_any = False
    for column in dict.fromkeys(contrasts["scale"]):
        rows.append(GroupRow(literal(labels.get(column, column.replace("_", " ")))))
        for r in contrasts[contrasts["scale"] == column].itertuples(index=False):
            head = f"{literal(r.wave_from)} → {literal(r.wave_to)}"
            if is_failed(r.status):
                failed_any = True
                rows.append((head, FAILED, "", "", "", "", ""))
                continue
            rows.append((head, apa_num(r.estimate), apa_num(r.se), apa_df(r.df),
                         apa_num(r.statistic), apa_p(r.p_value),
                         apa_ci(r.ci_low, r.ci_high)))  # fmt: skip
    pct = f"{100 * ci_level:g}%"
    source = f"Table {number - 1}" if _has(tables, "change_wave_means") else "the wave-means model"
    note = (
        "*M*_{diff} = difference between the estimated marginal means of two waves (later "
        f"minus earlier) of the linear mixed model of {source}; *SE*, *df* and *t* by Kenward "
        "and Roger; *p*_{Holm} = Holm-adjusted over the comparisons of each scale; the "
        f"{pct} CI is Bonferroni-adjusted over the same comparisons (as emmeans adjusts the "
        "intervals of Holm-adjusted contrasts). CI = confidence interval."
        + (
            f" {FAILED} = the model failed its checks; its estimates are not reported."
            if failed_any
            else ""
        )
    )
    return ApaTable(
        number=number,
        name="change_wave_contrasts",
        title="Model-Based Changes Between Waves",
        columns=(
            "Scale and contrast",
            "*M*_{diff}",
            "*SE*",
            "*df*",
            "*t*",
            "*p*_{Holm}",
            f"{pct} CI",
        ),  # fmt: skip
        rows=tuple(rows),
        note=note,
        sources=("change_wave_contrasts",),
    )
