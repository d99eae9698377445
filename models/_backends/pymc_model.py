"""Build the PyMC model of :class:`models.bayes.BayesianMixedModel` from a formula design.

The numeric preparation (standardising predictors, coding the response, mapping
posterior draws back to the data's scale) is plain NumPy; PyMC is imported only
inside :func:`build_pymc_model`.

Parameterisation, for observation ``i`` with fixed row ``x_i`` and, for each
random-effects block ``r``, a row ``z_ri`` and group index ``g = g_r[i]``::

    x~ = (x - m) / s            standardised predictors (centred only when an intercept absorbs it)
    z~ = z / s_z                random-effects columns, scaled only
    eta_i = a + x~_i b + sum_r z~_ri u_r[g]
    u_r = Z_r L_r^T             non-centred: Z_r ~ Normal(0, 1); L_r = diag(sd_r) chol(R_r)
    R_r ~ LKJ(eta)              correlated blocks only

``gaussian``: ``(y - mean(y)) / sd(y) ~ Normal(eta, sigma)``.
``ordinal``: ``P(y <= k) = F(c_k - eta)`` with ordered cutpoints ``c``, ``F`` the
logistic (``link="logit"``) or standard normal (``link="probit"``) CDF and no ``a``.

Each block's ``Z_r`` has :func:`padded_levels` rows, at least the block's levels: the rows
beyond them belong to no observation, so data sets whose level counts are close share one
model (and one compilation); :func:`drop_padding` removes those rows from the draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from models._errors import FormulaError

INTERCEPT = "Intercept"


@dataclass(frozen=True)
class StandardizedBlock:
    """One random-effects block on the standardised scale.

    A :class:`models.formula.RandomBlock` with its columns centred and scaled for the sampler.

    Attributes
    ----------
    group : str
        Grouping factor name.
    terms : tuple of str
        Effect names (columns of ``Z``), e.g. ``("Intercept", "Days")``.
    Z : ndarray
        Standardised random-effects design, ``n x q``.
    codes : ndarray of int
        Group index of each row.
    levels : pandas.Index
        Group labels.
    center, scale : ndarray
        ``Z_std = (Z - center) / scale``, column by column.
    intercept : int or None
        Position of the intercept column, if the block has one.
    correlated : bool
        Whether the block's effects are correlated (several effects, not from ``||``);
        such blocks get an LKJ prior.
    min_levels : int, default 0
        Build the block with :func:`padded_levels` of at least this many levels (the
        ``min_levels`` of :class:`models.bayes.BayesianMixedModel`).
    """

    group: str
    terms: tuple[str, ...]
    Z: np.ndarray
    codes: np.ndarray
    levels: pd.Index
    center: np.ndarray
    scale: np.ndarray
    intercept: int | None
    correlated: bool
    min_levels: int = 0

    @property
    def size(self) -> int:
        """Levels of the block in the model: its own, padded (:func:`padded_levels`)."""
        return padded_levels(max(len(self.levels), self.min_levels))

    @property
    def transform(self) -> np.ndarray:
        """Matrix ``A``: data-scale effects ``= A @`` standardised ones (response units aside)."""
        A = np.diag(1.0 / self.scale)
        if self.intercept is not None:
            A[self.intercept, :] = -self.center / self.scale
            A[self.intercept, self.intercept] = 1.0
        return A


@dataclass(frozen=True)
class ModelInputs:
    """Arrays the PyMC model is built from, with what it takes to undo the standardisation.

    Attributes
    ----------
    family, link : str
        ``"gaussian"`` or ``"ordinal"``; ``"logit"`` or ``"probit"`` (ordinal only).
    y : ndarray
        Standardised response (gaussian) or category codes ``0..K-1`` (ordinal).
    y_data : ndarray
        The response as given.
    categories : tuple
        Ordered response categories (ordinal), else empty.
    fixed_terms : tuple of str
        Fixed-effect columns other than the intercept.
    X : ndarray
        Standardised fixed-effect design without the intercept, ``n x p``.
    X_data : ndarray
        The same columns as given.
    x_center, x_scale : ndarray
        ``X = (X_data - x_center) / x_scale``.
    intercept : bool
        Whether the gaussian model has an intercept.
    y_center, y_scale : float
        Gaussian response standardisation (0 and 1 for ordinal).
    random : tuple of StandardizedBlock
        Random-effects blocks.
    """

    family: str
    link: str
    y: np.ndarray
    y_data: np.ndarray
    categories: tuple
    fixed_terms: tuple[str, ...]
    X: np.ndarray
    X_data: np.ndarray
    x_center: np.ndarray
    x_scale: np.ndarray
    intercept: bool
    y_center: float
    y_scale: float
    random: tuple[StandardizedBlock, ...]

    @property
    def n_obs(self) -> int:
        """Number of observations."""
        return int(self.y.shape[0])


def _center_scale(M: np.ndarray, *, center: bool) -> tuple[np.ndarray, np.ndarray]:
    """Column means (or zeros) and standard deviations (1 for constant columns)."""
    m = M.mean(axis=0) if center else np.zeros(M.shape[1])
    s = M.std(axis=0)
    s = np.where(s > 0, s, 1.0)
    return m, s


def ordinal_categories(y: Any, *, where: str) -> tuple[np.ndarray, tuple]:
    """Code an ordinal response as ``0..K-1`` and return its ordered categories.

    Parameters
    ----------
    y : array-like
        The response: an ordered pandas Categorical, or whole numbers.
    where : str
        Calling function, used in messages.

    Returns
    -------
    codes : ndarray of int
        Category index of each observation.
    categories : tuple
        The ordered categories.

    Raises
    ------
    FormulaError
        When the response is not ordinal or has fewer than three categories.
    """
    series = pd.Series(y)
    if isinstance(series.dtype, pd.CategoricalDtype):
        if not series.cat.ordered:
            raise FormulaError(
                f"{where}: family='ordinal' needs an ordered categorical or whole-number "
                "response; got an unordered categorical"
            )
        categories = tuple(series.cat.categories)
        codes = series.cat.codes.to_numpy().astype(int)
    else:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
        if np.isnan(values).any() or not np.all(np.equal(np.round(values), values)):
            raise FormulaError(
                f"{where}: family='ordinal' needs whole-number ratings (or an ordered "
                "categorical); got non-integer values — use family='gaussian' for a "
                "continuous response"
            )
        uniq = np.unique(values)
        categories = tuple(int(v) for v in uniq)
        codes = np.searchsorted(uniq, values).astype(int)
    if len(categories) < 3:
        raise FormulaError(
            f"{where}: family='ordinal' needs at least 3 response categories; got "
            f"{len(categories)} ({list(categories)})"
        )
    return codes, categories


def prepare_inputs(design: Any, *, family: str, link: str, where: str) -> ModelInputs:
    """Standardise a formula design for the PyMC model.

    Parameters
    ----------
    design : Design
        From :func:`models.formula.build_design`.
    family : {"gaussian", "ordinal"}
        Response family.
    link : {"logit", "probit"}
        Ordinal link.
    where : str
        Calling function, used in messages.

    Returns
    -------
    ModelInputs
        The arrays and scaling constants.

    Raises
    ------
    FormulaError
        When the response does not suit the family.
    """
    X_df = design.X
    names = [str(c) for c in X_df.columns]
    has_intercept = INTERCEPT in names
    keep = [c for c in names if c != INTERCEPT]
    X_data = X_df.loc[:, keep].to_numpy(dtype=float) if keep else np.zeros((len(X_df), 0))
    y_raw = np.asarray(design.y)
    if family == "ordinal":
        y, categories = ordinal_categories(y_raw, where=where)
        y_data = y_raw
        # cutpoints absorb the intercept, so predictors can always be centred
        x_center, x_scale = _center_scale(X_data, center=True)
        intercept = False
        y_center, y_scale = 0.0, 1.0
    else:
        y_data = pd.to_numeric(pd.Series(y_raw), errors="coerce").to_numpy(dtype=float)
        if np.isnan(y_data).any():
            raise FormulaError(f"{where}: family='gaussian' needs a numeric response")
        categories = ()
        intercept = has_intercept
        x_center, x_scale = _center_scale(X_data, center=intercept)
        y_center = float(y_data.mean()) if intercept else 0.0
        y_scale = float(y_data.std())
        y_scale = y_scale if y_scale > 0 else 1.0
        y = (y_data - y_center) / y_scale
    X = (X_data - x_center) / x_scale
    blocks = []
    for term in design.random:
        terms = tuple(str(t) for t in term.terms)
        Z = np.asarray(term.Z, dtype=float)
        icol = terms.index(INTERCEPT) if INTERCEPT in terms else None
        # Random slopes are scaled but not centred: the group-level sds and correlations
        # then are those of the effects as written (intercept at predictor value 0), so
        # their priors act on what is reported. Centring would make the LKJ prior shrink
        # the correlation of the centred effects, which inflates the data-scale intercept sd.
        center, scale = _center_scale(Z, center=False)
        if icol is not None:
            scale[icol] = 1.0
        blocks.append(
            StandardizedBlock(
                group=str(term.group),
                terms=terms,
                Z=(Z - center) / scale,
                codes=np.asarray(term.codes, dtype=int),
                levels=pd.Index(term.levels),
                center=center,
                scale=scale,
                intercept=icol,
                correlated=bool(getattr(term, "correlated", True)) and len(terms) > 1,
            )
        )
    return ModelInputs(
        family=family,
        link=link,
        y=y,
        y_data=y_data,
        categories=categories,
        fixed_terms=tuple(keep),
        X=X,
        X_data=X_data,
        x_center=x_center,
        x_scale=x_scale,
        intercept=intercept,
        y_center=y_center,
        y_scale=y_scale,
        random=tuple(blocks),
    )


# ---------------------------------------------------------------------------------------------
# priors

PRIOR_DISTS: dict[str, tuple[str, dict[str, float], bool]] = {
    # name: (PyMC class, default parameters, positive support)
    "normal": ("Normal", {"mu": 0.0, "sigma": 1.0}, False),
    "student_t": ("StudentT", {"nu": 3.0, "mu": 0.0, "sigma": 1.0}, False),
    "halfnormal": ("HalfNormal", {"sigma": 1.0}, True),
    "halfstudent_t": ("HalfStudentT", {"nu": 3.0, "sigma": 1.0}, True),
    "halfcauchy": ("HalfCauchy", {"beta": 1.0}, True),
    "exponential": ("Exponential", {"lam": 1.0}, True),
    "lkj": ("LKJ", {"eta": 1.0}, True),
}


def _dist(prior: Any, **shape: Any) -> Any:
    import pymc as pm

    cls_name, defaults, _ = PRIOR_DISTS[prior.dist]
    params = {**defaults, **dict(prior.params)}
    return getattr(pm, cls_name).dist(**params, **shape)


def _rv(prior: Any, name: str, **kwargs: Any) -> Any:
    import pymc as pm

    cls_name, defaults, _ = PRIOR_DISTS[prior.dist]
    params = {**defaults, **dict(prior.params)}
    return getattr(pm, cls_name)(name, **params, **kwargs)


def _initial_cutpoints(n_categories: int, link: str) -> np.ndarray:
    """Cutpoints of equally likely categories: the start of every fit, whatever its data.

    The start does not depend on the data, so a model compiled for one data set starts
    where a fresh build would when it is refit on another (same seed, same draws).
    """
    cum = np.arange(1, n_categories) / n_categories
    return special.logit(cum) if link == "logit" else special.ndtri(cum)


_PAD = 1.0e3  # stands in for +/- infinity beyond the outer cutpoints; exp(-1e3) == 0
_FLOOR = 500.0  # softplus arguments below -500 add less than exp(-500) ~ 7e-218


def _padded(cut: Any) -> Any:
    import pytensor.tensor as pt

    return pt.concatenate([pt.as_tensor([-_PAD]), cut, pt.as_tensor([_PAD])])


def _ordinal_logp_logit(value: Any, eta: Any, cut: Any) -> Any:
    """``log(F(c_y - eta) - F(c_{y-1} - eta))`` for the logistic ``F``, without cancellation.

    Uses ``s(a) - s(b) = s(a) s(-b) (1 - exp(b - a))`` for the logistic sigmoid ``s``; the
    last factor depends on the cutpoints only, so it is computed once per category.
    """
    import pytensor.tensor as pt

    padded = _padded(cut)
    y = pt.cast(value, "int64")
    upper = padded[y + 1]
    lower = padded[y]
    # log(1 - exp(c_{k-1} - c_k)) per category; 0 for the outer ones (the pad is +/- infinity)
    gap = pt.concatenate([pt.zeros(1), pt.log1mexp(cut[:-1] - cut[1:]), pt.zeros(1)])
    # softplus(x) = exp(x) = 0 in double precision below -500; the floor keeps JAX's gradient
    # finite (its softplus differentiates every branch, and one overflows far below)
    floor = -_FLOOR
    return (
        gap[y]
        - pt.softplus(pt.maximum(eta - upper, floor))
        - pt.softplus(pt.maximum(lower - eta, floor))
    )


def _ordinal_logp_probit(value: Any, eta: Any, cut: Any) -> Any:
    """``log(Phi(c_y - eta) - Phi(c_{y-1} - eta))``, in the tail where it is accurate."""
    import pymc as pm
    import pytensor.tensor as pt

    padded = _padded(cut)
    y = pt.cast(value, "int64")
    a = padded[y + 1] - eta
    b = padded[y] - eta
    log_phi = pm.distributions.dist_math.normal_lcdf
    lower_tail = pm.math.logdiffexp(log_phi(0.0, 1.0, a), log_phi(0.0, 1.0, b))
    upper_tail = pm.math.logdiffexp(log_phi(0.0, 1.0, -b), log_phi(0.0, 1.0, -a))
    return pt.switch(b > 0, upper_tail, lower_tail)


def _prior_key(prior: Any) -> tuple:
    return (prior.dist, tuple(sorted((str(k), float(v)) for k, v in dict(prior.params).items())))


def model_structure(inputs: ModelInputs, priors: dict[str, Any]) -> tuple:
    """Return what the compiled model depends on besides its data: equal keys, one compile.

    Parameters
    ----------
    inputs : ModelInputs
        From :func:`prepare_inputs`.
    priors : dict
        As for :func:`build_pymc_model`.

    Returns
    -------
    tuple
        Hashable: family, link, fixed terms, number of categories, and per random block
        its terms, number of levels rounded up by :func:`padded_levels` and whether it is
        correlated, and the priors. The number of rows, the values and the labels of levels
        and categories, and the exact number of levels are data.
    """
    blocks = tuple(
        (
            block.group,
            block.terms,
            block.size,
            block.correlated,
            block.intercept,
        )
        for block in inputs.random
    )
    return (
        inputs.family,
        inputs.link,
        inputs.fixed_terms,
        inputs.intercept,
        len(inputs.categories),
        blocks,
        tuple(sorted((name, _prior_key(prior)) for name, prior in priors.items())),
    )


PAD_EXACT = 16
"""Blocks of up to this many levels are built with exactly their levels."""

PAD_STEPS = 4
"""Bucket sizes per doubling of the levels above :data:`PAD_EXACT`."""


def padded_levels(n_levels: int) -> int:
    """Return the number of levels a random-effects block of ``n_levels`` levels is built with.

    Up to :data:`PAD_EXACT` levels, ``n_levels`` itself; above, the smallest size of the grid
    ``ceil(PAD_EXACT * 2 ** (k / PAD_STEPS))``, ``k = 0, 1, ...`` (16, 20, 23, 27, 32, 39, ...,
    431, 512, 609, ...) that holds them. Consecutive sizes are ``2 ** (1/4) = 1.19`` apart, so
    at most 19 % of ``n_levels`` is added (435, 445 and 457 stories all become 512), and data
    sets whose counts fall between the same two grid sizes (cross-validation folds, simulated
    studies, refits) share one compiled model. Below the grid's start one level is 6 % or more
    of a block and a grid of 4 sizes per doubling would only pair neighbouring counts, so
    small blocks keep their size.

    Parameters
    ----------
    n_levels : int
        Levels of the block in the data.

    Returns
    -------
    int
        The block's size in the model, at least ``n_levels``.
    """
    if n_levels <= PAD_EXACT:
        return n_levels
    k = 0
    while (size := math.ceil(PAD_EXACT * 2.0 ** (k / PAD_STEPS))) < n_levels:
        k += 1
    return size


def _level_coords(block: StandardizedBlock) -> list[str]:
    """Labels of a block's model levels: its own, then distinct names for the padding."""
    labels = [str(v) for v in block.levels]
    taken = set(labels)
    prefix = "(padding "
    while any(label.startswith(prefix) for label in taken):
        prefix = "(" + prefix
    pad = range(block.size - len(labels))
    return labels + [f"{prefix}{j})" for j in pad]


