"""Tables, tests and predictions of a :class:`models.lmm.LinearMixedModel` with a smooth term.

As ``summary(fit$gam)`` of gamm4 reports them: the parametric coefficients with ``t`` tests on
``n - sum(edf)`` residual degrees of freedom, and for the smooth its edf, reference df, ``F``
and p-value from Wood's (2013) Wald-type test of ``f = 0`` with the rank of the test matrix
set to the smooth's edf (mgcv's ``testStat`` with ``type = 0``, ``summary.gam``'s default).

Reference
---------
Wood SN (2013). On p-values for smooth components of an extended generalized additive model.
Biometrika 100(1), 221-228.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from models._errors import FormulaError, InvalidParameterError

OFFERED = (
    "smooth_, smooth_table_, fixed_, vcov_, beta_, random_, random_corr_, fitted_, "
    "residuals_, the fit statistics, summary(), print_summary(), to_dict(), to_frame() and "
    "predict()"
)
"""What a fitted model with a smooth term offers, named in the error of what it does not."""

_RANK_TOL = np.finfo(float).eps ** 0.9
"""Eigenvalues of the test matrix below this fraction of the largest are taken as zero."""


def unavailable(name: str, labels: list[str]) -> InvalidParameterError:
    """Return the one error for what a model with smooth terms does not offer yet."""
    return InvalidParameterError(
        f"LinearMixedModel.{name} is not available for a model with a smooth term "
        f"({', '.join(labels)}) yet; such a model offers {OFFERED}"
    )


def imhof_upper(weights: np.ndarray, dfs: np.ndarray) -> float:
    """``P(sum_j w_j chi2(df_j) > 0)`` by Imhof's (1961) inversion of the characteristic function.

    What mgcv's ``psum.chisq`` computes by Davies' algorithm (to its 2e-5 accuracy).
    """
    w = np.asarray(weights, dtype=float)
    h = np.asarray(dfs, dtype=float)

    def integrand(u: float) -> float:
        if u == 0.0:
            return 0.5 * float(np.sum(h * w))
        theta = 0.5 * np.sum(h * np.arctan(w * u))
        log_rho = np.sum(h / 4.0 * np.log1p((w * u) ** 2))
        return float(np.sin(theta) / u * np.exp(-log_rho))

    from scipy import integrate  # here: a fit without a smooth never needs it

    value, _ = integrate.quad(integrand, 0.0, np.inf, limit=1000, epsabs=1e-12, epsrel=1e-10)
    return float(min(1.0, max(0.0, 0.5 + value / np.pi)))


def _test_vectors(V: np.ndarray, rank: float) -> tuple[np.ndarray, np.ndarray, float, int, float]:
    """Return the projections of Wood's test for a fractional rank (testStat, type 0)."""
    values, vectors = np.linalg.eigh((V + V.T) / 2.0)
    values, vectors = values[::-1], vectors[:, ::-1]
    signs = np.where(vectors[0] < 0, -1.0, 1.0)
    vectors = vectors * signs
    k = max(0, int(np.floor(rank)))
    nu = abs(rank - k)
    k1 = k + 1 if nu > 0 else k
    r_est = int(np.sum(values > values.max() * _RANK_TOL))
    if r_est < k1:
        k1 = k = r_est
        nu = 0.0
        rank = float(r_est)
    vec = vectors[:, :k1].copy()
    if nu > 0 and k > 0:
        vec[:, : k - 1] = vec[:, : k - 1] / np.sqrt(values[: k - 1])
        b12 = np.sqrt(max(0.0, 0.5 * nu * (1.0 - nu)))
        ev = np.diag(values[k - 1 : k1] ** -0.5)
        B = ev @ np.array([[1.0, b12], [b12, nu]]) @ ev
        bval, bvec = np.linalg.eigh(B)
        rB = bvec @ np.diag(np.sqrt(bval)) @ bvec.T
        vec1 = vec.copy()
        vec1[:, k - 1 : k1] = (rB @ np.diag([-1.0, 1.0]) @ vec[:, k - 1 : k1].T).T
        vec[:, k - 1 : k1] = (rB @ vec[:, k - 1 : k1].T).T
    else:
        vec = vec / np.sqrt(values[0] if k == 0 else values[:k])
        vec1 = vec
        if k == 1:
            rank = 1.0
    return vec, vec1, nu, k, rank


