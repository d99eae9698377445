"""The estimation of :class:`models.ordinal.OrdinalMixedModel`.

The optimiser over thresholds, fixed effects and random-effect factors, its start values and
the stored result.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special

import models.ordinal._laplace as engine
from models._columns import FIXED_COLUMNS
from models._errors import (
    ConvergenceError,
    ConvergenceWarning,
    SingularFitWarning,
)
from models._version import __version__
from models.formula import Design

SINGULAR_TOL = 1e-4
"""A diagonal entry of a random-effect factor ``T`` below this marks a singular fit."""

GRAD_TOL = 1e-4
"""Largest absolute gradient of the log-likelihood accepted at the optimum ..."""

STEP_TOL = 1e-5
"""... or, for large data sets, the largest Newton step ``|H^-1 g|`` (lme4's scaled gradient)."""

START_FLOOR = 0.05
"""Smallest start of a diagonal factor entry, as a fraction of the latent SD of the link."""

THRESHOLD_COLUMNS = ["term", "estimate", "se", "statistic", "ci_low", "ci_high"]


_WHERE = "OrdinalMixedModel"


def _curvature(
    hess: np.ndarray, free_grad: np.ndarray
) -> tuple[np.ndarray, bool, float, float, float]:
    """Covariance, positive definiteness, condition number, largest gradient and Newton step.

    ``hess`` is the Hessian of the log-likelihood over the free parameters, ``free_grad`` its
    gradient there.
    """
    info = -hess
    with np.errstate(invalid="ignore"):
        eig = np.linalg.eigvalsh(info) if info.size else np.zeros(0)
    pos_def = bool(eig.size == 0 or eig.min() > 0)
    try:
        cov = np.linalg.inv(info)
    except np.linalg.LinAlgError:
        cov = np.full_like(info, np.nan)
    cond = float(eig.max() / eig.min()) if pos_def and eig.size else float("inf")
    max_grad = float(np.max(np.abs(free_grad))) if free_grad.size else 0.0
    try:
        step = np.linalg.solve(hess, free_grad) if free_grad.size else np.zeros(1)
        scaled = float(np.max(np.abs(step)))
    except np.linalg.LinAlgError:
        scaled = float("inf")
    return cov, pos_def, cond, max_grad, scaled


def _short(x: float) -> str:
    """Write a small number as ``3e-3``, ``1.5e-4`` (no zero-padded exponent)."""
    if not np.isfinite(x):
        return "inf" if x > 0 else str(x)
    mantissa, exponent = f"{x:.1e}".split("e")
    mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


def convergence_failure(
    *, ok: bool, message: str, pos_def: bool, max_grad: float, newton_step: float
) -> str:
    """Say which convergence criterion of :class:`OrdinalMixedModel` failed; "" when none.

    A fit converged when the optimizer stopped normally (or found no lower point), the
    information matrix is positive definite and ``max|grad| < GRAD_TOL`` or the Newton step
    ``max|H^-1 g| < STEP_TOL``. The text names each failing criterion with its value and
    bound, then what the optimizer itself reported (L-BFGS-B's own success message does not
    mean the fit converged).

    Examples
    --------
    >>> from models.ordinal._fit import convergence_failure
    >>> convergence_failure(ok=True, message="CONVERGENCE: NORM_OF_PROJECTED_GRADIENT_<=_PGTOL",
    ...                     pos_def=True, max_grad=3e-3, newton_step=2e-4)[:49]
    'max|grad| 3e-3 > 1e-4 and Newton step 2e-4 > 1e-5'
    """
    reasons = []
    if not ok:
        reasons.append("the optimizer stopped before an optimum")
    if not pos_def:
        reasons.append("the information matrix is not positive definite")
    if not (max_grad < GRAD_TOL or newton_step < STEP_TOL):
        reasons.append(
            f"max|grad| {_short(max_grad)} > {_short(GRAD_TOL)} and Newton step "
            f"{_short(newton_step)} > {_short(STEP_TOL)}"
        )
    if not reasons:
        return ""
    return "; ".join(reasons) + f" (L-BFGS-B: {message})"


def _line_search_stop(res: Any) -> bool:
    """Tell whether L-BFGS-B stopped because its line search found no lower point."""
    return str(res.message).startswith("ABNORMAL")


def _central_grad(fun, z: np.ndarray, bounds) -> np.ndarray:
    g = np.zeros_like(z)
    for k in range(z.size):
        h = 1e-5 * max(1.0, abs(z[k]))
        up, dn = z.copy(), z.copy()
        up[k] += h
        dn[k] -= h
        if bounds is not None and bounds[k][0] is not None and dn[k] < bounds[k][0]:
            dn[k] = z[k]
            g[k] = (fun(up) - fun(dn)) / h
        else:
            g[k] = (fun(up) - fun(dn)) / (2.0 * h)
    return g


def _jacobian(grad, psi: np.ndarray, keep: np.ndarray) -> np.ndarray:
    idx = np.flatnonzero(keep)
    J = np.zeros((idx.size, idx.size))
    for col, k in enumerate(idx):
        h = 1e-4 * max(1.0, abs(psi[k]))
        up, dn = psi.copy(), psi.copy()
        up[k] += h
        dn[k] -= h
        J[:, col] = (grad(up)[idx] - grad(dn)[idx]) / (2.0 * h)
    return 0.5 * (J + J.T)


@dataclass(frozen=True)
class _Working:
    """The optimizer's parameters and the model's: the thresholds as the first and log gaps.

    Equidistant thresholds (the first and the common gap) are the same on both scales.
    """

    na: int
    eq: bool

    def natural(self, z: np.ndarray) -> np.ndarray:
        """Return the model's parameters of the optimizer's ``z``."""
        psi = z.copy()
        if not self.eq:
            psi[: self.na] = z[0] + np.concatenate([[0.0], np.cumsum(np.exp(z[1 : self.na]))])
        return psi

    def chain(self, z: np.ndarray, g: np.ndarray) -> np.ndarray:
        """Return the gradient in ``z`` of a gradient ``g`` in the model's parameters."""
        out = g.copy()
        if not self.eq:
            tail = np.cumsum(g[: self.na][::-1])[::-1]
            out[0] = tail[0]
            out[1 : self.na] = tail[1:] * np.exp(z[1 : self.na])
        return out

    def working(self, psi: np.ndarray) -> np.ndarray:
        """Return the optimizer's ``z`` of the model's parameters."""
        z = psi.copy()
        if not self.eq:
            z[1 : self.na] = np.log(np.maximum(np.diff(psi[: self.na]), 1e-8))
        return z


def _start(
    pr: engine.Problem, scale: _Working, theta0: np.ndarray, psi0: np.ndarray | None
) -> np.ndarray:
    """Return the start of the optimizer, in its parameters.

    A previous fit of the same design (refit), or thresholds and fixed effects fitted without
    random effects, then the covariance parameters given by the caller.
    """
    if psi0 is not None:
        return scale.working(np.asarray(psi0, dtype=float))
    na, p, nt, eq = pr.n_alpha, pr.p, pr.n_theta, pr.equidistant
    counts = np.bincount(pr.y, minlength=pr.J)
    cum = np.cumsum(counts)[:-1] / counts.sum()
    cut0 = pr.lk.latent_sd / (np.pi / np.sqrt(3.0)) * np.log(cum / (1.0 - cum))
    if pr.lk.name == "probit":
        cut0 = special.ndtri(cum)
    alpha0 = np.array([cut0[0], np.mean(np.diff(cut0)) if cut0.size > 1 else 1.0]) if eq else cut0
    start0 = np.concatenate([alpha0, np.zeros(p), np.zeros(nt)])
    free = slice(0, na + p)

    def f0(z):
        psi = scale.natural(np.concatenate([z, np.zeros(nt)]))
        ll, g = pr.fixed_only(psi)
        return -ll, -scale.chain(np.concatenate([z, np.zeros(nt)]), g)[free]

    res0 = optimize.minimize(
        f0,
        scale.working(start0)[free],
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 500, "ftol": 1e-13, "gtol": 1e-8},
    )
    return np.concatenate([res0.x, np.asarray(theta0, dtype=float)])


