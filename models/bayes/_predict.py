"""Predictions and checks of a fitted :class:`models.bayes.BayesianMixedModel`.

Category probabilities for new rows (seen and unseen groups), PSIS-LOO and the posterior
predictive plot.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from models._backends import pymc_model as pmod
from models._checks import check_choice, check_int
from models._errors import (
    DataQualityWarning,
    FormulaError,
    InvalidParameterError,
)


def _normal_quadrature(n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes and weights for ``E[f(v)]`` with ``v ~ N(0, 1)``."""
    x, w = np.polynomial.hermite.hermgauss(n)
    return math.sqrt(2.0) * x, w / math.sqrt(math.pi)


@dataclass(frozen=True)
class _NewRows:
    """Design pieces of new data on the data's scale, aligned with a fitted model."""

    rows: pd.Index
    X_data: np.ndarray
    Z: list[np.ndarray]
    index: list[np.ndarray]  # per block: fitted level index of each row, -1 for unseen
    labels: list[np.ndarray]  # per block: group label of each row
    y: np.ndarray | None


_LOO_CELLS = 2_000_000
"""Draws x rows of log-likelihood held at once by :func:`_psis_loo` (16 MB)."""


def _psis_loo(
    posterior: Any,
    n_obs: int,
    loglik_rows: Callable[[slice], np.ndarray],
    *,
    pointwise: bool,
    name: str,
) -> Any:
    """PSIS-LOO as ``arviz.loo`` computes it, from the log-likelihood of blocks of rows.

    ``loglik_rows(rows)`` returns the ``S x len(rows)`` pointwise log-likelihood of the fitted
    rows ``rows`` (draws in ``posterior``'s chain-then-draw order). Each row's Pareto
    smoothing depends only on its own column and on the relative efficiency of the whole
    posterior, so the rows are smoothed block by block and the whole ``S x n`` matrix is never
    held: the estimates equal ``arviz.loo`` on the full matrix (same functions, same order of
    summation).
    """
    import arviz as az
    import xarray as xr
    from arviz.stats.stats import ELPDData
    from arviz.stats.stats_utils import logsumexp

    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    n_samples = n_chains * n_draws
    if n_chains == 1:
        reff = 1.0
    else:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            ess_p = az.ess(posterior, method="mean")
        reff = np.hstack([ess_p[v].values.flatten() for v in ess_p.data_vars]).mean() / n_samples
    step = max(1, _LOO_CELLS // n_samples)
    loo_i = np.empty(n_obs)
    lppd_i = np.empty(n_obs)
    pareto_k = np.empty(n_obs)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Pareto.*", category=UserWarning)
        for start in range(0, n_obs, step):
            rows = slice(start, min(start + step, n_obs))
            ll = np.ascontiguousarray(loglik_rows(rows).T)  # rows x draws
            log_weights, k = az.psislw(-ll, reff)
            log_weights += ll
            loo_i[rows] = logsumexp(log_weights, axis=-1)
            lppd_i[rows] = logsumexp(ll, b_inv=n_samples, axis=-1)
            pareto_k[rows] = k
    good_k = min(1 - 1 / np.log10(n_samples), 0.7)
    bad = int(np.sum(pareto_k > good_k))
    if bad:
        warnings.warn(
            f"{name}: {bad} of {n_obs} observations have Pareto k > {good_k:.2f}, so PSIS-LOO "
            "is unreliable for them; use leave_one_group_out, or more draws",
            DataQualityWarning,
            stacklevel=3,
        )
    elpd = loo_i.sum()
    se = (n_obs * np.var(loo_i)) ** 0.5
    p_loo = np.sum(lppd_i) - elpd
    head = [elpd, se, p_loo, n_samples, n_obs, bool(bad)]
    index = ["elpd_loo", "se", "p_loo", "n_samples", "n_data_points", "warning"]
    if not pointwise:
        return ELPDData(data=[*head, "log", good_k], index=[*index, "scale", "good_k"])
    obs = {"obs": np.arange(n_obs)}
    return ELPDData(
        data=[
            *head,
            xr.DataArray(loo_i, dims=("obs",), coords=obs, name="loo_i"),
            xr.DataArray(pareto_k, dims=("obs",), coords=obs),
            "log",
            good_k,
        ],
        index=[*index, "loo_i", "pareto_k", "scale", "good_k"],
    )


class _Predictions:
    """predict_proba(), loo() and plot_ppc() of a fitted Bayesian mixed model."""

    def _new_rows(self, data: pd.DataFrame, *, where: str, need_y: bool) -> _NewRows:
        if not isinstance(data, pd.DataFrame):
            raise InvalidParameterError(
                f"the `data` parameter of {where} must be a pandas DataFrame; "
                f"got {type(data).__name__}"
            )
        inputs = self._inputs
        design = self._design.transform(data)
        keep = [c for c in design.X.columns if c != pmod.INTERCEPT]
        X_data = design.X.loc[:, keep].to_numpy(dtype=float)
        Zs, index, labels = [], [], []
        for new in design.random:
            frame = data.loc[design.rows, list(new.factors)]
            if len(new.factors) == 1:
                lab = frame.iloc[:, 0].to_numpy()
            else:
                lab = frame.astype(str).agg(":".join, axis=1).to_numpy()
            Zs.append(np.asarray(new.Z, dtype=float))
            index.append(np.asarray(new.codes, dtype=int))
            labels.append(lab)
        y = None
        if need_y:
            values = np.asarray(design.y, dtype=float)
            if np.isnan(values).any():
                raise FormulaError(
                    f"{where}: the data need the response {self._spec.response!r} in every row"
                )
            if inputs.family == "gaussian":
                y = values
            else:
                cats = np.asarray(inputs.categories, dtype=float)
                y = np.searchsorted(cats, values)
                bad = (y >= len(cats)) | (cats[np.minimum(y, len(cats) - 1)] != values)
                if bad.any():
                    raise FormulaError(
                        f"{where}: responses {sorted(set(values[bad].tolist()))} are not among "
                        f"the fitted categories {list(inputs.categories)}"
                    )
        return _NewRows(pd.Index(design.rows), X_data, Zs, index, labels, y)

    def _block_cov(self, r: int) -> np.ndarray:
        """Data-scale covariance of block ``r`` per draw, ``S x q x q``."""
        sd = self._draws[f"sd_{r}"]
        if self._inputs.random[r].correlated:
            cor = self._draws[f"cor_{r}"]
        else:
            cor = np.broadcast_to(np.eye(sd.shape[1]), (*sd.shape, sd.shape[1]))
        return sd[:, :, None] * cor * sd[:, None, :]

    def predict_proba(
        self,
        data: pd.DataFrame,
        *,
        new_groups: Literal["population", "zero", "raise"] = "population",
    ) -> pd.DataFrame:
        """Posterior mean probability of each rating category for new or observed rows.

        Parameters
        ----------
        data : pandas.DataFrame
            Predictor and grouping columns of the formula (the response is not needed).
        new_groups : {"population", "zero", "raise"}, default "population"
            Rows whose group level was not in the fitted data (a new participant):
            ``population`` averages over the fitted distribution of group effects (the
            prediction for a new participant drawn from the population), ``zero`` sets
            the effects to 0 (a typical participant), ``raise`` raises. Known levels
            always use their posterior effects.

        Returns
        -------
        pandas.DataFrame
            One row per usable row of ``data`` (its index), one column per category;
            rows sum to 1.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InvalidParameterError
            For the gaussian family or an invalid ``new_groups``.
        FormulaError
            When ``data`` lack a predictor, or ``new_groups="raise"`` meets a new level.

        Notes
        -----
        For ``population``, the new levels' effects add a normal term with variance
        ``sum_r z_r' Sigma_r z_r`` to the linear predictor; it is integrated out exactly
        for the probit link and by 40-point Gauss-Hermite quadrature for the logit link,
        draw by draw, before averaging over the posterior.
        """
        where = "BayesianMixedModel.predict_proba"
        self._check_fitted("predict_proba")
        if self._inputs.family != "ordinal":
            raise InvalidParameterError(
                f"{where} needs family='ordinal'; this model is {self._inputs.family!r}"
            )
        check_choice(new_groups, ("population", "zero", "raise"), name="new_groups", where=where)
        new = self._new_rows(data, where=where, need_y=False)
        draws = self._draws
        S = draws["fixed"].shape[0]
        eta = self._eta(new.X_data, new.Z, new.index)
        tau2 = np.zeros_like(eta)
        for r, block in enumerate(self._inputs.random):
            seen = new.index[r] >= 0
            if not seen.all() and new_groups == "raise":
                unseen = sorted({str(v) for v in new.labels[r][~seen]})
                raise FormulaError(
                    f"{where}: levels {unseen} of {block.group!r} were not in the fitted data "
                    "(new_groups='raise')"
                )
            if new_groups == "population" and not seen.all():
                cov = self._block_cov(r)
                var = np.einsum("nq,sqp,np->sn", new.Z[r], cov, new.Z[r])
                tau2 = tau2 + np.where(seen[None, :], 0.0, var)
        cut = draws["cutpoints"]
        link = self._inputs.link
        if link == "probit":
            scale = np.sqrt(1.0 + tau2)
            cdf = pmod.ordinal_cdf((cut[:, None, :] - eta[:, :, None]) / scale[:, :, None], link)
        else:
            nodes, weights = _normal_quadrature()
            cdf = np.zeros((S, eta.shape[1], cut.shape[1]))
            tau = np.sqrt(tau2)
            for x, w in zip(nodes, weights, strict=True):
                shifted = eta + tau * x
                cdf += w * pmod.ordinal_cdf(cut[:, None, :] - shifted[:, :, None], link)
        ones = np.ones((*cdf.shape[:2], 1))
        probs = np.diff(np.concatenate([0.0 * ones, cdf, ones], axis=-1), axis=-1)
        mean = np.clip(probs, 0.0, 1.0).mean(axis=0)
        mean = mean / mean.sum(axis=1, keepdims=True)
        return pd.DataFrame(mean, index=new.rows, columns=list(self._inputs.categories))

    def loo(self, *, pointwise: bool = False) -> Any:
        """PSIS-LOO estimate of the expected log predictive density (``arviz.loo``).

        Computed in blocks of rows, without the full ``draws x rows`` log-likelihood; the
        numbers equal ``arviz.loo(model.idata_)``.

        Parameters
        ----------
        pointwise : bool, default False
            Also return the pointwise values and Pareto k.

        Returns
        -------
        arviz.ELPDData
            ``elpd_loo``, ``se``, ``p_loo`` (and ``loo_i``, ``pareto_k``).

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.

        Warns
        -----
        DataQualityWarning
            When some Pareto k exceed 0.7 (the estimate is unreliable for those
            observations; :func:`leave_one_group_out` does not need PSIS).
        """
        self._check_fitted("loo")
        return _psis_loo(
            self.posterior_,
            self.n_obs_,
            self._loglik_rows,
            pointwise=pointwise,
            name="BayesianMixedModel.loo",
        )

    def plot_ppc(self, *, group: str | None = None, max_groups: int = 12) -> Any:
        """Posterior predictive check: observed vs predicted rating distribution.

        Parameters
        ----------
        group : str, optional
            Grouping factor of the per-group panels; the first one of the formula by
            default.
        max_groups : int, default 12
            Number of group levels drawn (the first ones in sorted order).

        Returns
        -------
        matplotlib.figure.Figure
            First panel: all observations; then one panel per group level. Bars:
            observed proportion per category (or bin); points and lines: posterior
            predictive mean and ``ci_level`` interval of that proportion.

        Raises
        ------
        NotFittedError
            Before :meth:`fit`.
        InvalidParameterError
            For an unknown ``group``.
        """
        where = "BayesianMixedModel.plot_ppc"
        self._check_fitted("plot_ppc")
        check_int(max_groups, name="max_groups", where=where, minimum=0)
        from matplotlib.figure import Figure

        inputs = self._inputs
        blocks = {b.group: b for b in inputs.random}
        if group is None and blocks:
            group = next(iter(blocks))
        if group is not None and group not in blocks:
            raise InvalidParameterError(
                f"the `group` parameter of {where} must be one of {sorted(blocks)}; got {group!r}"
            )
        obs = np.asarray(self._observed_values(), dtype=float)
        if "_idata_full" in vars(self):
            pred = pmod.flatten_draws(
                np.asarray(self.idata_.posterior_predictive["y"].values, dtype=float)
            )
        else:  # the same draws, without computing the log-likelihood
            pred = np.asarray(self._pointwise_draws(loglik=False)[1], dtype=float)
        if inputs.family == "ordinal":
            obs = inputs.y.astype(float)
            if all(isinstance(c, numbers.Real) for c in inputs.categories):
                pred = np.searchsorted(np.asarray(inputs.categories, dtype=float), pred)
            labels = [str(c) for c in inputs.categories]
            edges = np.arange(len(labels) + 1) - 0.5
        else:
            uniq = np.unique(obs)
            if len(uniq) <= 15 and np.all(np.round(uniq) == uniq):
                centers = uniq
                mids = (centers[1:] + centers[:-1]) / 2
                edges = np.concatenate([[-np.inf], mids, [np.inf]])
                labels = [f"{c:g}" for c in centers]
            else:
                edges = np.histogram_bin_edges(obs, bins=12)
                edges[0], edges[-1] = -np.inf, np.inf
                inner = np.histogram_bin_edges(obs, bins=12)
                labels = [f"{(a + b) / 2:.3g}" for a, b in zip(inner[:-1], inner[1:], strict=True)]
        alpha = (1 - self._opts["ci_level"]) / 2
        panels: list[tuple[str, np.ndarray]] = [("all observations", np.ones(len(obs), bool))]
        if group is not None:
            block = blocks[group]
            for j, level in enumerate(block.levels[:max_groups]):
                panels.append((f"{group} {level}", block.codes == j))
        ncols = min(4, len(panels))
        nrows = math.ceil(len(panels) / ncols)
        import matplotlib as mpl
        import seaborn as sns

        rc = {**sns.axes_style("whitegrid"), **sns.plotting_context("notebook", font_scale=0.85)}
        with mpl.rc_context(rc):
            fig = Figure(figsize=(3.2 * ncols, 2.6 * nrows + 0.5), layout="constrained")
            axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharey=True)).ravel()
            x = np.arange(len(labels))
            top = 0.0
            for ax, (title, mask) in zip(axes, panels, strict=False):
                o = np.histogram(obs[mask], bins=edges)[0] / mask.sum()
                p = np.stack([np.histogram(r, bins=edges)[0] for r in pred[:, mask]]) / mask.sum()
                lo, hi = np.quantile(p, [alpha, 1 - alpha], axis=0)
                mean = p.mean(axis=0)
                ax.bar(x, o, color="0.75", label="observed")
                ax.errorbar(
                    x,
                    mean,
                    yerr=[np.maximum(mean - lo, 0), np.maximum(hi - mean, 0)],
                    fmt="o",
                    color=sns.color_palette("colorblind")[0],
                    label=f"predicted ({self._opts['ci_level']:.0%} interval)",
                )
                top = max(top, float(o.max()), float(hi.max()))
                ax.set_xticks(x, labels)
                ax.set_title(f"{title} (n={int(mask.sum())})", fontsize=9)
            axes[0].set_ylim(0, top * 1.08 + 1e-9)  # every interval whole, in every panel
            for ax in axes[len(panels) :]:
                ax.set_visible(False)
            axes[0].set_ylabel("proportion")
            handles, names = axes[0].get_legend_handles_labels()
            fig.legend(handles, names, loc="outside lower center", ncols=2, frameon=False)
            fig.suptitle(f"Posterior predictive check of {self._spec.response}", fontsize=10)
        return fig
