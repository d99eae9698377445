"""The arithmetic of pooling m analyses of multiply imputed data.

Rubin's (1987) rules combine the m estimates ``Q_i`` and their covariances ``U_i``:
``Qbar`` the mean estimate, ``Ubar`` the mean within-imputation covariance, ``B`` the
between-imputation covariance (divisor ``m - 1``) and ``T = Ubar + (1 + 1/m) B`` the total
covariance. Per parameter the relative increase in variance is ``riv = (1 + 1/m) B / Ubar``, the
proportion of the total variance due to missingness ``lambda = (1 + 1/m) B / T``
(``= riv / (1 + riv)``) and the fraction of missing information
``fmi = (riv + 2 / (df + 3)) / (riv + 1)`` with ``df`` the degrees of freedom reported.

Degrees of freedom: Rubin's ``(m - 1) (1 + 1/riv)^2``; Barnard & Rubin's (1999) small-sample
``1 / (1/df_rubin + 1/df_obs)`` with ``df_obs = (1 - lambda) dfcom (dfcom + 1) / (dfcom + 3)``,
never above the complete-data ``dfcom``.

The multi-parameter Wald test ``D1`` (Li, Raghunathan & Rubin 1991) of ``Q = 0`` for ``k``
parameters: ``r = (1 + 1/m) tr(B Ubar^-1) / k``, ``F = Qbar' ((1 + r) Ubar)^-1 Qbar / k`` on
``k`` and ``df2`` degrees of freedom, ``df2`` Li et al.'s ``4 + (t - 4) (1 + (1 - 2/t) / r)^2``
with ``t = k (m - 1) > 4`` (``t (1 + 1/k) (1 + 1/r)^2 / 2`` otherwise) or, with a complete-data
``dfcom``, Reiter's (2007) small-sample df.

Written here because no Python library pools mixed-model fits with these rules; the formulas
are those of the papers, in the forms ``mitml::testEstimates`` and ``mitml::testModels``
document.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special


@dataclass(frozen=True)
class Pooled:
    """Rubin's pieces for ``p`` parameters: ``qbar`` (p), ``ubar``, ``b``, ``t`` (p x p)."""

    qbar: np.ndarray
    ubar: np.ndarray
    b: np.ndarray
    t: np.ndarray
    m: int

    @property
    def riv(self) -> np.ndarray:
        """Relative increase in variance per parameter (NaN where ``Ubar`` is 0)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return (1 + 1 / self.m) * np.diag(self.b) / np.diag(self.ubar)

    @property
    def lam(self) -> np.ndarray:
        """Proportion of the total variance due to missingness, per parameter."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return (1 + 1 / self.m) * np.diag(self.b) / np.diag(self.t)


def pool(q: np.ndarray, u: np.ndarray) -> Pooled:
    """Return Rubin's pieces of ``q`` (m x p estimates) and ``u`` (m x p x p covariances)."""
    m = q.shape[0]
    qbar = q.mean(axis=0)
    ubar = u.mean(axis=0)
    dev = q - qbar
    b = dev.T @ dev / (m - 1)
    return Pooled(qbar=qbar, ubar=ubar, b=b, t=ubar + (1 + 1 / m) * b, m=m)


def rubin_df(riv: np.ndarray, m: int) -> np.ndarray:
    """Rubin's (1987) df ``(m - 1) (1 + 1/riv)^2`` (infinite where ``riv`` is 0)."""
    with np.errstate(divide="ignore"):
        return (m - 1) * (1 + 1 / riv) ** 2


def barnard_rubin_df(riv: np.ndarray, m: int, dfcom: float) -> np.ndarray:
    """Barnard & Rubin's (1999) df for complete-data df ``dfcom`` (finite)."""
    lam = riv / (riv + 1)
    observed = (1 - lam) * dfcom * (dfcom + 1) / (dfcom + 3)
    with np.errstate(divide="ignore"):
        return 1 / (1 / rubin_df(riv, m) + 1 / observed)


def fmi(riv: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Fraction of missing information ``(riv + 2/(df + 3)) / (riv + 1)``."""
    return (riv + 2 / (df + 3)) / (riv + 1)


@dataclass(frozen=True)
class D1:
    """The D1 statistic, its df and p value, and the average relative increase in variance."""

    statistic: float
    df1: int
    df2: float
    p_value: float
    riv: float


def d1(q: np.ndarray, u: np.ndarray, dfcom: float | None) -> D1:
    """Return the D1 test of ``Q = 0`` from ``q`` (m x k) and ``u`` (m x k x k).

    ``dfcom`` None: Li, Raghunathan & Rubin's (1991) df2; a number: Reiter's (2007).
    """
    pooled = pool(q, u)
    m, k = q.shape
    r = (1 + 1 / m) * float(np.trace(pooled.b @ np.linalg.inv(pooled.ubar))) / k
    stat = float(pooled.qbar @ np.linalg.solve((1 + r) * pooled.ubar, pooled.qbar)) / k
    t = k * (m - 1)
    if dfcom is not None:
        df2 = _reiter_df(r, t, float(dfcom))
    elif t > 4:
        with np.errstate(divide="ignore"):
            df2 = 4 + (t - 4) * (1 + (1 - 2 / t) / np.float64(r)) ** 2
    else:
        with np.errstate(divide="ignore"):
            df2 = t * (1 + 1 / k) * (1 + 1 / np.float64(r)) ** 2 / 2
    p = (
        float(special.fdtrc(k, df2, stat))
        if np.isfinite(df2)
        else float(special.chdtrc(k, stat * k))
    )
    return D1(statistic=stat, df1=k, df2=float(df2), p_value=p, riv=r)


def _reiter_df(r: float, t: int, dfcom: float) -> float:
    """Reiter's (2007) df2 of D1 for complete-data df ``dfcom``; 4 when ``t = k (m - 1) <= 4``.

    Reiter's approximation needs ``t > 4``; at and below it (five imputations of one
    parameter, say) the df is its floor 4, the value ``mitml::testModels`` returns at ``t = 4``.
    """
    if t <= 4:
        return 4.0
    a = r * t / (t - 2)
    vstar = dfcom * (dfcom + 1) / (dfcom + 3)
    c0 = 1 / (t - 4)
    c1 = vstar - 2 * (1 + a)
    c2 = vstar - 4 * (1 + a)
    z = (
        1 / c2
        + c0 * a**2 * c1 / ((1 + a) ** 2 * c2)
        + c0 * (8 * a**2 * c1 / ((1 + a) * c2**2) + 4 * a**2 / ((1 + a) * c2))
        + c0 * (4 * a**2 / (c2 * c1) + 16 * a**2 * c1 / c2**3)
        + c0 * 8 * a**2 / c2**2
    )
    return 4 + 1 / z
