"""Column lists and result classes of the change analysis.

Every result prints briefly (``repr``), gives a compact text table with ``summary()`` and
renders its main tables in a notebook (``_repr_html_``); the full tables are its fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._display import Result as _Shown
from longitudinal.narrate.gates import small_sample_caveat
from longitudinal.narrate.sentences import (
    anova_apa,
    friedman_apa,
    growth_apa,
    pairwise_apa,
    reliable_change_apa,
)

DESCRIBE_COLUMNS = [
    "wave",
    "n",
    "n_missing",
    "mean",
    "sd",
    "se",
    "ci_low",
    "ci_high",
    "median",
    "min",
    "max",
]
RM_ANOVA_COLUMNS = [
    "term",
    "correction",
    "epsilon",
    "df1",
    "df2",
    "statistic",
    "p_value",
    "ss_effect",
    "ss_error",
    "ss_subjects",
    "eta_sq_partial",
    "eta_sq_generalized",
    "n",
]
SPHERICITY_COLUMNS = [
    "term",
    "statistic",
    "chi2",
    "df",
    "p_value",
    "gg_epsilon",
    "hf_epsilon",
    "n",
]
EXCLUDED_COLUMNS = ["id", "n_observed", "missing_waves"]
PAIRWISE_COLUMNS = [
    "term",
    "wave_from",
    "wave_to",
    "estimate",
    "se",
    "df",
    "statistic",
    "p_value",
    "p_holm",
    "ci_low",
    "ci_high",
    "n",
]
EFFECT_SIZE_COLUMNS = [
    "term",
    "wave_from",
    "wave_to",
    "measure",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
    "n",
    "ci_method",
]
FRIEDMAN_COLUMNS = ["term", "statistic", "df", "p_value", "kendall_w", "n", "n_excluded"]
FIXED_COLUMNS = ["term", "estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high"]
RANDOM_COLUMNS = ["group", "term", "variance", "sd", "correlation"]
RCI_COLUMNS = ["id", "baseline", "followup", "change", "rci", "category"]
RCI_COUNT_COLUMNS = ["category", "n", "proportion"]
RCI_CATEGORIES = ("improved", "unchanged", "deteriorated")

DZ_CI_METHOD = "noncentral t (Steiger & Fouladi 1997)"
GAV_CI_METHOD = "delta method, normal theory (Bonett 2015 approach for the average-SD standardizer)"

# lme4's default tolerance for a singular fit: a diagonal element of the relative Cholesky
# factor of the random-effects covariance below 1e-4 (lme4::isSingular).
_SINGULAR_TOL = 1e-4


_ANOVA_SHOWN = ["correction", "epsilon", "df1", "df2", "statistic", "p_value",
                "eta_sq_generalized", "n"]  # fmt: skip
_PAIRWISE_SHOWN = ["wave_from", "wave_to", "estimate", "se", "df", "statistic", "p_value",
                   "p_holm", "n"]  # fmt: skip


def _shown(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Keep the columns worth printing; round numbers to 3 significant digits."""
    out = frame[[c for c in columns if c in frame.columns]].copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = [("–" if not np.isfinite(v) else f"{v:.3g}") for v in out[c]]
    return out


