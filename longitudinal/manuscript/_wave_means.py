"""The manuscript's table of the wave means: observed beside the mixed model's.

Built from ``tables/change_wave_means.csv`` (:mod:`longitudinal.report.sections.change_means`);
a scale whose model failed its checks (singular, unconverged) shows "failed" in place of the
model's numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from longitudinal.manuscript.table import ApaTable
from longitudinal.narrate.gates import FAILED, is_failed
from longitudinal.narrate.markup import GroupRow, literal
from longitudinal.narrate.numbers import apa_ci, apa_df, apa_num


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
        "scores of those who lack a wave. The Holm-adjusted contrasts between waves are in "
        + literal("tables/change_wave_contrasts.csv")
        + "."
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
