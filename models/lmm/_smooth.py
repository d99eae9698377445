"""Smooth terms of a linear mixed model, built as gamm4 builds them, and their fitted form.

A smooth ``s(x, bs=..., k=K)`` (:mod:`models.lmm._smooth_spec`) starts from its unconstrained
basis and penalty: mgcv's thin plate regression spline (:mod:`models.lmm._smooth_tp`, the
default) or cubic regression spline (:mod:`models.lmm._smooth_cr`). As ``mgcv::smoothCon``
does with ``absorb.cons = TRUE``, the penalty is scaled by ``||X||_inf^2 / ||S||_1``, then the
sum-to-zero constraint ``1'X beta = 0`` is absorbed by the Householder reflection of the column
means of ``X`` (LINPACK's ``qr``, applied, as mgcv does, to the columns whose mean is not
exactly zero). As ``mgcv::smooth2random`` does, the constrained penalty's eigenvectors ``U`` and
values ``d`` turn the basis into ``X U diag(d^-1/2 on the penalised range, 1 on the null
space)``: the penalised columns are one block of independent random effects with one variance
(``sigma^2 / lambda``), the null-space column (the linear trend) a fixed effect. Each smooth
has its own block and variance; a smooth ``by`` a factor is one such smooth per level, its
columns the smooth's times the level's indicator (the constraint is the one of the whole
smooth, as mgcv keeps it). The model is then fitted by REML alongside its other random effects
(:mod:`models.lmm._smooth_fit`), and the coefficients, their Bayesian covariance, effective
degrees of freedom and curves follow ``gamm4``'s ``$gam`` (:class:`SmoothFit`). A factor smooth
(:mod:`models.lmm._smooth_fs`) has three blocks and no fixed column; :func:`engine_columns`
reads any smooth's blocks and fixed columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from models._errors import InvalidParameterError
from models.lmm._smooth_cr import cr_setup
from models.lmm._smooth_spec import SmoothTerm
from models.lmm._smooth_tp import tp_setup

BOUNDARY_SP = 1e10
"""The smoothing parameter gamm4 reports when the smooth's variance is estimated at zero."""


def _householder(c: np.ndarray) -> np.ndarray:
    """LINPACK's (``qr``) reflection ``H`` with ``H c = (-+||c||, 0, ...)``: ``Q`` of ``qr(c)``."""
    norm = np.linalg.norm(c)
    if c[0] != 0.0:
        norm = np.copysign(norm, c[0])
    v = c / norm
    v[0] += 1.0
    return np.eye(len(c)) - np.outer(v, v) / v[0]


def constraint_map(means: np.ndarray) -> np.ndarray:
    """``Z`` (``k x (k-1)``) with ``beta = Z beta_c`` meeting ``means' beta = 0``, as smoothCon.

    Columns whose mean is exactly zero are left alone; the reflection of the other means
    replaces their columns but the last, which is dropped.
    """
    k = len(means)
    indi = np.flatnonzero(means != 0.0)
    H = _householder(means[indi])
    Z = np.eye(k)
    for j in range(len(indi) - 1):
        Z[:, indi[j]] = 0.0
        Z[indi, indi[j]] = H[:, j + 1]
    return np.delete(Z, indi[-1], axis=1)


@dataclass(frozen=True)
class Smooth:
    """A constructed smooth: its basis, constraint, scaled penalty and eigen-split.

    ``raw`` evaluates the unconstrained basis; ``Z`` (``k x (k-1)``) maps constrained to raw
    coefficients; ``S`` is the constrained, scaled penalty and ``S_scale`` the scaling
    (``fit$gam$smooth[[i]]$S.scale``); ``UD`` maps the random/fixed parametrisation
    (penalised columns first) to the constrained coefficients; ``rank`` is the number of
    penalised columns.
    """

    term: SmoothTerm
    raw: Any
    Z: np.ndarray
    S: np.ndarray
    S_scale: float
    UD: np.ndarray
    rank: int

    @property
    def knots(self) -> np.ndarray:
        """The knots (``cr``), or the unique centred values (``tp``)."""
        return self.raw.knots

    @property
    def n_coef(self) -> int:
        """Number of its coefficients (``k - 1``)."""
        return int(self.Z.shape[1])

    @property
    def blocks(self) -> tuple[np.ndarray, ...]:
        """Columns of ``X UD`` that form each random-effect block (one variance each)."""
        return (np.arange(self.rank),)

    @property
    def fixed(self) -> np.ndarray:
        """Columns of ``X UD`` that are fixed effects (the null space)."""
        return np.arange(self.rank, self.n_coef)

    def basis(self, x: np.ndarray) -> np.ndarray:
        """Return the constrained basis at ``x`` (mgcv's ``PredictMat``)."""
        return self.raw(np.asarray(x, dtype=float)) @ self.Z


