"""Diagonally weighted least squares (lavaan's WLSMV) for the ordinal invariance ladder.

The sample statistics ``s`` are lavaan's ``wls.obs`` (every variable's thresholds, then the
polychoric correlations), ``Gamma`` their asymptotic covariance matrix (of ``sqrt(N) s``) and
``W = diag(wls.v)`` the diagonal weight. With ``sigma(theta)`` the model-implied statistics
(:mod:`models.sem._wlsmv_spec`) and ``J`` their Jacobian, everything follows lavaan 0.6
(``estimator = "WLSMV"``: ``se = "robust.sem"``, ``test = "scaled.shifted"``):

* the estimates minimise ``F = (s - sigma)' W (s - sigma)`` (Gauss-Newton steps with a
  backtracking line search); ``T = (N - 1) F`` at the minimum, df = statistics - parameters;
* the robust covariance of the estimates is ``(J'WJ)^-1 J'W Gamma W J (J'WJ)^-1 / (N - 1)``;
* the scaled and shifted statistic, the baseline model, CFI, TLI, RMSEA, SRMR and the robust
  indices are those of :mod:`models.sem._wlsmv_stats`; CFI, TLI and RMSEA are computed from
  the standard or the scaled statistics and the model's df.

lavaan divides by ``N - 1`` here: ``T = (N - 1) F``, the covariance of the estimates carries
``1 / (N - 1)`` and the RMSEA uses ``N - 1``; only the catML statistic uses ``N``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from models._errors import InvalidParameterError
from models.sem._blas import one_blas_thread
from models.sem._fit import cfi, rmsea, rmsea_ci, tli
from models.sem._wlsmv_spec import (
    LEVELS,
    Implied,
    OrdinalModel,
    OrdinalSpec,
    build_ordinal_spec,
    parameter_table,
)
from models.sem._wlsmv_stats import (
    SampleData,
    baseline,
    projector,
    read_stats,
    robust_indices,
    scaled_shifted,
    srmr,
)

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
        ``parameterEstimates`` (with ``free`` and ``derived``, see
        :func:`models.sem._wlsmv_spec.parameter_table`).
    spec : OrdinalSpec
    jacobian, residual, weight, gamma : numpy.ndarray
        At the estimates: the Jacobian of the implied statistics, the residuals
        ``s - sigma``, the diagonal weight and ``Gamma``, which the difference and score tests
        read.
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


# -- estimation ----------------------------------------------------------------------------
def start_values(spec: OrdinalSpec, data: SampleData) -> np.ndarray:
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
    # theta parameterisation: unit residual variances; delta: unit latent-response variances
    by_delta = spec.parameterization == "delta"
    lam = std if by_delta else std / np.sqrt(1.0 - std**2)
    inflate = np.ones_like(lam) if by_delta else np.sqrt(1.0 + lam**2)
    theta = np.zeros(spec.n_params)
    seen: set[int] = set()
    for entry, a in spec.entries.items():
        if a in seen:
            continue
        seen.add(a)
        kind = entry[0]
        if kind == "tau":
            _, i, t, c = entry
            theta[a] = data.thresholds[t * p + i][c] * inflate[t, i]
        elif kind == "lambda":
            theta[a] = lam[entry[2], entry[1]]
        elif kind in ("theta", "delta", "psi"):
            theta[a] = 1.0
        elif kind == "psi_cov":
            (vt, et), (vs, es) = vectors[entry[1]], vectors[entry[2]]
            t, u = entry[1], entry[2]
            cross = r[t * p : (t + 1) * p, u * p : (u + 1) * p]
            theta[a] = float(np.clip(vt @ cross @ vs / np.sqrt(et * es), -0.9, 0.9))
        # nu, theta_cov and alpha start at 0
    return theta


def _objective(model: OrdinalModel, data: SampleData, theta: np.ndarray) -> float:
    implied = model.implied(theta, jacobian=False)
    r = data.s - implied.sigma
    value = float(r @ (data.w * r))
    return value if np.isfinite(value) else np.inf


def minimise(
    model: OrdinalModel,
    data: SampleData,
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
        ``("lambda", i, t)``, ``("tau", i, t, c)``, ``("nu", i, t)``, ``("theta", i, t)``
        (a residual variance) or ``("delta", i, t)`` (a scale, under delta) with ``t >= 1``.
    parameterization : str
        ``"theta"`` (residual variances are parameters) or ``"delta"`` (the latent responses'
        scales are; no strict level, as in semTools).

    Returns
    -------
    WLSMVFit
    """
    if level not in LEVELS:
        raise InvalidParameterError(
            f"the `level` parameter of {FUNC} must be one of {', '.join(LEVELS)}; got {level!r}"
        )
    if parameterization not in ("theta", "delta"):
        raise InvalidParameterError(
            f"the `parameterization` parameter of {FUNC} must be 'theta' or 'delta'; "
            f"got {parameterization!r}"
        )
    if parameterization == "delta" and level == "strict":
        raise InvalidParameterError(
            f"{FUNC} cannot hold residual variances equal under parameterization='delta' "
            "(they are not parameters there); use parameterization='theta' for the strict level"
        )
    for name, value in (("n_items", n_items), ("n_waves", n_waves)):
        if not isinstance(value, (int, np.integer)) or value < (2 if name == "n_waves" else 1):
            raise InvalidParameterError(
                f"the `{name}` parameter of {FUNC} must be an integer of at least "
                f"{2 if name == 'n_waves' else 1}; got {value!r}"
            )
    try:
        freed = tuple(tuple(entry) for entry in freed)
        hash(freed)
    except TypeError:
        raise InvalidParameterError(
            f"the `freed` parameter of {FUNC} must be a tuple of entries such as "
            f"('lambda', 0, 1); got {freed!r}"
        ) from None
    data = read_stats(stats, n_items, n_waves)
    spec = build_ordinal_spec(n_items, n_waves, data.n_thresholds, level, freed, parameterization)
    _check_freed(spec)
    model = OrdinalModel(spec)
    theta, implied, converged, iterations = minimise(model, data, start_values(spec, data))
    return _assemble(data, model, theta, implied, converged, iterations)


