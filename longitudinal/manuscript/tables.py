"""The manuscript's APA tables, built from the report's tables (``tables/*.csv``).

Every number comes from the DataFrames the report writes, formatted by
:mod:`longitudinal.narrate.numbers`, so a table and its CSV agree at the printed precision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._wording import count_noun, with_article
from longitudinal.manuscript._wave_means import wave_contrasts_table, wave_means_table
from longitudinal.manuscript.table import ApaTable
from longitudinal.narrate.gates import FAILED, is_failed
from longitudinal.narrate.markup import GroupRow, literal
from longitudinal.narrate.numbers import DASH, apa_ci, apa_df, apa_num, apa_p, apa_unit
from longitudinal.narrate.sentences import HUYNH_FELDT_ABOVE, choose_correction
from longitudinal.study.frames import scale_column

__all__ = ["ScaleScoring", "apa_tables", "scoring_note"]

_SHORT = {"none": "none", "greenhouse-geisser": "GG", "huynh-feldt": "HF"}


def _pct(level: float) -> str:
    return f"{100 * level:g}%"


def _get(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    table = tables.get(name)
    return pd.DataFrame() if table is None else table


def _label(labels: Mapping[str, str], column: str) -> str:
    """Return the readable name of a score column as marked-up text (it comes from the study)."""
    return literal(labels.get(column, column.replace("_", " ")))


def _n_per_wave(descriptives: pd.DataFrame, waves: Sequence[str]) -> str:
    if descriptives.empty:
        return ""
    first = descriptives[descriptives["scale"] == descriptives["scale"].iloc[0]]
    by = first.set_index("wave")["n"]
    return ", ".join(f"{literal(w)} {int(by[w])}" for w in waves if w in by.index)


def _exclusions(counts: pd.DataFrame) -> str:
    rows = counts[counts["scope"] == "study"] if not counts.empty else counts
    if rows.empty:
        return "No rows were excluded."
    parts = [
        f"{count_noun(int(r.n), 'row')} of {literal(r.file)} ({literal(r.reason)})"
        for r in rows.itertuples(index=False)
    ]
    return "Excluded: " + "; ".join(parts) + "."


def _count(sample: pd.DataFrame, quantity: str) -> Any:
    hit = sample.loc[sample["quantity"] == quantity, "n"]
    return int(hit.iloc[0]) if len(hit) else None


def sample_table(tables, *, waves, scale_min, scale_max, number=1) -> ApaTable | None:
    """Table 1: participants, demographics, surveys per wave, sessions and ratings."""
    sample = _get(tables, "sample")
    if sample.empty:
        return None
    listed = _count(sample, "participants listed")
    rows: list[Any] = [GroupRow("Participants")]
    rows.append(("Listed", str(listed), "", "", ""))
    rows.append(("With a kept rating", str(_count(sample, "participants with a kept rating")),
                 "", "", ""))  # fmt: skip
    demo = _get(tables, "demographics")
    for rec in demo.itertuples(index=False):
        if isinstance(rec.level, str) and rec.level:
            share = 100 * rec.n / listed if listed else np.nan
            rows.append((literal(f"{rec.variable}: {rec.level}"), str(int(rec.n)), "", "",
                         apa_num(share, 1)))  # fmt: skip
        else:
            rows.append((literal(rec.variable), str(int(rec.n)), apa_num(rec.mean), apa_num(rec.sd),
                         ""))  # fmt: skip
    rows.append(GroupRow("Surveys"))
    for wave in waves:
        n = _count(sample, f"participants with {with_article(f'{wave} survey')}")
        rows.append((f"Completed at {literal(wave)}", DASH if n is None else str(n), "", "", ""))
    rows.append(GroupRow("Sessions and ratings"))
    rows.append(("Sessions", str(_count(sample, "sessions kept")), "", "", ""))
    ratings = _get(tables, "ratings_summary")
    scale = f"{scale_min:g}–{scale_max:g}"
    for group, text in (("all", f"Empathy ratings ({scale})"),
                        ("participant means", f"Participant mean ratings ({scale})")):  # fmt: skip
        hit = ratings[ratings["group"] == group] if not ratings.empty else ratings
        if len(hit):
            r = hit.iloc[0]
            rows.append((text, str(int(r["n"])), apa_num(r["mean"]), apa_num(r["sd"]), ""))
    note = (
        f"*M* = mean; *SD* = standard deviation; % = share of the {listed} listed participants. "
        f"Empathy was rated on {with_article(f'{scale} scale')}. "
        f"{_exclusions(_get(tables, 'exclusion_counts'))}"
    )
    return ApaTable(
        number=number,
        name="sample",
        title="Sample Characteristics",
        columns=("Characteristic", "*n*", "*M*", "*SD*", "%"),
        rows=tuple(rows),
        note=note,
        sources=("sample", "demographics", "ratings_summary", "exclusion_counts"),
    )


def _alpha_lookup(reliability: pd.DataFrame) -> dict[tuple[str, str], float]:
    if reliability.empty:
        return {}
    return {
        (scale_column(r.instrument, r.scale), str(r.wave)): r.alpha
        for r in reliability.itertuples(index=False)
    }


@dataclass(frozen=True)
class ScaleScoring:
    """How the scores of one instrument (or one of its scales) were formed, for a table note.

    Attributes
    ----------
    name : str
        The instrument's title, or a scale's label when the instrument's scales differ.
    scoring : {"mean", "sum", "count"}
        The rule (:attr:`surveys.instruments.ScaleKey.scoring`).
    n_items : int
        Items per scale.
    low, high : float
        The lowest and highest possible score (:attr:`ScaleKey.score_range`).
    multiplier : float, default 1.0
        Factor applied after the rule (WHO-5 percentage: 4).
    n_scales : int, default 1
        Scales of the instrument that share this rule, items and range.
    """

    name: str
    scoring: str
    n_items: int
    low: float
    high: float
    multiplier: float = 1.0
    n_scales: int = 1


_RULES = {
    "mean": "means of the answered items",
    "sum": "sums of the items",
    "count": "counts of the items endorsed",
}


def _and(items: Sequence[str], last: str = " and ") -> str:
    items = [i for i in items if i]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + last + items[-1]


def scoring_note(scorings: Sequence[ScaleScoring]) -> str:
    """Say how the study's scores were formed: the rule, items and possible range of each.

    Parameters
    ----------
    scorings : sequence of ScaleScoring
        One per instrument (or scale) in the table, in table order.

    Returns
    -------
    str
        One sentence grouped by rule; empty when ``scorings`` is.

    Examples
    --------
    >>> from longitudinal.manuscript.tables import ScaleScoring, scoring_note
    >>> print(scoring_note([
    ...     ScaleScoring("UBC State Social Connection Scale", "mean", 10, 1, 7),
    ...     ScaleScoring("Rapport with the robot", "sum", 5, 5, 25),
    ...     ScaleScoring("Mini-IPIP", "sum", 4, 4, 20, n_scales=5)]))
    Scores are means of the answered items for UBC State Social Connection Scale (10 items,
    range 1–7), and sums of the items for Rapport with the robot (5 items, range 5–25) and
    Mini-IPIP (4 items per scale, range 4–20).
    """
    groups: dict[str, list[str]] = {}
    for s in scorings:
        rule = _RULES.get(s.scoring, f"{s.scoring} scores of the items")
        if s.multiplier != 1:
            rule += f" times {s.multiplier:g}"
        items = f"{s.n_items} item{'' if s.n_items == 1 else 's'}"
        if s.n_scales > 1:
            items += " per scale"
        entry = f"{literal(s.name)} ({items}, range {s.low:g}–{s.high:g})"
        groups.setdefault(rule, []).append(entry)
    if not groups:
        return ""
    parts = [f"{rule} for {_and(names)}" for rule, names in groups.items()]
    return "Scores are " + _and(parts, ", and ") + "."


def descriptives_table(tables, *, labels, waves, number, scoring=()) -> ApaTable | None:
    """Descriptives per wave (n, M, SD, α) of every state scale, and the traits.

    The note says how the scores were formed (``scoring``, a sequence of
    :class:`ScaleScoring`: rule, items and possible range of each instrument).
    """
    desc = _get(tables, "descriptives")
    traits = _get(tables, "traits")
    if desc.empty and traits.empty:
        return None
    alpha = _alpha_lookup(_get(tables, "reliability"))
    rows: list[Any] = []
    for column in dict.fromkeys(desc["scale"]) if not desc.empty else []:
        rows.append(GroupRow(_label(labels, column)))
        for r in desc[desc["scale"] == column].itertuples(index=False):
            a = alpha.get((column, str(r.wave)), np.nan)
            rows.append((literal(r.wave), str(int(r.n)), apa_num(r.mean), apa_num(r.sd),
                         apa_unit(a)))  # fmt: skip
    if not traits.empty:
        rows.append(GroupRow(f"Traits (at {literal(waves[0])})"))
        for r in traits.itertuples(index=False):
            a = alpha.get((r.scale, str(waves[0])), np.nan)
            rows.append((_label(labels, r.scale), str(int(r.n)), apa_num(r.mean),
                         apa_num(r.sd), apa_unit(a)))  # fmt: skip
    note = (
        "*n* = participants with a score; *M* = mean; *SD* = standard deviation; α = "
        "Cronbach's alpha at that wave (– where undefined, e.g. a one-item scale)."
    )
    described = scoring_note(scoring)
    if described:
        note += " " + described
    return ApaTable(
        number=number,
        name="descriptives",
        title="Means, Standard Deviations and Internal Consistency per Wave",
        columns=("Scale and wave", "*n*", "*M*", "*SD*", "α"),
        rows=tuple(rows),
        note=note,
        sources=("descriptives", "traits", "reliability"),
    )


def anova_table(tables, *, labels, waves, number) -> ApaTable | None:
    """Tabulate the repeated-measures ANOVA (corrected df, ε) and the Friedman test per scale."""
    anova = _get(tables, "rm_anova")
    if anova.empty:
        return None
    friedman = _get(tables, "friedman")
    models = _get(tables, "change_models")
    rows, left = [], []
    for column in dict.fromkeys(anova["scale"]):
        row = choose_correction(anova[anova["scale"] == column])
        fr = friedman[friedman["scale"] == column] if not friedman.empty else friedman
        f = fr.iloc[0] if len(fr) else None
        rows.append((
            _label(labels, column),
            _SHORT.get(str(row["correction"]), str(row["correction"])),
            apa_unit(row["epsilon"], 3),
            apa_df(row["df1"]),
            apa_df(row["df2"]),
            apa_num(row["statistic"]),
            apa_p(row["p_value"]),
            apa_unit(row["eta_sq_generalized"], 3),
            DASH if f is None else apa_num(f["statistic"]),
            DASH if f is None else apa_df(f["df"]),
            DASH if f is None else apa_p(f["p_value"]),
            DASH if f is None else apa_unit(f["kendall_w"], 3),
            str(int(row["n"])),
        ))  # fmt: skip
        if not models.empty and column in set(models["scale"]):
            m = models.set_index("scale").loc[column]
            if m["rm_n_excluded"] and m["rm_n_excluded"] > 0:
                reasons = m.get("rm_left_out")
                who = count_noun(int(m["rm_n_excluded"]), "participant")
                left.append(
                    f"{_label(labels, column)}, {who}"
                    + (f" ({literal(reasons)})" if isinstance(reasons, str) and reasons else "")
                )
    note = (
        "Complete cases only. Corr. = sphericity correction; ε = its factor; GG = "
        "Greenhouse–Geisser; HF = Huynh–Feldt (reported when the GG ε is above "
        f"{apa_unit(HUYNH_FELDT_ABOVE)}); none = two "
        "waves, where sphericity holds; *df*_{1}, *df*_{2} = corrected degrees of freedom; "
        "η²_{G} = generalized eta squared; χ² = Friedman statistic; *W* = Kendall's *W*; "
        f"*n* = complete cases. *n* per wave: {_n_per_wave(_get(tables, 'descriptives'), waves)}. "
        + (
            "Left out of the complete cases: " + "; ".join(left) + "."
            if left
            else "No participant was left out of the complete cases."
        )
    )
    return ApaTable(
        number=number,
        name="rm_anova",
        title="Repeated-Measures Analyses of Variance and Friedman Tests Across the Waves",
        columns=(
            "Scale",
            "Corr.",
            "ε",
            "*df*_{1}",
            "*df*_{2}",
            "*F*",
            "*p*",
            "η²_{G}",
            "χ²",
            "*df*",
            "*p*",
            "*W*",
            "*n*",
        ),  # fmt: skip
        rows=tuple(rows),
        note=note,
        numeric=(False, False) + (True,) * 11,
        sources=("rm_anova", "friedman", "change_models", "descriptives"),
    )


def pairwise_table(tables, *, labels, waves, ci_level, number) -> ApaTable | None:
    """Paired t tests between waves (Holm) with d_z and g_av and their intervals."""
    pairs = _get(tables, "pairwise")
    if pairs.empty:
        return None
    eff = _get(tables, "effect_sizes")
    rows: list[Any] = []
    for column in dict.fromkeys(pairs["scale"]):
        rows.append(GroupRow(_label(labels, column)))
        for r in pairs[pairs["scale"] == column].itertuples(index=False):
            cells = [
                f"{literal(r.wave_from)} → {literal(r.wave_to)}",
                apa_num(r.estimate),
                apa_ci(r.ci_low, r.ci_high),
                apa_num(r.statistic),
                apa_df(r.df),
                apa_p(r.p_value),
                apa_p(r.p_holm),
            ]
            for measure in ("d_z", "g_av"):
                hit = eff[(eff["scale"] == column) & (eff["term"] == r.term)
                          & (eff["measure"] == measure)]  # fmt: skip
                if hit.empty:
                    cells += [DASH, DASH]
                else:
                    e = hit.iloc[0]
                    cells += [apa_num(e["estimate"]), apa_ci(e["ci_low"], e["ci_high"])]
            cells.append(str(int(r.n)))
            rows.append(tuple(cells))
    pct = _pct(ci_level)
    note = (
        f"*M*_{{diff}} = mean change (later minus earlier wave) with its {pct} CI; *t* = paired "
        "*t* test; *p*_{Holm} = Holm-adjusted over the comparisons of each scale; *d*_{z} = "
        f"mean change / SD of the changes ({pct} CI from the noncentral *t*); *g*_{{av}} = mean "
        f"change / average SD of the two waves, bias-corrected ({pct} CI by the delta method); "
        "*n* = participants observed at both waves. CI = confidence interval. *n* per wave: "
        f"{_n_per_wave(_get(tables, 'descriptives'), waves)}."
    )
    return ApaTable(
        number=number,
        name="pairwise",
        title="Pairwise Changes Between Waves",
        columns=(
            "Comparison",
            "*M*_{diff}",
            f"{pct} CI",
            "*t*",
            "*df*",
            "*p*",
            "*p*_{Holm}",
            "*d*_{z}",
            f"{pct} CI",
            "*g*_{av}",
            f"{pct} CI",
            "*n*",
        ),  # fmt: skip
        rows=tuple(rows),
        note=note,
        sources=("pairwise", "effect_sizes", "descriptives"),
    )


def growth_table(tables, *, labels, ci_level, time_unit, number) -> ApaTable | None:
    """Tabulate the growth model of each scale: fixed effects, random SDs, fit problems."""
    fixed = _get(tables, "growth_fixed")
    if fixed.empty:
        return None
    random = _get(tables, "growth_random")
    models = _get(tables, "change_models")
    models = models.set_index("scale") if not models.empty else models
    per = time_unit[:-1] if time_unit.endswith("s") else time_unit
    rows: list[Any] = []
    remarks = []
    for column in dict.fromkeys(fixed["scale"]):
        rows.append(GroupRow(_label(labels, column)))
        for r in fixed[fixed["scale"] == column].itertuples(index=False):
            term = "Intercept" if r.term == "Intercept" else f"Time (per {per})"
            rows.append((term, apa_num(r.estimate, 3), apa_num(r.se, 3), apa_df(r.df),
                         apa_num(r.statistic), apa_p(r.p_value),
                         apa_ci(r.ci_low, r.ci_high, 3)))  # fmt: skip
        sds = random[random["scale"] == column] if not random.empty else random
        sd_text = ", ".join(
            f"{'residual' if not isinstance(s.term, str) or not s.term else s.term} "
            f"{apa_num(s.sd, 3)}"
            for s in sds.itertuples(index=False)
        )
        remark = f"{_label(labels, column)}: SD {sd_text}"
        if column in models.index:
            m = models.loc[column]
            remark += f"; {int(m['n_obs'])} observations of {int(m['n_subjects'])} participants"
            if isinstance(m["fallback_reason"], str) and m["fallback_reason"]:
                remark += f"; random slope dropped ({m['fallback_reason']})"
            if isinstance(m["problems"], str) and m["problems"]:
                remark += f"; the model shown is {m['problems']} and is not interpreted"
        remarks.append(remark)
    pct = _pct(ci_level)
    note = (
        f"Linear mixed models of each score on time ({time_unit} since the first wave, from the "
        "median survey dates), REML, *t* tests with Satterthwaite *df*; *b* = estimate; *SE* = "
        f"standard error; CI = {pct} confidence interval. Random effects (standard deviations) "
        "and fits: " + "; ".join(remarks) + "."
    )
    return ApaTable(
        number=number,
        name="growth",
        title="Linear Growth Models of the State Scales",
        columns=("Scale and term", "*b*", "*SE*", "*df*", "*t*", "*p*", f"{pct} CI"),
        rows=tuple(rows),
        note=note,
        sources=("growth_fixed", "growth_random", "change_models"),
    )


def _failed_engines(frame: pd.DataFrame) -> set[str]:
    """Engines whose rows say that the model failed its checks (a ``status`` column)."""
    if "status" not in frame.columns:
        return set()
    return set(frame.loc[frame["status"].map(is_failed), "engine"])


def _part_label(rec: Any) -> str:
    label = literal(rec.label[:1].upper() + rec.label[1:])
    if rec.part in ("between", "within"):
        label += f" ({rec.part})"
    return label


def effects_table(tables, *, ci_level, scale_min, scale_max, n_obs, n_participants, gates,
                  number) -> ApaTable | None:  # fmt: skip
    """Tabulate what predicts empathy: the linear and the ordinal mixed model side by side.

    A model whose rows' ``status`` says it failed its checks
    (:func:`longitudinal.narrate.gates.with_status`) shows "failed" and no number.
    """
    effects = _get(tables, "empathy_effects")
    if effects.empty:
        return None
    failed = _failed_engines(effects)
    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    clmm = effects[(effects["engine"] == "clmm") & (effects["scale"] == "logit")]
    clmm = clmm.set_index("term")
    with_clmm = not clmm.empty
    rows = []
    for r in lmm.itertuples(index=False):
        t = r.estimate / r.se if r.se > 0 else np.nan
        cells = [_part_label(r), apa_num(r.estimate), apa_num(r.se), apa_df(r.df), apa_num(t),
                 apa_p(r.p_value), apa_ci(r.ci_low, r.ci_high)]  # fmt: skip
        if "lmm" in failed:
            cells = [_part_label(r), FAILED] + [""] * 5
        if with_clmm:
            if "clmm" in failed:
                cells += [FAILED, "", "", ""]
            elif r.term in clmm.index:
                c = clmm.loc[r.term]
                z = c["estimate"] / c["se"] if c["se"] > 0 else np.nan
                cells += [apa_num(c["estimate"]), apa_num(c["se"]), apa_num(z),
                          apa_p(c["p_value"])]  # fmt: skip
            else:
                cells += [DASH] * 4
        rows.append(tuple(cells))
    pct = _pct(ci_level)
    columns = ["Predictor", "*b*", "*SE*", "*df*", "*t*", "*p*", f"{pct} CI"]
    if with_clmm:
        columns += ["logit", "*SE*", "*z*", "*p*"]
    note = (
        f"{n_obs} ratings of {n_participants} participants on the "
        f"{scale_min:g}–{scale_max:g} scale. "
        "Effects per SD of each predictor (time: per week); states and session features are "
        "split into a between-person part (the person's average) and a within-person part. "
        f"*b*, *SE*, *df*, *t*, *p*, CI: linear mixed model (rating points, Satterthwaite *df*, "
        f"{pct} CI)"
        + (
            "; logit, *SE*, *z*, *p*: cumulative link (ordinal) mixed model, coefficients on "
            "the latent logit scale (Wald *z* tests)"
            if with_clmm
            else ""
        )
        + ". "
        + (
            f"{FAILED} = the model failed its checks; its estimates are not reported. "
            if failed
            else ""
        )
        + " ".join(gates)
    ).strip()
    return ApaTable(
        number=number,
        name="empathy_effects",
        title="Predictors of the Empathy Ratings: Linear and Ordinal Mixed Models",
        columns=tuple(columns),
        rows=tuple(rows),
        note=note,
        sources=("empathy_effects",),
    )


_MODELS = {
    ("lmm", "unconditional"): "Linear mixed model, intercepts only",
    ("lmm", "conditional"): "Linear mixed model with the predictors",
    ("clmm", "conditional"): "Ordinal mixed model with the predictors (logit scale)",
    ("bayes_ordinal", "conditional"): "Bayesian ordinal model (logit scale)",
    ("bayes_gaussian", "conditional"): "Bayesian linear mixed model (rating scale)",
}


def variance_table(tables, *, number) -> ApaTable | None:
    """Variance components of the empathy models and their shares (ICC).

    The components of a model whose ``status`` says it failed its checks show "failed" and
    no number.
    """
    variance = _get(tables, "empathy_variance")
    if variance.empty:
        return None
    rows: list[Any] = []
    failed_any = False
    for (engine, model), part in variance.groupby(["engine", "model"], sort=False):
        rows.append(GroupRow(_MODELS.get((engine, model), f"{engine} {model}")))
        for r in part.itertuples(index=False):
            if is_failed(getattr(r, "status", None)):
                failed_any = True
                rows.append((r.component.capitalize(), FAILED, ""))
                continue
            boundary = " (at 0)" if bool(r.at_boundary) else ""
            rows.append((f"{r.component.capitalize()}{boundary}", apa_num(r.variance, 3),
                         apa_unit(r.icc, 3)))  # fmt: skip
    note = (
        "Variance of the random intercepts (participant, session, story) and of the residual "
        "(ordinal models: the logistic π²/3); ICC = share of the total variance. (at 0) = "
        "variance estimated at the boundary: the fit is singular."
        + (
            f" {FAILED} = the model failed its checks; its estimates are not reported."
            if failed_any
            else ""
        )
    )
    return ApaTable(
        number=number,
        name="empathy_variance",
        title="Variance Components of the Empathy Ratings",
        columns=("Model and component", "Variance", "ICC"),
        rows=tuple(rows),
        note=note,
        sources=("empathy_variance",),
    )


def reliability_table(tables, *, labels, ci_level, number) -> ApaTable | None:
    """Cronbach's α with its interval and ω total of each scale at each wave."""
    rel = _get(tables, "reliability")
    if rel.empty:
        return None
    rows = []
    for r in rel.itertuples(index=False):
        column = scale_column(r.instrument, r.scale)
        rows.append((_label(labels, column), literal(r.wave), str(int(r.n)), str(int(r.n_items)),
                     apa_unit(r.alpha), apa_ci(r.alpha_ci_low, r.alpha_ci_high, unit=True),
                     apa_unit(r.omega_total)))  # fmt: skip
    pct = _pct(ci_level)
    note = (
        "*n* = respondents; *k* = items; α = Cronbach's alpha with its Feldt "
        f"{pct} CI; ω = McDonald's omega total; – = undefined (one-item or two-item scales "
        "have no omega, a one-item scale no alpha)."
    )
    return ApaTable(
        number=number,
        name="reliability",
        title="Internal Consistency of Each Scale at Each Wave",
        columns=("Scale", "Wave", "*n*", "*k*", "α", f"{pct} CI", "ω"),
        rows=tuple(rows),
        note=note,
        numeric=(False, False, True, True, True, True, True),
        sources=("reliability",),
    )


