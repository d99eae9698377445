"""Bounded derivative-free minimisation of the profiled deviance, then a Newton polish.

The main phase is derivative free, as in lme4 (BOBYQA): scipy's COBYQA (Powell's successor to
BOBYQA, a model-based trust-region method), or bounded Powell / Nelder-Mead. The deviance surface
is flat near its optimum, so the result is then polished by safeguarded Newton steps on the free
coordinates with central-difference derivatives of the deviance itself (a coordinate on its lower
bound stays there while the one-sided derivative points outwards). The same derivatives give the
convergence check: the Newton step length (lme4's scaled gradient) must be small and the Hessian on
the free coordinates positive definite.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

METHODS = ("cobyqa", "powell", "nelder-mead")


class _BudgetExhausted(Exception):
    pass


@dataclass(frozen=True)
class OptimResult:
    """Outcome of :func:`minimize_bounded`."""

    x: np.ndarray
    fun: float
    nfev: int
    converged: bool
    message: str
    scaled_gradient: float


class _Counted:
    def __init__(self, fun: Callable[[np.ndarray], float], max_evals: int) -> None:
        self.fun = fun
        self.max_evals = max_evals
        self.nfev = 0
        self.best_x: np.ndarray | None = None
        self.best_f = np.inf

    def __call__(self, x: np.ndarray) -> float:
        if self.nfev >= self.max_evals:
            raise _BudgetExhausted
        self.nfev += 1
        value = float(self.fun(np.asarray(x, dtype=float)))
        if not np.isfinite(value):
            value = np.inf
        if value < self.best_f:
            self.best_f, self.best_x = value, np.array(x, dtype=float)
        return value


def _steps(x: np.ndarray) -> np.ndarray:
    return 1e-4 * np.maximum(np.abs(x), 0.05)


def _derivatives(f: _Counted, x: np.ndarray, fx: float, idx: np.ndarray):
    """Central-difference gradient and Hessian of ``f`` over coordinates ``idx``."""
    h = _steps(x)
    k = len(idx)
    g = np.zeros(k)
    H = np.zeros((k, k))
    plus = np.zeros(k)
    minus = np.zeros(k)
    for a, i in enumerate(idx):
        e = np.zeros_like(x)
        e[i] = h[i]
        plus[a] = f(x + e)
        minus[a] = f(x - e)
        g[a] = (plus[a] - minus[a]) / (2 * h[i])
        H[a, a] = (plus[a] - 2 * fx + minus[a]) / h[i] ** 2
    for a in range(k):
        for b in range(a + 1, k):
            i, j = idx[a], idx[b]
            ei = np.zeros_like(x)
            ej = np.zeros_like(x)
            ei[i], ej[j] = h[i], h[j]
            val = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (
                4 * h[i] * h[j]
            )
            H[a, b] = H[b, a] = val
    return g, H


def _polish(
    f: _Counted, x: np.ndarray, fx: float, lower: np.ndarray, max_iter: int, step_tol: float = 1e-7
):
    """Newton steps on the free coordinates; returns x, f(x), scaled gradient, Hessian ok.

    Stops after taking a step shorter than ``step_tol`` (the next one would be far shorter).
    """
    finite_lb = np.isfinite(lower)
    scaled = np.inf
    hess_ok = False
    for _ in range(max_iter):
        at_bound = finite_lb & (x <= lower + 1e-10)
        free = ~at_bound
        h = _steps(x)
        for i in np.flatnonzero(at_bound):
            e = np.zeros_like(x)
            e[i] = h[i]
            if f(x + e) < fx:
                free[i] = True
        idx = np.flatnonzero(free)
        if idx.size == 0:
            return x, fx, 0.0, True
        g, H = _derivatives(f, x, fx, idx)
        try:
            evals = np.linalg.eigvalsh(H)
        except np.linalg.LinAlgError:
            return x, fx, np.inf, False
        hess_ok = bool(evals.min() > 1e-8 * max(1.0, abs(evals.max())))
        if not hess_ok:
            return x, fx, float(np.max(np.abs(g))), False
        step = -np.linalg.solve(H, g)
        scaled = float(np.max(np.abs(step)))
        if scaled < 1e-10:
            return x, fx, scaled, True
        done = scaled < step_tol
        improved = False
        t = 1.0
        for _ in range(6):
            cand = x.copy()
            cand[idx] = x[idx] + t * step
            cand = np.where(finite_lb, np.maximum(cand, lower), cand)
            fc = f(cand)
            if fc <= fx:
                improved = fc < fx or np.allclose(cand, x)
                x, fx = cand, fc
                break
            t *= 0.5
        if done or not improved:
            break
    return x, fx, scaled, hess_ok


def _derivative_free(
    counted: _Counted,
    x0: np.ndarray,
    lower: np.ndarray,
    *,
    method: str,
    radius: float,
    tol: float,
) -> tuple[bool, str]:
    """Run the derivative-free phase from ``x0``; returns (success, message)."""
    bounds = [(lb if np.isfinite(lb) else None, None) for lb in lower]
    budget = max(counted.max_evals - counted.nfev, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "cobyqa":
            res = minimize(
                counted,
                x0,
                method="COBYQA",
                bounds=bounds,
                options={"maxfev": budget, "initial_tr_radius": radius, "final_tr_radius": tol},
            )
        elif method == "powell":
            res = minimize(
                counted,
                x0,
                method="Powell",
                bounds=bounds,
                options={"maxfev": budget, "xtol": tol, "ftol": 1e-15},
            )
        else:
            res = minimize(
                counted,
                x0,
                method="Nelder-Mead",
                bounds=bounds,
                options={"maxfev": budget, "xatol": tol, "fatol": 1e-12},
            )
    return bool(res.success) and counted.nfev < counted.max_evals, str(res.message)


def minimize_bounded(
    fun: Callable[[np.ndarray], float],
    x0: np.ndarray,
    lower: np.ndarray,
    *,
    method: str = "cobyqa",
    max_evals: int = 10_000,
    tol: float = 1e-3,
    polish: bool = True,
    grad_tol: float = 2e-3,
) -> OptimResult:
    """Minimise ``fun`` subject to ``x >= lower`` without derivatives, then polish.

    Parameters
    ----------
    fun : callable
        Objective; may return ``inf`` where undefined.
    x0, lower : ndarray
        Start and lower bounds (``-inf`` for unbounded coordinates).
    method : {"cobyqa", "powell", "nelder-mead"}
        Derivative-free phase.
    max_evals : int
        Budget of function evaluations for all phases together; exhausting it means the fit
        did not converge.
    tol : float
        Final trust-region radius (COBYQA) or x tolerance (Powell, Nelder-Mead) of the first
        derivative-free phase. The Newton polish converges from there; when it cannot (the
        Hessian is not positive definite there), the derivative-free method resumes from the
        best point with ``min(tol, 1e-10)`` and the polish is tried again.
    polish : bool
        Run the Newton polish and convergence check.
    grad_tol : float
        Largest accepted Newton step (scaled gradient) at the solution, as lme4's ``tol``.
    """
    counted = _Counted(fun, max_evals)
    x0 = np.maximum(np.asarray(x0, dtype=float), np.where(np.isfinite(lower), lower, -np.inf))
    exhausted = f"stopped after the maximum of {max_evals} function evaluations"
    stages = [(0.2, tol)] if not polish else [(0.2, tol), (max(10 * tol, 1e-3), min(tol, 1e-10))]
    message = ""
    scaled = np.nan
    for stage, (radius, stage_tol) in enumerate(stages):
        start = x0 if stage == 0 else counted.best_x
        try:
            ok, message = _derivative_free(
                counted, start, lower, method=method, radius=radius, tol=stage_tol
            )
        except _BudgetExhausted:
            ok, message = False, exhausted
        if not ok:
            if counted.nfev >= max_evals:
                message = exhausted
            elif not message.startswith("optimizer failed"):
                message = f"optimizer failed: {message}"
            x = counted.best_x if counted.best_x is not None else x0
            return OptimResult(x, counted.best_f, counted.nfev, False, message, np.nan)
        if not polish:
            return OptimResult(counted.best_x, counted.best_f, counted.nfev, True, message, np.nan)
        try:
            x, fx, scaled, hess_ok = _polish(
                counted, counted.best_x.copy(), counted.best_f, lower, max_iter=8
            )
        except _BudgetExhausted:
            return OptimResult(
                counted.best_x, counted.best_f, counted.nfev, False, exhausted, np.nan
            )
        if counted.best_f < fx:
            x, fx = counted.best_x, counted.best_f
        if hess_ok and scaled <= grad_tol:
            return OptimResult(x, fx, counted.nfev, True, message, scaled)
    if not hess_ok:
        message = "the Hessian of the deviance is not positive definite at the solution"
    else:
        message = f"scaled gradient {scaled:.3g} at the solution exceeds {grad_tol:g}"
    return OptimResult(counted.best_x, counted.best_f, counted.nfev, False, message, scaled)
