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

The repeated-measures ANOVA, Mauchly's test, the Greenhouse-Geisser epsilon, Friedman's test,
the paired t-tests and Holm's adjustment are computed by pingouin; this module adds the study's
conventions around them (complete or pairwise-complete cases with the excluded people listed,
NaN with a warning where a statistic is undefined) and what pingouin does not give (the
uncapped Huynh-Feldt epsilon car prints, exact d_z limits, g_av with its delta-method interval).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from longitudinal._errors import DataQualityWarning, InvalidParameterError
from surveys import InputValidationError, SurveysWarning, scale_reliability

__all__ = [
    "ChangeResult",
    "GrowthModelResult",
    "PairwiseChanges",
    "RMAnovaResult",
    "ReliableChangeResult",
    "change_analysis",
    "describe_waves",
    "friedman_test",
    "growth_model",
    "holm_adjust",
    "pairwise_changes",
    "reliable_change",
    "rm_anova",
]

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
EXCLUDED_COLUMNS = ["subject", "n_observed", "missing_waves"]
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
RCI_COLUMNS = ["subject", "baseline", "followup", "change", "rci", "category"]
RCI_COUNT_COLUMNS = ["category", "n", "proportion"]
RCI_CATEGORIES = ("improved", "unchanged", "deteriorated")

DZ_CI_METHOD = "noncentral t (Steiger & Fouladi 1997)"
GAV_CI_METHOD = "delta method, normal theory (Bonett 2015 approach for the average-SD standardizer)"

# lme4's default tolerance for a singular fit: a diagonal element of the relative Cholesky
# factor of the random-effects covariance below 1e-4 (lme4::isSingular).
_SINGULAR_TOL = 1e-4


