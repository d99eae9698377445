"""The random-intercept linear model behind two-level imputation: REML fit and posterior draws.

``y_ij = x_ij' beta + u_j + e_ij`` with ``u_j ~ N(0, tau2)`` and ``e_ij ~ N(0, sigma2)``. With
``theta = tau2 / sigma2`` every quantity of the restricted likelihood is a sum over clusters of
``n_j``, ``S_xj = sum_i x_ij`` and ``S_yj = sum_i y_ij`` (``c_j = theta / (1 + n_j theta)``):

    A(theta) = X'X - sum_j c_j S_xj S_xj'        b(theta) = X'y - sum_j c_j S_xj S_yj
    r(theta) = y'y - sum_j c_j S_yj^2 - b' A^-1 b
    REML deviance = (n - p) log r + sum_j log(1 + n_j theta) + log det A  (+ constants)

so the fit is a one-dimensional search over ``theta`` at ``O(J p^2)`` per step, with
``beta = A^-1 b``, ``sigma2 = r / (n - p)`` and ``cov(beta) = sigma2 A^-1`` (lme4's REML fit of
``y ~ x + (1 | cluster)``). :func:`draw_missing` is one imputation step of
:func:`models.impute_chained`'s ``"2l.norm"`` method.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["RandomIntercept", "draw_missing", "fit_random_intercept"]

_LOG_THETA = (math.log(1e-10), math.log(1e8))  # search range of tau2 / sigma2 (log scale)


@dataclass(frozen=True)
class _Sums:
    """The cluster sums the restricted likelihood needs."""

    n: np.ndarray  # rows per cluster (0 for a cluster without rows)
    sx: np.ndarray  # J x p column sums of X per cluster
    sy: np.ndarray  # J sums of y per cluster
    xtx: np.ndarray
    xty: np.ndarray
    yty: float
    rows: int


@dataclass(frozen=True)
class RandomIntercept:
    """A REML fit of ``y ~ x + (1 | cluster)``.

    Attributes
    ----------
    beta : numpy.ndarray
        Fixed effects (GLS at ``theta``).
    cov : numpy.ndarray
        Their covariance, ``sigma2 A(theta)^-1``.
    sigma2, tau2 : float
        Residual and between-cluster variance.
    theta : float
        ``tau2 / sigma2``.
    deviance : float
        The REML criterion, ``-2`` times the restricted log likelihood (lme4's
        ``REMLcrit``).
    """

    beta: np.ndarray
    cov: np.ndarray
    sigma2: float
    tau2: float
    theta: float
    deviance: float


def _sums(y: np.ndarray, x: np.ndarray, groups: np.ndarray, n_groups: int) -> _Sums:
    n = np.bincount(groups, minlength=n_groups).astype(float)
    sx = np.zeros((n_groups, x.shape[1]))
    np.add.at(sx, groups, x)
    sy = np.bincount(groups, weights=y, minlength=n_groups)
    return _Sums(n, sx, sy, x.T @ x, x.T @ y, float(y @ y), len(y))


def _solve(sums: _Sums, theta: float) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Return ``A^-1``, ``beta``, ``r`` and the log det of ``A`` at ``theta``."""
    c = theta / (1.0 + sums.n * theta)
    a = sums.xtx - sums.sx.T @ (c[:, None] * sums.sx)
    b = sums.xty - sums.sx.T @ (c * sums.sy)
    chol = np.linalg.cholesky(a)
    a_inv = np.linalg.inv(chol).T @ np.linalg.inv(chol)
    beta = a_inv @ b
    r = sums.yty - float(c @ sums.sy**2) - float(b @ beta)
    return a_inv, beta, r, 2.0 * float(np.log(np.diag(chol)).sum())


def _deviance(sums: _Sums, theta: float) -> float:
    p = sums.xtx.shape[0]
    _, _, r, logdet = _solve(sums, theta)
    df = sums.rows - p
    # the constant makes it lme4's REML criterion: df (1 + log(2 pi r / df)) + the log dets
    return (
        df * (1.0 + math.log(2.0 * math.pi * r / df))
        + float(np.log1p(sums.n * theta).sum())
        + logdet
    )


