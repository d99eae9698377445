"""Factor-smooth interactions ``s(x, f, bs="fs", xt="cr")``: a curve per level, as gamm4 fits them.

mgcv's ``fs`` smooth (``smooth.construct.fs.smooth.spec``) builds one basis of ``x`` from all
the data, here the cubic regression spline (:mod:`models.lmm._smooth_cr`) without the
sum-to-zero constraint, and puts it in its natural parametrisation (``nat.param``, type 1):
with ``X = Q R`` and the penalty ``S``, the eigenvectors ``V`` of ``R^-T S R^-1`` turn the
basis into ``Q V``; the ``k - 2`` penalised columns are divided by the square roots of their
eigenvalues, and each group (penalised, null space) is scaled to root mean square 1 over the
data. Every level of ``f`` gets these ``k`` columns times its indicator. The smooth has three
penalties, each a block of independent random effects with one variance in gamm4
(``smooth2random.fs.interaction``): the penalised columns of all levels, and each of the two
null-space columns (the constant and the linear trend) of all levels; no fixed effect. Its
columns are divided by ``||X||_inf`` (smoothCon's penalty scaling, the same for all three).

Which two directions split the null space is left to the eigen-decomposition, where both
eigenvalues are rounding noise. With this basis it is not left to chance: LAPACK reduces the
matrix to tridiagonal form keeping the first coordinate, so one null eigenvector is the null
space's projection of the first coordinate vector, which over the data is the least-squares
line through the first knot's basis function; the other is the line orthogonal to it over the
data (:func:`null_directions`). Reordering the rows or moving a value by 1e-12 leaves gamm4's
fit unchanged to 1e-11 (``tests/models/reference/gamm4_fs.R``). With the thin plate base
(mgcv's default) every penalised column is orthogonal to the null space, the projection is
rounding noise, and so are the directions: that base is refused
(:data:`models.lmm._smooth_spec.FS_TP_REFUSAL`).

``summary(fit$gam)`` tests such a smooth as a random effect (mgcv's ``reTest``, the smooth
having no unpenalised null space): :func:`models.lmm._smooth_summary.random_effect_test`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from models._errors import InvalidParameterError
from models.lmm._smooth_cr import CrBasis, cr_setup
from models.lmm._smooth_spec import SmoothTerm

NULL_DIM = 2
"""Dimension of the cubic regression spline's null space (the constant and the linear trend)."""


def null_directions(R: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """Return the two orthonormal null-space eigenvectors of ``R^-T S R^-1`` LAPACK gives.

    The null space of the cubic regression spline's penalty holds the constant and the linear
    function (``1`` and the knots as knot values), which ``R`` maps to the null space of
    ``R^-T S R^-1``. The first direction is the projection of the first coordinate vector on
    it, the second the direction orthogonal to that within it (``k x 2``).
    """
    # the symmetric tridiagonal reduction keeps e_1, so its null block is spanned by P e_1
    N, _ = np.linalg.qr(R @ np.column_stack([np.ones(len(knots)), knots]))
    c = N[0]
    norm = float(np.hypot(c[0], c[1]))
    return N @ np.array([[c[0], -c[1]], [c[1], c[0]]]) / norm


@dataclass(frozen=True)
class FactorSmooth:
    """A constructed factor smooth: its base basis, the map to mgcv's columns, its levels.

    ``P`` (``k x k``) maps the base basis to mgcv's columns of one level (``k - 2`` penalised,
    then the two null-space directions of :func:`null_directions`); ``scale`` is smoothCon's
    ``||X||_inf^2`` of those columns, by which every penalty is scaled; ``levels`` the factor's
    levels in order.
    """

    term: SmoothTerm
    raw: CrBasis
    P: np.ndarray
    levels: tuple
    scale: float

    @property
    def knots(self) -> np.ndarray:
        """The knots of the base basis."""
        return self.raw.knots

    @property
    def k(self) -> int:
        """Basis dimension of one level."""
        return int(self.P.shape[1])

    @property
    def rank(self) -> int:
        """Penalised columns of one level."""
        return self.k - NULL_DIM

    @property
    def n_coef(self) -> int:
        """Number of its coefficients: ``k`` per level."""
        return self.k * len(self.levels)

    @property
    def UD(self) -> np.ndarray:
        """Map of the random effects to the coefficients: ``1 / ||X||_inf`` on the diagonal."""
        return np.eye(self.n_coef) / np.sqrt(self.scale)

    @property
    def blocks(self) -> tuple[np.ndarray, ...]:
        """The columns of each variance: the penalised ones, then each null direction."""
        start = np.arange(len(self.levels))[:, None] * self.k
        wiggly = (start + np.arange(self.rank)[None, :]).ravel()
        return (wiggly, *(start[:, 0] + self.rank + j for j in range(NULL_DIM)))

    @property
    def fixed(self) -> np.ndarray:
        """No fixed columns: the null space is penalised."""
        return np.arange(0)

    def base(self, x: np.ndarray) -> np.ndarray:
        """Return one level's ``k`` columns at ``x`` (``Predict.matrix`` of the base, times P)."""
        return self.raw(np.asarray(x, dtype=float)) @ self.P

    def design(self, x: np.ndarray, groups) -> np.ndarray:
        """Return the ``n x (k * levels)`` columns at ``x``, each row in its level's columns.

        A level not seen in the fit has zero columns (the population curve).
        """
        Xb = self.base(x)
        groups = np.asarray(groups, dtype=object)
        out = np.zeros((len(Xb), self.n_coef))
        for i, level in enumerate(self.levels):
            inside = groups == level
            out[inside, i * self.k : (i + 1) * self.k] = Xb[inside]
        return out


def construct_factor_smooth(
    x: np.ndarray, groups: pd.Series, levels: list, term: SmoothTerm
) -> tuple[FactorSmooth, np.ndarray]:
    """Build the factor smooth of ``x`` by ``groups`` as smoothCon and gamm4 do.

    Returns the smooth and its ``n x (k * levels)`` columns at the data.
    """
    x = np.asarray(x, dtype=float)
    raw, X, S = cr_setup(x, term.k)
    Q, R = np.linalg.qr(X)
    Rinv = np.linalg.inv(R)
    RSR = Rinv.T @ S @ Rinv
    values, vectors = np.linalg.eigh((RSR + RSR.T) / 2.0)
    rank = term.k - NULL_DIM
    top = np.argsort(-values, kind="stable")[:rank]
    Pw = Rinv @ vectors[:, top] / np.sqrt(values[top])
    Pn = Rinv @ null_directions(R, raw.knots)
    Pw = Pw / np.sqrt(np.mean((X @ Pw) ** 2))
    Pn = Pn / np.sqrt(np.mean((X @ Pn) ** 2))
    P = np.column_stack([Pw, Pn])
    scale = float(np.max(np.abs(X @ P).sum(axis=1)) ** 2)
    smooth = FactorSmooth(term=term, raw=raw, P=P, levels=tuple(levels), scale=scale)
    return smooth, smooth.design(x, groups.to_numpy(dtype=object))


def check_levels(smooth: FactorSmooth, n: int) -> None:
    """Refuse a factor smooth with as many random effects in one block as observations.

    lme4 (and so gamm4) refuses a grouping factor with as many levels as observations.
    """
    q = len(smooth.levels) * smooth.rank
    if q >= n:
        raise InvalidParameterError(
            f"the smooth {smooth.term.text!r}: {len(smooth.levels)} levels of "
            f"{smooth.term.factor!r} times k - 2 = {smooth.rank} penalised columns are {q} "
            f"random effects, not fewer than the {n} observations; reduce k"
        )