# ---------------------------------------------------------------------------------------------
# Result containers
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RMAnovaResult:
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
        Subjects left out because a wave is missing: ``subject, n_observed, missing_waves``.
    meta : dict
        ``n_used``, ``n_excluded``, ``excluded_ids``, ``waves`` and the call's parameters.
    """

    table: pd.DataFrame
    sphericity: pd.DataFrame
    excluded: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class PairwiseChanges:
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


@dataclass(frozen=True, eq=False)
class GrowthModelResult:
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
        ``fallback_reason`` (None unless the random slope was dropped), ``backend``,
        ``inference`` (``"t, Satterthwaite df"`` or a Wald z fallback), ``reml``,
        ``reml_criterion``, ``converged``, ``backend_messages``, ``n_obs``, ``n_subjects``,
        ``n_subjects_incomplete`` (kept with a missing wave), ``n_subjects_no_data``,
        ``time_coding`` and the call's parameters.
    """

    fixed: pd.DataFrame
    random: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class ReliableChangeResult:
    """Result of :func:`reliable_change`.

    Attributes
    ----------
    people : pandas.DataFrame
        One row per subject observed at both waves: ``subject, baseline, followup, change, rci,
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


@dataclass(frozen=True, eq=False)
class ChangeResult:
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


# ---------------------------------------------------------------------------------------------
# Input handling
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Panel:
    wide: pd.DataFrame  # index: subjects (first-appearance order); columns: waves in order
    waves: tuple[Hashable, ...]


def _check_ci_level(ci_level: float, func: str) -> float:
    ok = isinstance(ci_level, float | int) and not isinstance(ci_level, bool)
    if not ok or not 0.0 < float(ci_level) < 1.0:
        raise InvalidParameterError(
            f"the `ci_level` parameter of {func} must be a float in (0, 1); got {ci_level!r}"
        )
    return float(ci_level)


def _check_bool(value: object, name: str, func: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise InvalidParameterError(
            f"the `{name}` parameter of {func} must be True or False; got {value!r}"
        )
    return bool(value)


def _check_waves(waves: object, func: str) -> tuple[Hashable, ...]:
    if isinstance(waves, str) or not isinstance(waves, Sequence):
        raise InvalidParameterError(
            f"the `waves` parameter of {func} must be a sequence of wave labels in time order, "
            f'e.g. ["pre", "mid", "post"]; got {waves!r}'
        )
    labels = tuple(waves)
    if len(labels) < 2:
        raise InvalidParameterError(
            f"the `waves` parameter of {func} needs at least two wave labels; got {labels!r}"
        )
    if len(set(labels)) != len(labels):
        raise InvalidParameterError(
            f"the `waves` parameter of {func} must not repeat a label; got {labels!r}"
        )
    return labels


def _panel(
    data: object,
    *,
    subject_col: str,
    wave_col: str,
    outcome_col: str,
    waves: object,
    func: str,
) -> _Panel:
    """Validate a long table and return the subject x wave matrix (no aggregation)."""
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {func} must be a pandas DataFrame in long format; "
            f"got {type(data).__name__}"
        )
    labels = _check_waves(waves, func)
    for name, col in (
        ("subject_col", subject_col),
        ("wave_col", wave_col),
        ("outcome_col", outcome_col),
    ):
        if not isinstance(col, str) or col not in data.columns:
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must name a column of `data` "
                f"({', '.join(map(str, data.columns))}); got {col!r}"
            )
    if len({subject_col, wave_col, outcome_col}) != 3:
        raise InvalidParameterError(
            f"{func} needs three different columns for `subject_col`, `wave_col` and "
            f"`outcome_col`; got {subject_col!r}, {wave_col!r}, {outcome_col!r}"
        )
    outcome = data[outcome_col]
    if not pd.api.types.is_numeric_dtype(outcome) or pd.api.types.is_bool_dtype(outcome):
        raise InvalidParameterError(
            f"the outcome column {outcome_col!r} given to {func} must be numeric; "
            f"got dtype {outcome.dtype}"
        )

    problems: list[dict[str, Any]] = []
    subj = data[subject_col]
    wave = data[wave_col]
    values = outcome.astype(float)
    for idx in data.index[subj.isna().to_numpy()]:
        problems.append(
            {"column": subject_col, "value": None, "reason": f"missing subject id (index {idx!r})"}
        )
    known = wave.isin(list(labels))
    for idx, val in wave[~known].items():
        problems.append(
            {
                "column": wave_col,
                "value": val,
                "reason": f"wave label not in waves={list(labels)!r} (index {idx!r})",
            }
        )
    infinite = np.isinf(values.to_numpy())
    for idx, val in values[infinite].items():
        problems.append(
            {"column": outcome_col, "value": val, "reason": f"infinite outcome (index {idx!r})"}
        )
    usable = subj.notna() & known
    dup = data.loc[usable].duplicated(subset=[subject_col, wave_col], keep=False)
    if dup.any():
        dups = data.loc[usable].loc[dup, [subject_col, wave_col]]
        for (sid, wv), grp in dups.groupby([subject_col, wave_col], sort=False):
            problems.append(
                {
                    "column": subject_col,
                    "value": sid,
                    "reason": (
                        f"subject {sid!r} has {len(grp)} rows at wave {wv!r} "
                        f"(index {', '.join(map(repr, grp.index))}); "
                        "one row per subject and wave is required"
                    ),
                }
            )
    if problems:
        cases = pd.DataFrame(problems)
        cases["file"] = None
        cases["row"] = None
        raise InputValidationError(
            cases, summary=f"{func}: invalid long-format data ({outcome_col!r} by {wave_col!r})"
        )

    keep = data.loc[usable, [subject_col, wave_col]].copy()
    keep["_y"] = values[usable]
    subjects = pd.unique(keep[subject_col])
    wide = keep.set_index([subject_col, wave_col])["_y"].unstack(wave_col)
    wide = wide.reindex(index=pd.Index(subjects, name=subject_col), columns=list(labels))
    wide.columns = pd.Index(list(labels), name=wave_col)
    return _Panel(wide=wide.astype(float), waves=labels)


def _excluded_table(wide: pd.DataFrame) -> pd.DataFrame:
    observed = wide.notna()
    incomplete = ~observed.all(axis=1)
    rows = [
        {
            "subject": sid,
            "n_observed": int(observed.loc[sid].sum()),
            "missing_waves": ", ".join(str(w) for w in wide.columns[~observed.loc[sid].to_numpy()]),
        }
        for sid in wide.index[incomplete.to_numpy()]
    ]
    return pd.DataFrame(rows, columns=EXCLUDED_COLUMNS)


def _package_version() -> str:
    from longitudinal import __version__

    return __version__


# ---------------------------------------------------------------------------------------------
# Descriptives
# ---------------------------------------------------------------------------------------------
def describe_waves(
    data: pd.DataFrame,
    *,
    subject_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Describe the outcome at each wave.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    subject_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column (the scale score).
    waves : sequence of hashable
        The wave labels in time order, e.g. ``["pre", "mid", "post"]``.
    ci_level : float, default 0.95
        Level of the t-based confidence interval of each wave mean.

    Returns
    -------
    pandas.DataFrame
        One row per wave with the columns ``wave``, ``n`` (subjects observed), ``n_missing``
        (subjects in ``data`` without a value at this wave), ``mean``, ``sd`` (n - 1
        denominator), ``se``, ``ci_low``, ``ci_high``, ``median``, ``min``, ``max``. Statistics
        that need more observations than there are are NaN.

    Raises
    ------
    InvalidParameterError
        A parameter has the wrong type or names no column.
    surveys.InputValidationError
        Duplicated subject x wave rows, wave labels outside ``waves``, missing ids or infinite
        outcomes (all listed in ``failure_cases``).

    See Also
    --------
    change_analysis : runs every part of the change analysis.

    Notes
    -----
    The interval is ``mean +/- t(1 - (1 - ci_level) / 2, n - 1) * sd / sqrt(n)``, as
    ``stats::t.test`` computes it for one sample.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import describe_waves
    >>> df = pd.DataFrame({"id": [1, 1, 2, 2, 3, 3], "wave": ["pre", "post"] * 3,
    ...                    "score": [2.0, 3.0, 3.0, 3.5, 4.0, 4.5]})
    >>> describe_waves(df, subject_col="id", wave_col="wave", outcome_col="score",
    ...                waves=["pre", "post"])[["wave", "n", "mean", "sd"]]
       wave  n      mean        sd
    0   pre  3  3.000000  1.000000
    1  post  3  3.666667  0.763763
    """
    func = "describe_waves"
    level = _check_ci_level(ci_level, func)
    panel = _panel(
        data,
        subject_col=subject_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    rows = []
    for wave in panel.waves:
        x = panel.wide[wave].dropna().to_numpy()
        n = x.size
        mean = float(x.mean()) if n else math.nan
        sd = float(x.std(ddof=1)) if n > 1 else math.nan
        se = sd / math.sqrt(n) if n > 1 else math.nan
        half = stats.t.ppf(0.5 + level / 2, n - 1) * se if n > 1 else math.nan
        rows.append(
            {
                "wave": wave,
                "n": n,
                "n_missing": int(len(panel.wide) - n),
                "mean": mean,
                "sd": sd,
                "se": se,
                "ci_low": mean - half,
                "ci_high": mean + half,
                "median": float(np.median(x)) if n else math.nan,
                "min": float(x.min()) if n else math.nan,
                "max": float(x.max()) if n else math.nan,
            }
        )
    return pd.DataFrame(rows, columns=DESCRIBE_COLUMNS)


# ---------------------------------------------------------------------------------------------
# Repeated-measures ANOVA
# ---------------------------------------------------------------------------------------------
def _long_codes(y: np.ndarray) -> pd.DataFrame:
    """Reshape an n x k matrix to the long table pingouin takes (integer subject and wave)."""
    n, k = y.shape
    return pd.DataFrame(
        {"subject": np.repeat(np.arange(n), k), "wave": np.tile(np.arange(k), n), "y": y.ravel()}
    )


def _sphericity(y: np.ndarray) -> dict[str, float]:
    """Mauchly's W, its chi-square test and the GG / HF epsilons for an n x k matrix.

    pingouin computes the test and the Greenhouse-Geisser epsilon; two things it does not give
    are kept here: NaN for a singular wave covariance (as car reports it, where pingouin returns
    finite numbers) and the uncapped Huynh-Feldt epsilon that car prints.
    """
    import pingouin as pg

    n, k = y.shape
    p = k - 1
    df = n - 1
    if p == 1:
        return {"W": 1.0, "chi2": math.nan, "df": 0.0, "p": math.nan, "gg": 1.0, "hf": 1.0}
    centred = y - y.mean(axis=1, keepdims=True)
    lam = np.linalg.eigvalsh(np.cov(centred, rowvar=False, ddof=1))[1:]  # drop the null direction
    if df < p or lam.min() <= 1e-12 * max(lam.max(), 1e-300):
        nan = math.nan
        return {"W": nan, "chi2": nan, "df": p * (p + 1) / 2 - 1, "p": nan, "gg": nan, "hf": nan}
    long = _long_codes(y)
    spher = pg.sphericity(long, dv="y", within="wave", subject="subject")
    gg = float(pg.epsilon(long, dv="y", within="wave", subject="subject", correction="gg"))
    hf = ((df + 1) * p * gg - 2) / (p * (df - p * gg))
    return {
        "W": float(spher.W),
        "chi2": float(spher.chi2),
        "df": float(spher.dof),
        "p": float(spher.pval),
        "gg": gg,
        "hf": float(hf),
    }


def _pingouin_anova(y: np.ndarray) -> tuple[float, float, float]:
    """SS of waves, SS error and F of the one-way repeated-measures ANOVA (pingouin)."""
    import pingouin as pg

    long = _long_codes(y)
    with np.errstate(divide="ignore", invalid="ignore"):  # its epsilon on degenerate data
        table = pg.rm_anova(long, dv="y", within="wave", subject="subject", detailed=True)
    ss_wave, ss_err = (float(v) for v in table["SS"].iloc[:2])
    f_stat = float(table["F"].iloc[0]) if ss_err > 0 else math.nan
    return ss_wave, ss_err, f_stat


def rm_anova(
    data: pd.DataFrame,
    *,
    subject_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
) -> RMAnovaResult:
    """One-way repeated-measures ANOVA over waves, on complete cases.

    Subjects missing the outcome at any wave are left out and listed in ``excluded``; the
    growth model (:func:`growth_model`) keeps them.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    subject_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column.
    waves : sequence of hashable
        The wave labels in time order.

    Returns
    -------
    RMAnovaResult
        ``table`` (F test without correction, with the Greenhouse-Geisser and with the
        Huynh-Feldt correction), ``sphericity`` (Mauchly's test, GG and HF epsilon),
        ``excluded`` and ``meta``; see :class:`RMAnovaResult` for the columns.

    Raises
    ------
    InvalidParameterError
        A parameter has the wrong type or names no column.
    surveys.InputValidationError
        Invalid long-format data (duplicated subject x wave rows, unknown waves, ...).

    Warns
    -----
    DataQualityWarning
        Fewer than two complete subjects (the test is NaN), or fewer complete subjects than
        waves (Mauchly's test and the epsilons are NaN).

    See Also
    --------
    friedman_test : the rank-based check on the same complete cases.

    Notes
    -----
    With ``Y`` the n x k matrix of complete cases, ``SS_wave = n * sum_j (mean_j - mean)^2``,
    ``SS_subjects = k * sum_i (mean_i - mean)^2`` and ``SS_error`` the residual sum of squares,
    ``F = (SS_wave / (k - 1)) / (SS_error / ((n - 1)(k - 1)))``.

    Sphericity is judged on ``M = C' S C`` where ``S`` is the covariance matrix of the waves and
    ``C`` are k - 1 orthonormal contrasts (any orthonormal set gives the same results), as
    ``car::Anova`` does: Mauchly's ``W = det(M) / (tr(M) / p)^p`` with ``p = k - 1`` and the
    chi-square approximation with Anderson's second-order correction
    (``chi2 = -(n - 1) rho log W``, ``rho = 1 - (2p^2 + p + 2) / (6p(n - 1))``,
    ``df = p(p + 1)/2 - 1``). Greenhouse-Geisser ``eps = (sum l)^2 / (p sum l^2)`` over the
    eigenvalues ``l`` of ``M``; Huynh-Feldt
    ``eps = (n p eps_GG - 2) / (p (n - 1 - p eps_GG))``, capped at 1 for the corrected
    p value (reported uncapped in ``sphericity``, as car prints it). The corrected tests
    multiply both degrees of freedom by epsilon. With two waves sphericity holds trivially:
    ``W = 1``, both epsilons are 1 and the Mauchly chi-square and p value are NaN.

    ``eta_sq_partial = SS_wave / (SS_wave + SS_error)``; ``eta_sq_generalized =
    SS_wave / (SS_wave + SS_subjects + SS_error)`` (Olejnik & Algina 2003, Bakeman 2005).

    Validated against ``car::Anova(lm(cbind(...) ~ 1), idata, idesign = ~wave)`` (car 3.1-1)
    and ``stats::mauchly.test`` (R 4.2.2) on carData::OBrienKaiser (averaged over hours: three
    phases; averaged over phases: five hours) to 1e-6; see tests/longitudinal/reference/change.R.

    References
    ----------
    Mauchly, J. W. (1940). Significance test for sphericity of a normal n-variate
    distribution. *Annals of Mathematical Statistics*, 11, 204-209.
    Greenhouse, S. W., & Geisser, S. (1959). On methods in the analysis of profile data.
    *Psychometrika*, 24, 95-112.
    Huynh, H., & Feldt, L. S. (1976). Estimation of the Box correction for degrees of freedom
    from sample data in randomized block and split-plot designs. *Journal of Educational
    Statistics*, 1, 69-82.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import rm_anova
    >>> df = pd.DataFrame({
    ...     "id": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
    ...     "wave": ["pre", "mid", "post"] * 4,
    ...     "score": [2.0, 2.5, 3.5, 3.0, 3.0, 4.0, 2.5, 3.5, 3.5, 4.0, None, 5.0]})
    >>> res = rm_anova(df, subject_col="id", wave_col="wave", outcome_col="score",
    ...                waves=["pre", "mid", "post"])
    >>> res.meta["n_used"], res.meta["n_excluded"], res.meta["excluded_ids"]
    (3, 1, [4])
    >>> round(float(res.table.loc[0, "statistic"]), 6)
    9.25
    """
    func = "rm_anova"
    panel = _panel(
        data,
        subject_col=subject_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    complete = panel.wide.dropna()
    excluded = _excluded_table(panel.wide)
    y = complete.to_numpy(dtype=float)
    n, k = y.shape
    meta: dict[str, Any] = {
        "function": func,
        "version": _package_version(),
        "parameters": {
            "subject_col": subject_col,
            "wave_col": wave_col,
            "outcome_col": outcome_col,
            "waves": list(panel.waves),
        },
        "waves": list(panel.waves),
        "n_subjects": int(len(panel.wide)),
        "n_used": int(n),
        "n_excluded": int(len(excluded)),
        "excluded_ids": excluded["subject"].tolist(),
        "exclusion_rule": "complete cases: subjects observed at every wave",
    }

    nan = math.nan
    df1 = float(k - 1)
    df2 = float((n - 1) * (k - 1)) if n >= 2 else nan
    if n < 2:
        warnings.warn(
            f"rm_anova: {n} subject(s) observed at every wave of {list(panel.waves)}; the "
            "repeated-measures ANOVA needs at least 2 and is returned as NaN",
            DataQualityWarning,
            stacklevel=2,
        )
        ss_wave = ss_err = ss_subj = f_stat = nan
        sph = {"W": nan, "chi2": nan, "df": nan, "p": nan, "gg": nan, "hf": nan}
    else:
        ss_wave, ss_err, f_stat = _pingouin_anova(y)
        # pingouin's one-way table has no subjects row; SS_subjects enters generalized eta^2
        ss_subj = float(k * np.sum((y.mean(axis=1) - y.mean()) ** 2))
        sph = _sphericity(y)
        if k > 2 and math.isnan(sph["W"]):
            warnings.warn(
                f"rm_anova: the covariance matrix of the {k} waves is singular with {n} complete "
                "subjects; Mauchly's test and the epsilon corrections are NaN",
                DataQualityWarning,
                stacklevel=2,
            )
    hf_used = min(1.0, sph["hf"]) if not math.isnan(sph["hf"]) else nan
    rows = []
    for correction, eps in (
        ("none", 1.0),
        ("greenhouse-geisser", sph["gg"]),
        ("huynh-feldt", hf_used),
    ):
        d1, d2 = eps * df1, eps * df2
        p_value = float(stats.f.sf(f_stat, d1, d2)) if not math.isnan(f_stat * d1) else nan
        rows.append(
            {
                "term": "wave",
                "correction": correction,
                "epsilon": eps,
                "df1": d1,
                "df2": d2,
                "statistic": f_stat,
                "p_value": p_value,
                "ss_effect": ss_wave,
                "ss_error": ss_err,
                "ss_subjects": ss_subj,
                "eta_sq_partial": _ratio(ss_wave, ss_wave + ss_err),
                "eta_sq_generalized": _ratio(ss_wave, ss_wave + ss_subj + ss_err),
                "n": n,
            }
        )
    table = pd.DataFrame(rows, columns=RM_ANOVA_COLUMNS)
    sphericity = pd.DataFrame(
        [
            {
                "term": "wave",
                "statistic": sph["W"],
                "chi2": sph["chi2"],
                "df": sph["df"],
                "p_value": sph["p"],
                "gg_epsilon": sph["gg"],
                "hf_epsilon": sph["hf"],
                "n": n,
            }
        ],
        columns=SPHERICITY_COLUMNS,
    )
    return RMAnovaResult(table=table, sphericity=sphericity, excluded=excluded, meta=meta)


def _ratio(num: float, den: float) -> float:
    if math.isnan(num) or math.isnan(den) or den == 0:
        return math.nan
    return num / den


# ---------------------------------------------------------------------------------------------
# Pairwise changes and effect sizes
# ---------------------------------------------------------------------------------------------
def holm_adjust(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjustment of a set of p values.

    Parameters
    ----------
    p_values : sequence of float
        Unadjusted p values; NaN entries are left NaN and do not count in the family size.

    Returns
    -------
    numpy.ndarray
        Adjusted p values in the input order.

    Notes
    -----
    With the m non-missing p values sorted, ``p_(i)`` becomes
    ``max_{j <= i} min(1, (m - j + 1) p_(j))`` (Holm 1979), as ``stats::p.adjust(method =
    "holm")`` computes it.

    Examples
    --------
    >>> from longitudinal.change import holm_adjust
    >>> holm_adjust([0.01, 0.04, 0.03]).tolist()
    [0.03, 0.06, 0.06]
    """
    import pingouin as pg

    p = np.asarray(p_values, dtype=float)
    if p.size == 0 or np.isnan(p).all():
        return np.full(p.shape, np.nan)
    return np.asarray(pg.multicomp(p, method="holm")[1], dtype=float)


def _hedges_j(df: float) -> float:
    """Exact small-sample correction J(df) = Gamma(df/2) / (sqrt(df/2) Gamma((df-1)/2))."""
    return math.exp(
        special.gammaln(df / 2) - 0.5 * math.log(df / 2) - special.gammaln((df - 1) / 2)
    )


def _nct_ci(t_obs: float, df: float, level: float) -> tuple[float, float]:
    """Confidence limits of the noncentrality parameter given an observed t."""
    alpha = 1 - level

    def root(target: float) -> float:
        def f(ncp: float) -> float:
            value = float(stats.nct.cdf(t_obs, df, ncp))
            if not math.isfinite(value):  # far tail, where SciPy returns NaN
                value = 0.0 if ncp > t_obs else 1.0
            return value - target

        width = 10.0 + 2.0 * abs(t_obs)
        return float(optimize.brentq(f, t_obs - width, t_obs + width, xtol=1e-14, rtol=1e-14))

    return root(1 - alpha / 2), root(alpha / 2)


def _paired_t(later: np.ndarray, earlier: np.ndarray, level: float) -> tuple[float, ...]:
    """t, two-sided p (pingouin) and confidence limits of the mean paired difference.

    The limits are computed here: pingouin rounds its CI column to two decimals by default.
    """
    import pingouin as pg

    res = pg.ttest(later, earlier, paired=True, confidence=level)
    t, df = float(res["T"].iloc[0]), float(res["dof"].iloc[0])
    d = later - earlier
    half = float(stats.t.ppf(0.5 + level / 2, df)) * float(d.std(ddof=1)) / math.sqrt(d.size)
    return t, float(res["p_val"].iloc[0]), float(d.mean()) - half, float(d.mean()) + half


def _pairs(waves: tuple[Hashable, ...]) -> list[tuple[Hashable, Hashable]]:
    """All pairs (earlier, later): adjacent pairs first, then growing gaps."""
    k = len(waves)
    return [(waves[i], waves[i + gap]) for gap in range(1, k) for i in range(k - gap)]


def pairwise_changes(
    data: pd.DataFrame,
    *,
    subject_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    ci_level: float = 0.95,
) -> PairwiseChanges:
    """Paired t-tests and standardized changes for every pair of waves.

    For three waves the pairs are pre-mid, mid-post and pre-post. Each pair uses every subject
    observed at both of its waves, so ``n`` can differ between pairs.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    subject_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column.
    waves : sequence of hashable
        The wave labels in time order.
    ci_level : float, default 0.95
        Level of every confidence interval.

    Returns
    -------
    PairwiseChanges
        ``tests``: ``term`` (``"later - earlier"``), ``wave_from``, ``wave_to``, ``estimate``
        (mean of later minus earlier), ``se``, ``df`` (n - 1), ``statistic`` (t), ``p_value``
        (two-sided), ``p_holm`` (Holm-adjusted over the pairs), ``ci_low``, ``ci_high``, ``n``.
        ``effect_sizes``: two rows per pair, ``measure`` ``d_z`` and ``g_av``, with
        ``estimate``, ``se`` (NaN for d_z, whose interval is exact), ``ci_low``, ``ci_high``,
        ``n``, ``ci_method``.

    Raises
    ------
    InvalidParameterError
        A parameter has the wrong type or names no column.
    surveys.InputValidationError
        Invalid long-format data.

    Warns
    -----
    DataQualityWarning
        A pair with fewer than two subjects, or whose differences have no variance (the test and
        effect sizes of that pair are NaN).

    See Also
    --------
    rm_anova : the omnibus test over all waves.

    Notes
    -----
    With differences ``d = later - earlier`` of n subjects: ``t = mean(d) / (sd(d) / sqrt(n))``
    on n - 1 df, the interval of ``stats::t.test(later, earlier, paired = TRUE)``.

    ``d_z = mean(d) / sd(d)`` (Cohen 1988; Lakens 2013, eq. 6). Its interval inverts the
    noncentral t distribution of ``t = d_z sqrt(n)``: the limits of the noncentrality parameter
    ``ncp`` solve ``P(T_{n-1, ncp} <= t) = 1 - a/2`` and ``= a/2`` and are divided by
    ``sqrt(n)`` (Steiger & Fouladi 1997).

    ``g_av = J(n - 1) mean(d) / ((s_1 + s_2) / 2)`` (Lakens 2013, eq. 10, with the exact
    Hedges correction ``J(m) = Gamma(m/2) / (sqrt(m/2) Gamma((m-1)/2))``). Its interval is
    ``g_av +/- z(1 - a/2) J se(d_av)`` with the normal-theory delta-method variance
    ``var(d_av) = s_d^2 / (n s_av^2) + d_av^2 (s_1^2 + s_2^2 + 2 r^2 s_1 s_2) /
    (8 (n - 1) s_av^2)``, which uses ``var(s_j) = sigma_j^2 / (2(n - 1))`` and
    ``cov(s_1, s_2) = rho^2 sigma_1 sigma_2 / (2(n - 1))``; Bonett (2015) derives the same
    kind of interval for the root-mean-square standardizer.

    Validated against ``stats::t.test(paired = TRUE)`` and ``stats::p.adjust(method = "holm")``
    (R 4.2.2) on datasets::sleep, MASS::anorexia, psychTools::affect and carData::OBrienKaiser
    to 1e-6; the d_z limits against ``uniroot`` on ``stats::pt(ncp = )`` and the g_av limits
    against the same formula evaluated in R; coverage of both intervals is checked by
    simulation.

    References
    ----------
    Lakens, D. (2013). Calculating and reporting effect sizes to facilitate cumulative
    science: a practical primer for t-tests and ANOVAs. *Frontiers in Psychology*, 4, 863.
    Steiger, J. H., & Fouladi, R. T. (1997). Noncentrality interval estimation and the
    evaluation of statistical models. In *What if there were no significance tests?*
    (pp. 221-257). Erlbaum.
    Bonett, D. G. (2015). Interval estimation of standardized mean differences in
    paired-samples experiments. *Psychological Methods*, 20(3), 369-374.
    Holm, S. (1979). A simple sequentially rejective multiple test procedure.
    *Scandinavian Journal of Statistics*, 6, 65-70.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import pairwise_changes
    >>> df = pd.DataFrame({
    ...     "id": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
    ...     "wave": ["pre", "mid", "post"] * 4,
    ...     "score": [2.0, 2.5, 3.5, 3.0, 3.0, 4.0, 2.5, 3.5, 3.5, 4.0, 4.5, 5.0]})
    >>> res = pairwise_changes(df, subject_col="id", wave_col="wave", outcome_col="score",
    ...                        waves=["pre", "mid", "post"])
    >>> res.tests[["term", "estimate", "n"]]
            term  estimate  n
    0  mid - pre     0.500  4
    1 post - mid     0.625  4
    2 post - pre     1.125  4
    """
    func = "pairwise_changes"
    level = _check_ci_level(ci_level, func)
    panel = _panel(
        data,
        subject_col=subject_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    z = float(stats.norm.ppf(0.5 + level / 2))
    tests, sizes = [], []
    for w_from, w_to in _pairs(panel.waves):
        both = panel.wide[[w_from, w_to]].dropna()
        x1 = both[w_from].to_numpy()
        x2 = both[w_to].to_numpy()
        d = x2 - x1
        n = d.size
        term = f"{w_to} - {w_from}"
        nan = math.nan
        est = se = t = p = lo = hi = nan
        dz = dz_lo = dz_hi = g = g_se = g_lo = g_hi = nan
        sd_d = float(d.std(ddof=1)) if n > 1 else nan
        if n < 2 or not sd_d > 0:
            why = f"{n} subject(s) observed at both waves" if n < 2 else "no variance in change"
            warnings.warn(
                f"pairwise_changes: {term}: {why}; the test and effect sizes are NaN",
                DataQualityWarning,
                stacklevel=2,
            )
            if n:
                est = float(d.mean())
        else:
            df = n - 1
            est = float(d.mean())
            se = sd_d / math.sqrt(n)
            t, p, lo, hi = _paired_t(x2, x1, level)
            dz = est / sd_d
            ncp_lo, ncp_hi = _nct_ci(t, df, level)
            dz_lo, dz_hi = ncp_lo / math.sqrt(n), ncp_hi / math.sqrt(n)
            s1, s2 = float(x1.std(ddof=1)), float(x2.std(ddof=1))
            s_av = (s1 + s2) / 2
            if s_av > 0 and n > 2:
                r = float(np.corrcoef(x1, x2)[0, 1]) if s1 > 0 and s2 > 0 else 0.0
                d_av = est / s_av
                var_dav = sd_d**2 / (n * s_av**2) + d_av**2 * (
                    s1**2 + s2**2 + 2 * r**2 * s1 * s2
                ) / (8 * (n - 1) * s_av**2)
                j = _hedges_j(df)
                g = j * d_av
                g_se = j * math.sqrt(var_dav)
                g_lo, g_hi = g - z * g_se, g + z * g_se
        tests.append(
            {
                "term": term,
                "wave_from": w_from,
                "wave_to": w_to,
                "estimate": est,
                "se": se,
                "df": float(n - 1) if n else nan,
                "statistic": t,
                "p_value": p,
                "p_holm": nan,
                "ci_low": lo,
                "ci_high": hi,
                "n": n,
            }
        )
        base = {"term": term, "wave_from": w_from, "wave_to": w_to}
        sizes.append(
            {
                **base,
                "measure": "d_z",
                "estimate": dz,
                "se": nan,
                "ci_low": dz_lo,
                "ci_high": dz_hi,
                "n": n,
                "ci_method": DZ_CI_METHOD,
            }
        )
        sizes.append(
            {
                **base,
                "measure": "g_av",
                "estimate": g,
                "se": g_se,
                "ci_low": g_lo,
                "ci_high": g_hi,
                "n": n,
                "ci_method": GAV_CI_METHOD,
            }
        )
    tests_df = pd.DataFrame(tests, columns=PAIRWISE_COLUMNS)
    tests_df["p_holm"] = holm_adjust(tests_df["p_value"].to_numpy(dtype=float))
    meta = {
        "function": func,
        "version": _package_version(),
        "parameters": {
            "subject_col": subject_col,
            "wave_col": wave_col,
            "outcome_col": outcome_col,
            "waves": list(panel.waves),
            "ci_level": level,
        },
        "p_adjust": "holm",
        "difference": "later wave minus earlier wave",
        "pairs": "pairwise complete: every subject observed at both waves of a pair",
    }
    return PairwiseChanges(
        tests=tests_df, effect_sizes=pd.DataFrame(sizes, columns=EFFECT_SIZE_COLUMNS), meta=meta
    )


# ---------------------------------------------------------------------------------------------
# Friedman
# ---------------------------------------------------------------------------------------------
def friedman_test(
    data: pd.DataFrame,
    *,
    subject_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
) -> pd.DataFrame:
    """Friedman's rank test over waves on complete cases, with Kendall's W.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    subject_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column.
    waves : sequence of hashable
        The wave labels in time order.

    Returns
    -------
    pandas.DataFrame
        One row: ``term`` (``"wave"``), ``statistic`` (Friedman chi-square), ``df`` (k - 1),
        ``p_value``, ``kendall_w``, ``n`` (complete subjects), ``n_excluded``.

    Raises
    ------
    InvalidParameterError
        A parameter has the wrong type or names no column.
    surveys.InputValidationError
        Invalid long-format data.

    Warns
    -----
    DataQualityWarning
        Fewer than two complete subjects, or every subject ties across all waves (NaN result).

    See Also
    --------
    rm_anova : the parametric test on the same complete cases.

    Notes
    -----
    Values are ranked within each subject (ties get average ranks). With rank sums ``R_j``,
    ``chi2 = 12 sum_j (R_j - n(k+1)/2)^2 / (n k (k+1) - sum (t^3 - t) / (k - 1))``, the sum
    running over tie groups within subjects; this is ``stats::friedman.test``. Kendall's
    ``W = chi2 / (n (k - 1))``.

    Validated against ``stats::friedman.test`` (R 4.2.2) on carData::OBrienKaiser and
    psychTools::affect to 1e-6.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import friedman_test
    >>> df = pd.DataFrame({
    ...     "id": [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4],
    ...     "wave": ["pre", "mid", "post"] * 4,
    ...     "score": [2.0, 2.5, 3.5, 3.0, 3.0, 4.0, 2.5, 3.5, 3.5, 4.0, 4.5, 5.0]})
    >>> res = friedman_test(df, subject_col="id", wave_col="wave", outcome_col="score",
    ...                     waves=["pre", "mid", "post"])
    >>> float(res.loc[0, "kendall_w"])
    0.875
    """
    func = "friedman_test"
    panel = _panel(
        data,
        subject_col=subject_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    y = panel.wide.dropna().to_numpy(dtype=float)
    n, k = y.shape
    n_excluded = int(len(panel.wide) - n)
    stat = p = w = math.nan
    if n >= 2 and not np.all(y == y[:, :1]):  # all tied: the statistic is 0/0
        import pingouin as pg

        table = pg.friedman(_long_codes(y), dv="y", within="wave", subject="subject")
        stat = float(table["Q"].iloc[0])
        p = float(table["p_unc"].iloc[0])
        w = float(table["W"].iloc[0])
    if math.isnan(stat):
        warnings.warn(
            f"friedman_test: the test is undefined for these data ({n} complete subject(s)"
            f"{', all tied' if n >= 2 else ''}); returned as NaN",
            DataQualityWarning,
            stacklevel=2,
        )
    row = {
        "term": "wave",
        "statistic": stat,
        "df": float(k - 1),
        "p_value": p,
        "kendall_w": w,
        "n": n,
        "n_excluded": n_excluded,
    }
    return pd.DataFrame([row], columns=FRIEDMAN_COLUMNS)


# ---------------------------------------------------------------------------------------------
# Linear growth model
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _GrowthFit:
    """What a growth-model back end returns (uniform across back ends)."""

    fe: np.ndarray  # (p,) fixed effects, order: Intercept, time
    cov_fe: np.ndarray  # (p, p) covariance of the fixed effects
    df: np.ndarray  # (p,) denominator df of the t tests; inf: Wald z
    cov_re: np.ndarray  # (q, q) random-effects covariance
    sigma2: float  # residual variance
    reml_criterion: float  # -2 REML log-likelihood (lme4's "REML criterion")
    converged: bool
    notes: tuple[str, ...]  # back-end warnings, as text (informational)
    failures: tuple[str, ...] = ()  # attempts that failed before this fit was reached
    inference: str = "t, Satterthwaite df"  # how the fixed effects are tested


def _fit_lmm(y: np.ndarray, x: np.ndarray, z: np.ndarray, groups: np.ndarray) -> _GrowthFit:
    """Fit with :class:`models.lmm.LinearMixedModel` (REML, Satterthwaite df)."""
    from models.lmm import LinearMixedModel

    frame = pd.DataFrame({"y": y, "time": x[:, 1], "subject": groups})
    formula = "y ~ time + (1 + time | subject)" if z.shape[1] == 2 else "y ~ time + (1 | subject)"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = LinearMixedModel(formula, reml=True).fit(frame)
    notes = tuple(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))
    fixed = model.fixed_.set_index("term").loc[["Intercept", "time"]]
    sigma2 = float(model.sigma_) ** 2
    q = z.shape[1]
    lam = np.zeros((q, q))  # relative Cholesky factor: G = sigma2 Lambda Lambda'
    lam[np.tril_indices(q)] = np.asarray(model.theta_, dtype=float)
    return _GrowthFit(
        fe=fixed["estimate"].to_numpy(dtype=float),
        cov_fe=model.vcov_.loc[["Intercept", "time"], ["Intercept", "time"]].to_numpy(dtype=float),
        df=fixed["df"].to_numpy(dtype=float),
        cov_re=sigma2 * lam @ lam.T,
        sigma2=sigma2,
        reml_criterion=float(model.reml_criterion_),
        converged=bool(model.converged_),
        notes=notes,
    )


_GROWTH_BACKENDS = {"lmm": _fit_lmm}


def _sqrt0(v: float) -> float:
    """Square root of a variance; NaN stays NaN, tiny negative round-off becomes 0."""
    return math.sqrt(max(float(v), 0.0)) if not math.isnan(v) else math.nan


def _fit_problems(fit: _GrowthFit | None) -> list[str]:
    if fit is None:
        return ["no optimizer reached a fit"]
    problems = []
    if _is_singular(fit):
        problems.append("singular fit (a variance at zero or a correlation at +/-1)")
    if not fit.converged:
        problems.append("the optimizer did not converge")
        problems.extend(fit.failures)
    return problems


def _is_singular(fit: _GrowthFit) -> bool:
    """Lme4's rule: a diagonal element of chol(G / sigma^2) below 1e-4."""
    if not np.all(np.isfinite(fit.cov_re)) or fit.sigma2 <= 0:
        return True
    try:
        chol = np.linalg.cholesky(fit.cov_re / fit.sigma2)
    except np.linalg.LinAlgError:
        return True
    return bool(np.any(np.diag(chol) < _SINGULAR_TOL))


def growth_model(
    data: pd.DataFrame,
    *,
    subject_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    time: Mapping[Hashable, float] | None = None,
    random_slope: bool = True,
    ci_level: float = 0.95,
    backend: Literal["lmm"] = "lmm",
) -> GrowthModelResult:
    """Linear growth mixed model ``outcome ~ time + (1 + time | subject)``, fitted by REML.

    Every observed wave of every subject is used, so people with a missing wave stay in the
    model (unlike :func:`rm_anova`).

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    subject_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column.
    waves : sequence of hashable
        The wave labels in time order.
    time : mapping, optional
        Time value of each wave, e.g. ``{"pre": 0, "mid": 2, "post": 4}`` for weeks. Default:
        the wave's position, 0, 1, 2, ..., so the slope is the change per wave.
    random_slope : bool, default True
        Fit a random slope correlated with the random intercept. If the fit is singular (a
        variance at zero or a correlation at +/-1) the model is refitted with a random
        intercept only, with a warning. ``False`` fits the random-intercept model directly.
    ci_level : float, default 0.95
        Level of the fixed-effect confidence intervals.
    backend : {"lmm"}, default "lmm"
        Fitting engine: :class:`models.lmm.LinearMixedModel` (mixedlm's profiled REML with
        bounds, so a variance can reach exactly zero as in lme4; lmerTest's Satterthwaite df).
        The former ``"statsmodels"`` engine is removed: every linear mixed model of the package
        goes through :class:`models.lmm.LinearMixedModel`.

    Returns
    -------
    GrowthModelResult
        ``fixed`` (``term, estimate, se, df, statistic, p_value, ci_low, ci_high`` for
        ``Intercept`` and ``time``), ``random`` (``group, term, variance, sd, correlation``)
        and ``meta`` (structure used, fallback reason, counts); see
        :class:`GrowthModelResult`.

    Raises
    ------
    InvalidParameterError
        A parameter is invalid, fewer than two subjects or fewer than two distinct time points
        are observed.
    surveys.InputValidationError
        Invalid long-format data.

    Warns
    -----
    DataQualityWarning
        The random-slope model was singular or did not converge and the random-intercept model
        is returned instead, or the final model is itself singular or unconverged.

    See Also
    --------
    rm_anova : complete-case test of differences between waves.

    Notes
    -----
    Model: ``y_ij = b0 + b1 t_j + u0_i + u1_i t_j + e_ij`` with ``(u0_i, u1_i) ~ N(0, G)`` and
    ``e_ij ~ N(0, sigma^2)``. With three waves the random slope, intercept, their covariance and
    the residual are identified but often at the boundary, hence the fallback. A fit is
    singular when a diagonal element of the relative Cholesky factor ``Lambda`` of
    ``G / sigma^2`` is below 1e-4 (the rule of ``lme4::isSingular``), or when the optimizer
    did not converge. The engine's warnings are kept in ``meta["backend_messages"]``.

    Estimation and Satterthwaite df are described in :class:`models.lmm.LinearMixedModel`
    (Bates et al. 2015; Kuznetsova et al. 2017).

    Validated against ``lmerTest::lmer(score ~ time + (1 + time | id), REML = TRUE)``
    (lme4 1.1-31, lmerTest 3.1-3) on carData::OBrienKaiser averaged over hours, complete and
    with two waves removed: estimates and standard errors agree to 1e-6 relative, variance
    components to 1e-5, the Satterthwaite df to 1e-5 and the REML criterion to 1e-10; and
    against ``lme4::isSingular`` and lmerTest on simulated three-wave data (ten data sets, five
    of them singular; tests/longitudinal/reference/change.R).

    References
    ----------
    Bates, D., Maechler, M., Bolker, B., & Walker, S. (2015). Fitting linear mixed-effects
    models using lme4. *Journal of Statistical Software*, 67(1).
    Kuznetsova, A., Brockhoff, P. B., & Christensen, R. H. B. (2017). lmerTest package: tests
    in linear mixed effects models. *Journal of Statistical Software*, 82(13).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from longitudinal.change import growth_model
    >>> rng = np.random.default_rng(1)
    >>> ids = np.repeat(np.arange(30), 3)
    >>> t = np.tile([0.0, 1.0, 2.0], 30)
    >>> y = 3 + 0.5 * t + rng.normal(0, 0.5, 30)[ids] + rng.normal(0, 0.3, 90)
    >>> df = pd.DataFrame({"id": ids, "wave": np.tile(["pre", "mid", "post"], 30), "y": y})
    >>> res = growth_model(df, subject_col="id", wave_col="wave", outcome_col="y",
    ...                    waves=["pre", "mid", "post"], random_slope=False)
    >>> res.fixed["term"].tolist(), res.meta["random_effects"]
    (['Intercept', 'time'], 'intercept')
    """
    func = "growth_model"
    level = _check_ci_level(ci_level, func)
    slope_wanted = _check_bool(random_slope, "random_slope", func)
    if backend not in _GROWTH_BACKENDS:
        raise InvalidParameterError(
            f"the `backend` parameter of {func} must be one of {sorted(_GROWTH_BACKENDS)}; "
            f"got {backend!r} (the statsmodels engine was removed: every linear mixed model is "
            "fitted by models.lmm.LinearMixedModel)"
        )
    panel = _panel(
        data,
        subject_col=subject_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    coding = _time_coding(time, panel.waves, func)
    # Subjects in a canonical order, so that the iterative fit does not depend on row order.
    try:
        wide = panel.wide.sort_index(kind="stable")
    except TypeError:  # labels of mixed types
        wide = panel.wide.iloc[np.argsort(panel.wide.index.astype(str), kind="stable")]
    long = wide.stack(future_stack=True).dropna().reset_index()
    long.columns = ["subject", "wave", "y"]
    long["time"] = long["wave"].map(coding).astype(float)
    codes, levels = pd.factorize(long["subject"])
    n_subjects = len(levels)
    if n_subjects < 2 or long["time"].nunique() < 2:
        raise InvalidParameterError(
            f"{func} needs at least two subjects and two observed time points; got "
            f"{n_subjects} subject(s) and {long['time'].nunique()} time point(s)"
        )
    y = long["y"].to_numpy(dtype=float)
    x = np.column_stack([np.ones(len(long)), long["time"].to_numpy(dtype=float)])
    fit_fn = _GROWTH_BACKENDS[backend]

    fallback_reason = None
    structure = "intercept + slope" if slope_wanted else "intercept"
    fit = fit_fn(y, x, x if slope_wanted else x[:, :1], codes)
    if slope_wanted:
        problems = _fit_problems(fit)
        if problems:
            fallback_reason = "; ".join(problems)
            structure = "intercept"
            fit = fit_fn(y, x, x[:, :1], codes)
            warnings.warn(
                f"{func}: the random-slope model for {outcome_col!r} was not usable "
                f"({fallback_reason}); refitted with a random intercept only",
                DataQualityWarning,
                stacklevel=2,
            )
    final_problems = _fit_problems(fit)
    if final_problems:
        warnings.warn(
            f"{func}: the {structure} model for {outcome_col!r} is questionable: "
            f"{'; '.join(final_problems)}",
            DataQualityWarning,
            stacklevel=2,
        )
    if fit is None:
        q = 1 if structure == "intercept" else 2
        nan = math.nan
        fit = _GrowthFit(
            fe=np.full(2, nan),
            cov_fe=np.full((2, 2), nan),
            df=np.full(2, nan),
            cov_re=np.full((q, q), nan),
            sigma2=nan,
            reml_criterion=nan,
            converged=False,
            notes=("no optimizer reached a fit",),
            inference="none: the model could not be fitted",
        )
    df = fit.df

    se = np.sqrt(np.diag(fit.cov_fe))
    stat = fit.fe / se
    rows = []
    for j, term in enumerate(["Intercept", "time"]):
        dfj = float(df[j])
        if np.isinf(dfj):
            p = float(2 * stats.norm.sf(abs(stat[j])))
            q = float(stats.norm.ppf(0.5 + level / 2))
        else:
            p = float(2 * stats.t.sf(abs(stat[j]), dfj)) if not np.isnan(dfj) else math.nan
            q = float(stats.t.ppf(0.5 + level / 2, dfj)) if not np.isnan(dfj) else math.nan
        rows.append(
            {
                "term": term,
                "estimate": float(fit.fe[j]),
                "se": float(se[j]),
                "df": dfj,
                "statistic": float(stat[j]),
                "p_value": p,
                "ci_low": float(fit.fe[j] - q * se[j]),
                "ci_high": float(fit.fe[j] + q * se[j]),
            }
        )
    fixed = pd.DataFrame(rows, columns=FIXED_COLUMNS)
    g = fit.cov_re
    rand = [
        {
            "group": "subject",
            "term": "Intercept",
            "variance": float(g[0, 0]),
            "sd": _sqrt0(g[0, 0]),
            "correlation": math.nan,
        }
    ]
    if g.shape[0] == 2:
        denom = _sqrt0(g[0, 0]) * _sqrt0(g[1, 1])
        rand.append(
            {
                "group": "subject",
                "term": "time",
                "variance": float(g[1, 1]),
                "sd": _sqrt0(g[1, 1]),
                "correlation": float(g[0, 1] / denom) if denom > 0 else math.nan,
            }
        )
    rand.append(
        {
            "group": "Residual",
            "term": "",
            "variance": fit.sigma2,
            "sd": _sqrt0(fit.sigma2),
            "correlation": math.nan,
        }
    )
    n_obs_per = np.bincount(codes, minlength=n_subjects)
    meta = {
        "function": func,
        "version": _package_version(),
        "parameters": {
            "subject_col": subject_col,
            "wave_col": wave_col,
            "outcome_col": outcome_col,
            "waves": list(panel.waves),
            "time": dict(coding),
            "random_slope": slope_wanted,
            "ci_level": level,
            "backend": backend,
        },
        "formula": (
            f"{outcome_col} ~ time + (1 + time | {subject_col})"
            if structure == "intercept + slope"
            else f"{outcome_col} ~ time + (1 | {subject_col})"
        ),
        "random_effects": structure,
        "fallback_reason": fallback_reason,
        "backend": backend,
        "inference": fit.inference,
        "reml": True,
        "reml_criterion": fit.reml_criterion,
        "converged": fit.converged,
        "backend_messages": list(fit.notes) + list(fit.failures),
        "n_obs": int(len(long)),
        "n_subjects": int(n_subjects),
        "n_subjects_incomplete": int(np.sum(n_obs_per < len(panel.waves))),
        "n_subjects_no_data": int(len(panel.wide) - n_subjects),
        "time_coding": dict(coding),
    }
    return GrowthModelResult(
        fixed=fixed, random=pd.DataFrame(rand, columns=RANDOM_COLUMNS), meta=meta
    )


def _time_coding(
    time: Mapping[Hashable, float] | None, waves: tuple[Hashable, ...], func: str
) -> dict[Hashable, float]:
    if time is None:
        return {w: float(i) for i, w in enumerate(waves)}
    if not isinstance(time, Mapping) or set(time) != set(waves):
        raise InvalidParameterError(
            f"the `time` parameter of {func} must map every wave of {list(waves)!r} to a "
            f"number; got {time!r}"
        )
    coding = {}
    for w in waves:
        v = time[w]
        if isinstance(v, bool) or not isinstance(v, int | float | np.number) or not np.isfinite(v):
            raise InvalidParameterError(
                f"the `time` parameter of {func} must map waves to finite numbers; "
                f"got {v!r} for wave {w!r}"
            )
        coding[w] = float(v)
    return coding


# ---------------------------------------------------------------------------------------------
# Reliable change
# ---------------------------------------------------------------------------------------------
def reliable_change(
    data: pd.DataFrame,
    *,
    subject_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    reliability: float | None = None,
    reliability_kind: Literal["test-retest", "alpha"] = "test-retest",
    reliability_note: str = "given",
    baseline_items: pd.DataFrame | None = None,
    from_wave: Hashable | None = None,
    to_wave: Hashable | None = None,
    sd_baseline: float | None = None,
    higher_is_better: bool = True,
    ci_level: float = 0.95,
) -> ReliableChangeResult:
    """Jacobson-Truax reliable change index per person.

    Give the reliability either as a number (``reliability`` with ``reliability_kind``) or as
    the item responses at the baseline wave (``baseline_items``), from which Cronbach's alpha is
    computed. The source is written to ``meta["reliability_source"]``.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    subject_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column (the scale score).
    waves : sequence of hashable
        The wave labels in time order.
    reliability : float, optional
        A reliability coefficient in [0, 1), e.g. a published test-retest r.
    reliability_kind : {"test-retest", "alpha"}, default "test-retest"
        What ``reliability`` is; only used to describe the source.
    reliability_note : str, default "given"
        Where ``reliability`` came from, written in parentheses after it in the source
        description (e.g. ``"computed from the pre items, n = 41"``).
    baseline_items : pandas.DataFrame, optional
        Item responses at the baseline wave: one row per subject, the ``subject_col`` column
        and one column per item (at least two). Alpha uses the rows with every item answered.
    from_wave, to_wave : hashable, optional
        The waves compared; default the first and the last of ``waves``.
    sd_baseline : float, optional
        Standard deviation of the scale at baseline, e.g. from norms. Default: the sample SD
        (n - 1) of ``outcome_col`` at ``from_wave`` over every subject observed there.
    higher_is_better : bool, default True
        Direction of improvement: if True a reliable increase is ``improved``, else a reliable
        decrease is.
    ci_level : float, default 0.95
        The criterion is the normal quantile ``z(1 - (1 - ci_level) / 2)`` (1.96 at 0.95).

    Returns
    -------
    ReliableChangeResult
        ``people``: ``subject, baseline, followup, change, rci, category`` for each subject
        observed at both waves; ``counts``: ``category, n, proportion`` for ``improved``,
        ``unchanged`` and ``deteriorated``; ``meta`` with ``reliability``,
        ``reliability_source``, ``sd_baseline``, ``s_diff``, ``criterion`` and counts.

    Raises
    ------
    InvalidParameterError
        Neither or both of ``reliability`` and ``baseline_items`` are given, a value is out of
        range, a wave is unknown, or the baseline SD or alpha cannot be computed.
    surveys.InputValidationError
        Invalid long-format data.

    Warns
    -----
    DataQualityWarning
        Cronbach's alpha computed from ``baseline_items`` is not positive.

    See Also
    --------
    pairwise_changes : group-level change between waves.

    Notes
    -----
    ``SE = SD_pre sqrt(1 - r)``, ``S_diff = sqrt(2 SE^2) = SD_pre sqrt(2) sqrt(1 - r)`` and
    ``RCI = (x_post - x_pre) / S_diff`` (Jacobson & Truax 1991). A person changed reliably when
    ``|RCI| > z``; the direction decides ``improved`` or ``deteriorated``. Cronbach's alpha is
    ``k / (k - 1) (1 - sum s_j^2 / s_total^2)`` over the rows with every item answered
    (:func:`surveys.reliability.scale_reliability` with ``missing="complete"``).

    Validated against the same formulas in R with ``psych::alpha`` (psych 2.2.9) for alpha, on
    carData::OBrienKaiser (five hourly pre scores as items) and MASS::anorexia (given r), to
    1e-10.

    References
    ----------
    Jacobson, N. S., & Truax, P. (1991). Clinical significance: a statistical approach to
    defining meaningful change in psychotherapy research. *Journal of Consulting and Clinical
    Psychology*, 59, 12-19.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.change import reliable_change
    >>> df = pd.DataFrame({"id": [1, 1, 2, 2, 3, 3, 4, 4], "wave": ["pre", "post"] * 4,
    ...                    "score": [10.0, 16.0, 12.0, 12.5, 14.0, 8.0, 16.0, 17.0]})
    >>> res = reliable_change(df, subject_col="id", wave_col="wave", outcome_col="score",
    ...                       waves=["pre", "post"], reliability=0.8)
    >>> res.meta["reliability_source"]
    'test-retest r = 0.80 (given)'
    >>> res.people["category"].tolist()
    ['improved', 'unchanged', 'deteriorated', 'unchanged']
    """
    func = "reliable_change"
    level = _check_ci_level(ci_level, func)
    better_up = _check_bool(higher_is_better, "higher_is_better", func)
    panel = _panel(
        data,
        subject_col=subject_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    w0 = panel.waves[0] if from_wave is None else from_wave
    w1 = panel.waves[-1] if to_wave is None else to_wave
    for name, w in (("from_wave", w0), ("to_wave", w1)):
        if w not in panel.waves:
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must be one of {list(panel.waves)!r}; got {w!r}"
            )
    if w0 == w1:
        raise InvalidParameterError(
            f"the `from_wave` and `to_wave` parameters of {func} must differ; got {w0!r} twice"
        )
    if (reliability is None) == (baseline_items is None):
        raise InvalidParameterError(
            f"{func} needs exactly one of `reliability` (a coefficient in [0, 1)) and "
            "`baseline_items` (item responses at the baseline wave); got "
            f"{'both' if reliability is not None else 'neither'}"
        )
    if reliability_kind not in ("test-retest", "alpha"):
        raise InvalidParameterError(
            f"the `reliability_kind` parameter of {func} must be 'test-retest' or 'alpha'; "
            f"got {reliability_kind!r}"
        )
    if reliability is not None:
        if (
            isinstance(reliability, bool)
            or not isinstance(reliability, int | float | np.number)
            or not 0 <= float(reliability) < 1
        ):
            raise InvalidParameterError(
                f"the `reliability` parameter of {func} must be a number in [0, 1); "
                f"got {reliability!r}"
            )
        r = float(reliability)
        if reliability_kind == "alpha":
            source = f"Cronbach's alpha at {w0} = {r:.2f} ({reliability_note})"
        else:
            source = f"test-retest r = {r:.2f} ({reliability_note})"
    else:
        if not isinstance(baseline_items, pd.DataFrame) or subject_col not in baseline_items:
            raise InvalidParameterError(
                f"the `baseline_items` parameter of {func} must be a DataFrame with the column "
                f"{subject_col!r} and one column per item; got {type(baseline_items).__name__}"
            )
        item_cols = [c for c in baseline_items.columns if c != subject_col]
        items = baseline_items[item_cols]
        item_names = [str(c) for c in item_cols]
        if (
            len(item_cols) < 2
            or len(set(item_names)) < len(item_names)
            or not all(pd.api.types.is_numeric_dtype(items[c]) for c in item_cols)
        ):
            raise InvalidParameterError(
                f"the `baseline_items` parameter of {func} needs at least two distinct numeric "
                f"item columns besides {subject_col!r}; got {item_cols!r}"
            )
        x = items.to_numpy(dtype=float)
        if np.isinf(x).any():
            raise InvalidParameterError(
                f"the `baseline_items` parameter of {func} must hold finite values or NaN; "
                "got infinite values"
            )
        # Only raw alpha is used: the warnings about statistics it does not use (omega,
        # alpha if deleted, ...) do not concern the reliable change index, and an undefined
        # alpha is raised below.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SurveysWarning)
            summary, _ = scale_reliability(x, item_names=item_names, missing="complete")
        r, n_alpha, k_items = summary["alpha"], summary["n"], summary["n_items"]
        if math.isnan(r):
            raise InvalidParameterError(
                f"{func}: Cronbach's alpha cannot be computed from `baseline_items` "
                f"({n_alpha} complete row(s), {k_items} items, or no variance in the total)"
            )
        if r >= 1:
            raise InvalidParameterError(
                f"{func}: Cronbach's alpha from `baseline_items` is {r!r}; the reliable change "
                "index needs a reliability below 1"
            )
        if r <= 0:
            warnings.warn(
                f"{func}: Cronbach's alpha at {w0} is {r:.3f}; the reliable change index rests "
                "on a scale without internal consistency",
                DataQualityWarning,
                stacklevel=2,
            )
        source = f"Cronbach's alpha at {w0} = {r:.2f} ({k_items} items, n = {n_alpha})"

    base_all = panel.wide[w0].dropna()
    if sd_baseline is None:
        sd0 = float(base_all.std(ddof=1)) if len(base_all) > 1 else math.nan
        sd_source = f"sample SD at {w0} (n = {len(base_all)})"
    else:
        sd0 = float(sd_baseline) if isinstance(sd_baseline, int | float | np.number) else math.nan
        sd_source = "given"
    if not (sd0 > 0 and math.isfinite(sd0)):
        raise InvalidParameterError(
            f"{func}: the baseline SD must be a positive number; got {sd0!r} ({sd_source})"
        )
    s_diff = sd0 * math.sqrt(2) * math.sqrt(1 - r)
    crit = float(stats.norm.ppf(0.5 + level / 2))

    both = panel.wide[[w0, w1]].dropna()
    change = both[w1] - both[w0]
    rci = change / s_diff
    sign = 1.0 if better_up else -1.0
    category = np.where(
        sign * rci > crit, "improved", np.where(sign * rci < -crit, "deteriorated", "unchanged")
    )
    people = pd.DataFrame(
        {
            "subject": both.index.to_numpy(),
            "baseline": both[w0].to_numpy(),
            "followup": both[w1].to_numpy(),
            "change": change.to_numpy(),
            "rci": rci.to_numpy(),
            "category": category,
        },
        columns=RCI_COLUMNS,
    )
    n = len(people)
    counts = pd.DataFrame(
        [
            {
                "category": c,
                "n": int(np.sum(category == c)),
                "proportion": float(np.sum(category == c)) / n if n else math.nan,
            }
            for c in RCI_CATEGORIES
        ],
        columns=RCI_COUNT_COLUMNS,
    )
    meta = {
        "function": func,
        "version": _package_version(),
        "parameters": {
            "subject_col": subject_col,
            "wave_col": wave_col,
            "outcome_col": outcome_col,
            "waves": list(panel.waves),
            "from_wave": w0,
            "to_wave": w1,
            "reliability_kind": reliability_kind if baseline_items is None else "alpha",
            "higher_is_better": better_up,
            "ci_level": level,
        },
        "reliability": r,
        "reliability_source": source,
        "sd_baseline": sd0,
        "sd_baseline_source": sd_source,
        "s_diff": s_diff,
        "criterion": crit,
        "higher_is_better": better_up,
        "n": n,
        "n_excluded": int(len(panel.wide) - n),
        "excluded_ids": panel.wide.index[~panel.wide.index.isin(both.index)].tolist(),
    }
    return ReliableChangeResult(people=people, counts=counts, meta=meta)


# ---------------------------------------------------------------------------------------------
# Everything for one scale
# ---------------------------------------------------------------------------------------------
def change_analysis(
    data: pd.DataFrame,
    *,
    subject_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    time: Mapping[Hashable, float] | None = None,
    random_slope: bool = True,
    reliability: float | None = None,
    reliability_kind: Literal["test-retest", "alpha"] = "test-retest",
    reliability_note: str = "given",
    baseline_items: pd.DataFrame | None = None,
    higher_is_better: bool = True,
    ci_level: float = 0.95,
    backend: Literal["lmm"] = "lmm",
) -> ChangeResult:
    """Run the whole change analysis for one repeated scale.

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    subject_col : str
        Column of subject ids.
    wave_col : str
        Column of wave labels.
    outcome_col : str
        Numeric outcome column (the scale score).
    waves : sequence of hashable
        The wave labels in time order, e.g. ``["pre", "mid", "post"]``.
    time : mapping, optional
        Time value of each wave for the growth model (default 0, 1, 2, ...).
    random_slope : bool, default True
        Whether the growth model starts with a random slope (see :func:`growth_model`).
    reliability : float, optional
        Reliability for the reliable change index (see :func:`reliable_change`).
    reliability_kind : {"test-retest", "alpha"}, default "test-retest"
        What ``reliability`` is.
    baseline_items : pandas.DataFrame, optional
        Item responses at the first wave, to compute Cronbach's alpha instead. Without
        ``reliability`` and ``baseline_items`` the reliable-change tables are empty.
    higher_is_better : bool, default True
        Direction of improvement for the reliable change index.
    ci_level : float, default 0.95
        Level of every interval and of the reliable-change criterion.
    backend : {"lmm"}, default "lmm"
        Engine of the growth model (see :func:`growth_model`).

    Returns
    -------
    ChangeResult
        Every table of :func:`describe_waves`, :func:`rm_anova`, :func:`pairwise_changes`,
        :func:`friedman_test`, :func:`growth_model` and :func:`reliable_change`; see
        :class:`ChangeResult`.

    Raises
    ------
    InvalidParameterError
        A parameter is invalid.
    surveys.InputValidationError
        Invalid long-format data (duplicated subject x wave rows, unknown waves, ...).

    Warns
    -----
    DataQualityWarning
        From the parts (too few complete subjects, a singular growth model, ...).

    See Also
    --------
    rm_anova, pairwise_changes, friedman_test, growth_model, reliable_change

    Notes
    -----
    The RM-ANOVA and the Friedman test use complete cases (``meta["n_excluded"]`` people
    left out, listed in ``excluded``); the pairwise tests use every pair of observed waves; the
    growth model uses every observation. The reliable change index compares the first with the
    last wave. Each part's Notes say what it was validated against.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from longitudinal.change import change_analysis
    >>> rng = np.random.default_rng(7)
    >>> n = 40
    >>> person = rng.normal(0, 0.6, n)
    >>> rows = [{"id": i, "wave": w, "score": 3 + 0.3 * t + person[i] + rng.normal(0, 0.4)}
    ...         for i in range(n) for t, w in enumerate(["pre", "mid", "post"])]
    >>> df = pd.DataFrame(rows)
    >>> res = change_analysis(df, subject_col="id", wave_col="wave", outcome_col="score",
    ...                       waves=["pre", "mid", "post"], reliability=0.8,
    ...                       random_slope=False)
    >>> res.rm_anova["correction"].tolist()
    ['none', 'greenhouse-geisser', 'huynh-feldt']
    >>> int(res.reliable_change_counts["n"].sum())
    40
    """
    func = "change_analysis"
    level = _check_ci_level(ci_level, func)
    common = {
        "subject_col": subject_col,
        "wave_col": wave_col,
        "outcome_col": outcome_col,
        "waves": waves,
    }
    descriptives = describe_waves(data, **common, ci_level=level)
    anova = rm_anova(data, **common)
    pairs = pairwise_changes(data, **common, ci_level=level)
    friedman = friedman_test(data, **common)
    growth = growth_model(
        data, **common, time=time, random_slope=random_slope, ci_level=level, backend=backend
    )
    if reliability is None and baseline_items is None:
        rc_people = pd.DataFrame(columns=RCI_COLUMNS)
        rc_counts = pd.DataFrame(columns=RCI_COUNT_COLUMNS)
        rc_meta: dict[str, Any] = {
            "reliability_source": "not computed: no reliability or baseline items given"
        }
    else:
        rc = reliable_change(
            data,
            **common,
            reliability=reliability,
            reliability_kind=reliability_kind,
            reliability_note=reliability_note,
            baseline_items=baseline_items,
            higher_is_better=higher_is_better,
            ci_level=level,
        )
        rc_people, rc_counts, rc_meta = rc.people, rc.counts, rc.meta
    meta = {
        "function": func,
        "version": _package_version(),
        "parameters": {
            "subject_col": subject_col,
            "wave_col": wave_col,
            "outcome_col": outcome_col,
            "waves": list(waves),
            "time": None if time is None else dict(time),
            "random_slope": random_slope,
            "reliability": reliability,
            "reliability_kind": reliability_kind,
            "baseline_items": baseline_items is not None,
            "higher_is_better": higher_is_better,
            "ci_level": level,
            "backend": backend,
        },
        "n_subjects": anova.meta["n_subjects"],
        "n_complete": anova.meta["n_used"],
        "n_excluded": anova.meta["n_excluded"],
        "excluded_ids": anova.meta["excluded_ids"],
        "reliability_source": rc_meta["reliability_source"],
        "rm_anova": anova.meta,
        "pairwise": pairs.meta,
        "growth": growth.meta,
        "reliable_change": rc_meta,
    }
    return ChangeResult(
        descriptives=descriptives,
        rm_anova=anova.table,
        sphericity=anova.sphericity,
        excluded=anova.excluded,
        pairwise=pairs.tests,
        effect_sizes=pairs.effect_sizes,
        friedman=friedman,
        growth_fixed=growth.fixed,
        growth_random=growth.random,
        reliable_change=rc_people,
        reliable_change_counts=rc_counts,
        meta=meta,
    )
