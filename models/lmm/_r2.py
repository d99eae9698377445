"""R-squared of a fitted linear mixed model: Rights & Sterba (2019) and Nakagawa et al.

Rights & Sterba decompose the model-implied variance of the outcome of a two-level model into
the parts explained by the fixed slopes (``f1`` within clusters, ``f2`` between them), by the
random-slope variation (``v``), by the random-intercept variation (``m``) and the residual; each
measure is a ratio of those parts, over the total variance (``total``), the within-cluster
variance (``within``) or the between-cluster variance (``between``). The measure names are
those of r2mlm (Shaw, Rights, Sterba & Flake 2023). With ``gamma`` the fixed slopes, ``Phi``
the covariance matrix of their predictors, ``Tau`` the random-effect covariance matrix,
``Sigma`` the covariance matrix and ``m`` the mean of the random-effect columns:

* explained by the fixed slopes: ``gamma' Phi gamma`` (split into ``gamma_w' Phi_w gamma_w``
  over the within-cluster predictors and ``gamma_b' Phi_b gamma_b`` over the between ones);
* by random-slope variation: ``trace(Sigma Tau)``;
* by random-intercept (cluster-mean) variation: ``m' Tau m``;
* the residual: ``sigma^2``.

The split needs every predictor to be either a within-cluster predictor (each cluster's mean
0) or a between-cluster one (constant within each cluster); covariances are sample
covariances over the observations (divisor ``n - 1``), as r2mlm computes them.

Nakagawa's marginal and conditional R-squared (Nakagawa, Johnson & Schielzeth 2017) divide the
variance of the fixed-effect predictions ``var(X beta)`` and that plus the random-effect
variance by the sum of both and the residual variance; with random slopes the random-effect
variance is the mean of ``z_i' Sigma_b z_i`` over the observed rows (Johnson 2014), as
``performance::r2_nakagawa`` (insight's ``get_variance``) computes it. The parts of that
denominator are kept (``variances``: the fixed part, each grouping factor's part, the residual),
so that a grouping factor's share of the variance can be read beside the two ratios.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from _empathic_base.results import Result, json_ready
from models._errors import CentringWarning, InvalidParameterError

MEASURES = ("f1", "f2", "v", "m", "f", "fv", "fvm")
"""r2mlm's names of the Rights & Sterba measures, in its order."""

R2_COLUMNS = ["decomposition", "measure", "value"]
"""Columns of :meth:`MixedR2.to_frame`."""

_CENTRING = (
    "split each by person-mean (cluster-mean) centring: x_within = x - the cluster mean of x "
    "and x_between = the cluster mean of x, and put both in the formula"
)


