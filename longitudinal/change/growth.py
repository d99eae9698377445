"""The linear growth mixed model of one scale (LinearMixedModel, REML, Satterthwaite df).

Written here because pingouin has no mixed model: it keeps people with a missing wave.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from longitudinal._checks import check_bool, check_unit
from longitudinal._errors import DataQualityWarning, InvalidParameterError
from longitudinal.change._panel import _meta_head, _Panel, _panel
from longitudinal.change.results import (
    _SINGULAR_TOL,
    FIXED_COLUMNS,
    RANDOM_COLUMNS,
    GrowthModelResult,
)
from models.formula import formula_name


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
        fixed = model.fixed_.set_index("term").loc[["Intercept", "time"]]  # df: warnings here
    notes = tuple(sorted({f"{w.category.__name__}: {w.message}" for w in caught}))
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
    id_col: str,
    wave_col: str,
    outcome_col: str,
    waves: Sequence[Hashable],
    time: Mapping[Hashable, float] | None = None,
    random_slope: bool = True,
    ci_level: float = 0.95,
) -> GrowthModelResult:
    """Linear growth mixed model ``outcome ~ time + (1 + time | subject)``, fitted by REML.

    Every observed wave of every subject is used, so people with a missing wave stay in the
    model (unlike :func:`rm_anova`).

    Parameters
    ----------
    data : pandas.DataFrame
        Long table, one row per subject and wave. A missing outcome is a missing wave.
    id_col : str
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

    Returns
    -------
    GrowthModelResult
        ``fixed`` (``term, estimate, se, df, statistic, p_value, ci_low, ci_high`` for
        ``Intercept`` and ``time``), ``random`` (``group, term, variance, sd, correlation``)
        and ``meta`` (structure used, fallback reason, ``problems`` of the model returned,
        counts); see :class:`GrowthModelResult`.

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
    >>> res = growth_model(df, id_col="id", wave_col="wave", outcome_col="y",
    ...                    waves=["pre", "mid", "post"], random_slope=False)
    >>> res.fixed["term"].tolist(), res.meta["random_effects"]
    (['Intercept', 'time'], 'intercept')
    """
    func = "growth_model"
    level = check_unit(ci_level, name="ci_level", where=func)
    slope_wanted = check_bool(random_slope, name="random_slope", where=func)
    slope_requested = slope_wanted
    panel = _panel(
        data,
        id_col=id_col,
        wave_col=wave_col,
        outcome_col=outcome_col,
        waves=waves,
        func=func,
    )
    coding = _time_coding(time, panel.waves, func)
    long, codes, n_subjects = _long_panel(panel, coding, func)
    y = long["y"].to_numpy(dtype=float)
    x = np.column_stack([np.ones(len(long)), long["time"].to_numpy(dtype=float)])
    fit_fn = _fit_lmm

    fallback_reason = None
    per_subject = np.bincount(codes)
    if slope_wanted and per_subject.max() < 3:
        # two observations per person cannot separate a random slope from the residual
        slope_wanted = False
        fallback_reason = (
            "nobody has more than two observations, so a random slope cannot be told apart "
            "from the residual"
        )
        warnings.warn(
            f"{func}: {outcome_col!r}: {fallback_reason}; fitted with a random intercept only",
            DataQualityWarning,
            stacklevel=2,
        )
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
    fixed, rand = _growth_tables(fit, level)
    n_obs_per = np.bincount(codes, minlength=n_subjects)
    meta = {
        **_meta_head(
            func,
            id_col=id_col,
            wave_col=wave_col,
            outcome_col=outcome_col,
            waves=list(panel.waves),
            time=dict(coding),
            random_slope=slope_requested,
            ci_level=level,
        ),
        "formula": (
            f"{formula_name(str(outcome_col))} ~ time + (1 + time | {formula_name(str(id_col))})"
            if structure == "intercept + slope"
            else f"{formula_name(str(outcome_col))} ~ time + (1 | {formula_name(str(id_col))})"
        ),
        "random_effects": structure,
        "fallback_reason": fallback_reason,
        "problems": list(final_problems),
        "backend": "lmm",
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
    return GrowthModelResult(fixed=fixed, random=rand, meta=meta)


def _long_panel(panel: _Panel, coding: dict, func: str) -> tuple[pd.DataFrame, np.ndarray, int]:
    """Return one row per observed subject x wave (``subject, wave, y, time``), codes, count."""
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
    return long, codes, n_subjects


def _growth_tables(fit: _GrowthFit, level: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the fixed-effects table (t; z where the df are infinite) and the variance table."""
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
    g = fit.cov_re
    rand = [
        {
            "group": "id",
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
                "group": "id",
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
    fixed = pd.DataFrame(rows, columns=FIXED_COLUMNS)
    return fixed, pd.DataFrame(rand, columns=RANDOM_COLUMNS)


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
