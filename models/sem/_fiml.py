"""Full-information maximum likelihood for incomplete data (lavaan's ``missing = "ml"``).

The rows are grouped by their pattern of observed variables; pattern ``g`` with ``n_g`` rows,
observed set ``o``, mean ``ybar_g`` and covariance ``S_g`` (divisor ``n_g``) adds

    -n_g / 2 [k_g log 2 pi + log|Sigma_oo| + tr(S_g Sigma_oo^-1) + d' Sigma_oo^-1 d],
    d = ybar_g - mu_o,

to the log-likelihood. The fit function is ``F = (logL_h1 - logL) / N`` with ``logL_h1`` the
saturated model's maximum (EM, then Fisher scoring to the rounding level), so that
chi-square = 2 N F as for complete data. Its gradient is the complete-data formula with each
pattern's ``G`` and ``Sigma^-1 d`` placed into the observed rows and columns; Fisher scoring uses
the expected information summed over patterns; standard errors use the observed information
(lavaan's default with missing data).
"""

from __future__ import annotations

import numpy as np

from models.sem._ml import (
    LOG_2PI,
    MLProblem,
    Moments,
    casewise_scores,
    expected_information,
    independence_derivatives,
    saturated_derivatives,
)
from models.sem._spec import ModelSpec, derivative_arrays, fixed_matrices

FIML_DECREMENT_TOL = 1e-12
"""Newton-decrement stopping rule of the incomplete-data fits: their fit function carries the
log-likelihood per case (tens, not the complete-data discrepancy's tenths), so its rounding
noise is about 1e-14 and smaller decrements cannot be resolved; 1e-12 leaves the estimates
within about 1e-6 and chi-square within 1e-9 of the maximum."""


class Pattern:
    """The rows sharing one pattern of observed variables, as sufficient statistics."""

    def __init__(self, rows: np.ndarray, observed: np.ndarray) -> None:
        self.obs = np.flatnonzero(observed)
        self.n = rows.shape[0]
        values = rows[:, self.obs]
        self.values = values
        self.ybar = values.mean(axis=0)
        centred = values - self.ybar
        self.s = centred.T @ centred / self.n


def patterns(y: np.ndarray) -> list[Pattern]:
    """Group the rows of ``y`` (NaN = missing) by their observed variables."""
    observed = ~np.isnan(y)
    keys, inverse = np.unique(observed, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).ravel()
    return [Pattern(y[inverse == g], keys[g]) for g in range(len(keys))]


