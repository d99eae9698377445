"""The likelihood engine behind :class:`models.ordinal.OrdinalMixedModel`.

Written here because no maintained Python library fits a cumulative link *mixed* model
(statsmodels' ``OrderedModel`` has no random effects; mixedlm's GLMMs have no thresholds).

Model (``ordinal::clmm``'s parameterisation): ``P(Y <= j | u) = F(theta_j - eta)`` with
``eta = X beta + Z Lambda u``, ``u ~ N(0, I)``, ``Lambda`` block diagonal with one lower
triangular factor ``T`` per random-effects block and level (``T T'`` is that block's covariance
on the latent scale). The marginal likelihood is approximated by Laplace's method around the
conditional mode ``u_hat`` of ``h(u) = sum_i l_i(eta_i) - u'u / 2``::

    log L ~= h(u_hat) - log|H| / 2,    H = A' W A + I,   A = Z Lambda,   W = -d2 l / d eta2

or, for one scalar grouping factor, by adaptive Gauss-Hermite quadrature around the same mode.

Structure. The random effects are grouped into *units* (blocks sharing a grouping factor). The
unit with the most coefficients (``F``) has a block-diagonal part of ``H`` (one ``p x p`` block
per level); the other units (``R``, usually few coefficients) are eliminated through the dense
Schur complement ``S = H_RR - H_RF H_FF^-1 H_FR``. This gives ``log|H|``, solves with ``H`` and
the entries of ``H^-1`` that the analytic gradient needs (the ``m x m`` blocks of each
observation's own coefficients) at the cost of one dense factorisation of ``S``; with crossed
factors ``S`` is the size of the smaller factor, which is also where a sparse Cholesky
factorisation of ``H`` fills in.

The gradient of the Laplace log-likelihood with respect to the thresholds, the fixed effects and
the entries of ``T`` is exact: with ``c_i = a_i' H^-1 a_i`` and ``v = -H^-1 A'(w' c) / 2``,
``dL/dpsi = dh/dpsi - (1/2) dlog|H|/dpsi + v' dg/dpsi`` (all partial derivatives at fixed
``u_hat``; ``g`` the gradient of ``h`` in ``u``), which accounts for the dependence of ``u_hat``
on the parameters through the implicit function theorem.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, sparse, special

_SQRT_2PI = np.sqrt(2.0 * np.pi)

__all__ = ["Link", "Structure", "link"]

_P_FLOOR = 1e-300


# ---------------------------------------------------------------------------------------------
# links


@dataclass(frozen=True)
class Link:
    """A cumulative distribution ``F`` with its density and the density's two derivatives."""

    name: str
    latent_sd: float

    def cdf(self, x: np.ndarray) -> np.ndarray:
        if self.name == "logit":
            return special.expit(x)
        return special.ndtr(x)

    def pdf_derivs(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``f, f', f''`` at ``x`` (0 at +-inf)."""
        with np.errstate(invalid="ignore", over="ignore"):
            if self.name == "logit":
                F = special.expit(x)
                f = F * (1.0 - F)
                f1 = f * (1.0 - 2.0 * F)
                f2 = f * (1.0 - 6.0 * F + 6.0 * F * F)
            else:
                f = np.exp(-0.5 * x * x) / _SQRT_2PI  # the normal density (scipy.stats')
                f1 = -x * f
                f2 = (x * x - 1.0) * f
        inf = ~np.isfinite(x)
        if inf.any():
            f, f1, f2 = (np.where(inf, 0.0, v) for v in (f, f1, f2))
        return f, f1, f2

    def interval(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``F(a) - F(b)`` for ``a > b``, from the upper tail where both are positive."""
        upper = b > 0
        lo = np.where(upper, -a, b)
        hi = np.where(upper, -b, a)
        return np.maximum(self.cdf(hi) - self.cdf(lo), _P_FLOOR)


LINKS = {"logit": Link("logit", float(np.pi / np.sqrt(3.0))), "probit": Link("probit", 1.0)}


def link(name: str) -> Link:
    """Return the :class:`Link` called ``name`` (``"logit"`` or ``"probit"``)."""
    return LINKS[name]


@dataclass
class ObsDerivs:
    """Per-observation log-likelihood and its derivatives in ``eta`` and the two thresholds."""

    loglik: np.ndarray
    d1: np.ndarray  # d l / d eta
    w: np.ndarray  # -d2 l / d eta2
    w1: np.ndarray  # d w / d eta
    l_up: np.ndarray  # d l / d theta_upper
    l_lo: np.ndarray  # d l / d theta_lower
    d1_up: np.ndarray
    d1_lo: np.ndarray
    w_up: np.ndarray
    w_lo: np.ndarray


def obs_derivs(lk: Link, upper: np.ndarray, lower: np.ndarray, eta: np.ndarray, *, full: bool):
    """Differentiate ``l = log(F(upper - eta) - F(lower - eta))`` in ``eta`` and the thresholds.

    ``full=False`` computes only what mode finding needs (``loglik, d1, w``).
    """
    a = upper - eta
    b = lower - eta
    P = lk.interval(a, b)
    fa, fa1, fa2 = lk.pdf_derivs(a)
    fb, fb1, fb2 = lk.pdf_derivs(b)
    ra, rb = fa / P, fb / P
    l_a, l_b = ra, -rb
    l_aa = fa1 / P - ra * ra
    l_ab = ra * rb
    l_bb = -fb1 / P - rb * rb
    d1 = -(l_a + l_b)
    w = -(l_aa + 2.0 * l_ab + l_bb)
    loglik = np.log(P)
    if not full:
        z = np.zeros(0)
        return ObsDerivs(loglik, d1, w, z, z, z, z, z, z, z)
    l_aaa = fa2 / P - 3.0 * ra * fa1 / P + 2.0 * ra**3
    l_aab = fa1 / P * rb - 2.0 * ra * ra * rb
    l_abb = ra * fb1 / P + 2.0 * ra * rb * rb
    l_bbb = -fb2 / P - 3.0 * rb * fb1 / P - 2.0 * rb**3
    w1 = l_aaa + 3.0 * l_aab + 3.0 * l_abb + l_bbb
    return ObsDerivs(
        loglik=loglik,
        d1=d1,
        w=w,
        w1=w1,
        l_up=l_a,
        l_lo=l_b,
        d1_up=-(l_aa + l_ab),
        d1_lo=-(l_ab + l_bb),
        w_up=-(l_aaa + 2.0 * l_aab + l_abb),
        w_lo=-(l_aab + 2.0 * l_abb + l_bbb),
    )


# ---------------------------------------------------------------------------------------------
# structure of the random effects


@dataclass
class Unit:
    """Random-effects blocks that share one grouping factor."""

    group: str
    blocks: list[int]  # indices into the design's random blocks
    sizes: list[int]  # coefficients per block
    codes: np.ndarray
    n_levels: int
    Z: np.ndarray  # n x p

    @property
    def p(self) -> int:
        return int(sum(self.sizes))


class ModeFailure(RuntimeError):
    """The conditional modes could not be found (the inner Newton iteration stalled)."""


class Structure:
    """Index bookkeeping of ``H`` for one design, shared by every evaluation.

    Parameters
    ----------
    blocks : list of (group, codes, n_levels, Z)
        The design's random blocks in formula order.
    scaled : collection of int, optional
        Blocks whose covariance is ``s^2 I`` with one parameter ``s`` (``T = s I``): the
        penalised part of a smooth, one level whose columns load every observation.
    """

    def __init__(self, blocks: list[tuple[str, np.ndarray, int, np.ndarray]], scaled=()) -> None:
        self.block_sizes = [int(Z.shape[1]) for _, _, _, Z in blocks]
        self.scaled = frozenset(int(k) for k in scaled)
        n = int(blocks[0][1].shape[0])
        self.n = n
        units: dict[str, Unit] = {}
        for k, (group, codes, n_levels, Z) in enumerate(blocks):
            if group in units:
                u = units[group]
                u.blocks.append(k)
                u.sizes.append(int(Z.shape[1]))
                u.Z = np.hstack([u.Z, Z])
            else:
                units[group] = Unit(
                    group, [k], [int(Z.shape[1])], np.asarray(codes), int(n_levels), Z.copy()
                )
        ulist = list(units.values())
        first = int(np.argmax([u.n_levels * u.p for u in ulist]))
        self.F = ulist[first]
        self.R = [u for i, u in enumerate(ulist) if i != first]
        self.units = [self.F, *self.R]
        pF = self.F.p
        self.pF = pF
        self.qF = self.F.n_levels * pF
        offsets, off = [], 0
        for u in self.R:
            offsets.append(off)
            off += u.n_levels * u.p
        self.r = off
        self.R_offsets = offsets
        self.mR = int(sum(u.p for u in self.R))
        self.m = pF + self.mR
        # positions of each observation's coefficients
        jF = np.arange(pF)
        self.pos_F = self.F.codes[:, None] * pF + jF[None, :]
        if self.R:
            self.pos_R = np.hstack(
                [
                    o + u.codes[:, None] * u.p + np.arange(u.p)[None, :]
                    for o, u in zip(offsets, self.R, strict=True)
                ]
            )
        else:
            self.pos_R = np.zeros((n, 0), dtype=np.int64)
        self.Z_loc = np.hstack([u.Z for u in self.units])
        # which slot of the local vector each (block, row, col) of T belongs to
        self.slot_start = {}
        s = 0
        for u in self.units:
            for k, size in zip(u.blocks, u.sizes, strict=True):
                self.slot_start[k] = s
                s += size
        # H_FF: per level p x p
        jj, kk = np.meshgrid(jF, jF, indexing="ij")
        self._ff_idx = (self.F.codes[:, None, None] * pF * pF + jj[None] * pF + kk[None]).reshape(
            n, -1
        )
        # H_FR sparse pattern
        if self.R:
            keys = (self.pos_F[:, :, None] * self.r + self.pos_R[:, None, :]).reshape(-1)
            uniq, inv = np.unique(keys, return_inverse=True)
            self._fr_inv = inv
            self._fr_n = uniq.size
            rows = uniq // self.r
            cols = uniq % self.r
            self._fr_indices = cols.astype(np.int32)
            self._fr_indptr = np.searchsorted(rows, np.arange(self.qF + 1)).astype(np.int32)
            keys = (self.pos_R[:, :, None] * self.r + self.pos_R[:, None, :]).reshape(-1)
            uniq, inv = np.unique(keys, return_inverse=True)
            self._rr_keys = uniq
            self._rr_inv = inv
        self.n_theta = len(self.theta_index())

    # -----------------------------------------------------------------------------------------
    def theta_blocks(self, theta: np.ndarray) -> list[np.ndarray]:
        """Lower-triangular factors ``T`` from ``theta`` (column-wise lower triangles)."""
        out, i = [], 0
        for b, p in enumerate(self.block_sizes):
            if b in self.scaled:
                out.append(theta[i] * np.eye(p))
                i += 1
                continue
            T = np.zeros((p, p))
            rows, cols = np.tril_indices(p)
            order = np.lexsort((rows, cols))
            k = p * (p + 1) // 2
            T[rows[order], cols[order]] = theta[i : i + k]
            out.append(T)
            i += k
        return out

    def theta_index(self) -> list[tuple[int, int, int]]:
        """``(block, row, col)`` of each entry of ``theta`` (``(block, 0, 0)`` for ``s I``)."""
        out = []
        for k, p in enumerate(self.block_sizes):
            if k in self.scaled:
                out.append((k, 0, 0))
                continue
            for c in range(p):
                for r_ in range(c, p):
                    out.append((k, r_, c))
        return out

    def theta_entries(self) -> list[list[tuple[int, int, int]]]:
        """Return the entries ``(block, row, col)`` of ``T`` each ``theta`` sets."""
        return [
            [(k, j, j) for j in range(self.block_sizes[k])] if k in self.scaled else [(k, r_, c_)]
            for k, r_, c_ in self.theta_index()
        ]

    def theta_lower_bounds(self) -> list[float | None]:
        """0 for diagonal entries (lme4's convention), none for the others."""
        return [0.0 if r_ == c else None for _, r_, c in self.theta_index()]

    def local_a(self, Ts: list[np.ndarray]) -> np.ndarray:
        """``a_i = T' z_i`` per observation, in local slot order (``n x m``)."""
        a = np.empty((self.n, self.m))
        for u in self.units:
            for k in u.blocks:
                s = self.slot_start[k]
                p = self.block_sizes[k]
                a[:, s : s + p] = self.Z_loc[:, s : s + p] @ Ts[k]
        return a

    def gather(self, uF: np.ndarray, uR: np.ndarray) -> np.ndarray:
        """Each observation's coefficients (``n x m``)."""
        if self.mR:
            return np.hstack([uF[self.pos_F], uR[self.pos_R]])
        return uF[self.pos_F]

    def scatter(self, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``sum_i vals_i`` into coefficient positions (``vals`` is ``n x m``)."""
        pF = self.pF
        gF = np.bincount(self.pos_F.ravel(), weights=vals[:, :pF].ravel(), minlength=self.qF)
        if self.mR:
            gR = np.bincount(self.pos_R.ravel(), weights=vals[:, pF:].ravel(), minlength=self.r)
        else:
            gR = np.zeros(0)
        return gF, gR

    def factor(self, w: np.ndarray, a: np.ndarray) -> Factor:
        """Factorise ``H = A' W A + I``."""
        pF = self.pF
        aF = a[:, :pF]
        prodFF = (w[:, None, None] * aF[:, :, None] * aF[:, None, :]).reshape(self.n, -1)
        HFF = np.bincount(
            self._ff_idx.ravel(), weights=prodFF.ravel(), minlength=self.qF * pF
        ).reshape(-1, pF, pF)
        HFF += np.eye(pF)[None]
        if not self.mR:
            return Factor(self, HFF, None, None)
        aR = a[:, pF:]
        prodFR = (w[:, None, None] * aF[:, :, None] * aR[:, None, :]).ravel()
        dataFR = np.bincount(self._fr_inv, weights=prodFR, minlength=self._fr_n)
        HFR = sparse.csr_matrix(
            (dataFR, self._fr_indices, self._fr_indptr), shape=(self.qF, self.r)
        )
        prodRR = (w[:, None, None] * aR[:, :, None] * aR[:, None, :]).ravel()
        dataRR = np.bincount(self._rr_inv, weights=prodRR, minlength=self._rr_keys.size)
        HRR = np.zeros(self.r * self.r)
        HRR[self._rr_keys] = dataRR
        HRR = HRR.reshape(self.r, self.r)
        HRR[np.diag_indices(self.r)] += 1.0
        return Factor(self, HFF, HFR, HRR)


class Factor:
    """``H`` eliminated through its block-diagonal part: log-determinant, solves, inverse blocks."""

    def __init__(self, st: Structure, HFF: np.ndarray, HFR, HRR) -> None:
        self.st = st
        pF = st.pF
        if pF == 1:
            d = HFF[:, 0, 0]
            if np.any(d <= 0):
                raise np.linalg.LinAlgError("H is not positive definite")
            self.HFF_inv = (1.0 / d)[:, None, None]
            self.logdet_FF = float(np.sum(np.log(d)))
        else:
            L = np.linalg.cholesky(HFF)
            self.HFF_inv = np.linalg.inv(HFF)
            self.logdet_FF = float(2.0 * np.sum(np.log(np.diagonal(L, axis1=1, axis2=2))))
        self.HFR = HFR
        if HFR is None:
            self.logdet = self.logdet_FF
            return
        if pF == 1:
            M = sparse.csr_matrix(HFR.multiply(self.HFF_inv[:, 0, :]))
        else:
            n_lv = st.F.n_levels
            Binv = sparse.bsr_matrix(
                (self.HFF_inv, np.arange(n_lv), np.arange(n_lv + 1)),
                shape=(st.qF, st.qF),
            )
            M = sparse.csr_matrix(Binv @ HFR)
        self.M = M
        S = HRR - (HFR.T @ M).toarray()
        self.S_chol = linalg.cho_factor(S, lower=True, check_finite=False)
        self.logdet = self.logdet_FF + float(2.0 * np.sum(np.log(np.diag(self.S_chol[0]))))

    def _ff_solve(self, x: np.ndarray) -> np.ndarray:
        pF = self.st.pF
        xb = x.reshape(-1, pF)
        return np.einsum("ljk,lk->lj", self.HFF_inv, xb).reshape(-1)

    def solve(self, gF: np.ndarray, gR: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``H^-1 g``."""
        if self.HFR is None:
            return self._ff_solve(gF), gR
        xR = linalg.cho_solve(self.S_chol, gR - self.M.T @ gF, check_finite=False)
        xF = self._ff_solve(gF) - self.M @ xR
        return xF, xR

    def _inverse_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return ``S^-1``, ``N = H_FF^-1 H_FR S^-1`` and the F-level diagonal blocks of H^-1."""
        st = self.st
        pF = st.pF
        Sinv = linalg.cho_solve(self.S_chol, np.eye(st.r), check_finite=False)
        N = np.asarray(self.M @ Sinv)
        blocks = self.HFF_inv.copy()
        Nb = N.reshape(-1, pF, st.r)
        for j2 in range(pF):
            Mj = self.M[j2::pF] if pF > 1 else self.M
            for j1 in range(pF):
                blocks[:, j1, j2] += np.asarray(Mj.multiply(Nb[:, j1, :]).sum(axis=1)).ravel()
        return Sinv, N, blocks

    def local_inverse(self) -> np.ndarray:
        """``H^-1`` restricted to each observation's own coefficients (``n x m x m``)."""
        st = self.st
        pF, n = st.pF, st.n
        G = np.empty((n, st.m, st.m))
        codes = st.F.codes
        if self.HFR is None:
            G[:] = self.HFF_inv[codes]
            return G
        Sinv, N, blocks = self._inverse_parts()
        G[:, :pF, :pF] = blocks[codes]
        posF, posR = st.pos_F, st.pos_R
        FR = -N[posF[:, :, None], posR[:, None, :]]
        G[:, :pF, pF:] = FR
        G[:, pF:, :pF] = np.transpose(FR, (0, 2, 1))
        G[:, pF:, pF:] = Sinv[posR[:, :, None], posR[:, None, :]]
        return G

    def local_blocks(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """Per-level diagonal blocks of ``H^-1``: for ``F`` and for each unit of ``R``."""
        st = self.st
        if self.HFR is None:
            return self.HFF_inv.copy(), []
        Sinv, _, blocks = self._inverse_parts()
        rest = []
        for o, u in zip(st.R_offsets, st.R, strict=True):
            idx = o + np.arange(u.n_levels)[:, None] * u.p + np.arange(u.p)[None, :]
            rest.append(Sinv[idx[:, :, None], idx[:, None, :]])
        return blocks, rest


# ---------------------------------------------------------------------------------------------
# the objective


@dataclass
class Mode:
    """Conditional modes and what the gradient needs at them."""

    uF: np.ndarray
    uR: np.ndarray
    factor: Factor
    derivs: ObsDerivs
    a: np.ndarray
    u_loc: np.ndarray
    loglik: float  # Laplace log-likelihood


class Problem:
    """Laplace (and quadrature) log-likelihood of a cumulative link mixed model.

    Parameters are *natural*: thresholds (``J - 1`` of them, or ``threshold.1`` and ``spacing``
    when ``equidistant``), fixed effects, then ``theta`` (column-wise lower triangles of each
    block's ``T``).
    """

    def __init__(
        self,
        X: np.ndarray,
        y: np.ndarray,
        n_cat: int,
        structure: Structure | None,
        lk: Link,
        *,
        equidistant: bool = False,
    ) -> None:
        self.X = np.ascontiguousarray(X, dtype=float)
        self.y = np.asarray(y, dtype=np.int64)
        self.J = int(n_cat)
        self.st = structure
        self.lk = lk
        self.equidistant = equidistant
        self.n_alpha = 2 if equidistant else self.J - 1
        self.p = self.X.shape[1]
        self.n_theta = structure.n_theta if structure is not None else 0
        self.n_par = self.n_alpha + self.p + self.n_theta
        self.has_up = self.y < self.J - 1
        self.has_lo = self.y > 0
        self._u = None

    def cutpoints(self, alpha: np.ndarray) -> np.ndarray:
        if self.equidistant:
            return alpha[0] + alpha[1] * np.arange(self.J - 1)
        return np.asarray(alpha, dtype=float)

    def split(self, psi: np.ndarray):
        a = self.n_alpha
        return psi[:a], psi[a : a + self.p], psi[a + self.p :]

    def bounds(self, cut: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        ext = np.concatenate([[-np.inf], cut, [np.inf]])
        return ext[self.y + 1], ext[self.y]

    # -----------------------------------------------------------------------------------------
    def mode(self, psi: np.ndarray, *, u0=None, tol: float = 1e-10, max_iter: int = 100) -> Mode:
        """Newton iteration for the conditional modes at ``psi``."""
        st = self.st
        alpha, beta, theta = self.split(psi)
        upper, lower = self.bounds(self.cutpoints(alpha))
        eta0 = self.X @ beta
        Ts = st.theta_blocks(theta)
        a = st.local_a(Ts)
        if u0 is None:
            u0 = self._u
        if u0 is None:
            uF, uR = np.zeros(st.qF), np.zeros(st.r)
        else:
            uF, uR = u0[0].copy(), u0[1].copy()

        def evaluate(uF, uR):
            u_loc = st.gather(uF, uR)
            eta = eta0 + np.einsum("ij,ij->i", a, u_loc)
            d = obs_derivs(self.lk, upper, lower, eta, full=False)
            h = float(d.loglik.sum() - 0.5 * (uF @ uF + uR @ uR))
            return d, h, u_loc

        d, h, u_loc = evaluate(uF, uR)
        fac = None
        for _ in range(max_iter):
            gF, gR = st.scatter(a * d.d1[:, None])
            gF -= uF
            gR -= uR
            fac = st.factor(d.w, a)
            sF, sR = fac.solve(gF, gR)
            decrement = float(gF @ sF + gR @ sR)
            if decrement < tol:
                break
            step = 1.0
            for _ in range(40):
                nF, nR = uF + step * sF, uR + step * sR
                nd, nh, nloc = evaluate(nF, nR)
                if nh >= h - 1e-12 * abs(h):
                    break
                step /= 2.0
            else:
                raise ModeFailure("step halving failed while finding the conditional modes")
            uF, uR, d, h, u_loc = nF, nR, nd, nh, nloc
        else:
            raise ModeFailure("the conditional modes did not converge in 100 Newton steps")
        eta = eta0 + np.einsum("ij,ij->i", a, u_loc)
        full = obs_derivs(self.lk, upper, lower, eta, full=True)
        self._u = (uF, uR)
        loglik = h - 0.5 * fac.logdet
        return Mode(uF, uR, fac, full, a, u_loc, loglik)

    # -----------------------------------------------------------------------------------------
    def fixed_only(self, psi: np.ndarray) -> tuple[float, np.ndarray]:
        """Log-likelihood and gradient without random effects (``theta`` ignored)."""
        alpha, beta, _ = self.split(psi)
        upper, lower = self.bounds(self.cutpoints(alpha))
        d = obs_derivs(self.lk, upper, lower, self.X @ beta, full=True)
        grad = np.zeros(self.n_par)
        grad[: self.n_alpha] = self._alpha_grad(d.l_up, d.l_lo)
        grad[self.n_alpha : self.n_alpha + self.p] = self.X.T @ d.d1
        return float(d.loglik.sum()), grad

    def _alpha_grad(self, per_up: np.ndarray, per_lo: np.ndarray) -> np.ndarray:
        J1 = self.J - 1
        g = np.bincount(self.y[self.has_up], weights=per_up[self.has_up], minlength=J1)
        g += np.bincount(self.y[self.has_lo] - 1, weights=per_lo[self.has_lo], minlength=J1)
        if self.equidistant:
            return np.array([g.sum(), g @ np.arange(J1)])
        return g

    def laplace(self, psi: np.ndarray, *, gradient: bool = True):
        """Laplace log-likelihood at ``psi`` and (optionally) its exact gradient."""
        md = self.mode(psi)
        if not gradient:
            return md.loglik, None, md
        st = self.st
        d, a = md.derivs, md.a
        G = md.factor.local_inverse()
        Ga = np.einsum("ijk,ik->ij", G, a)
        c = np.einsum("ij,ij->i", a, Ga)
        e = d.w1 * c
        tF, tR = st.scatter(a * e[:, None])
        vF, vR = md.factor.solve(tF, tR)
        vF, vR = -0.5 * vF, -0.5 * vR
        v_loc = st.gather(vF, vR)
        s = np.einsum("ij,ij->i", a, v_loc)
        grad = np.empty(self.n_par)
        na, p = self.n_alpha, self.p
        # thresholds
        per_up = d.l_up - 0.5 * d.w_up * c + d.d1_up * s
        per_lo = d.l_lo - 0.5 * d.w_lo * c + d.d1_lo * s
        grad[:na] = self._alpha_grad(per_up, per_lo)
        # fixed effects
        grad[na : na + p] = self.X.T @ (d.d1 - 0.5 * e - d.w * s)
        # covariance parameters
        zl = st.Z_loc
        u_loc = md.u_loc
        for k, entries in enumerate(st.theta_entries()):
            total = 0.0
            for blk, r_, c_ in entries:  # s I: the sum over its diagonal entries
                s0 = st.slot_start[blk]
                zr = zl[:, s0 + r_]
                deta = zr * u_loc[:, s0 + c_]
                total += (
                    d.d1 @ deta
                    - d.w @ (zr * Ga[:, s0 + c_])
                    - 0.5 * (d.w1 * deta) @ c
                    + d.d1 @ (zr * v_loc[:, s0 + c_])
                    - (d.w * deta) @ s
                )
            grad[na + p + k] = total
        return md.loglik, grad, md

    # -----------------------------------------------------------------------------------------
    def agq(self, psi: np.ndarray, n_agq: int) -> float:
        """Adaptive Gauss-Hermite log-likelihood (one scalar grouping factor)."""
        md = self.mode(psi)
        st = self.st
        alpha, beta, theta = self.split(psi)
        upper, lower = self.bounds(self.cutpoints(alpha))
        eta0 = self.X @ beta
        a = md.a[:, 0]
        codes = st.F.codes
        Hd = 1.0 / md.factor.HFF_inv[:, 0, 0]
        sd = 1.0 / np.sqrt(Hd)
        x, wts = np.polynomial.hermite.hermgauss(int(n_agq))
        total = np.zeros((st.F.n_levels, x.size))
        for k, xk in enumerate(x):
            u = md.uF + np.sqrt(2.0) * sd * xk
            eta = eta0 + a * u[codes]
            ll = np.log(self.lk.interval(upper - eta, lower - eta))
            total[:, k] = (
                np.bincount(codes, weights=ll, minlength=st.F.n_levels) - 0.5 * u * u + xk * xk
            )
        mx = total.max(axis=1, keepdims=True)
        lse = mx[:, 0] + np.log(np.exp(total - mx) @ wts)
        return float(np.sum(lse + np.log(sd) - 0.5 * np.log(np.pi)))
