"""Penalized least squares with a blocked Cholesky factor (Bates et al. 2015; MixedModels.jl).

Notation (lme4's): ``b = Lambda(theta) u`` with ``u ~ N(0, sigma^2 I)``. For random-effects term
``k`` with ``p_k`` columns and ``l_k`` levels, ``Lambda_k = I_{l_k} kron T_k`` with ``T_k`` lower
triangular; ``theta`` stacks the lower triangles of the ``T_k`` column by column. The
random-effects vector of a term is ordered level by level (``level * p_k + column``).

The augmented cross-product matrix of ``[Z Lambda, X, y]`` (with ``I`` added to the random-effects
block) is factored as ``L L'`` in three block rows:

1. the largest term, whose ``Z_1' Z_1`` is block diagonal (one ``p_1 x p_1`` block per level),
   so ``L_11`` is a stack of small Cholesky factors;
2. every other term together, dense (``L_21`` stays sparse: it has the pattern of ``Z_2' Z_1``);
3. ``[X, y]``, dense with ``p + 1`` columns; its last diagonal entry is the root of the
   penalized residual sum of squares and the block above it is ``R_X``.

No ``n x n`` matrix is formed; the data enter only through cross-products computed once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp


@dataclass(frozen=True, eq=False)
class TermData:
    """Raw random-effects design of one block: ``codes`` (n,), ``Z`` (n, p), ``n_levels``."""

    codes: np.ndarray
    Z: np.ndarray
    n_levels: int

    @property
    def p(self) -> int:
        """Number of random-effects columns."""
        return int(self.Z.shape[1])

    @property
    def q(self) -> int:
        """Length of the term's random-effects vector."""
        return self.p * self.n_levels

    def sparse(self) -> sp.csc_matrix:
        """Build the ``n x q`` sparse random-effects model matrix."""
        n, p = self.Z.shape
        rows = np.repeat(np.arange(n), p)
        cols = (self.codes[:, None] * p + np.arange(p)[None, :]).ravel()
        return sp.csc_matrix((self.Z.ravel(), (rows, cols)), shape=(n, self.q))


def n_theta(p: int) -> int:
    """Count the covariance parameters of a ``p``-column term."""
    return p * (p + 1) // 2


def theta_lower_bounds(ps: list[int]) -> np.ndarray:
    """Lower bounds of theta: 0 on the diagonal of each ``T_k``, ``-inf`` below it."""
    out = []
    for p in ps:
        for j in range(p):
            for i in range(j, p):
                out.append(0.0 if i == j else -np.inf)
    return np.array(out)


def theta_start(ps: list[int]) -> np.ndarray:
    """lme4's starting value: identity ``T_k``."""
    lb = theta_lower_bounds(ps)
    return np.where(lb == 0.0, 1.0, 0.0)


