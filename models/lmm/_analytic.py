"""The profiled deviance of a linear mixed model with its exact gradient and Hessian.

Hand-written because no maintained library gives the second derivatives of lme4's profiled
deviance in ``theta``: Newton's method needs them to refit a model to a new response in a few
steps, and lmerTest's Satterthwaite df need the Hessian of the deviance in ``(theta, sigma)`` and
the derivatives of ``Cov(beta)``, which :mod:`models.lmm._satterthwaite` otherwise takes by
finite differences (41 deviance evaluations for four variance parameters).

Notation (lme4's): ``y = X beta + Z b + e``, ``b = Lambda u``, ``u ~ N(0, sigma^2 I)``,
``e ~ N(0, sigma^2 I)``; ``Lambda`` is block diagonal with one lower-triangular ``T_b`` per level
of block ``b``, filled column-major from ``theta``. With ``G = Lambda Lambda'``,
``V = I + Z G Z'``, ``A = Lambda' Z'Z Lambda + I`` (so ``|V| = |A|``) and
``P = V^-1 - V^-1 X (X'V^-1 X)^-1 X'V^-1``, the profiled REML deviance is
``log|A| + log|X'V^-1 X| + nu (1 + log(2 pi r^2 / nu))`` with ``r^2 = y'P y`` and ``nu = n - p``
(ML: no ``log|X'V^-1 X|`` and ``nu = n``). Writing ``G_k``, ``G_kl`` for the derivatives of ``G``,
``M = Z'P Z``, ``N = Z'V^-1 Z`` and ``w = Z'P y``:

* ``d log|A| + d log|X'V^-1X|`` is ``tr(G_k M)`` (ML: ``tr(G_k N)``), and its second derivative
  ``tr(G_kl M) - tr(G_k M G_l M)``;
* ``d r^2 = -w'G_k w`` and ``d2 r^2 = -w'G_kl w + 2 w'G_k M G_l w``;
* ``d (X'V^-1X)^-1 = C F'G_k F C`` with ``C = (X'V^-1X)^-1`` and ``F = Z'V^-1X``.

Everything is computed from ``Z'Z``, ``Z'X``, ``X'X`` (fixed by the design) and ``Z'y``, ``X'y``,
``y'y`` (one product per response). ``A`` is factored by eliminating its largest block, whose
part of ``A`` is block diagonal by level, and a dense Cholesky factor of the Schur complement on
the rest. While every diagonal of ``T`` is at least :data:`DIRECT` the derivatives are taken in
the space scaled by ``Lambda``, where ``Lambda' N Lambda = I - A^-1``; below it, in the original
space with ``N = Z'Z - Z'Z Lambda A^-1 Lambda' Z'Z`` (from the Schur blocks; exact at the
boundary). Neither ``N`` nor ``M`` is formed whole: their eliminated block is a block diagonal
less a product of rank ``r + p`` (:class:`_Split`), so no ``q_e x q_e`` matrix is built. Where
the eliminated block is one intercept whose levels take few distinct sizes (stories rated by a
handful of people), the ``r x r`` products over its levels are sums over the sizes
(:class:`_Grouped`). The
deviance is even in each column of every ``T``, so :func:`models.lmm._newton.newton` minimizes
it without bounds and makes the signs positive at the end: a variance at zero is then an ordinary
minimum, reached by Newton's method without a second optimizer.

What it offers: :class:`ProfiledDeviance` (built once per design; :meth:`~ProfiledDeviance.evaluate`
gives the deviance, its gradient and Hessian in ``theta``, ``beta``, ``sigma`` and the
Satterthwaite pieces as an :class:`Evaluation`), :func:`dense_enough` (whether a design is small
enough for it), :func:`lower_entries` (lme4's column-major order of ``theta``) and
:data:`SINGULAR_TOL`. Outside :mod:`models.lmm` these are reached through
:mod:`models.lmm.engine`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from models.lmm._satterthwaite import varpar_information

DIRECT = 1e-3
"""Smallest diagonal of a relative covariance factor for which ``N`` is read through
``Lambda^-1`` (the rounding error of that route grows as the inverse square of the diagonal)."""

SINGULAR_TOL = 1e-4
"""A fit is singular where a diagonal of a relative covariance factor is below this (lme4's
rule; :class:`models.lmm.LinearMixedModel` reads it from here, a module without pandas)."""

MAX_COLUMNS = 1500
"""Most random-effect columns the dense evaluator takes (it holds a few q x q matrices)."""

MAX_REST = 400
"""Most columns left after the largest block is eliminated: the dense Schur complement, whose
inverse each Newton step needs. A larger design is refitted by mixedlm's sparse evaluator."""


