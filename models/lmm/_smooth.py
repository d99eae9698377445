"""Smooth terms ``s(x, bs = "cr", k = K)`` in a linear mixed model, built as gamm4 builds them.

A smooth is mgcv's cubic regression spline (Wood 2017, section 5.3.1): ``k`` knots at the
quantiles of the unique values of ``x`` (``quantile(unique(x), seq(0, 1, length = k))``, R's
type 7), the basis parametrised by the function's values at the knots, and the penalty
``integral f''(x)^2 dx`` as the matrix ``D' B^-1 D``. As ``mgcv::smoothCon`` does with
``absorb.cons = TRUE``, the penalty is first scaled by ``||X||_inf^2 / ||S||_1``, then the
sum-to-zero constraint ``1'X beta = 0`` is absorbed by the Householder reflection of the column
means of ``X`` (LINPACK's ``qr``, so the constrained basis is mgcv's to the sign). As
``mgcv::smooth2random`` does, the constrained penalty's eigenvectors ``U`` and values ``d`` turn
the basis into ``X U diag(d^-1/2 on the penalised range, 1 on the null space)``: the penalised
columns are one block of independent random effects with one variance (``sigma^2 / lambda``),
the null-space column (the linear trend) a fixed effect. The model is then fitted by REML
alongside its other random effects (:mod:`models.lmm.engine`), and the smooth's coefficients,
their Bayesian covariance, effective degrees of freedom and curve follow ``gamm4``'s ``$gam``.

One smooth per model for now.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from models._errors import FormulaError, InvalidParameterError
from models._spec import _QUOTED, _mask, _scan_depth, _split_top, _unquote
from models._version import __version__
from models.lmm._analytic import SINGULAR_TOL

DEFAULT_K = 10
"""mgcv's default basis dimension."""

MIN_K, MAX_K = 3, 20
"""Basis dimensions accepted (mgcv's minimum for ``cr`` is 3)."""

BOUNDARY_SP = 1e10
"""The smoothing parameter gamm4 reports when the smooth's variance is estimated at zero."""

_SMOOTH_CALL = re.compile(r"s\s*\(")


@dataclass(frozen=True)
class SmoothTerm:
    """One ``s(...)`` term as written: the column, the basis dimension and the text."""

    column: str
    k: int
    text: str


def _smooth_arguments(text: str, formula: str) -> SmoothTerm:
    inner = text[text.index("(") + 1 : -1]
    args = [a.strip() for a in _split_top(inner, ",")]
    if not args or not args[0] or "=" in _mask(args[0]):
        raise FormulaError(f"{text!r} in {formula!r} names no column: write s(x, bs='cr', k=6)")
    quoted = _QUOTED.fullmatch(args[0])
    if quoted and quoted.group(1):
        column = _unquote(quoted.group(1))
    elif re.fullmatch(r"[A-Za-z][A-Za-z0-9_.]*", args[0]):
        column = args[0]
    else:
        raise FormulaError(f"{text!r} in {formula!r}: {args[0]!r} is not a column name")
    k, bs = DEFAULT_K, "cr"
    for arg in args[1:]:
        name, _, value = (p.strip() for p in arg.partition("="))
        if name == "k" and re.fullmatch(r"[0-9]+", value) and MIN_K <= int(value) <= MAX_K:
            k = int(value)
        elif name == "k":
            raise FormulaError(
                f"{text!r} in {formula!r}: k must be a whole number from {MIN_K} to {MAX_K}; "
                f"got {value!r}"
            )
        elif name == "bs":
            bs = value.strip("\"'")
            if bs != "cr" or value[:1] not in "\"'" or value[:1] != value[-1:]:
                raise FormulaError(
                    f'{text!r} in {formula!r}: only the cubic regression spline bs="cr" is '
                    f"supported; got bs={value}"
                )
        else:
            raise FormulaError(
                f"{text!r} in {formula!r}: unknown argument {arg!r}; s() takes the column, "
                'bs="cr" and k'
            )
    return SmoothTerm(column=column, k=k, text=text)


