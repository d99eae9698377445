"""Pool the analyses of multiply imputed data: Rubin's rules, their df, and the D1 Wald test.

:func:`pool_imputations` takes the m fits of one model to m imputed data sets (linear or
ordinal mixed models, or any ``(estimates, covariance)`` pairs) and pools their fixed effects
by Rubin's (1987) rules with Rubin's or Barnard & Rubin's (1999) degrees of freedom;
:meth:`PooledEstimates.wald_test` and :func:`pool_wald` test several of them at once by the D1
statistic. The arithmetic lives in :mod:`models._pooling_rules`.

Which R function does what (checked against both in ``tests/models/test_pooling.py``):

* ``mitml::testEstimates`` uses Rubin's df by default and Barnard & Rubin's when ``df.com`` is
  given; its RIV and FMI are this module's ``riv`` and ``fmi`` (``fmi`` computed with the df
  reported).
* ``mice::pool`` always uses Barnard & Rubin's df, with ``dfcom`` taken from the fit: for an
  ``lmer`` fit broom.mixed's ``df.residual``, the observations minus every parameter (fixed
  effects and variance components), where this module's default for a linear mixed model is
  the observations minus the fixed effects (pass ``dfcom=fit.n_obs_ - fit.npar_`` to match
  mice). Its ``fmi`` is the same formula on its df; ``lambda`` is this module's ``lambda``
  (mice floors it at 1e-4 inside its df, a difference only where the imputations agree to
  four decimals).
* ``mitml::testModels(model, null_model, method = "D1")`` is :meth:`PooledEstimates.wald_test`
  of the parameters the null model lacks: Li, Raghunathan & Rubin's (1991) ``df2`` without
  ``df.com``, Reiter's (2007) with it; here Reiter's df are used when the estimates were
  pooled with Barnard & Rubin's df (a complete-data df is known), Li et al.'s otherwise.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from _empathic_base.results import Result, json_ready
from _empathic_base.words import parameter
from models._checks import check_unit
from models._errors import InvalidParameterError, NotFittedError
from models._pooling_rules import barnard_rubin_df, d1, fmi, pool, rubin_df

__all__ = [
    "POOLED_COLUMNS",
    "WALD_COLUMNS",
    "PooledEstimates",
    "PooledWaldTest",
    "pool_imputations",
    "pool_wald",
]

POOLED_COLUMNS = [
    "term",
    "estimate",
    "se",
    "statistic",
    "df",
    "p_value",
    "ci_low",
    "ci_high",
    "riv",
    "fmi",
    "lambda",
]
"""Columns of :meth:`PooledEstimates.to_frame`."""

WALD_COLUMNS = ["terms", "statistic", "df1", "df2", "p_value", "riv"]
"""Columns of :meth:`PooledWaldTest.to_frame`."""

FMI_DEFINITION = (
    "fmi = (riv + 2 / (df + 3)) / (riv + 1) with riv = (1 + 1/m) B / Ubar and df the df "
    "reported, as mitml::testEstimates (and mice::pool on its own df); "
    "lambda = (1 + 1/m) B / T as mice::pool"
)
_WHERE = "pool_imputations"
_DF_METHODS = ("rubin", "barnard-rubin")


@dataclass(frozen=True, repr=False)
class PooledWaldTest(Result):
    """The D1 Wald test of several pooled parameters being 0.

    Attributes
    ----------
    terms : tuple of str
        The parameters tested.
    statistic, df2, p_value, riv : float
        ``F``, its denominator df, the p value and the average relative increase in variance.
    df1 : int
        The number of parameters.
    df_method : str
        ``"li-raghunathan-rubin"`` (Li et al. 1991) or ``"reiter"`` (Reiter 2007, with
        ``dfcom``).
    dfcom : float
        The complete-data df Reiter's df used (infinite for Li et al.'s).
    m : int
        Imputations.
    """

    terms: tuple[str, ...]
    statistic: float
    df1: int
    df2: float
    p_value: float
    riv: float
    df_method: str
    dfcom: float
    m: int

    def _title(self) -> str:
        return (
            f"PooledWaldTest(D1: F({self.df1}, {self.df2:.4g}) = {self.statistic:.4g}, "
            f"p = {self.p_value:.3g}, m = {self.m})"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        row = [", ".join(self.terms), self.statistic, self.df1, self.df2, self.p_value, self.riv]
        return [("D1 Wald test", pd.DataFrame([row], columns=WALD_COLUMNS))]

    def to_dict(self) -> dict[str, Any]:
        """Return the test as JSON-ready data (every attribute, ``terms`` as a list)."""
        return json_ready(
            {
                "terms": list(self.terms),
                "statistic": self.statistic,
                "df1": self.df1,
                "df2": self.df2,
                "p_value": self.p_value,
                "riv": self.riv,
                "df_method": self.df_method,
                "dfcom": self.dfcom,
                "m": self.m,
            }
        )


@dataclass(frozen=True, repr=False)
class PooledEstimates(Result):
    """Fixed effects pooled over m imputations by Rubin's rules.

    Attributes
    ----------
    table : pandas.DataFrame
        ``term, estimate, se, statistic, df, p_value, ci_low, ci_high, riv, fmi, lambda``
        (:data:`POOLED_COLUMNS`): ``se`` the square root of the total variance, ``statistic``
        the ``t`` ratio, p values two-sided, intervals ``estimate +- t(df) se``.
    m : int
        Imputations pooled.
    df_method : str
        ``"rubin"`` or ``"barnard-rubin"``.
    df_reason : str
        Why those df, in a sentence.
    dfcom : float
        The complete-data df (infinite when none is known or the tests are z tests).
    dfcom_source : str
        Where ``dfcom`` came from.
    ci_level : float
        Level of the intervals.
    estimates : pandas.DataFrame
        The m estimates, one row per imputation.
    within, between, total : pandas.DataFrame
        ``Ubar``, ``B`` and ``T = Ubar + (1 + 1/m) B``, labelled by term.
    """

    table: pd.DataFrame
    m: int
    df_method: str
    df_reason: str
    dfcom: float
    dfcom_source: str
    ci_level: float
    estimates: pd.DataFrame
    within: pd.DataFrame
    between: pd.DataFrame
    total: pd.DataFrame
    _covariances: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 0)))

    def _title(self) -> str:
        return f"PooledEstimates(m = {self.m}, df = {self.df_method}, {len(self.table)} terms)"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Pooled estimates", self.table)]

    def to_dict(self) -> dict[str, Any]:
        """Return the pooled table and how it was pooled as JSON-ready data.

        Returns
        -------
        dict
            ``estimates`` (the table as records), ``m``, ``df_method``, ``df_reason``,
            ``dfcom``, ``dfcom_source``, ``ci_level`` and ``fmi_definition``.
        """
        return json_ready(
            {
                "estimates": self.table.to_dict(orient="records"),
                "m": self.m,
                "df_method": self.df_method,
                "df_reason": self.df_reason,
                "dfcom": self.dfcom,
                "dfcom_source": self.dfcom_source,
                "ci_level": self.ci_level,
                "fmi_definition": FMI_DEFINITION,
            }
        )

    def wald_test(self, terms: Sequence[str]) -> PooledWaldTest:
        """Test that the pooled ``terms`` are all 0 by the D1 statistic.

        Parameters
        ----------
        terms : sequence of str
            Terms of :attr:`table`, at least one.

        Returns
        -------
        PooledWaldTest
            As ``mitml::testModels(..., method = "D1")`` against the model without ``terms``:
            Reiter's (2007) ``df2`` with ``dfcom`` when the estimates were pooled with Barnard
            & Rubin's df, Li, Raghunathan & Rubin's (1991) otherwise.

        Notes
        -----
        Reiter's df need ``k (m - 1) > 4`` for ``k`` terms and ``m`` imputations; at
        ``k (m - 1) = 4`` (one term, five imputations) they are 4, the limit of his formula and
        mitml's value, and below it 4 as well: a conservative floor. For one term the pooled
        ``t`` test of :attr:`table` is the sharper test.
        """
        names = list(self.estimates.columns)
        if isinstance(terms, str) or not isinstance(terms, Sequence) or not len(terms):
            raise InvalidParameterError(
                f"{parameter('terms', 'wald_test')} must be a non-empty list of terms; "
                f"got {terms!r}"
            )
        unknown = [t for t in terms if t not in names]
        if unknown or len(set(terms)) != len(terms):
            raise InvalidParameterError(
                f"{parameter('terms', 'wald_test')} must name distinct pooled terms "
                f"({names}); got {list(terms)}"
            )
        idx = [names.index(t) for t in terms]
        q = self.estimates.to_numpy()[:, idx]
        u = self._covariances[:, idx][:, :, idx]
        reiter = self.df_method == "barnard-rubin"
        test = d1(q, u, self.dfcom if reiter else None)
        return PooledWaldTest(
            terms=tuple(terms),
            statistic=test.statistic,
            df1=test.df1,
            df2=test.df2,
            p_value=test.p_value,
            riv=test.riv,
            df_method="reiter" if reiter else "li-raghunathan-rubin",
            dfcom=self.dfcom if reiter else math.inf,
            m=self.m,
        )


def pool_imputations(
    fits: Sequence[Any],
    *,
    df: str | None = None,
    dfcom: float | None = None,
    ci_level: float = 0.95,
) -> PooledEstimates:
    """Pool the fixed effects of m fits to m imputed data sets by Rubin's rules.

    Parameters
    ----------
    fits : sequence
        At least two fits of one model: fitted :class:`~models.LinearMixedModel` or
        :class:`~models.OrdinalMixedModel` objects (any object with ``beta_`` and ``vcov_``),
        or ``(estimates, covariance)`` pairs: a pandas Series by term and a DataFrame (or a
        square array in the Series' order). Every fit has the same terms.
    df : {"rubin", "barnard-rubin"} or None, default None
        Rubin's (1987) df, or Barnard & Rubin's (1999) small-sample df, which need a finite
        complete-data df. None: Barnard & Rubin's when a complete-data df is known (linear
        mixed models, or ``dfcom`` given), Rubin's otherwise (ordinal models, whose tests are
        z tests, and pairs without ``dfcom``).
    dfcom : float, optional
        The complete-data df. Default: for a linear mixed model the observations minus the
        fixed effects (the smallest over the fits), for an ordinal model infinite (z tests),
        for pairs unknown (infinite).
    ci_level : float, default 0.95
        Level of the intervals.

    Returns
    -------
    PooledEstimates
        The pooled table (``to_frame()``), how the df were chosen (``to_dict()["df_method"]``,
        ``["df_reason"]``), and :meth:`PooledEstimates.wald_test`.

    Notes
    -----
    ``vcov_`` is the covariance a fit reports (lme4's ``vcov``; for a linear mixed model
    fitted with ``ddf="kenward-roger"`` the unadjusted one). See the module docstring for
    which R function uses which df. Validated against ``mitml::testEstimates`` (both df) and
    ``mice::pool`` on ``mice::popmis`` (``tests/models/reference/pooling.R``).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from models import pool_imputations
    >>> names = ["Intercept", "x"]
    >>> cov = pd.DataFrame(np.diag([0.04, 0.01]), index=names, columns=names)
    >>> fits = [(pd.Series([1.0 + d, 0.5 - d], index=names), cov) for d in (0.0, 0.1, 0.2)]
    >>> pooled = pool_imputations(fits, dfcom=50)
    >>> pooled.to_frame()[["term", "estimate", "df"]]
            term  estimate         df
    0  Intercept       1.1  16.95...
    1          x       0.4   4.72...
    >>> pooled.to_dict()["df_method"]
    'barnard-rubin'
    """
    level = check_unit(ci_level, name="ci_level", where=_WHERE)
    if df is not None and df not in _DF_METHODS:
        raise InvalidParameterError(
            f"{parameter('df', _WHERE)} must be one of {list(_DF_METHODS)} or None; got {df!r}"
        )
    names, q, u, known = _collect(fits)
    m = q.shape[0]
    complete, source = _dfcom(dfcom, known, len(names))
    method, reason = _df_choice(df, complete, source, given=dfcom is not None)
    pooled = pool(q, u)
    riv = pooled.riv
    dfs = rubin_df(riv, m) if method == "rubin" else barnard_rubin_df(riv, m, complete)
    se = np.sqrt(np.diag(pooled.t))
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = pooled.qbar / se
    p, crit = _t_tail(stat, dfs, level)
    table = pd.DataFrame(
        {
            "term": names,
            "estimate": pooled.qbar,
            "se": se,
            "statistic": stat,
            "df": dfs,
            "p_value": p,
            "ci_low": pooled.qbar - crit * se,
            "ci_high": pooled.qbar + crit * se,
            "riv": riv,
            "fmi": fmi(riv, dfs),
            "lambda": pooled.lam,
        },
        columns=POOLED_COLUMNS,
    )

    def frame(a: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame(a, index=names, columns=names)

    return PooledEstimates(
        table=table,
        m=m,
        df_method=method,
        df_reason=reason,
        dfcom=complete,
        dfcom_source=source,
        ci_level=level,
        estimates=pd.DataFrame(q, columns=names, index=pd.RangeIndex(1, m + 1, name="imputation")),
        within=frame(pooled.ubar),
        between=frame(pooled.b),
        total=frame(pooled.t),
        _covariances=u,
    )


def pool_wald(
    fits: Sequence[Any],
    terms: Sequence[str],
    *,
    df: str | None = None,
    dfcom: float | None = None,
) -> PooledWaldTest:
    """Test that ``terms`` are all 0 over m imputations by the D1 statistic.

    Parameters
    ----------
    fits : sequence
        As :func:`pool_imputations`.
    terms : sequence of str
        The terms tested.
    df : {"rubin", "barnard-rubin"} or None, default None
        As :func:`pool_imputations`: with Barnard & Rubin's df the test uses Reiter's (2007)
        ``df2`` with ``dfcom``, with Rubin's Li, Raghunathan & Rubin's (1991).
    dfcom : float, optional
        The complete-data df, as :func:`pool_imputations`.

    Returns
    -------
    PooledWaldTest
        As ``mitml::testModels(fits, null_fits, method = "D1")``, ``null_fits`` the fits
        without ``terms``.
    """
    return pool_imputations(fits, df=df, dfcom=dfcom).wald_test(terms)


def _collect(fits: Any) -> tuple[list[str], np.ndarray, np.ndarray, list[Any]]:
    """Return the terms, estimates (m x p), covariances (m x p x p) and each fit's own dfcom."""
    if isinstance(fits, str | bytes | dict) or not isinstance(fits, Sequence):
        raise InvalidParameterError(
            f"{parameter('fits', _WHERE)} must be a list of fits; got {type(fits).__name__}"
        )
    if len(fits) < 2:
        raise InvalidParameterError(
            f"{parameter('fits', _WHERE)} must hold at least 2 fits (one per imputation); "
            f"got {len(fits)}"
        )
    pieces = [_one(fit, i) for i, fit in enumerate(fits)]
    names = list(pieces[0][0].index)
    q, u, known = [], [], []
    for i, (est, cov, own) in enumerate(pieces):
        if sorted(map(str, est.index)) != sorted(map(str, names)):
            raise InvalidParameterError(
                f"fit {i} of {parameter('fits', _WHERE)} has terms {list(est.index)}, "
                f"fit 0 has {names}: pool fits of one model"
            )
        q.append(est.loc[names].to_numpy(dtype=float))
        u.append(cov.loc[names, names].to_numpy(dtype=float))
        known.append(own)
    q_arr, u_arr = np.asarray(q), np.asarray(u)
    if not (np.isfinite(q_arr).all() and np.isfinite(u_arr).all()):
        raise InvalidParameterError(
            f"{parameter('fits', _WHERE)} hold estimates or covariances that are not finite"
        )
    return [str(n) for n in names], q_arr, u_arr, known