def lower_entries(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the rows and columns of ``theta``'s entries in a ``k x k`` factor.

    lme4's order: the lower triangle, column by column.
    """
    rows, cols = np.tril_indices(k)
    order = np.lexsort((rows, cols))
    return rows[order], cols[order]


def dense_enough(blocks: Any) -> bool:
    """Whether a design (``(codes, Z)`` per block) suits the dense evaluator."""
    sizes = [(int(np.max(codes)) + 1 if len(codes) else 0) * np.shape(Z)[1] for codes, Z in blocks]
    q = sum(sizes)
    return q <= MAX_COLUMNS and q - max(sizes, default=0) <= MAX_REST


@dataclass(frozen=True)
class _Block:
    """One random-effects block in the evaluator's column layout.

    The layout is term-major: the column of level ``l`` of term ``t`` is ``offset + t * n + l``.
    """

    k: int  # terms
    n: int  # levels
    offset: int  # first column in the layout
    theta: np.ndarray  # positions in theta of this block's entries (column-major lower)
    rows: np.ndarray  # row in T of each entry
    cols: np.ndarray  # column in T of each entry

    def __post_init__(self) -> None:
        # pairs of entries with a non-zero second derivative of T T': one column of T
        x, y = np.nonzero(self.cols[:, None] == self.cols[None, :])
        object.__setattr__(self, "pairs", (x, y))
        object.__setattr__(self, "pair_at", (self.theta[x], self.theta[y]))
        terms = [
            slice(self.offset + t * self.n, self.offset + (t + 1) * self.n) for t in range(self.k)
        ]
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "span", slice(self.offset, self.offset + self.k * self.n))
        # the block's entries are consecutive in theta: a slice indexes them without a copy
        first = int(self.theta[0]) if len(self.theta) else 0
        object.__setattr__(self, "at", slice(first, first + len(self.theta)))
        # d (T T') / dT[i, j] = e_i t' + t e_i' (t = T[:, j]) is linear in T: one constant map
        k, e = self.k, len(self.rows)
        linear = np.zeros((e, k, k, k, k))  # [entry, a, b] <- T[c, d]
        for x, (i, j) in enumerate(zip(self.rows, self.cols, strict=True)):
            for c in range(k):
                linear[x, i, c, c, j] += 1.0
                linear[x, c, i, c, j] += 1.0
        object.__setattr__(self, "linear", linear.reshape(e * k * k, k * k))

    def second_derivatives(self) -> np.ndarray:
        """``d2 (T T') / dT[ix, j] dT[iy, j] = e_ix e_iy' + e_iy e_ix'`` for every pair."""
        x, y = self.pairs
        out = np.zeros((len(x), self.k, self.k))
        at = np.arange(len(x))
        np.add.at(out, (at, self.rows[x], self.rows[y]), 1.0)
        np.add.at(out, (at, self.rows[y], self.rows[x]), 1.0)
        return out

    def first_derivatives(self, T: np.ndarray) -> np.ndarray:
        """``d (T T') / dT[i, j] = e_i t' + t e_i'`` (``t = T[:, j]``) for every entry."""
        return (self.linear @ T.reshape(-1)).reshape(len(self.rows), self.k, self.k)

    @property
    def size(self) -> int:
        return self.k * self.n

    def term(self, t: int) -> slice:
        return self.terms[t]


@dataclass
class Evaluation:
    """The profiled deviance at ``theta`` and what the derivatives and the tests need."""

    theta: np.ndarray
    deviance: float
    beta: np.ndarray
    sigma: float
    r2: float
    cov_unscaled: np.ndarray  # (X'V^-1 X)^-1
    gradient: np.ndarray | None = None  # of the profiled deviance
    hessian: np.ndarray | None = None  # of the profiled deviance
    make_varpar: Any = None  # builds the VarparCovariance below (only the last step needs it)
    _varpar: Any = None

    @property
    def varpar(self) -> Any:
        """Return lmerTest's VarparCovariance (Hessian in ``(theta, sigma)``, ``d Cov(beta)``)."""
        if self._varpar is None and self.make_varpar is not None:
            self._varpar = self.make_varpar()
        return self._varpar


GROUPED_BUDGET = 4_000_000
"""Most numbers :class:`_Grouped` keeps (``r x r`` per distinct level size): 32 MB."""


class _Grouped:
    """``C_re diag(w) C_er`` for level weights that depend on the level's size alone.

    Where the eliminated block is one intercept, its part of ``A`` at level ``l`` is
    ``t^2 d_l + 1`` (``d_l``: the level's rows), so every weight the evaluator puts on a level
    is a function of ``d_l``. Stories rated by a handful of participants take a few distinct
    sizes (the demo study: 6 among 430), so these ``r x r`` products, otherwise one
    ``r x r x q_e`` product each, are a weighted sum of one matrix per size, summed once.
    """

    def __init__(self, sizes: np.ndarray, per_size: np.ndarray) -> None:
        self.sizes, self.per_size = sizes, per_size
        self.r = int(round(np.sqrt(per_size.shape[1])))

    @classmethod
    def of(cls, D0: np.ndarray, C_re: np.ndarray) -> _Grouped | None:
        """Return the grouped products of a design, or None where they would not pay."""
        n, k = D0.shape[0], D0.shape[1]
        r = C_re.shape[0]
        if k != 1 or not r:
            return None
        sizes, which = np.unique(D0[:, 0, 0], return_inverse=True)
        if 4 * len(sizes) > n or len(sizes) * r * r > GROUPED_BUDGET:
            return None
        per_size = np.empty((len(sizes), r * r))
        for v in range(len(sizes)):
            part = C_re[:, which == v]
            per_size[v] = (part @ part.T).reshape(-1)
        return cls(sizes, per_size)

    def gram(self, weight: np.ndarray) -> np.ndarray:
        """``C_re diag(w) C_er`` with ``w`` given per distinct size (``self.sizes``' order)."""
        return (weight @ self.per_size).reshape(self.r, self.r)


class _Factor:
    """``A`` at one ``theta``: the eliminated block's inverse and the Schur complement."""

    def __init__(self, model: ProfiledDeviance, Ts: list[np.ndarray]) -> None:
        from scipy.linalg import lapack

        self.model, self.Ts = model, Ts
        e = model.blocks[model.first]
        q_e, n_e, k_e = e.size, e.n, e.k
        self.q_e, self.n_e, self.k_e = q_e, n_e, k_e
        Te = Ts[model.first]
        # the eliminated block's part of A: one k x k block per level, T' (Z'Z)_ll T + I
        if k_e == 1:
            d = model.D0[:, 0, 0] * Te[0, 0] ** 2 + 1.0
            self.Dinv = (1.0 / d)[:, None, None]
            logdet = float(np.log(d).sum())
        else:
            D = Te.T @ model.D0 @ Te + np.eye(k_e)
            self.Dinv = np.linalg.inv(D)
            sign, logs = np.linalg.slogdet(D)
            if np.any(sign <= 0):
                raise np.linalg.LinAlgError("a diagonal block of A is not positive definite")
            logdet = float(np.sum(logs))
        self.inner: np.ndarray | None = None
        if model.q > q_e:
            from scipy.linalg import blas

            # Lambda_r' (Z'Z)_re Lambda_e and Lambda_r' (Z'Z)_rr Lambda_r + I
            if model.grouped is not None:
                # D^-1 A_er with A_er = t (Lambda_r' C_re)' for the one term eliminated
                scale = self.Dinv[:, 0, 0] * Te[0, 0]
                self.W = scale[:, None] * model.left(model.C_re, Ts, rest=True).T
                # S = Lambda_r' (C_rr - t^2 C_re D^-1 C_er) Lambda_r + I, by level size
                t2 = Te[0, 0] ** 2
                self.inner = model.C_rr - model.grouped.gram(t2 / (t2 * model.grouped.sizes + 1))
                S = model.left(model.left(self.inner, Ts, rest=True).T, Ts, rest=True)
                S.flat[:: S.shape[0] + 1] += 1.0
            else:
                Are = _right(model.left(model.C_re, Ts, rest=True), Te)
                self.W = self.dinv(Are.T)  # D^-1 A_er
                Arr = model.left(model.left(model.C_rr, Ts, rest=True).T, Ts, rest=True)
                Arr.flat[:: Arr.shape[0] + 1] += 1.0
                if k_e == 1:  # S = A_rr - A_re D^-1 A_er as one symmetric rank-k update
                    half = Are * np.sqrt(self.Dinv[:, 0, 0])
                    S = blas.dsyrk(-1.0, half, beta=1.0, c=Arr, lower=1, overwrite_c=1)
                else:
                    S = Arr - Are @ self.W
            L, info = lapack.dpotrf(S, lower=1, clean=1, overwrite_a=1)
            if info != 0:
                raise np.linalg.LinAlgError("the Schur complement is not positive definite")
            self.L = L
            logdet += 2.0 * float(np.log(L.diagonal()).sum())
        else:
            self.W = np.zeros((q_e, 0))
            self.L = np.zeros((0, 0))
        self.logdet = logdet

    def cl(self, B: np.ndarray) -> np.ndarray:
        """``Z'Z Lambda B`` (only the evaluation at the boundary needs it)."""
        return self.model.gram_times(self.model.left(B, self.Ts, transpose=True))

    def dinv(self, B: np.ndarray) -> np.ndarray:
        """``D^-1 B`` for the eliminated block's diagonal part ``D``."""
        return _per_level(self.Dinv, B)

    def n_split(self) -> _Split:
        """``N = Z'V^-1 Z = Z'Z - Y'A^-1 Y`` with ``Y = Lambda'Z'Z``, exact at the boundary.

        With ``A^-1 = diag(D^-1, 0) + [-W; I] S^-1 [-W; I]'`` this is
        ``Z'Z - Y_e'D^-1 Y_e - Y~'S^-1 Y~`` with ``Y~ = Y_r - W'Y_e``. The eliminated block's
        own part of ``Z'Z`` is block diagonal by level, so its part of ``N`` is a block
        diagonal less ``Z_e'Z_e`` with ``Z = L^-1 Y~`` (rank ``r``, the columns left after the
        elimination), and its part beside the others is ``E - Z_e'Z_r`` with ``E`` the rest of
        ``Z'Z - Y_e'D^-1 Y_e`` there.
        """
        from scipy.linalg import lapack

        model, q_e = self.model, self.q_e
        Te = self.Ts[model.first]
        Ybd = np.swapaxes(Te, 0, 1) @ model.D0  # per level, (Lambda_e' Z'Z)_ll
        delta = model.D0 - np.swapaxes(Ybd, 1, 2) @ self.Dinv @ Ybd
        if model.q == q_e:
            return _Split.eliminated_only(q_e, delta)
        C_er = model.C_re.T
        Yer = model.left(C_er, self.Ts, rest=False)  # Lambda_e' Z'Z_er
        DYer = self.dinv(Yer)
        E = C_er - _per_level(np.swapaxes(Ybd, 1, 2), DYer)
        tilde = np.empty((model.q - q_e, model.q))
        tilde[:, :q_e] = model.left(model.C_re, self.Ts, rest=True)  # Lambda_r' Z'Z_r.
        tilde[:, :q_e] -= _per_level(np.swapaxes(Ybd, 1, 2), self.W).T
        if self.inner is not None:
            # W'Y_er and Y_er'D^-1 Y_er are both t^2 C_re D^-1 C_er (Factor's C_rr - inner)
            tilde[:, q_e:] = model.left(self.inner, self.Ts, rest=True)
            Xrr = self.inner.copy()
        else:
            tilde[:, q_e:] = model.left(model.C_rr, self.Ts, rest=True)
            tilde[:, q_e:] -= self.W.T @ Yer
            Xrr = model.C_rr - Yer.T @ DYer
        Zs, info = lapack.dtrtrs(self.L, tilde, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("cannot solve with the Schur complement")
        Zr = Zs[:, q_e:]
        Xrr -= Zr.T @ Zr
        gram = None
        if model.gram_by_size:
            # P'P = L^-1 T_e T_e' L^-T with T_e = Lambda_r' C_re D^-1 (tilde's eliminated part)
            t2 = Te[0, 0] ** 2
            TT = model.grouped.gram(1.0 / (t2 * model.grouped.sizes + 1) ** 2)
            TT = model.left(model.left(TT, self.Ts, rest=True).T, self.Ts, rest=True)
            half, info = lapack.dtrtrs(self.L, TT, lower=1)
            gram, info2 = lapack.dtrtrs(self.L, np.ascontiguousarray(half.T), lower=1)
            if info != 0 or info2 != 0:
                raise np.linalg.LinAlgError("cannot solve with the Schur complement")
            gram = 0.5 * (gram + gram.T)
        return _Split(q_e, delta, np.ascontiguousarray(Zs[:, :q_e].T), -Zr, E, Xrr, gram)

    def solve(self, B: np.ndarray) -> np.ndarray:
        """``A^-1 B`` for a matrix ``B`` of the layout's rows."""
        from scipy.linalg import lapack

        q_e = self.q_e
        top = self.dinv(B[:q_e])
        if not self.L.size:
            return top
        z, info = lapack.dpotrs(self.L, B[q_e:] - self.W.T @ B[:q_e], lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("cannot solve with the Schur complement")
        out = np.empty((B.shape[0], z.shape[1]))
        np.subtract(top, self.W @ z, out=out[:q_e])
        out[q_e:] = z
        return out

    def i_minus_inverse(self) -> _Split:
        """``I - A^-1``, which is ``Lambda' N Lambda``.

        With ``S = L L'``: its eliminated block is ``I - D^-1 - P P'`` with ``P = W Linv'``,
        its part beside the others ``S^-1 W'`` transposed, which is ``P Linv``, and the rest
        ``I - S^-1``.
        """
        from scipy.linalg import blas, lapack

        q_e, k = self.q_e, self.k_e
        if k == 1:
            delta = 1.0 - self.Dinv
        else:
            delta = -self.Dinv
            delta[:, np.arange(k), np.arange(k)] += 1.0
        if not self.L.size:
            return _Split.eliminated_only(q_e, delta)
        Linv, info = lapack.dtrtri(self.L, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("cannot invert the Schur complement")
        P = blas.dtrmm(1.0, Linv, self.W.T, lower=1).T  # W Linv'
        Xrr = -(Linv.T @ Linv)
        Xrr.flat[:: Xrr.shape[0] + 1] += 1.0
        gram = None
        if self.model.gram_by_size:  # P'P = Linv W'W Linv', W'W = t^2 A_re D^-2 A_er
            model, Ts = self.model, self.Ts
            t2 = Ts[model.first][0, 0] ** 2
            WW = model.grouped.gram(t2 / (t2 * model.grouped.sizes + 1) ** 2)
            gram = _congruence(Linv, model.left(model.left(WW, Ts, rest=True).T, Ts, rest=True))
        return _Split(q_e, delta, P, Linv, None, Xrr, gram)


class _Split:
    """A symmetric ``q x q`` matrix that is never formed whole.

    In the layout's order (the eliminated block first, then the ``r`` other columns)::

        X = [ bd(delta) - P P'     E + P B ]
            [ (E + P B)'           X_rr    ]

    ``delta`` holds the eliminated block's diagonal part per level (``n x k x k``), ``P``
    (``q_e x m``) and ``B`` (``m x r``) its low-rank parts, ``E`` (``q_e x r``, or None) an
    explicit remainder. With hundreds of levels in the eliminated block (stories) this
    replaces products of order ``q_e^2`` by products of order ``q_e m^2``.
    """

    def __init__(
        self,
        q_e: int,
        delta: np.ndarray,
        P: np.ndarray,
        B: np.ndarray,
        E: np.ndarray | None,
        Xrr: np.ndarray,
        gram: np.ndarray | None = None,
    ) -> None:
        self.q_e, self.delta, self.P, self.B, self.E, self.Xrr = q_e, delta, P, B, E, Xrr
        self.P_gram = gram  # P'P where known without forming it from P (one intercept)
        self._gram: np.ndarray | None = None

    @classmethod
    def eliminated_only(cls, q_e: int, delta: np.ndarray) -> _Split:
        """Return the matrix of a design with one block: its block diagonal alone."""
        return cls(q_e, delta, np.zeros((q_e, 0)), np.zeros((0, 0)), None, np.zeros((0, 0)))

    def minus_gram(self, F: np.ndarray) -> _Split:
        """Return the matrix less ``F F'`` (``F``: ``q x m``)."""
        if not F.shape[1]:
            return self
        q_e = self.q_e
        Fe, Fr = F[:q_e], F[q_e:]
        P = np.hstack([self.P, Fe])
        B = np.vstack([self.B, -Fr.T])
        gram = None
        if self.P_gram is not None:  # [P Fe]'[P Fe] from P'P and the thin products
            m = self.P.shape[1]
            gram = np.empty((P.shape[1], P.shape[1]))
            gram[:m, :m] = self.P_gram
            gram[:m, m:] = self.P.T @ Fe
            gram[m:, :m] = gram[:m, m:].T
            gram[m:, m:] = Fe.T @ Fe
        return _Split(q_e, self.delta, P, B, self.E, self.Xrr - Fr @ Fr.T, gram)

    def matmul(self, V: np.ndarray) -> np.ndarray:
        """Return the matrix times ``V`` (``q x K``)."""
        q_e = self.q_e
        Ve, Vr = V[:q_e], V[q_e:]
        PtV = self.P.T @ Ve
        out = np.empty_like(V)
        out[:q_e] = _per_level(self.delta, Ve) + self.P @ (self.B @ Vr - PtV)
        out[q_e:] = self.B.T @ PtV + self.Xrr @ Vr
        if self.E is not None:
            out[:q_e] += self.E @ Vr
            out[q_e:] += self.E.T @ Ve
        return out

    def gram(self, b: _Block) -> np.ndarray:
        """``P_a' P_c`` for every pair of the eliminated block's terms (``k x k x m x m``)."""
        if self._gram is not None:
            return self._gram
        from scipy.linalg import blas

        k, n, m = b.k, b.n, self.P.shape[1]
        if k == 1 and self.P_gram is not None:
            G = self.P_gram[None, None]
        elif k == 1:
            upper = blas.dsyrk(1.0, self.P.T) if m else np.zeros((0, 0))  # P'P, upper half
            diagonal = upper.diagonal().copy()
            full = upper + upper.T  # the lower half of dsyrk's result is zero
            np.fill_diagonal(full, diagonal)
            G = full[None, None]
        else:
            Pk = self.P.reshape(k, n, m)
            G = np.empty((k, k, m, m))
            for a in range(k):
                for c in range(a, k):
                    G[a, c] = Pk[a].T @ Pk[c]
                    G[c, a] = G[a, c].T
        self._gram = G
        return G

    def block(self, model: ProfiledDeviance, x: int, y: int) -> np.ndarray:
        """Return the part of blocks ``x`` and ``y`` (not both the eliminated one)."""
        bx, by, q_e = model.blocks[x], model.blocks[y], self.q_e
        if x == model.first or y == model.first:
            other = by if x == model.first else bx
            cols = slice(other.offset - q_e, other.offset - q_e + other.size)
            part = self.P @ self.B[:, cols]
            if self.E is not None:
                part += self.E[:, cols]
            return part if x == model.first else part.T
        rows = slice(bx.offset - q_e, bx.offset - q_e + bx.size)
        return self.Xrr[rows, by.offset - q_e : by.offset - q_e + by.size]

    def diagonal_sum(self, model: ProfiledDeviance, i: int) -> np.ndarray:
        """``sum_l X_ll`` over the levels of block ``i`` (``k x k``)."""
        b = model.blocks[i]
        if i == model.first:
            return self.delta.sum(axis=0) - np.trace(self.gram(b), axis1=2, axis2=3)
        sub = self.block(model, i, i).reshape(b.k, b.n, b.k, b.n)
        return np.trace(sub, axis1=1, axis2=3)

    def eliminated_products(self, b: _Block, G: np.ndarray) -> np.ndarray:
        """``Q[a, c, b, d] = sum_lm X[(a,l), (c,m)] X[(b,l), (d,m)]`` on the eliminated block.

        With ``X^ac = diag(delta[:, a, c]) - P_a P_c'``: the diagonal and cross parts sum over
        the levels, and the low-rank part is ``<P_a'P_b, P_c'P_d>`` (``G``: :meth:`gram`).
        """
        k, n, m = b.k, b.n, self.P.shape[1]
        Pk = self.P.reshape(k, n, m)
        pp = np.empty((n, k, k))
        for a in range(k):
            for c in range(a, k):
                pp[:, a, c] = pp[:, c, a] = np.einsum("lu,lu->l", Pk[a], Pk[c])
        low = _pair_sums(G, G)
        flat = self.delta.reshape(n, k * k)
        dd = (flat.T @ flat).reshape(k, k, k, k)
        dp = (flat.T @ pp.reshape(n, k * k)).reshape(k, k, k, k)
        return dd - dp - dp.transpose(2, 3, 0, 1) + low

    def beside_products(self, b: _Block, G: np.ndarray, shift: int) -> np.ndarray:
        """Return the products of :meth:`trace_products` beside the eliminated block (block ``b``).

        Without ``E`` that part is ``P B_b``, and ``Q[a, c, b, d]`` is
        ``<P_a'P_b, B_c B_d'>`` (``B_c``: the columns of term ``c`` of ``B_b``).
        """
        kg, m = G.shape[0], self.B.shape[0]
        Bb = self.B[:, shift : shift + b.size]
        Q = np.empty((kg, b.k, kg, b.k))
        if not m:
            Q[:] = 0.0
            return Q
        # the columns of B_b grouped by term: (k, m * n), so each pair of terms is one product
        Bt = Bb.reshape(m, b.k, b.n).transpose(1, 0, 2).reshape(b.k, -1)
        for a in range(kg):
            for c in range(kg):  # sum_l B_c[:, l]' G_ab B_d[:, l], one product per pair (a, b)
                Y = (G[a, c] @ Bb).reshape(m, b.k, b.n).transpose(1, 0, 2).reshape(b.k, -1)
                Q[a, :, c, :] = Bt @ Y.T
        return Q

    def trace_products(self, model: ProfiledDeviance, g1: list) -> np.ndarray:
        """``tr(G_k X G_l X)`` for every pair of variance parameters.

        For blocks ``x`` and ``y``,
        ``Q[a, c, b, d] = sum_lm X[(x,a,l), (y,c,m)] X[(x,b,l), (y,d,m)]`` (one matrix product
        over the block pair, or from the low-rank parts), and the trace is
        ``sum g_k[a, b] g_l[c, d] Q[b, c, a, d]`` (``X`` symmetric).
        """
        K = model.n_theta
        out = np.zeros((K, K))
        blocks, first, q_e = model.blocks, model.first, self.q_e
        G = self.gram(blocks[first])
        for x, bx in enumerate(blocks):
            for y in range(x, len(blocks)):
                by = blocks[y]
                if x == y == first:
                    Q = self.eliminated_products(bx, G)
                elif first in (x, y) and self.E is None:
                    other = by if x == first else bx
                    Q = self.beside_products(other, G, other.offset - q_e)
                    if x != first:
                        Q = Q.transpose(1, 0, 3, 2)
                else:
                    sub = self.block(model, x, y).reshape(bx.k, bx.n, by.k, by.n)
                    flat = np.ascontiguousarray(sub.transpose(0, 2, 1, 3)).reshape(bx.k * by.k, -1)
                    Q = (flat @ flat.T).reshape(bx.k, by.k, bx.k, by.k)
                # sum g_x[a, b] g_y[c, d] Q[b, c, a, d], as (g_x)(Q as ab x cd)(g_y)'
                kx, ky = bx.k * bx.k, by.k * by.k
                Qabcd = Q.transpose(2, 0, 1, 3).reshape(kx, ky)
                value = g1[x].reshape(-1, kx) @ Qabcd @ g1[y].reshape(-1, ky).T
                out[bx.at, by.at] = value
                out[by.at, bx.at] = value.T
        return out


class _ThetaPart:
    """Everything of an evaluation that depends on ``theta`` alone (not on the response).

    The derivatives are taken in one of two equivalent spaces. Off the boundary (every
    diagonal of ``T`` at least :data:`DIRECT`), in the space scaled by ``Lambda``: there
    ``G_k = Lambda E_k Lambda'`` with ``E_k = T^-1 dG_k T^-T`` per level,
    ``Lambda' M Lambda = I - A^-1 - F~ C F~'`` with ``F~ = Lambda'F = A^-1 Lambda'Z'X`` and
    ``Lambda'w = A^-1 Lambda'Z'y - F~ beta``, so no product with ``Z'Z`` is needed. Near it,
    in the original space, with ``N = Z'Z - Z'Z Lambda A^-1 Lambda'Z'Z``. Every trace and form
    below has the same expression in both.
    """

    def __init__(self, model: ProfiledDeviance, theta: np.ndarray) -> None:
        from scipy.linalg import lapack

        self.model = model
        self.theta = theta
        self.Ts = Ts = model.factors(theta)
        self.f = f = _Factor(model, Ts)
        p = model.p
        self.Ux = Ux = model.left(model.Zx, Ts)  # Lambda' Z'X
        self.AiUx = AiUx = f.solve(Ux)
        XVX = model.Xx - Ux.T @ AiUx
        if p:
            R, info = lapack.dpotrf(XVX, lower=1, clean=1)
            if info != 0:
                raise np.linalg.LinAlgError("X'V^-1 X is not positive definite")
            Rinv, _ = lapack.dtrtri(R, lower=1)
            self.Rinv = Rinv  # Cb = Rinv' Rinv
            self.Cb = Rinv.T @ Rinv
            self.ldx = 2.0 * float(np.log(R.diagonal()).sum())
        else:
            self.Rinv, self.Cb, self.ldx = np.zeros((0, 0)), np.zeros((0, 0)), 0.0
        self.logdet = f.logdet + (self.ldx if model.reml else 0.0)
        self.scaled = float(np.min(np.abs(theta[model.diagonal]))) >= DIRECT
        self._second: tuple | None = None

    def second(self) -> tuple:
        """Return ``F``, ``M``, the derivatives of ``G`` and the response-free derivative parts.

        ``F`` and ``M`` are those of the chosen space (see the class).
        """
        if self._second is not None:
            return self._second
        model, Ts, f = self.model, self.Ts, self.f
        K = model.n_theta
        if self.scaled:
            F = self.AiUx
            N = f.i_minus_inverse()
            inverses = [_lower_inverse(T) for T in Ts]
        else:
            F = model.Zx - f.cl(self.AiUx)
            N = f.n_split()
        M = N.minus_gram(F @ self.Rinv.T)  # F C F' = (F Rinv')(F Rinv')'
        logdet_mat = M if model.reml else N
        g1 = []  # per block: dG_k (or E_k) of its entries, (K_b, k, k)
        g2 = []  # per block: d2G_kl (or its scaled form) of its pairs, (P_b, k, k)
        L1 = np.empty(K)
        L2 = np.zeros((K, K))
        for i, (b, T) in enumerate(zip(model.blocks, Ts, strict=True)):
            S = logdet_mat.diagonal_sum(model, i).reshape(-1)
            G1, G2 = b.first_derivatives(T), model.second[i]
            if self.scaled:
                Ti = inverses[i]
                G1 = Ti @ G1 @ Ti.T
                G2 = Ti @ G2 @ Ti.T
            g1.append(G1)
            g2.append(G2)
            L1[b.at] = G1.reshape(len(G1), -1) @ S
            L2[b.pair_at] = G2.reshape(len(G2), -1) @ S
        L2 -= logdet_mat.trace_products(model, g1)
        self._second = (F, M, g1, g2, L1, L2)
        return self._second

    def f_g_f(self) -> np.ndarray:
        """``F'G_k F`` for every variance parameter (``K x p x p``; the Satterthwaite df)."""
        model = self.model
        F, _, g1, *_ = self.second()
        p = model.p
        out = np.empty((model.n_theta, p, p))
        for b, G1 in zip(model.blocks, g1, strict=True):
            # (F'F)[(a, p), (c, q)] summed over the levels, then contracted with G_k[a, c]
            Fb = F[b.span].reshape(b.k, b.n, p).transpose(1, 0, 2).reshape(b.n, b.k * p)
            FF = (Fb.T @ Fb).reshape(b.k, p, b.k, p).transpose(0, 2, 1, 3)
            out[b.theta] = (G1.reshape(len(G1), -1) @ FF.reshape(b.k * b.k, p * p)).reshape(
                len(G1), p, p
            )
        return out


class ProfiledDeviance:
    """The profiled (REML or ML) deviance of one design, for any response.

    Parameters
    ----------
    X : ndarray (n, p)
        Fixed-effects model matrix.
    blocks : sequence of (codes, Z)
        Per random-effects block, in ``theta``'s order: the level code of every row and the
        ``n x k`` random-effects model matrix.
    reml : bool
        REML (True) or maximum likelihood.
    """

    def __init__(self, X: np.ndarray, blocks: Any, *, reml: bool) -> None:
        X = np.ascontiguousarray(X, dtype=float)
        self.n, self.p = X.shape
        self.reml = bool(reml)
        shapes = []
        for codes, Z in blocks:
            codes = np.asarray(codes)
            shapes.append((int(codes.max()) + 1 if codes.size else 0, np.asarray(Z).shape[1]))
        sizes = [n * k for n, k in shapes]
        if not sizes:
            raise ValueError("the design has no random effects")
        # the block with the most columns is eliminated first: it goes first in the layout
        self.first = int(np.argmax(sizes))
        order = [self.first, *[i for i in range(len(sizes)) if i != self.first]]
        starts, at = [], 0
        for _, k in shapes:
            starts.append(at)
            at += k * (k + 1) // 2
        self.n_theta = at
        made: dict[int, _Block] = {}
        offset = 0
        self.q = q = sum(sizes)
        Zd = np.zeros((self.n, q))
        rows = np.arange(self.n)
        for i in order:
            codes, Z = blocks[i]
            codes = np.asarray(codes, dtype=np.intp)
            Z = np.asarray(Z, dtype=float)
            n_levels, k = shapes[i]
            r, c = lower_entries(k)
            made[i] = _Block(k, n_levels, offset, starts[i] + np.arange(len(r)), r, c)
            for t in range(k):
                Zd[rows, offset + t * n_levels + codes] = Z[:, t]
            offset += sizes[i]
        self.blocks = [made[i] for i in range(len(sizes))]
        self.diagonal = np.concatenate([b.theta[b.rows == b.cols] for b in self.blocks])
        self.second = [b.second_derivatives() for b in self.blocks]
        self.Zt = np.ascontiguousarray(Zd.T)
        self.C = self.Zt @ Zd
        q_e = sizes[self.first]
        self.C_re = np.ascontiguousarray(self.C[q_e:, :q_e])  # the others' rows: beside
        self.C_rr = np.ascontiguousarray(self.C[q_e:, q_e:])  # and among themselves
        self.Zx = self.Zt @ X
        self.Xt = np.ascontiguousarray(X.T)
        self.Xx = self.Xt @ X
        e = self.blocks[self.first]
        self.D0 = np.empty((e.n, e.k, e.k))  # the per-level blocks of (Z'Z)_ee
        for i in range(e.k):
            for j in range(e.k):
                self.D0[:, i, j] = np.diagonal(self.C[e.term(i), e.term(j)])
        self.grouped = _Grouped.of(self.D0, self.C_re)
        # P'P by size costs two r x r triangular products, from P itself q_e x m^2 / 2
        self.gram_by_size = self.grouped is not None and q_e >= 2 * (self.q - q_e)
        self._cache: _ThetaPart | None = None
        self._anchor: _ThetaPart | None = None

    def factors(self, theta: np.ndarray) -> list[np.ndarray]:
        """Return the lower-triangular ``T`` of every block (theta's order)."""
        out = []
        for b in self.blocks:
            T = np.zeros((b.k, b.k))
            T[b.rows, b.cols] = theta[b.theta]
            out.append(T)
        return out

    def gram_times(self, V: np.ndarray) -> np.ndarray:
        """``Z'Z V`` from its blocks: the eliminated block's own part is diagonal by level."""
        q_e = self.blocks[self.first].size
        out = np.empty_like(V)
        out[:q_e] = _per_level(self.D0, V[:q_e]) + self.C_re.T @ V[q_e:]
        out[q_e:] = self.C_re @ V[:q_e] + self.C_rr @ V[q_e:]
        return out

    def left(
        self,
        B: np.ndarray,
        mats: list[np.ndarray],
        *,
        rest: bool | None = None,
        transpose: bool = False,
    ) -> np.ndarray:
        """``Lambda' B`` where ``Lambda`` repeats ``mats[b]`` over the levels of block ``b``.

        In the term-major layout the rows of a block are ``k`` runs of ``n`` levels, so this is
        one ``k x k`` product per block. ``rest``: None for every row of the layout; False for
        the eliminated block's rows alone, True for the others (``B`` then holds only those).
        ``transpose``: ``Lambda B`` instead.
        """
        if not B.flags.c_contiguous:
            B = np.ascontiguousarray(B)
        out = np.empty_like(B)
        m = B.shape[1]
        shift = self.blocks[self.first].size if rest else 0
        for i, (b, T) in enumerate(zip(self.blocks, mats, strict=True)):
            if rest is not None and (i == self.first) == rest:
                continue
            at = slice(b.offset - shift, b.offset - shift + b.size)
            if b.k == 1:
                np.multiply(B[at], T[0, 0], out=out[at])
            else:
                np.matmul(
                    T if transpose else T.T,
                    B[at].reshape(b.k, b.n * m),
                    out=out[at].reshape(b.k, b.n * m),
                )
        return out

    def sufficient(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """``Z'y``, ``X'y`` and ``y'y`` of a response."""
        y = np.asarray(y, dtype=float)
        return self.Zt @ y, self.Xt @ y, float(y @ y)

    def theta_part(self, theta: np.ndarray) -> _ThetaPart:
        """Return the response-free part at ``theta``.

        Two are kept: the last one, and the anchor (the start of every refit, see
        :meth:`anchor`), whose part is then computed once for all responses.
        """
        for cached in (self._anchor, self._cache):
            if cached is not None and np.array_equal(cached.theta, theta):
                return cached
        part = _ThetaPart(self, np.array(theta, dtype=float))
        self._cache = part
        return part

    def anchor(self, theta: np.ndarray) -> np.ndarray:
        """Keep the response-free part at ``theta`` (a common start) for every later call."""
        self._anchor = None
        self._anchor = self.theta_part(np.array(theta, dtype=float))
        return self._anchor.theta

    def evaluate(self, theta: np.ndarray, suff: Any, *, order: int = 2) -> Evaluation:
        """Evaluate the deviance at ``theta`` (order 0), its gradient (1) and Hessians (2).

        Raises :class:`numpy.linalg.LinAlgError` where a factorization fails.
        """
        part = self.theta_part(np.asarray(theta, dtype=float))
        zy, xy, yy = suff
        n, p, K = self.n, self.p, self.n_theta
        Ts, f = part.Ts, part.f
        uy = self.left(zy[:, None], Ts)[:, 0]  # Lambda' Z'y
        Aiuy = f.solve(uy[:, None])[:, 0]
        XVy = xy - part.Ux.T @ Aiuy
        yVy = yy - uy @ Aiuy
        beta = part.Cb @ XVy
        r2 = float(yVy - XVy @ beta)
        if not (np.isfinite(r2) and r2 > 0):
            raise np.linalg.LinAlgError("the penalized residual sum of squares is not positive")
        nu = n - p if self.reml else n
        dev = part.logdet + nu * (1.0 + np.log(2 * np.pi * r2 / nu))
        sigma = float(np.sqrt(r2 / nu))
        ev = Evaluation(part.theta, float(dev), beta, sigma, r2, part.Cb)
        if order == 0:
            return ev
        F, M, g1, g2, L1, L2 = part.second()
        if part.scaled:
            w = Aiuy - F @ beta  # Lambda' Z'P y
        else:
            w = zy - f.cl(Aiuy[:, None])[:, 0] - F @ beta  # Z'P y
        r2_1 = np.empty(K)
        a = np.zeros((self.q, K))  # G_k w
        r2_2 = np.zeros((K, K))
        for b, G1, G2 in zip(self.blocks, g1, g2, strict=True):
            Wb = w[b.span].reshape(b.k, b.n)
            Wsum = (Wb @ Wb.T).reshape(-1)
            r2_1[b.at] = -(G1.reshape(len(G1), -1) @ Wsum)
            a[b.span, b.at] = (G1 @ Wb).reshape(len(b.theta), b.size).T
            r2_2[b.pair_at] = -(G2.reshape(len(G2), -1) @ Wsum)
        ev.gradient = L1 + nu * r2_1 / r2
        if order == 1:
            return ev
        r2_2 += 2.0 * (a.T @ M.matmul(a))
        ev.hessian = L2 + nu * (r2_2 / r2 - np.outer(r2_1, r2_1) / r2**2)
        # lmerTest's Hessian in (theta, sigma), sigma not profiled, and d Cov(beta)
        ev.make_varpar = partial(_varpar, L2 + r2_2 / sigma**2, r2_1, r2, sigma, nu, part)
        return ev


def _varpar(
    theta_hessian: np.ndarray,
    r2_gradient: np.ndarray,
    r2: float,
    sigma: float,
    nu: int,
    part: _ThetaPart,
) -> Any:
    """Build lmerTest's quantities at one evaluation; ``d (X'V^-1 X)^-1 = C F'G_k F C``."""
    Cb = part.Cb
    return varpar_information(
        theta_hessian=theta_hessian,
        r2_gradient=r2_gradient,
        r2=r2,
        sigma=sigma,
        nu=nu,
        cov_unscaled=Cb,
        cov_unscaled_gradient=Cb @ part.f_g_f() @ Cb,
    )


def _lower_inverse(T: np.ndarray) -> np.ndarray:
    """Invert a lower-triangular ``T`` with a non-zero diagonal."""
    if T.shape[0] == 1:
        return 1.0 / T
    from scipy.linalg import lapack

    inv, info = lapack.dtrtri(T, lower=1)
    if info != 0:
        raise np.linalg.LinAlgError("a relative covariance factor is singular")
    return inv


def _congruence(Linv: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``Linv X Linv'`` for a lower-triangular ``Linv`` and a symmetric ``X`` (symmetric)."""
    from scipy.linalg import blas

    half = blas.dtrmm(1.0, Linv, X, lower=1)  # Linv X
    out = blas.dtrmm(1.0, Linv, np.ascontiguousarray(half.T), lower=1)  # Linv X Linv'
    return 0.5 * (out + out.T)


def _pair_sums(G: np.ndarray, H: np.ndarray) -> np.ndarray:
    """``Q[a, c, b, d] = <G[a, b], H[c, d]>`` (entrywise products summed) as one product."""
    kg, kh, m = G.shape[0], H.shape[0], G.shape[2]
    if not m:
        return np.zeros((kg, kh, kg, kh))
    if kg == kh == 1:  # one entrywise product, without copying G and H into rows
        return np.array(np.vdot(G, H)).reshape(1, 1, 1, 1)
    Q = G.reshape(kg * kg, m * m) @ H.reshape(kh * kh, m * m).T
    return Q.reshape(kg, kg, kh, kh).transpose(0, 2, 1, 3)


def _right(B: np.ndarray, T: np.ndarray) -> np.ndarray:
    """``B Lambda_e`` for the eliminated block's ``Lambda_e`` (its columns, term-major)."""
    k = T.shape[0]
    if k == 1:
        return B * T[0, 0]
    n = B.shape[1] // k
    return np.einsum("rin,ij->rjn", B.reshape(B.shape[0], k, n), T).reshape(B.shape)


def _per_level(blocks: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``Bd B`` for a block diagonal ``Bd`` given per level (``n x k x k``, term-major rows)."""
    n, k, _ = blocks.shape
    if k == 1:
        return blocks[:, 0, 0][:, None] * B
    Bt = B.reshape(k, n, B.shape[1])
    out = np.zeros_like(Bt)
    for i in range(k):
        for j in range(k):
            out[i] += blocks[:, i, j][:, None] * Bt[j]
    return out.reshape(B.shape)


def _add_per_level(target: np.ndarray, blocks: np.ndarray) -> None:
    """Add a block diagonal given per level (``n x k x k``) to a term-major square."""
    n, k, _ = blocks.shape
    at = np.arange(n)
    for i in range(k):
        for j in range(k):
            target[i * n + at, j * n + at] += blocks[:, i, j]
