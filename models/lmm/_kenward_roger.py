"""Kenward-Roger adjusted covariance and denominator df of single fixed effects.

mixedlm 1.3 offers a ``kenward_roger_df`` that returns Satterthwaite's df unchanged and no adjusted
covariance matrix, so the Kenward & Roger (1997) method is computed here, following pbkrtest's
``vcovAdj`` and ``Lb_ddf`` (Halekoh & Hojsgaard 2014): the marginal covariance
``V = sum_r s_r G_r`` is linear in the variance-covariance parameters ``s_r`` (each random-effect
variance and covariance, and the residual variance), ``W`` is twice the inverse of the expected
REML information of ``s``, and

``Phi_A = Phi + 2 Phi U Phi`` with ``U = sum_rs W_rs (Q_rs - P_r Phi P_s)``,
``P_r = -X' V^-1 G_r V^-1 X``, ``Q_rs = X' V^-1 G_r V^-1 G_s V^-1 X``.

The computation is dense in the number of observations, as pbkrtest's is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

MAX_KR_OBS = 5000
"""Largest number of observations for which the dense Kenward-Roger computation is run."""


@dataclass(frozen=True)
class KenwardRoger:
    """Adjusted covariance of the fixed effects and the per-coefficient df.

    ``unadjusted`` (``Phi``), ``P`` and ``W`` are kept for the df of other contrasts
    (:meth:`ddf`, pbkrtest's ``Lb_ddf``).
    """

    vcov: np.ndarray
    df: np.ndarray
    unadjusted: np.ndarray
    P: tuple[np.ndarray, ...]
    W: np.ndarray

    def ddf(self, contrasts: np.ndarray) -> np.ndarray:
        """Kenward-Roger df of each row of ``contrasts`` (shape ``(c, p)``)."""
        L = np.atleast_2d(contrasts)
        return np.array([_ddf(row, self.unadjusted, list(self.P), self.W) for row in L])


def _indicator(codes: np.ndarray, z: np.ndarray, n_levels: int) -> sparse.csr_matrix:
    n = len(codes)
    return sparse.csr_matrix((z, (np.arange(n), codes)), shape=(n, n_levels))


def kenward_roger(
    X: np.ndarray,
    blocks: list[tuple[np.ndarray, np.ndarray, int, np.ndarray]],
    sigma2: float,
) -> KenwardRoger:
    """Kenward-Roger covariance and df for each fixed effect of a REML fit.

    Parameters
    ----------
    X : numpy.ndarray
        ``n x p`` fixed-effects matrix.
    blocks : list of tuple
        One ``(codes, Z, n_levels, cov)`` per random-effects block: group code of each row,
        the ``n x k`` random-effects columns and the ``k x k`` estimated covariance matrix.
    sigma2 : float
        Estimated residual variance.

    Returns
    -------
    KenwardRoger
        ``vcov`` (adjusted ``p x p`` covariance) and ``df`` (one per coefficient).
    """
    n, p = X.shape
    G: list[np.ndarray] = []
    V = sigma2 * np.eye(n)
    for codes, Z, n_levels, cov in blocks:
        Zs = [_indicator(codes, Z[:, i], n_levels) for i in range(Z.shape[1])]
        for j in range(len(Zs)):
            for i in range(j, len(Zs)):
                g = (Zs[i] @ Zs[j].T).toarray()
                if i != j:
                    g = g + g.T
                G.append(g)
                V += cov[i, j] * g
    G.append(np.eye(n))
    Vinv = np.linalg.inv(V)
    Vinv = (Vinv + Vinv.T) / 2.0
    VinvX = Vinv @ X
    Phi = np.linalg.inv(X.T @ VinvX)
    H = [g @ Vinv for g in G]  # G_r V^-1
    GX = [h @ X for h in H]  # G_r V^-1 X
    P = [-(o.T @ VinvX) for o in GX]
    P = [(m + m.T) / 2.0 for m in P]
    m = len(G)
    Q = {(r, s): GX[r].T @ Vinv @ GX[s] for r in range(m) for s in range(m)}
    IE2 = np.empty((m, m))
    for r in range(m):
        for s in range(r, m):
            k = np.sum(H[r].T * H[s])
            IE2[r, s] = IE2[s, r] = (
                k - 2.0 * np.sum(Phi * Q[r, s]) + np.sum((Phi @ P[r]) * (P[s] @ Phi))
            )
    if np.min(np.abs(np.linalg.eigvalsh(IE2))) > 1e-10:
        W = 2.0 * np.linalg.inv(IE2)
    else:
        W = 2.0 * np.linalg.pinv(IE2)
    U = np.zeros((p, p))
    for r in range(m):
        for s in range(m):
            U += W[r, s] * (Q[r, s] - P[r] @ Phi @ P[s])
    Phi_A = Phi + 2.0 * Phi @ U @ Phi
    df = np.array([_ddf(np.eye(p)[j], Phi, P, W) for j in range(p)])
    return KenwardRoger(vcov=(Phi_A + Phi_A.T) / 2.0, df=df, unadjusted=Phi, P=tuple(P), W=W)


def _ddf(L: np.ndarray, Phi: np.ndarray, P: list[np.ndarray], W: np.ndarray) -> float:
    """Denominator df of the single contrast ``L`` (pbkrtest's ``Lb_ddf`` with ``q = 1``)."""
    L = L.reshape(1, -1)
    Theta = L.T @ np.linalg.solve(L @ Phi @ L.T, L)
    ThetaPhi = Theta @ Phi
    us = [ThetaPhi @ Pr @ Phi for Pr in P]
    A1 = A2 = 0.0
    for r in range(len(P)):
        for s in range(len(P)):
            A1 += W[r, s] * np.trace(us[r]) * np.trace(us[s])
            A2 += W[r, s] * np.sum(us[r] * us[s].T)
    q = 1.0
    B = (A1 + 6.0 * A2) / (2.0 * q)
    g = ((q + 1.0) * A1 - (q + 4.0) * A2) / ((q + 2.0) * A2)
    den = 3.0 * q + 2.0 * (1.0 - g)
    c1, c2, c3 = g / den, (q - g) / den, (q + 2.0 - g) / den
    v0 = 1.0 + c1 * B
    v0 = 0.0 if abs(v0) < 1e-10 else v0
    v1, v2 = 1.0 - c2 * B, 1.0 - c3 * B
    rho = (1.0 / q) * ((1.0 - A2 / q) / v1) ** 2 * v0 / v2
    return float(4.0 + (q + 2.0) / (q * rho - 1.0))