def wood_test(
    coef: np.ndarray, Vp: np.ndarray, XVX: np.ndarray, rank: float, res_df: float
) -> tuple[float, float, float, float]:
    """Wood's (2013) test of a smooth: ``(statistic d, its twin d1, p-value, reference df)``.

    ``coef`` and ``Vp`` are the smooth's coefficients and their Bayesian covariance, ``XVX``
    ``X' V^-1 X`` of its columns (``R'R`` for the triangular factor the test uses; the result
    does not depend on which factor), ``rank`` the smooth's edf (at most its dimension) and
    ``res_df`` the residual df of the fit (the scale is estimated). For a fractional rank the
    p-value averages two statistics, ``d`` (reported, as ``summary.gam`` does) and ``d1``; which
    is which follows the sign of the first element of the test matrix's eigenvectors, so where
    that element is zero but for rounding, mgcv may report ``d1`` for what is ``d`` here.
    """
    R = np.linalg.cholesky((XVX + XVX.T) / 2.0).T
    vec, vec1, nu, k, rank = _test_vectors(R @ Vp @ R.T, rank)
    Rp = R @ coef
    d = float(np.sum((vec.T @ Rp) ** 2))
    d1 = float(np.sum((vec1.T @ Rp) ** 2))
    k1 = vec.shape[1]
    pval = 2.0
    if nu > 0:
        if k1 == 1:
            val = np.ones(1)
        else:
            val = np.ones(k1)
            rp = nu + 1.0
            val[k - 1] = (rp + np.sqrt(rp * (2.0 - rp))) / 2.0
            val[k1 - 1] = rp - val[k - 1]
        k0 = max(1, int(np.round(res_df)))
        dfs = np.concatenate([np.ones(len(val)), [k0]])
        pval = 0.5 * (
            imhof_upper(np.concatenate([val, [-d / k0]]), dfs)
            + imhof_upper(np.concatenate([val, [-d1 / k0]]), dfs)
        )
    if pval > 1.0:
        from scipy import stats

        pval = 0.5 * (stats.f.sf(d / rank, rank, res_df) + stats.f.sf(d1 / rank, rank, res_df))
    return d, d1, float(min(1.0, pval)), float(rank)


def smooth_table(fit, n_obs: int, *, sigma2: float) -> pd.DataFrame:
    """``summary(gam)$s.table``: ``term, edf, ref_df, F, p_value``, one row per smooth.

    A factor smooth is tested as a random effect (:func:`random_effect_test`).
    """
    res_df = n_obs - float(np.sum(fit.edf_coef))
    rows = []
    for part in fit.smooths:
        if part.is_factor_smooth:
            stat, ref_df, pval = random_effect_test(fit, part, sigma2=sigma2, res_df=res_df)
            rows.append((part.label, part.edf, ref_df, stat / ref_df, pval))
            continue
        cols = part.columns
        coef = fit.coef[cols]
        d, _, pval, ref_df = wood_test(
            coef, fit.Vp[cols, cols], fit.XVX[cols, cols], min(float(len(coef)), part.edf), res_df
        )
        rows.append((part.label, part.edf, ref_df, d / ref_df, pval))
    return pd.DataFrame(rows, columns=["term", "edf", "ref_df", "F", "p_value"])


def smooth_predict(
    model, data: pd.DataFrame | None, *, population: bool = False, allow_new_levels: bool = True
) -> pd.Series:
    """Prediction of ``predict(fit$gam)``: the parametric part plus the smooths.

    A factor smooth adds each row's curve of its level (none for a level not seen in the fit,
    or an error when ``allow_new_levels`` is False); ``population=True`` leaves factor smooths
    out (``predict(fit$gam, exclude=...)``).
    """
    fit = model.smooth_
    p = len(fit.fixed_names)
    if data is None:
        X = model.design_.X.to_numpy(dtype=float)
        eta = X @ fit.coef[:p] + _smooth_part(fit, model._smooth_data, population)
        return pd.Series(eta, index=model.design_.rows, name="predicted")
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            "the `data` parameter of LinearMixedModel.predict must be a pandas DataFrame or "
            f"None; got {type(data).__name__}"
        )
    used = [part for part in fit.smooths if not (population and part.is_factor_smooth)]
    for part in used:
        term = part.smooth.term
        for column in (term.column, term.by, term.factor):
            if column is not None and column not in data.columns:
                raise FormulaError(
                    f"LinearMixedModel.predict: the smooth {term.text} needs the column "
                    f"{column!r}, which `data` lacks"
                )
        col = data[term.column]
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            raise InvalidParameterError(
                f"LinearMixedModel.predict: the smooth {term.text} needs a numeric column; "
                f"{term.column!r} is {col.dtype}"
            )
        if part.is_factor_smooth and not allow_new_levels:
            _check_seen(part, data[term.factor])
    new = model.design_.transform(data, random=False)
    frame = data.loc[new.rows]
    ok = np.ones(len(frame), dtype=bool)
    for part in used:
        ok &= np.isfinite(frame[part.smooth.term.column].to_numpy(dtype=float))
        if part.is_factor_smooth:
            ok &= frame[part.smooth.term.factor].notna().to_numpy()
    eta = new.X.to_numpy(dtype=float)[ok] @ fit.coef[:p] + _smooth_part(fit, frame[ok], population)
    out = pd.Series(np.nan, index=data.index, name="predicted")
    out.loc[new.rows[ok]] = eta
    return out