def _slope_columns(block: StandardizedBlock) -> list[int]:
    """Columns of a block's design that multiply its effects (all but the intercept's ones)."""
    return [k for k in range(len(block.terms)) if k != block.intercept]


def model_data(inputs: ModelInputs) -> dict[str, np.ndarray]:
    """Return the data containers of :func:`build_pymc_model` by name, for ``pm.set_data``.

    Parameters
    ----------
    inputs : ModelInputs
        From :func:`prepare_inputs`.

    Returns
    -------
    dict of str to ndarray
        ``X`` (fixed design, when there are fixed terms), per block ``r`` ``codes_{r}``
        (level of each row) and ``Z_{r}_{k}`` (each column ``k`` other than the
        intercept), and ``y_obs`` (response or category codes).
    """
    data: dict[str, np.ndarray] = {}
    if inputs.fixed_terms:
        data["X"] = np.ascontiguousarray(inputs.X, dtype=float)
    for r, block in enumerate(inputs.random):
        data[f"codes_{r}"] = np.ascontiguousarray(block.codes, dtype=np.int64)
        for k in _slope_columns(block):
            data[f"Z_{r}_{k}"] = np.ascontiguousarray(block.Z[:, k], dtype=float)
    if inputs.family == "gaussian":
        data["y_obs"] = np.ascontiguousarray(inputs.y, dtype=float)
    else:
        data["y_obs"] = np.ascontiguousarray(inputs.y, dtype=np.int64)
    return data