def _check_freed(spec: OrdinalSpec) -> None:
    known = set(spec.entries) | set(spec.fixed)
    kinds = ("tau", "lambda", "nu", "theta", "delta")
    for entry in spec.freed:
        if entry not in known or entry[0] not in kinds:
            raise InvalidParameterError(
                f"the `freed` parameter of {FUNC} lists {entry!r}, which is not a threshold, "
                "loading, intercept, residual variance or scale of this model"
            )
        if entry[2] == 0:
            raise InvalidParameterError(
                f"the `freed` parameter of {FUNC} lists {entry!r}: only a later wave's entry "
                "(wave index 1 or more) can be released"
            )


def _assemble(
    data: SampleData,
    model: OrdinalModel,
    theta: np.ndarray,
    implied: Implied,
    converged: bool,
    iterations: int,
) -> WLSMVFit:
    """Compute the standard errors, test statistics and fit indices at the estimates."""
    spec = model.spec
    n1 = data.n - 1
    j, w, gamma = implied.jacobian, data.w, data.gamma
    residual = data.s - implied.sigma
    wj = w[:, None] * j
    information = j.T @ wj
    if np.linalg.matrix_rank(information) < spec.n_params:
        raise InvalidParameterError(
            f"{FUNC}: the model at level {spec.level!r} with freed={spec.freed!r} is not "
            "identified (its parameters cannot all be told apart); release fewer constraints"
        )
    bread = np.linalg.inv(information)
    cov = bread @ (wj.T @ gamma @ wj) @ bread / n1
    q = spec.n_params
    df = data.s.size - q
    chisq = n1 * float(residual @ (w * residual))
    u_gamma = projector(j, w) @ gamma
    factor, shift = scaled_shifted(u_gamma, df) if df > 0 else (np.nan, np.nan)
    scaled = chisq / factor + shift
    base_chisq, base_df, base_scaled, base_factor = baseline(data)
    low, high = rmsea_ci(chisq, df, n1)
    low_s, high_s = rmsea_ci(scaled, df, n1)
    cfi_r, tli_r, rmsea_r, _, _ = robust_indices(data, spec, implied, df)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return WLSMVFit(
        level=spec.level,
        freed=spec.freed,
        parameterization=spec.parameterization,
        n=data.n,
        npar=q,
        df=df,
        chisq=chisq,
        p_value=float(special.chdtrc(df, chisq)) if df > 0 else np.nan,
        chisq_scaled=scaled,
        df_scaled=float(df),
        p_value_scaled=float(special.chdtrc(df, scaled)) if df > 0 else np.nan,
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
        srmr=srmr(data, implied),
        converged=converged,
        iterations=iterations,
        estimates=theta,
        cov=cov,
        parameters=parameter_table(spec, data.names, theta, se, model.residual_variances(theta)),
        spec=spec,
        jacobian=j,
        residual=residual,
        weight=w,
        gamma=gamma,
    )