class FIMLProblem(MLProblem):
    """ML on incomplete data: the factor model of ``spec``, or a model without factors.

    With ``spec=None`` it is the saturated model (``baseline=False``) or the baseline model of
    independent items (``baseline=True``).
    """

    def __init__(self, spec: ModelSpec | None, y: np.ndarray, *, baseline: bool = False) -> None:
        self.spec = spec  # type: ignore[assignment]
        self.y = y
        self.n, self.k = y.shape
        self.patterns = patterns(y)
        self.offset = 0.0
        if spec is None:
            if baseline:
                self.sat_mu, self.sat_sigma = independence_derivatives(self.k)
                self.tril = (np.arange(self.k), np.arange(self.k))
            else:
                self.sat_mu, self.sat_sigma = saturated_derivatives(self.k)
                self.tril = np.tril_indices(self.k)
        else:
            self.deriv = derivative_arrays(spec)
            self.base = fixed_matrices(spec)
        # filled by the caller with the saturated model's moments (start values, SRMR)
        self.ybar = np.nanmean(y, axis=0)
        self.s = np.diag(np.nanvar(y, axis=0))
        self.logdet_s = 0.0

    # -- the saturated model -----------------------------------------------------------
    def implied(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.spec is not None:
            return super().implied(theta)
        sigma = np.zeros((self.k, self.k))
        rows, cols = self.tril
        sigma[rows, cols] = theta[self.k :]
        sigma[cols, rows] = theta[self.k :]
        return theta[: self.k].copy(), sigma

    def moments(self, theta: np.ndarray) -> Moments:
        if self.spec is not None:
            return super().moments(theta)
        mu, sigma = self.implied(theta)
        return Moments(mu, sigma, np.linalg.inv(sigma), self.sat_mu, self.sat_sigma)

    # -- likelihood ----------------------------------------------------------------------
    def loglik(self, theta: np.ndarray) -> float:
        mu, sigma = self.implied(theta)
        total = 0.0
        for pat in self.patterns:
            o = pat.obs
            sub = sigma[np.ix_(o, o)]
            try:
                chol = np.linalg.cholesky(sub)
            except np.linalg.LinAlgError:
                return -np.inf
            logdet = 2.0 * np.log(np.diag(chol)).sum()
            inv = np.linalg.inv(sub)
            dev = pat.ybar - mu[o]
            total += pat.n * (o.size * LOG_2PI + logdet + np.sum(pat.s * inv) + dev @ inv @ dev)
        return -0.5 * total

    def fmin(self, theta: np.ndarray) -> float:
        value = self.loglik(theta)
        return np.inf if not np.isfinite(value) else self.offset - value / self.n

    def gradient(self, theta: np.ndarray, mom: Moments | None = None) -> np.ndarray:
        mom = self.moments(theta) if mom is None else mom
        g_total = np.zeros((self.k, self.k))
        w_total = np.zeros(self.k)
        for pat in self.patterns:
            o = pat.obs
            inv = np.linalg.inv(mom.sigma[np.ix_(o, o)])
            dev = pat.ybar - mom.mu[o]
            w = inv @ dev
            share = pat.n / self.n
            g_total[np.ix_(o, o)] += share * (inv - inv @ (pat.s + np.outer(dev, dev)) @ inv)
            w_total[o] += share * w
        q = mom.d_sigma.shape[0]
        return 0.5 * (mom.d_sigma.reshape(q, -1) @ g_total.ravel()) - mom.d_mu @ w_total

    def casewise_scores(self, mom: Moments) -> np.ndarray:
        """Return each row's log-likelihood gradient (rows in pattern order)."""
        blocks = []
        for pat in self.patterns:
            o = pat.obs
            inv = np.linalg.inv(mom.sigma[np.ix_(o, o)])
            d_sigma = mom.d_sigma[:, o][:, :, o]
            blocks.append(casewise_scores(pat.values, mom.mu[o], inv, mom.d_mu[:, o], d_sigma))
        return np.vstack(blocks)

    def expected_information(self, mom: Moments) -> np.ndarray:
        q = mom.d_mu.shape[0]
        info = np.zeros((q, q))
        for pat in self.patterns:
            o = pat.obs
            inv = np.linalg.inv(mom.sigma[np.ix_(o, o)])
            d_sigma = mom.d_sigma[:, o][:, :, o]
            info += (pat.n / self.n) * expected_information(inv, mom.d_mu[:, o], d_sigma)
        return info


def saturated_fit(y: np.ndarray, *, max_em: int = 200) -> tuple[np.ndarray, np.ndarray, float]:
    """Return the saturated model's means, covariance matrix and maximum log-likelihood.

    EM (``max_em`` iterations at most) gives the start, Fisher scoring on the incomplete-data
    likelihood finishes.
    """
    n, k = y.shape
    observed = ~np.isnan(y)
    mu = np.nanmean(y, axis=0)
    sigma = np.diag(np.nanvar(y, axis=0))
    pats = patterns(y)
    rows_of = np.unique(observed, axis=0, return_inverse=True)[1]
    rows_of = np.asarray(rows_of).ravel()
    for _ in range(max_em):
        t1 = np.zeros(k)
        t2 = np.zeros((k, k))
        for g, pat in enumerate(pats):
            o = pat.obs
            m = np.setdiff1d(np.arange(k), o)
            block = y[rows_of == g]
            filled = np.empty((block.shape[0], k))
            filled[:, o] = block[:, o]
            extra = np.zeros((k, k))
            if m.size:
                coef = sigma[np.ix_(m, o)] @ np.linalg.inv(sigma[np.ix_(o, o)])
                filled[:, m] = mu[m] + (block[:, o] - mu[o]) @ coef.T
                extra[np.ix_(m, m)] = sigma[np.ix_(m, m)] - coef @ sigma[np.ix_(o, m)]
            t1 += filled.sum(axis=0)
            t2 += filled.T @ filled + block.shape[0] * extra
        new_mu = t1 / n
        new_sigma = t2 / n - np.outer(new_mu, new_mu)
        change = max(np.max(np.abs(new_mu - mu)), np.max(np.abs(new_sigma - sigma)))
        mu, sigma = new_mu, new_sigma
        if change < 1e-8:
            break
    problem = FIMLProblem(None, y)
    rows, cols = np.tril_indices(k)
    theta, _, _ = problem.fit(
        np.concatenate([mu, sigma[rows, cols]]), decrement_tol=FIML_DECREMENT_TOL
    )
    mu, sigma = problem.implied(theta)
    return mu, sigma, problem.loglik(theta)


def independence_loglik(y: np.ndarray) -> float:
    """Return the baseline model's maximum (each item's available answers, own mean and SD)."""
    total = 0.0
    for column in y.T:
        values = column[~np.isnan(column)]
        total += -0.5 * values.size * (LOG_2PI + np.log(values.var()) + 1.0)
    return float(total)


def h1_trace_fiml(y: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> float:
    """Return tr(A1^-1 B1) of the saturated model at its incomplete-data maximum.

    ``A1`` is its observed information and ``B1`` the mean outer product of its casewise
    scores, as lavaan's MLR (``yuan.bentler.mplus``, unstructured h1) uses with missing data.
    """
    problem = FIMLProblem(None, y)
    rows, cols = np.tril_indices(y.shape[1])
    theta = np.concatenate([mu, sigma[rows, cols]])
    a1 = problem.observed_information(theta)
    scores = problem.casewise_scores(problem.moments(theta))
    b1 = scores.T @ scores / y.shape[0]
    return float(np.sum(np.linalg.inv(a1) * b1.T))


def baseline_scaling_fiml(y: np.ndarray, trace_h1: float) -> float:
    """Return the MLR scaling factor of the baseline model fitted to incomplete data."""
    k = y.shape[1]
    problem = FIMLProblem(None, y, baseline=True)
    theta = np.concatenate([np.nanmean(y, axis=0), np.nanvar(y, axis=0)])
    info = problem.observed_information(theta)
    scores = problem.casewise_scores(problem.moments(theta))
    b0 = scores.T @ scores / y.shape[0]
    return (trace_h1 - float(np.sum(np.linalg.inv(info) * b0.T))) / (k * (k - 1) // 2)
