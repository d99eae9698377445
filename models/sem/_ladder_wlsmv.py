"""The invariance ladder of ordered items by WLSMV (:func:`wlsmv_ladder`).

The sample statistics (thresholds, polychoric correlations, their asymptotic covariance) are
computed once (:func:`models.sem._ordinal_stats.ordinal_sample_stats`) and every model is
fitted to them (:func:`models.sem._wlsmv.fit_wlsmv`): configural, thresholds, metric,
scalar and strict as ``semTools::measEq.syntax(ID.cat = "Wu.Estabrook.2016")``. Consecutive
models are compared by lavaan's scaled and shifted difference test (Satorra, 2000) and by the
changes of the scaled CFI and RMSEA. At the first rejected step the restrictions it added are
score-tested (the equalities of thresholds and loadings as ``lavTestScore``; the intercepts
fixed at zero and residual variances fixed at one as the same test of releasing a fixed
parameter), the worst is freed, the model refitted, and so on until the step holds or nothing
is left to free (Byrne, Shavelson & Muthen, 1989).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from models._errors import ConvergenceWarning, InvalidParameterError
from models.sem._invariance_result import (
    FIT_COLUMNS,
    PARAMETER_COLUMNS,
    SCORE_COLUMNS,
    InvarianceResult,
    judge_steps,
    latent_table,
    negative_variances,
    step_holds,
    z_table,
)
from models.sem._ordinal_stats import ordinal_sample_stats, sparse_categories
from models.sem._wlsmv import WLSMVFit, fit_wlsmv
from models.sem._wlsmv_compare import wlsmv_difference
from models.sem._wlsmv_spec import (
    LEVELS,
    STEP_KIND,
    OrdinalModel,
    build_ordinal_spec,
    entry_label,
)

FUNC = "measurement_invariance"

_NUMBERS = [
    c
    for c in FIT_COLUMNS
    if c not in ("model", "level", "freed", "estimator", "n", "npar", "decision", "converged")
]


# -- the data ------------------------------------------------------------------------------
def ordinal_frame(y: np.ndarray, items: list[str], waves: list[Any]) -> pd.DataFrame:
    """Return the answers as ``{item}.{wave}`` columns, refusing what WLSMV cannot fit.

    An answer that is not an integer code, an item with one category only, and a category of
    an item chosen at some wave but by nobody at another (its thresholds could not be held
    equal across waves) are refused, the last naming every item, wave and category.
    """
    names = [f"{item}.{wave}" for wave in waves for item in items]
    frame = pd.DataFrame(y, columns=names)
    wrong = ~np.isnan(y) & (y != np.round(y))
    if wrong.any():
        bad = sorted({names[j] for j in np.flatnonzero(wrong.any(axis=0))})
        raise InvalidParameterError(
            f"{FUNC} with estimator='WLSMV' needs integer-coded ordered answers; {bad} hold "
            f"other values (e.g. {float(y[wrong][0])!r})"
        )
    p = len(items)
    empty: list[str] = []
    for i, item in enumerate(items):
        columns = names[i::p]
        values = frame[columns].to_numpy()
        seen = np.unique(values[~np.isnan(values)])
        if seen.size < 2:
            raise InvalidParameterError(
                f"{FUNC}: item {item!r} has {seen.size} answer categor"
                f"{'y' if seen.size == 1 else 'ies'} over all waves; an ordered item needs two"
            )
        for column, category, _count in sparse_categories(
            frame[columns], categories=seen.astype(int).tolist()
        ):
            wave = waves[names.index(column) // p]
            empty.append(f"item {item!r} at wave {wave}: nobody chose {category}")
    if empty:
        raise InvalidParameterError(
            f"{FUNC} with estimator='WLSMV' needs every answer category of an item at every "
            f"wave (its thresholds are held equal across waves); {'; '.join(empty)}. Collapse "
            "the categories (merge an empty one with its neighbour at every wave) and fit again"
        )
    return frame


# -- one model -----------------------------------------------------------------------------
def _fit(stats: Any, p: int, n_waves: int, level: str, freed: tuple = ()) -> WLSMVFit | None:
    """Fit one model; None when its estimation breaks down numerically."""
    try:
        return fit_wlsmv(stats, n_items=p, n_waves=n_waves, level=level, freed=freed)
    except np.linalg.LinAlgError:
        return None


def _fit_row(fit: WLSMVFit | None, model: str, level: str, freed: str, n: int) -> dict:
    row: dict[str, Any] = {
        "model": model,
        "level": level,
        "freed": freed,
        "estimator": "WLSMV",
        "n": n,
        "converged": fit is not None and fit.converged,
    }
    if not row["converged"]:
        return row | dict.fromkeys(_NUMBERS, np.nan)
    assert fit is not None
    nan = float("nan")
    return row | {
        "npar": fit.npar,
        "chisq": fit.chisq_scaled,
        "df": fit.df,
        "p_value": fit.p_value_scaled,
        "chisq_ml": nan,
        "p_value_ml": nan,
        "scaling_factor": fit.scaling_factor,
        "cfi": fit.cfi_scaled,
        "tli": fit.tli_scaled,
        "rmsea": fit.rmsea_scaled,
        "rmsea_ci_low": fit.rmsea_scaled_ci_low,
        "rmsea_ci_high": fit.rmsea_scaled_ci_high,
        "srmr": fit.srmr,
        "loglik": nan,
        "aic": nan,
        "bic": nan,
        "chisq_scaled": fit.chisq_scaled,
        "df_scaled": fit.df_scaled,
        "p_value_scaled": fit.p_value_scaled,
        "cfi_scaled": fit.cfi_scaled,
        "tli_scaled": fit.tli_scaled,
        "rmsea_scaled": fit.rmsea_scaled,
        "cfi_robust": fit.cfi_robust,
        "tli_robust": fit.tli_robust,
        "rmsea_robust": fit.rmsea_robust,
        "lrt_chisq": nan,
        "lrt_df": nan,
        "lrt_p": nan,
    }


def _set_difference(row: dict, fit: WLSMVFit | None, prev: WLSMVFit | None) -> None:
    """Put the scaled difference test of ``fit`` against ``prev`` in ``row`` (converged only)."""
    if row["converged"] and fit is not None and prev is not None and prev.converged:
        test = wlsmv_difference(fit, prev)
        row.update(delta_chisq=test.chisq_diff, delta_df=test.df_diff, delta_p=test.p_value)


def _labels(items: list[str], waves: list[Any], factor: str) -> tuple[list[str], list[str]]:
    names = [f"{item}.{wave}" for wave in waves for item in items]
    return names, [f"{factor}.{wave}" for wave in waves]


def _parameters(
    fit: WLSMVFit, model: str, items: list[str], waves: list[Any], factor: str, ci_level: float
) -> pd.DataFrame:
    """Every free and fixed entry of ``fit`` with its estimate, SE, z test and interval."""
    spec = fit.spec
    names, factors = _labels(items, waves, factor)
    se_free = np.sqrt(np.clip(np.diag(fit.cov), 0.0, None))
    rows = [(e, float(fit.estimates[a]), float(se_free[a]), True) for e, a in spec.entries.items()]
    rows += [(e, float(v), float("nan"), False) for e, v in spec.fixed.items()]
    labels = [entry_label(r[0], names, factors, spec.n_items) for r in rows]
    by_item = ("tau", "lambda", "nu", "theta", "theta_cov")
    table = pd.DataFrame(
        {
            "model": model,
            "lhs": [label[0] for label in labels],
            "op": [label[1] for label in labels],
            "rhs": [label[2] for label in labels],
            "kind": [r[0][0] for r in rows],
            "item": [items[r[0][1]] if r[0][0] in by_item else None for r in rows],
            "wave": [waves[r[0][2]] if r[0][0] in by_item else waves[r[0][1]] for r in rows],
            "free": [r[3] for r in rows],
        }
    )
    numbers = z_table(np.array([r[1] for r in rows]), np.array([r[2] for r in rows]), ci_level)
    for key, values in numbers.items():
        table[key] = values
    return table


# -- score tests of the rejected step ------------------------------------------------------
def _candidates(fit: WLSMVFit, step: str) -> list[tuple]:
    """Return the restrictions ``step`` added that ``fit`` still holds (releasable entries)."""
    spec, kind = fit.spec, STEP_KIND[step]
    if kind in ("tau", "lambda"):
        return [later for later, _first in spec.constraints if later[0] == kind]
    return [e for e in spec.fixed if e[0] == kind and e[2] > 0 and e not in spec.freed]


def release_score(fit: WLSMVFit, entry: tuple) -> tuple[float, bool]:
    """Return the score statistic of releasing ``entry`` and whether the release is identified.

    In the model where ``entry`` has its own parameter, at ``fit``'s estimates (the released
    entry at its constrained or fixed value), with the gradient ``g = -J'W r`` and the
    information ``I = J'WJ``, the statistic is ``(N - 1)^2 / N  g' I^+ g`` on one degree of
    freedom: lavaan's univariate ``lavTestScore`` for an equality, and the same test of a
    fixed value (an intercept fixed at 0, a residual variance fixed at 1).
    """
    spec = fit.spec
    wider = build_ordinal_spec(
        spec.n_items,
        spec.n_waves,
        spec.n_thresholds,
        spec.level,
        (*spec.freed, entry),
        spec.parameterization,
    )
    theta = np.empty(wider.n_params)
    for e, a in wider.entries.items():
        theta[a] = fit.estimates[spec.entries[e]] if e in spec.entries else spec.fixed[e]
    implied = OrdinalModel(wider).implied(theta)
    wj = fit.weight[:, None] * implied.jacobian
    grad = -wj.T @ fit.residual
    info = implied.jacobian.T @ wj
    stat = (fit.n - 1) ** 2 / fit.n * float(grad @ np.linalg.pinv(info) @ grad)
    return stat, bool(np.linalg.matrix_rank(info) == wider.n_params)


def _score_rows(
    fit: WLSMVFit, step: str, model: str, options: dict
) -> list[tuple[tuple, float, bool, dict]]:
    """Score-test every restriction of ``step`` still held in ``fit``, largest first."""
    items, waves = options["items"], options["waves"]
    names, factors = _labels(items, waves, options["factor"])
    fixed_at = {"nu": "fixed at 0", "theta": "fixed at 1"}
    out = []
    for entry in _candidates(fit, step):
        stat, identified = release_score(fit, entry)
        lhs, op, rhs = entry_label(entry, names, factors, len(items))
        label = f"{lhs} {op} {rhs}".strip()
        held = fixed_at.get(entry[0], "equal")
        record = {
            "model": model,
            "constraint": f"{label} {held} as at wave {waves[0]}",
            "lhs": lhs,
            "op": op,
            "rhs": rhs,
            "item": items[entry[1]],
            "wave": waves[entry[2]],
            "statistic": stat,
            "df": 1,
            "p_value": float(special.chdtrc(1, stat)),
        }
        out.append((entry, stat, identified, record))
    out.sort(key=lambda row: -row[1])
    return out


def _release_worst(
    stats: Any, p: int, n_waves: int, level: str, freed: list, scored: list
) -> tuple[tuple | None, WLSMVFit | None]:
    """Free the largest-scoring restriction whose release is identified; refit with it.

    Returns the restriction and the refitted model, or ``(None, None)`` when every release
    leaves the model unidentified.
    """
    for entry, _stat, identified, _record in scored:
        if not identified:
            continue
        try:
            return entry, _fit(stats, p, n_waves, level, (*freed, entry))
        except InvalidParameterError:  # identified at the old estimates, not at the new
            continue
    return None, None


def _partial_search(
    stats: Any,
    fits: dict[str, WLSMVFit | None],
    rows: list[dict],
    rejected: str,
    options: dict,
) -> tuple[list[dict], list[pd.DataFrame], list[dict], str | None, str]:
    """Free the rejected step's worst restriction, refit, repeat; say why the search stopped.

    Returns the partial models' fit rows, parameter tables and score-test records, the
    partial model that holds (None when none does) and the reason the search stopped.
    """
    items, waves, factor = options["items"], options["waves"], options["factor"]
    p, n_waves = len(items), len(waves)
    names, factors = _labels(items, waves, factor)
    below = LEVELS[LEVELS.index(rejected) - 1]
    below_row, below_fit = rows[LEVELS.index(below)], fits[below]
    current = fits[rejected]
    assert current is not None
    model = rejected
    freed: list[tuple] = []
    out_rows: list[dict] = []
    params: list[pd.DataFrame] = []
    records: list[dict] = []
    while True:
        scored = _score_rows(current, rejected, model, options)
        records.extend(r[3] for r in scored)
        if not scored:
            return out_rows, params, records, None, f"no {rejected} restriction is left to free"
        chosen, fit = _release_worst(stats, p, n_waves, rejected, freed, scored)
        if chosen is None:
            reason = (
                f"none of the {len(scored)} remaining {rejected} restrictions can be freed on its "
                "own (the model would not be identified)"
            )
            return out_rows, params, records, None, reason
        freed.append(chosen)
        model = f"{rejected} (partial {len(freed)})"
        text = "; ".join(" ".join(entry_label(e, names, factors, p)).strip() for e in freed)
        row = _fit_row(fit, model, rejected, text, stats.n)
        _set_difference(row, fit, below_fit)
        ok = step_holds(row, below_row, options["delta_cfi"], options["delta_rmsea"])
        out_rows.append(row)
        if not row["converged"]:
            row["decision"] = "did not converge"
            return out_rows, params, records, None, f"the model {model} did not converge"
        assert fit is not None
        params.append(_parameters(fit, model, items, waves, factor, options["ci_level"]))
        row["decision"] = "holds" if ok else "rejected"
        if ok:
            return out_rows, params, records, model, f"{model} holds"
        current = fit


def _estimator_note(missing: str, n_excluded: int) -> str:
    if missing == "pairwise":
        rule = "pairwise: each threshold and polychoric correlation from the answers given"
    else:
        rule = f"listwise deletion, {n_excluded} incomplete participant(s) left out"
    return (
        f"WLSMV (thresholds and polychoric correlations, {rule}; diagonally weighted least "
        "squares with robust standard errors; the scaled and shifted chi-square of "
        "Asparouhov & Muthen, 2010; Satorra 2000 scaled differences; theta "
        "parameterisation identified as Wu & Estabrook, 2016)"
    )


def wlsmv_ladder(y: np.ndarray, options: dict[str, Any]) -> InvarianceResult:
    """Fit and judge the WLSMV ladder of the wide ordered answers ``y``.

    ``options`` holds ``items, waves, factor, nan_policy, delta_cfi, delta_rmsea, ci_level,
    scope`` and the ``meta`` entries known before the fit.
    """
    items, waves, factor = options["items"], options["waves"], options["factor"]
    p, n_waves = len(items), len(waves)
    missing = "pairwise" if options["nan_policy"] == "pairwise" else "listwise"
    # the sample statistics once; every model and partial model is fitted to them
    stats = ordinal_sample_stats(ordinal_frame(y, items, waves), missing=missing)
    fits = {level: _fit(stats, p, n_waves, level) for level in LEVELS}
    rows = [_fit_row(fits[level], level, level, "", stats.n) for level in LEVELS]
    for i in range(1, len(LEVELS)):
        _set_difference(rows[i], fits[LEVELS[i]], fits[LEVELS[i - 1]])
    converged = [row["converged"] for row in rows]
    rejected, level_held = judge_steps(
        rows, LEVELS, converged, options["delta_cfi"], options["delta_rmsea"]
    )
    param_tables = [
        _parameters(fits[level], level, items, waves, factor, options["ci_level"])
        for level in LEVELS
        if fits[level] is not None and fits[level].converged
    ]
    notes: list[str] = []
    records: list[dict] = []
    search: dict[str, Any] = {}
    if rejected is not None and rows[LEVELS.index(rejected)]["decision"] == "rejected":
        found, params, records, held, reason = _partial_search(stats, fits, rows, rejected, options)
        rows.extend(found)
        param_tables.extend(params)
        if held is not None:
            level_held = held
        freed = found[-1]["freed"] if found else ""
        search = {"step": rejected, "models": len(found), "freed": freed, "stopped": reason}
        notes.append(
            f"Partial {rejected} invariance: the restriction with the largest score test "
            f"was freed and the model refitted, one at a time ({len(found)} model(s)"
            + (f"; freed {freed}" if freed else "")
            + f"); the search stopped because {reason}."
        )
    fit_table = pd.DataFrame(rows).reindex(columns=FIT_COLUMNS)
    for column in ("npar", "df", "lrt_df", "delta_df"):
        fit_table[column] = fit_table[column].astype("Int64")
    parameters = (
        pd.concat(param_tables, ignore_index=True)
        if param_tables
        else pd.DataFrame(columns=PARAMETER_COLUMNS)
    )
    notes.extend(_warn_about(fit_table, parameters))
    level = {row["model"]: row["level"] for row in rows}.get(level_held, "none")
    meta = {
        **options["meta"],
        "estimator_note": f"{_estimator_note(missing, options['meta']['n_excluded'])}. "
        + options["scope"],
        "missing": missing,
        "scaled": True,
        "n_used": int(stats.n),
        "n_incomplete": int(np.isnan(y).any(axis=1).sum()),
        "partial_search": search,
        "notes": notes,
    }
    return InvarianceResult(
        fits=fit_table,
        parameters=parameters,
        latent=latent_table(parameters, level_held, level),
        score_tests=pd.DataFrame(records, columns=SCORE_COLUMNS),
        level_held=level_held,
        meta=meta,
    )


def _warn_about(fit_table: pd.DataFrame, parameters: pd.DataFrame) -> list[str]:
    """Warn about models that did not converge and negative variances; return the latter."""
    if not fit_table["converged"].all():
        bad = ", ".join(fit_table.loc[~fit_table["converged"], "model"])
        warnings.warn(
            f"{FUNC}: the model(s) {bad} did not converge; no numbers are given for them and "
            "no decision is read from them",
            ConvergenceWarning,
            stacklevel=5,
        )
    return [] if parameters.empty else negative_variances(parameters, stacklevel=6)
