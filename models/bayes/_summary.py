"""The summaries of a fitted :class:`models.bayes.BayesianMixedModel`: tables, text, JSON."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

import models._columns as col
from _empathic_base.results import DECIMALS, FittedModel, Shows
from models._checks import check_unit

if TYPE_CHECKING:
    from models.bayes._emmeans import PosteriorMeans
    from models.bayes._r2 import BayesianR2


@dataclass(frozen=True, repr=False)
class BayesianModelSummary(Shows):
    """Tables of a fitted :class:`BayesianMixedModel` and its printed form.

    Attributes
    ----------
    fixed, cutpoints, random : pandas.DataFrame
        As :meth:`BayesianMixedModel.fixed_effects`, ``cutpoints()`` and ``random_effects()``.
    diagnostics : pandas.DataFrame
        One row: ``sampler, chains, draws, divergences, r_hat_max, ess_bulk_min,
        ess_tail_min, bfmi_min, passed, seconds``.
    text : str
        The printed summary; it opens with any failed sampling check.
    """

    fixed: pd.DataFrame
    cutpoints: pd.DataFrame
    random: pd.DataFrame
    diagnostics: pd.DataFrame
    text: str


def _json_value(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (np.integer, int)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if not math.isfinite(float(value)) else float(value)
    return value if isinstance(value, (str, bool)) else str(value)


class _Summaries(FittedModel):
    """summary(), print_summary() and to_dict() of a fitted Bayesian mixed model."""

    def r2(self, *, ci_level: float | None = None) -> BayesianR2:
        """Bayesian R-squared (Gelman et al. 2019): its posterior mean, sd and HDI.

        Parameters
        ----------
        ci_level : float, optional
            Probability of the highest-density interval; default the model's ``ci_level``.

        Returns
        -------
        BayesianR2
            ``estimate, se, ci_low, ci_high`` and the per-draw values ``draws``; on the
            latent scale (residual variance ``pi^2/3`` logit, 1 probit) for the ordinal
            family. Formulas in :mod:`models.bayes._r2`.
        """
        from models.bayes._r2 import bayes_r2

        self._check_fitted("r2")
        level = self._opts["ci_level"] if ci_level is None else ci_level
        check_unit(level, name="ci_level", where="BayesianMixedModel.r2")
        return bayes_r2(self, ci_level=level)

    def emmeans(
        self,
        specs: str | list[str],
        *,
        by: str | list[str] | None = None,
        at: dict[str, Any] | None = None,
        mode: str | None = None,
        ci_level: float | None = None,
    ) -> PosteriorMeans:
        """Posterior marginal means on emmeans' reference grid, draw by draw.

        Parameters
        ----------
        specs : str or list of str
            Predictors whose means are estimated (factors, or covariates given in ``at``).
        by : str or list of str, optional
            Predictors whose levels (or ``at`` values) split the means into groups.
        at : dict, optional
            ``{predictor: values}`` replacing a covariate's mean or a factor's levels.
        mode : {"latent", "prob"}, optional
            Ordinal family: the linear predictor minus the mean cutpoint (default), or each
            category's probability averaged over the grid. The gaussian family has one mode,
            ``"mean"`` (the data scale).
        ci_level : float, optional
            Probability of the highest-density intervals; default the model's ``ci_level``.

        Returns
        -------
        PosteriorMeans
            ``to_frame()``: the predictors, ``estimate, se, ci_low, ci_high,
            prob_positive``; ``draws`` per posterior draw; ``.pairs()`` and ``.contrasts()``
            compare the means draw by draw. Conventions in :mod:`models.bayes._emmeans`.
        """
        from models.bayes._emmeans import posterior_means

        self._check_fitted("emmeans")
        level = self._opts["ci_level"] if ci_level is None else ci_level
        check_unit(level, name="ci_level", where="BayesianMixedModel.emmeans")
        return posterior_means(self, specs, by=by, at=at, mode=mode, ci_level=level)

    def summary(self) -> BayesianModelSummary:
        """Posterior tables and a compact text (see :class:`BayesianModelSummary`).

        The text states first whether the sampling checks passed (R-hat, bulk and tail ESS,
        divergences, E-BFMI; :func:`models.bayes.sampling_diagnostics`): when one failed, the
        posterior summaries below it are not to be interpreted.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("summary")
        diag = self.diagnostics_
        diagnostics = pd.DataFrame(
            [
                {
                    "sampler": diag["sampler"],
                    "chains": int(diag["chains"]),
                    "draws": int(diag["draws"]),
                    "divergences": int(diag["divergences"]),
                    "r_hat_max": diag["r_hat_max"],
                    "ess_bulk_min": diag["ess_bulk_min"],
                    "ess_tail_min": diag["ess_tail_min"],
                    "bfmi_min": diag["bfmi_min"],
                    "passed": bool(diag["passed"]),
                    "seconds": diag["seconds"],
                }
            ]
        )
        return BayesianModelSummary(
            fixed=self.fixed_effects(),
            cutpoints=self.cutpoints(),
            random=self.random_effects(),
            diagnostics=diagnostics,
            text=self._summary_text(DECIMALS),
        )

    def print_summary(self, decimals: int = DECIMALS) -> None:
        """Print the summary rounded to ``decimals``."""
        self._check_fitted("print_summary")
        print(self._summary_text(decimals))

    def __str__(self) -> str:
        if not hasattr(self, "summary_"):
            return repr(self)
        return self._summary_text(DECIMALS)

    def _summary_text(self, decimals: int) -> str:
        number = lambda v: f"{v:.{decimals}f}"  # noqa: E731
        diag = self.diagnostics_
        family = self._opts["family"]
        level = f"{self._opts['ci_level']:.0%}"
        what = (
            f"ordinal ({self._opts['link']} link)" if family == "ordinal" else "gaussian (identity)"
        )
        lines = [
            f"Bayesian mixed model, {what}: {self.formula}",
            f"n = {self.n_obs_}; groups: "
            + ", ".join(f"{g} {k}" for g, k in self.groups_.items())
            + f"; {diag['sampler']}, {diag['chains']} chains x {diag['draws']} draws"
            + (" (draws='auto': the first that passed)" if diag.get("draws_rule") == "auto" else "")
            + f" ({diag['seconds']:.1f} s)",
        ]
        if diag["passed"]:
            lines.append(
                f"sampling checks passed: R-hat max {diag['r_hat_max']:.3f}, ESS bulk min "
                f"{diag['ess_bulk_min']:.0f}, tail min {diag['ess_tail_min']:.0f}, "
                f"{diag['divergences']} divergences"
            )
        else:
            lines.append(
                "SAMPLING CHECKS FAILED (" + ", ".join(diag["failures"]) + "): the summaries "
                "below are not reliable; " + " ".join(diag.get("messages", []))
            )
        headers = {
            col.ESTIMATE: "Mean",
            col.SE: "SD",
            col.CI_LOW: f"HDI {level} low",
            col.CI_HIGH: "high",
            "r_hat": "R-hat",
            "ess_bulk": "ESS bulk",
            "ess_tail": "ESS tail",
        }
        formats = {
            "Mean": number,
            "SD": number,
            f"HDI {level} low": number,
            "high": number,
            "R-hat": lambda v: f"{v:.3f}",
            "ESS bulk": lambda v: f"{v:.0f}",
            "ESS tail": lambda v: f"{v:.0f}",
        }

        def table(frame: pd.DataFrame) -> str:
            if frame.empty:
                return "(none)"
            shown = frame.rename(columns=headers)
            return shown.to_string(index=False, formatters=formats)

        random = self.random_effects().drop(columns="component")
        lines += ["", "Random effects (posterior SDs and correlations):", table(random)]
        lines += ["", f"Fixed effects (posterior mean, SD, {level} HDI):"]
        lines.append(table(self.fixed_effects()))
        if family == "ordinal":
            lines += ["", "Cutpoints:", table(self.cutpoints())]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary of the fit (the CLI's ``fit --engine bayes`` output).

        Returns
        -------
        dict
            ``engine`` ("bayes"), ``family``, ``link``, ``formula``, ``n_obs``, ``groups``
            (levels per grouping factor), ``fixed`` (rows with ``term, estimate, se,
            ci_low, ci_high, r_hat, ess_bulk``), ``random`` (one row per group-level sd:
            ``group, term, sd`` and the same columns, ``sd`` being the estimate; the
            gaussian residual sd has group ``Residual``), ``correlations`` (``group,
            term`` ("a,b") and the same columns), ``cutpoints`` (ordinal; else empty),
            ``divergences``, ``r_hat_max``, ``ess_bulk_min``, ``ess_tail_min``,
            ``bfmi_min``, ``failures`` (failed diagnostics), ``sampler``, ``draws``,
            ``chains``, ``ci_level`` and ``seconds``. NaN becomes None.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        """
        self._check_fitted("to_dict")
        keep = [col.TERM, col.ESTIMATE, col.SE, col.CI_LOW, col.CI_HIGH, "r_hat", "ess_bulk"]

        def rows(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
            return [
                {c: _json_value(v) for c, v in zip(columns, rec, strict=True)}
                for rec in frame[columns].itertuples(index=False, name=None)
            ]

        summary = self.summary_
        sds = summary[summary["component"] == "sd"].assign(sd=lambda d: d[col.ESTIMATE])
        diag = self.diagnostics_
        return {
            "engine": "bayes",
            "family": self._opts["family"],
            "link": self._opts["link"] if self._opts["family"] == "ordinal" else "identity",
            "formula": self.formula,
            "n_obs": int(self.n_obs_),
            "groups": {k: int(v) for k, v in self.groups_.items()},
            "fixed": rows(summary[summary["component"] == "fixed"], keep),
            "random": rows(sds, [col.GROUP, col.TERM, "sd", *keep[1:]]),
            "correlations": rows(summary[summary["component"] == "cor"], [col.GROUP, *keep]),
            "cutpoints": rows(summary[summary["component"] == "cutpoint"], keep),
            "divergences": int(diag["divergences"]),
            "r_hat_max": _json_value(diag["r_hat_max"]),
            "ess_bulk_min": _json_value(diag["ess_bulk_min"]),
            "ess_tail_min": _json_value(diag["ess_tail_min"]),
            "bfmi_min": _json_value(diag["bfmi_min"]),
            "failures": list(diag["failures"]),
            "sampler": diag["sampler"],
            "draws": int(diag["draws"]),
            "draws_rule": diag.get("draws_rule", "fixed"),
            "chains": int(diag["chains"]),
            "ci_level": float(self._opts["ci_level"]),
            "seconds": float(diag["seconds"]),
        }