def construct_smooth(x: np.ndarray, term: SmoothTerm) -> tuple[Smooth, np.ndarray]:
    """Build the smooth of ``x`` as ``smoothCon`` and ``smooth2random`` do.

    Returns the smooth and its constrained model matrix at ``x`` (``smoothCon``'s ``X``).
    """
    x = np.asarray(x, dtype=float)
    setup = tp_setup if term.bs == "tp" else cr_setup
    raw, X, S = setup(x, term.k)
    scale = np.linalg.norm(S, 1) / np.max(np.abs(X).sum(axis=1)) ** 2
    S = S / scale
    Z = constraint_map(X.mean(axis=0))
    Sc = Z.T @ S @ Z
    Sc = (Sc + Sc.T) / 2.0
    values, vectors = np.linalg.eigh(Sc)
    values, vectors = values[::-1], vectors[:, ::-1]  # R's eigen: decreasing
    rank = term.k - 2
    d = np.concatenate([values[:rank], np.ones(term.k - 1 - rank)])
    smooth = Smooth(
        term=term, raw=raw, Z=Z, S=Sc, S_scale=float(scale), UD=vectors / np.sqrt(d), rank=rank
    )
    return smooth, X @ Z


# ---------------------------------------------------------------------------------------------
# the fitted smooths


@dataclass(frozen=True)
class FittedSmooth:
    """One fitted smooth (one row of ``summary(fit$gam)$s.table``).

    Attributes
    ----------
    label : str
        mgcv's label: ``s(x)``, or ``s(x):fLEVEL`` for the level of a ``by`` factor ``f``, or
        ``s(x,f)`` for a factor smooth.
    smooth : Smooth or FactorSmooth
        Basis, constraint and penalty (a factor smooth's:
        :class:`models.lmm._smooth_fs.FactorSmooth`).
    level : object or None
        The ``by`` factor's level this smooth belongs to (None without ``by``).
    variance : float
        Variance of its random effects in the mixed model (``VarCorr(fit$mer)``): ``sigma^2 /
        sp`` (a factor smooth's: that of its wiggly part).
    sp : float
        Smoothing parameter ``sigma^2 / variance`` (``fit$gam$sp``; 1e10 at a zero variance).
    edf : float
        Effective degrees of freedom (the sum of its coefficients' ``edf``).
    first : int
        Position of its first coefficient in :attr:`SmoothFit.coef` (it has ``k - 1``).
    fixed_row : numpy.ndarray or None
        The parametric design row its curve adds (the intercept, and the ``by`` level's main
        effect); None when the fixed part holds more than that, and for a factor smooth.
    variances, sps : tuple of float
        Every variance of the smooth and its smoothing parameter, in mgcv's order of
        ``fit$gam$sp``: one for a smooth; three for a factor smooth (its wiggly part, then the
        two directions of its null space, :class:`models.lmm._smooth_fs.FactorSmooth`).
    """

    label: str
    smooth: Any
    level: Any
    variance: float
    sp: float
    edf: float
    first: int
    fixed_row: np.ndarray | None
    variances: tuple[float, ...] = ()
    sps: tuple[float, ...] = ()

    @property
    def columns(self) -> slice:
        """The positions of its coefficients in :attr:`SmoothFit.coef`."""
        return slice(self.first, self.first + self.smooth.n_coef)

    @property
    def is_factor_smooth(self) -> bool:
        """Whether it is a factor smooth ``s(x, f, bs="fs")``: a curve per level of ``f``."""
        return self.smooth.term.factor is not None

    @property
    def names(self) -> list[str]:
        """Names of its variances: the label, or mgcv's ``label1, label2, ...`` for several."""
        if len(self.variances) <= 1:
            return [self.label]
        return [f"{self.label}{i + 1}" for i in range(len(self.variances))]

    def design(self, x: np.ndarray, by: pd.Series | np.ndarray | None) -> np.ndarray:
        """Its model-matrix columns at ``x`` (zero outside its ``by`` level).

        For a factor smooth ``by`` holds the factor's values; a level not seen in the fit has
        zero columns.
        """
        if self.is_factor_smooth:
            return self.smooth.design(x, by)
        X = self.smooth.basis(x)
        if self.smooth.term.by is None:
            return X
        return X * (np.asarray(by, dtype=object) == self.level)[:, None]


