"""mgcv's cubic regression spline ``s(x, bs = "cr", k = K)``: knots, basis and penalty.

Wood (2017, section 5.3.1): ``k`` knots at the quantiles of the unique values of ``x``
(``quantile(unique(x), seq(0, 1, length = k))``, R's type 7), the basis parametrised by the
function's values at the knots (cubic between knots, linear beyond the end knots), and the
penalty ``integral f''(x)^2 dx`` as the matrix ``D' B^-1 D``. The constrained smooth is built
from this basis and penalty as for any basis (:func:`models.lmm._smooth.construct_smooth`).

Reference
---------
Wood SN (2017). Generalized Additive Models: An Introduction with R, 2nd ed. CRC Press.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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


@dataclass(frozen=True)
class CrBasis:
    """The unconstrained cubic regression spline: its knots and ``F``."""

    knots: np.ndarray
    F: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Return the ``len(x) x k`` basis at ``x``."""
        return cr_basis(x, self.knots, self.F)


def cr_setup(x: np.ndarray, k: int) -> tuple[CrBasis, np.ndarray, np.ndarray]:
    """Return the basis, its ``n x k`` matrix at ``x`` and the ``k x k`` penalty."""
    knots = cr_knots(x, k)
    F, S = cr_matrices(knots)
    basis = CrBasis(knots, F)
    return basis, basis(x), S
