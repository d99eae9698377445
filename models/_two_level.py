"""The random-intercept linear model behind two-level imputation: REML fit and posterior draws.

``y_ij = x_ij' beta + u_j + e_ij`` with ``u_j ~ N(0, tau2)`` and ``e_ij ~ N(0, sigma2)``. With
``theta = tau2 / sigma2`` every quantity of the restricted likelihood is a sum over clusters of
``n_j``, ``S_xj = sum_i x_ij`` and ``S_yj = sum_i y_ij`` (``c_j = theta / (1 + n_j theta)``):

    A(theta) = X'X - sum_j c_j S_xj S_xj'        b(theta) = X'y - sum_j c_j S_xj S_yj
    r(theta) = y'y - sum_j c_j S_yj^2 - b' A^-1 b
    D(theta) = (n - p) log r + sum_j log(1 + n_j theta) + log det A  (+ constants)

``D`` is the profiled REML deviance (lme4's REML criterion up to its constant):
:func:`fit_random_intercept` minimises it, with ``beta = A^-1 b``, ``sigma2 = r / (n - p)``
and ``cov(beta) = sigma2 A^-1`` (lme4's REML fit of ``y ~ x + (1 | cluster)``). With a flat
prior on ``beta`` and ``p(sigma2) ~ 1 / sigma2``, ``exp(-D / 2)`` is also the marginal
posterior of ``theta`` up to its prior, ``sigma2 | theta`` is ``r / chi2(n - p)`` and ``beta |
theta, sigma2`` is ``N(A^-1 b, sigma2 A^-1)``: :func:`draw_missing` draws from that posterior
exactly (``theta`` on a grid), the prior of ``theta`` being the uniform shrinkage prior
(Christiansen & Morris 1997; Daniels 1999): uniform on ``omega = n_bar theta / (1 + n_bar
theta)``, the share of a mean cluster's variance that lies between clusters, a proper prior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["RandomIntercept", "draw_missing", "fit_random_intercept"]

_LOG_THETA = (math.log(1e-10), math.log(1e8))  # search range of tau2 / sigma2 (log scale)
_GRID = 200  # grid points of omega per stage of the posterior draw


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


def _solve(sums: _Sums, theta: np.ndarray) -> tuple[np.ndarray, ...]:
    """Return, for each ``theta``, ``c``, the Cholesky factor of ``A``, ``L^-1 b`` and ``r``."""
    c = theta[:, None] / (1.0 + theta[:, None] * sums.n[None, :])
    a = sums.xtx[None] - np.einsum("gj,jk,jl->gkl", c, sums.sx, sums.sx)
    b = sums.xty[None] - (c * sums.sy[None, :]) @ sums.sx
    chol = np.linalg.cholesky(a)
    z = np.linalg.solve(chol, b[..., None])[..., 0]
    r = sums.yty - c @ sums.sy**2 - (z**2).sum(axis=1)
    return c, chol, z, r


def _deviance(sums: _Sums, theta: np.ndarray) -> np.ndarray:
    """Return lme4's REML criterion at each ``theta``."""
    _, chol, _, r = _solve(sums, theta)
    df = sums.rows - sums.xtx.shape[0]
    logdet = 2.0 * np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)
    spread = np.log1p(theta[:, None] * sums.n[None, :]).sum(axis=1)
    # the constant df (1 + log(2 pi / df)) makes it lme4's criterion
    return df * (1.0 + np.log(2.0 * np.pi * r / df)) + spread + logdet


