"""The one-factor minres fit behind omega: Levenberg-Marquardt, then Newton's polish.

The interior optimum, which nearly every scale has, is found with NumPy alone; SciPy's
optimisers (a tenth of a second or more to import, paid by every command that scores a
questionnaire) are loaded only for the bounded fit of a Heywood case.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["MAX_COMMUNALITY", "one_factor_uls"]

MAX_COMMUNALITY = 0.995
"""Largest communality of the fit (psych::fa bounds the uniquenesses below by 0.005)."""

_MAX_ITERATIONS = 500


def one_factor_uls(r: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    r"""Fit one factor to a correlation matrix by unweighted least squares (minres).

    Minimises :math:`\sum_{i<j} (r_{ij} - \lambda_i \lambda_j)^2` by Levenberg-Marquardt from
    the first principal component, then polishes the optimum with Newton steps on the exact
    gradient and Hessian, so the loadings are exact to rounding (also at a bound). When the
    unbounded optimum does not exist or needs a communality above :data:`MAX_COMMUNALITY` (a
    Heywood case), the loadings are bounded to :math:`|\lambda_i| \le \sqrt{0.995}`, as
    ``psych::fa`` bounds its uniquenesses below by 0.005. The sign makes the loadings sum to a
    positive number.

    Returns the loadings and a mask of the items at the bound, or None when no fit is found.
    """
    k = r.shape[0]
    rows, cols = np.triu_indices(k, 1)
    target = r[rows, cols]
    index = np.arange(rows.size)
    bound = np.sqrt(MAX_COMMUNALITY)
    values, vectors = np.linalg.eigh(r)
    start = vectors[:, -1] * np.sqrt(max(values[-1], np.finfo(float).eps))

    def residuals(lam: np.ndarray) -> np.ndarray:
        return lam[rows] * lam[cols] - target

    def jacobian(lam: np.ndarray) -> np.ndarray:
        jac = np.zeros((rows.size, k))
        jac[index, rows] = lam[cols]
        jac[index, cols] = lam[rows]
        return jac

    lam = _levenberg_marquardt(start, residuals, jacobian)
    if lam is not None and (np.abs(lam) <= bound).all():
        at_bound = np.zeros(k, dtype=bool)
        lam = _newton_polish(lam, r, ~at_bound)
    else:
        from scipy import optimize  # only a Heywood case needs the bounded fit

        tol = np.finfo(float).eps
        start = np.clip(start, -0.99 * bound, 0.99 * bound)
        fit = optimize.least_squares(
            residuals,
            start,
            jac=jacobian,
            bounds=(-bound, bound),
            method="trf",
            xtol=tol,
            ftol=tol,
            gtol=tol,
        )
        if fit.status <= 0 or not np.isfinite(fit.x).all():
            return None
        at_bound = np.abs(fit.x) >= bound * (1.0 - 1e-8)
        lam = _newton_polish(np.where(at_bound, np.sign(fit.x) * bound, fit.x), r, ~at_bound)
    if lam.sum() < 0:
        lam = -lam
    return lam, at_bound


def _levenberg_marquardt(
    x: np.ndarray,
    residuals: Callable[[np.ndarray], np.ndarray],
    jacobian: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray | None:
    """Unconstrained least squares by Levenberg-Marquardt with Nielsen's (1999) damping.

    Stops when the gradient or the step vanishes to rounding (the Newton polish that follows
    makes the optimum exact); returns None when no finite optimum is reached within
    ``_MAX_ITERATIONS`` steps (the criterion then has no interior minimum).
    """
    eps = np.finfo(float).eps
    f = residuals(x)
    jac = jacobian(x)
    cost = f @ f
    normal = jac.T @ jac
    grad = jac.T @ f
    mu = 1e-3 * max(normal.diagonal().max(), eps)
    nu = 2.0
    for _ in range(_MAX_ITERATIONS):
        if not (np.isfinite(grad).all() and np.isfinite(x).all()):
            return None
        if np.abs(grad).max() <= eps:
            return x
        # hand-written damped Gauss-Newton step: (J'J + mu I) h = -J'f
        step = np.linalg.solve(normal + mu * np.eye(x.size), -grad)
        if np.linalg.norm(step) <= eps * (np.linalg.norm(x) + eps):
            return x
        candidate = x + step
        f_new = residuals(candidate)
        cost_new = f_new @ f_new
        predicted = step @ (mu * step - grad)
        gain = (cost - cost_new) / predicted if predicted > 0 else -1.0
        if gain > 0:
            x, f, cost = candidate, f_new, cost_new
            jac = jacobian(x)
            normal = jac.T @ jac
            grad = jac.T @ f
            mu *= max(1.0 / 3.0, 1.0 - (2.0 * gain - 1.0) ** 3)
            nu = 2.0
        else:
            mu *= nu
            nu *= 2.0
    return None


def _newton_polish(
    lam: np.ndarray, r: np.ndarray, free: np.ndarray, max_steps: int = 30
) -> np.ndarray:
    r"""Refine an interior minres optimum with Newton steps (exact gradient and Hessian).

    With :math:`E = \lambda\lambda^\top - R` off the diagonal (0 on it), the criterion
    :math:`\tfrac12 \sum_{i<j} E_{ij}^2` has gradient :math:`g = E\lambda` and Hessian
    :math:`H_{ii} = \sum_{j \ne i} \lambda_j^2`, :math:`H_{ij} = 2\lambda_i\lambda_j - r_{ij}`.
    Only the loadings in `free` move (the others sit on a bound). Near the optimum the
    criterion is flat to rounding, so steps are accepted while they shrink the gradient; the
    first that does not ends the refinement.
    """

    def gradient(x: np.ndarray) -> np.ndarray:
        e = np.outer(x, x) - r
        np.fill_diagonal(e, 0.0)
        return e @ x

    if not free.any():
        return lam
    grad = gradient(lam)
    size = np.abs(grad[free]).max()
    for _ in range(max_steps):
        if size == 0.0:
            break
        hess = 2.0 * np.outer(lam, lam) - r
        np.fill_diagonal(hess, (lam**2).sum() - lam**2)
        try:
            step = np.linalg.solve(hess[np.ix_(free, free)], grad[free])
        except np.linalg.LinAlgError:
            break
        candidate = lam.copy()
        candidate[free] -= step
        candidate_grad = gradient(candidate)
        candidate_size = np.abs(candidate_grad[free]).max()
        if not candidate_size < size:
            break
        lam, grad, size = candidate, candidate_grad, candidate_size
    return lam