@dataclass(frozen=True, eq=False, repr=False)
class RMAnovaResult(_Shown):
    """Result of :func:`rm_anova`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per correction (``none``, ``greenhouse-geisser``, ``huynh-feldt``) with the
        columns ``term, correction, epsilon, df1, df2, statistic, p_value, ss_effect, ss_error,
        ss_subjects, eta_sq_partial, eta_sq_generalized, n``.
    sphericity : pandas.DataFrame
        Mauchly's test: ``term, statistic (W), chi2, df, p_value, gg_epsilon, hf_epsilon, n``.
    excluded : pandas.DataFrame
        Subjects left out because a wave is missing: ``id, n_observed, missing_waves``.
    meta : dict
        ``n_used``, ``n_excluded``, ``excluded_ids``, ``waves`` and the call's parameters.
    """

    table: pd.DataFrame
    sphericity: pd.DataFrame
    excluded: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        n = self.meta.get("n_used", "?")
        rows = self.table[self.table["correction"] == "none"] if not self.table.empty else None
        if rows is None or rows.empty:
            return f"RMAnovaResult(not computed; {n} complete subjects)"
        rec = rows.iloc[0]
        return (
            f"RMAnovaResult(F({rec['df1']:.3g}, {rec['df2']:.3g}) = {rec['statistic']:.3g}, "
            f"p = {rec['p_value']:.3g}; {n} complete cases, {self.meta.get('n_excluded', 0)} "
            "left out)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            (
                "Repeated-measures ANOVA",
                _shown(
                    self.table,
                    _ANOVA_SHOWN,
                ),
            ),
            ("Mauchly's test of sphericity", _shown(self.sphericity, SPHERICITY_COLUMNS[1:])),
        ]

    def to_apa(self, *, label: str = "the outcome") -> str:
        """Return the test as one APA sentence (Greenhouse–Geisser or Huynh–Feldt df with ε).

        See :func:`longitudinal.narrate.sentences.anova_apa`.
        """
        return anova_apa(
            self.table,
            label=label,
            n_waves=len(self.meta.get("waves", [])),
            n_excluded=int(self.meta.get("n_excluded") or 0),
        )


@dataclass(frozen=True, eq=False, repr=False)
class PairwiseChanges(_Shown):
    """Result of :func:`pairwise_changes`.

    Attributes
    ----------
    tests : pandas.DataFrame
        One paired t-test per pair of waves: ``term, wave_from, wave_to, estimate, se, df,
        statistic, p_value, p_holm, ci_low, ci_high, n``.
    effect_sizes : pandas.DataFrame
        Two rows per pair (``measure`` = ``d_z`` and ``g_av``): ``term, wave_from, wave_to,
        measure, estimate, se, ci_low, ci_high, n, ci_method``.
    meta : dict
        The call's parameters and the adjustment method.
    """

    tests: pd.DataFrame
    effect_sizes: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        return f"PairwiseChanges({len(self.tests)} pairs of waves, Holm-adjusted)"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            (
                "Paired t tests",
                _shown(
                    self.tests,
                    _PAIRWISE_SHOWN,
                ),
            ),
            (
                "Effect sizes",
                _shown(
                    self.effect_sizes,
                    ["wave_from", "wave_to", "measure", "estimate", "ci_low", "ci_high"],
                ),
            ),
        ]

    def to_apa(self, *, label: str = "the outcome") -> str:
        """One APA sentence per pair of waves; a direction only when the interval excludes 0.

        See :func:`longitudinal.narrate.sentences.pairwise_apa`.
        """
        level = self.meta.get("ci_level", self.meta.get("parameters", {}).get("ci_level", 0.95))
        return " ".join(pairwise_apa(self.tests, self.effect_sizes, label=label, ci_level=level))


@dataclass(frozen=True, eq=False, repr=False)
class GrowthModelResult(_Shown):
    """Result of :func:`growth_model`.

    Attributes
    ----------
    fixed : pandas.DataFrame
        Fixed effects ``term, estimate, se, df, statistic, p_value, ci_low, ci_high`` for
        ``Intercept`` and ``time``.
    random : pandas.DataFrame
        Variance components ``group, term, variance, sd, correlation``; the correlation of the
        random intercept and slope sits on the slope row.
    meta : dict
        ``formula``, ``random_effects`` (``"intercept + slope"`` or ``"intercept"``),
        ``fallback_reason`` (None unless the random slope was dropped), ``problems`` (of the
        model returned: singular, not converged; empty when none), ``backend``,
        ``inference`` (``"t, Satterthwaite df"`` or a Wald z fallback), ``reml``,
        ``reml_criterion``, ``converged``, ``backend_messages``, ``n_obs``, ``n_subjects``,
        ``n_subjects_incomplete`` (kept with a missing wave), ``n_subjects_no_data``,
        ``time_coding`` and the call's parameters.
    """

    fixed: pd.DataFrame
    random: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        slope = self.fixed[self.fixed["term"] != "Intercept"] if not self.fixed.empty else None
        if slope is None or slope.empty:
            return "GrowthModelResult(not computed)"
        rec = slope.iloc[0]
        return (
            f"GrowthModelResult({rec['term']} {rec['estimate']:+.3g} per unit, "
            f"p = {rec['p_value']:.3g}; random {self.meta.get('random_effects', '?')}; "
            f"{self.meta.get('n_subjects', '?')} subjects)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            ("Fixed effects", _shown(self.fixed, FIXED_COLUMNS)),
            ("Random effects", _shown(self.random, RANDOM_COLUMNS)),
        ]

    def to_apa(self, *, label: str = "the outcome", time_unit: str | None = None) -> str:
        """Return the slope in APA style; a singular or unconverged model is said to be one.

        See :func:`longitudinal.narrate.sentences.growth_apa`.
        """
        level = self.meta.get("ci_level", self.meta.get("parameters", {}).get("ci_level", 0.95))
        return growth_apa(
            self.fixed, self.random, label=label, model=self.meta, time_unit=time_unit,
            ci_level=level,
        )  # fmt: skip


