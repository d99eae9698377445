"""Posterior marginal means of a fitted BayesianMixedModel on emmeans' reference grid.

The grid is the linear and ordinal models' (:mod:`models._refgrid`: every factor level,
covariates at their means, equal weights) and the random effects are 0, as for
:meth:`models.ordinal.OrdinalMixedModel.emmeans`. The mean of each combination is computed
draw by draw: for the gaussian family ``x' beta_s`` averaged over the grid rows of the
combination (on the data's scale); for the ordinal family on the latent scale,
``x' beta_s - mean_j(c_js)`` (``mode="latent"``, emmeans' sign), or each category's
probability ``F(c_ks - x' beta_s) - F(c_(k-1)s - x' beta_s)`` averaged over the grid rows
(``mode="prob"``). Each mean (and each contrast of means, computed draw by draw) is summarised
by its posterior mean, standard deviation and highest-density interval at ``ci_level``, as the
model's other intervals, and the probability that it is above 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import models._columns as col
from _empathic_base.results import Result
from models._backends import pymc_model as pmod
from models._checks import check_choice
from models._errors import InvalidParameterError
from models._refgrid import (
    check_request,
    contrast_matrix,
    grid_frame,
    grid_values,
    level_labels,
    product,
)

__all__ = ["CONTRAST_METHODS", "PosteriorContrasts", "PosteriorMeans", "posterior_means"]

CONTRAST_METHODS = ("pairwise", "trt.vs.ctrl", "consec", "poly")
"""emmeans' contrast families (no multiplicity adjustment: each interval is its own)."""

_SUMMARY = [col.ESTIMATE, col.SE, col.CI_LOW, col.CI_HIGH, "prob_positive"]
_WHERE = "BayesianMixedModel.emmeans"


def _summaries(draws: np.ndarray, ci_level: float) -> dict[str, np.ndarray]:
    """Posterior mean, sd, HDI and P(> 0) of each column of ``draws`` (S x m)."""
    import arviz as az

    hdi = np.array([az.hdi(draws[:, j], hdi_prob=ci_level) for j in range(draws.shape[1])])
    hdi = hdi.reshape(-1, 2)
    return {
        col.ESTIMATE: draws.mean(axis=0),
        col.SE: draws.std(axis=0, ddof=1),
        col.CI_LOW: hdi[:, 0],
        col.CI_HIGH: hdi[:, 1],
        "prob_positive": (draws > 0).mean(axis=0),
    }


@dataclass(frozen=True, repr=False)
class PosteriorContrasts(Result):
    """Posterior contrasts of marginal means.

    Attributes
    ----------
    table : pandas.DataFrame
        ``contrast``, the ``by`` predictors, ``estimate`` (posterior mean), ``se`` (posterior
        sd), ``ci_low, ci_high`` (HDI), ``prob_positive``.
    method : str
        The contrast family.
    ci_level : float
        Probability of the intervals.
    draws : numpy.ndarray
        ``S x rows``: each contrast per posterior draw.
    """

    table: pd.DataFrame
    method: str
    ci_level: float
    draws: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def _title(self) -> str:
        return f"PosteriorContrasts({self.method}, {self.ci_level:.0%} HDI)"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Posterior contrasts", self.table)]


