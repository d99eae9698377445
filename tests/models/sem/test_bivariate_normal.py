"""The bivariate normal CDF against pbivnorm 0.6.0, which lavaan calls (reference/wlsmv_stats.R).

The grid reaches every branch of Genz's algorithm (correlations from -0.999 to 0.999). Both
implement the same double-precision algorithm: 1e-14 absolute.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from numpy.testing import assert_allclose
from scipy import special

from models.sem._bivariate_normal import bivariate_normal_cdf, bvn_density

REF = Path(__file__).resolve().parents[1] / "reference" / "wlsmv_stats.json"
GRID = json.loads(REF.read_text(encoding="utf-8"))["pbivnorm"]


def test_cdf_matches_pbivnorm():
    x, y, rho = (np.array(GRID[k]) for k in ("x", "y", "rho"))
    assert_allclose(bivariate_normal_cdf(x, y, rho), GRID["p"], rtol=0, atol=1e-14)


def test_cdf_broadcasts_and_takes_infinite_limits():
    x = np.array([-np.inf, 0.3, np.inf, np.inf, 0.3])
    y = np.array([0.5, -np.inf, 0.5, np.inf, np.inf])
    got = bivariate_normal_cdf(x, y, 0.4)
    assert_allclose(got, [0.0, 0.0, special.ndtr(0.5), 1.0, special.ndtr(0.3)], rtol=1e-15)
    grid = bivariate_normal_cdf(np.array([[0.1], [0.7]]), np.array([-0.2, 0.4]), 0.6)
    assert grid.shape == (2, 2)
    assert_allclose(grid[1, 0], bivariate_normal_cdf(0.7, -0.2, 0.6), rtol=1e-15)


def test_density_is_the_derivative_of_the_cdf_in_rho():
    x, y, rho = np.array([-0.8, 0.3, 1.2]), np.array([0.4, 0.3, 1.0]), np.array([-0.6, 0.2, 0.95])
    step = 1e-5
    numeric = (bivariate_normal_cdf(x, y, rho + step) - bivariate_normal_cdf(x, y, rho - step)) / (
        2 * step
    )
    dens, ddens = bvn_density(x, y, rho)
    assert_allclose(dens, numeric, rtol=1e-8)
    numeric2 = (bvn_density(x, y, rho + step)[0] - bvn_density(x, y, rho - step)[0]) / (2 * step)
    assert_allclose(ddens, numeric2, rtol=1e-7)