@dataclass(frozen=True, eq=False, repr=False)
class ReliableChangeResult(_Shown):
    """Result of :func:`reliable_change`.

    Attributes
    ----------
    people : pandas.DataFrame
        One row per subject observed at both waves: ``id, baseline, followup, change, rci,
        category``.
    counts : pandas.DataFrame
        ``category, n, proportion`` for ``improved``, ``unchanged`` and ``deteriorated``.
    meta : dict
        ``reliability``, ``reliability_source`` (a sentence for the report), ``sd_baseline``,
        ``s_diff``, ``criterion``, ``higher_is_better``, ``n``, ``n_excluded`` and parameters.
    """

    people: pd.DataFrame
    counts: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        if self.counts.empty:
            return "ReliableChangeResult(not computed)"
        counts = ", ".join(f"{r.n} {r.category}" for r in self.counts.itertuples(index=False))
        return f"ReliableChangeResult({counts})"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            ("Reliable change index (Jacobson & Truax)", _shown(self.counts, RCI_COUNT_COLUMNS))
        ]

    def to_apa(
        self, *, label: str = "the outcome", wave_from: str = "baseline", wave_to: str = "follow-up"
    ) -> str:
        """Return the counts of reliable improvement and deterioration in one sentence."""
        return reliable_change_apa(
            self.counts, label=label, source=self.meta.get("reliability_source"),
            wave_from=wave_from, wave_to=wave_to,
        )  # fmt: skip


