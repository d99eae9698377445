"""Pre/mid/post change analysis of one repeated scale.

Every function takes a long table (one row per subject and wave) with a subject column, a wave
column whose labels are ordered by ``waves=``, and a numeric outcome column. A missing outcome
means a missing wave. Duplicated subject x wave rows are rejected, never averaged.

- :func:`describe_waves`: descriptives per wave.
- :func:`rm_anova`: one-way repeated-measures ANOVA on complete cases with Mauchly's test and the
  Greenhouse-Geisser / Huynh-Feldt corrections.
- :func:`pairwise_changes`: paired t-tests for each pair of waves with Holm-adjusted p values and
  the effect sizes d_z and g_av with confidence intervals.
- :func:`friedman_test`: Friedman's rank test on complete cases with Kendall's W.
- :func:`growth_model`: linear growth mixed model that keeps people with missing waves.
- :func:`reliable_change`: Jacobson-Truax reliable change index per person.
- :func:`change_analysis`: all of the above for one scale, as a :class:`ChangeResult`.
- :func:`imputed_change`, :func:`tipping_point`: the first-to-last change on the complete cases
  beside the one pooled over multiple imputations, and how far the dropouts' imputed values
  must be shifted for its conclusion to change (:mod:`longitudinal.change.imputed`).
- :func:`model_wave_means`: the wave means and their Holm contrasts from a mixed model with the
  wave as a factor and a random intercept, on every observed score
  (:mod:`longitudinal.change.wave_means`).

The repeated-measures ANOVA, Mauchly's test, the Greenhouse-Geisser epsilon, Friedman's test,
the paired t-tests and Holm's adjustment are computed by pingouin; this module adds the study's
conventions around them (complete or pairwise-complete cases with the excluded people listed,
NaN with a warning where a statistic is undefined) and what pingouin does not give (the
uncapped Huynh-Feldt epsilon car prints, exact d_z limits, g_av with its delta-method interval).
"""

from longitudinal.change.analysis import change_analysis
from longitudinal.change.anova import friedman_test, rm_anova
from longitudinal.change.describe import describe_waves
from longitudinal.change.growth import growth_model
from longitudinal.change.imputed import ImputedChange, TippingPoint, imputed_change, tipping_point
from longitudinal.change.pairwise import holm_adjust, pairwise_changes
from longitudinal.change.reliable import reliable_change
from longitudinal.change.results import (
    ChangeResult,
    GrowthModelResult,
    PairwiseChanges,
    ReliableChangeResult,
    RMAnovaResult,
)
from longitudinal.change.wave_means import ModelWaveMeans, model_wave_means

__all__ = [
    "ChangeResult",
    "GrowthModelResult",
    "ImputedChange",
    "ModelWaveMeans",
    "PairwiseChanges",
    "RMAnovaResult",
    "ReliableChangeResult",
    "TippingPoint",
    "change_analysis",
    "describe_waves",
    "friedman_test",
    "growth_model",
    "holm_adjust",
    "imputed_change",
    "model_wave_means",
    "pairwise_changes",
    "reliable_change",
    "rm_anova",
    "tipping_point",
]