def _fit(sums: _Sums) -> RandomIntercept:
    from scipy.optimize import minimize_scalar

    found = minimize_scalar(
        lambda t: _deviance(sums, math.exp(t)),
        bounds=_LOG_THETA,
        method="bounded",
        options={"xatol": 1e-10},
    )
    theta = math.exp(found.x)
    if _deviance(sums, 0.0) <= found.fun:  # the optimum on the boundary: no cluster variance
        theta = 0.0
    a_inv, beta, r, _ = _solve(sums, theta)
    sigma2 = r / (sums.rows - len(beta))
    return RandomIntercept(
        beta=beta,
        cov=sigma2 * a_inv,
        sigma2=sigma2,
        tau2=theta * sigma2,
        theta=theta,
        deviance=_deviance(sums, theta),
    )


def fit_random_intercept(
    y: np.ndarray, x: np.ndarray, groups: np.ndarray, n_groups: int | None = None
) -> RandomIntercept:
    """Fit ``y ~ x + (1 | groups)`` by REML (``x`` holds the intercept column if wanted).

    ``groups`` are integer codes from 0; ``n_groups`` clusters in all (default the largest
    code plus one). The caller checks the shapes: more rows than columns, ``x`` of full rank.
    """
    groups = np.asarray(groups, dtype=np.intp)
    count = int(groups.max()) + 1 if n_groups is None else int(n_groups)
    return _fit(_sums(np.asarray(y, dtype=float), np.asarray(x, dtype=float), groups, count))


def draw_missing(
    y_obs: np.ndarray,
    x_obs: np.ndarray,
    g_obs: np.ndarray,
    x_mis: np.ndarray,
    g_mis: np.ndarray,
    *,
    n_groups: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draw the missing ``y`` once from the random-intercept model's approximate posterior.

    1. REML fit to the observed rows (``beta_hat``, ``sigma2_hat``, ``tau2_hat``).
    2. The variance components from their sampling distribution by a parametric bootstrap:
       a response simulated from the fit at the observed rows, the model refitted
       (``sigma2*``, ``theta*``).
    3. ``beta* ~ N(beta_hat(theta*), sigma2* A(theta*)^-1)``: the posterior of the fixed
       effects given the variance components (flat prior), on the observed data.
    4. Each cluster's ``u_j*`` from its conditional posterior given ``beta*``:
       ``N(c_j (S_yj - S_xj' beta*), sigma2* c_j)``, ``c_j = theta* / (1 + n_j theta*)``
       (``N(0, tau2*)`` for a cluster without an observed row).
    5. ``y_mis = x_mis' beta* + u_j* + e``, ``e ~ N(0, sigma2*)``.
    """
    sums = _sums(y_obs, x_obs, g_obs, n_groups)
    fit = _fit(sums)
    # the parametric bootstrap of the variance components (written here: no library does it)
    u = rng.normal(0.0, math.sqrt(fit.tau2), n_groups)
    y_boot = x_obs @ fit.beta + u[g_obs] + rng.normal(0.0, math.sqrt(fit.sigma2), len(y_obs))
    boot = _fit(_sums(y_boot, x_obs, g_obs, n_groups))
    theta, sigma2 = boot.theta, boot.sigma2
    a_inv, beta_hat, _, _ = _solve(sums, theta)
    beta = rng.multivariate_normal(beta_hat, sigma2 * a_inv, method="cholesky")
    c = theta / (1.0 + sums.n * theta)
    mean = c * (sums.sy - sums.sx @ beta)
    effects = mean + np.sqrt(sigma2 * c) * rng.standard_normal(n_groups)
    return x_mis @ beta + effects[g_mis] + math.sqrt(sigma2) * rng.standard_normal(len(x_mis))