def _estimates(sums: _Sums, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Return ``c``, ``beta = A^-1 b``, ``A^-1`` and ``r`` at one ``theta``."""
    c, chol, z, r = _solve(sums, np.array([theta]))
    inv_chol = np.linalg.inv(chol[0])
    return c[0], inv_chol.T @ z[0], inv_chol.T @ inv_chol, float(r[0])


def fit_random_intercept(
    y: np.ndarray, x: np.ndarray, groups: np.ndarray, n_groups: int | None = None
) -> RandomIntercept:
    """Fit ``y ~ x + (1 | groups)`` by REML (``x`` holds the intercept column if wanted).

    ``groups`` are integer codes from 0; ``n_groups`` clusters in all (default the largest
    code plus one). The caller checks the shapes: more rows than columns, ``x`` of full rank.
    """
    from scipy.optimize import minimize_scalar

    groups = np.asarray(groups, dtype=np.intp)
    count = int(groups.max()) + 1 if n_groups is None else int(n_groups)
    sums = _sums(np.asarray(y, dtype=float), np.asarray(x, dtype=float), groups, count)
    found = minimize_scalar(
        lambda t: float(_deviance(sums, np.array([math.exp(t)]))[0]),
        bounds=_LOG_THETA,
        method="bounded",
        options={"xatol": 1e-10},
    )
    theta = math.exp(found.x)
    if float(_deviance(sums, np.zeros(1))[0]) <= found.fun:  # the optimum on the boundary
        theta = 0.0
    _, beta, a_inv, r = _estimates(sums, theta)
    sigma2 = r / (sums.rows - len(beta))
    return RandomIntercept(
        beta=beta,
        cov=sigma2 * a_inv,
        sigma2=sigma2,
        tau2=theta * sigma2,
        theta=theta,
        deviance=float(_deviance(sums, np.array([theta]))[0]),
    )


def _draw_omega(sums: _Sums, n_bar: float, rng: np.random.Generator) -> float:
    """Draw ``omega`` from its marginal posterior, on a grid refined where its mass lies."""
    low, high = 0.0, 1.0
    for _ in range(2):  # the whole interval, then the cells that hold the mass
        width = (high - low) / _GRID
        omega = low + width * (np.arange(_GRID) + 0.5)
        log_post = -0.5 * _deviance(sums, omega / (n_bar * (1.0 - omega)))
        weight = np.exp(log_post - log_post.max())
        held = np.flatnonzero(weight > 1e-14 * weight.sum())
        # one cell beyond each end; omega below 1 - 1e-6 keeps A(theta) well conditioned
        low, high = low + width * max(held[0] - 1, 0), low + width * min(held[-1] + 2, _GRID)
        high = min(high, 1.0 - 1e-6)
    cell = rng.choice(_GRID, p=weight / weight.sum())
    return float(omega[cell] + width * (rng.random() - 0.5))


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
    """Draw the missing ``y`` once from the random-intercept model's posterior.

    1. ``theta*`` from its marginal posterior given the observed rows (uniform shrinkage
       prior), by the grid of ``omega``.
    2. ``sigma2* = r(theta*) / chi2(n - p)`` (its scaled inverse chi-square posterior).
    3. ``beta* ~ N(A(theta*)^-1 b(theta*), sigma2* A(theta*)^-1)``.
    4. Each cluster's ``u_j*`` from its conditional posterior:
       ``N(c_j (S_yj - S_xj' beta*), sigma2* c_j)``, ``c_j = theta* / (1 + n_j theta*)``
       (``N(0, theta* sigma2*)`` for a cluster without an observed row).
    5. ``y_mis = x_mis' beta* + u_j* + e``, ``e ~ N(0, sigma2*)``.
    """
    sums = _sums(y_obs, x_obs, g_obs, n_groups)
    n_bar = float(sums.n[sums.n > 0].mean())
    omega = _draw_omega(sums, n_bar, rng)
    theta = omega / (n_bar * (1.0 - omega))
    c, beta_hat, a_inv, r = _estimates(sums, theta)
    sigma2 = r / rng.chisquare(sums.rows - len(beta_hat))
    beta = rng.multivariate_normal(beta_hat, sigma2 * a_inv, method="cholesky")
    mean = c * (sums.sy - sums.sx @ beta)
    effects = mean + np.sqrt(sigma2 * c) * rng.standard_normal(n_groups)
    return x_mis @ beta + effects[g_mis] + math.sqrt(sigma2) * rng.standard_normal(len(x_mis))