@dataclass(frozen=True, repr=False)
class MixedR2(Result):
    """R-squared measures of a fitted linear mixed model.

    Attributes
    ----------
    rights_sterba : dict
        ``{"total": {...}, "within": {...}, "between": {...}}``, each keyed by r2mlm's measure
        names (``f1, f2, v, m, f, fv, fvm``); a measure is absent where it does not apply
        (``within`` has ``f1, v, fv``, ``between`` has ``f2, m``). Without a within/between
        split (a predictor at both levels) ``total`` has ``f, v, m, fv, fvm`` and the other two
        are empty; for a model with more than one grouping factor all three are empty.
    nakagawa : dict
        ``{"marginal": ..., "conditional": ...}``.
    cluster : str or None
        The grouping factor of the decomposition (None with several grouping factors).
    within, between, both : tuple of str
        Fixed-effect columns (and random-slope columns) classified as within-cluster (every
        cluster mean 0), between-cluster (constant within each cluster) or both.
    note : str
        Why a decomposition is missing and how to obtain it; empty when nothing is missing.
    variances : dict
        The parts of Nakagawa's denominator: ``fixed`` (``var(X beta)``), ``random`` (a dict:
        each grouping factor's random-effect variance, the mean of ``z_i' Sigma z_i``) and
        ``residual``; empty where the model does not give them.
    """

    rights_sterba: dict[str, dict[str, float]]
    nakagawa: dict[str, float]
    cluster: str | None
    within: tuple[str, ...] = ()
    between: tuple[str, ...] = ()
    both: tuple[str, ...] = ()
    note: str = ""
    variances: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        return (
            f"MixedR2(marginal = {self.nakagawa['marginal']:.3g}, "
            f"conditional = {self.nakagawa['conditional']:.3g})"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        rows = [
            (part, name, value)
            for part in ("total", "within", "between")
            for name, value in self.rights_sterba[part].items()
        ]
        rows += [("nakagawa", name, value) for name, value in self.nakagawa.items()]
        return [("R-squared", pd.DataFrame(rows, columns=R2_COLUMNS))]

    def to_dict(self) -> dict[str, Any]:
        """Return the measures as JSON-ready data.

        Returns
        -------
        dict
            ``rights_sterba``, ``nakagawa``, ``cluster``, ``predictors`` (``within``,
            ``between``, ``both`` lists), ``note`` and ``variances``.
        """
        return json_ready(
            {
                "rights_sterba": self.rights_sterba,
                "nakagawa": self.nakagawa,
                "cluster": self.cluster,
                "predictors": {
                    "within": list(self.within),
                    "between": list(self.between),
                    "both": list(self.both),
                },
                "note": self.note,
                "variances": self.variances,
            }
        )


def _cluster_means(x: np.ndarray, codes: np.ndarray, n_levels: int) -> np.ndarray:
    counts = np.bincount(codes, minlength=n_levels).astype(float)
    if x.shape[1] == 0:
        return np.zeros((n_levels, 0))
    sums = np.stack([np.bincount(codes, weights=col, minlength=n_levels) for col in x.T], axis=1)
    return sums / counts[:, None]


def classify(x: np.ndarray, codes: np.ndarray, n_levels: int, *, tol: float = 1e-9) -> list[str]:
    """Classify each column of ``x`` as ``"within"``, ``"between"`` or ``"both"``.

    Within: every cluster mean is 0; between: constant within every cluster. Both tests are
    relative to the column's largest absolute value (``tol``).
    """
    means = _cluster_means(x, codes, n_levels)
    out = []
    for j in range(x.shape[1]):
        scale = max(float(np.max(np.abs(x[:, j]))), np.finfo(float).tiny)
        if np.max(np.abs(means[:, j])) <= tol * scale:
            out.append("within")
        elif np.max(np.abs(x[:, j] - means[codes, j])) <= tol * scale:
            out.append("between")
        else:
            out.append("both")
    return out


def cluster_levels(data: pd.DataFrame, *, columns: Sequence[str], cluster: str) -> dict[str, str]:
    """Say of each numeric column whether it varies within clusters, between them, or both.

    The classification :meth:`LinearMixedModel.r2` makes of its predictors before it splits
    the variance within and between clusters (Rights & Sterba): a column whose every
    cluster mean is 0 is ``"within"``, one constant within every cluster ``"between"``, any
    other ``"both"`` (it needs person-mean centring for the split).

    Parameters
    ----------
    data : pandas.DataFrame
        The rows the model is fitted on.
    columns : sequence of str
        Numeric columns without missing values.
    cluster : str
        The grouping column.

    Returns
    -------
    dict of str to str
        ``{column: "within" | "between" | "both"}`` in the order given.

    Raises
    ------
    models.InvalidParameterError
        For a column that is missing, not numeric or has missing values.

    Examples
    --------
    >>> import pandas as pd
    >>> d = pd.DataFrame({"g": [1, 1, 2, 2], "w": [-1.0, 1, -2, 2], "b": [3.0, 3, 5, 5]})
    >>> cluster_levels(d, columns=["w", "b"], cluster="g")
    {'w': 'within', 'b': 'between'}
    """
    func = "cluster_levels"
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {func} must be a pandas DataFrame; got {type(data).__name__}"
        )
    columns = [columns] if isinstance(columns, str) else list(columns)
    missing = [c for c in [*columns, cluster] if c not in data.columns]
    if missing:
        raise InvalidParameterError(f"{func}: the data have no column {missing}")
    bad = [
        c
        for c in columns
        if not pd.api.types.is_numeric_dtype(data[c]) or bool(data[c].isna().any())
    ]
    if bad or data[cluster].isna().any():
        raise InvalidParameterError(
            f"{func}: the columns must be numeric without missing values and the cluster "
            f"column complete; check {bad or [cluster]}"
        )
    codes, levels = pd.factorize(data[cluster])
    x = data[columns].to_numpy(dtype=float)
    return dict(zip(columns, classify(x, codes, len(levels)), strict=True))


