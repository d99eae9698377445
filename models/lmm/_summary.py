"""The summaries of a fitted :class:`models.lmm.LinearMixedModel`: tables, lme4-style text, JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from _empathic_base.results import DECIMALS, FittedModel, Shows
from models._varcorr import json_number

DICT_KEYS = (
    "engine",
    "formula",
    "reml",
    "n_obs",
    "groups",
    "fixed",
    "random",
    "residual_sd",
    "loglik",
    "reml_criterion",
    "aic",
    "bic",
    "converged",
    "singular",
    "seconds",
)
"""Keys of :meth:`LinearMixedModel.to_dict`, in order (the ``longitudinal fit`` JSON)."""


_DDF_LABEL = {"satterthwaite": "Satterthwaite", "kenward-roger": "Kenward-Roger"}


@dataclass(frozen=True, repr=False)
class MixedModelSummary(Shows):
    """Tables describing a fitted :class:`LinearMixedModel`.

    Attributes
    ----------
    fixed : pandas.DataFrame
        ``term, estimate, se, df, statistic, p_value, ci_low, ci_high``.
    random : pandas.DataFrame
        ``group, term, variance, sd`` (last row: ``group="Residual"``, ``term=None``).
    random_corr : pandas.DataFrame
        ``group, term1, term2, covariance, corr`` for each pair of correlated terms.
    fit : pandas.DataFrame
        One row: ``n_obs, n_dropped, reml, loglik, reml_criterion, aic, bic, npar, sigma,
        converged, singular, nfev, seconds``.
    smooth : pandas.DataFrame or None
        For a model with a smooth term, ``smooth_table_`` (``term, edf, ref_df, F, p_value``);
        None otherwise.
    """

    fixed: pd.DataFrame
    random: pd.DataFrame
    random_corr: pd.DataFrame
    fit: pd.DataFrame
    text: str = field(default="", repr=False)
    smooth: pd.DataFrame | None = None


class _Summaries(FittedModel):
    """summary(), print_summary() and to_dict() of a fitted linear mixed model."""

    def summary(self) -> MixedModelSummary:
        """Return the fixed effects, variance components and fit statistics as DataFrames.

        Returns
        -------
        MixedModelSummary
            ``fixed`` (``term, estimate, se, df, statistic, p_value, ci_low, ci_high``),
            ``random`` (``group, term, variance, sd``), ``random_corr`` (``group, term1, term2,
            covariance, corr``) and ``fit`` (one row of fit statistics).

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted("summary")
        fit = pd.DataFrame(
            [
                {
                    "n_obs": self.n_obs_,
                    "n_dropped": self.n_dropped_,
                    "reml": bool(self.reml),
                    "loglik": self.loglik_,
                    "reml_criterion": self.reml_criterion_,
                    "aic": self.aic_,
                    "bic": self.bic_,
                    "npar": self.npar_,
                    "sigma": self.sigma_,
                    "converged": self.converged_,
                    "singular": self.singular_,
                    "nfev": self.nfev_,
                    "seconds": self.seconds_,
                }
            ]
        )
        return MixedModelSummary(
            fixed=self.fixed_.copy(),
            random=self.random_.copy(),
            random_corr=self.random_corr_.copy(),
            fit=fit,
            text=self._summary_text(DECIMALS),
            smooth=None if getattr(self, "smooth_", None) is None else self.smooth_table_.copy(),
        )

    def print_summary(self, decimals: int = DECIMALS) -> None:
        """Print an lme4-style summary rounded to ``decimals`` (results stay full precision).

        Parameters
        ----------
        decimals : int, default 4
            Digits after the decimal point in the printed tables.
        """
        self._check_fitted("print_summary")
        print(self._summary_text(decimals))

    def _summary_text(self, decimals: int) -> str:
        """Write the lme4/lmerTest-style text of a fitted model: t value and df, no empty cells."""
        crit = "REML" if self.reml else "ML"
        number = lambda v: f"{v:.{decimals}f}"  # noqa: E731
        random = self.random_.rename(columns={"variance": "Variance", "sd": "Std.Dev."}).copy()
        random["term"] = random["term"].fillna("")
        lines = [
            f"Linear mixed model fit by {crit}: {self.formula}",
            f"n = {self.n_obs_} ({self.n_dropped_} dropped); groups: "
            + ", ".join(f"{g} {k}" for g, k in self.groups_.items()),
            f"logLik {self.loglik_:.{decimals}f}  AIC {self.aic_:.{decimals}f}  "
            f"BIC {self.bic_:.{decimals}f}"
            + (f"  REML criterion {self.reml_criterion_:.{decimals}f}" if self.reml else ""),
            f"converged: {self.converged_}  singular: {self.singular_}",
            "",
            "Random effects:",
            random.to_string(index=False, float_format=number),
        ]
        if len(self.random_corr_):
            lines.append(self.random_corr_.to_string(index=False, float_format=number))
        fixed = self.fixed_.rename(
            columns={
                "estimate": "Estimate",
                "se": "Std. Error",
                "statistic": "t value",
                "p_value": "Pr(>|t|)",
                "ci_low": "CI low",
                "ci_high": "CI high",
            }
        )
        formats = {c: number for c in ("Estimate", "Std. Error", "df", "t value", "CI low")}
        formats["CI high"] = number
        formats["Pr(>|t|)"] = lambda v: f"{v:.3g}"
        label = (
            _DDF_LABEL[self.ddf] if getattr(self, "smooth_", None) is None else "residual (n - edf)"
        )
        lines += [
            "",
            f"Fixed effects ({label} df, {self.ci_level:.0%} intervals):",
            fixed.to_string(index=False, formatters=formats),
        ]
        if getattr(self, "smooth_", None) is not None:
            # as summary.gam prints it: the smooths' labels as row names
            table = self.smooth_table_.set_index("term").rename(
                columns={"ref_df": "Ref.df", "p_value": "p-value"}
            )
            table.index.name = None
            lines += [
                "",
                "Approximate significance of smooth terms:",
                table.to_string(
                    formatters={
                        "edf": number,
                        "Ref.df": number,
                        "F": number,
                        "p-value": lambda v: "<2e-16" if v < 2e-16 else f"{v:.3g}",
                    },
                ),
            ]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary (the ``longitudinal fit`` output).

        Returns
        -------
        dict
            Keys ``engine, formula, reml, n_obs, groups, fixed, random, residual_sd, loglik,
            reml_criterion, aic, bic, converged, singular, seconds``. ``fixed`` is a list of
            rows with the columns of ``fixed_``; ``random`` lists ``{group, term, sd}`` rows and
            ``{group, term1, term2, corr}`` rows; ``groups`` maps factors to level counts.
            Non-finite numbers become ``None`` (``reml_criterion`` is ``None`` for ML fits).

        Raises
        ------
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted("to_dict")
        fixed = [
            {k: json_number(v) if k != "term" else str(v) for k, v in row.items()}
            for row in self.fixed_.to_dict(orient="records")
        ]
        random: list[dict[str, Any]] = []
        for row in self.random_.itertuples(index=False):
            if row.group == "Residual":
                continue
            random.append({"group": row.group, "term": row.term, "sd": json_number(row.sd)})
        for row in self.random_corr_.itertuples(index=False):
            random.append(
                {
                    "group": row.group,
                    "term1": row.term1,
                    "term2": row.term2,
                    "corr": json_number(row.corr),
                }
            )
        out = {
            "engine": "lmm",
            "formula": self.formula,
            "reml": bool(self.reml),
            "n_obs": self.n_obs_,
            "groups": dict(self.groups_),
            "fixed": fixed,
            "random": random,
            "residual_sd": json_number(self.sigma_),
            "loglik": json_number(self.loglik_),
            "reml_criterion": json_number(self.reml_criterion_),
            "aic": json_number(self.aic_),
            "bic": json_number(self.bic_),
            "converged": self.converged_,
            "singular": self.singular_,
            "seconds": json_number(self.seconds_),
        }
        return {k: out[k] for k in DICT_KEYS}
