"""mgcv's thin plate regression spline ``s(x, bs = "tp", k = K)`` of one covariate.

The basis of Wood (2003) as ``mgcv::smooth.construct.tp.smooth.spec`` builds it for one
covariate with the default second-order penalty (``m = 2``, ``d = 1``): the covariate is
centred on its mean, every unique value is a knot (mgcv subsamples 2000 knots beyond that with
its own random draw; those are refused here), the thin plate spline's radial matrix
``E_ij = eta(|x_i - x_j|)`` with ``eta(r) = r^3 / 12`` is truncated to its ``k`` eigenvectors of
largest absolute eigenvalue (in decreasing order of the eigenvalue, as mgcv's Lanczos routine
returns them), the constraint ``T' U delta = 0`` (``T = [1, x]``, the penalty's null space) is
absorbed by mgcv's ``QT`` Householder factorisation, the null space ``[1, x]`` is appended, and
every column is scaled to root mean square 1 over the data. With exactly ``k`` unique values
the eigen step is skipped (mgcv's "pure knot" basis).

The constrained smooth is then built from this basis and penalty as for any basis
(:func:`models.lmm._smooth.constrain`). Eigenvector signs do not matter: a flipped eigenvector
flips the same column of every later matrix (the Householder steps are sign-equivariant), which
leaves the fit unchanged.

Reference
---------
Wood SN (2003). Thin plate regression splines. JRSS B 65(1), 95-114.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from models._errors import InvalidParameterError

MAX_KNOTS = 2000
"""mgcv's ``max.knots``: beyond this many unique values it draws knots at random."""

NULL_DIM = 2
"""Dimension of the penalty's null space (the constant and the linear trend)."""


def _eta(r: np.ndarray) -> np.ndarray:
    """Evaluate the cubic thin plate spline's radial function (``m = 2, d = 1``)."""
    return np.abs(r) ** 3 / 12.0


def _qt(A: np.ndarray) -> np.ndarray:
    """Return ``Q`` of mgcv's ``QT``: ``A Q = [0, T]`` by Householder steps from the right.

    Row ``i`` of ``A`` (``M x k``) has its first ``k - i`` entries rotated into entry
    ``k - i - 1``; ``Q`` is the product of the reflections in that order.
    """
    A = np.array(A, dtype=float)
    rows, k = A.shape
    Q = np.eye(k)
    for i in range(rows):
        last = k - i - 1
        u = np.zeros(k)
        u[: last + 1] = A[i, : last + 1]
        norm = float(np.linalg.norm(u))
        if norm == 0.0:
            continue
        if u[last] < 0.0:
            norm = -norm
        u[last] += norm
        H = np.eye(k) - np.outer(u, u) / (norm * u[last])
        A = A @ H
        Q = Q @ H
    return Q


@dataclass(frozen=True)
class TpBasis:
    """The unconstrained thin plate basis: mean, knots and the map ``UZ`` to the basis.

    ``knots`` are the unique centred values; ``UZ`` (``(n_knots + 2) x k``) maps the radial
    functions at the knots and ``[1, x]`` to the ``k`` basis functions (mgcv's ``UZ``).
    """

    shift: float
    knots: np.ndarray
    UZ: np.ndarray

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """Return the ``len(x) x k`` basis at ``x`` (mgcv's ``predict_tprs``)."""
        xc = np.asarray(x, dtype=float) - self.shift
        b = np.column_stack([_eta(xc[:, None] - self.knots[None, :]), np.ones(len(xc)), xc])
        return b @ self.UZ


def tp_setup(x: np.ndarray, k: int) -> tuple[TpBasis, np.ndarray, np.ndarray]:
    """Build the thin plate basis of ``x`` of dimension ``k`` as ``smooth.construct.tp`` does.

    Returns
    -------
    basis : TpBasis
        Evaluates the basis at new values.
    X : numpy.ndarray
        ``n x k`` basis at the data (the penalised columns first, then ``1`` and ``x``).
    S : numpy.ndarray
        ``k x k`` penalty (zero on the last two rows and columns).

    Raises
    ------
    InvalidParameterError
        With more than :data:`MAX_KNOTS` unique values, where mgcv would draw knots at random.
    """
    x = np.asarray(x, dtype=float)
    shift = math.fsum(x) / len(x)
    shift += math.fsum(x - shift) / len(x)  # R's two-pass mean
    xc = x - shift
    knots, index = np.unique(xc, return_inverse=True)
    nu = len(knots)
    if nu > MAX_KNOTS:
        raise InvalidParameterError(
            f'a thin plate smooth (bs="tp") takes at most {MAX_KNOTS} unique values of its '
            f'column; this one has {nu} (mgcv would draw knots at random): use bs="cr"'
        )
    E = _eta(knots[:, None] - knots[None, :])
    T = np.column_stack([np.ones(nu), knots])
    r = k - NULL_DIM
    if nu == k:  # every knot kept: no eigen step
        U = np.eye(nu)
        Q = _qt(T.T)
        S = Q.T @ E @ Q
        UZ = _uz(U @ Q[:, :r], nu)
        X = TpBasis(shift, knots, UZ)(x)
    else:
        values, vectors = np.linalg.eigh(E)
        keep = np.argsort(-np.abs(values), kind="stable")[:k]
        keep = keep[np.argsort(-values[keep], kind="stable")]
        values, U = values[keep], vectors[:, keep]
        Q = _qt(T.T @ U)
        S = Q.T @ np.diag(values) @ Q
        UZ = _uz(U @ Q[:, :r], nu)
        Xk = np.column_stack([(U * values) @ Q[:, :r], T])
        X = Xk[index]
    S[r:, :] = 0.0
    S[:, r:] = 0.0
    w = np.sqrt(np.mean(X**2, axis=0))
    X = X / w
    S = S / np.outer(w, w)
    return TpBasis(shift, knots, UZ / w), X, (S + S.T) / 2.0


def _uz(UQ: np.ndarray, nu: int) -> np.ndarray:
    """Assemble mgcv's ``UZ``: the radial part on top, the null space's identity below."""
    r = UQ.shape[1]
    UZ = np.zeros((nu + NULL_DIM, r + NULL_DIM))
    UZ[:nu, :r] = UQ
    UZ[nu:, r:] = np.eye(NULL_DIM)
    return UZ
