"""Cumulative link mixed models (ordinal regression with random effects) in lme4 syntax.

:class:`OrdinalMixedModel` fits ``P(Y <= j) = F(theta_j - X beta - Z b)`` with ``F`` the
logistic or normal distribution function, ``b ~ N(0, Sigma)`` per grouping factor, by maximum
likelihood with the Laplace approximation (any random-effects structure: correlated slopes,
crossed and nested factors) or adaptive Gauss-Hermite quadrature (one scalar grouping factor),
as ``ordinal::clmm`` does (Christensen 2019). The formula layer is the one
:class:`models.lmm.LinearMixedModel` uses; the likelihood engine is
:mod:`models._backends.ordinal_laplace`.

This module is long (about 1,200 lines) because it is one class whose methods share the fitted
state: fitting and its checks, refits, the result tables, predictions and the summaries.
"""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import optimize, stats

from models._backends import ordinal_laplace as engine
from models._backends.mixedlm_lmm import one_blas_thread
from models._checks import check_choice, check_design, check_int, check_unit
from models._columns import FIXED_COLUMNS
from models._errors import (
    ConvergenceError,
    ConvergenceWarning,
    FormulaError,
    InvalidParameterError,
    NotFittedError,
    SingularFitWarning,
)
from models._varcorr import json_number, random_tables, singular_description
from models.formula import Design, build_design, parse_formula

__all__ = ["OrdinalMixedModel", "OrdinalModelSummary"]

SINGULAR_TOL = 1e-4
"""A diagonal entry of a random-effect factor ``T`` below this marks a singular fit."""

GRAD_TOL = 1e-4
"""Largest absolute gradient of the log-likelihood accepted at the optimum ..."""

STEP_TOL = 1e-5
"""... or, for large data sets, the largest Newton step ``|H^-1 g|`` (lme4's scaled gradient)."""

START_FLOOR = 0.05
"""Smallest start of a diagonal factor entry, as a fraction of the latent SD of the link."""

THRESHOLD_COLUMNS = ["term", "estimate", "se", "statistic", "ci_low", "ci_high"]

DICT_KEYS = (
    "engine",
    "family",
    "formula",
    "link",
    "threshold",
    "n_agq",
    "n_obs",
    "groups",
    "converged",
    "singular",
    "fixed",
    "random",
    "thresholds",
    "loglik",
    "aic",
    "bic",
    "seconds",
)
"""Keys of :meth:`OrdinalMixedModel.to_dict`, in order."""

_FIXED_ONLY = ("~0", "NA", "none", "0")
_WHERE = "OrdinalMixedModel"


@dataclass(frozen=True)
class OrdinalModelSummary:
    """Tables of a fitted :class:`OrdinalMixedModel` and its printed form.

    Attributes
    ----------
    thresholds, fixed, random, random_corr, fit : pandas.DataFrame
        As ``thresholds_``, ``fixed_``, ``random_``, ``random_corr_`` and one row of fit
        statistics.
    text : str
        The clmm-style text.
    """

    thresholds: pd.DataFrame
    fixed: pd.DataFrame
    random: pd.DataFrame
    random_corr: pd.DataFrame
    fit: pd.DataFrame
    text: str

    def __repr__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(self.text)}</pre>"


