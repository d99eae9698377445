"""One model of the ladder fitted: estimates, standard errors, test statistics, fit indices.

Every number follows lavaan 0.6 (``fitMeasures``) for a single group with a mean structure:

* chi-square ``T = 2 N F``, df = k(k+3)/2 - free parameters, and the baseline model
  (independent items, means and variances free) for CFI and TLI;
* ``CFI = 1 - max(T - df, 0) / max(T - df, Tb - dfb, 0)``,
  ``TLI = (Tb/dfb - T/df) / (Tb/dfb - 1)``;
* ``RMSEA = sqrt(max(T - df, 0) / (N df))`` with the 90 % interval from the noncentral
  chi-square (the noncentrality at which T is the 95th and 5th percentile);
* SRMR as lavaan's ``srmr`` (Bentler's form): the root mean square of the covariance residuals
  scaled by the observed standard deviations (lower triangle with the diagonal) and of the mean
  residuals scaled the same way;
* MLR (``estimator = "MLR"``, lavaan's ``test = "yuan.bentler.mplus"``): the scaling factor
  ``c = [tr(A1^-1 B1) - tr(E^-1 B0)] / df`` with ``A1``, ``B1`` the saturated model's expected
  and first-order information at the sample moments, ``B0`` the model's first-order
  information and ``E`` its observed information; the scaled statistic is ``T / c``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

from models.sem._ml import (
    MLProblem,
    casewise_scores,
    expected_information,
    h1_trace,
    independence_derivatives,
)
from models.sem._spec import ModelSpec, build_spec


@dataclass
class LevelFit:
    """Everything known about one fitted model of the ladder."""

    spec: ModelSpec
    estimator: str
    n: int
    theta: np.ndarray
    cov: np.ndarray  # covariance matrix of the estimates
    converged: bool
    iterations: int
    chisq: float
    df: int
    loglik: float
    npar: int
    baseline_chisq: float
    baseline_df: int
    srmr: float
    scaling: float = float("nan")  # MLR scaling factor (NaN under ML)
    baseline_scaling: float = float("nan")
    information: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    problem: MLProblem | None = None

    # -- test statistics -------------------------------------------------------------
    @property
    def p_value(self) -> float:
        return float(special.chdtrc(self.df, self.chisq)) if self.df > 0 else float("nan")

    @property
    def chisq_scaled(self) -> float:
        return self.chisq / self.scaling

    @property
    def p_value_scaled(self) -> float:
        if self.df <= 0:
            return float("nan")
        return float(special.chdtrc(self.df, self.chisq_scaled))

    @property
    def aic(self) -> float:
        return -2.0 * self.loglik + 2.0 * self.npar

    @property
    def bic(self) -> float:
        return -2.0 * self.loglik + np.log(self.n) * self.npar

    def indices(self, *, scaled: bool = False) -> dict[str, float]:
        """Return CFI, TLI, RMSEA and its 90 % interval (``scaled``: lavaan's ``*.scaled``).

        The scaled interval is lavaan's: the noncentral chi-square interval of the unscaled
        statistic with ``c * df`` degrees of freedom (``c`` the scaling factor).
        """
        t, df = (self.chisq_scaled, self.df) if scaled else (self.chisq, self.df)
        # lavaan's scaled interval: the unscaled statistic against c * df degrees of freedom
        low, high = rmsea_ci(self.chisq, self.scaling * df if scaled else df, self.n)
        tb = self.baseline_chisq / self.baseline_scaling if scaled else self.baseline_chisq
        dfb = self.baseline_df
        return {
            "cfi": cfi(t, df, tb, dfb),
            "tli": tli(t, df, tb, dfb),
            "rmsea": rmsea(t, df, self.n),
            "rmsea_ci_low": low,
            "rmsea_ci_high": high,
        }


def cfi(t: float, df: float, tb: float, dfb: float) -> float:
    """Return the comparative fit index as lavaan computes it."""
    t1 = max(t - df, 0.0)
    t2 = max(t - df, tb - dfb, 0.0)
    return 1.0 if t2 == 0 else 1.0 - t1 / t2


def tli(t: float, df: float, tb: float, dfb: float) -> float:
    """Return the Tucker-Lewis index (NaN with zero df)."""
    if df <= 0:
        return float("nan")
    return (tb / dfb - t / df) / (tb / dfb - 1.0)


def rmsea(t: float, df: float, n: int) -> float:
    """Return the RMSEA with divisor N (lavaan's normal likelihood)."""
    if df <= 0:
        return float("nan")
    return float(np.sqrt(max(t - df, 0.0) / (n * df)))


def rmsea_ci(t: float, df: float, n: int, level: float = 0.90) -> tuple[float, float]:
    """Return the RMSEA interval from the noncentral chi-square distribution.

    The noncentralities at which ``t`` is the upper and the lower quantile of the noncentral
    chi-square on ``df`` degrees of freedom (the 95th and the 5th at ``level=0.90``), as
    ``sqrt(lambda / (n df))``; NaN without degrees of freedom or with a non-finite ``t``.
    """
    if not df > 0 or not np.isfinite(t):
        return float("nan"), float("nan")
    upper_q, lower_q = 1.0 - (1.0 - level) / 2.0, (1.0 - level) / 2.0
    return (
        float(np.sqrt(_noncentrality(t, df, upper_q) / (n * df))),
        float(np.sqrt(_noncentrality(t, df, lower_q) / (n * df))),
    )


def _noncentrality(t: float, df: float, q: float, tol: float = 1e-12) -> float:
    r"""Return the noncentrality :math:`\lambda` with :math:`F_{df}(t; \lambda) = q` (0 if none).

    The distribution function falls with :math:`\lambda`, with derivative
    :math:`\partial F_{df}(t; \lambda) / \partial \lambda = (F_{df+2}(t; \lambda) -
    F_{df}(t; \lambda)) / 2` (the Poisson mixture of central chi-squares, differentiated term
    by term). Newton steps on it are kept inside a bracket that shrinks at every evaluation,
    and a step that leaves it is replaced by bisection; the root is reached to ``tol``
    relative (and absolute below 1).
    """
    if special.chdtr(df, t) < q:
        return 0.0
    low, high = 0.0, max(t, 1.0)
    while special.chndtr(t, df, high) > q:
        low, high = high, 2.0 * high
    lam = 0.5 * (low + high)
    # hand-written safeguarded Newton: SciPy's root finders would load scipy.optimize whole
    for _ in range(200):
        value = special.chndtr(t, df, lam)
        if value > q:
            low = lam
        else:
            high = lam
        slope = 0.5 * (special.chndtr(t, df + 2.0, lam) - value)
        proposal = lam - (value - q) / slope if slope < 0 else np.nan
        if not low < proposal < high:
            proposal = 0.5 * (low + high)
        if abs(proposal - lam) <= tol * max(1.0, lam) or high - low <= tol * max(1.0, lam):
            return float(proposal)
        lam = proposal
    return float(lam)


def srmr(s: np.ndarray, ybar: np.ndarray, sigma: np.ndarray, mu: np.ndarray) -> float:
    """Return lavaan's ``srmr`` with a mean structure (Bentler's form)."""
    scale = 1.0 / np.sqrt(np.diag(s))
    resid = (s - sigma) * np.outer(scale, scale)
    rows, cols = np.tril_indices(s.shape[0])
    mean_resid = (ybar - mu) * scale
    total = np.sum(resid[rows, cols] ** 2) + np.sum(mean_resid**2)
    return float(np.sqrt(total / (rows.size + s.shape[0])))


def start_values(problem: MLProblem) -> np.ndarray:
    """Return start values: first principal component of each wave, intercepts at the means."""
    spec = problem.spec
    p, n_waves = spec.n_items, spec.n_waves
    s, ybar = problem.s, problem.ybar
    loadings = np.zeros((n_waves, p))
    vectors = []
    for t in range(n_waves):
        block = s[t * p : (t + 1) * p, t * p : (t + 1) * p]
        values, vecs = np.linalg.eigh(block)
        v = vecs[:, -1] * (1.0 if vecs[:, -1].sum() >= 0 else -1.0)
        loadings[t] = v * np.sqrt(max(values[-1], 1e-6))
        vectors.append((v, values[-1]))
    theta = np.zeros(spec.n_params)
    seen: set[int] = set()
    for entry, a in spec.entries.items():
        if a in seen:
            continue
        seen.add(a)
        kind = entry[0]
        if kind == "lambda":
            theta[a] = loadings[entry[2], entry[1]]
        elif kind == "nu":
            theta[a] = ybar[entry[2] * p + entry[1]]
        elif kind == "theta":
            j = entry[2] * p + entry[1]
            theta[a] = max(s[j, j] - loadings[entry[2], entry[1]] ** 2, 0.1 * s[j, j])
        elif kind == "psi":
            theta[a] = 1.0
        elif kind == "psi_cov":
            (vt, et), (vs, es) = vectors[entry[1]], vectors[entry[2]]
            t, u = entry[1], entry[2]
            cross = s[t * p : (t + 1) * p, u * p : (u + 1) * p]
            theta[a] = float(vt @ cross @ vs / np.sqrt(et * es))
        # theta_cov and alpha start at 0
    return theta


def _baseline(problem: MLProblem, estimator: str, h1: float) -> tuple[float, int, float]:
    """Return the baseline model's chi-square, df and (MLR) scaling factor."""
    s, k, n = problem.s, problem.k, problem.n
    chisq = n * float(np.sum(np.log(np.diag(s))) - problem.logdet_s)
    df = k * (k - 1) // 2
    scaling = float("nan")
    if estimator == "MLR":
        inv = np.diag(1.0 / np.diag(s))
        d_mu, d_sigma = independence_derivatives(k)
        info = expected_information(inv, d_mu, d_sigma)
        scores = casewise_scores(problem.y, problem.ybar, inv, d_mu, d_sigma)
        b0 = scores.T @ scores / n
        scaling = (h1 - float(np.sum(np.linalg.inv(info) * b0.T))) / df
    return chisq, df, scaling


def fit_level(
    y: np.ndarray,
    n_items: int,
    level: str,
    *,
    estimator: str = "ML",
    freed: tuple = (),
    start: np.ndarray | None = None,
    h1: float | None = None,
    saturated: tuple[np.ndarray, np.ndarray, float] | None = None,
) -> LevelFit:
    """Fit one level of the ladder to the n x (items x waves) array ``y``.

    With missing values (NaN) the fit is full-information ML (ML only): ``saturated`` is the
    saturated model's means, covariance matrix and log-likelihood
    (:func:`models.sem._fiml.saturated_fit`, computed here when not given). ``h1`` (MLR) is
    the saturated model's ``tr(A1^-1 B1)``, the same for every level of a ladder:
    :func:`models.sem._ml.h1_trace` of complete data, :func:`models.sem._fiml.h1_trace_fiml`
    of incomplete data (computed here when not given).
    """
    n, k = y.shape
    spec = build_spec(n_items, k // n_items, level, tuple(freed))
    if np.isnan(y).any():
        return _fit_fiml(y, spec, estimator, start, saturated, h1)
    problem = MLProblem(spec, y)
    theta0 = start_values(problem) if start is None else start
    theta, converged, iterations = problem.fit(theta0)
    mom = problem.moments(theta)
    expected = problem.expected_information(mom)
    if estimator == "MLR":
        info = problem.observed_information(theta)
        bread = np.linalg.inv(info)
        scores = problem.casewise_scores(mom)
        meat = scores.T @ scores / n
        cov = bread @ meat @ bread / n
    else:
        info = expected
        cov = np.linalg.inv(info) / n
    fmin = problem.fmin(theta)
    q = spec.n_params
    df = k * (k + 3) // 2 - q
    trace_h1 = (h1_trace(y) if h1 is None else h1) if estimator == "MLR" else float("nan")
    base_chisq, base_df, base_scaling = _baseline(problem, estimator, trace_h1)
    scaling = float("nan")
    if estimator == "MLR" and df > 0:
        trace_h0 = float(np.sum(meat * np.linalg.inv(info).T))
        scaling = (trace_h1 - trace_h0) / df
    return LevelFit(
        spec=spec,
        estimator=estimator,
        n=n,
        theta=theta,
        cov=cov,
        converged=converged,
        iterations=iterations,
        chisq=2.0 * n * fmin,
        df=df,
        loglik=problem.loglik(theta),
        npar=q,
        baseline_chisq=base_chisq,
        baseline_df=base_df,
        srmr=srmr(problem.s, problem.ybar, mom.sigma, mom.mu),
        scaling=scaling,
        baseline_scaling=base_scaling,
        information=info,
        problem=problem,
    )


def _fit_fiml(
    y: np.ndarray,
    spec: ModelSpec,
    estimator: str,
    start: np.ndarray | None,
    saturated: tuple[np.ndarray, np.ndarray, float] | None,
    h1: float | None = None,
) -> LevelFit:
    """Full-information ML: chi-square against the saturated model, observed-information SEs."""
    from models.sem._fiml import (
        FIML_DECREMENT_TOL,
        FIMLProblem,
        baseline_scaling_fiml,
        h1_trace_fiml,
        independence_loglik,
        saturated_fit,
    )

    n, k = y.shape
    mu1, sigma1, loglik1 = saturated_fit(y) if saturated is None else saturated
    problem = FIMLProblem(spec, y)
    problem.ybar, problem.s = mu1, sigma1
    problem.offset = loglik1 / n
    theta0 = start_values(problem) if start is None else start
    theta, converged, iterations = problem.fit(theta0, decrement_tol=FIML_DECREMENT_TOL)
    info = problem.observed_information(theta)
    bread = np.linalg.inv(info)
    loglik = problem.loglik(theta)
    mom = problem.moments(theta)
    q = spec.n_params
    df = k * (k + 3) // 2 - q
    scaling = baseline_scaling = float("nan")
    if estimator == "MLR":
        scores = problem.casewise_scores(mom)
        meat = scores.T @ scores / n
        cov = bread @ meat @ bread / n
        trace_h1 = h1_trace_fiml(y, mu1, sigma1) if h1 is None else h1
        if df > 0:
            scaling = (trace_h1 - float(np.sum(meat * bread.T))) / df
        baseline_scaling = baseline_scaling_fiml(y, trace_h1)
    else:
        cov = bread / n
    return LevelFit(
        spec=spec,
        estimator=estimator,
        n=n,
        theta=theta,
        cov=cov,
        converged=converged,
        iterations=iterations,
        chisq=2.0 * (loglik1 - loglik),
        df=df,
        loglik=loglik,
        npar=q,
        baseline_chisq=2.0 * (loglik1 - independence_loglik(y)),
        baseline_df=k * (k - 1) // 2,
        srmr=srmr(sigma1, mu1, mom.sigma, mom.mu),
        scaling=scaling,
        baseline_scaling=baseline_scaling,
        information=info,
        problem=problem,
    )