def build_pymc_model(inputs: ModelInputs, priors: dict[str, Any]) -> Any:
    """Build the PyMC model.

    Parameters
    ----------
    inputs : ModelInputs
        From :func:`prepare_inputs`.
    priors : dict
        Parameter class -> prior object with ``dist`` and ``params`` attributes, for
        every class the model uses (``intercept, fixed, cutpoints, sd, cor, sigma``).

    Returns
    -------
    pymc.Model
        Free variables ``b_z``, ``intercept_z``, ``cutpoints_z``, ``sigma_z``, ``z_{r}`` and
        ``sd_z_{r}`` or ``chol_z_{r}`` (block ``r``; the packed lower-triangular Cholesky
        factor of the effects' covariance), all on the standardised scale; ``z_{r}`` has
        :func:`padded_levels` rows, the block's levels first. No deterministics
        are stored: the group effects follow from ``z_{r}`` in :func:`data_scale_draws`.
        The data are the containers of :func:`model_data`, whose lengths are not fixed:
        the model serves any data of the same :func:`model_structure` through
        ``pymc.set_data`` (the level and category labels in its coords are those of
        ``inputs``).
    """
    import pymc as pm
    import pytensor.tensor as pt

    coords: dict[str, Any] = {"fixed_z": list(inputs.fixed_terms)}
    for r, block in enumerate(inputs.random):
        coords[f"level_{r}"] = _level_coords(block)
        coords[f"effect_{r}"] = list(block.terms)
    if inputs.family == "ordinal":
        cats = [str(c) for c in inputs.categories]
        coords["cutpoint"] = [f"{a}|{b}" for a, b in zip(cats[:-1], cats[1:], strict=True)]
    data = model_data(inputs)
    with pm.Model(coords=coords) as model:
        y = pm.Data("y_obs", data["y_obs"])
        eta = pt.zeros(y.shape[0])
        if inputs.fixed_terms:
            b = _rv(priors["fixed"], "b_z", dims="fixed_z")
            eta = eta + pt.dot(pm.Data("X", data["X"]), b)
        if inputs.intercept:
            eta = eta + _rv(priors["intercept"], "intercept_z")
        for r, block in enumerate(inputs.random):
            q = len(block.terms)
            # The padding rows of z enter no row's eta: their posterior is their N(0, 1)
            # prior, independent of the rest, whose posterior is the unpadded model's exactly.
            # NUTS leaves this joint posterior invariant whatever step size and mass matrix
            # its adaptation picks, so the extra dimensions (unit variance, which the mass
            # matrix learns) cost a little efficiency but bias nothing; the energy, and so
            # E-BFMI, includes them. Only the same seed's draws differ from an unpadded fit.
            z = pm.Normal(f"z_{r}", 0.0, 1.0, dims=(f"level_{r}", f"effect_{r}"))
            if block.correlated:
                chol, _, _ = pm.LKJCholeskyCov(
                    f"chol_z_{r}",
                    n=q,
                    eta=float(dict(priors["cor"].params).get("eta", 1.0)),
                    sd_dist=_dist(priors["sd"], shape=q),
                    compute_corr=True,
                    store_in_trace=False,
                )
                u = pt.dot(z, chol.T)
            else:
                sd = _rv(priors["sd"], f"sd_z_{r}", dims=f"effect_{r}")
                u = z * sd
            codes = pm.Data(f"codes_{r}", data[f"codes_{r}"])
            # one gather per effect: a vector gather (and its scatter-add gradient) is
            # cheaper than gathering rows of the levels x effects matrix
            for k in range(q):
                effect = u[:, k][codes]
                if k != block.intercept:
                    effect = effect * pm.Data(f"Z_{r}_{k}", data[f"Z_{r}_{k}"])
                eta = eta + effect
        if inputs.family == "gaussian":
            sigma = _rv(priors["sigma"], "sigma_z")
            pm.Normal("y", mu=eta, sigma=sigma, observed=y)
        else:
            cut = _rv(
                priors["cutpoints"],
                "cutpoints_z",
                dims="cutpoint",
                transform=pm.distributions.transforms.ordered,
                initval=_initial_cutpoints(len(inputs.categories), inputs.link),
            )
            pm.CustomDist(
                "y",
                eta,
                cut,
                logp=_ordinal_logp_logit if inputs.link == "logit" else _ordinal_logp_probit,
                observed=y,
            )
    return model