@dataclass(frozen=True, repr=False)
class PosteriorMeans(Result):
    """Posterior marginal means of a fitted Bayesian mixed model.

    Attributes
    ----------
    table : pandas.DataFrame
        The ``specs`` predictors (with ``mode="prob"`` then the response, holding each
        category), the ``by`` predictors, ``estimate`` (posterior mean), ``se`` (posterior
        sd), ``ci_low, ci_high`` (HDI at ``ci_level``), ``prob_positive``.
    specs, by : tuple of str
        The predictors of the means and of the groups (with ``mode="prob"`` the response is
        the first ``by`` group).
    mode : str
        ``"mean"`` (gaussian), ``"latent"`` or ``"prob"`` (ordinal).
    ci_level : float
        Probability of the intervals.
    draws : numpy.ndarray
        ``S x rows``: each mean per posterior draw, chains stacked in order.
    """

    table: pd.DataFrame
    specs: tuple[str, ...]
    by: tuple[str, ...]
    mode: str
    ci_level: float
    draws: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    def _title(self) -> str:
        by = f" | {', '.join(self.by)}" if self.by else ""
        return f"PosteriorMeans(~ {' + '.join(self.specs)}{by}, {self.mode})"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Posterior marginal means", self.table)]

    def pairs(self) -> PosteriorContrasts:
        """All pairwise differences within each ``by`` group (``contrasts("pairwise")``)."""
        return self.contrasts(method="pairwise")

    def contrasts(self, *, method: str = "pairwise") -> PosteriorContrasts:
        """Contrasts of the means within each ``by`` group, draw by draw.

        Parameters
        ----------
        method : {"pairwise", "trt.vs.ctrl", "consec", "poly"}, default "pairwise"
            emmeans' families: every pair (first minus later), each level minus the first,
            each level minus the one before, orthogonal polynomials.

        Returns
        -------
        PosteriorContrasts
        """
        check_choice(method, CONTRAST_METHODS, name="method", where="PosteriorMeans.contrasts")
        table = self.table
        keys = list(zip(*[table[b].tolist() for b in self.by], strict=True)) or [()] * len(table)
        groups: dict[Any, list[int]] = {}
        for i, key in enumerate(keys):
            groups.setdefault(key, []).append(i)
        frames, blocks = [], []
        for key, rows in groups.items():
            C, names = contrast_matrix(method, level_labels(table, self.specs, rows))
            draws = self.draws[:, rows] @ C.T
            columns: dict[str, Any] = {"contrast": names}
            for name, value in zip(self.by, key, strict=True):
                columns[name] = [value] * len(names)
            columns.update(_summaries(draws, self.ci_level))
            frames.append(pd.DataFrame(columns))
            blocks.append(draws)
        return PosteriorContrasts(
            table=pd.concat(frames, ignore_index=True),
            method=method,
            ci_level=self.ci_level,
            draws=np.hstack(blocks),
        )


def posterior_means(
    model: Any,
    specs: Any,
    *,
    by: Any = None,
    at: dict[str, Any] | None = None,
    mode: str | None = None,
    ci_level: float,
) -> PosteriorMeans:
    """Posterior marginal means of a fitted BayesianMixedModel (:meth:`emmeans`)."""
    inputs = model._inputs
    frame = getattr(model, "_predictors", None)
    spec_names, by_names, at = check_request(frame, specs, by, at, where=_WHERE)
    ordinal = inputs.family == "ordinal"
    mode = ("latent" if ordinal else "mean") if mode is None else mode
    check_choice(mode, ("latent", "prob") if ordinal else ("mean",), name="mode", where=_WHERE)
    design = model._design
    values = grid_values(design, frame, list(frame.columns), at, where=_WHERE)
    grid = grid_frame(frame, values)
    X = design.transform(grid, random=False).X
    missing = [t for t in inputs.fixed_terms if t not in X.columns]
    if missing:
        raise InvalidParameterError(f"{_WHERE}: the reference grid lacks the columns {missing}")
    X_data = X[list(inputs.fixed_terms)].to_numpy(dtype=float)
    eta = pmod.linear_predictor(model._draws, X_data, [], intercept=inputs.intercept)
    keys = list(zip(*[grid[n].tolist() for n in spec_names + by_names], strict=True))
    index: dict[tuple[Any, ...], list[int]] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    specs_combos, by_combos = product(values, spec_names), product(values, by_names)
    if mode == "prob":
        probs = pmod.category_probabilities(eta, model._draws["cutpoints"], inputs.link)
        combos = [
            (s, (k,), b) for b in by_combos for k in range(probs.shape[2]) for s in specs_combos
        ]
        draws = np.column_stack([probs[:, index[s + b], k].mean(axis=1) for s, (k,), b in combos])
        groups: tuple[str, ...] = (design.spec.response, *by_names)
    else:
        if mode == "latent":
            eta = eta - model._draws["cutpoints"].mean(axis=1)[:, None]
        combos = [(s, (), b) for b in by_combos for s in specs_combos]
        draws = np.column_stack([eta[:, index[s + b]].mean(axis=1) for s, _, b in combos])
        groups = by_names
    columns: dict[str, Any] = {name: [c[0][j] for c in combos] for j, name in enumerate(spec_names)}
    if mode == "prob":
        columns[design.spec.response] = [inputs.categories[c[1][0]] for c in combos]
    for j, name in enumerate(by_names):
        columns[name] = [c[2][j] for c in combos]
    columns.update(_summaries(draws, ci_level))
    return PosteriorMeans(
        table=pd.DataFrame(columns),
        specs=spec_names,
        by=groups,
        mode=mode,
        ci_level=float(ci_level),
        draws=draws,
    )