def multilevel_table(tables, *, labels, number) -> ApaTable | None:
    """Multilevel reliability (psych's ``mlr``) of each state scale at two or more waves."""
    ml = _get(tables, "multilevel_reliability")
    if ml.empty:
        return None
    coefficients = ("RkF", "R1R", "RkR", "Rc", "RkRn", "Rcn")
    rows = []
    for r in ml.itertuples(index=False):
        label = _label(labels, scale_column(r.instrument, r.scale))
        values = tuple(apa_unit(getattr(r, c)) for c in coefficients)
        rows.append((label, str(int(r.n_persons)), str(int(r.n_occasions)), str(int(r.n_items)),
                     str(r.method).upper(), *values))  # fmt: skip
    low = [
        f"{_label(labels, scale_column(r.instrument, r.scale))} ({r.flag})"
        for r in ml.itertuples(index=False)
        if isinstance(getattr(r, "flag", ""), str) and getattr(r, "flag", "")
    ]
    note = (
        "Generalizability coefficients of Shrout and Lane (2012) from the person × wave × item "
        "variance components (ANOVA for complete answers, REML otherwise): RkF = reliability "
        "of a person's average over these waves; R1R = of one randomly chosen wave; RkR = of "
        "the average over random waves; Rc = of change within a person; RkRn and Rcn from the "
        "nested design (items not crossed with waves). *n* = persons; *k* = items. "
        + ("Below .70: " + "; ".join(low) + "." if low else "No coefficient is below .70.")
    )
    return ApaTable(
        number=number,
        name="multilevel_reliability",
        title="Reliability Within and Across People for the State Scales",
        columns=("Scale", "*n*", "Waves", "*k*", "Method", *coefficients),
        rows=tuple(rows),
        note=note,
        numeric=(False, True, True, True, False, True, True, True, True, True, True),
        sources=("multilevel_reliability",),
    )