def drop_padding(idata: Any, inputs: ModelInputs) -> Any:
    """Return the draws of a fit without the padding levels of its random-effects blocks.

    Parameters
    ----------
    idata : arviz.InferenceData
        A fit of :func:`build_pymc_model`, as the sampler returned it.
    inputs : ModelInputs
        The inputs of that fit.

    Returns
    -------
    arviz.InferenceData
        ``idata`` whose groups keep, along each ``level_{r}`` dimension, the block's levels
        only (the first ones; every other group unchanged).
    """
    import arviz as az

    keep = {f"level_{r}": slice(0, len(block.levels)) for r, block in enumerate(inputs.random)}
    groups = {}
    for name in idata.groups():
        group = idata[name]
        sel = {dim: part for dim, part in keep.items() if dim in group.dims}
        groups[name] = group.isel(sel) if sel else group
    return az.InferenceData(**groups)


def relabel(posterior: Any, inputs: ModelInputs) -> Any:
    """Posterior draws labelled with the levels and categories of ``inputs``.

    A model compiled for one data set and refit on another keeps the labels of the
    first in its coords; the draws are positional, so the labels are set here.

    Parameters
    ----------
    posterior : xarray.Dataset
        The ``posterior`` group of a fit of :func:`build_pymc_model`.
    inputs : ModelInputs
        The inputs of that fit.

    Returns
    -------
    xarray.Dataset
        ``posterior`` with its ``level_{r}`` and ``cutpoint`` coordinates replaced.
    """
    coords: dict[str, Any] = {}
    for r, block in enumerate(inputs.random):
        if f"level_{r}" in posterior.coords:
            coords[f"level_{r}"] = [str(v) for v in block.levels]
    if "cutpoint" in posterior.coords:
        cats = [str(c) for c in inputs.categories]
        coords["cutpoint"] = [f"{a}|{b}" for a, b in zip(cats[:-1], cats[1:], strict=True)]
    return posterior.assign_coords(coords)