def _cov(x: np.ndarray) -> np.ndarray:
    if x.shape[1] == 0:
        return np.zeros((0, 0))
    return np.atleast_2d(np.cov(x, rowvar=False, ddof=1))


def _quad(g: np.ndarray, x: np.ndarray) -> float:
    return float(g @ _cov(x) @ g) if x.shape[1] else 0.0


def _cluster_design(
    blocks: list[Any], covs: list[np.ndarray]
) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Random-effect columns of the one grouping factor with an intercept first, and Tau.

    Blocks of one factor (a ``||`` term) are merged into one block-diagonal ``Tau``; a model
    without a random intercept gets an intercept column with variance 0.
    """
    terms: list[str] = []
    cols: list[np.ndarray] = []
    for block in blocks:
        for i, term in enumerate(block.terms):
            terms.append(term)
            cols.append(block.Z[:, i])
    q = len(terms)
    tau = np.zeros((q, q))
    start = 0
    for block, cov in zip(blocks, covs, strict=True):
        k = len(block.terms)
        tau[start : start + k, start : start + k] = cov
        start += k
    Z = np.column_stack(cols)
    ones = np.all(Z == 1.0, axis=0)
    if ones.any():
        first = int(np.flatnonzero(ones)[0])
        order = [first] + [i for i in range(q) if i != first]
    else:
        Z = np.column_stack([np.ones(len(Z)), Z])
        tau = np.pad(tau, ((1, 0), (1, 0)))
        terms = ["Intercept", *terms]
        order = list(range(q + 1))
    Z = Z[:, order]
    tau = tau[np.ix_(order, order)]
    return Z, [terms[i] for i in order], tau


def rights_sterba(
    X: np.ndarray,
    names: list[str],
    beta: np.ndarray,
    blocks: list[Any],
    covs: list[np.ndarray],
    sigma2: float,
) -> tuple[dict[str, dict[str, float]], tuple[tuple[str, ...], ...], str]:
    """Rights & Sterba measures of a two-level model (blocks all of one grouping factor).

    Returns the measures, the (within, between, both) column names and a note.
    """
    codes, n_levels = blocks[0].codes, blocks[0].n_levels
    intercept = [j for j, name in enumerate(names) if np.all(X[:, j] == 1.0)]
    slopes = [j for j in range(X.shape[1]) if j not in intercept]
    Z, zterms, tau = _cluster_design(blocks, covs)
    slope_kinds = classify(X[:, slopes], codes, n_levels)
    kinds = dict(zip([names[j] for j in slopes], slope_kinds, strict=True))
    for term, kind in zip(zterms[1:], classify(Z[:, 1:], codes, n_levels), strict=True):
        if kind != "within":
            kinds[term] = "both"  # a random slope needs a within-cluster (centred) predictor
    groups = tuple(
        tuple(name for name, kind in kinds.items() if kind == which)
        for which in ("within", "between", "both")
    )
    slope_var = float(np.trace(_cov(Z) @ tau))
    means = Z.mean(axis=0)
    mean_var = float(means @ tau @ means)
    if groups[2]:
        fixed = _quad(beta[slopes], X[:, slopes])
        total = fixed + slope_var + mean_var + sigma2
        f, v, m = fixed / total, slope_var / total, mean_var / total
        measures = {"f": f, "v": v, "m": m, "fv": f + v, "fvm": f + v + m}
        note = (
            f"no within/between split: {list(groups[2])} are neither within-cluster "
            f"predictors (every cluster mean 0) nor between-cluster ones (constant within each "
            f"cluster of {blocks[0].group!r}); {_CENTRING}"
        )
        warnings.warn(f"LinearMixedModel.r2: {note}", CentringWarning, stacklevel=4)
        return {"total": measures, "within": {}, "between": {}}, groups, note
    w = [j for j in slopes if kinds[names[j]] == "within"]
    b = [j for j in slopes if kinds[names[j]] == "between"]
    fixed_w = _quad(beta[w], X[:, w])
    fixed_b = _quad(beta[b], X[:, b])
    within_var = fixed_w + slope_var + sigma2
    between_var = fixed_b + tau[0, 0]
    total = within_var + between_var
    f1, f2, v, m = fixed_w / total, fixed_b / total, slope_var / total, mean_var / total
    out = {
        "total": {"f1": f1, "f2": f2, "v": v, "m": m, "f": f1 + f2, "fv": f1 + f2 + v},
        "within": {
            "f1": fixed_w / within_var,
            "v": slope_var / within_var,
            "fv": (fixed_w + slope_var) / within_var,
        },
        "between": {"f2": fixed_b / between_var, "m": tau[0, 0] / between_var},
    }
    out["total"]["fvm"] = f1 + f2 + v + m
    return out, groups, ""


def nakagawa_parts(
    X: np.ndarray, beta: np.ndarray, blocks: list[Any], covs: list[np.ndarray], sigma2: float
) -> dict[str, Any]:
    """Return the parts of Nakagawa's denominator: fixed, random per factor, residual."""
    random: dict[str, float] = {}
    for block, cov in zip(blocks, covs, strict=True):
        # mean of z_i' Sigma z_i over the rows: insight's random-effect variance with slopes
        part = float(np.mean(np.einsum("ij,jk,ik->i", block.Z, cov, block.Z)))
        random[block.group] = random.get(block.group, 0.0) + part
    return {"fixed": float(np.var(X @ beta, ddof=1)), "random": random, "residual": sigma2}


