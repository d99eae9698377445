"""The WLSMV sample statistics as the fit reads them, and the test statistics and fit indices.

Everything follows lavaan 0.6 for ``estimator = "WLSMV"`` (``test = "scaled.shifted"``), with
``s`` the sample statistics, ``W = diag(wls.v)``, ``Gamma`` their asymptotic covariance matrix
and ``J`` the Jacobian of the implied statistics at the estimates:

* with ``U = W - W J (J'WJ)^-1 J'W``, ``a = sqrt(df / tr((U Gamma)^2))`` and shift
  ``b = df - a tr(U Gamma)`` (Asparouhov and Muthen's scaled and shifted statistic) the scaled
  statistic is ``a T + b``; lavaan reports the scaling factor ``1 / a``;
* the baseline model frees the thresholds and fixes every correlation at zero, so its ``T`` is
  ``(N - 1) sum w r^2`` over the correlations and its ``U`` is ``W`` on the correlations only;
* the RMSEA interval is the noncentral chi-square interval with ``N - 1``; SRMR is the root
  mean square of the correlation residuals over the lower triangle with the diagonal;
* the robust CFI, TLI and RMSEA are lavaan's for ordered data (Savalei's catML approach): the
  ML discrepancy between the polychoric and the model-implied correlation matrices, its
  baseline ``-log|R|``, and the two corrections ``c = tr(...)/df`` built from ``Gamma``; they
  are defined where the correlations identify the model (the configural level) and NaN
  elsewhere, as lavaan 0.6.14 gives them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models._errors import InvalidParameterError
from models.sem._fit import rmsea_ci
from models.sem._wlsmv_spec import Implied, OrdinalSpec

FUNC = "fit_wlsmv"


@dataclass(frozen=True)
class SampleData:
    """The sample statistics as arrays.

    ``s`` (wls.obs), ``gamma``, ``w`` (the diagonal of wls.v), the polychoric matrix and every
    variable's thresholds.
    """

    names: list
    n: int
    n_thresholds: tuple
    s: np.ndarray
    gamma: np.ndarray
    w: np.ndarray
    polychoric: np.ndarray
    thresholds: list


def read_stats(stats: Any, n_items: int, n_waves: int) -> SampleData:
    """Check the sample statistics against the model's shape and return them as arrays."""
    for name in ("names", "n", "thresholds", "polychoric", "wls_obs", "gamma", "wls_v"):
        if not hasattr(stats, name):
            raise InvalidParameterError(
                f"the `stats` argument of {FUNC} must carry the ordinal sample statistics "
                f"(names, n, thresholds, polychoric, wls_obs, gamma, wls_v); `{name}` is missing"
            )
    names = list(stats.names)
    k = n_items * n_waves
    if len(names) != k:
        raise InvalidParameterError(
            f"the `stats` argument of {FUNC} holds {len(names)} variables; n_items={n_items} "
            f"at n_waves={n_waves} needs {k}, ordered wave by wave"
        )
    if len(stats.thresholds) != k or np.shape(stats.polychoric) != (k, k):
        raise InvalidParameterError(
            f"the `stats` argument of {FUNC} must hold thresholds for each of its {k} variables "
            f"and a {k} x {k} polychoric matrix; got {len(stats.thresholds)} and "
            f"{np.shape(stats.polychoric)}"
        )
    counts = [int(np.size(th)) for th in stats.thresholds]
    per_item = tuple(counts[:n_items])
    for t in range(1, n_waves):
        wave = tuple(counts[t * n_items : (t + 1) * n_items])
        if wave != per_item:
            bad = [names[t * n_items + i] for i in range(n_items) if wave[i] != per_item[i]]
            raise InvalidParameterError(
                f"{FUNC} needs every item to have the same categories at every wave; "
                f"{', '.join(bad)} differ from wave 1 ({per_item} thresholds per item, "
                f"got {wave}); merge the empty categories first"
            )
    if min(per_item) < 1:
        raise InvalidParameterError(f"{FUNC}: every item needs at least two categories")
    s = np.asarray(stats.wls_obs, dtype=float).ravel()
    n_stats = sum(counts) + k * (k - 1) // 2
    gamma = np.asarray(stats.gamma, dtype=float)
    w = np.asarray(stats.wls_v, dtype=float)
    w = np.diag(w).copy() if w.ndim == 2 else w.ravel()
    if s.size != n_stats or gamma.shape != (n_stats, n_stats) or w.size != n_stats:
        raise InvalidParameterError(
            f"the `stats` argument of {FUNC}: wls_obs, gamma and wls_v must hold the "
            f"{n_stats} thresholds and correlations; got {s.size}, {gamma.shape}, {w.size}"
        )
    return SampleData(
        names=names,
        n=int(stats.n),
        n_thresholds=per_item,
        s=s,
        gamma=gamma,
        w=w,
        polychoric=np.asarray(stats.polychoric, dtype=float),
        thresholds=[np.asarray(th, dtype=float).ravel() for th in stats.thresholds],
    )