class _Estimation:
    """_fit() and what it needs: start values, the validity check and the storage of a fit."""

    # -----------------------------------------------------------------------------------------
    def _fit(
        self,
        pr: engine.Problem,
        design: Design,
        names: list[str],
        t0: float,
        *,
        theta0: np.ndarray,
        psi0: np.ndarray | None = None,
        stacklevel: int = 4,
    ) -> None:
        # the objectives are closures over one problem, on the optimizer's scale (:class:`_Working`)
        na, p = pr.n_alpha, pr.p
        scale = _Working(na, pr.equidistant)
        to_natural, chain = scale.natural, scale.chain
        nfev = 0
        # 1. start (:func:`_start`); 2. the optimum of the Laplace (then the quadrature) fit
        z = _start(pr, scale, theta0, psi0)
        bounds = [(None, None)] * (na + p) + [(b, None) for b in pr.st.theta_lower_bounds()]
        fail: list[str] = []

        def f(zv):
            nonlocal nfev
            nfev += 1
            try:
                ll, g, _ = pr.laplace(to_natural(zv))
            except (engine.ModeFailure, np.linalg.LinAlgError) as err:
                fail.append(str(err))
                return 1e300, np.zeros_like(zv)
            if not np.isfinite(ll):
                return 1e300, np.zeros_like(zv)
            return -ll, -chain(zv, g)

        # The projected gradient is asked down to 1e-5 only: below that L-BFGS-B's line search
        # spends about twenty evaluations of the Laplace likelihood per fit on steps that no
        # longer lower it, and the Newton step from the numerical information below takes the
        # estimate to the optimum (its gradient to about 1e-9) in one evaluation.
        res = optimize.minimize(
            f,
            z,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": int(self.max_iter), "ftol": 1e-15, "gtol": 1e-5, "maxcor": 20},
        )
        message = str(res.message)
        # L-BFGS-B also stops "ABNORMAL" when no line-search step lowers the objective any
        # more, which happens at an optimum already reached to machine precision (warm starts
        # of refits); the gradient and information checks below then decide.
        ok = bool(res.success) or _line_search_stop(res)
        zhat = res.x
        if self.n_agq > 1:

            def fq(zv):
                nonlocal nfev
                nfev += 1
                try:
                    return -pr.agq(to_natural(zv), self.n_agq)
                except (engine.ModeFailure, np.linalg.LinAlgError):
                    return 1e300

            resq = optimize.minimize(
                lambda zv: (fq(zv), _central_grad(fq, zv, bounds)),
                zhat,
                jac=True,
                method="L-BFGS-B",
                bounds=bounds,
                options={"maxiter": int(self.max_iter), "ftol": 1e-15, "gtol": 1e-7},
            )
            zhat, ok, message = (
                resq.x,
                bool(resq.success) or _line_search_stop(resq),
                str(resq.message),
            )
        psi = to_natural(zhat)
        if not np.isfinite(f(zhat)[0]) or f(zhat)[0] >= 1e300:
            raise ConvergenceError(
                f"{_WHERE}.fit: the likelihood of {self.formula!r} could not be evaluated "
                f"({'; '.join(fail[-1:]) or 'no usable point'}). Check that every category "
                "occurs and simplify the random effects."
            )
        # 3. log-likelihood, gradient and information at the estimate
        if self.n_agq > 1:
            loglik = pr.agq(psi, self.n_agq)
            md = pr.mode(psi)

            def nat_grad(v):
                return -_central_grad(lambda t: -pr.agq(t, self.n_agq), v, None)
        else:
            loglik, _, md = pr.laplace(psi)

            def nat_grad(v):
                return pr.laplace(v)[1]

        grad = nat_grad(psi)
        theta = psi[na + p :]
        Ts = pr.st.theta_blocks(theta)
        boundary = np.array(
            [r_ == c_ and Ts[k][r_, c_] < SINGULAR_TOL for k, r_, c_ in pr.st.theta_index()],
            dtype=bool,
        )
        keep = np.concatenate([np.ones(na + p, dtype=bool), ~boundary])
        hess = _jacobian(nat_grad, psi, keep)
        # one Newton step from where the optimizer stopped, kept if the likelihood rises
        try:
            step = np.linalg.solve(hess, grad[keep])
        except np.linalg.LinAlgError:
            step = np.zeros(int(keep.sum()))
        trial = psi.copy()
        trial[keep] -= step
        if np.all(np.isfinite(trial)) and self._valid(pr, trial):
            try:
                new_ll = pr.agq(trial, self.n_agq) if self.n_agq > 1 else pr.laplace(trial)[0]
            except (engine.ModeFailure, np.linalg.LinAlgError):
                new_ll = -np.inf
            if new_ll > loglik:
                psi, loglik = trial, new_ll
                grad = nat_grad(psi)
        self._store(
            pr,
            design,
            names,
            t0,
            psi=psi,
            loglik=loglik,
            hess=hess,
            grad=grad,
            keep=keep,
            theta=theta,
            Ts=Ts,
            ok=ok,
            message=message,
            nfev=nfev,
            stacklevel=stacklevel + 1,
        )

    def _store(
        self,
        pr: engine.Problem,
        design: Design,
        names: list[str],
        t0: float,
        *,
        psi: np.ndarray,
        loglik: float,
        hess: np.ndarray,
        grad: np.ndarray,
        keep: np.ndarray,
        theta: np.ndarray,
        Ts: list[np.ndarray],
        ok: bool,
        message: str,
        nfev: int,
        stacklevel: int,
    ) -> None:
        """Set the fitted attributes from the estimate: convergence checks, tables, warnings."""
        na, p = pr.n_alpha, pr.p
        md = pr.mode(psi)  # the modes at the estimate
        cov, pos_def, cond, max_grad, scaled = _curvature(hess, grad[keep])
        self._problem = pr
        self._md = md
        self._psi = psi
        self.design_ = design
        self.n_obs_ = int(design.n_obs)
        self.n_dropped_ = int(design.n_dropped)
        self.groups_ = {b.group: int(b.n_levels) for b in design.random}
        self.theta_ = theta
        self._Ts = Ts
        self.nfev_ = int(nfev)
        self.max_grad_ = max_grad
        self.cond_hessian_ = cond
        failure = convergence_failure(
            ok=ok, message=message, pos_def=pos_def, max_grad=max_grad, newton_step=scaled
        )
        self.converged_ = not failure
        self.convergence_message_ = failure or message
        self.singular_ = bool(any(np.any(np.diag(T) < SINGULAR_TOL) for T in Ts))
        self.npar_ = int(pr.n_par)
        self.loglik_ = float(loglik)
        self.aic_ = float(-2 * loglik + 2 * self.npar_)
        self.bic_ = float(-2 * loglik + self.npar_ * np.log(self.n_obs_))
        self.alpha_ = psi[:na]
        self.cutpoints_ = pr.cutpoints(psi[:na])
        beta = psi[na : na + p]
        self.beta_ = pd.Series(beta, index=names, name="estimate")
        cov_ab = cov[: na + p, : na + p]
        self.vcov_ = pd.DataFrame(
            cov_ab, index=self._alpha_names() + names, columns=self._alpha_names() + names
        )
        se = np.sqrt(np.clip(np.diag(cov_ab), 0, None))
        se = np.where(np.diag(cov_ab) >= 0, se, np.nan)
        z = special.ndtri(0.5 + self.ci_level / 2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = psi[: na + p] / se
        self.thresholds_ = pd.DataFrame(
            {
                "term": self._alpha_names(),
                "estimate": psi[:na],
                "se": se[:na],
                "statistic": stat[:na],
                "ci_low": psi[:na] - z * se[:na],
                "ci_high": psi[:na] + z * se[:na],
            },
            columns=THRESHOLD_COLUMNS,
        )
        self.fixed_ = pd.DataFrame(
            {
                "term": names,
                "estimate": beta,
                "se": se[na:],
                "df": np.full(p, np.nan),
                "statistic": stat[na:],
                "p_value": 2.0 * special.ndtr(-np.abs(stat[na:])),
                "ci_low": beta - z * se[na:],
                "ci_high": beta + z * se[na:],
            },
            columns=FIXED_COLUMNS,
        )
        self.random_, self.random_corr_ = self._random_tables()
        self._ranef_cache: pd.DataFrame | None = None
        self.seconds_ = float(time.perf_counter() - t0)
        self.meta_ = {
            "package_version": __version__,
            "engine": "clmm",
            "params": self.get_params(),
            "n_used": self.n_obs_,
            "n_excluded": self.n_dropped_,
            "nfev": self.nfev_,
            "approximation": "laplace" if self.n_agq == 1 else f"agq{self.n_agq}",
        }
        if not self.converged_:
            warnings.warn(
                f"OrdinalMixedModel.fit did not converge for {self.formula!r}: {failure}. "
                "Results are at the best point found; simplify the random effects or check "
                "for categories that almost never occur.",
                ConvergenceWarning,
                stacklevel=stacklevel,
            )
        if self.singular_:
            warnings.warn(
                f"boundary (singular) fit for {self.formula!r}: {self._singular_description()}. "
                "The random-effects structure is likely too complex for the data.",
                SingularFitWarning,
                stacklevel=stacklevel,
            )

    @staticmethod
    def _valid(pr: engine.Problem, psi: np.ndarray) -> bool:
        """Thresholds increasing and diagonal factor entries non-negative."""
        cut = pr.cutpoints(psi[: pr.n_alpha])
        theta = psi[pr.n_alpha + pr.p :]
        diag = np.array([r_ == c_ for _, r_, c_ in pr.st.theta_index()], dtype=bool)
        return bool(np.all(np.diff(cut) > 0) and np.all(theta[diag] >= 0))

    def _theta_start(self, design: Design, pr: engine.Problem) -> np.ndarray:
        st = pr.st
        default = np.array([1.0 if r_ == c_ else 0.0 for _, r_, c_ in st.theta_index()])
        if self.start == "default":
            return default
        from models.lmm.model import LinearMixedModel

        lmm = LinearMixedModel(self.formula, reml=False)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lmm._fit_design(design)
        except Exception:  # noqa: BLE001 - a start value only: fall back to the default
            return default
        theta = np.asarray(lmm.theta_, dtype=float) * pr.lk.latent_sd
        theta = np.concatenate([theta, default[theta.size :]])  # a smooth's block starts at 1
        diag = np.array([r_ == c_ for _, r_, c_ in st.theta_index()])
        theta[diag] = np.maximum(theta[diag], START_FLOOR * pr.lk.latent_sd)
        return theta
