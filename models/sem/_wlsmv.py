"""Diagonally weighted least squares (lavaan's WLSMV) for the ordinal invariance ladder.

The sample statistics ``s`` are lavaan's ``wls.obs`` (every variable's thresholds, then the
polychoric correlations), ``Gamma`` their asymptotic covariance matrix (of ``sqrt(N) s``) and
``W = diag(wls.v)`` the diagonal weight. With ``sigma(theta)`` the model-implied statistics
(:mod:`models.sem._wlsmv_spec`) and ``J`` their Jacobian, everything follows lavaan 0.6
(``estimator = "WLSMV"``: ``se = "robust.sem"``, ``test = "scaled.shifted"``):

* the estimates minimise ``F = (s - sigma)' W (s - sigma)`` (Gauss-Newton steps with a
  backtracking line search); ``T = (N - 1) F`` at the minimum, df = statistics - parameters;
* the robust covariance of the estimates is ``(J'WJ)^-1 J'W Gamma W J (J'WJ)^-1 / (N - 1)``;
* with ``U = W - W J (J'WJ)^-1 J'W``, ``a = sqrt(df / tr((U Gamma)^2))`` and shift
  ``b = df - a tr(U Gamma)`` (Asparouhov and Muthen's scaled and shifted statistic) the scaled
  statistic is ``a T + b``; lavaan reports the scaling factor ``1 / a``;
* the baseline model frees the thresholds and fixes every correlation at zero, so its ``T`` is
  ``(N - 1) sum w r^2`` over the correlations and its ``U`` is ``W`` on the correlations only;
* CFI, TLI and RMSEA (with its 90 % interval) are those of :mod:`models.sem._fit`, computed
  from the standard or the scaled statistics and the model's df; SRMR is the root mean square
  of the correlation residuals over the lower triangle with the diagonal;
* the robust CFI, TLI and RMSEA are lavaan's for ordered data (Savalei's catML approach): the
  ML discrepancy between the polychoric and the model-implied correlation matrices, its
  baseline ``-log|R|``, and the two corrections ``c = tr(...)/df`` built from ``Gamma``; they
  are defined where the correlations identify the model (the configural level) and NaN
  elsewhere, as lavaan 0.6.14 gives them.

lavaan divides by ``N - 1`` here: ``T = (N - 1) F``, the covariance of the estimates carries
``1 / (N - 1)`` and the RMSEA uses ``N - 1``; only the catML statistic uses ``N``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, special
from scipy import stats as sps

from models._errors import InvalidParameterError
from models.sem._fit import cfi, rmsea, tli
from models.sem._wlsmv_spec import LEVELS, Implied, OrdinalModel, OrdinalSpec, build_ordinal_spec

FUNC = "fit_wlsmv"


@dataclass(frozen=True)
class WLSMVFit:
    """One model of the ordinal ladder fitted by DWLS, with lavaan's WLSMV statistics.

    Attributes
    ----------
    level : str
    freed : tuple
    parameterization : str
    n : int
    npar : int
        Free parameters less equality constraints (lavaan's ``npar``).
    df : int
    chisq, p_value : float
        The standard statistic ``T = (N - 1) F`` and its p-value.
    chisq_scaled, df_scaled, p_value_scaled, scaling_factor, shift : float
        The scaled and shifted statistic, its df (the model's), p-value, lavaan's
        ``chisq.scaling.factor`` and the shift parameter.
    baseline_chisq, baseline_df, baseline_chisq_scaled, baseline_scaling_factor : float
    cfi, tli, rmsea, rmsea_ci_low, rmsea_ci_high : float
    cfi_scaled, tli_scaled, rmsea_scaled, rmsea_scaled_ci_low, rmsea_scaled_ci_high : float
    cfi_robust, tli_robust, rmsea_robust : float
    srmr : float
    converged : bool
    iterations : int
    estimates : numpy.ndarray
        The free parameters (one per set of equal entries).
    cov : numpy.ndarray
        Their robust covariance matrix.
    parameters : pandas.DataFrame
        ``lhs, op, rhs, est, se`` for every free and fixed entry, named as lavaan's
        ``parameterEstimates``.
    """

    level: str
    freed: tuple
    parameterization: str
    n: int
    npar: int
    df: int
    chisq: float
    p_value: float
    chisq_scaled: float
    df_scaled: float
    p_value_scaled: float
    scaling_factor: float
    shift: float
    baseline_chisq: float
    baseline_df: int
    baseline_chisq_scaled: float
    baseline_scaling_factor: float
    cfi: float
    tli: float
    rmsea: float
    rmsea_ci_low: float
    rmsea_ci_high: float
    cfi_scaled: float
    tli_scaled: float
    rmsea_scaled: float
    rmsea_scaled_ci_low: float
    rmsea_scaled_ci_high: float
    cfi_robust: float
    tli_robust: float
    rmsea_robust: float
    srmr: float
    converged: bool
    iterations: int
    estimates: np.ndarray
    cov: np.ndarray
    parameters: pd.DataFrame
    spec: OrdinalSpec = field(repr=False)
    jacobian: np.ndarray = field(repr=False)
    residual: np.ndarray = field(repr=False)
    weight: np.ndarray = field(repr=False)
    gamma: np.ndarray = field(repr=False)


@functools.cache
def _controller() -> Any:
    """Find the process's thread pools once (the lookup reads every loaded library)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread(func: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``func`` with one BLAS thread.

    Its products are small (about 100 x 100); waking BLAS worker threads for each costs more
    than the arithmetic on a busy machine.
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _controller().limit(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper


# -- input ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Data:
    names: list
    n: int
    n_thresholds: tuple
    s: np.ndarray
    gamma: np.ndarray
    w: np.ndarray
    polychoric: np.ndarray
    thresholds: list


def _read_stats(stats: Any, n_items: int, n_waves: int) -> _Data:
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
    return _Data(
        names=names,
        n=int(stats.n),
        n_thresholds=per_item,
        s=s,
        gamma=gamma,
        w=w,
        polychoric=np.asarray(stats.polychoric, dtype=float),
        thresholds=[np.asarray(th, dtype=float).ravel() for th in stats.thresholds],
    )


# -- estimation ----------------------------------------------------------------------------
def start_values(spec: OrdinalSpec, data: _Data) -> np.ndarray:
    """Return start values from each wave's first principal component of the polychorics."""
    p, n_waves = spec.n_items, spec.n_waves
    r = data.polychoric
    std = np.zeros((n_waves, p))
    vectors = []
    for t in range(n_waves):
        block = r[t * p : (t + 1) * p, t * p : (t + 1) * p]
        values, vecs = np.linalg.eigh(block)
        v = vecs[:, -1] * (1.0 if vecs[:, -1].sum() >= 0 else -1.0)
        std[t] = np.clip(v * np.sqrt(max(values[-1], 1e-6)), -0.9, 0.9)
        vectors.append((v, values[-1]))
    # theta-parameterisation loadings with unit residual variances
    lam = std / np.sqrt(1.0 - std**2)
    theta = np.zeros(spec.n_params)
    seen: set[int] = set()
    for entry, a in spec.entries.items():
        if a in seen:
            continue
        seen.add(a)
        kind = entry[0]
        if kind == "tau":
            _, i, t, c = entry
            theta[a] = data.thresholds[t * p + i][c] * np.sqrt(1.0 + lam[t, i] ** 2)
        elif kind == "lambda":
            theta[a] = lam[entry[2], entry[1]]
        elif kind in ("theta", "psi"):
            theta[a] = 1.0
        elif kind == "psi_cov":
            (vt, et), (vs, es) = vectors[entry[1]], vectors[entry[2]]
            t, u = entry[1], entry[2]
            cross = r[t * p : (t + 1) * p, u * p : (u + 1) * p]
            theta[a] = float(np.clip(vt @ cross @ vs / np.sqrt(et * es), -0.9, 0.9))
        # nu, theta_cov and alpha start at 0
    return theta


def _objective(model: OrdinalModel, data: _Data, theta: np.ndarray) -> float:
    implied = model.implied(theta, jacobian=False)
    r = data.s - implied.sigma
    value = float(r @ (data.w * r))
    return value if np.isfinite(value) else np.inf


def minimise(
    model: OrdinalModel,
    data: _Data,
    start: np.ndarray,
    *,
    tol: float = 1e-10,
    max_iter: int = 200,
) -> tuple[np.ndarray, Implied, bool, int]:
    """Minimise the DWLS discrepancy by Gauss-Newton with a backtracking line search.

    Stops when the largest absolute gradient ``|J'W r|`` is below ``tol`` or the predicted
    decrease is at the rounding level of ``F``.
    """
    theta = np.asarray(start, dtype=float).copy()
    f = _objective(model, data, theta)
    if not np.isfinite(f):
        raise InvalidParameterError(f"{FUNC}: the start values give a non-positive variance")
    w = data.w
    for it in range(1, max_iter + 1):
        implied = model.implied(theta)
        j = implied.jacobian
        r = data.s - implied.sigma
        grad = j.T @ (w * r)
        if np.max(np.abs(grad)) < tol:
            return theta, implied, True, it
        info = j.T @ (w[:, None] * j)
        try:
            step = np.linalg.solve(info, grad)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(info, grad, rcond=None)[0]
        decrease = float(grad @ step)
        if decrease < 1e-15 * max(f, 1.0):
            return theta, implied, bool(np.max(np.abs(grad)) < 1e-6), it
        t = 1.0
        while True:
            candidate = theta + t * step
            f_new = _objective(model, data, candidate)
            if f_new <= f - 1e-4 * t * 2.0 * decrease:
                break
            t *= 0.5
            if t < 1e-10:
                return theta, implied, bool(np.max(np.abs(grad)) < 1e-6), it
        theta, f = candidate, f_new
    implied = model.implied(theta)
    grad = implied.jacobian.T @ (w * (data.s - implied.sigma))
    return theta, implied, bool(np.max(np.abs(grad)) < tol), max_iter


# -- test statistics -----------------------------------------------------------------------
def scaled_shifted(u_gamma: np.ndarray, df: float) -> tuple[float, float]:
    """Return lavaan's scaling factor ``1/a`` and shift ``b`` from ``U Gamma``."""
    trace = float(np.trace(u_gamma))
    trace2 = float(np.sum(u_gamma * u_gamma.T))
    a = np.sqrt(df / trace2)
    return float(1.0 / a), float(df - a * trace)


def _projector(j: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Return ``U = W - W J (J'WJ)^-1 J'W`` for the diagonal weight ``w``."""
    wj = w[:, None] * j
    return np.diag(w) - wj @ np.linalg.solve(j.T @ wj, wj.T)


def _baseline(data: _Data) -> tuple[float, int, float, float]:
    """Return the baseline model's T, df, scaled T and scaling factor."""
    n_thr = sum(th.size for th in data.thresholds)
    w_corr = data.w[n_thr:]
    r = data.s[n_thr:]
    chisq = (data.n - 1) * float(r @ (w_corr * r))
    df = r.size
    u_gamma = w_corr[:, None] * data.gamma[n_thr:, n_thr:]
    factor, shift = scaled_shifted(u_gamma, df)
    return chisq, df, chisq / factor + shift, factor


def _robust_indices(
    data: _Data, spec: OrdinalSpec, implied: Implied, df: int
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
    if any(entry[0] in ("nu", "theta") for entry in spec.entries) or any(
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


def rmsea_ci(t: float, df: float, n: int, level: float = 0.90) -> tuple[float, float]:
    """Return lavaan's 90 % RMSEA interval.

    The noncentralities at which ``t`` is the 95th and the 5th percentile of the noncentral
    chi-square on ``df`` degrees of freedom, as ``sqrt(lambda / (n df))``.
    """
    if not df > 0 or not np.isfinite(t):
        return np.nan, np.nan

    def bound(q: float) -> float:
        if special.chdtr(df, t) < q:
            return 0.0
        hi = max(t, 1.0)
        while special.chndtr(t, df, hi) > q:
            hi *= 2.0
        lam = optimize.brentq(
            lambda nc: special.chndtr(t, df, nc) - q, 0.0, hi, xtol=1e-12, rtol=1e-12
        )
        return float(np.sqrt(lam / (n * df)))

    return bound(1.0 - (1.0 - level) / 2.0), bound((1.0 - level) / 2.0)


def _srmr(data: _Data, implied: Implied) -> float:
    """Return lavaan's ``srmr`` for ordered data: correlation residuals, lower triangle."""
    n_thr = sum(th.size for th in data.thresholds)
    resid = data.s[n_thr:] - implied.sigma[n_thr:]
    k = len(data.names)
    return float(np.sqrt(np.sum(resid**2) / (k * (k + 1) / 2)))


# -- the parameter table -------------------------------------------------------------------
def _factor_names(names: list, n_items: int, n_waves: int) -> list[str]:
    """Return ``F.<wave>`` with the wave label after the last dot of the wave's first item."""
    labels = []
    for t in range(n_waves):
        first = names[t * n_items]
        labels.append(f"F.{first.rsplit('.', 1)[1]}" if "." in first else f"F.{t + 1}")
    return labels


def _label(entry: tuple, names: list, factors: list, p: int) -> tuple[str, str, str]:
    kind = entry[0]
    if kind == "tau":
        _, i, t, c = entry
        return names[t * p + i], "|", f"t{c + 1}"
    if kind == "lambda":
        _, i, t = entry
        return factors[t], "=~", names[t * p + i]
    if kind == "nu":
        _, i, t = entry
        return names[t * p + i], "~1", ""
    if kind == "theta":
        _, i, t = entry
        return names[t * p + i], "~~", names[t * p + i]
    if kind == "theta_cov":
        _, i, t, s = entry
        return names[t * p + i], "~~", names[s * p + i]
    if kind == "psi":
        return factors[entry[1]], "~~", factors[entry[1]]
    if kind == "psi_cov":
        return factors[entry[1]], "~~", factors[entry[2]]
    return factors[entry[1]], "~1", ""


_ORDER = ("lambda", "tau", "nu", "theta", "theta_cov", "alpha", "psi", "psi_cov")


def _sort_key(entry: tuple) -> tuple:
    """Order the table as measEq.syntax writes it: by kind, then wave by wave."""
    kind = entry[0]
    if kind in ("tau", "lambda", "nu", "theta"):
        return (_ORDER.index(kind), entry[2], entry[1], *entry[3:])
    if kind == "theta_cov":
        return (_ORDER.index(kind), entry[2], entry[3], entry[1])
    return (_ORDER.index(kind), *entry[1:])


def parameter_table(
    spec: OrdinalSpec, names: list, estimates: np.ndarray, se: np.ndarray
) -> pd.DataFrame:
    """Return ``lhs, op, rhs, est, se`` (and ``free``: the parameter index or -1) of every entry."""
    factors = _factor_names(names, spec.n_items, spec.n_waves)
    rows = []
    for entry, a in spec.entries.items():
        rows.append((entry, a, float(estimates[a]), float(se[a])))
    for entry, value in spec.fixed.items():
        rows.append((entry, -1, float(value), 0.0))
    rows.sort(key=lambda row: _sort_key(row[0]))
    table = [
        (*_label(entry, names, factors, spec.n_items), est, se_, a) for entry, a, est, se_ in rows
    ]
    return pd.DataFrame(table, columns=["lhs", "op", "rhs", "est", "se", "free"])


# -- the fit -------------------------------------------------------------------------------
@one_blas_thread
def fit_wlsmv(
    stats: Any,
    *,
    n_items: int,
    n_waves: int,
    level: str,
    freed: tuple = (),
    parameterization: str = "theta",
) -> WLSMVFit:
    """Fit one level of the ordinal invariance ladder by DWLS with lavaan's WLSMV statistics.

    Parameters
    ----------
    stats : object
        The ordinal sample statistics, with attributes ``names`` (the variables, wave by
        wave: item 1..p of wave 1, then of wave 2, ...), ``n``, ``thresholds`` (one array per
        variable), ``polychoric`` (k x k), ``wls_obs`` (thresholds then correlations, lavaan's
        order), ``gamma`` (their asymptotic covariance matrix) and ``wls_v`` (the diagonal
        weight, as a vector or a diagonal matrix).
    n_items, n_waves : int
        The items per wave and the waves.
    level : str
        One of ``"configural"``, ``"thresholds"``, ``"metric"``, ``"scalar"``, ``"strict"``.
    freed : tuple
        Entries released from their equality constraint (partial invariance), such as
        ``("lambda", i, t)``, ``("tau", i, t, c)``, ``("nu", i, t)`` or ``("theta", i, t)``
        with ``t >= 1``.
    parameterization : str
        ``"theta"`` (the only one available).

    Returns
    -------
    WLSMVFit
    """
    if level not in LEVELS:
        raise InvalidParameterError(
            f"the `level` parameter of {FUNC} must be one of {', '.join(LEVELS)}; got {level!r}"
        )
    if parameterization != "theta":
        raise InvalidParameterError(
            f"the `parameterization` parameter of {FUNC} must be 'theta'; got {parameterization!r}"
        )
    for name, value in (("n_items", n_items), ("n_waves", n_waves)):
        if not isinstance(value, (int, np.integer)) or value < (2 if name == "n_waves" else 1):
            raise InvalidParameterError(
                f"the `{name}` parameter of {FUNC} must be an integer of at least "
                f"{2 if name == 'n_waves' else 1}; got {value!r}"
            )
    data = _read_stats(stats, n_items, n_waves)
    spec = build_ordinal_spec(n_items, n_waves, data.n_thresholds, level, tuple(freed))
    _check_freed(spec)
    model = OrdinalModel(spec)
    theta, implied, converged, iterations = minimise(model, data, start_values(spec, data))
    return _assemble(data, spec, theta, implied, converged, iterations, parameterization)


def _check_freed(spec: OrdinalSpec) -> None:
    known = set(spec.entries) | set(spec.fixed)
    for entry in spec.freed:
        entry_t = tuple(entry)
        if entry_t not in known or entry_t[0] not in ("tau", "lambda", "nu", "theta"):
            raise InvalidParameterError(
                f"the `freed` parameter of {FUNC} lists {entry!r}, which is not a threshold, "
                "loading, intercept or residual variance of this model"
            )
        if entry_t[2] == 0:
            raise InvalidParameterError(
                f"the `freed` parameter of {FUNC} lists {entry!r}: only a later wave's entry "
                "(wave index 1 or more) can be released"
            )


def _assemble(
    data: _Data,
    spec: OrdinalSpec,
    theta: np.ndarray,
    implied: Implied,
    converged: bool,
    iterations: int,
    parameterization: str,
) -> WLSMVFit:
    """Compute the standard errors, test statistics and fit indices at the estimates."""
    n1 = data.n - 1
    j, w, gamma = implied.jacobian, data.w, data.gamma
    residual = data.s - implied.sigma
    wj = w[:, None] * j
    bread = np.linalg.inv(j.T @ wj)
    cov = bread @ (wj.T @ gamma @ wj) @ bread / n1
    q = spec.n_params
    df = data.s.size - q
    chisq = n1 * float(residual @ (w * residual))
    u_gamma = _projector(j, w) @ gamma
    factor, shift = scaled_shifted(u_gamma, df) if df > 0 else (np.nan, np.nan)
    scaled = chisq / factor + shift
    base_chisq, base_df, base_scaled, base_factor = _baseline(data)
    low, high = rmsea_ci(chisq, df, n1)
    low_s, high_s = rmsea_ci(scaled, df, n1)
    cfi_r, tli_r, rmsea_r, _, _ = _robust_indices(data, spec, implied, df)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return WLSMVFit(
        level=spec.level,
        freed=spec.freed,
        parameterization=parameterization,
        n=data.n,
        npar=q,
        df=df,
        chisq=chisq,
        p_value=float(sps.chi2.sf(chisq, df)) if df > 0 else np.nan,
        chisq_scaled=scaled,
        df_scaled=float(df),
        p_value_scaled=float(sps.chi2.sf(scaled, df)) if df > 0 else np.nan,
        scaling_factor=factor,
        shift=shift,
        baseline_chisq=base_chisq,
        baseline_df=base_df,
        baseline_chisq_scaled=base_scaled,
        baseline_scaling_factor=base_factor,
        cfi=cfi(chisq, df, base_chisq, base_df),
        tli=tli(chisq, df, base_chisq, base_df),
        rmsea=rmsea(chisq, df, n1),
        rmsea_ci_low=low,
        rmsea_ci_high=high,
        cfi_scaled=cfi(scaled, df, base_scaled, base_df),
        tli_scaled=tli(scaled, df, base_scaled, base_df),
        rmsea_scaled=rmsea(scaled, df, n1),
        rmsea_scaled_ci_low=low_s,
        rmsea_scaled_ci_high=high_s,
        cfi_robust=cfi_r,
        tli_robust=tli_r,
        rmsea_robust=rmsea_r,
        srmr=_srmr(data, implied),
        converged=converged,
        iterations=iterations,
        estimates=theta,
        cov=cov,
        parameters=parameter_table(spec, data.names, theta, se),
        spec=spec,
        jacobian=j,
        residual=residual,
        weight=w,
        gamma=gamma,
    )
