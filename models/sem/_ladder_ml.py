"""The invariance ladder of continuous items by ML or MLR (:func:`ml_ladder`).

The four levels of :mod:`models.sem._spec` fitted by :func:`models.sem._fit.fit_level`,
consecutive models compared by the likelihood-ratio test (MLR: the Satorra-Bentler 2001
scaled difference) and the cited cut-offs, the score tests of the first rejected step and the
partial model that frees its worst constraint.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from models._errors import ConvergenceWarning
from models.sem._fiml import FIMLProblem, h1_trace_fiml, saturated_fit
from models.sem._fit import LevelFit, cfi, fit_level
from models.sem._invariance_result import (
    FIT_COLUMNS,
    SCORE_COLUMNS,
    InvarianceResult,
    judge_steps,
    latent_table,
    negative_variances,
    step_holds,
    z_table,
)
from models.sem._ml import MLProblem, h1_trace
from models.sem._spec import LEVELS, STEP_KIND, build_spec

FUNC = "measurement_invariance"


def _names(entry: tuple, items: list[str], waves: list[Any], factor: str) -> tuple[str, str, str]:
    kind = entry[0]

    def ov(i: int, t: int) -> str:
        return f"{items[i]}.{waves[t]}"

    def lv(t: int) -> str:
        return f"{factor}.{waves[t]}"

    if kind == "lambda":
        return lv(entry[2]), "=~", ov(entry[1], entry[2])
    if kind == "nu":
        return ov(entry[1], entry[2]), "~1", ""
    if kind == "theta":
        return ov(entry[1], entry[2]), "~~", ov(entry[1], entry[2])
    if kind == "theta_cov":
        return ov(entry[1], entry[2]), "~~", ov(entry[1], entry[3])
    if kind == "psi":
        return lv(entry[1]), "~~", lv(entry[1])
    if kind == "psi_cov":
        return lv(entry[1]), "~~", lv(entry[2])
    return lv(entry[1]), "~1", ""


def _parameters(
    fit: LevelFit, model: str, items: list[str], waves: list[Any], factor: str, ci_level: float
) -> pd.DataFrame:
    spec = fit.spec
    se_free = np.sqrt(np.clip(np.diag(fit.cov), 0.0, None))
    rows = []
    for entry, a in spec.entries.items():
        rows.append((entry, float(fit.theta[a]), float(se_free[a]), True))
    for entry, value in spec.fixed.items():
        rows.append((entry, float(value), float("nan"), False))
    table = pd.DataFrame(
        {
            "model": model,
            "lhs": [_names(r[0], items, waves, factor)[0] for r in rows],
            "op": [_names(r[0], items, waves, factor)[1] for r in rows],
            "rhs": [_names(r[0], items, waves, factor)[2] for r in rows],
            "kind": [r[0][0] for r in rows],
            "item": [
                items[r[0][1]] if r[0][0] in STEP_KIND.values() or r[0][0] == "theta_cov" else None
                for r in rows
            ],
            "wave": [
                waves[r[0][2]]
                if r[0][0] in ("lambda", "nu", "theta", "theta_cov")
                else waves[r[0][1]]
                for r in rows
            ],
            "free": [r[3] for r in rows],
        }
    )
    numbers = z_table(np.array([r[1] for r in rows]), np.array([r[2] for r in rows]), ci_level)
    for key, values in numbers.items():
        table[key] = values
    return table


def _score_tests(fit: LevelFit, step: str) -> list[tuple[tuple, float]]:
    """Return (constraint, statistic) for each equality constraint added at ``step``.

    The statistic is lavaan's univariate ``lavTestScore``: with the constraint released
    (its entry given its own parameter, started at the constrained estimate), ``N g' I^-1 g``
    with ``g`` the gradient of the fit function and ``I`` the unit expected information
    (summed over the missing-data patterns under full-information ML). Under MLR this is the
    ordinary score test, as lavaan falls back to.
    """
    spec = fit.spec
    assert fit.problem is not None
    y = fit.problem.y
    out = []
    for constraint in spec.constraints:
        if constraint[0] != STEP_KIND[step]:
            continue
        ext = build_spec(spec.n_items, spec.n_waves, spec.level, (*spec.freed, constraint))
        theta = np.empty(ext.n_params)
        for entry, a in ext.entries.items():
            theta[a] = fit.theta[spec.entries[entry]]
        missing = np.isnan(y).any()
        problem = FIMLProblem(ext, y) if missing else MLProblem(ext, y)
        mom = problem.moments(theta)
        grad = problem.gradient(theta, mom)
        info = problem.expected_information(mom)
        stat = float(fit.n * grad @ np.linalg.solve(info, grad))
        out.append((constraint, stat))
    return out


def _compare(fit: LevelFit, prev: LevelFit, scaled: bool) -> tuple[float, int, float]:
    """Return the likelihood-ratio (ML) or Satorra-Bentler (2001) scaled difference test."""
    ddf = fit.df - prev.df
    diff = fit.chisq - prev.chisq
    if scaled:
        cd = (fit.df * fit.scaling - prev.df * prev.scaling) / ddf
        diff = diff / cd
    return diff, ddf, float(special.chdtrc(ddf, diff))


def _fit_row(fit: LevelFit, model: str, level: str, freed: str) -> dict[str, Any]:
    scaled = fit.estimator == "MLR"
    idx = fit.indices(scaled=scaled)
    nan = float("nan")
    return {
        "model": model,
        "level": level,
        "freed": freed,
        "estimator": fit.estimator,
        "n": fit.n,
        "npar": fit.npar,
        "chisq": fit.chisq_scaled if scaled else fit.chisq,
        "df": fit.df,
        "p_value": fit.p_value_scaled if scaled else fit.p_value,
        "chisq_ml": fit.chisq,
        "p_value_ml": fit.p_value,
        "scaling_factor": fit.scaling,
        **idx,
        "srmr": fit.srmr,
        "loglik": fit.loglik,
        "aic": fit.aic,
        "bic": fit.bic,
        "chisq_scaled": fit.chisq_scaled if scaled else nan,
        "df_scaled": float(fit.df) if scaled else nan,
        "p_value_scaled": fit.p_value_scaled if scaled else nan,
        "cfi_scaled": idx["cfi"] if scaled else nan,
        "tli_scaled": idx["tli"] if scaled else nan,
        "rmsea_scaled": idx["rmsea"] if scaled else nan,
        **(_robust(fit) if scaled else {}),
        "converged": fit.converged,
    }


def _robust(fit: LevelFit) -> dict[str, float]:
    """Return lavaan's robust CFI, TLI and RMSEA of an MLR fit.

    With ``T`` the normal-theory statistic, ``c`` its scaling factor and ``Tb``, ``cb`` the
    baseline model's: ``CFI = 1 - max(T - c df, 0) / max(T - c df, Tb - cb dfb, 0)``
    (Brosseau-Liard & Savalei, 2014), ``TLI = 1 - (T - c df) dfb / ((Tb - cb dfb) df)`` and
    ``RMSEA = sqrt(max(T / (N df) - c / N, 0))`` (Brosseau-Liard, Savalei & Li, 2012).
    NaN under full-information ML, where lavaan 0.6-14 corrects them another way (not
    reproduced here).
    """
    t, df, c = fit.chisq, fit.df, fit.scaling
    tb, dfb, cb = fit.baseline_chisq, fit.baseline_df, fit.baseline_scaling
    if not df > 0 or isinstance(fit.problem, FIMLProblem):
        return dict.fromkeys(("cfi_robust", "tli_robust", "rmsea_robust"), float("nan"))
    return {
        "cfi_robust": cfi(t, c * df, tb, cb * dfb),
        "tli_robust": 1.0 - (t - c * df) * dfb / ((tb - cb * dfb) * df),
        "rmsea_robust": float(np.sqrt(max(t / (fit.n * df) - c / fit.n, 0.0))),
    }


def _set_difference(row: dict[str, Any], test: tuple[float, int, float]) -> None:
    row.update(lrt_chisq=test[0], lrt_df=test[1], lrt_p=test[2])
    row.update(delta_chisq=test[0], delta_df=test[1], delta_p=test[2])


def _score_table(
    tests: list, rejected: str, items: list[str], waves: list[Any], factor: str
) -> pd.DataFrame:
    """Return the score test of each equality constraint of the rejected step, largest first."""
    records = []
    for constraint, stat in tests:
        lhs, op, rhs = _names(constraint, items, waves, factor)
        records.append(
            {
                "model": rejected,
                "constraint": f"{lhs} {op} {rhs}".strip() + f" = wave {waves[0]}",
                "lhs": lhs,
                "op": op,
                "rhs": rhs,
                "item": items[constraint[1]],
                "wave": waves[constraint[2]],
                "statistic": stat,
                "df": 1,
                "p_value": float(special.chdtrc(1, stat)),
            }
        )
    return (
        pd.DataFrame(records)
        .sort_values("statistic", ascending=False, kind="stable")
        .reset_index(drop=True)
    )


def _estimator_note(estimator: str, n_incomplete: int, n: int) -> str:
    """Say how the models were estimated (``meta["estimator_note"]``, before the scope)."""
    if n_incomplete and estimator == "ML":
        return (
            f"ML with full-information ML for missing answers ({n_incomplete} of {n} "
            "participants incomplete; observed-information standard errors)"
        )
    if n_incomplete:
        return (
            f"MLR with full-information ML for missing answers ({n_incomplete} of {n} "
            "participants incomplete; Yuan-Bentler scaled chi-square, Mplus variant; "
            "Huber-White standard errors; Satorra-Bentler 2001 scaled differences)"
        )
    if estimator == "ML":
        return "ML (normal theory; expected information standard errors)"
    return (
        "MLR (Yuan-Bentler scaled chi-square, Mplus variant; Huber-White standard "
        "errors; Satorra-Bentler 2001 scaled differences)"
    )


def _partial(
    y: np.ndarray,
    fits: dict[str, LevelFit],
    rows: list[dict[str, Any]],
    rejected: str,
    options: dict[str, Any],
) -> tuple[pd.DataFrame, dict[str, Any], pd.DataFrame]:
    """Score-test the rejected step and fit the partial model that frees its worst constraint."""
    items, waves, factor = options["items"], options["waves"], options["factor"]
    scaled = options["estimator"] == "MLR"
    tests = _score_tests(fits[rejected], rejected)
    score_table = _score_table(tests, rejected, items, waves, factor)
    worst = max(tests, key=lambda pair: pair[1])[0]
    partial = fit_level(
        y,
        len(items),
        rejected,
        estimator=options["estimator"],
        freed=(worst,),
        h1=options["h1"],
        saturated=options["saturated"],
    )
    name = f"{rejected} (partial)"
    lhs, op, rhs = _names(worst, items, waves, factor)
    row = _fit_row(partial, name, rejected, f"{lhs} {op} {rhs}".strip())
    below = LEVELS[LEVELS.index(rejected) - 1]
    _set_difference(row, _compare(partial, fits[below], scaled))
    ok = step_holds(row, rows[LEVELS.index(below)], options["delta_cfi"], options["delta_rmsea"])
    row["decision"] = "holds" if ok and partial.converged else "rejected"
    params = _parameters(partial, name, items, waves, factor, options["ci_level"])
    return score_table, row, params


def ml_ladder(y: np.ndarray, options: dict[str, Any]) -> InvarianceResult:
    """Fit and judge the ML or MLR ladder of the wide answers ``y``; ``options``: the call's.

    ``options`` holds ``items, waves, factor, estimator, delta_cfi, delta_rmsea, ci_level``
    and the ``meta`` entries known before the fit.
    """
    items, waves, factor = options["items"], options["waves"], options["factor"]
    estimator, ci_level = options["estimator"], options["ci_level"]
    p = len(items)
    n = y.shape[0]
    scaled = estimator == "MLR"
    n_incomplete = int(np.isnan(y).any(axis=1).sum())
    saturated = saturated_fit(y) if n_incomplete else None
    h1 = None  # the saturated model's trace, the same for every level: computed once
    if scaled:
        h1 = h1_trace(y) if saturated is None else h1_trace_fiml(y, *saturated[:2])
    fits = {
        level: fit_level(y, p, level, estimator=estimator, h1=h1, saturated=saturated)
        for level in LEVELS
    }
    rows = [_fit_row(fits[level], level, level, "") for level in LEVELS]
    for i in range(1, len(LEVELS)):
        _set_difference(rows[i], _compare(fits[LEVELS[i]], fits[LEVELS[i - 1]], scaled))
    rejected, level_held = judge_steps(
        rows,
        LEVELS,
        [fits[level].converged for level in LEVELS],
        options["delta_cfi"],
        options["delta_rmsea"],
    )
    param_tables = [
        _parameters(fits[level], level, items, waves, factor, ci_level) for level in LEVELS
    ]
    score_table = pd.DataFrame(columns=SCORE_COLUMNS)
    if rejected is not None and rows[LEVELS.index(rejected)]["decision"] == "rejected":
        context = {**options, "h1": h1, "saturated": saturated}
        score_table, row, params = _partial(y, fits, rows, rejected, context)
        if row["decision"] == "holds":
            level_held = row["model"]
        rows.append(row)
        param_tables.append(params)

    fit_table = pd.DataFrame(rows).reindex(columns=FIT_COLUMNS)
    for column in ("lrt_df", "delta_df"):
        fit_table[column] = fit_table[column].astype("Int64")
    parameters = pd.concat(param_tables, ignore_index=True)
    notes = negative_variances(parameters)
    if not fit_table["converged"].all():
        bad = ", ".join(fit_table.loc[~fit_table["converged"], "model"])
        warnings.warn(
            f"{FUNC}: the model(s) {bad} did not converge; their numbers are not to be read",
            ConvergenceWarning,
            stacklevel=4,
        )
    held = level_held.removesuffix(" (partial)")
    meta = {
        **options["meta"],
        "estimator_note": f"{_estimator_note(estimator, n_incomplete, n)}. {options['scope']}",
        "scaled": scaled,
        "n_used": int(n),
        "n_incomplete": n_incomplete,
        "notes": notes,
    }
    return InvarianceResult(
        fits=fit_table,
        parameters=parameters,
        latent=latent_table(parameters, level_held, held),
        score_tests=score_table,
        level_held=level_held,
        meta=meta,
    )
