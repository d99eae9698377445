"""Panel-data companions to the mixed model: within, between and random-effects estimators.

Thin, validated wrappers around :mod:`linearmodels` (imported when a fit is requested) that
return the package's column vocabulary, plus the Hausman test and the Mundlak decomposition
(:func:`within_between`) that lets :class:`models.lmm.LinearMixedModel` separate within- from
between-person effects.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import special

from _empathic_base.optional import require
from _empathic_base.results import Result
from models._checks import check_choice, check_unit
from models._columns import FIXED_COLUMNS
from models._errors import DataQualityWarning, InvalidParameterError
from models._version import __version__

__all__ = [
    "HausmanTest",
    "PanelFit",
    "fit_between",
    "fit_random_effects",
    "fit_within",
    "hausman_test",
    "within_between",
]

CovType = Literal["unadjusted", "robust", "clustered"]
_COV_TYPES = ("unadjusted", "robust", "clustered")


@dataclass(frozen=True, repr=False)
class PanelFit(Result):
    """Result of a panel estimator.

    Attributes
    ----------
    estimator : str
        ``"within"``, ``"random"`` or ``"between"``.
    coefficients : pandas.DataFrame
        ``term, estimate, se, df, statistic, p_value, ci_low, ci_high`` (``statistic`` is ``t``
        with ``df`` residual degrees of freedom; the constant is named ``Intercept``).
    cov : pandas.DataFrame
        Covariance matrix of the estimates.
    n_obs : int
        Observations used.
    n_entities : int
        Number of entities (groups).
    df_resid : float
        Residual degrees of freedom.
    r2_within, r2_between, r2_overall : float
        R-squared of the fitted coefficients on demeaned, group-mean and raw data.
    variance_components : pandas.DataFrame
        ``component, variance`` (``entity`` and ``residual``; random-effects fits only, else
        empty).
    cov_type : str
        ``"unadjusted"``, ``"robust"`` or ``"clustered"`` (by entity).
    meta : dict
        Package version, call parameters, rows used and dropped.
    """

    estimator: str
    coefficients: pd.DataFrame
    cov: pd.DataFrame
    n_obs: int
    n_entities: int
    df_resid: float
    r2_within: float
    r2_between: float
    r2_overall: float
    variance_components: pd.DataFrame
    cov_type: str
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        return (
            f"PanelFit({self.estimator}: {self.n_obs} observations of {self.n_entities} "
            f"entities, {self.cov_type} covariance)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            ("Coefficients", self.coefficients),
            ("Variance components", self.variance_components),
        ]


@dataclass(frozen=True, repr=False)
class HausmanTest(Result):
    """Hausman test of fixed against random effects.

    Attributes
    ----------
    statistic : float
        ``d' (V_within - V_random)^{-1} d`` with ``d = b_within - b_random``.
    df : int
        Number of coefficients compared (the rank of the covariance difference when singular).
    p_value : float
        Upper tail of the chi-square distribution.
    table : pandas.DataFrame
        ``term, within, random, difference, se_difference`` (``se_difference`` is NaN where
        the variance difference is not positive).
    """

    statistic: float
    df: int
    p_value: float
    table: pd.DataFrame

    def _title(self) -> str:
        return f"HausmanTest(chi2({self.df}) = {self.statistic:.3g}, p = {self.p_value:.3g})"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Coefficients compared", self.table)]


# ---------------------------------------------------------------------------------------------
# validation and data preparation


def _check_columns(data: Any, names: list[str], func: str) -> None:
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {func} must be a pandas DataFrame; got {type(data).__name__}"
        )
    missing = [c for c in names if c not in data.columns]
    if missing:
        raise InvalidParameterError(f"{func}: the data lack the column(s) {missing}")


def _as_list(x_cols: Any, func: str) -> list[str]:
    if isinstance(x_cols, str):
        return [x_cols]
    if (
        not isinstance(x_cols, list | tuple)
        or not x_cols
        or not all(isinstance(c, str) for c in x_cols)
    ):
        raise InvalidParameterError(
            f"the `x_cols` parameter of {func} must be a non-empty list of column names; "
            f"got {x_cols!r}"
        )
    return list(x_cols)


def _check_options(cov_type: Any, ci_level: Any, func: str) -> None:
    check_choice(cov_type, list(_COV_TYPES), name="cov_type", where=func)
    check_unit(ci_level, name="ci_level", where=func)


def _panel_frame(
    data: pd.DataFrame,
    *,
    outcome_col: str,
    x_cols: list[str],
    id_col: str,
    time_col: str | None,
    func: str,
) -> tuple[pd.DataFrame, int]:
    used = [outcome_col, *x_cols, id_col] + ([time_col] if time_col else [])
    _check_columns(data, used, func)
    bad = [
        c
        for c in [outcome_col, *x_cols]
        if not (pd.api.types.is_numeric_dtype(data[c]) or pd.api.types.is_bool_dtype(data[c]))
    ]
    if bad:
        raise InvalidParameterError(
            f"{func}: the column(s) {bad} must be numeric; encode categories as indicators first"
        )
    frame = data.loc[:, list(dict.fromkeys(used))]
    keep = frame.notna().all(axis=1)
    frame = frame.loc[keep].copy()
    n_dropped = int((~keep).sum())
    if time_col is None:
        time = frame.groupby(id_col, sort=False).cumcount()
    else:
        time = frame[time_col]
    index = pd.MultiIndex.from_arrays(
        [frame[id_col].to_numpy(), time.to_numpy()], names=["entity", "time"]
    )
    if index.duplicated().any():
        dups = index[index.duplicated(keep=False)].unique()
        shown = [f"{e}/{t}" for e, t in list(dups)[:10]]
        raise InvalidParameterError(
            f"{func}: {len(dups)} entity/time pair(s) occur more than once, e.g. {shown}; "
            "each entity may have one row per time point (aggregate explicitly if intended)"
        )
    out = pd.DataFrame(
        {c: frame[c].to_numpy(dtype=float) for c in [outcome_col, *x_cols]}, index=index
    )
    out = out.sort_index()
    if out.index.get_level_values(0).nunique() < 2:
        raise InvalidParameterError(f"{func}: the data have fewer than two entities")
    return out, n_dropped


def _fit_kwargs(cov_type: str) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"cov_type": cov_type, "debiased": True}
    if cov_type == "clustered":
        kwargs["cluster_entity"] = True
    return kwargs


def _result(
    res: Any,
    *,
    estimator: str,
    cov_type: str,
    ci_level: float,
    n_entities: int,
    n_dropped: int,
    params: dict[str, Any],
    variance_components: pd.DataFrame | None = None,
) -> PanelFit:
    names = ["Intercept" if n == "const" else str(n) for n in res.params.index]
    est = res.params.to_numpy(dtype=float)
    cov = np.asarray(res.cov, dtype=float)
    se = np.sqrt(np.diag(cov))
    df_resid = float(res.df_resid)
    t = est / se
    # the t distribution's ufuncs, which scipy.stats.t evaluates (its import is not needed)
    p = 2.0 * special.stdtr(df_resid, -np.abs(t))
    q = special.stdtrit(df_resid, 0.5 + ci_level / 2.0)
    table = pd.DataFrame(
        {
            "term": names,
            "estimate": est,
            "se": se,
            "df": np.full(len(est), df_resid),
            "statistic": t,
            "p_value": p,
            "ci_low": est - q * se,
            "ci_high": est + q * se,
        },
        columns=FIXED_COLUMNS,
    )
    if variance_components is None:
        variance_components = pd.DataFrame(
            {"component": pd.Series(dtype=object), "variance": pd.Series(dtype=float)}
        )
    return PanelFit(
        estimator=estimator,
        coefficients=table,
        cov=pd.DataFrame(cov, index=names, columns=names),
        n_obs=int(res.nobs),
        n_entities=int(n_entities),
        df_resid=df_resid,
        r2_within=float(res.rsquared_within),
        r2_between=float(res.rsquared_between),
        r2_overall=float(res.rsquared_overall),
        variance_components=variance_components,
        cov_type=cov_type,
        meta={
            "package_version": __version__,
            "params": params,
            "n_used": int(res.nobs),
            "n_excluded": n_dropped,
        },
    )


# ---------------------------------------------------------------------------------------------
# estimators


def fit_within(
    data: pd.DataFrame,
    *,
    outcome_col: str,
    x_cols: list[str],
    id_col: str,
    time_col: str | None = None,
    cov_type: CovType = "clustered",
    ci_level: float = 0.95,
) -> PanelFit:
    """Fixed-effects (within) estimator with entity effects.

    Parameters
    ----------
    data : pandas.DataFrame
        Long data, one row per entity and time point.
    outcome_col : str
        Outcome column.
    x_cols : list of str
        Time-varying regressors (time-invariant ones are absorbed by the entity effects).
    id_col : str
        Entity (person) identifier.
    time_col : str, optional
        Time identifier; default the row order within each entity.
    cov_type : {"clustered", "unadjusted", "robust"}, default "clustered"
        Covariance: clustered by entity (Arellano, with the small-sample factor of Stata and
        ``plm`` ``type = "HC1"``), classical, or heteroskedasticity-robust.
    ci_level : float, default 0.95
        Confidence level of the intervals.

    Returns
    -------
    PanelFit
        ``coefficients`` with ``term, estimate, se, df, statistic, p_value, ci_low, ci_high``
        (no intercept), R-squared values, ``cov`` and provenance.

    Raises
    ------
    InvalidParameterError
        Missing or non-numeric columns, a duplicated entity/time pair, fewer than two
        entities, or invalid options.
    ImportError
        When linearmodels is not installed.

    Notes
    -----
    ``y_it - ybar_i = (x_it - xbar_i)' beta + e_it - ebar_i`` estimated by OLS
    (``linearmodels.PanelOLS(entity_effects=True)``). Rows with a missing value are dropped
    (``meta["n_excluded"]``). Validated against ``plm::plm(model = "within")`` 2.6-2 and
    ``vcovHC(method = "arellano", type = "HC1", cluster = "group")`` and against numpy
    demeaning + OLS.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from models.panel import fit_within
    >>> rng = np.random.default_rng(0)
    >>> ids = np.repeat(np.arange(30), 4)
    >>> x = rng.normal(size=120) + np.repeat(rng.normal(size=30), 4)
    >>> y = 2 * x + np.repeat(rng.normal(size=30), 4) + rng.normal(size=120)
    >>> df = pd.DataFrame({"id": ids, "x": x, "y": y})
    >>> fit = fit_within(df, outcome_col="y", x_cols=["x"], id_col="id")
    >>> fit.coefficients[["term", "estimate"]]
      term  estimate
    0    x   2.24...
    """
    func = "fit_within"
    x_cols = _as_list(x_cols, func)
    _check_options(cov_type, ci_level, func)
    frame, n_dropped = _panel_frame(
        data, outcome_col=outcome_col, x_cols=x_cols, id_col=id_col, time_col=time_col, func=func
    )
    lm = require("linearmodels.panel", feature=func)
    res = lm.PanelOLS(frame[outcome_col], frame[x_cols], entity_effects=True).fit(
        **_fit_kwargs(cov_type)
    )
    return _result(
        res,
        estimator="within",
        cov_type=cov_type,
        ci_level=float(ci_level),
        n_entities=frame.index.get_level_values(0).nunique(),
        n_dropped=n_dropped,
        params={
            "outcome_col": outcome_col,
            "x_cols": x_cols,
            "id_col": id_col,
            "time_col": time_col,
            "cov_type": cov_type,
            "ci_level": ci_level,
        },
    )


def fit_random_effects(
    data: pd.DataFrame,
    *,
    outcome_col: str,
    x_cols: list[str],
    id_col: str,
    time_col: str | None = None,
    cov_type: CovType = "unadjusted",
    ci_level: float = 0.95,
) -> PanelFit:
    """Random-effects (quasi-demeaned GLS) estimator with an intercept.

    Parameters
    ----------
    data : pandas.DataFrame
        Long data, one row per entity and time point.
    outcome_col : str
        Outcome column.
    x_cols : list of str
        Regressors (time-varying and time-invariant).
    id_col : str
        Entity identifier.
    time_col : str, optional
        Time identifier; default the row order within each entity.
    cov_type : {"unadjusted", "robust", "clustered"}, default "unadjusted"
        Covariance of the estimates.
    ci_level : float, default 0.95
        Confidence level of the intervals.

    Returns
    -------
    PanelFit
        ``coefficients`` (with ``Intercept``) and ``variance_components`` (``entity``,
        ``residual``).

    Raises
    ------
    InvalidParameterError
        As :func:`fit_within`.
    ImportError
        When linearmodels is not installed.

    Notes
    -----
    ``y_it - theta_i ybar_i`` is regressed on ``x_it - theta_i xbar_i`` with
    ``theta_i = 1 - sqrt(s2_e / (T_i s2_u + s2_e))`` and Swamy-Arora variance components
    (``linearmodels.RandomEffects``). On balanced panels this equals
    ``plm::plm(model = "random")`` 2.6-2; on unbalanced panels ``plm`` uses a different
    small-sample formula for ``s2_u``, so the two differ slightly.
    """
    func = "fit_random_effects"
    x_cols = _as_list(x_cols, func)
    _check_options(cov_type, ci_level, func)
    frame, n_dropped = _panel_frame(
        data, outcome_col=outcome_col, x_cols=x_cols, id_col=id_col, time_col=time_col, func=func
    )
    lm = require("linearmodels.panel", feature=func)
    exog = frame[x_cols].copy()
    exog.insert(0, "const", 1.0)
    res = lm.RandomEffects(frame[outcome_col], exog).fit(**_fit_kwargs(cov_type))
    vd = res.variance_decomposition
    components = pd.DataFrame(
        {
            "component": ["entity", "residual"],
            "variance": [float(vd["Effects"]), float(vd["Residual"])],
        }
    )
    return _result(
        res,
        estimator="random",
        cov_type=cov_type,
        ci_level=float(ci_level),
        n_entities=frame.index.get_level_values(0).nunique(),
        n_dropped=n_dropped,
        params={
            "outcome_col": outcome_col,
            "x_cols": x_cols,
            "id_col": id_col,
            "time_col": time_col,
            "cov_type": cov_type,
            "ci_level": ci_level,
        },
        variance_components=components,
    )


def fit_between(
    data: pd.DataFrame,
    *,
    outcome_col: str,
    x_cols: list[str],
    id_col: str,
    time_col: str | None = None,
    cov_type: Literal["unadjusted", "robust"] = "unadjusted",
    ci_level: float = 0.95,
) -> PanelFit:
    """Between estimator: OLS of entity means, with an intercept.

    Parameters
    ----------
    data : pandas.DataFrame
        Long data, one row per entity and time point.
    outcome_col : str
        Outcome column.
    x_cols : list of str
        Regressors.
    id_col : str
        Entity identifier.
    time_col : str, optional
        Time identifier; default the row order within each entity.
    cov_type : {"unadjusted", "robust"}, default "unadjusted"
        Covariance of the estimates.
    ci_level : float, default 0.95
        Confidence level of the intervals.

    Returns
    -------
    PanelFit
        ``coefficients`` (with ``Intercept``); ``df`` is the number of entities minus the
        number of coefficients.

    Raises
    ------
    InvalidParameterError
        As :func:`fit_within`, or ``cov_type="clustered"`` (one row per entity).
    ImportError
        When linearmodels is not installed.

    Notes
    -----
    ``ybar_i = alpha + xbar_i' beta + u_i`` by unweighted OLS over entities
    (``linearmodels.BetweenOLS``). Validated against ``plm::plm(model = "between")`` 2.6-2
    and numpy group means + OLS.
    """
    func = "fit_between"
    x_cols = _as_list(x_cols, func)
    _check_options(cov_type, ci_level, func)
    if cov_type == "clustered":
        raise InvalidParameterError(
            "the `cov_type` parameter of fit_between must be 'unadjusted' or 'robust' "
            "(the between regression has one row per entity); got 'clustered'"
        )
    frame, n_dropped = _panel_frame(
        data, outcome_col=outcome_col, x_cols=x_cols, id_col=id_col, time_col=time_col, func=func
    )
    lm = require("linearmodels.panel", feature=func)
    exog = frame[x_cols].copy()
    exog.insert(0, "const", 1.0)
    res = lm.BetweenOLS(frame[outcome_col], exog).fit(**_fit_kwargs(cov_type))
    return _result(
        res,
        estimator="between",
        cov_type=cov_type,
        ci_level=float(ci_level),
        n_entities=frame.index.get_level_values(0).nunique(),
        n_dropped=n_dropped,
        params={
            "outcome_col": outcome_col,
            "x_cols": x_cols,
            "id_col": id_col,
            "time_col": time_col,
            "cov_type": cov_type,
            "ci_level": ci_level,
        },
    )


def hausman_test(within: PanelFit, random: PanelFit) -> HausmanTest:
    """Test whether the within and random-effects estimates differ systematically (Hausman).

    Parameters
    ----------
    within : PanelFit
        From :func:`fit_within` with ``cov_type="unadjusted"``.
    random : PanelFit
        From :func:`fit_random_effects` with ``cov_type="unadjusted"``, on the same data.

    Returns
    -------
    HausmanTest
        ``statistic``, ``df``, ``p_value`` and a per-term ``table``.

    Raises
    ------
    InvalidParameterError
        When the fits are of the wrong kind, use robust covariances (the test assumes the
        random-effects estimator is efficient), or share no coefficient.

    Warns
    -----
    DataQualityWarning
        When ``V_within - V_random`` is not positive definite. The statistic then uses its
        inverse as ``plm::phtest`` and Stata do (a generalized inverse, with ``df`` its rank,
        when it is singular).

    Notes
    -----
    ``H = d' (V_within - V_random)^{-1} d`` with ``d = b_within - b_random`` over the
    coefficients both models estimate, ``H ~ chi2(k)`` under the null that the entity effects
    are uncorrelated with the regressors (Hausman 1978). Validated against
    ``plm::phtest`` 2.6-2.
    """
    for name, fit, kind in (("within", within, "within"), ("random", random, "random")):
        if not isinstance(fit, PanelFit) or fit.estimator != kind:
            raise InvalidParameterError(
                f"the `{name}` parameter of hausman_test must be a PanelFit from "
                f"fit_{'within' if kind == 'within' else 'random_effects'}; got {fit!r:.60}"
            )
        if fit.cov_type != "unadjusted":
            raise InvalidParameterError(
                f"hausman_test needs fits with cov_type='unadjusted' (the classic test assumes "
                f"the random-effects estimator is efficient); the `{name}` fit used "
                f"{fit.cov_type!r}"
            )
    terms = [t for t in within.coefficients["term"] if t in set(random.coefficients["term"])]
    terms = [t for t in terms if t != "Intercept"]
    if not terms:
        raise InvalidParameterError("hausman_test: the two fits share no coefficient")
    b_w = within.coefficients.set_index("term").loc[terms, "estimate"].to_numpy()
    b_r = random.coefficients.set_index("term").loc[terms, "estimate"].to_numpy()
    V = within.cov.loc[terms, terms].to_numpy() - random.cov.loc[terms, terms].to_numpy()
    d = b_w - b_r
    evals = np.linalg.eigvalsh(V)
    scale = max(float(np.abs(evals).max()), 1e-300)
    singular = bool(np.min(np.abs(evals)) <= max(V.shape) * np.finfo(float).eps * scale)
    if singular:
        inv = np.linalg.pinv(V)
        df = int(np.linalg.matrix_rank(V))
    else:
        inv = np.linalg.inv(V)
        df = len(terms)
    if singular or evals.min() <= 0:
        warnings.warn(
            "hausman_test: the covariance difference V_within - V_random is not positive "
            f"definite (eigenvalues {evals.tolist()}); the statistic may be unreliable"
            + ("; a generalized inverse was used" if singular else ""),
            DataQualityWarning,
            stacklevel=2,
        )
    stat = float(d @ inv @ d)
    diag = np.diag(V)
    table = pd.DataFrame(
        {
            "term": terms,
            "within": b_w,
            "random": b_r,
            "difference": d,
            "se_difference": np.where(diag > 0, np.sqrt(np.abs(diag)), np.nan),
        }
    )
    return HausmanTest(statistic=stat, df=df, p_value=float(special.chdtrc(df, stat)), table=table)


def within_between(
    data: pd.DataFrame,
    columns: list[str],
    *,
    id_col: str | None = None,
) -> pd.DataFrame:
    """Add person means and deviations from them (Mundlak / within-between decomposition).

    Parameters
    ----------
    data : pandas.DataFrame
        Long data.
    columns : list of str
        Numeric time-varying columns to decompose.
    id_col : str
        The participant (grouping) column.

    Returns
    -------
    pandas.DataFrame
        A copy of ``data`` with ``<col>_between`` (the group mean of the non-missing values)
        and ``<col>_within`` (``col - <col>_between``, NaN where ``col`` is missing) for each
        column.

    Raises
    ------
    InvalidParameterError
        Missing or non-numeric columns, a missing ``id_col`` value, or an output column
        that already exists.

    Notes
    -----
    In ``y ~ x_within + x_between + (1 | person)`` the ``x_within`` coefficient equals the
    fixed-effects (within) estimate and ``x_between - x_within`` is Mundlak's contextual effect
    (Mundlak 1978; Bell & Jones 2015).

    Examples
    --------
    >>> import pandas as pd
    >>> from models.panel import within_between
    >>> df = pd.DataFrame({"id": [1, 1, 2, 2], "x": [1.0, 3.0, 5.0, 5.0]})
    >>> within_between(df, ["x"], id_col="id")
       id    x  x_between  x_within
    0   1  1.0        2.0      -1.0
    1   1  3.0        2.0       1.0
    2   2  5.0        5.0       0.0
    3   2  5.0        5.0       0.0
    """
    func = "within_between"
    group_col = id_col
    if group_col is None:
        raise InvalidParameterError(f"{func} needs `id_col`, the participant column")
    if isinstance(columns, str):
        columns = [columns]
    if not isinstance(columns, list | tuple) or not all(isinstance(c, str) for c in columns):
        raise InvalidParameterError(
            f"the `columns` parameter of {func} must be a list of column names; got {columns!r}"
        )
    _check_columns(data, [*columns, group_col], func)
    bad = [c for c in columns if not pd.api.types.is_numeric_dtype(data[c])]
    if bad:
        raise InvalidParameterError(f"{func}: the column(s) {bad} must be numeric")
    clash = [
        f"{c}_{s}" for c in columns for s in ("between", "within") if f"{c}_{s}" in data.columns
    ]
    if clash:
        raise InvalidParameterError(
            f"{func}: the output column(s) {clash} already exist; rename or drop them first"
        )
    if data[group_col].isna().any():
        raise InvalidParameterError(
            f"{func}: the group column {group_col!r} has {int(data[group_col].isna().sum())} "
            "missing value(s)"
        )
    out = data.copy()
    grouped = data.groupby(group_col, sort=False)
    for c in columns:
        mean = grouped[c].transform("mean")
        out[f"{c}_between"] = mean
        out[f"{c}_within"] = data[c] - mean
    return out