def _check_seen(part, values: pd.Series) -> None:
    """Refuse levels of a factor smooth's factor that the fit did not see."""
    seen = set(part.smooth.levels)
    unseen = sorted({str(v) for v in values.dropna() if v not in seen})
    if unseen:
        raise InvalidParameterError(
            f"LinearMixedModel.predict: levels not seen in the fit for "
            f"{part.smooth.term.factor!r} (the factor smooth {part.label}): {unseen}; pass "
            "allow_new_levels=True to predict them at the population curve"
        )


def _smooth_part(fit, frame: pd.DataFrame, population: bool) -> np.ndarray:
    """Return the smooths' sum at the rows of ``frame`` (each at its by level, zero elsewhere)."""
    total = np.zeros(len(frame))
    for part in fit.smooths:
        if population and part.is_factor_smooth:
            continue
        term = part.smooth.term
        x = frame[term.column].to_numpy(dtype=float)
        group = term.factor if part.is_factor_smooth else term.by
        by = None if group is None else frame[group].to_numpy(dtype=object)
        total += part.design(x, by) @ fit.coef[part.columns]
    return total


def random_effect_test(fit, part, *, sigma2: float, res_df: float) -> tuple[float, float, float]:
    """Test a factor smooth as mgcv's ``reTest``: ``(statistic, reference df, p-value)``.

    The statistic is ``b' M b / sigma^2`` with ``b`` the smooth's coefficients and ``M`` the
    Schur complement, for its columns, of ``X' V^-1 X + S_lambda`` (all coefficients); its null
    distribution is ``sum_j e_j chi2_1`` with ``e_j`` the eigenvalues of ``M Ve / sigma^2``
    (``Ve = Vp X'V^-1X Vp``), against ``chi2_k / k`` for ``k`` the rounded residual df. The
    reference df is the number of ``e_j`` above ``eps^0.8`` of the largest (the F column is
    the statistic over it). ``X' V^-1 X`` is singular where the smooth's columns span others
    (the intercept; a smooth's linear part); its null space is set to exactly zero before the
    ``e_j`` are formed, so those ``e_j`` are zero rather than rounding noise near the cut-off.
    """
    from scipy import linalg

    tol = np.finfo(float).eps ** 0.8
    cols = np.arange(fit.coef.size)[part.columns]
    rest = np.setdiff1d(np.arange(fit.coef.size), cols)
    H = fit.XVX + fit.S_lambda
    Hrc = H[np.ix_(rest, cols)]
    M = H[np.ix_(cols, cols)] - Hrc.T @ linalg.solve(H[np.ix_(rest, rest)], Hrc, assume_a="pos")
    M = (M + M.T) / 2.0
    b = fit.coef[cols]
    stat = float(b @ M @ b) / sigma2
    lam, U = np.linalg.eigh((fit.XVX + fit.XVX.T) / 2.0)
    keep = lam > lam.max() * tol
    K = (np.sqrt(lam[keep])[:, None] * U[:, keep].T) @ fit.Vp[:, cols] @ np.linalg.cholesky(M)
    ev = np.zeros(cols.size)
    sv = np.linalg.svd(K, compute_uv=False)
    ev[: sv.size] = sv**2 / sigma2
    rank = int(np.sum(ev > ev.max() * tol))
    k = max(1, int(np.round(res_df)))
    pval = imhof_upper(np.concatenate([ev, [-stat / k]]), np.concatenate([np.ones(ev.size), [k]]))
    return stat, float(rank), pval