# -- test statistics -----------------------------------------------------------------------
def scaled_shifted(u_gamma: np.ndarray, df: float) -> tuple[float, float]:
    """Return lavaan's scaling factor ``1/a`` and shift ``b`` from ``U Gamma``."""
    trace = float(np.trace(u_gamma))
    trace2 = float(np.sum(u_gamma * u_gamma.T))
    a = np.sqrt(df / trace2)
    return float(1.0 / a), float(df - a * trace)


def projector(j: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Return ``U = W - W J (J'WJ)^-1 J'W`` for the diagonal weight ``w``."""
    wj = w[:, None] * j
    return np.diag(w) - wj @ np.linalg.solve(j.T @ wj, wj.T)


def baseline(data: SampleData) -> tuple[float, int, float, float]:
    """Return the baseline model's T, df, scaled T and scaling factor."""
    n_thr = sum(th.size for th in data.thresholds)
    w_corr = data.w[n_thr:]
    r = data.s[n_thr:]
    chisq = (data.n - 1) * float(r @ (w_corr * r))
    df = r.size
    u_gamma = w_corr[:, None] * data.gamma[n_thr:, n_thr:]
    factor, shift = scaled_shifted(u_gamma, df)
    return chisq, df, chisq / factor + shift, factor


def robust_indices(
    data: SampleData, spec: OrdinalSpec, implied: Implied, df: int
) -> tuple[float, float, float, float, float]:
    """Return lavaan's robust CFI, TLI, RMSEA and RMSEA interval for ordered data (catML).

    The ML discrepancy between the polychoric matrix ``R`` and the implied correlations ``P``
    (``N F_ML``, df: correlations less the parameters other than thresholds, intercepts and
    latent means), corrected by ``c = tr(M' V M Gamma_r) / df`` with ``V`` the normal-theory
    weight of the correlations at ``P`` and ``M = I - J_r (J'WJ)^-1 J_r' W_r``; its baseline
    ``-N log|R|`` is corrected by ``tr(Gamma_r) / (number of correlations)``.

    NaN where the correlations alone do not identify the model (thresholds held equal, or
    latent-response intercepts or variances free), as lavaan 0.6.14 reports them.
    """
    if any(entry[0] in ("nu", "theta", "delta") for entry in spec.entries) or any(
        later[0] == "tau" for later, _ in spec.constraints
    ):
        return (np.nan,) * 5
    k = len(data.names)
    n_thr = data.s.size - k * (k - 1) // 2
    rows, cols = np.triu_indices(k, 1)
    p_mat = np.eye(k)
    p_mat[rows, cols] = p_mat[cols, rows] = implied.sigma[n_thr:]
    sign_p, logdet_p = np.linalg.slogdet(p_mat)
    sign_r, logdet_r = np.linalg.slogdet(data.polychoric)
    nan5 = (np.nan,) * 5
    if sign_p <= 0 or sign_r <= 0 or np.min(np.linalg.eigvalsh(data.polychoric)) < 1.5e-8:
        return nan5
    p_inv = np.linalg.inv(p_mat)
    f_ml = logdet_p + float(np.sum(data.polychoric * p_inv)) - logdet_r - k
    n = data.n
    x3 = n * f_ml
    x3_null = -n * logdet_r
    kinds = {a: entry[0] for entry, a in spec.entries.items()}
    df3 = rows.size - sum(1 for kind in kinds.values() if kind not in ("tau", "nu", "alpha"))
    j, w = implied.jacobian, data.w
    j_r, w_r, gamma_r = j[n_thr:], w[n_thr:], data.gamma[n_thr:, n_thr:]
    e_inv = np.linalg.inv(j.T @ (w[:, None] * j))
    m = np.eye(rows.size) - j_r @ e_inv @ (j_r.T * w_r)
    # normal-theory weight of the off-diagonal correlations: 1/2 tr(P^-1 E_ab P^-1 E_cd)
    v = p_inv[np.ix_(rows, rows)] * p_inv[np.ix_(cols, cols)]
    v += p_inv[np.ix_(rows, cols)] * p_inv[np.ix_(cols, rows)]
    c3 = float(np.sum((m.T @ v @ m) * gamma_r.T)) / df3
    c0 = float(np.trace(gamma_r)) / rows.size
    df0 = rows.size
    num = x3 - c3 * df
    den = max(num, x3_null - c0 * df0, 0.0)
    cfi_r = 1.0 - max(num, 0.0) / den if den > 0 else 1.0
    tli_r = 1.0 - num * df0 / ((x3_null - c0 * df0) * df) if df > 0 else np.nan
    n1 = n - 1
    rmsea_r = float(np.sqrt(max(x3 / n1 / df3 - c3 / n1, 0.0))) if df3 > 0 else np.nan
    low, high = rmsea_ci(x3 / c3, df3, n1) if df3 > 0 else (np.nan, np.nan)
    return cfi_r, tli_r, rmsea_r, low * np.sqrt(c3), high * np.sqrt(c3)


def srmr(data: SampleData, implied: Implied) -> float:
    """Return lavaan's ``srmr`` for ordered data: correlation residuals, lower triangle."""
    n_thr = sum(th.size for th in data.thresholds)
    resid = data.s[n_thr:] - implied.sigma[n_thr:]
    k = len(data.names)
    return float(np.sqrt(np.sum(resid**2) / (k * (k + 1) / 2)))