class OrdinalMixedModel:
    """Cumulative link mixed model (``ordinal::clmm``) with lme4 formulas.

    Parameters
    ----------
    formula : str
        lme4 syntax, e.g. ``"rating ~ temp + contact + (1 | judge)"``; the response holds the
        ordered categories (numbers, ordered by value, or a pandas ordered categorical). The
        fixed part has no intercept of its own: the thresholds take its place.
    link : {"logit", "probit"}, default "logit"
        ``F``: logistic (coefficients are log odds ratios) or standard normal.
    threshold : {"flexible", "equidistant"}, default "flexible"
        One free threshold per adjacent pair of categories, or ``theta_j = threshold.1 +
        (j - 1) spacing`` (as clm's ``"equidistant"``).
    n_agq : int, default 1
        1 for the Laplace approximation; more for adaptive Gauss-Hermite quadrature with that
        many nodes (clmm's ``nAGQ``), which needs a single scalar random-effects term such as
        ``(1 | g)``.
    start : {"lmm", "default"}, default "lmm"
        Starting values of the random-effect SDs: from a linear mixed model of the category
        numbers (the ratio of each SD to the residual SD, on the latent scale), or 1.
    max_iter : int, default 1000
        Iteration budget of the optimizer (L-BFGS-B on the exact gradient of the Laplace
        log-likelihood).
    ci_level : float, default 0.95
        Level of the Wald intervals.

    Attributes
    ----------
    design_ : Design
        Design matrices (:func:`models.formula.build_design`).
    categories_ : list
        The ordered categories of the response.
    n_obs_, n_dropped_ : int
        Observations used, rows left out for missing values.
    groups_ : dict
        ``{grouping factor: number of levels}``.
    thresholds_ : pandas.DataFrame
        ``term, estimate, se, statistic, ci_low, ci_high``; terms ``"1|2"``, ... as clmm names
        them (``threshold.1`` and ``spacing`` for equidistant thresholds).
    fixed_ : pandas.DataFrame
        ``term, estimate, se, df, statistic, p_value, ci_low, ci_high``: Wald ``z`` tests
        (``df`` is NaN), two-sided p-values, intervals ``estimate +- z * se``.
    beta_ : pandas.Series
        Fixed effects by term.
    vcov_ : pandas.DataFrame
        Covariance of thresholds and fixed effects (inverse observed information).
    random_ : pandas.DataFrame
        ``group, term, variance, sd`` on the latent scale (no residual row: the latent
        residual variance is fixed by the link, ``pi^2/3`` or 1).
    random_corr_ : pandas.DataFrame
        ``group, term1, term2, covariance, corr``.
    theta_ : numpy.ndarray
        Column-wise lower triangles of each block's Cholesky factor ``T`` (``T T'`` is the
        block's covariance).
    loglik_, aic_, bic_ : float
        Log-likelihood (Laplace or quadrature) and information criteria with ``npar_``.
    npar_ : int
        Thresholds + fixed effects + covariance parameters.
    converged_ : bool
        The optimizer met its criteria (or stopped because no step lowered the objective any
        more), the information matrix is positive definite and the
        largest absolute gradient is below ``GRAD_TOL`` (or the Newton step it implies below
        ``STEP_TOL``, which scales with the data: a log-likelihood of -110,000 has gradients
        of 1e-4 at its optimum).
    max_grad_ : float
        Largest absolute gradient of the log-likelihood at the estimate.
    cond_hessian_ : float
        Condition number of the observed information (clmm's ``cond.H``).
    singular_ : bool
        A variance at 0 or a correlation at +-1.
    nfev_ : int
        Likelihood evaluations of the optimizer.
    ranef_ : pandas.DataFrame
        Conditional modes ``group, term, level, estimate, cond_var``.
    seconds_ : float
        Wall-clock time of ``fit``.
    meta_ : dict
        Provenance: package version, options, rows used and dropped.

    Notes
    -----
    The Laplace log-likelihood is maximized with its exact gradient (see
    :mod:`models._backends.ordinal_laplace`); quadrature fits start from the Laplace estimate.
    Standard errors come from the observed information, the finite-difference Jacobian of the
    gradient at the estimate. Validated against ``ordinal::clmm`` 2022.11 (R 4.2.2) on
    ``wine`` (Laplace, 5 and 10 quadrature nodes, probit, equidistant thresholds), ``soup``
    (nested factors) and simulated crossed and random-slope designs
    (``tests/models/test_ordinal_reference.py``, R script
    ``tests/models/reference/clmm.R``).

    References
    ----------
    Christensen RHB (2019). Cumulative link models for ordinal regression with the R package
    ordinal. https://cran.r-project.org/package=ordinal
    Agresti A (2010). Analysis of Ordinal Categorical Data, 2nd ed. Wiley.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from models.ordinal import OrdinalMixedModel
    >>> rng = np.random.default_rng(3)
    >>> g = np.repeat(np.arange(30), 10)
    >>> x = rng.normal(size=300)
    >>> latent = 0.8 * x + rng.normal(0, 1, 30)[g] + rng.logistic(size=300)
    >>> y = np.digitize(latent, [-1.5, 0, 1.5]) + 1
    >>> m = OrdinalMixedModel("y ~ x + (1 | g)").fit(pd.DataFrame({"y": y, "x": x, "g": g}))
    >>> m.fixed_[["term", "estimate", "se"]].round(2)
      term  estimate    se
    0    x      0.71  0.12
    """

    def __init__(
        self,
        formula: str,
        *,
        link: Literal["logit", "probit"] = "logit",
        threshold: Literal["flexible", "equidistant"] = "flexible",
        n_agq: int = 1,
        start: Literal["lmm", "default"] = "lmm",
        max_iter: int = 1000,
        ci_level: float = 0.95,
    ) -> None:
        self.formula = formula
        self.link = link
        self.threshold = threshold
        self.n_agq = n_agq
        self.start = start
        self.max_iter = max_iter
        self.ci_level = ci_level

    def __repr__(self) -> str:
        return f"OrdinalMixedModel({self.formula!r}, link={self.link!r})"

    def get_params(self) -> dict[str, Any]:
        """Return the constructor parameters as a dict."""
        return {
            "formula": self.formula,
            "link": self.link,
            "threshold": self.threshold,
            "n_agq": self.n_agq,
            "start": self.start,
            "max_iter": self.max_iter,
            "ci_level": self.ci_level,
        }

    # -----------------------------------------------------------------------------------------
    def fit(self, data: pd.DataFrame) -> OrdinalMixedModel:
        """Fit the model to ``data``.

        Parameters
        ----------
        data : pandas.DataFrame
            One row per observation; rows with a missing value in a used column are left out
            (counted in ``n_dropped_``). Not modified.

        Returns
        -------
        OrdinalMixedModel
            ``self``, fitted.

        Raises
        ------
        InvalidParameterError
            For invalid options or a ``data`` that is not a DataFrame.
        FormulaError
            When the formula cannot be evaluated, has no random term, aliased fixed effects,
            a grouping factor with fewer than 2 levels, a response with fewer than 2
            categories, or quadrature is asked for a structure other than one ``(1 | g)``.
        ConvergenceError
            When the likelihood cannot be evaluated at any usable point.

        Warns
        -----
        ConvergenceWarning
            When the optimizer stops without meeting its criteria, or the information matrix
            is not positive definite.
        SingularFitWarning
            When a variance is estimated at 0 or a correlation at +-1.
        """
        t0 = time.perf_counter()
        self._check_params()
        if not isinstance(data, pd.DataFrame):
            raise InvalidParameterError(
                f"the `data` parameter of {_WHERE}.fit must be a pandas DataFrame; "
                f"got {type(data).__name__}"
            )
        spec = parse_formula(self.formula)
        frame, labels = _response_codes(data, spec.response)
        design = build_design(spec, frame)
        check_design(
            design,
            where=f"{_WHERE}.fit",
            fixed_only="use statsmodels' OrderedModel",
        )
        self._fit_design(design, labels, t0)
        return self

    def _fit_design(
        self,
        design: Design,
        labels: list | None,
        t0: float,
        *,
        start: OrdinalMixedModel | None = None,
        stacklevel: int = 4,
    ) -> None:
        """Fit to an evaluated design; ``start``: a fit of the same design to start from."""
        y_values = design.y
        cats = np.unique(y_values)
        if cats.size < 2:
            raise FormulaError(
                f"{_WHERE}.fit: the response of {self.formula!r} has {cats.size} category in the "
                "rows used; an ordinal model needs at least 2"
            )
        X, names = _fixed_matrix(design)
        y = np.searchsorted(cats, y_values)
        blocks = [(b.group, b.codes, b.n_levels, b.Z) for b in design.random]
        st = engine.Structure(blocks)
        if self.n_agq > 1 and not (len(design.random) == 1 and design.random[0].Z.shape[1] == 1):
            raise FormulaError(
                f"{_WHERE}.fit: adaptive Gauss-Hermite quadrature (n_agq={self.n_agq}) needs a "
                "single scalar random-effects term such as '(1 | g)'; "
                f"{self.formula!r} has {len(design.random)} block(s). Use n_agq=1 (Laplace)."
            )
        lk = engine.link(self.link)
        problem = engine.Problem(
            X, y, cats.size, st, lk, equidistant=self.threshold == "equidistant"
        )
        self.categories_ = (
            [labels[int(c) - 1] for c in cats] if labels is not None else [_plain(c) for c in cats]
        )
        self._labels = labels
        psi0 = theta0 = None
        if start is not None:
            # A standard deviation at 0 is a stationary point of the likelihood (it is even in
            # each SD), so a start on that boundary would never leave it: start such a
            # diagonal entry where a fresh fit's LMM start is floored.
            theta0 = np.asarray(start.theta_, dtype=float).copy()
            diag = np.array([r_ == c_ for _, r_, c_ in st.theta_index()], dtype=bool)
            theta0[diag] = np.maximum(theta0[diag], START_FLOOR * lk.latent_sd)
            if list(start.categories_) == self.categories_:
                psi0 = np.concatenate([start.alpha_, start.beta_.to_numpy(), theta0])
        else:
            theta0 = self._theta_start(design, problem)
        with one_blas_thread():
            self._fit(problem, design, names, t0, theta0=theta0, psi0=psi0, stacklevel=stacklevel)

    def refit(self, response: np.ndarray | pd.Series) -> OrdinalMixedModel:
        """Fit the same model to a new response, reusing the design matrices.

        What simulation-based power analysis and parametric bootstraps do many times: the
        formula is not parsed and the design not rebuilt, and the optimizer starts from this
        fit's thresholds, fixed effects and covariance parameters (from its covariance
        parameters only when the new response lacks a category).

        Parameters
        ----------
        response : array-like or pandas.Series
            One value per row used in the fit (``n_obs_`` values, in the order of
            ``design_.rows``; a Series is aligned on that index), each one of ``categories_``.

        Returns
        -------
        OrdinalMixedModel
            A new fitted model with the same options; ``self`` is unchanged. Its
            ``categories_`` are those the new response uses.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        InvalidParameterError
            When the response has the wrong length, is not aligned with the rows used, or
            holds a value that is not one of ``categories_``.
        ConvergenceError, FormulaError
            As :meth:`fit`.

        Warns
        -----
        ConvergenceWarning, SingularFitWarning
            As :meth:`fit`.
        """
        t0 = time.perf_counter()
        self._check_fitted("refit")
        if isinstance(response, pd.Series):
            if not response.index.equals(self.design_.rows):
                raise InvalidParameterError(
                    f"the `response` parameter of {_WHERE}.refit must be indexed like the rows "
                    "used in the fit (design_.rows)"
                )
            response = response.to_numpy()
        values = np.asarray(response, dtype=object)
        labels = self._labels
        allowed = list(labels) if labels is not None else list(self.categories_)
        lookup = {c: (k + 1 if labels is not None else c) for k, c in enumerate(allowed)}
        try:
            y = np.array([lookup[v] for v in values.tolist()], dtype=float)
            bad = False
        except (KeyError, TypeError):
            bad = True
        if values.shape != (self.n_obs_,) or bad:
            raise InvalidParameterError(
                f"the `response` parameter of {_WHERE}.refit must hold {self.n_obs_} values "
                f"(one per row used), each one of the categories {allowed}; got shape "
                f"{values.shape}" + (" with other values" if bad else "")
            )
        return self._refit_response(y, t0, stacklevel=5)

    def _refit_response(
        self, y: np.ndarray, t0: float | None = None, *, stacklevel: int = 4
    ) -> OrdinalMixedModel:
        """Refit to response values on the scale of ``design_.y`` (checked by the caller)."""
        from dataclasses import replace

        t0 = time.perf_counter() if t0 is None else t0
        new = type(self)(**self.get_params())
        new._fit_design(
            replace(self.design_, y=y), self._labels, t0, start=self, stacklevel=stacklevel
        )
        return new

    def _check_params(self) -> None:
        if not isinstance(self.formula, str):
            raise InvalidParameterError(
                f"the `formula` parameter of {_WHERE} must be a str in lme4 syntax, e.g. "
                f"'y ~ x + (1 | g)'; got {type(self.formula).__name__}"
            )
        check_choice(self.link, ("logit", "probit"), name="link", where=_WHERE)
        check_choice(self.threshold, ("flexible", "equidistant"), name="threshold", where=_WHERE)
        check_choice(self.start, ("lmm", "default"), name="start", where=_WHERE)
        check_int(self.n_agq, name="n_agq", where=_WHERE, minimum=1)
        check_int(self.max_iter, name="max_iter", where=_WHERE, minimum=1)
        check_unit(self.ci_level, name="ci_level", where=_WHERE)

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
        # Long: the optimiser's parameter transforms and objectives are closures over one
        # problem (thresholds on the log-gap scale, then the natural scale for the checks).
        na, p, nt = pr.n_alpha, pr.p, pr.n_theta
        eq = pr.equidistant
        nfev = 0

        def to_natural(z: np.ndarray) -> np.ndarray:
            psi = z.copy()
            if not eq:
                psi[:na] = z[0] + np.concatenate([[0.0], np.cumsum(np.exp(z[1:na]))])
            return psi

        def chain(z: np.ndarray, g: np.ndarray) -> np.ndarray:
            out = g.copy()
            if not eq:
                tail = np.cumsum(g[:na][::-1])[::-1]
                out[0] = tail[0]
                out[1:na] = tail[1:] * np.exp(z[1:na])
            return out

        def from_natural(psi: np.ndarray) -> np.ndarray:
            z = psi.copy()
            if not eq:
                z[1:na] = np.log(np.maximum(np.diff(psi[:na]), 1e-8))
            return z

        # 1. start: a previous fit of the same design (refit), or thresholds and fixed
        # effects without random effects, then covariance parameters given by the caller
        if psi0 is not None:
            z = from_natural(np.asarray(psi0, dtype=float))
        else:
            counts = np.bincount(pr.y, minlength=pr.J)
            cum = np.cumsum(counts)[:-1] / counts.sum()
            cut0 = pr.lk.latent_sd / (np.pi / np.sqrt(3.0)) * np.log(cum / (1.0 - cum))
            if pr.lk.name == "probit":
                cut0 = stats.norm.ppf(cum)
            alpha0 = (
                np.array([cut0[0], np.mean(np.diff(cut0)) if cut0.size > 1 else 1.0])
                if eq
                else cut0
            )
            start0 = np.concatenate([alpha0, np.zeros(p), np.zeros(nt)])
            free = slice(0, na + p)

            def f0(z):
                psi = to_natural(np.concatenate([z, np.zeros(nt)]))
                ll, g = pr.fixed_only(psi)
                return -ll, -chain(np.concatenate([z, np.zeros(nt)]), g)[free]

            res0 = optimize.minimize(
                f0,
                from_natural(start0)[free],
                jac=True,
                method="L-BFGS-B",
                options={"maxiter": 500, "ftol": 1e-13, "gtol": 1e-8},
            )
            z = np.concatenate([res0.x, np.asarray(theta0, dtype=float)])
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

        res = optimize.minimize(
            f,
            z,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": int(self.max_iter), "ftol": 1e-15, "gtol": 1e-7, "maxcor": 20},
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
        info = -hess
        with np.errstate(invalid="ignore"):
            eig = np.linalg.eigvalsh(info) if info.size else np.zeros(0)
        pos_def = bool(eig.size == 0 or eig.min() > 0)
        try:
            cov = np.linalg.inv(info)
        except np.linalg.LinAlgError:
            cov = np.full_like(info, np.nan)
        cond = float(eig.max() / eig.min()) if pos_def and eig.size else float("inf")
        free_grad = grad[keep]
        max_grad = float(np.max(np.abs(free_grad))) if free_grad.size else 0.0
        try:
            scaled = (
                float(np.max(np.abs(np.linalg.solve(hess, free_grad)))) if free_grad.size else 0.0
            )
        except np.linalg.LinAlgError:
            scaled = float("inf")
        self._problem = pr
        self._md = md
        self.design_ = design
        self.n_obs_ = int(design.n_obs)
        self.n_dropped_ = int(design.n_dropped)
        self.groups_ = {b.group: int(b.n_levels) for b in design.random}
        self.theta_ = theta
        self._Ts = Ts
        self.nfev_ = int(nfev)
        self.max_grad_ = max_grad
        self.cond_hessian_ = cond
        self.converged_ = bool(ok and pos_def and (max_grad < GRAD_TOL or scaled < STEP_TOL))
        self.convergence_message_ = message
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
        z = stats.norm.ppf(0.5 + self.ci_level / 2.0)
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
                "p_value": 2.0 * stats.norm.sf(np.abs(stat[na:])),
                "ci_low": beta - z * se[na:],
                "ci_high": beta + z * se[na:],
            },
            columns=FIXED_COLUMNS,
        )
        self.random_, self.random_corr_ = self._random_tables()
        self._ranef_cache: pd.DataFrame | None = None
        self.seconds_ = float(time.perf_counter() - t0)
        self.meta_ = {
            "package_version": _package_version(),
            "engine": "clmm",
            "params": self.get_params(),
            "n_used": self.n_obs_,
            "n_excluded": self.n_dropped_,
            "nfev": self.nfev_,
            "approximation": "laplace" if self.n_agq == 1 else f"agq{self.n_agq}",
        }
        if not self.converged_:
            reason = (
                "the information matrix is not positive definite"
                if not pos_def
                else f"largest absolute gradient {max_grad:.2g}; {message}"
            )
            warnings.warn(
                f"OrdinalMixedModel.fit did not converge for {self.formula!r}: {reason}. "
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
        from models.lmm import LinearMixedModel

        lmm = LinearMixedModel(self.formula, reml=False)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lmm._fit_design(design)
        except Exception:  # noqa: BLE001 - a start value only: fall back to the default
            return default
        theta = np.asarray(lmm.theta_, dtype=float) * pr.lk.latent_sd
        diag = np.array([r_ == c_ for _, r_, c_ in st.theta_index()])
        theta[diag] = np.maximum(theta[diag], START_FLOOR * pr.lk.latent_sd)
        return theta

    def _alpha_names(self) -> list[str]:
        if self.threshold == "equidistant":
            return ["threshold.1", "spacing"]
        cats = self.categories_
        return [f"{cats[j]}|{cats[j + 1]}" for j in range(len(cats) - 1)]

    def _random_tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return random_tables(self.design_.random, self._Ts)

    def _singular_description(self) -> str:
        return singular_description(self.design_.random, self._Ts, SINGULAR_TOL)

    # -----------------------------------------------------------------------------------------
    def _check_fitted(self, method: str) -> None:
        if not hasattr(self, "theta_"):
            raise NotFittedError(f"{_WHERE}.{method} needs a fitted model; call .fit(data) first")

    @property
    def ranef_(self) -> pd.DataFrame:
        """Conditional modes of the random effects and their conditional variances."""
        self._check_fitted("ranef_")
        if self._ranef_cache is None:
            self._ranef_cache = self._ranef()
        return self._ranef_cache

    def _ranef(self) -> pd.DataFrame:
        st = self._problem.st
        md = self._md
        blocks_F, blocks_R = md.factor.local_blocks()
        per_unit = [(md.uF.reshape(st.F.n_levels, st.pF), blocks_F)]
        for o, u, cv in zip(st.R_offsets, st.R, blocks_R, strict=True):
            per_unit.append((md.uR[o : o + u.n_levels * u.p].reshape(u.n_levels, u.p), cv))
        frames = []
        for unit, (uvals, cvs) in zip(st.units, per_unit, strict=True):
            start = 0
            for k, size in zip(unit.blocks, unit.sizes, strict=True):
                T = self._Ts[k]
                sl = slice(start, start + size)
                b = uvals[:, sl] @ T.T
                cv = np.einsum("ij,ljk,ik->li", T, cvs[:, sl, sl], T)
                block = self.design_.random[k]
                for i, term in enumerate(block.terms):
                    frames.append(
                        pd.DataFrame(
                            {
                                "group": block.group,
                                "term": term,
                                "level": block.levels.to_numpy(dtype=object),
                                "estimate": b[:, i],
                                "cond_var": cv[:, i],
                            }
                        )
                    )
                start += size
        order = {b.group: i for i, b in enumerate(self.design_.random)}
        frames.sort(key=lambda fr: order[fr["group"].iloc[0]])
        return pd.concat(frames, ignore_index=True)

    def _linear_predictor(
        self, data: pd.DataFrame | None, re_form: str | None, allow_new_levels: bool
    ) -> tuple[np.ndarray, pd.Index, pd.Index]:
        if re_form is not None and re_form not in _FIXED_ONLY and re_form != "marginal":
            raise InvalidParameterError(
                f"the `re_form` parameter of {_WHERE}.predict must be None (all random effects), "
                f"'marginal' (averaged over them) or one of {list(_FIXED_ONLY)} (none); "
                f"got {re_form!r}"
            )
        with_random = re_form is None
        if data is None:
            design = self.design_
            index = design.rows
        else:
            frame, _ = _response_codes(data, self.design_.spec.response)
            design = self.design_.transform(frame, random=with_random)
            index = data.index
        X, _ = _fixed_matrix(design)
        eta = X @ self.beta_.to_numpy()
        if with_random:
            ranef = self.ranef_
            for block in design.random:
                r = ranef[ranef["group"] == block.group]
                b = np.column_stack(
                    [r.loc[r["term"] == t, "estimate"].to_numpy() for t in block.terms]
                )
                unseen = block.codes < 0
                if unseen.any() and not allow_new_levels:
                    raise InvalidParameterError(
                        f"{_WHERE}.predict: levels not seen in the fit for {block.group!r}; pass "
                        "allow_new_levels=True to predict them with a random effect of 0"
                    )
                contrib = np.einsum("ij,ij->i", block.Z, b[np.where(unseen, 0, block.codes)])
                eta = eta + np.where(unseen, 0.0, contrib)
        return eta, design.rows, index

    def linear_predictor(
        self, data: pd.DataFrame | None = None, *, re_form: str | None = None
    ) -> pd.Series:
        """Linear predictor ``eta = X beta (+ Z b)`` (thresholds not included).

        Parameters are those of :meth:`predict`; new levels get a random effect of 0.
        """
        self._check_fitted("linear_predictor")
        eta, rows, index = self._linear_predictor(data, re_form, True)
        out = pd.Series(np.nan, index=index, name="eta")
        out.loc[rows] = eta
        return out

    def predict(
        self,
        data: pd.DataFrame | None = None,
        *,
        re_form: str | None = None,
        allow_new_levels: bool = True,
    ) -> pd.DataFrame:
        """Probabilities of each category.

        Parameters
        ----------
        data : pandas.DataFrame, optional
            New rows; default the rows used in the fit.
        re_form : {None, "~0", "NA", "marginal"}, default None
            ``None`` uses the conditional modes of the groups seen in the fit; ``"~0"`` sets
            every random effect to 0 (the typical group, not the population average);
            ``"marginal"`` averages the probabilities over the random-effects distribution
            (what a new member of the population is expected to answer; 40-node
            Gauss-Hermite quadrature over the normal sum ``z' b`` of each row).
        allow_new_levels : bool, default True
            A level not seen in the fit gets a random effect of 0; ``False`` raises.

        Returns
        -------
        pandas.DataFrame
            One column per category (in order), rows indexed like ``data`` (NaN where a
            predictor is missing); each row sums to 1.
        """
        self._check_fitted("predict")
        marginal = re_form == "marginal"
        eta, rows, index = self._linear_predictor(
            data, "~0" if marginal else re_form, allow_new_levels
        )
        lk = self._problem.lk
        cut = np.concatenate([[-np.inf], self.cutpoints_, [np.inf]])
        if marginal:
            frame = (
                self.design_
                if data is None
                else self.design_.transform(_response_codes(data, self.design_.spec.response)[0])
            )
            var = np.zeros(len(eta))
            for block, T in zip(frame.random, self._Ts, strict=True):
                var += np.einsum("ij,jk,ik->i", block.Z, T @ T.T, block.Z)
            nodes, weights = np.polynomial.hermite.hermgauss(40)
            shifts = np.sqrt(2.0 * var)[:, None] * nodes[None, :]
            cdf = lk.cdf(cut[None, None, :] - (eta[:, None] + shifts)[:, :, None])
            probs = np.einsum("k,ikj->ij", weights / np.sqrt(np.pi), np.diff(cdf, axis=2))
        else:
            cdf = lk.cdf(cut[None, :] - eta[:, None])
            probs = np.diff(cdf, axis=1)
        out = pd.DataFrame(np.nan, index=index, columns=list(self.categories_))
        out.loc[rows] = probs
        return out

    def predict_expected(
        self,
        data: pd.DataFrame | None = None,
        *,
        re_form: str | None = None,
        allow_new_levels: bool = True,
    ) -> pd.Series:
        """Predict the expected category value ``sum_j j P(Y = j)`` (numeric categories only).

        Parameters are those of :meth:`predict`.
        """
        probs = self.predict(data, re_form=re_form, allow_new_levels=allow_new_levels)
        try:
            values = np.asarray(self.categories_, dtype=float)
        except (TypeError, ValueError) as err:
            raise InvalidParameterError(
                f"{_WHERE}.predict_expected needs numeric categories; the response has "
                f"{self.categories_!r}. Use predict() for the probabilities."
            ) from err
        return pd.Series(probs.to_numpy() @ values, index=probs.index, name="expected")

    def odds_ratios(self) -> pd.DataFrame:
        """Return the fixed effects as cumulative odds ratios (logit link only).

        Returns
        -------
        pandas.DataFrame
            ``term, odds_ratio, ci_low, ci_high, p_value``: ``exp`` of the estimates and of
            the Wald interval bounds.
        """
        self._check_fitted("odds_ratios")
        if self.link != "logit":
            raise InvalidParameterError(
                f"{_WHERE}.odds_ratios: odds ratios need link='logit'; this model has "
                f"link={self.link!r}"
            )
        f = self.fixed_
        return pd.DataFrame(
            {
                "term": f["term"],
                "odds_ratio": np.exp(f["estimate"]),
                "ci_low": np.exp(f["ci_low"]),
                "ci_high": np.exp(f["ci_high"]),
                "p_value": f["p_value"],
            }
        )

    # -----------------------------------------------------------------------------------------
    def summary(self) -> OrdinalModelSummary:
        """Tables of the fit and its clmm-style text (see :class:`OrdinalModelSummary`)."""
        self._check_fitted("summary")
        fit = pd.DataFrame(
            [
                {
                    "n_obs": self.n_obs_,
                    "n_dropped": self.n_dropped_,
                    "link": self.link,
                    "threshold": self.threshold,
                    "n_agq": self.n_agq,
                    "loglik": self.loglik_,
                    "aic": self.aic_,
                    "bic": self.bic_,
                    "npar": self.npar_,
                    "max_grad": self.max_grad_,
                    "cond_hessian": self.cond_hessian_,
                    "converged": self.converged_,
                    "singular": self.singular_,
                    "nfev": self.nfev_,
                    "seconds": self.seconds_,
                }
            ]
        )
        return OrdinalModelSummary(
            thresholds=self.thresholds_.copy(),
            fixed=self.fixed_.copy(),
            random=self.random_.copy(),
            random_corr=self.random_corr_.copy(),
            fit=fit,
            text=self._summary_text(4),
        )

    def print_summary(self, decimals: int = 4) -> None:
        """Print the clmm-style summary rounded to ``decimals``."""
        self._check_fitted("print_summary")
        print(self._summary_text(decimals))

    def _summary_text(self, decimals: int) -> str:
        number = lambda v: f"{v:.{decimals}f}"  # noqa: E731
        how = (
            "the Laplace approximation"
            if self.n_agq == 1
            else f"adaptive Gauss-Hermite quadrature ({self.n_agq} nodes)"
        )
        lines = [
            f"Cumulative link mixed model ({self.link} link, {self.threshold} thresholds) "
            f"fitted with {how}: {self.formula}",
            f"n = {self.n_obs_} ({self.n_dropped_} dropped); groups: "
            + ", ".join(f"{g} {k}" for g, k in self.groups_.items()),
            f"logLik {self.loglik_:.{decimals}f}  AIC {self.aic_:.{decimals}f}  "
            f"BIC {self.bic_:.{decimals}f}  max|grad| {self.max_grad_:.2g}  "
            f"cond(H) {self.cond_hessian_:.2g}",
            f"converged: {self.converged_}  singular: {self.singular_}",
            "",
            "Random effects (latent scale):",
            self.random_.rename(columns={"variance": "Variance", "sd": "Std.Dev."}).to_string(
                index=False, float_format=number
            ),
        ]
        if len(self.random_corr_):
            lines.append(self.random_corr_.to_string(index=False, float_format=number))
        fixed = self.fixed_.drop(columns=["df"]).rename(
            columns={
                "estimate": "Estimate",
                "se": "Std. Error",
                "statistic": "z value",
                "p_value": "Pr(>|z|)",
                "ci_low": "CI low",
                "ci_high": "CI high",
            }
        )
        formats = {c: number for c in ("Estimate", "Std. Error", "z value", "CI low", "CI high")}
        formats["Pr(>|z|)"] = lambda v: f"{v:.3g}"
        level = f"{self.ci_level:.0%}"
        lines += ["", f"Fixed effects (Wald z, {level} intervals):"]
        lines.append(fixed.to_string(index=False, formatters=formats) if len(fixed) else "(none)")
        thr = self.thresholds_.rename(
            columns={
                "estimate": "Estimate",
                "se": "Std. Error",
                "statistic": "z value",
                "ci_low": "CI low",
                "ci_high": "CI high",
            }
        )
        lines += ["", "Thresholds:", thr.to_string(index=False, float_format=number)]
        return "\n".join(lines)

    def __str__(self) -> str:
        if not hasattr(self, "theta_"):
            return repr(self)
        return self._summary_text(4)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary (the ``longitudinal fit --engine clmm`` output).

        Returns
        -------
        dict
            Keys ``engine, family, formula, link, threshold, n_agq, n_obs, groups, converged,
            singular, fixed, random, thresholds, loglik, aic, bic, seconds``; ``fixed`` rows
            have the columns of ``fixed_`` (``df`` is ``None``: Wald z tests); ``random`` lists
            ``{group, term, sd}`` and ``{group, term1, term2, corr}`` rows; ``thresholds`` rows
            ``{term, estimate, se}``.
        """
        self._check_fitted("to_dict")
        fixed = [
            {k: json_number(v) if k != "term" else str(v) for k, v in row.items()}
            for row in self.fixed_.to_dict(orient="records")
        ]
        random: list[dict[str, Any]] = [
            {"group": r.group, "term": r.term, "sd": json_number(r.sd)}
            for r in self.random_.itertuples(index=False)
        ]
        random += [
            {"group": r.group, "term1": r.term1, "term2": r.term2, "corr": json_number(r.corr)}
            for r in self.random_corr_.itertuples(index=False)
        ]
        out = {
            "engine": "clmm",
            "family": "ordinal",
            "formula": self.formula,
            "link": self.link,
            "threshold": self.threshold,
            "n_agq": int(self.n_agq),
            "n_obs": self.n_obs_,
            "groups": dict(self.groups_),
            "converged": self.converged_,
            "singular": self.singular_,
            "fixed": fixed,
            "random": random,
            "thresholds": [
                {"term": r.term, "estimate": json_number(r.estimate), "se": json_number(r.se)}
                for r in self.thresholds_.itertuples(index=False)
            ],
            "loglik": json_number(self.loglik_),
            "aic": json_number(self.aic_),
            "bic": json_number(self.bic_),
            "seconds": json_number(self.seconds_),
        }
        return {k: out[k] for k in DICT_KEYS}


# ---------------------------------------------------------------------------------------------
# helpers


def _response_codes(data: pd.DataFrame, response: str) -> tuple[pd.DataFrame, list | None]:
    """Replace an ordered categorical response by its 1-based codes (labels kept aside)."""
    if response not in data.columns:  # new data without a response; build_design names it
        return data, None
    col = data[response]
    if isinstance(col.dtype, pd.CategoricalDtype):
        if not col.cat.ordered:
            raise FormulaError(
                f"{_WHERE}.fit: the response {response!r} is an unordered categorical; make it "
                "ordered (pandas.Categorical(..., ordered=True)) or give numbers"
            )
        codes = col.cat.codes.astype(float).where(col.notna()) + 1.0
        frame = data.copy()
        frame[response] = codes
        return frame, [_plain(c) for c in col.cat.categories]
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        raise FormulaError(
            f"{_WHERE}.fit: the response {response!r} must hold ordered categories as numbers "
            f"(recode text labels such as 'low', 'mid', 'high' to 1, 2, 3 in their order) or, "
            f"in Python, an ordered pandas categorical; got dtype {col.dtype}"
        )
    return data, None


def _fixed_matrix(design: Design) -> tuple[np.ndarray, list[str]]:
    X = design.X
    if "Intercept" in X.columns:
        X = X.drop(columns=["Intercept"])
    return X.to_numpy(dtype=float), [str(c) for c in X.columns]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


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


@functools.cache
def _package_version() -> str:
    from models.lmm import _package_version as version

    return version()
