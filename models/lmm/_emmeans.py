"""Estimated marginal means and their contrasts for a fitted linear mixed model.

The reference grid is emmeans' (Lenth; Searle, Speed & Milliken 1980): every level of each
factor of the fixed part and each covariate at its mean over the rows used (``at`` replaces
either). A marginal mean of the ``specs`` (within a ``by`` group) is ``l' beta`` with ``l`` the
equally weighted average of the grid's model-matrix rows for that combination, its standard
error ``sqrt(l' V l)``. Degrees of freedom: Satterthwaite's for ``l`` as lmerTest's
``calcSatterth`` (``V`` the unadjusted covariance), or Kenward-Roger's as pbkrtest's ``Lb_ddf``
(``V`` the adjusted covariance of ``vcovAdj``), which are what emmeans uses with
``lmer.df = "satterthwaite"`` and ``"kenward-roger"``.

Contrasts ``C m`` of the means follow emmeans' coefficient functions (``pairwise.emmc``,
``trt.vs.ctrl.emmc``, ``consec.emmc``, ``poly.emmc``) and labels (levels that read as numbers
get the factor's name in front, ``Diet1 - Diet2``), within each ``by`` group. P-value and
interval adjustments, per ``by`` group: ``tukey`` (studentized range over the ``k`` means),
``dunnettx`` (emmeans' approximation to Dunnett's distribution: ``w ptukey(sqrt(2) t, k',
df) + (1 - w) F(t^2; 1, df)^c`` with ``c`` contrasts, ``w = (c - 1)/c`` and
``k' = (1 + sqrt(1 + 8c))/2``), ``bonferroni``, ``holm`` (intervals by Bonferroni, as emmeans)
and ``none``; one contrast is never adjusted. emmeans' ``mvt`` (the multivariate t by
randomized quasi-Monte Carlo integration) is not offered: its numbers cannot be reproduced.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from _empathic_base.results import Result
from models._checks import check_unit
from models._errors import InvalidParameterError
from models._refgrid import (
    check_request,
    contrast_matrix,
    grid_frame,
    grid_values,
    level_labels,
    predictor_frame,
    product,
)

__all__ = [
    "ADJUSTMENTS",
    "CONTRAST_COLUMNS",
    "DEFAULT_ADJUST",
    "EMMEANS_COLUMNS",
    "Contrasts",
    "MarginalMeans",
    "contrast_matrix",
    "marginal_means",
    "predictor_frame",
]

EMMEANS_COLUMNS = ["emmean", "se", "df", "ci_low", "ci_high"]
"""Columns of :class:`MarginalMeans` after the predictors."""

CONTRAST_COLUMNS = ["estimate", "se", "df", "statistic", "p_value", "ci_low", "ci_high"]
"""Columns of :class:`Contrasts` after ``contrast`` and the ``by`` predictors."""

DEFAULT_ADJUST = {"pairwise": "tukey", "trt.vs.ctrl": "dunnettx", "consec": "holm", "poly": "none"}
"""Contrast methods and their default adjustment (emmeans' defaults, ``holm`` for
``consec`` where emmeans uses ``mvt``)."""

ADJUSTMENTS = ("tukey", "dunnettx", "holm", "bonferroni", "none")
"""Multiplicity adjustments offered."""


@dataclass(frozen=True)
class _Inference:
    """Estimates, covariance and the df of a linear function of the fixed effects."""

    beta: np.ndarray
    vcov: np.ndarray
    ddf: Callable[[np.ndarray], np.ndarray]
    method: str

    def estimate(self, L: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        est = L @ self.beta
        se = np.sqrt(np.einsum("ij,jk,ik->i", L, self.vcov, L))
        return est, se, np.asarray(self.ddf(L), dtype=float)


def _inference(model: Any, ddf: str) -> _Inference:
    beta = model.beta_.to_numpy()
    if ddf == "satterthwaite":
        info = model._varpar()
        from models.lmm._satterthwaite import satterthwaite_df

        return _Inference(beta, info.cov_beta, lambda L: satterthwaite_df(info, L), ddf)
    if ddf == "kenward-roger":
        if not model.reml:
            raise InvalidParameterError(
                "the `ddf` parameter of LinearMixedModel.emmeans: Kenward-Roger df are defined "
                "for REML fits only; use ddf='satterthwaite' or refit with reml=True"
            )
        from models.lmm._kenward_roger import MAX_KR_OBS

        if model.n_obs_ > MAX_KR_OBS:
            raise InvalidParameterError(
                f"LinearMixedModel.emmeans: Kenward-Roger df need dense {model.n_obs_} x "
                f"{model.n_obs_} matrices (at most {MAX_KR_OBS}); use ddf='satterthwaite'"
            )
        kr = model._kenward_roger()
        return _Inference(beta, kr.vcov, kr.ddf, ddf)
    raise InvalidParameterError(
        "the `ddf` parameter of LinearMixedModel.emmeans must be 'satterthwaite' or "
        f"'kenward-roger'; got {ddf!r}"
    )


def marginal_means(
    model: Any,
    specs: Any,
    *,
    by: Any = None,
    ddf: str = "satterthwaite",
    at: dict[str, Any] | None = None,
    ci_level: float = 0.95,
) -> MarginalMeans:
    """Marginal means of a fitted LinearMixedModel (:meth:`LinearMixedModel.emmeans`)."""
    where = "LinearMixedModel.emmeans"
    frame = getattr(model, "_predictors", None)
    spec_names, by_names, at = check_request(frame, specs, by, at, where=where)
    check_unit(ci_level, name="ci_level", where=where)
    design = model.design_
    names = list(frame.columns)
    inference = _inference(model, ddf)
    values = grid_values(design, frame, names, at, where=where)
    grid = grid_frame(frame, values)
    X = design.transform(grid, random=False).X.to_numpy()
    keys = list(zip(*[grid[n].tolist() for n in spec_names + by_names], strict=True))
    index: dict[tuple[Any, ...], list[int]] = {}
    for i, key in enumerate(keys):
        index.setdefault(key, []).append(i)
    combos = [s + b for b in product(values, by_names) for s in product(values, spec_names)]
    L = np.vstack([X[index[c]].mean(axis=0) for c in combos])
    est, se, df = inference.estimate(L)
    q = special.stdtrit(df, 0.5 + float(ci_level) / 2.0)
    columns: dict[str, Any] = {
        name: [c[j] for c in combos] for j, name in enumerate(spec_names + by_names)
    }
    columns.update(
        {"emmean": est, "se": se, "df": df, "ci_low": est - q * se, "ci_high": est + q * se}
    )
    return MarginalMeans(
        table=pd.DataFrame(columns),
        specs=spec_names,
        by=by_names,
        ddf=ddf,
        ci_level=float(ci_level),
        _linfct=L,
        _inference=inference,
    )


@dataclass(frozen=True, repr=False)
class MarginalMeans(Result):
    """Estimated marginal means of a fitted linear or ordinal mixed model.

    Attributes
    ----------
    table : pandas.DataFrame
        One column per predictor of ``specs`` and ``by``, then ``emmean, se, df, ci_low,
        ci_high``; ``by`` groups outermost, the first predictor varying fastest (as emmeans).
    specs, by : tuple of str
        The predictors of the means and of the groups.
    ddf : str
        ``"satterthwaite"`` or ``"kenward-roger"``; ``"asymptotic"`` (infinite df, ``z``) for
        the ordinal model.
    ci_level : float
        Level of the intervals.
    """

    table: pd.DataFrame
    specs: tuple[str, ...]
    by: tuple[str, ...]
    ddf: str
    ci_level: float
    _linfct: np.ndarray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))
    _inference: Any = field(repr=False, default=None)

    def _title(self) -> str:
        by = f" | {', '.join(self.by)}" if self.by else ""
        return f"MarginalMeans(~ {' + '.join(self.specs)}{by}, {self.ddf} df)"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Estimated marginal means", self.table)]

    def pairs(self, *, adjust: str = "tukey") -> Contrasts:
        """All pairwise differences within each ``by`` group (``contrasts("pairwise")``)."""
        return self.contrasts(method="pairwise", adjust=adjust)

    def contrasts(self, *, method: str = "pairwise", adjust: str | None = None) -> Contrasts:
        """Contrasts of the means within each ``by`` group.

        Parameters
        ----------
        method : {"pairwise", "trt.vs.ctrl", "consec", "poly"}, default "pairwise"
            emmeans' contrast families: every pair (first minus later), each level minus the
            first, each level minus the one before, orthogonal polynomials (integer
            coefficients, equally spaced levels).
        adjust : {"tukey", "dunnettx", "holm", "bonferroni", "none"}, optional
            Multiplicity adjustment of p-values and intervals; default emmeans' for the method
            (``tukey``, ``dunnettx``, ``holm`` for ``consec`` where emmeans uses ``mvt``,
            ``none``). ``tukey`` is for ``pairwise`` only.

        Returns
        -------
        Contrasts
            ``to_frame()``: ``contrast``, the ``by`` predictors, ``estimate, se, df,
            statistic, p_value, ci_low, ci_high``.
        """
        if method not in DEFAULT_ADJUST:
            raise InvalidParameterError(
                "the `method` parameter of MarginalMeans.contrasts must be one of "
                f"{list(DEFAULT_ADJUST)}; got {method!r}"
            )
        adjust = DEFAULT_ADJUST[method] if adjust is None else adjust
        if adjust == "mvt":
            raise InvalidParameterError(
                "the `adjust` parameter of MarginalMeans.contrasts: 'mvt' (emmeans' multivariate "
                "t, integrated by randomized quasi-Monte Carlo) is not offered because its "
                "numbers cannot be reproduced; use 'holm', 'bonferroni' or 'none'"
            )
        if adjust not in ADJUSTMENTS:
            raise InvalidParameterError(
                "the `adjust` parameter of MarginalMeans.contrasts must be one of "
                f"{list(ADJUSTMENTS)}; got {adjust!r}"
            )
        if adjust == "tukey" and method != "pairwise":
            raise InvalidParameterError(
                "the `adjust` parameter of MarginalMeans.contrasts: 'tukey' is for one set of "
                f"pairwise comparisons; with method={method!r} use 'holm', 'bonferroni' or "
                "'none'"
            )
        return _contrasts(self, method, adjust)


@dataclass(frozen=True, repr=False)
class Contrasts(Result):
    """Contrasts of estimated marginal means.

    Attributes
    ----------
    table : pandas.DataFrame
        ``contrast``, the ``by`` predictors, ``estimate, se, df, statistic, p_value, ci_low,
        ci_high`` (``statistic`` is ``t``; p-values two-sided and adjusted per ``by`` group).
    method, adjust, ddf : str
        Contrast family, multiplicity adjustment and degrees of freedom.
    ci_level : float
        Level of the (adjusted) intervals.
    """

    table: pd.DataFrame
    method: str
    adjust: str
    ddf: str
    ci_level: float

    def _title(self) -> str:
        return f"Contrasts({self.method}, adjust={self.adjust}, {self.ddf} df)"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Contrasts", self.table)]


def _f1(df: float) -> Any:
    """Return F(1, df), which is chi-squared(1) for asymptotic (infinite) df."""
    from scipy import stats

    return stats.chi2(1) if np.isinf(df) else stats.f(1, df)


def _pdunnx(x: Any, c: int, df: Any) -> Any:
    """Return the approximate Dunnett distribution function (``dunnettx``) at ``|t|``."""
    from scipy import stats

    w = (c - 1) / c
    k = (1 + math.sqrt(1 + 8 * c)) / 2
    tukey = stats.studentized_range.cdf(math.sqrt(2) * x, k, df)
    sidak = _f1(df).cdf(np.square(x)) ** c
    return w * tukey + (1 - w) * sidak


def _qdunnx(p: float, c: int, df: float) -> float:
    """Return the quantile of :func:`_pdunnx`: Brent's root between Tukey and Sidak bounds.

    As emmeans: the Tukey bound when the bounds are within 5e-4 or do not bracket a root,
    and the root to 5e-4 (its ``uniroot`` tolerance) otherwise.
    """
    from scipy import optimize, stats

    k = (1 + math.sqrt(1 + 8 * c)) / 2
    xtuk = float(stats.studentized_range.ppf(p, k, df)) / math.sqrt(2)
    xsid = math.sqrt(float(_f1(df).ppf(p ** (1 / c))))
    if abs(xtuk - xsid) < 5e-4 or xtuk >= xsid:
        return xtuk
    f = lambda x: float(_pdunnx(x, c, df)) - p  # noqa: E731
    if f(xtuk) * f(xsid) > 0:
        return xtuk
    return float(optimize.brentq(f, xtuk, xsid, xtol=5e-4))


def _holm(p: np.ndarray) -> np.ndarray:
    order = np.argsort(p)
    m = len(p)
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def _adjusted(
    t: np.ndarray, df: np.ndarray, adjust: str, n_means: int, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Return adjusted two-sided p-values and interval multipliers of one family."""
    c = len(t)
    adjust = "none" if c == 1 else adjust
    p = 2.0 * special.stdtr(df, -np.abs(t))
    if adjust == "none":
        return p, special.stdtrit(df, 0.5 + level / 2.0)
    if adjust in ("bonferroni", "holm"):
        q = special.stdtrit(df, 1.0 - (1.0 - level) / c / 2.0)
        return (np.minimum(c * p, 1.0) if adjust == "bonferroni" else _holm(p)), q
    if adjust == "tukey":
        from scipy import stats

        p = stats.studentized_range.sf(math.sqrt(2) * np.abs(t), n_means, df)
        unique, where = np.unique(df, return_inverse=True)  # the quantile is slow: once per df
        q = stats.studentized_range.ppf(level, n_means, unique)[where] / math.sqrt(2)
        return np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    p = 1.0 - np.array([_pdunnx(abs(ti), c, di) for ti, di in zip(t, df, strict=True)])
    unique, where = np.unique(df, return_inverse=True)
    q = np.array([_qdunnx(level, c, di) for di in unique])[where]
    return p, q


