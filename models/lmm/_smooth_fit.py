"""Fitting a linear mixed model with smooth terms, as gamm4 fits it.

:func:`fit_smooth_model` builds each smooth (:func:`models.lmm._smooth.construct_smooth`; one
per level of a ``by`` factor; a factor smooth by
:func:`models.lmm._smooth_fs.construct_factor_smooth`), hands the mixed-model engine one block
of independent random effects per smooth (three per factor smooth) and the smooths' null-space
columns as fixed effects, fits by REML (or ML),
and sets the model's attributes from the estimates as ``fit$mer`` and ``fit$gam`` of gamm4
report them (:func:`models.lmm._smooth.smooth_fit`, :mod:`models.lmm._smooth_summary`).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from models._errors import FormulaError, ModelsError
from models._version import __version__
from models.lmm._analytic import SINGULAR_TOL
from models.lmm._smooth import (
    SmoothFit,
    SmoothPart,
    construct_smooth,
    engine_columns,
    smooth_fit,
)
from models.lmm._smooth_fs import check_levels, construct_factor_smooth
from models.lmm._smooth_spec import (
    SmoothTerm,
    by_column,
    by_levels,
    check_by_main_effect,
    smooth_column,
)

_PLACEHOLDER = re.compile(r"Grouping factor '(s\d+|smooth)'")


def _by_row(design, by: str, level) -> np.ndarray | None:
    """Return the parametric row of a ``by`` level (intercept and main effect), or None."""
    try:
        new = design.transform(pd.DataFrame({by: [level]}), random=False)
    except (ModelsError, KeyError, ValueError, TypeError):
        return None
    return new.X.to_numpy(dtype=float)[0]


def smooth_parts(design, used: pd.DataFrame, terms: tuple[SmoothTerm, ...]) -> list[SmoothPart]:
    """Construct every smooth on the rows of ``design``: one part per smooth and by level."""
    intercept = np.ones(1) if list(design.X.columns) == ["Intercept"] else None
    parts = []
    for term in terms:
        frame = used.loc[design.rows]
        x = frame[term.column].to_numpy(dtype=float)
        smooth_column(pd.DataFrame({term.column: x}), term)
        if term.factor is not None:
            groups = frame[term.factor]
            smooth, X = construct_factor_smooth(x, groups, by_levels(groups), term)
            check_levels(smooth, len(x))
            parts.append(SmoothPart(term.label, smooth, None, X, None))
            continue
        smooth, X = construct_smooth(x, term)
        if term.by is None:
            parts.append(SmoothPart(term.label, smooth, None, X, intercept))
            continue
        by = frame[term.by]
        for level in by_levels(by):
            inside = (by == level).to_numpy()
            label = f"{term.label}:{term.by}{level}"
            parts.append(
                SmoothPart(
                    label, smooth, level, X * inside[:, None], _by_row(design, term.by, level)
                )
            )
    return parts


def fit_smooth_model(
    model, data: pd.DataFrame, rest: str, terms: tuple[SmoothTerm, ...], start: float
):
    """Fit ``model`` (a LinearMixedModel whose formula holds ``terms``) by REML or ML.

    The non-smooth part is the formula ``rest``; each smooth (each level of a ``by`` factor)
    adds one fixed column (its null space) and one block of ``k - 2`` independent random
    effects; a factor smooth adds three blocks and no fixed column. Sets the attributes listed
    in :class:`models.lmm.LinearMixedModel` for a smooth model and returns ``model``.
    """
    import time

    import models.lmm.engine as engine
    from models.formula import build_design, parse_formula

    for term in terms:
        smooth_column(data, term)
        if term.by is not None:
            by_column(data, term)
        if term.factor is not None:
            by_column(data, term, term.factor)
    spec = parse_formula(rest)
    for term in terms:
        if term.by is not None:
            check_by_main_effect(term, spec.fixed, model.formula)
    needed = list(
        dict.fromkeys([t.column for t in terms] + [g for t in terms for g in (t.by, t.factor) if g])
    )
    used = data[data[needed].notna().all(axis=1)]
    design = build_design(spec, used)
    if not design.random and all(t.factor is None for t in terms):
        raise FormulaError(
            f"{model.formula!r} has no random-effects term besides the smooth; add one, "
            'e.g. + (1 | group), or a curve per group, s(x, group, bs="fs", xt="cr")'
        )
    parts = smooth_parts(design, used, terms)
    dense, fixed, _ = engine_columns(parts)
    inp = engine.engine_input(design, dense=dense, fixed=fixed if fixed.shape[1] else None)
    ctrl = engine.control(optimizer=model.optimizer, max_evals=model.max_evals, tol=model.tol)
    try:
        result, messages, evals = engine.fit(inp, reml=bool(model.reml), ctrl=ctrl)
    except engine.EngineFailure as err:
        from models._errors import ConvergenceError

        raise ConvergenceError(
            f"LinearMixedModel.fit could not fit {model.formula!r}: {err}"
        ) from err
    # the placeholder factors of the smooths' blocks are not groups: no advice on their levels
    messages = [m for m in messages if not _PLACEHOLDER.search(m)]
    theta = np.asarray(result.theta, dtype=float)
    sigma = float(result.sigma)
    Ts, offset = [], 0
    for k in inp.block_sizes[: len(design.random)]:
        rows, cols = np.tril_indices(k)
        order = np.lexsort((rows, cols))
        T = np.zeros((k, k))
        T[rows[order], cols[order]] = theta[offset : offset + len(rows)]
        Ts.append(T)
        offset += len(rows)
    fit = smooth_fit(design, parts, Ts, np.abs(theta[offset:]), sigma)
    _set_smooth_attributes(model, design, result, messages, evals, fit, Ts, fixed.shape[1])
    model.n_dropped_ = int(design.n_dropped + len(data) - len(used))
    model._smooth_data = used.loc[design.rows, needed]
    model._smooth_parts = parts  # the smooths' columns, for the test of linearity
    _set_smooth_tables(model, fit, design, Ts, sigma)
    model.seconds_ = float(time.perf_counter() - start)
    model.meta_ = {
        "package_version": __version__,
        "engine": "lmm",
        "backend": "mixedlm",
        "params": model.get_params(),
        "n_used": model.n_obs_,
        "n_excluded": model.n_dropped_,
        "nfev": model.nfev_,
        "optimizer": str(result.optimizer),
        "smooths": [s.label for s in fit.smooths],
    }
    return model


def _set_smooth_attributes(
    model, design, result, messages, evals, fit: SmoothFit, Ts, n_null: int
) -> None:
    """Set the fit statistics of a smooth model, as ``fit$mer`` of gamm4 reports them."""
    p = design.X.shape[1]
    theta = np.asarray(result.theta, dtype=float)
    model.design_ = design
    model.engine_result_ = result
    model.n_obs_ = int(len(design.rows))
    model.groups_ = {b.group: int(b.n_levels) for b in design.random}
    for part in fit.smooths:  # a factor smooth's factor groups its random effects
        if part.is_factor_smooth:
            model.groups_.setdefault(part.smooth.term.factor, len(part.smooth.levels))
    model.theta_ = theta
    model.sigma_ = float(result.sigma)
    model.beta_ = pd.Series(
        np.asarray(result.beta, dtype=float)[:p], index=list(design.X.columns), name="estimate"
    )
    model.loglik_ = float(result.logLik().value)
    model.deviance_ = -2.0 * model.loglik_
    model.reml_criterion_ = model.deviance_ if model.reml else float("nan")
    # the smooths' null spaces are fixed columns and their variances covariance parameters
    model.npar_ = int(p + n_null + len(theta) + 1)
    model.aic_ = float(model.deviance_ + 2 * model.npar_)
    model.bic_ = float(model.deviance_ + model.npar_ * np.log(model.n_obs_))
    model.converged_ = bool(result.converged)
    model.convergence_message_ = " | ".join([str(result.message), *messages])
    n_smooth = sum(len(s.variances) for s in fit.smooths)
    model.singular_ = bool(
        any(np.any(np.diag(T) < SINGULAR_TOL) for T in Ts)
        or np.any(np.abs(theta[len(theta) - n_smooth :]) < SINGULAR_TOL)
    )
    model.nfev_ = int(evals)
    model.smooth_ = fit
    model._fitted_values = np.asarray(result.fitted(), dtype=float)


def _set_smooth_tables(model, fit: SmoothFit, design, Ts, sigma: float) -> None:
    """Set ``random_``, ``fixed_`` and ``vcov_`` as gamm4 gives them, and ``smooth_table_``."""
    from models._varcorr import random_tables
    from models.lmm._smooth_summary import smooth_table

    table, corr = random_tables(design.random, Ts, sigma, residual=True)
    labels = [name for s in fit.smooths for name in s.names]
    variances = np.array([v for s in fit.smooths for v in s.variances])
    rows = pd.DataFrame(
        {
            "group": ["smooth"] * len(labels),
            "term": labels,
            "variance": variances,
            "sd": np.sqrt(variances),
        }
    )
    table = pd.concat([table.iloc[:-1], rows, table.iloc[-1:]], ignore_index=True)
    model._lazy = {"random_": (table, corr)}
    p = len(fit.fixed_names)
    names = list(fit.fixed_names)
    res_df = model.n_obs_ - float(np.sum(fit.edf_coef))
    cov = fit.Vp[:p, :p]
    model._lazy["fixed_"] = model._fixed_table(fit.coef[:p], cov, np.full(p, res_df), names)
    model._lazy["vcov_"] = pd.DataFrame(cov, index=names, columns=names)
    model.smooth_table_ = smooth_table(fit, model.n_obs_, sigma2=sigma**2)