# ---------------------------------------------------------------------------------------------
# back to the data's scale


def _stack(posterior: Any, name: str) -> np.ndarray:
    return np.asarray(posterior[name].values, dtype=float)


def data_scale_draws(inputs: ModelInputs, posterior: Any) -> dict[str, np.ndarray]:
    """Map standardised posterior draws to the data's scale.

    Parameters
    ----------
    inputs : ModelInputs
        The prepared inputs of the fit.
    posterior : xarray.Dataset
        The ``posterior`` group, with dimensions ``chain, draw, ...``.

    Returns
    -------
    dict of str to ndarray
        ``fixed`` (chain, draw, p; the intercept first for gaussian models),
        ``cutpoints`` (chain, draw, K-1; ordinal), ``sigma`` (chain, draw; gaussian),
        and per block ``r``: ``sd_r`` (chain, draw, q), ``cor_r`` (chain, draw, q, q)
        and ``re_r`` (chain, draw, levels, q), all in response units per data unit.
    """
    out: dict[str, np.ndarray] = {}
    shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    b = _stack(posterior, "b_z") if inputs.fixed_terms else np.zeros((*shape, 0))
    slopes = inputs.y_scale * b / inputs.x_scale
    shift = np.sum(b * (inputs.x_center / inputs.x_scale), axis=-1)
    if inputs.family == "gaussian":
        if inputs.intercept:
            a = _stack(posterior, "intercept_z")
            icpt = inputs.y_center + inputs.y_scale * (a - shift)
            out["fixed"] = np.concatenate([icpt[..., None], slopes], axis=-1)
        else:
            out["fixed"] = slopes
        out["sigma"] = inputs.y_scale * _stack(posterior, "sigma_z")
    else:
        out["fixed"] = slopes
        out["cutpoints"] = _stack(posterior, "cutpoints_z") + shift[..., None]
    for r, block in enumerate(inputs.random):
        A = block.transform
        q = len(block.terms)
        z = _stack(posterior, f"z_{r}")
        if block.correlated:
            packed = _stack(posterior, f"chol_z_{r}")
            L = np.zeros((*packed.shape[:2], q, q))
            rows, cols = np.tril_indices(q)
            L[..., rows, cols] = packed
            u = np.einsum("cdjp,cdqp->cdjq", z, L)
            cov = np.einsum("cdqp,cdsp->cdqs", L, L)
        else:
            sds = _stack(posterior, f"sd_z_{r}")
            u = z * sds[:, :, None, :]
            cov = sds[..., :, None] ** 2 * np.eye(q)
        out[f"re_{r}"] = inputs.y_scale * np.einsum("cdjq,pq->cdjp", u, A)
        cov = inputs.y_scale**2 * np.einsum("pq,cdqs,ts->cdpt", A, cov, A)
        sd = np.sqrt(np.einsum("cdpp->cdp", cov))
        out[f"sd_{r}"] = sd
        if block.correlated:
            out[f"cor_{r}"] = cov / (sd[..., :, None] * sd[..., None, :])
    return out