def _contrasts(means: MarginalMeans, method: str, adjust: str) -> Contrasts:
    table = means.table
    if means.by:
        keys = list(zip(*[table[b].tolist() for b in means.by], strict=True))
        groups: dict[Any, list[int]] = {}
        for i, key in enumerate(keys):
            groups.setdefault(key, []).append(i)
    else:
        groups = {(): list(range(len(table)))}
    frames = []
    for key, rows in groups.items():
        C, names = contrast_matrix(method, level_labels(means.table, means.specs, rows))
        L = C @ means._linfct[rows]
        est, se, df = means._inference.estimate(L)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = est / se
        p, q = _adjusted(t, df, adjust, len(rows), means.ci_level)
        columns: dict[str, Any] = {"contrast": names}
        for name, value in zip(means.by, key, strict=True):
            columns[name] = [value] * len(names)
        columns.update(
            {
                "estimate": est,
                "se": se,
                "df": df,
                "statistic": t,
                "p_value": p,
                "ci_low": est - q * se,
                "ci_high": est + q * se,
            }
        )
        frames.append(pd.DataFrame(columns))
    return Contrasts(
        table=pd.concat(frames, ignore_index=True),
        method=method,
        adjust=adjust,
        ddf=means.ddf,
        ci_level=means.ci_level,
    )
