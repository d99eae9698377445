"""The summaries of a fitted :class:`models.ordinal.OrdinalMixedModel`.

Odds ratios, the result tables, the clmm-style text and the JSON of ``longitudinal fit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from _empathic_base.results import DECIMALS, FittedModel, Shows
from models._errors import (
    InvalidParameterError,
)
from models._varcorr import json_number
from models.ordinal._fit import _WHERE

if TYPE_CHECKING:
    from models.lmm import MarginalMeans, MixedR2

DICT_KEYS = (
    "engine",
    "family",
    "formula",
    "link",
    "threshold",
    "n_agq",
    "n_obs",
    "groups",
    "converged",
    "singular",
    "fixed",
    "random",
    "thresholds",
    "loglik",
    "aic",
    "bic",
    "seconds",
)
"""Keys of :meth:`OrdinalMixedModel.to_dict`, in order."""


@dataclass(frozen=True, repr=False)
class OrdinalModelSummary(Shows):
    """Tables of a fitted :class:`OrdinalMixedModel` and its printed form.

    Attributes
    ----------
    thresholds, fixed, random, random_corr, fit : pandas.DataFrame
        As ``thresholds_``, ``fixed_``, ``random_``, ``random_corr_`` and one row of fit
        statistics.
    text : str
        The clmm-style text.
    """

    thresholds: pd.DataFrame
    fixed: pd.DataFrame
    random: pd.DataFrame
    random_corr: pd.DataFrame
    fit: pd.DataFrame
    text: str


class _Summaries(FittedModel):
    """odds_ratios(), summary(), print_summary() and to_dict() of a fitted ordinal mixed model."""

    def r2(self) -> MixedR2:
        """Latent-scale R-squared: Nakagawa's marginal and conditional.

        Returns
        -------
        MixedR2
            ``nakagawa`` (``marginal``, ``conditional``) with the residual variance of the
            link's latent distribution (``pi^2/3`` logit, 1 probit); ``rights_sterba`` is
            empty and ``note`` says why. Formulas in :mod:`models.ordinal._r2`.
        """
        from models.ordinal._r2 import latent_r2

        self._check_no_smooth("r2")
        return latent_r2(self)

    def emmeans(
        self,
        specs: str | list[str],
        *,
        by: str | list[str] | None = None,
        at: dict[str, Any] | None = None,
        mode: Literal["latent", "prob"] = "latent",
        ci_level: float = 0.95,
    ) -> MarginalMeans:
        """Estimated marginal means on emmeans' reference grid, as emmeans gives for clmm.

        Parameters
        ----------
        specs : str or list of str
            Predictors whose means are estimated (factors, or covariates given in ``at``).
        by : str or list of str, optional
            Predictors whose levels (or ``at`` values) split the means into groups.
        at : dict, optional
            ``{predictor: values}`` replacing a covariate's mean or a factor's levels.
        mode : {"latent", "prob"}, default "latent"
            The linear predictor minus the mean threshold (larger: higher categories), or
            the probability of each category averaged over the grid (delta-method SEs).
        ci_level : float, default 0.95
            Level of the (Wald, normal) intervals.

        Returns
        -------
        MarginalMeans
            ``to_frame()``: the ``specs`` predictors (with ``mode="prob"`` then the response,
            holding each category), the ``by`` predictors, ``emmean, se, df`` (infinite),
            ``ci_low, ci_high``; ``ddf`` is ``"asymptotic"``. With ``mode="prob"`` the
            response is a ``by`` group, so ``.pairs()`` compares the ``specs`` levels within
            each category. Conventions in :mod:`models.ordinal._emmeans`.
        """
        from models.ordinal._emmeans import marginal_means

        self._check_no_smooth("emmeans")
        return marginal_means(self, specs, by=by, at=at, mode=mode, ci_level=ci_level)

    def odds_ratios(self) -> pd.DataFrame:
        """Return the fixed effects as cumulative odds ratios (logit link only).

        Returns
        -------
        pandas.DataFrame
            ``term, odds_ratio, ci_low, ci_high, p_value``: ``exp`` of the estimates and of
            the Wald interval bounds.
        """
        self._check_fitted("odds_ratios")
        if self.link != "logit":
            raise InvalidParameterError(
                f"{_WHERE}.odds_ratios: odds ratios need link='logit'; this model has "
                f"link={self.link!r}"
            )
        f = self.fixed_
        return pd.DataFrame(
            {
                "term": f["term"],
                "odds_ratio": np.exp(f["estimate"]),
                "ci_low": np.exp(f["ci_low"]),
                "ci_high": np.exp(f["ci_high"]),
                "p_value": f["p_value"],
            }
        )

    # -----------------------------------------------------------------------------------------
    def summary(self) -> OrdinalModelSummary:
        """Tables of the fit and its clmm-style text (see :class:`OrdinalModelSummary`)."""
        self._check_fitted("summary")
        fit = pd.DataFrame(
            [
                {
                    "n_obs": self.n_obs_,
                    "n_dropped": self.n_dropped_,
                    "link": self.link,
                    "threshold": self.threshold,
                    "n_agq": self.n_agq,
                    "loglik": self.loglik_,
                    "aic": self.aic_,
                    "bic": self.bic_,
                    "npar": self.npar_,
                    "max_grad": self.max_grad_,
                    "cond_hessian": self.cond_hessian_,
                    "converged": self.converged_,
                    "singular": self.singular_,
                    "nfev": self.nfev_,
                    "seconds": self.seconds_,
                }
            ]
        )
        return OrdinalModelSummary(
            thresholds=self.thresholds_.copy(),
            fixed=self.fixed_.copy(),
            random=self.random_.copy(),
            random_corr=self.random_corr_.copy(),
            fit=fit,
            text=self._summary_text(DECIMALS),
        )

    def print_summary(self, decimals: int = DECIMALS) -> None:
        """Print the clmm-style summary rounded to ``decimals``."""
        self._check_fitted("print_summary")
        print(self._summary_text(decimals))

    def _summary_text(self, decimals: int) -> str:
        number = lambda v: f"{v:.{decimals}f}"  # noqa: E731
        how = (
            "the Laplace approximation"
            if self.n_agq == 1
            else f"adaptive Gauss-Hermite quadrature ({self.n_agq} nodes)"
        )
        lines = [
            f"Cumulative link mixed model ({self.link} link, {self.threshold} thresholds) "
            f"fitted with {how}: {self.formula}",
            f"n = {self.n_obs_} ({self.n_dropped_} dropped); groups: "
            + ", ".join(f"{g} {k}" for g, k in self.groups_.items()),
            f"logLik {self.loglik_:.{decimals}f}  AIC {self.aic_:.{decimals}f}  "
            f"BIC {self.bic_:.{decimals}f}  max|grad| {self.max_grad_:.2g}  "
            f"cond(H) {self.cond_hessian_:.2g}",
            f"converged: {self.converged_}  singular: {self.singular_}",
            "",
            "Random effects (latent scale):",
            self.random_.rename(columns={"variance": "Variance", "sd": "Std.Dev."}).to_string(
                index=False, float_format=number
            ),
        ]
        if len(self.random_corr_):
            lines.append(self.random_corr_.to_string(index=False, float_format=number))
        fixed = self.fixed_.drop(columns=["df"]).rename(
            columns={
                "estimate": "Estimate",
                "se": "Std. Error",
                "statistic": "z value",
                "p_value": "Pr(>|z|)",
                "ci_low": "CI low",
                "ci_high": "CI high",
            }
        )
        formats = {c: number for c in ("Estimate", "Std. Error", "z value", "CI low", "CI high")}
        formats["Pr(>|z|)"] = lambda v: f"{v:.3g}"
        level = f"{self.ci_level:.0%}"
        lines += ["", f"Fixed effects (Wald z, {level} intervals):"]
        lines.append(fixed.to_string(index=False, formatters=formats) if len(fixed) else "(none)")
        thr = self.thresholds_.rename(
            columns={
                "estimate": "Estimate",
                "se": "Std. Error",
                "statistic": "z value",
                "ci_low": "CI low",
                "ci_high": "CI high",
            }
        )
        lines += ["", "Thresholds:", thr.to_string(index=False, float_format=number)]
        return "\n".join(lines)

    def __str__(self) -> str:
        if not hasattr(self, "theta_"):
            return repr(self)
        return self._summary_text(DECIMALS)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary (the ``longitudinal fit --engine clmm`` output).

        Returns
        -------
        dict
            Keys ``engine, family, formula, link, threshold, n_agq, n_obs, groups, converged,
            singular, fixed, random, thresholds, loglik, aic, bic, seconds``; ``fixed`` rows
            have the columns of ``fixed_`` (``df`` is ``None``: Wald z tests); ``random`` lists
            ``{group, term, sd}`` and ``{group, term1, term2, corr}`` rows; ``thresholds`` rows
            ``{term, estimate, se}``.
        """
        self._check_fitted("to_dict")
        fixed = [
            {k: json_number(v) if k != "term" else str(v) for k, v in row.items()}
            for row in self.fixed_.to_dict(orient="records")
        ]
        random: list[dict[str, Any]] = [
            {"group": r.group, "term": r.term, "sd": json_number(r.sd)}
            for r in self.random_.itertuples(index=False)
        ]
        random += [
            {"group": r.group, "term1": r.term1, "term2": r.term2, "corr": json_number(r.corr)}
            for r in self.random_corr_.itertuples(index=False)
        ]
        out = {
            "engine": "clmm",
            "family": "ordinal",
            "formula": self.formula,
            "link": self.link,
            "threshold": self.threshold,
            "n_agq": int(self.n_agq),
            "n_obs": self.n_obs_,
            "groups": dict(self.groups_),
            "converged": self.converged_,
            "singular": self.singular_,
            "fixed": fixed,
            "random": random,
            "thresholds": [
                {"term": r.term, "estimate": json_number(r.estimate), "se": json_number(r.se)}
                for r in self.thresholds_.itertuples(index=False)
            ],
            "loglik": json_number(self.loglik_),
            "aic": json_number(self.aic_),
            "bic": json_number(self.bic_),
            "seconds": json_number(self.seconds_),
        }
        return {k: out[k] for k in DICT_KEYS}
