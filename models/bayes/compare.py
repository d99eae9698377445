"""Comparing Bayesian models: PSIS-LOO ranking and leave-one-group-out cross-validation."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from _empathic_base.results import Result
from models._backends import pymc_model as pmod
from models._errors import (
    InvalidParameterError,
    SamplingWarning,
)
from models.bayes._predict import _psis_loo
from models.bayes.model import BayesianMixedModel


def _discretized_gaussian(
    model: BayesianMixedModel, categories: np.ndarray, rows: slice = slice(None)
) -> np.ndarray:
    """Log probability of each observed category under a gaussian model, ``S x n``.

    ``rows`` restricts it to a block of the fitted rows (``S x len(rows)``).
    """
    from scipy import special

    inputs = model._inputs
    Z = [block.Z[rows] * block.scale + block.center for block in inputs.random]
    eta = model._eta(inputs.X_data[rows], Z, [block.codes[rows] for block in inputs.random])
    sigma = model._draws["sigma"][:, None]
    k = np.searchsorted(categories, inputs.y_data[rows])
    mids = (categories[1:] + categories[:-1]) / 2
    upper = np.concatenate([mids, [np.inf]])[k]
    lower = np.concatenate([[-np.inf], mids])[k]
    log_up = special.log_ndtr((upper - eta) / sigma)
    log_lo = special.log_ndtr((lower - eta) / sigma)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = log_up + np.log1p(-np.exp(np.minimum(log_lo - log_up, 0.0)))
    return np.maximum(out, np.log(np.finfo(float).tiny))


def compare(
    models: Mapping[str, BayesianMixedModel] | Sequence[BayesianMixedModel],
) -> pd.DataFrame:
    """Rank fitted models of the same observations by PSIS-LOO (``arviz.compare``).

    Parameters
    ----------
    models : mapping of name to BayesianMixedModel, or sequence
        Fitted models of the same response rows; a sequence is named ``model_0``, ...

    Returns
    -------
    pandas.DataFrame
        ArviZ's comparison table, one row per model, best first: ``rank``, ``elpd_loo``,
        ``p_loo``, ``elpd_diff``, ``weight`` (stacking), ``se``, ``dse``, ``warning``,
        ``scale``.

    Raises
    ------
    InvalidParameterError
        For fewer than two models, an unfitted model, or models of different rows.

    Notes
    -----
    An ordinal model assigns probabilities to categories while a gaussian one assigns
    densities, so their raw log-likelihoods are not comparable. When the families differ,
    each gaussian model is scored instead by the probability it gives the observed
    category: the normal mass between the midpoints of adjacent observed categories
    (the outer categories open-ended), which puts both families on the same discrete
    scale. Comparisons within a family use each model's own likelihood. Each model's PSIS-LOO
    is computed in blocks of rows (as :meth:`BayesianMixedModel.loo`), never from the whole
    ``draws x rows`` log-likelihood.
    """
    import arviz as az

    where = "compare"
    if isinstance(models, Mapping):
        named = dict(models)
    elif isinstance(models, Sequence) and not isinstance(models, str):
        named = {f"model_{i}": m for i, m in enumerate(models)}
    else:
        raise InvalidParameterError(
            f"the `models` parameter of {where} must be a mapping or sequence of fitted "
            f"BayesianMixedModel; got {type(models).__name__}"
        )
    if len(named) < 2:
        raise InvalidParameterError(f"{where} needs at least two models; got {len(named)}")
    for name, m in named.items():
        if not isinstance(m, BayesianMixedModel) or "_idata" not in vars(m):
            raise InvalidParameterError(
                f"models[{name!r}] of {where} is not a fitted BayesianMixedModel"
            )
    first = next(iter(named.values()))
    observed = {name: np.asarray(m._observed_values(), dtype=float) for name, m in named.items()}
    y = observed[next(iter(named))]
    for name, m in named.items():
        if not (m.n_obs_ == first.n_obs_ and np.array_equal(observed[name], y)):
            raise InvalidParameterError(
                f"models[{name!r}] of {where} was fitted to other observations than the "
                "first model; LOO comparisons need the same response rows"
            )
    families = {m._inputs.family for m in named.values()}
    categories = None
    if len(families) > 1:
        categories = np.unique(y)
        if not np.all(np.round(categories) == categories):
            raise InvalidParameterError(
                f"{where}: comparing ordinal and gaussian models needs whole-number ratings"
            )
    elpds = {}
    for name, m in named.items():
        rows_loglik = m._loglik_rows
        if categories is not None and m._inputs.family == "gaussian":
            rows_loglik = functools.partial(_discretized_gaussian, m, categories)
        elpds[name] = _psis_loo(
            m.posterior_,
            m.n_obs_,
            rows_loglik,
            pointwise=True,
            name=f"compare (model {name!r})",
        )
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Pareto.*", category=UserWarning)
        return az.compare(elpds, ic="loo")


@dataclass(frozen=True, repr=False)
class GroupCVResult(Result):
    """Leave-one-group-out cross-validation of a :class:`BayesianMixedModel`.

    Attributes
    ----------
    elpd : float
        Sum over held-out groups of the log predictive density of their observations.
    se : float
        Standard error of ``elpd``: ``sqrt(G) x sd`` of the per-group values.
    pointwise : pandas.DataFrame
        One row per held-out level: ``group``, ``level``, ``n`` (its observations),
        ``elpd``, ``elpd_per_obs``, and the refit's ``r_hat_max``, ``ess_bulk_min``,
        ``divergences``.
    """

    elpd: float
    se: float
    pointwise: pd.DataFrame

    def _title(self) -> str:
        return (
            f"GroupCVResult(elpd = {self.elpd:.1f}, SE {self.se:.1f}, "
            f"{len(self.pointwise)} groups held out)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Held-out groups", self.pointwise)]


def leave_one_group_out(
    model: BayesianMixedModel,
    data: pd.DataFrame,
    *,
    group_col: str | None = None,
    levels: Sequence[Any] | None = None,
    draws: int | None = None,
    tune: int | None = None,
) -> GroupCVResult:
    """Refit ``model`` once per held-out group level and score the held-out observations.

    Parameters
    ----------
    model : BayesianMixedModel
        Template (fitted or not): formula, family, priors and sampler settings.
    data : pandas.DataFrame
        The full data.
    group_col : str
        Grouping factor to hold out (a data column named in a random term), e.g.
        ``"participant"``.
    levels : sequence, optional
        Levels to hold out (all by default); a subset keeps the cost down.
    draws, tune : int, optional
        Override the model's draws and tuning steps for the refits.

    Returns
    -------
    GroupCVResult
        Total ``elpd``, its ``se`` and the per-level table.

    Raises
    ------
    InvalidParameterError
        For an unknown ``group_col`` or level.

    Warns
    -----
    SamplingWarning
        Once, naming the levels whose refit failed the diagnostics gate.

    Notes
    -----
    For a held-out level ``j`` with observations ``y_j``::

        elpd_j = log p(y_j | y_-j) = log E_{theta ~ p(theta | y_-j)} E_{u ~ N(0, Sigma)}
                 prod_i p(y_ji | theta, u)

    The group's effects ``u`` (all its random-effects blocks jointly) are integrated by
    product Gauss-Hermite quadrature, because one participant's ratings share them; the
    effects of other factors use their posterior values, and for levels seen only in the
    held-out rows one draw from their fitted distribution per posterior draw.
    """
    where = "leave_one_group_out"
    group = group_col
    if not isinstance(model, BayesianMixedModel):
        raise InvalidParameterError(
            f"the `model` parameter of {where} must be a BayesianMixedModel; "
            f"got {type(model).__name__}"
        )
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {where} must be a pandas DataFrame; got {type(data).__name__}"
        )
    from models.formula import parse_formula

    spec = parse_formula(model.formula)
    groups = [t.group for t in spec.random]
    if group not in groups or group not in data.columns:
        raise InvalidParameterError(
            f"the `group_col` parameter of {where} must be a grouping column of the formula "
            f"({sorted(set(groups))}); got {group!r}"
        )
    present = pd.unique(data[group].dropna())
    if levels is None:
        chosen = list(np.sort(present))
    else:
        chosen = list(levels)
        missing = [lv for lv in chosen if lv not in set(present.tolist())]
        if missing or not chosen:
            raise InvalidParameterError(
                f"the `levels` parameter of {where} must name levels of {group!r}; "
                f"not found: {missing or 'none given'}"
            )
    overrides = {}
    if draws is not None:
        overrides["draws"] = draws
    if tune is not None:
        overrides["tune"] = tune
    records = []
    failed = []
    for level in chosen:
        mask = (data[group] == level).to_numpy()
        refit = model._clone(**overrides)
        diag = refit._fit(data.loc[~mask])
        if diag["failures"]:
            failed.append(str(level))
        elpd, n = _held_out_elpd(refit, data.loc[mask], group=group)
        records.append(
            {
                "group": group,
                "level": level,
                "n": n,
                "elpd": elpd,
                "elpd_per_obs": elpd / n if n else float("nan"),
                "r_hat_max": diag["r_hat_max"],
                "ess_bulk_min": diag["ess_bulk_min"],
                "divergences": diag["divergences"],
            }
        )
    if failed:
        warnings.warn(
            f"{where}: the refits without levels {failed} of {group!r} failed the diagnostics "
            "gate (see pointwise r_hat_max, ess_bulk_min, divergences); raise draws/tune",
            SamplingWarning,
            stacklevel=2,
        )
    table = pd.DataFrame.from_records(records)
    values = table["elpd"].to_numpy(dtype=float)
    se = float(np.sqrt(len(values)) * values.std(ddof=1)) if len(values) > 1 else float("nan")
    return GroupCVResult(elpd=float(values.sum()), se=se, pointwise=table)


def _held_out_elpd(
    model: BayesianMixedModel, held: pd.DataFrame, *, group: str
) -> tuple[float, int]:
    from scipy.special import logsumexp

    where = "leave_one_group_out"
    new = model._new_rows(held, where=where, need_y=True)
    draws = model._draws
    inputs = model._inputs
    S = draws["fixed"].shape[0]
    rng = np.random.default_rng(model._opts["seed"])
    Zg, covs, index, fresh = [], [], [], {}
    for r, block in enumerate(inputs.random):
        idx = new.index[r]
        if block.group == group:  # integrated out below
            Zg.append(new.Z[r])
            covs.append(model._block_cov(r))
            index.append(np.full(idx.shape, -1))
            continue
        index.append(idx)
        seen = idx >= 0
        if not seen.all():
            # one draw per posterior draw for each level met only in the held-out rows
            cov = model._block_cov(r)
            chol = np.linalg.cholesky(cov + 1e-12 * np.eye(cov.shape[1]))
            new_levels, inverse = np.unique(new.labels[r][~seen].astype(str), return_inverse=True)
            e = rng.standard_normal((S, len(new_levels), cov.shape[1]))
            fresh[r] = np.einsum("sqp,slp->slq", chol, e)[:, inverse, :]
    eta = model._eta(new.X_data, new.Z, index, fresh=fresh)
    Z = np.concatenate(Zg, axis=1)
    q = Z.shape[1]
    cov = np.zeros((S, q, q))
    start = 0
    for c in covs:
        k = c.shape[1]
        cov[:, start : start + k, start : start + k] = c
        start += k
    cov = cov + 1e-12 * np.eye(q)

    if inputs.family == "gaussian":
        sigma = draws["sigma"]

        def loglik(e: np.ndarray) -> np.ndarray:  # e: S x ... x n
            sig = sigma.reshape((S,) + (1,) * (e.ndim - 1))
            return -0.5 * ((new.y - e) / sig) ** 2 - np.log(sig) - 0.5 * math.log(2 * math.pi)
    else:
        cut = draws["cutpoints"]

        def loglik(e: np.ndarray) -> np.ndarray:
            flat = e.reshape(S, -1, e.shape[-1])
            G = flat.shape[1]
            cuts = np.repeat(cut, G, axis=0)
            out = pmod.ordinal_loglik(flat.reshape(S * G, -1), cuts, new.y, inputs.link)
            return out.reshape(e.shape)

    total = _log_marginal(eta, Z, cov, loglik)
    return float(logsumexp(total) - math.log(S)), int(len(new.y))


def _log_marginal(eta: np.ndarray, Z: np.ndarray, cov: np.ndarray, loglik: Any) -> np.ndarray:
    """``log int prod_i p(y_i | eta_i + z_i u) N(u; 0, cov) du`` per draw, by adaptive quadrature.

    Newton steps find the mode of the integrand in ``u`` (the likelihood is log-concave in
    ``eta`` for both families), and product Gauss-Hermite nodes are placed on the normal
    approximation there (exact for the gaussian family).
    """
    from scipy.special import logsumexp

    S, q = cov.shape[0], cov.shape[1]
    prec = np.linalg.inv(cov)
    _, logdet_cov = np.linalg.slogdet(cov)
    u = np.zeros((S, q))
    h = 1e-4
    for _ in range(25):
        e = eta + u @ Z.T
        up, mid, down = loglik(e + h), loglik(e), loglik(e - h)
        g = (up - down) / (2 * h)
        H = np.minimum((up - 2 * mid + down) / h**2, -1e-12)
        grad = g @ Z - np.einsum("sqp,sp->sq", prec, u)
        hess = np.einsum("sn,nq,np->sqp", H, Z, Z) - prec
        step = np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        u = u - step
        if np.max(np.abs(step)) < 1e-10:
            break
    post_cov = np.linalg.inv(-hess)
    L = np.linalg.cholesky(post_cov)
    n_nodes = {1: 20, 2: 10, 3: 6}.get(q, 4)
    x, w = np.polynomial.hermite.hermgauss(n_nodes)
    grid = np.stack([g.ravel() for g in np.meshgrid(*([x] * q), indexing="ij")], axis=1)
    logw = np.sum(
        np.log(np.stack([g.ravel() for g in np.meshgrid(*([w] * q), indexing="ij")], axis=1)),
        axis=1,
    )
    nodes = u[:, None, :] + math.sqrt(2.0) * np.einsum("sqp,gp->sgq", L, grid)  # S x G x q
    e = eta[:, None, :] + nodes @ Z.T  # S x G x n
    ll = loglik(e).sum(axis=-1)
    logprior = -0.5 * np.einsum("sgq,sqp,sgp->sg", nodes, prec, nodes) - 0.5 * (
        logdet_cov[:, None] + q * math.log(2 * math.pi)
    )
    log_jac = 0.5 * q * math.log(2.0) + np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)), axis=1)
    return log_jac + logsumexp(ll + logprior + logw + np.sum(grid**2, axis=1), axis=1)
