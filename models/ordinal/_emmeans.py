"""Estimated marginal means of a fitted cumulative link mixed model, as emmeans gives for clmm.

The reference grid is the linear model's (:mod:`models._refgrid`): every level of each factor,
covariates at their means, equal weights; the random effects are 0 (the typical group), as
emmeans' ``clm``/``clmm`` support uses the fixed part only. Two modes (emmeans' ``mode``):

* ``"latent"``: the linear predictor on the latent scale, ``x' beta - mean_j(theta_j)`` (the
  thresholds' average subtracted, so larger values mean higher categories), averaged over the
  grid rows of each combination; a linear function of thresholds and fixed effects, with
  standard error ``sqrt(l' V l)``.
* ``"prob"``: the probability of each category, ``F(theta_k - x' beta) - F(theta_{k-1} -
  x' beta)`` at each grid row, averaged over the grid rows of each combination; standard
  errors by the delta method (the gradient of each grid row's probabilities with respect to
  thresholds and fixed effects, ``G V G'``), as emmeans' ``regrid``.

Inference is asymptotic (``df`` infinite, ``z`` statistics and normal quantiles). ``V`` is
the covariance of thresholds and fixed effects (``vcov_``); for equidistant thresholds the
thresholds are ``J alpha`` with ``J`` the Jacobian of ``threshold.1`` and ``spacing``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from models._checks import check_choice, check_unit
from models._refgrid import check_request, grid_frame, grid_values, product
from models.lmm import MarginalMeans

__all__ = ["MODES", "marginal_means"]

MODES = ("latent", "prob")
"""emmeans' modes offered for the ordinal model."""

_WHERE = "OrdinalMixedModel.emmeans"


@dataclass(frozen=True)
class _Asymptotic:
    """Estimates and covariance of linear functions of ``coef``; infinite df."""

    coef: np.ndarray
    vcov: np.ndarray

    def estimate(self, L: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        est = L @ self.coef
        se = np.sqrt(np.einsum("ij,jk,ik->i", L, self.vcov, L))
        return est, se, np.full(len(est), np.inf)


def threshold_jacobian(model: Any) -> np.ndarray:
    """``d theta / d alpha``: the identity, or ``[1, j - 1]`` rows for equidistant thresholds."""
    n_cut = len(model.categories_) - 1
    if model.threshold == "equidistant":
        return np.column_stack([np.ones(n_cut), np.arange(n_cut, dtype=float)])
    return np.eye(n_cut)


def _grid_rows(model: Any, grid: pd.DataFrame) -> np.ndarray:
    X = model.design_.transform(grid, random=False).X
    if "Intercept" in X.columns:
        X = X.drop(columns=["Intercept"])
    return X.to_numpy(dtype=float)


def _probabilities(model: Any, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the category probabilities of the grid rows and their gradient.

    The probabilities are rows x categories flattened row by row; the gradient is with
    respect to (alpha, beta).
    """
    jac = threshold_jacobian(model)
    theta = model.cutpoints_
    eta = X @ model.beta_.to_numpy()
    z = theta[None, :] - eta[:, None]
    lk = model._problem.lk
    cum = lk.cdf(z)
    dens = lk.pdf_derivs(z)[0]
    n, n_cut = z.shape
    # gradient of each cumulative probability: f(z) [J_k, -x_i]
    grad_cum = np.concatenate(
        [
            dens[:, :, None] * jac[None, :, :],
            -dens[:, :, None] * X[:, None, :],
        ],
        axis=2,
    )
    zeros = np.zeros((n, 1, grad_cum.shape[2]))
    padded = np.concatenate([zeros, grad_cum, zeros], axis=1)
    grad = np.diff(padded, axis=1)
    probs = np.diff(np.concatenate([np.zeros((n, 1)), cum, np.ones((n, 1))], axis=1), axis=1)
    return probs.reshape(-1), grad.reshape(n * (n_cut + 1), -1)


def marginal_means(
    model: Any,
    specs: Any,
    *,
    by: Any = None,
    at: dict[str, Any] | None = None,
    mode: str = "latent",
    ci_level: float = 0.95,
) -> MarginalMeans:
    """Marginal means of a fitted OrdinalMixedModel (:meth:`OrdinalMixedModel.emmeans`)."""
    frame = getattr(model, "_predictors", None)
    spec_names, by_names, at = check_request(frame, specs, by, at, where=_WHERE)
    check_unit(ci_level, name="ci_level", where=_WHERE)
    check_choice(mode, MODES, name="mode", where=_WHERE)
    design = model.design_
    values = grid_values(design, frame, list(frame.columns), at, where=_WHERE)
    grid = grid_frame(frame, values)
    X = _grid_rows(model, grid)
    keys = list(zip(*[grid[n].tolist() for n in spec_names + by_names], strict=True))
    index: dict[tuple[Any, ...], list[int]] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    specs_combos = product(values, spec_names)
    by_combos = product(values, by_names)
    V = model.vcov_.to_numpy()
    n_grid = len(grid)
    if mode == "latent":
        jac = threshold_jacobian(model)
        rows = np.hstack([-np.tile(jac.mean(axis=0), (n_grid, 1)), X])
        inference = _Asymptotic(np.concatenate([model.alpha_, model.beta_.to_numpy()]), V)
        combos = [(s, (), b) for b in by_combos for s in specs_combos]
        L = np.vstack([rows[index[s + b]].mean(axis=0) for s, _, b in combos])
        groups: tuple[str, ...] = by_names
    else:
        probs, grad = _probabilities(model, X)
        n_cat = len(model.categories_)
        inference = _Asymptotic(probs, grad @ V @ grad.T)
        combos = [(s, (k,), b) for b in by_combos for k in range(n_cat) for s in specs_combos]
        L = np.zeros((len(combos), probs.size))
        for r, (s, (k,), b) in enumerate(combos):
            members = np.asarray(index[s + b])
            L[r, members * n_cat + k] = 1.0 / members.size
        groups = (design.spec.response, *by_names)
    est, se, df = inference.estimate(L)
    q = special.ndtri(0.5 + float(ci_level) / 2.0)
    columns: dict[str, Any] = {name: [c[0][j] for c in combos] for j, name in enumerate(spec_names)}
    if mode == "prob":
        columns[design.spec.response] = [model.categories_[c[1][0]] for c in combos]
    for j, name in enumerate(by_names):
        columns[name] = [c[2][j] for c in combos]
    columns.update(
        {"emmean": est, "se": se, "df": df, "ci_low": est - q * se, "ci_high": est + q * se}
    )
    return MarginalMeans(
        table=pd.DataFrame(columns),
        specs=spec_names,
        by=groups,
        ddf="asymptotic",
        ci_level=float(ci_level),
        _linfct=L,
        _inference=inference,
    )
