"""Longitudinal measurement invariance: configural, metric, scalar and strict, as lavaan fits them.

:func:`measurement_invariance` fits the ladder of ``semTools::measEq.syntax(ID.fac = "std.lv",
auto = "all", longFacNames = ...)`` to one scale measured at two or more waves, compares
consecutive models, tests the equality constraints of a rejected step one by one (the partial
model frees the worst), and reports the latent means and variances of the later waves under
the highest level that holds. :func:`invariance_tables` writes the two tables of the
``longitudinal reliability --invariance`` output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from _empathic_base.results import Result
from models._checks import check_choice, check_unit
from models._columns import CI_HIGH, CI_LOW, ESTIMATE, P_VALUE, SE, STATISTIC
from models._errors import ConvergenceWarning, InvalidParameterError, SingularFitWarning
from models._version import __version__
from models.sem._fiml import FIMLProblem, saturated_fit
from models.sem._fit import LevelFit, fit_level
from models.sem._ml import MLProblem, h1_trace
from models.sem._spec import LEVELS, STEP_KIND, build_spec

__all__ = [
    "InvarianceResult",
    "invariance_sample_note",
    "invariance_tables",
    "measurement_invariance",
]

FUNC = "measurement_invariance"

SCOPE_NOTE = (
    "Ordinal (WLSMV) estimation is not available; missing answers are handled by "
    "full-information ML (nan_policy='fiml')."
)

FIT_COLUMNS = [
    "model",
    "level",
    "freed",
    "estimator",
    "n",
    "npar",
    "chisq",
    "df",
    "p_value",
    "chisq_ml",
    "p_value_ml",
    "scaling_factor",
    "cfi",
    "tli",
    "rmsea",
    "rmsea_ci_low",
    "rmsea_ci_high",
    "srmr",
    "loglik",
    "aic",
    "bic",
    "lrt_chisq",
    "lrt_df",
    "lrt_p",
    "delta_cfi",
    "delta_rmsea",
    "decision",
    "converged",
]

INVARIANCE_CSV_COLUMNS = [
    "instrument",
    "scale",
    "model",
    "estimator",
    "n",
    "chisq",
    "df",
    "p_value",
    "cfi",
    "tli",
    "rmsea",
    "rmsea_ci_low",
    "rmsea_ci_high",
    "srmr",
    "loglik",
    "aic",
    "bic",
    "lrt_chisq",
    "lrt_df",
    "lrt_p",
    "delta_cfi",
    "decision",
    "converged",
]


@dataclass(frozen=True, repr=False)
class InvarianceResult(Result):
    """The invariance ladder of one scale: fits, comparisons, parameters, latent change.

    Attributes
    ----------
    fits : pandas.DataFrame
        One row per model (the four levels, then the partial model when one was fitted):
        ``model, level, freed, estimator, n, npar, chisq, df, p_value, chisq_ml,
        p_value_ml, scaling_factor, cfi, tli, rmsea, rmsea_ci_low, rmsea_ci_high, srmr,
        loglik, aic, bic, lrt_chisq, lrt_df, lrt_p, delta_cfi, delta_rmsea, decision,
        converged``. Under MLR ``chisq``, ``p_value``, ``cfi``, ``tli`` and ``rmsea`` (with
        its interval) are lavaan's scaled versions and ``chisq_ml``/``p_value_ml`` the
        normal-theory ones; ``lrt_*`` compare each model with the one before it (the partial
        model with the level below its own).
    parameters : pandas.DataFrame
        Every parameter of every model: ``model, lhs, op, rhs, kind, item, wave, free,
        estimate, se, statistic, p_value, ci_low, ci_high`` in lavaan's notation (observed
        ``{item}.{wave}``, latent ``{factor}.{wave}``; fixed parameters have NaN ``se``).
    latent : pandas.DataFrame
        The later waves' latent means and variances under ``level_held`` (the first wave's
        are fixed at 0 and 1): ``quantity, wave, estimate, se, statistic, p_value, ci_low,
        ci_high, model``. Empty when not even metric invariance holds.
    score_tests : pandas.DataFrame
        Univariate score tests (lavaan's ``lavTestScore``) of the equality constraints added
        at the first rejected step, worst first: ``model, constraint, lhs, op, rhs, item,
        wave, statistic, df, p_value``. Empty when no step is rejected.
    level_held : str
        The highest level whose step and every step before it hold (``"configural"`` when
        metric is rejected), or the partial model (e.g. ``"scalar (partial)"``) when the first
        rejected step holds once its worst constraint is freed (Byrne, Shavelson & Muthen,
        1989); the ladder stops there.
    meta : dict
        Version, parameters, waves, items, ``n_used`` and ``n_excluded`` participants, the
        estimator note.
    """

    fits: pd.DataFrame
    parameters: pd.DataFrame
    latent: pd.DataFrame
    score_tests: pd.DataFrame
    level_held: str
    meta: dict = field(default_factory=dict)

    def _title(self) -> str:
        m = self.meta
        return (
            f"Measurement invariance ({m['estimator']}): {len(m['items'])} items x "
            f"{len(m['waves'])} waves, n = {m['n_used']}; highest level held: {self.level_held}"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            ("Invariance ladder", self.fits),
            ("Latent means and variances of the later waves", self.latent),
            ("Score tests of the rejected step's constraints", self.score_tests),
            ("Parameters", self.parameters),
        ]

    def _text(self, decimals: int) -> str:
        m = self.meta
        shown = self.fits[
            [
                "model",
                "chisq",
                "df",
                "p_value",
                "cfi",
                "tli",
                "rmsea",
                "srmr",
                "lrt_chisq",
                "lrt_df",
                "lrt_p",
                "delta_cfi",
                "delta_rmsea",
                "decision",
            ]
        ]
        blocks = [
            self._title(),
            f"Estimator: {m['estimator_note']}",
            f"Decision rule: {m['decision_rule']}",
            shown.round(decimals).to_string(index=False),
        ]
        if not self.fits["converged"].all():
            bad = ", ".join(self.fits.loc[~self.fits["converged"], "model"])
            blocks.append(f"Did not converge: {bad}; their numbers are not to be read.")
        blocks.extend(m["notes"])
        if len(self.latent):
            blocks.append(
                f"Latent change under the {self.level_held} model (first wave: mean 0, "
                "variance 1)\n" + self.latent.round(decimals).to_string(index=False)
            )
        else:
            blocks.append("Latent change: not comparable (metric invariance does not hold).")
        if len(self.score_tests):
            blocks.append(
                "Score tests (1 df) of the rejected step's equality constraints\n"
                + self.score_tests.head(10).round(decimals).to_string(index=False)
            )
        if m["n_excluded"]:
            why = "with no answer at all" if m["nan_policy"] == "fiml" else "for missing answers"
            blocks.append(
                f"{m['n_excluded']} participant(s) left out {why} (nan_policy={m['nan_policy']!r})."
            )
        return "\n\n".join(blocks)


# -- BLAS threads -------------------------------------------------------------------------
@functools.cache
def _controller() -> Any:
    """Find the process's thread pools once (the lookup reads every loaded library)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def _one_blas_thread(func: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``func`` with one BLAS thread.

    The fits are many small dense products (a few dozen parameters, a few dozen variables);
    with a threaded BLAS each product can wake worker threads, which costs far more than the
    arithmetic on a busy machine (a 20 x 20 product: 0.06 ms on one thread, 40 ms with
    OpenBLAS's default on two loaded cores).
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _controller().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper


# -- input --------------------------------------------------------------------------------
def _wide(
    data: Any,
    items: list[str],
    id_col: str,
    wave_col: str,
    waves: list[Any] | None,
    nan_policy: str,
) -> tuple[np.ndarray, list[Any], int, pd.Index]:
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {FUNC} must be a pandas DataFrame (long format: one row "
            f"per participant and wave); got {type(data).__name__}"
        )
    problems: list[str] = []
    missing_cols = [c for c in [id_col, wave_col, *items] if c not in data.columns]
    if missing_cols:
        raise InvalidParameterError(f"{FUNC}: the data lack the column(s) {missing_cols}")
    non_numeric = [c for c in items if not pd.api.types.is_numeric_dtype(data[c])]
    if non_numeric:
        raise InvalidParameterError(
            f"{FUNC}: the item column(s) {non_numeric} must be numeric; convert them "
            "explicitly (codes are never converted here)"
        )
    if waves is None:
        if not pd.api.types.is_numeric_dtype(data[wave_col]):
            raise InvalidParameterError(
                f"the `waves` parameter of {FUNC} is needed when `{wave_col}` is not numeric: "
                "pass the wave labels in their order, e.g. waves=['pre', 'mid', 'post']"
            )
        waves = sorted(data[wave_col].dropna().unique().tolist())
    waves = list(waves)
    if len(waves) < 2:
        raise InvalidParameterError(f"{FUNC} needs at least two waves; got {waves!r}")
    if len(items) < 2:
        raise InvalidParameterError(f"{FUNC} needs at least two items; got {items!r}")
    frame = data[data[wave_col].isin(waves)]
    unknown = sorted(set(data[wave_col].dropna()) - set(waves), key=str)
    if unknown:
        problems.append(
            f"{int((~data[wave_col].isin(waves)).sum())} row(s) have a `{wave_col}` value not "
            f"in waves={waves!r}: {unknown[:5]!r}"
        )
    absent = [w for w in waves if not (frame[wave_col] == w).any()]
    if absent:
        problems.append(f"no row has the wave(s) {absent!r} in `{wave_col}`")
    no_id = frame[id_col].isna()
    if no_id.any():
        problems.append(f"{int(no_id.sum())} row(s) have no `{id_col}`")
    dup = frame.duplicated([id_col, wave_col], keep=False)
    if dup.any():
        ids = frame.loc[dup, id_col].drop_duplicates().tolist()
        problems.append(
            f"{int(dup.sum())} rows repeat a participant x wave ({id_col} {ids[:10]!r}); "
            "rows are never averaged"
        )
    if problems:
        raise InvalidParameterError(f"{FUNC}: " + "; ".join(problems))
    wide = frame.set_index([id_col, wave_col])[items].unstack(wave_col)
    columns = [(item, wave) for wave in waves for item in items]
    wide = wide.reindex(columns=pd.MultiIndex.from_tuples(columns))
    if nan_policy == "fiml":
        empty = wide.isna().all(axis=1)
        return wide.loc[~empty].to_numpy(dtype=float), waves, int(empty.sum()), wide.index
    incomplete = wide.isna().any(axis=1)
    n_excluded = int(incomplete.sum())
    if n_excluded and nan_policy == "raise":
        raise InvalidParameterError(
            f"{FUNC}: {n_excluded} of {len(wide)} participants lack an answer or a wave "
            f"(first ids: {wide.index[incomplete].tolist()[:10]!r}). Pass "
            "nan_policy='fiml' to use every answer (full-information ML) or nan_policy='omit' "
            "to leave them out (they are counted in the result)."
        )
    wide = wide.loc[~incomplete]
    return wide.to_numpy(dtype=float), waves, n_excluded, wide.index


# -- tables -------------------------------------------------------------------------------
def _names(entry: tuple, items: list[str], waves: list[Any], factor: str) -> tuple[str, str, str]:
    kind = entry[0]

    def ov(i: int, t: int) -> str:
        return f"{items[i]}.{waves[t]}"

    def lv(t: int) -> str:
        return f"{factor}.{waves[t]}"

    if kind == "lambda":
        return lv(entry[2]), "=~", ov(entry[1], entry[2])
    if kind == "nu":
        return ov(entry[1], entry[2]), "~1", ""
    if kind == "theta":
        return ov(entry[1], entry[2]), "~~", ov(entry[1], entry[2])
    if kind == "theta_cov":
        return ov(entry[1], entry[2]), "~~", ov(entry[1], entry[3])
    if kind == "psi":
        return lv(entry[1]), "~~", lv(entry[1])
    if kind == "psi_cov":
        return lv(entry[1]), "~~", lv(entry[2])
    return lv(entry[1]), "~1", ""


def _z_table(est: np.ndarray, se: np.ndarray, ci_level: float) -> dict[str, np.ndarray]:
    with np.errstate(divide="ignore", invalid="ignore"):
        z = est / se
    crit = stats.norm.ppf(0.5 + ci_level / 2.0)
    return {
        ESTIMATE: est,
        SE: se,
        STATISTIC: z,
        P_VALUE: 2.0 * stats.norm.sf(np.abs(z)),
        CI_LOW: est - crit * se,
        CI_HIGH: est + crit * se,
    }


def _parameters(
    fit: LevelFit, model: str, items: list[str], waves: list[Any], factor: str, ci_level: float
) -> pd.DataFrame:
    spec = fit.spec
    se_free = np.sqrt(np.clip(np.diag(fit.cov), 0.0, None))
    rows = []
    for entry, a in spec.entries.items():
        rows.append((entry, float(fit.theta[a]), float(se_free[a]), True))
    for entry, value in spec.fixed.items():
        rows.append((entry, float(value), float("nan"), False))
    table = pd.DataFrame(
        {
            "model": model,
            "lhs": [_names(r[0], items, waves, factor)[0] for r in rows],
            "op": [_names(r[0], items, waves, factor)[1] for r in rows],
            "rhs": [_names(r[0], items, waves, factor)[2] for r in rows],
            "kind": [r[0][0] for r in rows],
            "item": [
                items[r[0][1]] if r[0][0] in STEP_KIND.values() or r[0][0] == "theta_cov" else None
                for r in rows
            ],
            "wave": [
                waves[r[0][2]]
                if r[0][0] in ("lambda", "nu", "theta", "theta_cov")
                else waves[r[0][1]]
                for r in rows
            ],
            "free": [r[3] for r in rows],
        }
    )
    numbers = _z_table(np.array([r[1] for r in rows]), np.array([r[2] for r in rows]), ci_level)
    for key, values in numbers.items():
        table[key] = values
    return table


def _score_tests(fit: LevelFit, step: str) -> list[tuple[tuple, float]]:
    """Return (constraint, statistic) for each equality constraint added at ``step``.

    The statistic is lavaan's univariate ``lavTestScore``: with the constraint released
    (its entry given its own parameter, started at the constrained estimate), ``N g' I^-1 g``
    with ``g`` the gradient of the fit function and ``I`` the unit expected information
    (summed over the missing-data patterns under full-information ML). Under MLR this is the
    ordinary score test, as lavaan falls back to.
    """
    spec = fit.spec
    assert fit.problem is not None
    y = fit.problem.y
    out = []
    for constraint in spec.constraints:
        if constraint[0] != STEP_KIND[step]:
            continue
        ext = build_spec(spec.n_items, spec.n_waves, spec.level, (*spec.freed, constraint))
        theta = np.empty(ext.n_params)
        for entry, a in ext.entries.items():
            theta[a] = fit.theta[spec.entries[entry]]
        missing = np.isnan(y).any()
        problem = FIMLProblem(ext, y) if missing else MLProblem(ext, y)
        mom = problem.moments(theta)
        grad = problem.gradient(theta, mom)
        info = problem.expected_information(mom)
        stat = float(fit.n * grad @ np.linalg.solve(info, grad))
        out.append((constraint, stat))
    return out


def _compare(fit: LevelFit, prev: LevelFit, scaled: bool) -> tuple[float, int, float]:
    """Return the likelihood-ratio (ML) or Satorra-Bentler (2001) scaled difference test."""
    ddf = fit.df - prev.df
    diff = fit.chisq - prev.chisq
    if scaled:
        cd = (fit.df * fit.scaling - prev.df * prev.scaling) / ddf
        diff = diff / cd
    return diff, ddf, float(stats.chi2.sf(diff, ddf))


def _fit_row(fit: LevelFit, model: str, level: str, freed: str) -> dict[str, Any]:
    scaled = fit.estimator == "MLR"
    idx = fit.indices(scaled=scaled)
    return {
        "model": model,
        "level": level,
        "freed": freed,
        "estimator": fit.estimator,
        "n": fit.n,
        "npar": fit.npar,
        "chisq": fit.chisq_scaled if scaled else fit.chisq,
        "df": fit.df,
        "p_value": fit.p_value_scaled if scaled else fit.p_value,
        "chisq_ml": fit.chisq,
        "p_value_ml": fit.p_value,
        "scaling_factor": fit.scaling,
        **idx,
        "srmr": fit.srmr,
        "loglik": fit.loglik,
        "aic": fit.aic,
        "bic": fit.bic,
        "converged": fit.converged,
    }


@_one_blas_thread
def measurement_invariance(
    data: pd.DataFrame,
    *,
    items: list[str],
    id_col: str,
    wave_col: str,
    waves: list[Any] | None = None,
    estimator: str = "ML",
    delta_cfi: float = 0.01,
    delta_rmsea: float = 0.015,
    ci_level: float = 0.95,
    nan_policy: str = "raise",
    factor: str = "F",
) -> InvarianceResult:
    """Test longitudinal measurement invariance of one scale (configural to strict).

    Parameters
    ----------
    data : pandas.DataFrame
        Long format: one row per participant and wave, the item answers as numbers.
    items : list of str
        The scale's item columns (the same items at every wave; at least two).
    id_col : str
        The participant column.
    wave_col : str
        The wave column.
    waves : list, optional
        The waves in their order (default: the sorted values of a numeric ``wave_col``;
        needed for text labels).
    estimator : {"ML", "MLR"}, default "ML"
        Normal-theory ML, or ML with lavaan's MLR corrections (Yuan-Bentler scaled chi-square,
        Huber-White standard errors, Satorra-Bentler 2001 scaled differences) for Likert items
        that are not normal. Ordinal (WLSMV) estimation is not available.
    delta_cfi : float, default 0.01
        A step holds when CFI drops by at most this much (Cheung & Rensvold, 2002) ...
    delta_rmsea : float, default 0.015
        ... and RMSEA rises by at most this much (Chen, 2007).
    ci_level : float, default 0.95
        Level of the Wald intervals of the parameters and latent change.
    nan_policy : {"raise", "omit", "fiml"}, default "raise"
        A participant with a missing answer or wave is refused (``"raise"``), left out and
        counted in ``meta["n_excluded"]`` (``"omit"``), or kept with every answer they gave
        (``"fiml"``: full-information ML, lavaan's ``missing = "ml"``, with ML or MLR;
        participants with no answer at all are left out and counted).
    factor : str, default "F"
        The latent variable's name in the parameter table (``{factor}.{wave}``).

    Returns
    -------
    InvarianceResult
        ``fits`` (the ladder and, when a step is rejected, the partial model), ``parameters``,
        ``latent`` (later waves' latent means and variances under the highest level held),
        ``score_tests``, ``level_held``, ``meta``.

    Warns
    -----
    ConvergenceWarning
        A model did not converge (also said in the summary; its numbers are not to be read).
    SingularFitWarning
        A residual or latent variance estimate is negative (not admissible; listed in
        ``meta["notes"]`` and the summary).

    Raises
    ------
    InvalidParameterError
        A bad parameter; missing columns; non-numeric items; an unknown wave; a repeated
        participant x wave; incomplete participants under ``nan_policy="raise"``.

    See Also
    --------
    invariance_tables : the two CSV tables of ``longitudinal reliability --invariance``.

    Notes
    -----
    The model: one factor per wave with the same items; the residuals of the same item
    correlate across all waves; the factors correlate freely; a mean structure. The ladder is
    identified as ``semTools::measEq.syntax(ID.fac = "std.lv", auto = "all")`` with
    ``longFacNames``: configural (every latent mean 0, variance 1), metric (loadings equal
    across waves; later latent variances free), scalar (+ intercepts equal; later latent
    means free), strict (+ residual variances equal).

    Consecutive models are compared by the likelihood-ratio test (MLR: the Satorra-Bentler
    2001 scaled difference), and by ``delta_cfi = CFI(previous) - CFI(this)`` and
    ``delta_rmsea = RMSEA(this) - RMSEA(previous)`` (MLR: the scaled indices). A step
    "holds" when both changes are within the cut-offs; the first failing step is
    "rejected" and later steps are "not tested". For the rejected step the equality
    constraints it added are score-tested one at a time (``lavTestScore``) and the partial
    model frees the worst (the largest statistic); it is compared with the level below,
    and when it holds the latent change is read from it (partial invariance).

    Validated against lavaan 0.6-14 and semTools 0.5-6 (``cfa`` on the syntax of
    ``measEq.syntax``, ``fitMeasures``, ``lavTestLRT``, ``lavTestScore``) on three real data
    sets (psychTools ``sai``: two, three and four waves), ML, MLR and full-information ML with
    either (``missing = "ml"``, the incomplete participants of the same studies): chi-square
    to 1e-3, fit indices, estimates and standard errors to 1e-4
    (``tests/models/sem/test_invariance.py``).

    With ``nan_policy="fiml"`` the chi-square is twice the log-likelihood difference from the
    saturated model (fitted by EM, then Fisher scoring), the baseline model fits each item's
    available answers, SRMR uses the saturated model's moments and standard errors the
    observed information (MLR: its sandwich with the casewise scores; the scaling factor's h1
    trace from the saturated model's observed information and casewise scores), as lavaan
    does.

    References
    ----------
    Cheung, G. W., & Rensvold, R. B. (2002). Evaluating goodness-of-fit indexes for testing
    measurement invariance. Structural Equation Modeling, 9(2), 233-255.
    Chen, F. F. (2007). Sensitivity of goodness of fit indexes to lack of measurement
    invariance. Structural Equation Modeling, 14(3), 464-504.
    Byrne, B. M., Shavelson, R. J., & Muthen, B. (1989). Testing for the equivalence of
    factor covariance and mean structures: the issue of partial measurement invariance.
    Psychological Bulletin, 105(3), 456-466.
    Satorra, A., & Bentler, P. M. (2001). A scaled difference chi-square test statistic for
    moment structure analysis. Psychometrika, 66(4), 507-514.
    Yuan, K.-H., & Bentler, P. M. (2000). Three likelihood-based methods for mean and
    covariance structure analysis with nonnormal missing data. Sociological Methodology, 30,
    165-200.

    Examples
    --------
    Three items at two waves, simulated invariant, the latent mean rising by 0.3:

    >>> import numpy as np, pandas as pd
    >>> from models.sem import measurement_invariance
    >>> rng = np.random.default_rng(0)
    >>> eta = rng.normal(size=(300, 2)) + [0.0, 0.3]
    >>> y = np.hstack([0.8 * eta[:, [w]] + rng.normal(scale=0.6, size=(300, 3)) for w in (0, 1)])
    >>> data = pd.DataFrame({"id": np.repeat(np.arange(300), 2), "wave": np.tile([1, 2], 300)})
    >>> data[["x0", "x1", "x2"]] = y.reshape(600, 3)
    >>> res = measurement_invariance(data, items=["x0", "x1", "x2"], id_col="id", wave_col="wave")
    >>> res.fits["decision"].tolist()
    ['baseline', 'holds', 'holds', 'holds']
    >>> res.latent[["quantity", "wave", "estimate"]].round(2)
       quantity  wave  estimate
    0      mean     2      0.39
    1  variance     2      0.93
    """
    _check_parameters(estimator, nan_policy, ci_level, delta_cfi, delta_rmsea, items)
    items = list(items)
    y, waves, n_excluded, _ = _wide(data, items, id_col, wave_col, waves, nan_policy)
    p = len(items)
    n, k = y.shape
    if n <= k and nan_policy != "fiml":
        raise InvalidParameterError(
            f"{FUNC}: {n} complete participants for {k} observed variables "
            f"({p} items x {len(waves)} waves); the sample covariance matrix is singular"
        )
    scaled = estimator == "MLR"
    h1 = h1_trace(y) if scaled else None
    n_incomplete = int(np.isnan(y).any(axis=1).sum())
    saturated = saturated_fit(y) if n_incomplete else None
    fits: dict[str, LevelFit] = {}
    for level in LEVELS:
        fits[level] = fit_level(y, p, level, estimator=estimator, h1=h1, saturated=saturated)

    rows, rejected, level_held = _ladder(fits, scaled, delta_cfi, delta_rmsea)

    param_tables = [
        _parameters(fits[level], level, items, waves, factor, ci_level) for level in LEVELS
    ]
    score_table = pd.DataFrame(columns=_SCORE_COLUMNS)
    if rejected is not None and rows[LEVELS.index(rejected)]["decision"] == "rejected":
        tests = _score_tests(fits[rejected], rejected)
        score_table = _score_table(tests, rejected, items, waves, factor)
        worst = max(tests, key=lambda pair: pair[1])[0]
        partial = fit_level(
            y, p, rejected, estimator=estimator, freed=(worst,), h1=h1, saturated=saturated
        )
        name = f"{rejected} (partial)"
        lhs, op, rhs = _names(worst, items, waves, factor)
        row = _fit_row(partial, name, rejected, f"{lhs} {op} {rhs}".strip())
        below = LEVELS[LEVELS.index(rejected) - 1]
        lrt = _compare(partial, fits[below], scaled)
        prev_row = rows[LEVELS.index(below)]
        row.update(lrt_chisq=lrt[0], lrt_df=lrt[1], lrt_p=lrt[2])
        row["delta_cfi"] = prev_row["cfi"] - row["cfi"]
        row["delta_rmsea"] = row["rmsea"] - prev_row["rmsea"]
        ok = row["delta_cfi"] <= delta_cfi and row["delta_rmsea"] <= delta_rmsea
        row["decision"] = "holds" if ok and partial.converged else "rejected"
        if row["decision"] == "holds":
            level_held = name
        rows.append(row)
        param_tables.append(_parameters(partial, name, items, waves, factor, ci_level))

    fit_table = pd.DataFrame(rows).reindex(columns=FIT_COLUMNS)
    fit_table["lrt_df"] = fit_table["lrt_df"].astype("Int64")
    parameters = pd.concat(param_tables, ignore_index=True)
    negative = parameters[
        parameters["free"]
        & parameters["kind"].isin(["theta", "psi"])
        & (parameters["estimate"] < 0)
    ]
    notes = [
        f"{row.model}: negative variance estimate {row.lhs} ~~ {row.rhs} = {row.estimate:.4g} "
        "(not admissible: the model does not fit these data as specified)"
        for row in negative.itertuples()
    ]
    if notes:
        import warnings

        warnings.warn(f"{FUNC}: " + "; ".join(notes), SingularFitWarning, stacklevel=3)
    latent = _latent(parameters, level_held)
    if not fit_table["converged"].all():
        import warnings

        bad = ", ".join(fit_table.loc[~fit_table["converged"], "model"])
        warnings.warn(
            f"{FUNC}: the model(s) {bad} did not converge; their numbers are not to be read",
            ConvergenceWarning,
            stacklevel=3,
        )
    note = _estimator_note(estimator, n_incomplete, n)
    meta = {
        "version": __version__,
        "function": FUNC,
        "estimator": estimator,
        "estimator_note": f"{note}. {SCOPE_NOTE}",
        "decision_rule": (
            f"a step holds when CFI drops by at most {delta_cfi} (Cheung & Rensvold, 2002) "
            f"and RMSEA rises by at most {delta_rmsea} (Chen, 2007)"
            + ("; scaled indices under MLR" if scaled else "")
        ),
        "items": items,
        "waves": waves,
        "id_col": id_col,
        "wave_col": wave_col,
        "n_used": int(n),
        "n_excluded": n_excluded,
        "n_incomplete": n_incomplete,
        "nan_policy": nan_policy,
        "delta_cfi": delta_cfi,
        "delta_rmsea": delta_rmsea,
        "ci_level": ci_level,
        "notes": notes,
    }
    return InvarianceResult(
        fits=fit_table,
        parameters=parameters,
        latent=latent,
        score_tests=score_table,
        level_held=level_held,
        meta=meta,
    )


_SCORE_COLUMNS = [
    "model",
    "constraint",
    "lhs",
    "op",
    "rhs",
    "item",
    "wave",
    "statistic",
    "df",
    "p_value",
]
"""Columns of :attr:`InvarianceResult.score_tests`, in order."""


def _check_parameters(
    estimator: str,
    nan_policy: str,
    ci_level: float,
    delta_cfi: float,
    delta_rmsea: float,
    items: Any,
) -> None:
    """Refuse a bad parameter of :func:`measurement_invariance` (before the data are read)."""
    check_choice(estimator, ("ML", "MLR"), name="estimator", where=FUNC)
    check_choice(nan_policy, ("raise", "omit", "fiml"), name="nan_policy", where=FUNC)
    check_unit(ci_level, name="ci_level", where=FUNC)
    for name, value in (("delta_cfi", delta_cfi), ("delta_rmsea", delta_rmsea)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
            raise InvalidParameterError(
                f"the `{name}` parameter of {FUNC} must be a non-negative number; got {value!r}"
            )
    if isinstance(items, str) or not isinstance(items, list | tuple):
        raise InvalidParameterError(
            f"the `items` parameter of {FUNC} must be a list of column names; got {items!r}"
        )


def _ladder(
    fits: dict[str, LevelFit], scaled: bool, delta_cfi: float, delta_rmsea: float
) -> tuple[list[dict[str, Any]], str | None, str]:
    """Which steps of the ladder hold: the fit rows, the first step rejected, the level held."""
    rows = [_fit_row(fits[level], level, level, "") for level in LEVELS]
    rejected: str | None = None
    for i, level in enumerate(LEVELS[1:], start=1):
        prev_row, row = rows[i - 1], rows[i]
        lrt = _compare(fits[level], fits[LEVELS[i - 1]], scaled)
        row.update(lrt_chisq=lrt[0], lrt_df=lrt[1], lrt_p=lrt[2])
        row["delta_cfi"] = prev_row["cfi"] - row["cfi"]
        row["delta_rmsea"] = row["rmsea"] - prev_row["rmsea"]
        if rejected is not None:
            row["decision"] = f"not tested ({rejected} rejected)"
        elif not (fits[level].converged and fits[LEVELS[i - 1]].converged):
            row["decision"] = "not tested (a model did not converge)"
            rejected = level
        elif row["delta_cfi"] <= delta_cfi and row["delta_rmsea"] <= delta_rmsea:
            row["decision"] = "holds"
        else:
            row["decision"] = "rejected"
            rejected = level
    rows[0]["decision"] = "baseline" if fits["configural"].converged else "did not converge"
    level_held = "configural" if rejected is None or rejected == "metric" else None
    if rejected is None:
        level_held = "strict"
    elif level_held is None:
        level_held = LEVELS[LEVELS.index(rejected) - 1]
    if not fits["configural"].converged:
        level_held = "none"
    return rows, rejected, level_held


def _score_table(
    tests: list, rejected: str, items: list[str], waves: list[Any], factor: str
) -> pd.DataFrame:
    """Return the score test of each equality constraint of the rejected step, largest first."""
    records = []
    for constraint, stat in tests:
        lhs, op, rhs = _names(constraint, items, waves, factor)
        records.append(
            {
                "model": rejected,
                "constraint": f"{lhs} {op} {rhs}".strip() + f" = wave {waves[0]}",
                "lhs": lhs,
                "op": op,
                "rhs": rhs,
                "item": items[constraint[1]],
                "wave": waves[constraint[2]],
                "statistic": stat,
                "df": 1,
                "p_value": float(stats.chi2.sf(stat, 1)),
            }
        )
    return (
        pd.DataFrame(records)
        .sort_values("statistic", ascending=False, kind="stable")
        .reset_index(drop=True)
    )


def _estimator_note(estimator: str, n_incomplete: int, n: int) -> str:
    """Say how the models were estimated (``meta["estimator_note"]``, before the scope)."""
    if n_incomplete and estimator == "ML":
        return (
            f"ML with full-information ML for missing answers ({n_incomplete} of {n} "
            "participants incomplete; observed-information standard errors)"
        )
    if n_incomplete:
        return (
            f"MLR with full-information ML for missing answers ({n_incomplete} of {n} "
            "participants incomplete; Yuan-Bentler scaled chi-square, Mplus variant; "
            "Huber-White standard errors; Satorra-Bentler 2001 scaled differences)"
        )
    if estimator == "ML":
        return "ML (normal theory; expected information standard errors)"
    return (
        "MLR (Yuan-Bentler scaled chi-square, Mplus variant; Huber-White standard "
        "errors; Satorra-Bentler 2001 scaled differences)"
    )


def _latent(parameters: pd.DataFrame, model: str) -> pd.DataFrame:
    columns = ["quantity", "wave", ESTIMATE, SE, STATISTIC, P_VALUE, CI_LOW, CI_HIGH, "model"]
    level = model.removesuffix(" (partial)")
    if level not in ("metric", "scalar", "strict"):
        return pd.DataFrame(columns=columns)
    table = parameters[parameters["model"] == model]
    wanted = []
    if level in ("scalar", "strict"):
        means = table[(table["kind"] == "alpha") & table["free"]].assign(quantity="mean")
        wanted.append(means)
    variances = table[(table["kind"] == "psi") & table["free"]].assign(quantity="variance")
    wanted.append(variances)
    out = pd.concat(wanted, ignore_index=True)
    out["model"] = model
    return out.reindex(columns=columns).reset_index(drop=True)


def invariance_tables(
    result: InvarianceResult, *, instrument: str, scale: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the ``invariance.csv`` and ``invariance_params.csv`` tables of one scale.

    Parameters
    ----------
    result : InvarianceResult
        What :func:`measurement_invariance` returned.
    instrument, scale : str
        The names written in the first two columns.

    Returns
    -------
    invariance : pandas.DataFrame
        ``instrument, scale, model, estimator, n, chisq, df, p_value, cfi, tli, rmsea,
        rmsea_ci_low, rmsea_ci_high, srmr, loglik, aic, bic, lrt_chisq, lrt_df, lrt_p,
        delta_cfi, decision, converged`` (one row per model; MLR rows carry the scaled
        statistics).
    params : pandas.DataFrame
        ``instrument, scale, model, estimator, lhs, op, rhs, kind, item, wave, free,
        estimate, se, statistic, p_value, ci_low, ci_high``.

    Raises
    ------
    InvalidParameterError
        ``result`` is not an :class:`InvarianceResult`.
    """
    if not isinstance(result, InvarianceResult):
        raise InvalidParameterError(
            "the `result` parameter of invariance_tables must be an InvarianceResult; got "
            f"{type(result).__name__}"
        )
    fits = result.fits.assign(instrument=instrument, scale=scale)
    params = result.parameters.assign(
        instrument=instrument, scale=scale, estimator=result.meta["estimator"]
    )
    first = ["instrument", "scale", "model", "estimator"]
    params = params[first + [c for c in params.columns if c not in first]]
    return fits.reindex(columns=INVARIANCE_CSV_COLUMNS), params.reset_index(drop=True)


def invariance_sample_note(
    n: int, *, n_items: int, n_waves: int, per_parameter: float = 5.0
) -> str | None:
    """Return why a sample is too small for the configural model, or None when it is not.

    Parameters
    ----------
    n : int
        Complete participants.
    n_items, n_waves : int
        The scale's items and the waves it was measured at.
    per_parameter : float, default 5.0
        Participants needed per free parameter of the configural model (Bentler & Chou,
        1987: at least 5 under normal theory).

    Returns
    -------
    str or None
        One line for a report ("fewer participants than ..."), or None.

    Raises
    ------
    InvalidParameterError
        ``n``, ``n_items`` or ``n_waves`` is not a positive integer or too small.

    Notes
    -----
    The configural model of ``p`` items at ``T`` waves has ``3pT`` item parameters
    (loadings, intercepts, residual variances), ``pT(T-1)/2`` residual covariances of the same
    item across waves and ``T(T-1)/2`` factor covariances.

    References
    ----------
    Bentler, P. M., & Chou, C.-P. (1987). Practical issues in structural modeling.
    Sociological Methods & Research, 16(1), 78-117.

    Examples
    --------
    >>> from models.sem import invariance_sample_note
    >>> print(invariance_sample_note(41, n_items=4, n_waves=3))  # doctest: +NORMALIZE_WHITESPACE
    41 participants with complete answers; the configural model of 4 items x 3 waves has 51
    free parameters and needs at least 255 (5 per parameter; Bentler & Chou, 1987)
    >>> invariance_sample_note(300, n_items=4, n_waves=3) is None
    True
    """
    where = "invariance_sample_note"
    for name, value, low in (("n", n, 0), ("n_items", n_items, 2), ("n_waves", n_waves, 2)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
            raise InvalidParameterError(
                f"the `{name}` parameter of {where} must be an integer >= {low}; got {value!r}"
            )
    if isinstance(per_parameter, bool) or not isinstance(per_parameter, int | float):
        raise InvalidParameterError(
            f"the `per_parameter` parameter of {where} must be a positive number; "
            f"got {per_parameter!r}"
        )
    if not per_parameter > 0:
        raise InvalidParameterError(
            f"the `per_parameter` parameter of {where} must be a positive number; "
            f"got {per_parameter!r}"
        )
    q = build_spec(int(n_items), int(n_waves), "configural").n_params
    needed = int(np.ceil(per_parameter * q))
    if n >= needed:
        return None
    return (
        f"{n} participants with complete answers; the configural model of {n_items} items x "
        f"{n_waves} waves has {q} free parameters and needs at least {needed} "
        f"({per_parameter:g} per parameter; Bentler & Chou, 1987)"
    )