def split_smooth(formula: str) -> tuple[str, SmoothTerm | None]:
    """Take the ``s(...)`` term out of a formula; return the rest and the term (or None).

    Raises
    ------
    FormulaError
        For a malformed ``s(...)``, a basis other than ``"cr"``, a ``k`` outside 3 to 20, or
        more than one smooth (one is supported yet).
    """
    if not _SMOOTH_CALL.search(_mask(formula)):
        return formula, None
    depth = _scan_depth(formula)
    tildes = [i for i, ch in enumerate(_mask(formula)) if ch == "~" and depth[i] == 0]
    if len(tildes) != 1:
        return formula, None  # parse_formula reports it
    lhs, rhs = formula[: tildes[0]], formula[tildes[0] + 1 :]
    kept, smooths = [], []
    for piece in _split_top(rhs, "+"):
        text = piece.strip()
        if re.fullmatch(r"s\s*\(.*\)", text, flags=re.DOTALL) and _closes_at_end(text):
            smooths.append(_smooth_arguments(text, formula))
        elif _SMOOTH_CALL.search(_mask(text)) and re.search(r"(?<![A-Za-z0-9_.])s\s*\(", text):
            raise FormulaError(
                f"{text!r} in {formula!r}: a smooth must be a term of its own, "
                "joined to the others by '+'"
            )
        else:
            kept.append(text)
    if len(smooths) > 1:
        raise FormulaError(
            f"{formula!r} has {len(smooths)} smooth terms ({', '.join(s.text for s in smooths)}); "
            "only one smooth term per model is supported yet"
        )
    if not smooths:
        return formula, None
    if not any(not (t.startswith("(") and "|" in t) for t in kept):
        kept.insert(0, "1")
    return f"{lhs.strip()} ~ {' + '.join(kept)}", smooths[0]


def _closes_at_end(text: str) -> bool:
    depth = _scan_depth(text)
    start = text.index("(")
    return all(d > 0 for d in depth[start + 1 : -1])


# ---------------------------------------------------------------------------------------------
# the cubic regression spline


def cr_knots(x: np.ndarray, k: int) -> np.ndarray:
    """Return mgcv's knots: quantiles (type 7) of the unique values at ``0, 1/(k-1), ..., 1``."""
    return np.quantile(np.unique(x), np.linspace(0.0, 1.0, k))


