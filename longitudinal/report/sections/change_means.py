"""The change section's model-based wave means, beside the observed means and paired tests.

Per analysed state scale, ``score ~ C(wave) + (1 | participant)`` fitted by REML on everyone
with at least one score (:func:`longitudinal.change.wave_means.model_wave_means`): its
marginal means per wave (Kenward-Roger df) and the Holm-adjusted contrasts between waves,
``tables/change_wave_means.csv`` and ``tables/change_wave_contrasts.csv`` (each row with the
model's ``status``, ``ok`` or ``failed: <why>``), and one sentence per scale saying what the
model adds to the complete-case analyses. A singular or unconverged model keeps its numbers in
the tables, is flagged where they are shown, and is not narrated.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from longitudinal._errors import LongitudinalError
from longitudinal._wording import count_noun
from longitudinal.narrate.gates import (
    FAILED,
    effect_status,
    fit_problem,
    is_failed,
    small_sample_caveat,
)
from longitudinal.narrate.numbers import apa_ci, apa_df, apa_num, apa_unit, p_text
from longitudinal.report.context import ReportContext
from models import ModelsError
from surveys import SurveysError

MEANS_TABLE = "change_wave_means"
"""``tables/change_wave_means.csv``: scale, wave, the model's mean and interval, the observed
mean and n, status."""
CONTRASTS_TABLE = "change_wave_contrasts"
"""``tables/change_wave_contrasts.csv``: scale, the contrasts between waves (later minus
earlier, Holm), status."""
RESULT = "change_wave_means"
"""Key of ``ctx.results``: column -> :class:`~longitudinal.change.wave_means.ModelWaveMeans`."""


def compute_wave_means(ctx: ReportContext) -> None:
    """Fit the wave-as-factor model of every analysed state scale and tabulate it.

    Fills ``ctx.tables`` (:data:`MEANS_TABLE`, :data:`CONTRASTS_TABLE`) and
    ``ctx.results[RESULT]``; a scale whose model cannot be fitted goes to the notes.
    """
    from longitudinal.change.wave_means import model_wave_means

    cfg = ctx.config
    found: dict[str, Any] = {}
    means, contrasts = [], []
    for column, _, _ in ctx.states:
        data = ctx.frames["person_wave"][[cfg.id_col, "wave", column]].copy()
        data["wave"] = data["wave"].astype(str)
        try:
            result = model_wave_means(
                data,
                id_col=cfg.id_col,
                wave_col="wave",
                outcome_col=column,
                waves=[str(w) for w in cfg.waves],
                ci_level=ctx.options.ci_level,
            )
        except (LongitudinalError, ModelsError, SurveysError) as err:
            ctx.note(f"{ctx.labels[column]}: the model-based wave means were not computed: {err}")
            continue
        found[column] = result
        problem = fit_problem(result.model)
        status = "ok" if problem is None else f"{FAILED}: {problem}"
        for frame, into in ((result.means, means), (result.contrasts, contrasts)):
            into.append(frame.assign(scale=column, status=status)[
                ["scale", *frame.columns, "status"]])  # fmt: skip
    if not found:
        return
    ctx.tables[MEANS_TABLE] = pd.concat(means, ignore_index=True)
    ctx.tables[CONTRASTS_TABLE] = pd.concat(contrasts, ignore_index=True)
    ctx.results[RESULT] = found


def wave_means_view(ctx: ReportContext, column: str) -> dict[str, Any] | None:
    """Return what the change section shows of one scale's model: tables, flag or sentence."""
    result = ctx.results.get(RESULT, {}).get(column)
    if result is None:
        return None
    means = ctx.tables[MEANS_TABLE]
    status = str(means.loc[means["scale"] == column, "status"].iloc[0])
    failed = is_failed(status)
    observed = ctx.results[column].pairwise
    return {
        "means": result.means,
        "contrasts": result.contrasts,
        "caption": (
            f"Model-based wave means: {result.meta['formula']} (REML; Kenward-Roger df; "
            f"{result.meta['n_obs']} scores of {result.meta['n_subjects']} participants)"
        ),
        "problem": status.split(": ", 1)[1] if failed and ": " in status else None,
        "sentence": None
        if failed
        else wave_means_sentence(
            result, observed, label=ctx.labels[column], ci_level=ctx.options.ci_level
        ),
    }


