"""Bayesian R-squared of a fitted BayesianMixedModel (Gelman, Goodrich, Gabry & Vehtari 2019).

For each posterior draw ``s``, with ``eta_s`` the linear predictor of the fitted rows (fixed
part plus each row's group effects, on the data's scale)::

    R2_s = var(eta_s) / (var(eta_s) + var_res_s)

``var`` is the sample variance over the rows (divisor ``n - 1``). ``var_res_s`` is the model's
residual variance in that draw: ``sigma_s^2`` for the gaussian family (Gelman et al.'s
model-based form; rstanarm's and brms' ``bayes_R2`` use the variance of the draw's residuals
``y - eta_s`` instead) and, for the ordinal family, the variance of the latent residual fixed
by the link, ``pi^2 / 3`` (logit) or 1 (probit), so the ratio is on the latent scale as the
ordinal mixed model's Nakagawa R-squared. The posterior of ``R2_s`` is summarised by its mean,
its standard deviation and its highest-density interval at ``ci_level``, as the model's other
intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import models._columns as col
from _empathic_base.results import Result, json_ready

__all__ = ["BayesianR2", "bayes_r2", "r2_draws"]

R2_COLUMNS = ["measure", col.ESTIMATE, col.SE, col.CI_LOW, col.CI_HIGH]
"""Columns of :meth:`BayesianR2.to_frame`."""

_LATENT_VARIANCE = {"logit": math.pi**2 / 3.0, "probit": 1.0}


@dataclass(frozen=True, repr=False)
class BayesianR2(Result):
    """Posterior of the Bayesian R-squared.

    Attributes
    ----------
    estimate, se : float
        Posterior mean and standard deviation of the per-draw R-squared.
    ci_low, ci_high : float
        Highest-density interval at ``ci_level``.
    ci_level : float
        Probability of the interval.
    scale : str
        ``"data"`` (gaussian family) or ``"latent"`` (ordinal family).
    draws : numpy.ndarray
        The per-draw values, chains stacked in order (as :meth:`linear_predictor`).
    """

    estimate: float
    se: float
    ci_low: float
    ci_high: float
    ci_level: float
    scale: str
    draws: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def _title(self) -> str:
        return (
            f"BayesianR2({self.estimate:.3g}, {self.ci_level:.0%} HDI "
            f"[{self.ci_low:.3g}, {self.ci_high:.3g}], {self.scale} scale)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        row = ["bayes_r2", self.estimate, self.se, self.ci_low, self.ci_high]
        return [("Bayesian R-squared", pd.DataFrame([row], columns=R2_COLUMNS))]

    def to_dict(self) -> dict[str, Any]:
        """Return the summary as JSON-ready data (the draws left out)."""
        return json_ready(
            {
                "estimate": self.estimate,
                "se": self.se,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
                "ci_level": self.ci_level,
                "scale": self.scale,
                "n_draws": int(self.draws.size),
            }
        )


def r2_draws(eta: np.ndarray, residual_variance: np.ndarray | float) -> np.ndarray:
    """Per-draw ``var(eta_s) / (var(eta_s) + residual_variance_s)`` of an ``S x n`` predictor."""
    fitted = np.var(eta, axis=1, ddof=1)
    return fitted / (fitted + residual_variance)


def bayes_r2(model: Any, *, ci_level: float) -> BayesianR2:
    """Compute :class:`BayesianR2` of a fitted BayesianMixedModel."""
    import arviz as az

    inputs = model._inputs
    if inputs.family == "gaussian":
        residual: np.ndarray | float = np.square(model._draws["sigma"])
        scale = "data"
    else:
        residual = _LATENT_VARIANCE[inputs.link]
        scale = "latent"
    draws = r2_draws(model._eta_train(), residual)
    low, high = az.hdi(draws, hdi_prob=ci_level)
    return BayesianR2(
        estimate=float(draws.mean()),
        se=float(draws.std(ddof=1)),
        ci_low=float(low),
        ci_high=float(high),
        ci_level=float(ci_level),
        scale=scale,
        draws=draws,
    )