@functools.cache
def _lower_indices(p: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a ``p x p`` lower triangle in column-major order."""
    rows, cols = np.tril_indices(p)
    order = np.lexsort((rows, cols))
    return rows[order], cols[order]


def theta_to_T(theta: np.ndarray, p: int) -> np.ndarray:
    """Fill a ``p x p`` lower-triangular ``T`` from its column-major lower triangle."""
    T = np.zeros((p, p))
    T[_lower_indices(p)] = theta
    return T


@dataclass(eq=False)
class Factor:
    """Blocked Cholesky factor at one value of theta."""

    theta: np.ndarray
    Ts: list[np.ndarray]
    L11: np.ndarray  # (l1, p1, p1) lower
    L11inv: np.ndarray  # (l1, p1, p1)
    L21: sp.csr_matrix | None  # (q2, q1)
    L22: np.ndarray | None  # (q2, q2) lower
    L31: np.ndarray  # (m, q1)
    L32: np.ndarray | None  # (m, q2)
    L33: np.ndarray  # (m, m) lower
    Lam2: sp.csr_matrix | None
    logdet_L: float
    ok: bool = True

    @property
    def r2(self) -> float:
        """Penalized residual sum of squares at the conditional optimum."""
        return float(self.L33[-1, -1] ** 2)

    @property
    def logdet_RX(self) -> float:
        """``log det(R_X' R_X)``."""
        d = np.diag(self.L33)[:-1]
        return float(2.0 * np.sum(np.log(d))) if d.size else 0.0


class PLS:
    """Profiled deviance of a linear mixed model via a blocked Cholesky factor.

    Parameters
    ----------
    X : ndarray (n, p)
        Fixed-effects matrix (full column rank).
    y : ndarray (n,)
        Response.
    terms : list of TermData
        Random-effects blocks, in the order that defines ``theta``.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, terms: list[TermData]) -> None:
        self.n, self.p = X.shape
        self.terms = terms
        self.ps = [t.p for t in terms]
        self.theta_slices = []
        start = 0
        for t in terms:
            k = n_theta(t.p)
            self.theta_slices.append(slice(start, start + k))
            start += k
        self.n_theta = start
        self.lower = theta_lower_bounds(self.ps)
        XY = np.column_stack([X, y]).astype(float)
        self.m = XY.shape[1]
        sizes = [t.q for t in terms]
        self.first = int(np.argmax(sizes))
        self.rest = [k for k in range(len(terms)) if k != self.first]
        t1 = terms[self.first]
        p1, l1 = t1.p, t1.n_levels
        self.p1, self.l1, self.q1 = p1, l1, t1.q
        A11 = np.empty((l1, p1, p1))
        for a in range(p1):
            for c in range(a, p1):
                v = np.bincount(t1.codes, weights=t1.Z[:, a] * t1.Z[:, c], minlength=l1)
                A11[:, a, c] = v
                A11[:, c, a] = v
        self.A11 = A11
        A31 = np.empty((l1, p1, self.m))
        for a in range(p1):
            for c in range(self.m):
                A31[:, a, c] = np.bincount(t1.codes, weights=t1.Z[:, a] * XY[:, c], minlength=l1)
        self.A31 = A31
        self.A33 = XY.T @ XY
        self.eye_p1 = np.eye(p1)
        if self.rest:
            Z1 = t1.sparse()
            Z2 = sp.hstack([terms[k].sparse() for k in self.rest], format="csc")
            self.q2 = Z2.shape[1]
            self.A21 = (Z2.T @ Z1).tocsr()
            self.A22 = (Z2.T @ Z2).toarray()
            self.A32 = np.ascontiguousarray(np.asarray((Z2.T @ XY).T))
            self.offsets2 = np.cumsum([0] + [terms[k].q for k in self.rest])
            self.A21.sort_indices()
            self.A21_rows = np.repeat(np.arange(self.q2), np.diff(self.A21.indptr))
            self.scalar_terms = all(t.p == 1 for t in terms)
            self.pairs = self._pair_pattern() if self.scalar_terms else None
        else:
            self.q2 = 0
        self.bsr_indices = np.arange(l1)
        self.bsr_indptr = np.arange(l1 + 1)

    def _pair_pattern(self, max_pairs: int = 8_000_000) -> tuple[np.ndarray, ...] | None:
        """Precomputed products for ``A21 diag(w) A21'`` when every term is scalar.

        Column ``c`` of ``A21`` (one level of the first factor) contributes
        ``w_c a_ic a_jc`` to entry ``(i, j)``; listing the triples once turns the sparse product
        of every evaluation into one weighted ``bincount``. Returns None when there would be
        more than ``max_pairs`` triples (the sparse product is used instead).
        """
        A = self.A21.tocsc()
        A.sort_indices()
        n_c = np.diff(A.indptr)
        total = int(np.sum(n_c.astype(np.int64) ** 2))
        if total > max_pairs:
            return None
        col_e = np.repeat(np.arange(A.shape[1]), n_c)
        counts_e = n_c[col_e]
        left = np.repeat(np.arange(A.nnz), counts_e)
        offsets = np.cumsum(counts_e) - counts_e
        within = np.arange(total) - np.repeat(offsets, counts_e)
        right = np.repeat(A.indptr[col_e], counts_e) + within
        rows = A.indices
        target = rows[left].astype(np.int64) * self.q2 + rows[right]
        order = np.argsort(target, kind="stable")  # sequential writes in bincount
        return target[order], col_e[left][order], (A.data[left] * A.data[right])[order]

    # -----------------------------------------------------------------------------------------
    def Ts(self, theta: np.ndarray) -> list[np.ndarray]:
        """Return the ``T_k`` matrices at ``theta``."""
        return [theta_to_T(theta[s], p) for s, p in zip(self.theta_slices, self.ps, strict=True)]

    def _lam2(self, Ts: list[np.ndarray]) -> sp.csr_matrix:
        if all(self.terms[k].p == 1 for k in self.rest):
            d = np.concatenate([np.full(self.terms[k].n_levels, Ts[k][0, 0]) for k in self.rest])
            return sp.diags(d, format="csr")
        mats = [
            sp.kron(sp.identity(self.terms[k].n_levels), sp.csr_matrix(Ts[k])) for k in self.rest
        ]
        return sp.block_diag(mats, format="csr")

    def _lam2t_left(self, Ts: list[np.ndarray], M: np.ndarray) -> np.ndarray:
        """``Lambda_2' M`` for a dense ``M`` with ``q2`` rows."""
        out = np.empty_like(M)
        for j, k in enumerate(self.rest):
            s, e = self.offsets2[j], self.offsets2[j + 1]
            t = self.terms[k]
            if t.p == 1:
                np.multiply(M[s:e], Ts[k][0, 0], out=out[s:e])
            else:
                seg = M[s:e].reshape(t.n_levels, t.p, -1)
                out[s:e] = np.einsum("ba,lbc->lac", Ts[k], seg).reshape(e - s, -1)
        return out

    def factor(self, theta: np.ndarray) -> Factor:
        """Blocked Cholesky factor at ``theta`` (``ok=False`` when not positive definite)."""
        theta = np.asarray(theta, dtype=float)
        Ts = self.Ts(theta)
        T1 = Ts[self.first]
        M11 = np.einsum("ba,lbc,cd->lad", T1, self.A11, T1) + self.eye_p1
        try:
            L11 = np.linalg.cholesky(M11)
        except np.linalg.LinAlgError:
            return self._failed(theta, Ts)
        L11inv = np.linalg.inv(L11)
        G = np.einsum("ab,lcb->lac", T1, L11inv)  # T1 @ L11inv_l.T
        L31 = np.einsum("lam,lab->mlb", self.A31, G).reshape(self.m, self.q1)
        logdet = 2.0 * float(np.sum(np.log(np.diagonal(L11, axis1=1, axis2=2))))
        L21 = L22 = L32 = Lam2 = None
        M33 = self.A33 - L31 @ L31.T
        if self.rest:
            Lam2 = self._lam2(Ts)
            if self.scalar_terms:
                d2 = Lam2.diagonal()
                L21 = self.A21.copy()
                L21.data = self.A21.data * d2[self.A21_rows] * G[:, 0, 0][self.A21.indices]
            else:
                Gbd = sp.bsr_matrix(
                    (G, self.bsr_indices, self.bsr_indptr), shape=(self.q1, self.q1)
                ).tocsc()
                L21 = ((Lam2.T @ self.A21) @ Gbd).tocsr()
            if self.scalar_terms and self.pairs is not None:
                target, col, base = self.pairs
                w = G[:, 0, 0] ** 2
                S = np.bincount(target, weights=base * w[col], minlength=self.q2 * self.q2)
                S = self.A22 - S.reshape(self.q2, self.q2)
                M22 = S * d2[:, None]
                M22 *= d2[None, :]
            else:
                M22 = self._lam2t_left(Ts, self._lam2t_left(Ts, self.A22).T).T
                M22 -= (L21 @ L21.T).toarray()
            M22[np.diag_indices_from(M22)] += 1.0
            try:
                L22 = sla.cholesky(M22, lower=True, check_finite=False, overwrite_a=True)
            except np.linalg.LinAlgError:
                return self._failed(theta, Ts)
            logdet += 2.0 * float(np.sum(np.log(np.diag(L22))))
            R = self._lam2t_left(Ts, self.A32.T).T - np.asarray(L21 @ L31.T).T
            L32 = sla.solve_triangular(L22, R.T, lower=True, check_finite=False).T
            M33 = M33 - L32 @ L32.T
        try:
            L33 = sla.cholesky(M33, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            return self._failed(theta, Ts)
        if not np.all(np.isfinite(L33)) or np.any(np.diag(L33) <= 0):
            return self._failed(theta, Ts)
        return Factor(theta, Ts, L11, L11inv, L21, L22, L31, L32, L33, Lam2, logdet)

    def _failed(self, theta: np.ndarray, Ts: list[np.ndarray]) -> Factor:
        z = np.zeros((0,))
        return Factor(theta, Ts, z, z, None, None, z, None, np.zeros((1, 1)), None, np.inf, False)

    # -----------------------------------------------------------------------------------------
    def objective(self, theta: np.ndarray, *, reml: bool) -> float:
        """Profiled deviance (ML) or REML criterion at ``theta``."""
        f = self.factor(theta)
        if not f.ok:
            return np.inf
        return self.deviance_from(f, reml=reml)

    def deviance_from(self, f: Factor, *, reml: bool) -> float:
        """Profiled criterion from a factor."""
        r2 = f.r2
        if r2 <= 0:
            return np.inf
        if reml:
            nmp = self.n - self.p
            return f.logdet_L + f.logdet_RX + nmp * (1.0 + np.log(2.0 * np.pi * r2 / nmp))
        return f.logdet_L + self.n * (1.0 + np.log(2.0 * np.pi * r2 / self.n))

    # -----------------------------------------------------------------------------------------
    def solve(self, f: Factor) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Solve for the fixed effects and the spherical and conditional modes.

        Returns
        -------
        beta : ndarray (p,)
        u : list of ndarray (l_k, p_k)
            Spherical random effects per term.
        b : list of ndarray (l_k, p_k)
            Conditional modes per term (``b = T_k u`` level by level).
        """
        p = self.p
        LXX = f.L33[:p, :p]
        lyX = f.L33[p, :p]
        beta = (
            sla.solve_triangular(LXX, lyX, lower=True, trans="T", check_finite=False)
            if p
            else np.zeros(0)
        )
        w1 = f.L31[p] - f.L31[:p].T @ beta
        u_terms: list[np.ndarray | None] = [None] * len(self.terms)
        if self.rest:
            w2 = f.L32[p] - f.L32[:p].T @ beta
            u2 = sla.solve_triangular(f.L22, w2, lower=True, trans="T", check_finite=False)
            w1 = w1 - f.L21.T @ u2
            for j, k in enumerate(self.rest):
                seg = u2[self.offsets2[j] : self.offsets2[j + 1]]
                u_terms[k] = seg.reshape(self.terms[k].n_levels, self.terms[k].p)
        u1 = np.einsum("lba,lb->la", f.L11inv, w1.reshape(self.l1, self.p1))
        u_terms[self.first] = u1
        b_terms = [u @ f.Ts[k].T for k, u in enumerate(u_terms)]
        return beta, u_terms, b_terms

    def beta_cov_unscaled(self, f: Factor) -> np.ndarray:
        """``(R_X' R_X)^{-1}``: the covariance of beta divided by ``sigma^2``."""
        p = self.p
        if p == 0:
            return np.zeros((0, 0))
        inv = np.linalg.inv(f.L33[:p, :p])
        return inv.T @ inv

    def cond_cov_unscaled(self, f: Factor, *, chunk_bytes: int = 64 * 2**20) -> list[np.ndarray]:
        """Diagonal blocks of ``(L_uu L_uu')^{-1}`` mapped through ``T_k``, per term.

        Returns, per term, an array ``(l_k, p_k, p_k)``: ``T_k S_ll T_k'`` where ``S_ll`` is the
        level's diagonal block of the inverse; times ``sigma^2`` this is lme4's ``condVar``.
        """
        p1 = self.p1
        S1 = np.einsum("lba,lbc->lac", f.L11inv, f.L11inv)
        out: list[np.ndarray | None] = [None] * len(self.terms)
        if self.rest:
            L22inv = sla.solve_triangular(f.L22, np.eye(self.q2), lower=True, check_finite=False)
            Linv_bd = sp.bsr_matrix(
                (f.L11inv, self.bsr_indices, self.bsr_indptr), shape=(self.q1, self.q1)
            ).tocsc()
            K = (f.L21 @ Linv_bd).tocsc()  # (q2, q1)
            step = max(p1, (chunk_bytes // (8 * max(self.q2, 1))) // p1 * p1)
            for start in range(0, self.q1, step):
                stop = min(self.q1, start + step)
                H = -(L22inv @ K[:, start:stop].toarray())
                Hr = H.reshape(self.q2, (stop - start) // p1, p1)
                S1[start // p1 : stop // p1] += np.einsum("rla,rlb->lab", Hr, Hr)
            for j, k in enumerate(self.rest):
                t = self.terms[k]
                cols = L22inv[:, self.offsets2[j] : self.offsets2[j + 1]]
                Cr = cols.reshape(self.q2, t.n_levels, t.p)
                S = np.einsum("rla,rlb->lab", Cr, Cr)
                T = f.Ts[k]
                out[k] = np.einsum("ab,lbc,dc->lad", T, S, T)
        T1 = f.Ts[self.first]
        out[self.first] = np.einsum("ab,lbc,dc->lad", T1, S1, T1)
        return out