def _one(fit: Any, i: int) -> tuple[pd.Series, pd.DataFrame, Any]:
    """Return one fit's estimates, covariance and complete-data df (None: unknown)."""
    what = f"fit {i} of {parameter('fits', _WHERE)}"
    if isinstance(fit, tuple) and len(fit) == 2:
        est, cov = fit
        if not isinstance(est, pd.Series):
            raise InvalidParameterError(f"{what}: the estimates must be a pandas Series by term")
        if isinstance(cov, np.ndarray) and cov.shape == (len(est), len(est)):
            cov = pd.DataFrame(cov, index=est.index, columns=est.index)
        if not isinstance(cov, pd.DataFrame) or not (
            set(est.index) <= set(cov.index) and set(est.index) <= set(cov.columns)
        ):
            raise InvalidParameterError(
                f"{what}: the covariance must be a DataFrame labelled by the estimates' terms "
                "(or a square array in their order)"
            )
        return est, cov, None
    if not hasattr(fit, "beta_"):
        if callable(getattr(fit, "fit", None)):
            raise NotFittedError(f"{what} is not fitted: call fit(data) first")
        raise InvalidParameterError(
            f"{what} must be a fitted mixed model or an (estimates, covariance) pair; "
            f"got {type(fit).__name__}"
        )
    est, cov = fit.beta_, fit.vcov_
    if hasattr(fit, "thresholds_"):
        return est, cov, math.inf  # an ordinal model: z tests
    n_obs = getattr(fit, "n_obs_", None)
    return est, cov, None if n_obs is None else int(n_obs) - len(est)


