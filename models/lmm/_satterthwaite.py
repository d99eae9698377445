"""Satterthwaite degrees of freedom for fixed-effect contrasts (Kuznetsova et al. 2017).

For a contrast ``l``, ``df = 2 (l' C l)^2 / (g' A g)`` where ``C = Cov(beta_hat)`` as a function of
the variance parameters ``varpar = (theta, sigma)``, ``g`` the gradient of ``l' C l`` with respect
to ``varpar`` and ``A = 2 H^+`` the asymptotic covariance of ``varpar`` from the Hessian ``H`` of
the (REML or ML) deviance ``-2 log L(theta, sigma)`` with ``beta`` profiled out, as in
``lmerTest``.

The deviance is ``log|L_theta|^2 + r^2(theta)/sigma^2 + n log(2 pi sigma^2)`` (ML), plus
``log|R_X|^2 - p log(2 pi sigma^2)`` for REML, so every derivative in ``sigma`` is analytic.
Derivatives in ``theta`` are central differences with Richardson extrapolation (two step sizes,
``0.01 |theta|`` and half of it; lmerTest's ``numDeriv::genD`` takes four from ``0.1 |theta|``,
which needs twice the deviance evaluations for the same df to 1e-6), taken of ``log|L|^2``, ``r^2``,
``log|R_X|^2`` and ``(R_X' R_X)^{-1}`` together from the same evaluations.

The deviance components at each ``theta`` come from the engine (mixedlm's profiled deviance
evaluation, :func:`models.lmm.engine.deviance_components`). mixedlm's own
``satterthwaite_df`` differentiates the deviance profiled over ``sigma`` and leaves out the
uncertainty of ``sigma``; for ML fits its df then differ from lmerTest's by up to 0.5 %
(riesby, ``hamdep ~ week + (1 | id)``: 309.61 against lmerTest's 310.99), so the lmerTest
computation is kept here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def richardson(
    F: Callable[[np.ndarray], np.ndarray],
    x: np.ndarray,
    *,
    d: float = 0.1,
    eps: float = 1e-4,
    r: int = 4,
    v: float = 2.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Value, gradient and Hessian of a vector function by extrapolated central differences.

    Mixed second derivatives use ``f(x + ei + ej) + f(x - ei - ej)`` with the axial points
    already taken for the gradient (two evaluations per pair instead of four); every formula's
    error is a series in even powers of the step, which the extrapolation removes.

    Returns
    -------
    F0 : ndarray (m,)
    grad : ndarray (k, m)
    hess : ndarray (k, k, m)
    """
    x = np.asarray(x, dtype=float)
    k = x.size
    zero_tol = np.sqrt(np.finfo(float).eps / 7e-7)
    h0 = np.abs(d * x) + eps * (np.abs(x) < zero_tol)
    F0 = np.asarray(F(x), dtype=float)
    m = F0.size
    G = np.zeros((r, k, m))
    H = np.zeros((r, k, k, m))
    for level in range(r):
        h = h0 / v**level
        fp, fm = [], []
        for i in range(k):
            e = np.zeros(k)
            e[i] = h[i]
            fp.append(F(x + e))
            fm.append(F(x - e))
            G[level, i] = (fp[i] - fm[i]) / (2 * h[i])
            H[level, i, i] = (fp[i] - 2 * F0 + fm[i]) / h[i] ** 2
        for i in range(k):
            for j in range(i + 1, k):
                e = np.zeros(k)
                e[i], e[j] = h[i], h[j]
                # symmetric 7-point formula: reuses the axial points, error in even powers of h
                val = (F(x + e) + F(x - e) - fp[i] - fm[i] - fp[j] - fm[j] + 2 * F0) / (
                    2 * h[i] * h[j]
                )
                H[level, i, j] = H[level, j, i] = val
    for order in range(1, r):
        factor = v ** (2 * order)
        G[: r - order] = (factor * G[1 : r - order + 1] - G[: r - order]) / (factor - 1)
        H[: r - order] = (factor * H[1 : r - order + 1] - H[: r - order]) / (factor - 1)
    return F0, G[0], H[0]


