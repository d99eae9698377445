"""Maximum likelihood for the longitudinal factor model: fit function, gradient, information.

The discrepancy is lavaan's ``fmin`` for normal-theory ML with a mean structure,

    F(theta) = 1/2 [log|Sigma| + tr(S Sigma^-1) - log|S| - k + (ybar - mu)' Sigma^-1 (ybar - mu)],

with ``S`` the covariance matrix of the data with divisor N, so that chi-square = 2 N F at the
minimum. Its gradient is analytic: with ``G = Sigma^-1 - Sigma^-1 (S + d d') Sigma^-1`` and
``d = ybar - mu``, ``dF/dtheta_a = 1/2 tr(G dSigma_a) - d' Sigma^-1 dmu_a``. The minimum is found
by Fisher scoring (Newton steps with the expected information) with a backtracking line
search. Standard errors come from the expected information (``se = "standard"``,
``information = "expected"``, lavaan's ML default) or, for MLR, from the sandwich built on the
observed information (the Hessian of ``F``, by central differences of the analytic gradient)
and the casewise scores (``se = "robust.huber.white"``, ``information = "observed"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.sem._spec import ModelSpec, derivative_arrays, fixed_matrices

LOG_2PI = float(np.log(2.0 * np.pi))

_CHUNK = 1 << 21
"""Entries of the cases' outer products formed at once in :func:`casewise_scores` (16 MB)."""


@dataclass
class Moments:
    """The model-implied moments and their derivatives at one parameter vector."""

    mu: np.ndarray
    sigma: np.ndarray
    sigma_inv: np.ndarray
    d_mu: np.ndarray  # (q, k)
    d_sigma: np.ndarray  # (q, k, k)