def nakagawa(parts: dict[str, Any]) -> dict[str, float]:
    """Marginal and conditional R-squared (performance::r2_nakagawa for a linear model)."""
    fixed, random = parts["fixed"], sum(parts["random"].values())
    total = fixed + random + parts["residual"]
    return {"marginal": fixed / total, "conditional": (fixed + random) / total}


def mixed_r2(model: Any) -> MixedR2:
    """Compute :class:`MixedR2` for a fitted :class:`models.lmm.LinearMixedModel`."""
    design = model.design_
    X = design.X.to_numpy()
    names = list(design.X.columns)
    beta = model.beta_.to_numpy()
    sigma2 = float(model.sigma_) ** 2
    covs = [sigma2 * (T @ T.T) for T in model._Ts]
    blocks = list(design.random)
    parts = nakagawa_parts(X, beta, blocks, covs, sigma2)
    nak = nakagawa(parts)
    factors = list(dict.fromkeys(block.group for block in blocks))
    if len(factors) > 1:
        note = (
            f"the Rights & Sterba decomposition is defined for two-level models (one grouping "
            f"factor); this model has {factors}"
        )
        return MixedR2(
            rights_sterba={"total": {}, "within": {}, "between": {}},
            nakagawa=nak,
            cluster=None,
            note=note,
            variances=parts,
        )
    measures, groups, note = rights_sterba(X, names, beta, blocks, covs, sigma2)
    return MixedR2(
        rights_sterba=measures,
        nakagawa=nak,
        cluster=factors[0],
        within=groups[0],
        between=groups[1],
        both=groups[2],
        note=note,
        variances=parts,
    )