def cr_matrices(knots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``F`` (knot values to second derivatives, zero at the ends) and the penalty ``S``."""
    h = np.diff(knots)
    k = len(knots)
    D = np.zeros((k - 2, k))
    B = np.zeros((k - 2, k - 2))
    for i in range(k - 2):
        D[i, i] = 1.0 / h[i]
        D[i, i + 1] = -1.0 / h[i] - 1.0 / h[i + 1]
        D[i, i + 2] = 1.0 / h[i + 1]
        B[i, i] = (h[i] + h[i + 1]) / 3.0
        if i + 1 < k - 2:
            B[i, i + 1] = B[i + 1, i] = h[i + 1] / 6.0
    BinvD = np.linalg.solve(B, D)
    F = np.vstack([np.zeros(k), BinvD, np.zeros(k)])
    S = D.T @ BinvD
    return F, (S + S.T) / 2.0


def cr_basis(x: np.ndarray, knots: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Return the unconstrained basis at ``x``: cubic between knots, linear beyond the end knots."""
    x = np.asarray(x, dtype=float)
    k = len(knots)
    h = np.diff(knots)
    j = np.clip(np.searchsorted(knots, x, side="right") - 1, 0, k - 2)
    X = np.zeros((len(x), k))
    rows = np.arange(len(x))
    hj = h[j]
    inside = (x >= knots[0]) & (x <= knots[-1])
    am = (knots[j + 1] - x) / hj
    ap = (x - knots[j]) / hj
    cm = ((knots[j + 1] - x) ** 3 / hj - hj * (knots[j + 1] - x)) / 6.0
    cp = ((x - knots[j]) ** 3 / hj - hj * (x - knots[j])) / 6.0
    X[rows, j] += np.where(inside, am, 0.0)
    X[rows, j + 1] += np.where(inside, ap, 0.0)
    X += np.where(inside, cm, 0.0)[:, None] * F[j] + np.where(inside, cp, 0.0)[:, None] * F[j + 1]
    below, above = x < knots[0], x > knots[-1]
    if below.any():  # f(x1) + (x - x1) f'(x1)
        d = x[below] - knots[0]
        slope = -F[0] * h[0] / 3.0 - F[1] * h[0] / 6.0
        slope[0] -= 1.0 / h[0]
        slope[1] += 1.0 / h[0]
        X[below] = d[:, None] * slope
        X[below, 0] += 1.0
    if above.any():
        d = x[above] - knots[-1]
        slope = F[-2] * h[-1] / 6.0 + F[-1] * h[-1] / 3.0
        slope[-2] -= 1.0 / h[-1]
        slope[-1] += 1.0 / h[-1]
        X[above] = d[:, None] * slope
        X[above, -1] += 1.0
    return X


def _householder(c: np.ndarray) -> np.ndarray:
    """LINPACK's (``qr``) reflection ``H`` with ``H c = (-+||c||, 0, ...)``: ``Q`` of ``qr(c)``."""
    norm = np.linalg.norm(c)
    if c[0] != 0.0:
        norm = np.copysign(norm, c[0])
    v = c / norm
    v[0] += 1.0
    return np.eye(len(c)) - np.outer(v, v) / v[0]


@dataclass(frozen=True)
class CrSmooth:
    """A constructed ``cr`` smooth: knots, constraint, scaled penalty and its eigen-split.

    ``Z`` (``k x (k-1)``) maps constrained to raw coefficients; ``S`` is the constrained,
    scaled penalty; ``UD`` maps the random/fixed parametrisation (penalised columns first)
    to the constrained coefficients; ``rank`` is the number of penalised columns.
    """

    column: str
    knots: np.ndarray
    F: np.ndarray
    Z: np.ndarray
    S: np.ndarray
    S_scale: float
    UD: np.ndarray
    rank: int

    def basis(self, x: np.ndarray) -> np.ndarray:
        """Return the constrained basis at ``x`` (mgcv's ``PredictMat``)."""
        return cr_basis(x, self.knots, self.F) @ self.Z


def construct_cr(x: np.ndarray, k: int, column: str) -> CrSmooth:
    """Build the smooth of ``x`` of dimension ``k`` as ``smoothCon`` and ``smooth2random`` do."""
    knots = cr_knots(x, k)
    F, S = cr_matrices(knots)
    X = cr_basis(x, knots, F)
    scale = np.linalg.norm(S, 1) / np.max(np.abs(X).sum(axis=1)) ** 2
    S = S / scale
    H = _householder(X.mean(axis=0))
    Z = H[:, 1:]
    Sc = Z.T @ S @ Z
    Sc = (Sc + Sc.T) / 2.0
    values, vectors = np.linalg.eigh(Sc)
    values, vectors = values[::-1], vectors[:, ::-1]  # R's eigen: decreasing
    rank = k - 2
    d = np.concatenate([values[:rank], np.ones(k - 1 - rank)])
    return CrSmooth(
        column=column,
        knots=knots,
        F=F,
        Z=Z,
        S=Sc,
        S_scale=float(scale),
        UD=vectors / np.sqrt(d),
        rank=rank,
    )


def smooth_column(data: pd.DataFrame, term: SmoothTerm) -> None:
    """Refuse a smooth's column that is missing, not numeric, or has fewer than k unique values."""
    if term.column not in data.columns:
        raise FormulaError(
            f"the smooth {term.text!r} names a column {term.column!r} not in the data"
        )
    col = data[term.column]
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        raise InvalidParameterError(
            f"the smooth {term.text!r} needs a numeric column; {term.column!r} is {col.dtype}"
        )
    values = col.to_numpy(dtype=float)
    if not np.all(np.isfinite(values[~np.isnan(values)])):
        raise InvalidParameterError(
            f"the smooth {term.text!r}: column {term.column!r} holds infinite values"
        )
    unique = np.unique(values[~np.isnan(values)]).size
    if unique < term.k:
        raise InvalidParameterError(
            f"the smooth {term.text!r}: column {term.column!r} has {unique} unique values, fewer "
            f"than k = {term.k}; reduce k"
        )


# ---------------------------------------------------------------------------------------------
# the fit


@dataclass(frozen=True)
class SmoothFit:
    """The fitted smooth, as gamm4's ``$gam`` reports it.

    Attributes
    ----------
    term : SmoothTerm
        The term as written.
    smooth : CrSmooth
        Knots, constraint and penalty.
    variance : float
        Variance of the smooth's random effects in the mixed model (``VarCorr(fit$mer)``'s
        ``Xr`` row): ``sigma^2 / sp``.
    sp : float
        Smoothing parameter ``sigma^2 / variance`` (``fit$gam$sp``; 1e10 at a zero variance).
    edf : float
        Effective degrees of freedom of the smooth (the sum of its coefficients' ``edf``).
    edf_coef : numpy.ndarray
        ``fit$gam$edf``: per coefficient, fixed part first.
    coef : numpy.ndarray
        ``coef(fit$gam)``: the fixed effects, then the smooth's constrained coefficients.
    Vp : numpy.ndarray
        Their Bayesian posterior covariance (``fit$gam$Vp``).
    fixed_names : tuple of str
        Names of the fixed effects (the non-smooth part) that lead ``coef``.
    XVX : numpy.ndarray
        ``X' V^-1 X`` of the columns of ``coef`` (``V`` the marginal covariance of the
        response), from which the edf and the smooth's test are computed.
    """

    term: SmoothTerm
    smooth: CrSmooth
    variance: float
    sp: float
    edf: float
    edf_coef: np.ndarray
    coef: np.ndarray
    Vp: np.ndarray
    fixed_names: tuple[str, ...]
    XVX: np.ndarray

    def curve(self, x: np.ndarray, *, level: float = 0.95) -> pd.DataFrame:
        """Population-level curve at ``x`` with pointwise intervals (``predict(gam, se.fit=TRUE)``).

        Defined when the fixed part is the intercept alone: ``fit`` is the intercept plus the
        smooth, ``se`` its standard error from ``Vp``, and ``lower``/``upper`` are
        ``fit -+ z se`` with ``z`` the normal quantile of ``level``.
        """
        from scipy import special

        if self.fixed_names != ("Intercept",):
            raise InvalidParameterError(
                "SmoothFit.curve is defined for a fixed part that is the intercept alone; "
                f"this model's fixed part is {list(self.fixed_names)}"
            )
        x = np.asarray(x, dtype=float)
        if x.ndim != 1 or not np.all(np.isfinite(x)):
            raise InvalidParameterError("the `x` of SmoothFit.curve must be finite numbers")
        Xg = np.column_stack([np.ones(len(x)), self.smooth.basis(x)])
        fit = Xg @ self.coef
        se = np.sqrt(np.einsum("ij,ij->i", Xg @ self.Vp, Xg))
        z = float(special.ndtri(0.5 + level / 2.0))
        return pd.DataFrame(
            {"x": x, "fit": fit, "se": se, "lower": fit - z * se, "upper": fit + z * se}
        )


def random_loadings(design, Ts: list[np.ndarray]) -> np.ndarray:
    """``Z Lambda`` of the design's random blocks (dense, ``n x q``)."""
    parts = []
    for block, T in zip(design.random, Ts, strict=True):
        p = block.Z.shape[1]
        ZT = block.Z @ T
        M = np.zeros((len(block.codes), block.n_levels * p))
        rows = np.arange(len(block.codes))
        for t in range(p):
            M[rows, block.codes * p + t] = ZT[:, t]
        parts.append(M)
    return np.hstack(parts)


def smooth_fit(
    design,
    term: SmoothTerm,
    sm: CrSmooth,
    Xc: np.ndarray,
    Ts: list[np.ndarray],
    theta_s: float,
    sigma: float,
) -> SmoothFit:
    """gamm4's ``$gam`` from the mixed-model estimates: coefficients, ``Vp`` and edf."""
    X = design.X.to_numpy(dtype=float)
    y = np.asarray(design.y, dtype=float)
    p, m = X.shape[1], Xc.shape[1]
    ZL = random_loadings(design, Ts)
    inner = np.eye(ZL.shape[1]) + ZL.T @ ZL

    def vinv(M: np.ndarray) -> np.ndarray:  # (I + ZL ZL')^-1 M by Woodbury
        return M - ZL @ np.linalg.solve(inner, ZL.T @ M)

    B = np.eye(p + m)
    B[p:, p:] = sm.UD
    Xo = np.column_stack([X, Xc])
    Xr = Xo @ B
    variance = sigma**2 * theta_s**2
    sp = sigma**2 / variance if variance > 0 else BOUNDARY_SP
    pen = np.zeros(p + m)
    pen[p : p + sm.rank] = sp
    A = Xr.T @ vinv(Xr) + np.diag(pen)
    Ainv = np.linalg.inv(A)
    coef = B @ Ainv @ (Xr.T @ vinv(y))
    Vp = sigma**2 * (B @ Ainv @ B.T)
    Vp = (Vp + Vp.T) / 2.0
    XVX = Xo.T @ vinv(Xo) / sigma**2
    edf_coef = np.einsum("ij,ji->i", Vp, XVX)
    return SmoothFit(
        term=term,
        smooth=sm,
        variance=float(variance),
        sp=float(sp),
        edf=float(edf_coef[p:].sum()),
        edf_coef=edf_coef,
        coef=coef,
        Vp=Vp,
        fixed_names=tuple(str(c) for c in design.X.columns),
        XVX=XVX,
    )


def fit_smooth_model(model, data: pd.DataFrame, rest: str, term: SmoothTerm, start: float):
    """Fit ``model`` (a LinearMixedModel whose formula holds ``term``) by REML or ML.

    The non-smooth part is the formula ``rest``; the smooth adds one fixed column (its null
    space) and one block of ``k - 2`` independent random effects. Sets the attributes listed
    in :class:`models.lmm.LinearMixedModel` for a smooth model and returns ``model``.
    """
    import time

    import models.lmm.engine as engine
    from models._varcorr import random_tables
    from models.formula import build_design, parse_formula

    smooth_column(data, term)
    spec = parse_formula(rest)
    used = data[data[term.column].notna()]
    design = build_design(spec, used)
    if not design.random:
        raise FormulaError(
            f"{model.formula!r} has no random-effects term besides the smooth; add one, "
            "e.g. + (1 | group)"
        )
    x = used.loc[design.rows, term.column].to_numpy(dtype=float)
    smooth_column(pd.DataFrame({term.column: x}), term)
    sm = construct_cr(x, term.k, term.column)
    Xc = sm.basis(x)
    XUD = Xc @ sm.UD
    inp = engine.engine_input(design, dense=XUD[:, : sm.rank], fixed=XUD[:, sm.rank :])
    ctrl = engine.control(optimizer=model.optimizer, max_evals=model.max_evals, tol=model.tol)
    try:
        result, messages, evals = engine.fit(inp, reml=bool(model.reml), ctrl=ctrl)
    except engine.EngineFailure as err:
        from models._errors import ConvergenceError

        raise ConvergenceError(
            f"LinearMixedModel.fit could not fit {model.formula!r}: {err}"
        ) from err
    theta = np.asarray(result.theta, dtype=float)
    sigma = float(result.sigma)
    sizes = inp.block_sizes[:-1]
    Ts, offset = [], 0
    for k in sizes:
        rows, cols = np.tril_indices(k)
        order = np.lexsort((rows, cols))
        T = np.zeros((k, k))
        T[rows[order], cols[order]] = theta[offset : offset + len(rows)]
        Ts.append(T)
        offset += len(rows)
    fit = smooth_fit(design, term, sm, Xc, Ts, abs(float(theta[-1])), sigma)
    table, corr = random_tables(design.random, Ts, sigma, residual=True)
    row = pd.DataFrame(
        {
            "group": ["smooth"],
            "term": [term.text],
            "variance": [fit.variance],
            "sd": [np.sqrt(fit.variance)],
        }
    )
    table = pd.concat([table.iloc[:-1], row, table.iloc[-1:]], ignore_index=True)
    _set_smooth_attributes(model, design, result, messages, evals, fit, x, Ts)
    model.n_dropped_ = int(design.n_dropped + len(data) - len(used))
    model._lazy = {"random_": (table, corr)}
    _set_smooth_tables(model, fit)
    model.seconds_ = float(time.perf_counter() - start)
    model.meta_ = {
        "package_version": __version__,
        "engine": "lmm",
        "backend": "mixedlm",
        "params": model.get_params(),
        "n_used": model.n_obs_,
        "n_excluded": model.n_dropped_,
        "nfev": model.nfev_,
        "optimizer": str(result.optimizer),
        "smooth": term.text,
    }
    return model


def _set_smooth_attributes(model, design, result, messages, evals, fit: SmoothFit, x, Ts) -> None:
    """Set the fit statistics of a smooth model, as ``fit$mer`` of gamm4 reports them."""
    p = design.X.shape[1]
    theta = np.asarray(result.theta, dtype=float)
    model.design_ = design
    model.engine_result_ = result
    model.n_obs_ = int(len(x))
    model.groups_ = {b.group: int(b.n_levels) for b in design.random}
    model.theta_ = theta
    model.sigma_ = float(result.sigma)
    model.beta_ = pd.Series(
        np.asarray(result.beta, dtype=float)[:p], index=list(design.X.columns), name="estimate"
    )
    model.loglik_ = float(result.logLik().value)
    model.deviance_ = -2.0 * model.loglik_
    model.reml_criterion_ = model.deviance_ if model.reml else float("nan")
    # the smooth's null space is a fixed column and its variance a covariance parameter
    model.npar_ = int(p + 1 + len(theta) + 1)
    model.aic_ = float(model.deviance_ + 2 * model.npar_)
    model.bic_ = float(model.deviance_ + model.npar_ * np.log(model.n_obs_))
    model.converged_ = bool(result.converged)
    model.convergence_message_ = " | ".join([str(result.message), *messages])
    model.singular_ = bool(
        any(np.any(np.diag(T) < SINGULAR_TOL) for T in Ts) or abs(theta[-1]) < SINGULAR_TOL
    )
    model.nfev_ = int(evals)
    model.smooth_ = fit
    model._smooth_x = x
    model._fitted_values = np.asarray(result.fitted(), dtype=float)


def _set_smooth_tables(model, fit: SmoothFit) -> None:
    """Set ``fixed_`` and ``vcov_`` as ``summary(fit$gam)`` gives them, and ``smooth_table_``."""
    from models.lmm._smooth_summary import smooth_table

    p = len(fit.fixed_names)
    names = list(fit.fixed_names)
    res_df = model.n_obs_ - float(np.sum(fit.edf_coef))
    cov = fit.Vp[:p, :p]
    model._lazy["fixed_"] = model._fixed_table(fit.coef[:p], cov, np.full(p, res_df), names)
    model._lazy["vcov_"] = pd.DataFrame(cov, index=names, columns=names)
    model.smooth_table_ = smooth_table(fit, fit.XVX, model.n_obs_)