def _dfcom(dfcom: Any, known: list[Any], p: int) -> tuple[float, str]:
    """Return the complete-data df and where it came from."""
    if dfcom is not None:
        ok = isinstance(dfcom, numbers.Real) and not isinstance(dfcom, bool)
        if not ok or not dfcom > 0:
            raise InvalidParameterError(
                f"{parameter('dfcom', _WHERE)} must be a positive number or None; got {dfcom!r}"
            )
        return float(dfcom), "given"
    if any(k is None for k in known):
        return math.inf, "unknown (no complete-data df given)"
    if all(k == math.inf for k in known):
        return math.inf, "infinite: the complete-data tests are z tests"
    smallest = min(k for k in known if k != math.inf)
    return float(smallest), f"observations minus the {p} fixed effects"


def _df_choice(df: str | None, complete: float, source: str, *, given: bool) -> tuple[str, str]:
    """Return the df method and the sentence that says why."""
    finite = math.isfinite(complete)
    if df == "barnard-rubin" and not finite:
        raise InvalidParameterError(
            f"{parameter('df', _WHERE)} 'barnard-rubin' needs a finite complete-data df "
            f"(dfcom is {source}): give `dfcom`"
        )
    br = (
        f"Barnard & Rubin's (1999) small-sample df with complete-data df {complete:g} "
        f"({source}): never above the complete-data df, as mitml::testEstimates(df.com = ...) "
        "and mice::pool compute them"
    )
    if df == "barnard-rubin":
        return df, br + "; chosen by the caller"
    if df == "rubin":
        unused = "; the complete-data df given is not used" if given else ""
        return df, (
            "Rubin's (1987) df, chosen by the caller (mitml::testEstimates without df.com): "
            "large-sample df that may exceed the complete-data df" + unused
        )
    if finite:
        return "barnard-rubin", br + "; the default when a complete-data df is known"
    return "rubin", (
        f"Rubin's (1987) df: the complete-data df is {source}, where Barnard & Rubin's df "
        "equal Rubin's"
    )


def _t_tail(stat: np.ndarray, dfs: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided p values of ``t`` on ``dfs`` and the interval's critical values."""
    upper = 0.5 + level / 2
    finite = np.isfinite(dfs)
    safe = np.where(finite, dfs, 1.0)
    p = np.where(finite, 2 * special.stdtr(safe, -np.abs(stat)), 2 * special.ndtr(-np.abs(stat)))
    crit = np.where(finite, special.stdtrit(safe, upper), special.ndtri(upper))
    return p, crit