class MLProblem:
    """The ML fit of one :class:`ModelSpec` to complete data ``y`` (n x k)."""

    def __init__(self, spec: ModelSpec, y: np.ndarray) -> None:
        self.spec = spec
        self.y = y
        self.n, self.k = y.shape
        self.ybar = y.mean(axis=0)
        centred = y - self.ybar
        self.s = centred.T @ centred / self.n
        sign, self.logdet_s = np.linalg.slogdet(self.s)
        if sign <= 0:
            raise np.linalg.LinAlgError("the sample covariance matrix is not positive definite")
        self.deriv = derivative_arrays(spec)
        self.base = fixed_matrices(spec)

    # -- the model -------------------------------------------------------------------
    def matrices(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """Return Lambda, nu, Theta, Psi, alpha at ``theta``."""
        d, b = self.deriv, self.base
        q = theta.size
        return {
            "lambda": b["lambda"] + (theta @ d.d_lambda.reshape(q, -1)).reshape(b["lambda"].shape),
            "nu": b["nu"] + theta @ d.d_nu,
            "theta": b["theta"] + (theta @ d.d_theta.reshape(q, -1)).reshape(b["theta"].shape),
            "psi": b["psi"] + (theta @ d.d_psi.reshape(q, -1)).reshape(b["psi"].shape),
            "alpha": b["alpha"] + theta @ d.d_alpha,
        }

    def implied(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return the implied means and covariance matrix at ``theta``."""
        m = self.matrices(theta)
        lam, psi = m["lambda"], m["psi"]
        sigma = lam @ psi @ lam.T + m["theta"]
        mu = m["nu"] + lam @ m["alpha"]
        return mu, sigma

    def moments(self, theta: np.ndarray) -> Moments:
        """Return the implied moments and their derivatives at ``theta``."""
        m = self.matrices(theta)
        lam, psi, alpha = m["lambda"], m["psi"], m["alpha"]
        d = self.deriv
        sigma = lam @ psi @ lam.T + m["theta"]
        mu = m["nu"] + lam @ alpha
        q, k, n_waves = d.d_lambda.shape
        # dLambda_a Psi Lambda' for every a as one matrix product
        half = (d.d_lambda.reshape(q * k, n_waves) @ (psi @ lam.T)).reshape(q, k, k)
        d_sigma = half + half.transpose(0, 2, 1) + lam @ d.d_psi @ lam.T + d.d_theta
        d_mu = d.d_nu + d.d_lambda @ alpha + d.d_alpha @ lam.T
        return Moments(mu, sigma, np.linalg.inv(sigma), d_mu, d_sigma)

    # -- fit function ----------------------------------------------------------------
    def fmin(self, theta: np.ndarray) -> float:
        """Return lavaan's ML fit function (half the discrepancy); inf where Sigma is not PD."""
        mu, sigma = self.implied(theta)
        try:
            chol = np.linalg.cholesky(sigma)
        except np.linalg.LinAlgError:
            return np.inf
        logdet = 2.0 * np.log(np.diag(chol)).sum()
        inv = np.linalg.inv(sigma)
        dev = self.ybar - mu
        value = logdet + np.sum(self.s * inv) - self.logdet_s - self.k + dev @ inv @ dev
        return 0.5 * float(value)

    def gradient(self, theta: np.ndarray, mom: Moments | None = None) -> np.ndarray:
        """Return the analytic gradient of :meth:`fmin`."""
        mom = self.moments(theta) if mom is None else mom
        inv = mom.sigma_inv
        dev = self.ybar - mom.mu
        w = inv @ dev
        g_mat = inv - inv @ (self.s + np.outer(dev, dev)) @ inv
        q = mom.d_sigma.shape[0]
        return 0.5 * (mom.d_sigma.reshape(q, -1) @ g_mat.ravel()) - mom.d_mu @ w

    def expected_information(self, mom: Moments) -> np.ndarray:
        """Return the unit expected information (structured: at the implied moments)."""
        return expected_information(mom.sigma_inv, mom.d_mu, mom.d_sigma)

    def observed_information(self, theta: np.ndarray) -> np.ndarray:
        """Return the unit observed information: the Hessian of :meth:`fmin`.

        Central differences of the analytic gradient (step 1e-5 relative), symmetrised.
        """
        q = theta.size
        hess = np.empty((q, q))
        for a in range(q):
            h = 1e-5 * max(1.0, abs(theta[a]))
            up, down = theta.copy(), theta.copy()
            up[a] += h
            down[a] -= h
            hess[a] = (self.gradient(up) - self.gradient(down)) / (2.0 * h)
        return 0.5 * (hess + hess.T)

    def casewise_scores(self, mom: Moments) -> np.ndarray:
        """Return the n x q matrix of each case's log-likelihood gradient."""
        return casewise_scores(self.y, mom.mu, mom.sigma_inv, mom.d_mu, mom.d_sigma)

    def loglik(self, theta: np.ndarray) -> float:
        """Return the normal log-likelihood at ``theta``."""
        f = self.fmin(theta)
        return -self.n * (f + 0.5 * (self.logdet_s + self.k + self.k * LOG_2PI))

    # -- optimisation ----------------------------------------------------------------
    def fit(
        self,
        start: np.ndarray,
        *,
        tol: float = 1e-9,
        decrement_tol: float = 1e-15,
        max_iter: int = 500,
    ) -> tuple[np.ndarray, bool, int]:
        """Minimise :meth:`fmin` by Fisher scoring with a backtracking line search.

        Stops when the largest absolute gradient is below ``tol`` or the Newton decrement
        ``g' I^-1 g`` is below ``decrement_tol``. Returns the estimates, whether it
        converged (gradient below ``tol``, or below 1e-5 when the decrement stopped it), and
        the number of iterations.
        """
        theta = np.asarray(start, dtype=float).copy()
        f = self.fmin(theta)
        if not np.isfinite(f):
            raise np.linalg.LinAlgError("the start values give a non-positive-definite Sigma")
        for it in range(1, max_iter + 1):
            mom = self.moments(theta)
            grad = self.gradient(theta, mom)
            if np.max(np.abs(grad)) < tol:
                return theta, True, it
            info = self.expected_information(mom)
            try:
                step = -np.linalg.solve(info, grad)
            except np.linalg.LinAlgError:
                step = -np.linalg.lstsq(info, grad, rcond=None)[0]
            slope = float(grad @ step)
            if slope >= 0:  # not a descent direction: fall back to steepest descent
                step, slope = -grad, -float(grad @ grad)
            elif -slope < decrement_tol:
                # the Newton decrement g' I^-1 g (twice the predicted decrease) is at the
                # rounding level of F: a further step cannot be told from noise
                return theta + step, bool(np.max(np.abs(grad)) < 1e-5), it
            t = 1.0
            while True:
                candidate = theta + t * step
                f_new = self.fmin(candidate)
                if np.isfinite(f_new) and f_new <= f + 1e-4 * t * slope:
                    break
                t *= 0.5
                if t < 1e-12:
                    return theta, bool(np.max(np.abs(grad)) < 1e-6), it
            theta, f = candidate, f_new
        grad = self.gradient(theta)
        return theta, bool(np.max(np.abs(grad)) < tol), max_iter


def expected_information(
    sigma_inv: np.ndarray, d_mu: np.ndarray, d_sigma: np.ndarray
) -> np.ndarray:
    """Return ``1/2 tr(S^-1 dS_a S^-1 dS_b) + dmu_a' S^-1 dmu_b`` for every pair (a, b)."""
    q = d_sigma.shape[0]
    prod = sigma_inv @ d_sigma
    cov_part = 0.5 * (prod.reshape(q, -1) @ prod.transpose(0, 2, 1).reshape(q, -1).T)
    mean_part = d_mu @ sigma_inv @ d_mu.T
    return cov_part + mean_part


def casewise_scores(
    y: np.ndarray,
    mu: np.ndarray,
    sigma_inv: np.ndarray,
    d_mu: np.ndarray,
    d_sigma: np.ndarray,
) -> np.ndarray:
    """Return each case's gradient of its normal log-likelihood (n x q)."""
    u = (y - mu) @ sigma_inv
    n, k = u.shape
    q = d_sigma.shape[0]
    trace = np.einsum("ij,aji->a", sigma_inv, d_sigma)
    # u_n' dSigma_a u_n for every case and parameter as products of u_n u_n' with dSigma_a,
    # by matrix products over chunks of cases (u_n u_n' of every case at once can be large)
    flat = d_sigma.reshape(q, k * k).T
    quad = np.empty((n, q))
    step = max(1, _CHUNK // max(k * k, 1))
    for lo in range(0, n, step):
        part = u[lo : lo + step]
        quad[lo : lo + step] = (part[:, :, None] * part[:, None, :]).reshape(-1, k * k) @ flat
    return u @ d_mu.T + 0.5 * (quad - trace)


def saturated_derivatives(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return dmu and dSigma of the saturated model (means and the lower triangle free)."""
    rows, cols = np.tril_indices(k)
    q = k + rows.size
    d_mu = np.zeros((q, k))
    d_mu[np.arange(k), np.arange(k)] = 1.0
    d_sigma = np.zeros((q, k, k))
    idx = np.arange(k, q)
    d_sigma[idx, rows, cols] = 1.0
    d_sigma[idx, cols, rows] = 1.0
    return d_mu, d_sigma


def independence_derivatives(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return dmu and dSigma of the baseline model (means and variances free)."""
    d_mu = np.zeros((2 * k, k))
    d_mu[np.arange(k), np.arange(k)] = 1.0
    d_sigma = np.zeros((2 * k, k, k))
    d_sigma[np.arange(k, 2 * k), np.arange(k), np.arange(k)] = 1.0
    return d_mu, d_sigma


def h1_trace(y: np.ndarray) -> float:
    """Return tr(A1^-1 B1) of the saturated model at the sample moments (the MLR h1 trace)."""
    n, k = y.shape
    ybar = y.mean(axis=0)
    s = (y - ybar).T @ (y - ybar) / n
    inv = np.linalg.inv(s)
    d_mu, d_sigma = saturated_derivatives(k)
    a1 = expected_information(inv, d_mu, d_sigma)
    scores = casewise_scores(y, ybar, inv, d_mu, d_sigma)
    b1 = scores.T @ scores / n
    return float(np.sum(np.linalg.inv(a1) * b1.T))