def wave_means_sentence(
    result: Any, observed: pd.DataFrame, *, label: str, ci_level: float = 0.95
) -> str:
    """Say what the model-based contrasts add to the complete-case analyses of one scale.

    Parameters
    ----------
    result : ModelWaveMeans
        :func:`longitudinal.change.wave_means.model_wave_means` of the scale.
    observed : pandas.DataFrame
        The paired t tests of the same scale (``ChangeResult.pairwise``), for the agreement.
    label : str
        The scale's name in the text.
    ci_level : float, default 0.95
        The level of the intervals (``1 - ci_level`` is the significance level).

    Returns
    -------
    str
        The participants the model uses against the complete cases; the contrasts whose
        (Bonferroni) interval excludes zero, with a direction; whether the Holm-adjusted
        p-values agree with those of the paired t tests; the small-sample caveat.
    """
    meta = result.meta
    n_model, n_complete = int(meta["n_subjects"]), int(meta["n_complete"])
    pct = f"{100 * ci_level:g}%"
    alpha = 1 - ci_level
    if n_model > n_complete:
        text = (
            f"The model-based contrasts of {label} use all "
            f"{count_noun(n_model, 'participant')} with a score at any wave ({meta['n_obs']} "
            f"scores), where the repeated-measures ANOVA uses the "
            f"{count_noun(n_complete, 'complete case')}."
        )
    else:
        text = (
            f"With no wave missing, the model-based contrasts of {label} use the same "
            f"{count_noun(n_model, 'participant')} as the complete-case analyses, and its wave "
            "means equal the observed means."
        )
    table = result.contrasts
    status = [effect_status(r.ci_low, r.ci_high, r.df) for r in table.itertuples(index=False)]
    if "unusable" in status:
        return text + " An interval of the contrasts is not usable, so they are not interpreted."
    clear = [r for r, s in zip(table.itertuples(index=False), status, strict=True) if s == "clear"]
    if clear:
        parts = [
            f"{'higher' if r.estimate > 0 else 'lower'} at {r.wave_to} than at {r.wave_from} "
            f"by {apa_num(abs(r.estimate))} points ({pct} CI {apa_ci(r.ci_low, r.ci_high)}, "
            f"t({apa_df(r.df)}) = {apa_num(r.statistic)}, Holm-adjusted {p_text(r.p_value)})"
            for r in clear
        ]
        text += f" By the model, {label} was " + "; ".join(parts) + "."
    else:
        text += (
            " No contrast between waves has an interval that excludes zero, so the model shows "
            "no change."
        )
    text += _agreement(table, observed, alpha)
    return text + small_sample_caveat(n_model, what="these estimates are")


def _agreement(model: pd.DataFrame, observed: pd.DataFrame, alpha: float) -> str:
    """Say whether the model's and the paired tests' Holm p-values fall on the same side."""
    if observed.empty or "p_holm" not in observed.columns:
        return ""
    held = observed.set_index("term")["p_holm"]
    differ = []
    for r in model.itertuples(index=False):
        other = held.get(r.contrast)
        if other is None or pd.isna(other) or pd.isna(r.p_value):
            continue
        if (r.p_value < alpha) != (other < alpha):
            differ.append(f"{r.wave_from} to {r.wave_to}")
    if not differ:
        verdict = f"the same verdict at p < {apa_unit(alpha)}"
        return f" The paired t tests (Holm) reach {verdict} on every pair."
    return (
        f" The paired t tests (Holm; participants observed at both waves) reach the other "
        f"verdict at p < {apa_unit(alpha)} for {', '.join(differ)}."
    )