@dataclass(frozen=True, eq=False, repr=False)
class ChangeResult(_Shown):
    """Everything :func:`change_analysis` computes for one scale.

    Every field is always present; a part that could not be computed is an empty DataFrame
    with its columns, and ``meta`` says why.

    Attributes
    ----------
    descriptives : pandas.DataFrame
        See :func:`describe_waves`.
    rm_anova : pandas.DataFrame
        ``RMAnovaResult.table`` of :func:`rm_anova`.
    sphericity : pandas.DataFrame
        ``RMAnovaResult.sphericity``.
    excluded : pandas.DataFrame
        Subjects left out of the complete-case analyses (RM-ANOVA, Friedman).
    pairwise : pandas.DataFrame
        ``PairwiseChanges.tests`` of :func:`pairwise_changes`.
    effect_sizes : pandas.DataFrame
        ``PairwiseChanges.effect_sizes``.
    friedman : pandas.DataFrame
        See :func:`friedman_test`.
    growth_fixed : pandas.DataFrame
        ``GrowthModelResult.fixed`` of :func:`growth_model`.
    growth_random : pandas.DataFrame
        ``GrowthModelResult.random``.
    reliable_change : pandas.DataFrame
        ``ReliableChangeResult.people`` of :func:`reliable_change` (empty when no reliability
        was given).
    reliable_change_counts : pandas.DataFrame
        ``ReliableChangeResult.counts``.
    meta : dict
        Package version, parameters, counts and the ``meta`` of each part (keys ``rm_anova``,
        ``pairwise``, ``growth``, ``reliable_change``).
    """

    descriptives: pd.DataFrame
    rm_anova: pd.DataFrame
    sphericity: pd.DataFrame
    excluded: pd.DataFrame
    pairwise: pd.DataFrame
    effect_sizes: pd.DataFrame
    friedman: pd.DataFrame
    growth_fixed: pd.DataFrame
    growth_random: pd.DataFrame
    reliable_change: pd.DataFrame
    reliable_change_counts: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        meta = self.meta
        outcome = meta.get("parameters", {}).get("outcome_col", meta.get("outcome", "?"))
        waves = meta.get("waves") or meta.get("parameters", {}).get("waves", [])
        parts = [f"ChangeResult({outcome!r}: waves {', '.join(map(str, waves))}"]
        anova = self.rm_anova
        if not anova.empty and "statistic" in anova.columns:
            rec = anova.iloc[0]
            parts.append(f"RM-ANOVA F = {rec['statistic']:.3g}, p = {rec['p_value']:.3g}")
        slope = self.growth_fixed
        if not slope.empty and (slope["term"] != "Intercept").any():
            rec = slope[slope["term"] != "Intercept"].iloc[0]
            parts.append(f"growth {rec['term']} {rec['estimate']:+.3g} per unit")
        return "; ".join(parts) + ")"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        anova = self.rm_anova
        return [
            ("Descriptives per wave", _shown(self.descriptives, DESCRIBE_COLUMNS)),
            (
                "Repeated-measures ANOVA",
                _shown(
                    anova,
                    _ANOVA_SHOWN,
                ),
            ),
            (
                "Pairwise changes (paired t, Holm)",
                _shown(
                    self.pairwise,
                    _PAIRWISE_SHOWN,
                ),
            ),
            ("Friedman test", _shown(self.friedman, FRIEDMAN_COLUMNS[1:])),
            ("Growth model: fixed effects", _shown(self.growth_fixed, FIXED_COLUMNS)),
            ("Reliable change", _shown(self.reliable_change_counts, RCI_COUNT_COLUMNS)),
        ]

    def to_apa(
        self, *, label: str | None = None, time_unit: str | None = None, left_out: str | None = None
    ) -> str:
        """Return the results paragraph of this scale in APA style.

        The RM-ANOVA, the Friedman test, each pairwise change, the growth model and reliable
        change, with the report's gates: an interval that includes zero is given no direction,
        a singular or unconverged growth model is reported as such, and below 20 participants
        the paragraph ends with the small-sample caveat.

        Parameters
        ----------
        label : str, optional
            The scale's name in the text (default: the outcome column).
        time_unit : str, optional
            The unit of the growth model's time (``"weeks"``); by default ``wave`` when the
            time is the wave's position, else "unit of time".
        left_out : str, optional
            Why the participants left out of the complete-case analyses have no score at
            some wave (see :func:`longitudinal.narrate.sentences.anova_apa`); without it
            they are "left out for a missing wave".

        Returns
        -------
        str
            The paragraph; statistics are marked ``*F*`` (italic) and ``_{G}`` (subscript).
        """
        meta = self.meta
        params = meta.get("parameters", {})
        label = label or str(params.get("outcome_col", meta.get("outcome", "the outcome")))
        waves = [str(w) for w in (meta.get("waves") or params.get("waves", []))]
        level = params.get("ci_level", meta.get("ci_level", 0.95))
        parts = [
            anova_apa(
                self.rm_anova, label=label, n_waves=len(waves),
                n_excluded=int(meta.get("n_excluded") or 0), left_out=left_out,
            ),
            friedman_apa(self.friedman),
            *pairwise_apa(self.pairwise, self.effect_sizes, label=label, ci_level=level),
            growth_apa(
                self.growth_fixed,
                self.growth_random,
                label=label,
                model=meta.get("growth", {}),
                time_unit=time_unit, ci_level=level,
            ),
        ]  # fmt: skip
        if waves:
            parts.append(
                reliable_change_apa(
                    self.reliable_change_counts,
                    label=label,
                    source=meta.get("reliability_source"),
                    wave_from=waves[0],
                    wave_to=waves[-1],
                )  # fmt: skip
            )
        caveat = small_sample_caveat(meta.get("n_subjects"), what="these estimates are")
        return " ".join(p for p in parts if p) + caveat