def pick_smooth(smooths: Sequence[Any], term: str | int | None, *, where: str = "") -> Any:
    """Return the smooth of ``smooths`` named by its ``label`` or position (None: the only one).

    Shared by the linear and the ordinal mixed model's fitted smooths; ``where`` prefixes the
    error (``"OrdinalMixedModel.smooth_: "``).
    """
    if term is None and len(smooths) == 1:
        return smooths[0]
    if isinstance(term, (int, np.integer)) and not isinstance(term, bool):
        if 0 <= term < len(smooths):
            return smooths[int(term)]
    for s in smooths:
        if s.label == term:
            return s
    labels = [s.label for s in smooths]
    raise InvalidParameterError(
        f"{where}name one smooth by its label or position: one of {labels} or 0 to "
        f"{len(smooths) - 1}; got {term!r}"
    )


@dataclass(frozen=True)
class SmoothFit:
    """The fitted smooths, as gamm4's ``$gam`` reports them.

    Attributes
    ----------
    smooths : tuple of FittedSmooth
        One per smooth (per level of a ``by`` factor), in formula order.
    coef : numpy.ndarray
        ``coef(fit$gam)``: the fixed effects, then each smooth's constrained coefficients.
    Vp : numpy.ndarray
        Their Bayesian posterior covariance (``fit$gam$Vp``).
    edf_coef : numpy.ndarray
        ``fit$gam$edf``: per coefficient.
    fixed_names : tuple of str
        Names of the fixed effects (the non-smooth part) that lead ``coef``.
    XVX : numpy.ndarray
        ``X' V^-1 X`` of the columns of ``coef`` (``V`` the marginal covariance of the
        response), from which the edf and the smooths' tests are computed.
    S_lambda : numpy.ndarray or None
        The penalty of ``coef``: every smooth's penalties times their smoothing parameters.
    """

    smooths: tuple[FittedSmooth, ...]
    coef: np.ndarray
    Vp: np.ndarray
    edf_coef: np.ndarray
    fixed_names: tuple[str, ...]
    XVX: np.ndarray
    S_lambda: np.ndarray | None = None

    @property
    def labels(self) -> list[str]:
        """The smooths' labels, in order."""
        return [s.label for s in self.smooths]

    def component(self, term: str | int | None = None) -> FittedSmooth:
        """Return the smooth named by its label (``"s(x)"``) or position (None: the only one)."""
        return pick_smooth(self.smooths, term)

    def curve(
        self, x: np.ndarray, *, term: str | int | None = None, level: float = 0.95
    ) -> pd.DataFrame:
        """Population-level curve of one smooth at ``x`` with pointwise intervals.

        ``fit`` is the smooth plus its parametric row (the intercept, and for a ``by`` level
        that level's main effect: ``predict(gam, se.fit=TRUE)`` at that level, the other
        smooths at zero), ``se`` its standard error from ``Vp``, and ``lower``/``upper`` are
        ``fit -+ z se`` with ``z`` the normal quantile of ``level``. ``term`` names the smooth
        (its label or position; may be left out when there is one).
        """
        from scipy import special

        part = self.component(term)
        if part.is_factor_smooth:
            raise InvalidParameterError(
                f"SmoothFit.curve draws one curve; {part.label} is a factor smooth, a curve per "
                f"level of {part.smooth.term.factor!r}: use predict() with that column"
            )
        if part.fixed_row is None:
            raise InvalidParameterError(
                f"SmoothFit.curve of {part.label} is defined for a fixed part that is the "
                "intercept (and a by factor's main effect) alone; this model's fixed part is "
                f"{list(self.fixed_names)}"
            )
        x = np.asarray(x, dtype=float)
        if x.ndim != 1 or not np.all(np.isfinite(x)):
            raise InvalidParameterError("the `x` of SmoothFit.curve must be finite numbers")
        p = len(self.fixed_names)
        index = np.r_[np.arange(p), np.arange(self.coef.size)[part.columns]]
        Xg = np.column_stack([np.tile(part.fixed_row, (len(x), 1)), part.smooth.basis(x)])
        fit = Xg @ self.coef[index]
        V = self.Vp[np.ix_(index, index)]
        se = np.sqrt(np.einsum("ij,ij->i", Xg @ V, Xg))
        z = float(special.ndtri(0.5 + level / 2.0))
        return pd.DataFrame(
            {"x": x, "fit": fit, "se": se, "lower": fit - z * se, "upper": fit + z * se}
        )


def random_loadings(design, Ts: list[np.ndarray]):
    """``Z Lambda`` of the design's random blocks (sparse CSR, ``n x q``; ``q`` may be 0)."""
    from scipy import sparse

    parts = []
    for block, T in zip(design.random, Ts, strict=True):
        p = block.Z.shape[1]
        ZT = block.Z @ T
        n = len(block.codes)
        rows = np.repeat(np.arange(n), p)
        cols = (np.asarray(block.codes)[:, None] * p + np.arange(p)[None, :]).ravel()
        parts.append(sparse.csr_matrix((ZT.ravel(), (rows, cols)), shape=(n, block.n_levels * p)))
    if not parts:
        return sparse.csr_matrix((len(design.rows), 0))
    return sparse.hstack(parts, format="csr")