def fixed_names(inputs: ModelInputs) -> list[str]:
    """Names of the data-scale fixed effects, in the order of ``data_scale_draws()['fixed']``."""
    return ([INTERCEPT] if inputs.intercept else []) + list(inputs.fixed_terms)


def linear_predictor(
    draws: dict[str, np.ndarray],
    X_data: np.ndarray,
    random: list[tuple[np.ndarray, np.ndarray]],
    *,
    intercept: bool,
) -> np.ndarray:
    """Data-scale linear predictor for every draw.

    Parameters
    ----------
    draws : dict
        From :func:`data_scale_draws`, each array flattened to ``(S, ...)``.
    X_data : ndarray
        Fixed design without the intercept, ``n x p``, on the data's scale.
    random : list of (Z, effects)
        Per block, the data-scale design ``n x q`` and the effects ``S x n x q``
        already gathered for each row.
    intercept : bool
        Whether ``draws["fixed"][:, 0]`` is an intercept.

    Returns
    -------
    ndarray
        ``S x n`` linear predictor (the mean for gaussian models).
    """
    fixed = draws["fixed"]
    if intercept:
        eta = fixed[:, :1] + fixed[:, 1:] @ X_data.T
    else:
        eta = fixed @ X_data.T
    for Z, eff in random:
        eta = eta + np.einsum("snq,nq->sn", eff, Z)
    return eta


