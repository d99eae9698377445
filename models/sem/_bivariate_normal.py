"""The standard bivariate normal distribution, vectorised over points and correlations.

Written by hand because scipy's ``multivariate_normal.cdf`` takes one covariance matrix per
call and integrates point by point, far too slow for every cell of every item pair at every
step of the polychoric fits. The algorithm is Drezner & Wesolowsky's (1990) as refined by Genz
(2004), the one ``pbivnorm`` (which lavaan calls) and ``mvtnorm`` use: Gauss-Legendre
quadrature of Plackett's integral over ``asin(r)`` (6, 12 or 20 points by ``|r|``) for
``|r| < 0.925``, and of a transformed integral with its asymptotic terms above; about 1e-15
absolute error.

References
----------
Drezner, Z., & Wesolowsky, G. O. (1990). On the computation of the bivariate normal integral.
Journal of Statistical Computation and Simulation, 35, 101-107.

Genz, A. (2004). Numerical computation of rectangular bivariate and trivariate normal and t
probabilities. Statistics and Computing, 14, 251-260.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

_LOG_2PI = float(np.log(2.0 * np.pi))

# the negative half of the 6, 12 and 20-point Gauss-Legendre rules: the integrands are
# evaluated at the mirrored pairs 1 - x and 1 + x
_GL_HALF = {
    n: (x[: n // 2], w[: n // 2])
    for n, (x, w) in ((n, np.polynomial.legendre.leggauss(n)) for n in (6, 12, 20))
}


def bvn_upper(h: np.ndarray, k: np.ndarray, r: np.ndarray) -> np.ndarray:
    """Return ``P(X > h, Y > k)`` for correlation ``r``; finite arrays of one shape."""
    out = np.empty(h.shape)
    absr = np.abs(r)
    for n, sel in ((6, absr < 0.3), (12, (absr >= 0.3) & (absr < 0.75)), (20, absr >= 0.75)):
        low = sel & (absr < 0.925)
        if low.any():
            out[low] = _bvn_plackett(h[low], k[low], r[low], *_GL_HALF[n])
        high = sel & (absr >= 0.925)
        if high.any():
            out[high] = _bvn_near_one(h[high], k[high], r[high], *_GL_HALF[n])
    return out


def _bvn_plackett(h, k, r, x, w):
    # Plackett: P = Phi(-h) Phi(-k) + 1/(2 pi) int_0^asin(r) exp(-(h^2 + k^2 - 2 h k sin t)
    # / (2 cos^2 t)) dt
    hk = (h * k)[:, None]
    hs = ((h * h + k * k) / 2.0)[:, None]
    asr = np.arcsin(r)[:, None]
    total = np.zeros(h.shape)
    for sign in (-1.0, 1.0):
        sn = np.sin(asr * (1.0 + sign * x) / 2.0)
        total += (w * np.exp((sn * hk - hs) / (1.0 - sn * sn))).sum(axis=1)
    return total * asr[:, 0] / (4.0 * np.pi) + special.ndtr(-h) * special.ndtr(-k)


def _bvn_near_one(h, k, r, x, w):
    # |r| >= 0.925: Drezner & Wesolowsky's integral in sqrt(1 - r^2), its two asymptotic terms
    # in closed form and the remainder by quadrature; negative r through P(X > h, -Y > -k)
    k = np.where(r < 0, -k, k)
    hk = h * k
    bvn = np.zeros(h.shape)
    inner = np.abs(r) < 1.0
    if inner.any():
        hh, kk, hki, ri = h[inner], k[inner], hk[inner], r[inner]
        a_s = (1.0 - ri) * (1.0 + ri)
        a = np.sqrt(a_s)
        bs = (hh - kk) ** 2
        c = (4.0 - hki) / 8.0
        d = (12.0 - hki) / 16.0
        val = (
            a
            * np.exp(-(bs / a_s + hki) / 2.0)
            * (1.0 - c * (bs - a_s) * (1.0 - d * bs / 5.0) / 3.0 + c * d * a_s * a_s / 5.0)
        )
        b = np.sqrt(bs)
        tail = (
            np.exp(-hki / 2.0)
            * np.sqrt(2.0 * np.pi)
            * special.ndtr(-b / a)
            * b
            * (1.0 - c * bs * (1.0 - d * bs / 5.0) / 3.0)
        )
        val = val - np.where(hki > -160.0, tail, 0.0)
        half = (a / 2.0)[:, None]
        with np.errstate(under="ignore", divide="ignore"):
            for sign in (-1.0, 1.0):
                xs = (half * (sign * x + 1.0)) ** 2
                rs = np.sqrt(1.0 - xs)
                term = np.exp(-bs[:, None] / (2.0 * xs) - hki[:, None] / (1.0 + rs)) / rs - np.exp(
                    -(bs[:, None] / xs + hki[:, None]) / 2.0
                ) * (1.0 + c[:, None] * xs * (1.0 + d[:, None] * xs))
                val = val + (half * w * term).sum(axis=1)
        bvn[inner] = -val / (2.0 * np.pi)
    positive = r > 0
    bvn[positive] += special.ndtr(-np.maximum(h[positive], k[positive]))
    neg = ~positive
    bvn[neg] = -bvn[neg]
    add = neg & (k > h)
    lower = add & (h < 0)
    bvn[lower] += special.ndtr(k[lower]) - special.ndtr(h[lower])
    upper = add & (h >= 0)
    bvn[upper] += special.ndtr(-h[upper]) - special.ndtr(-k[upper])
    return bvn


def bivariate_normal_cdf(x: Any, y: Any, rho: Any) -> np.ndarray:
    """``P(X <= x, Y <= y)`` for standard bivariate normals with correlation ``rho`` (broadcast).

    Infinite limits are allowed. Accurate to about 1e-15 (Genz 2004), as ``pbivnorm``, which
    lavaan calls.
    """
    x, y, rho = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (x, y, rho)))
    out = np.zeros(x.shape)
    finite = np.isfinite(x) & np.isfinite(y)
    if finite.any():
        out[finite] = bvn_upper(-x[finite], -y[finite], rho[finite])
    x_top, y_top = x == np.inf, y == np.inf
    out[x_top] = special.ndtr(y[x_top])
    out[y_top & ~x_top] = special.ndtr(x[y_top & ~x_top])
    return out


def bvn_density(x: np.ndarray, y: np.ndarray, rho: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the density at finite ``(x, y)`` and its derivative in ``rho``."""
    one = 1.0 - rho * rho
    q = x * x - 2.0 * rho * x * y + y * y
    dens = np.exp(-_LOG_2PI - 0.5 * np.log(one) - q / (2.0 * one))
    # d log(density) / d rho = rho / (1 - rho^2) + x y / (1 - rho^2) - rho q / (1 - rho^2)^2
    return dens, dens * (rho / one + x * y / one - rho * q / (one * one))