def apa_tables(
    tables: Mapping[str, pd.DataFrame],
    *,
    labels: Mapping[str, str],
    waves: Sequence[str],
    scale_min: float,
    scale_max: float,
    ci_level: float = 0.95,
    time_unit: str = "weeks",
    n_obs: int | None = None,
    n_participants: int | None = None,
    gates: Sequence[str] = (),
    scoring: Sequence[ScaleScoring] = (),
) -> list[ApaTable]:
    """Build the manuscript's APA tables from the report's tables.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        The report's tables by name (``ctx.tables``, or the files of ``tables/`` read back):
        ``sample``, ``demographics``, ``ratings_summary``, ``exclusion_counts``,
        ``descriptives``, ``traits``, ``reliability``, ``rm_anova``, ``friedman``,
        ``change_models``, ``pairwise``, ``effect_sizes``, ``change_wave_means``,
        ``change_wave_contrasts``, ``growth_fixed``,
        ``growth_random``, ``empathy_effects``, ``empathy_variance``,
        ``multilevel_reliability``. A table that is absent
        or empty leaves its APA table out.
    labels : mapping of str to str
        Readable names of the score columns.
    waves : sequence of str
        The wave labels in order.
    scale_min, scale_max : float
        The declared rating scale (named in the notes: "1–7").
    ci_level : float, default 0.95
        The level every interval was computed at.
    time_unit : str, default "weeks"
        The growth model's time unit.
    n_obs, n_participants : int, optional
        Ratings and participants in the empathy models.
    gates : sequence of str
        Sentences saying which empathy model is not interpreted and why (added to the note).
    scoring : sequence of ScaleScoring
        How the scores of each instrument in the descriptives table were formed (its note
        says so); by default the note does not describe the scoring.

    Returns
    -------
    list of ApaTable
        Numbered in order: sample characteristics, descriptives per wave, RM-ANOVA and
        Friedman, pairwise changes, observed and model-based wave means, the contrasts
        between the model-based means, growth models,
        empathy predictors, variance components, reliability, multilevel reliability.

    See Also
    --------
    longitudinal.manuscript.write_manuscript : writes them to Word and LaTeX.
    """
    builders = [
        lambda k: sample_table(
            tables, waves=waves, scale_min=scale_min, scale_max=scale_max, number=k
        ),  # fmt: skip
        lambda k: descriptives_table(tables, labels=labels, waves=waves, number=k, scoring=scoring),
        lambda k: anova_table(tables, labels=labels, waves=waves, number=k),
        lambda k: pairwise_table(tables, labels=labels, waves=waves, ci_level=ci_level, number=k),
        lambda k: wave_means_table(tables, labels=labels, ci_level=ci_level, number=k),
        lambda k: wave_contrasts_table(tables, labels=labels, ci_level=ci_level, number=k),
        lambda k: growth_table(
            tables, labels=labels, ci_level=ci_level, time_unit=time_unit, number=k
        ),  # fmt: skip
        lambda k: effects_table(
            tables,
            ci_level=ci_level,
            scale_min=scale_min,
            scale_max=scale_max,
            n_obs=n_obs,
            n_participants=n_participants,
            gates=list(gates),
            number=k,
        ),  # fmt: skip
        lambda k: variance_table(tables, number=k),
        lambda k: reliability_table(tables, labels=labels, ci_level=ci_level, number=k),
        lambda k: multilevel_table(tables, labels=labels, number=k),
    ]
    out: list[ApaTable] = []
    for build in builders:
        table = build(len(out) + 1)
        if table is not None and table.rows:
            out.append(table)
    return out