def flatten_draws(a: np.ndarray) -> np.ndarray:
    """``(chain, draw, ...)`` -> ``(chain * draw, ...)``."""
    return a.reshape(a.shape[0] * a.shape[1], *a.shape[2:])


def ordinal_cdf(x: np.ndarray, link: str) -> np.ndarray:
    """Logistic or standard-normal CDF."""
    return special.expit(x) if link == "logit" else special.ndtr(x)


def category_probabilities(eta: np.ndarray, cutpoints: np.ndarray, link: str) -> np.ndarray:
    """Ordinal category probabilities ``S x n x K`` from ``eta`` (S x n) and cutpoints (S x K-1)."""
    cdf = ordinal_cdf(cutpoints[:, None, :] - eta[:, :, None], link)
    S, n = eta.shape
    cdf = np.concatenate([np.zeros((S, n, 1)), cdf, np.ones((S, n, 1))], axis=-1)
    return np.clip(np.diff(cdf, axis=-1), 0.0, 1.0)


def ordinal_loglik(eta: np.ndarray, cutpoints: np.ndarray, y: np.ndarray, link: str) -> np.ndarray:
    """Pointwise log-likelihood ``S x n`` of category codes ``y`` under the ordinal model."""
    S, n = eta.shape
    K1 = cutpoints.shape[1]
    upper_idx = np.minimum(y, K1 - 1)
    lower_idx = np.maximum(y - 1, 0)
    c_up = cutpoints[:, upper_idx] - eta
    c_lo = cutpoints[:, lower_idx] - eta
    if link == "logit":
        log_up = -np.logaddexp(0.0, -c_up)  # log F(c_up)
        log_lo = -np.logaddexp(0.0, -c_lo)
        log_sf_lo = -np.logaddexp(0.0, c_lo)  # log (1 - F(c_lo))
    else:
        log_up = special.log_ndtr(c_up)
        log_lo = special.log_ndtr(c_lo)
        log_sf_lo = special.log_ndtr(-c_lo)
    first = y == 0
    last = y == K1
    # middle categories: log(F(up) - F(lo)) = log F(up) + log1p(-exp(log F(lo) - log F(up)))
    with np.errstate(divide="ignore", invalid="ignore"):
        middle = log_up + np.log1p(-np.exp(np.minimum(log_lo - log_up, 0.0)))
    out = np.where(first[None, :], log_up, np.where(last[None, :], log_sf_lo, middle))
    return np.maximum(out, np.log(np.finfo(float).tiny))