@dataclass(frozen=True)
class VarparCovariance:
    """Derivative information needed for Satterthwaite's approximation."""

    cov_beta: np.ndarray  # (p, p) at the estimate
    jacobian: np.ndarray  # (k + 1, p, p): d cov_beta / d varpar
    hessian: np.ndarray  # (k + 1, k + 1): Hessian of the deviance in varpar
    vcov_varpar: np.ndarray  # 2 * pseudo-inverse of the Hessian
    negative_eigenvalues: np.ndarray
    zero_eigenvalues: np.ndarray


def varpar_covariance(
    components: Callable[[np.ndarray], np.ndarray],
    theta: np.ndarray,
    sigma: float,
    *,
    n: int,
    p: int,
    reml: bool,
    tol: float = 1e-8,
) -> VarparCovariance:
    """Hessian of the deviance and Jacobian of ``Cov(beta)`` in ``(theta, sigma)``.

    ``components(theta)`` returns ``log|L|^2, r^2, log|R_X|^2`` followed by the ``p x p``
    matrix ``(R_X' R_X)^{-1}`` flattened (NaN where the factorization fails).
    """
    F = components

    F0, grad, hess = richardson(F, theta, d=0.01, r=2)
    s2 = sigma**2
    theta_hessian = hess[:, :, 0] + hess[:, :, 1] / s2 + (hess[:, :, 2] if reml else 0.0)
    nu = n - (p if reml else 0)
    return varpar_information(
        theta_hessian=theta_hessian,
        r2_gradient=grad[:, 1],
        r2=F0[1],
        sigma=sigma,
        nu=nu,
        cov_unscaled=F0[3:].reshape(p, p),
        cov_unscaled_gradient=grad[:, 3:].reshape(theta.size, p, p),
        tol=tol,
    )


def varpar_information(
    *,
    theta_hessian: np.ndarray,
    r2_gradient: np.ndarray,
    r2: float,
    sigma: float,
    nu: int,
    cov_unscaled: np.ndarray,
    cov_unscaled_gradient: np.ndarray,
    tol: float = 1e-8,
) -> VarparCovariance:
    """Build lmerTest's quantities in ``(theta, sigma)`` from derivatives in ``theta`` alone.

    ``theta_hessian`` is the Hessian in ``theta`` of the deviance at fixed ``sigma``; ``r2`` and
    ``r2_gradient`` the penalized residual sum of squares and its gradient; ``nu`` is ``n - p``
    (REML) or ``n`` (ML); ``cov_unscaled`` is ``(X'V^-1 X)^-1`` with its gradient in ``theta``
    (``k x p x p``). The ``sigma`` row and column are analytic; ``2 H^+`` keeps the eigenvalues
    above ``tol``.
    """
    k = theta_hessian.shape[0]
    p = cov_unscaled.shape[0]
    s2 = sigma**2
    H = np.zeros((k + 1, k + 1))
    H[:k, :k] = theta_hessian
    H[:k, k] = H[k, :k] = -2.0 * r2_gradient / sigma**3
    H[k, k] = 6.0 * r2 / sigma**4 - 2.0 * nu / s2
    J = np.zeros((k + 1, p, p))
    J[:k] = s2 * cov_unscaled_gradient
    J[k] = 2.0 * sigma * cov_unscaled
    evals, evecs = np.linalg.eigh(H)
    pos = evals > tol
    inv = (evecs[:, pos] / evals[pos]) @ evecs[:, pos].T
    return VarparCovariance(
        cov_beta=s2 * cov_unscaled,
        jacobian=J,
        hessian=H,
        vcov_varpar=2.0 * inv,
        negative_eigenvalues=evals[evals < -tol],
        zero_eigenvalues=evals[np.abs(evals) <= tol],
    )


def satterthwaite_df(info: VarparCovariance, contrasts: np.ndarray) -> np.ndarray:
    """Satterthwaite df of each row of ``contrasts`` (shape ``(c, p)``)."""
    L = np.atleast_2d(contrasts)
    var = np.einsum("ci,ij,cj->c", L, info.cov_beta, L)
    g = np.einsum("ci,kij,cj->ck", L, info.jacobian, L)
    denom = np.einsum("ck,kl,cl->c", g, info.vcov_varpar, g)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = 2.0 * var**2 / denom
    return np.where(denom > 0, df, np.nan)