@dataclass(frozen=True)
class SmoothPart:
    """A smooth (or a by level) before the fit: its constructed smooth, columns and row."""

    label: str
    smooth: Any
    level: Any
    X: np.ndarray
    fixed_row: np.ndarray | None


def engine_columns(parts: list[SmoothPart]) -> tuple[list[np.ndarray], np.ndarray, list[int]]:
    """Return the smooths as the engine takes them: random blocks, fixed columns, owners.

    Each part's columns ``X UD`` split into its random-effect blocks (one variance each, in
    order) and its fixed null-space columns (``n x 0`` when no smooth has any).
    """
    dense, fixed, owner = [], [], []
    for i, part in enumerate(parts):
        XU = part.X @ part.smooth.UD
        for block in part.smooth.blocks:
            dense.append(XU[:, block])
            owner.append(i)
        fixed.append(XU[:, part.smooth.fixed])
    n = parts[0].X.shape[0]
    return dense, np.column_stack([np.zeros((n, 0)), *fixed]), owner


def smooth_fit(
    design, parts: list[SmoothPart], Ts: list[np.ndarray], thetas: np.ndarray, sigma: float
) -> SmoothFit:
    """gamm4's ``$gam`` from the mixed-model estimates: coefficients, ``Vp`` and edf.

    ``thetas`` holds one relative scale per random block of :func:`engine_columns`.
    """
    from scipy import linalg, sparse
    from scipy.sparse import linalg as sparse_linalg

    X = design.X.to_numpy(dtype=float)
    y = np.asarray(design.y, dtype=float)
    p = X.shape[1]
    ZL = random_loadings(design, Ts)
    q = ZL.shape[1]
    # I + ZL'ZL stays sparse: with thousands of participants (and crossed stories) a dense
    # copy would take gigabytes; its sparse LU solves the few right-hand sides needed here
    factor = (
        sparse_linalg.splu((sparse.identity(q, format="csc") + ZL.T @ ZL).tocsc()) if q else None
    )

    def vinv(M: np.ndarray) -> np.ndarray:  # (I + ZL ZL')^-1 M by Woodbury
        if factor is None:
            return M
        return M - ZL @ factor.solve(np.asarray(ZL.T @ M))

    B = linalg.block_diag(np.eye(p), *[part.smooth.UD for part in parts])
    Xo = np.column_stack([X, *[part.X for part in parts]])
    Xr = Xo @ B
    variances = sigma**2 * np.asarray(thetas, dtype=float) ** 2
    sps = [sigma**2 / v if v > 0 else BOUNDARY_SP for v in variances]
    pen, firsts, first, j = np.zeros(Xo.shape[1]), [], p, 0
    for part in parts:
        for block in part.smooth.blocks:
            pen[first + block] = sps[j]
            j += 1
        firsts.append(first)
        first += part.X.shape[1]
    A = Xr.T @ vinv(Xr) + np.diag(pen)
    Ainv = np.linalg.inv(A)
    coef = B @ Ainv @ (Xr.T @ vinv(y))
    Vp = sigma**2 * (B @ Ainv @ B.T)
    Vp = (Vp + Vp.T) / 2.0
    XVX = Xo.T @ vinv(Xo) / sigma**2
    edf_coef = np.einsum("ij,ji->i", Vp, XVX)
    Binv = linalg.block_diag(np.eye(p), *[np.linalg.inv(part.smooth.UD) for part in parts])
    S_lambda = Binv.T @ (pen[:, None] * Binv)
    smooths, j = [], 0
    for part, f in zip(parts, firsts, strict=True):
        nb = len(part.smooth.blocks)
        smooths.append(
            FittedSmooth(
                label=part.label,
                smooth=part.smooth,
                level=part.level,
                variance=float(variances[j]),
                sp=float(sps[j]),
                edf=float(edf_coef[f : f + part.X.shape[1]].sum()),
                first=f,
                fixed_row=part.fixed_row,
                variances=tuple(float(v) for v in variances[j : j + nb]),
                sps=tuple(float(v) for v in sps[j : j + nb]),
            )
        )
        j += nb
    return SmoothFit(
        smooths=tuple(smooths),
        coef=coef,
        Vp=Vp,
        edf_coef=edf_coef,
        fixed_names=tuple(str(c) for c in design.X.columns),
        XVX=XVX,
        S_lambda=(S_lambda + S_lambda.T) / 2.0,
    )
