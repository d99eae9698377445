"""The result of the invariance ladder and its tables, shared by the ML, MLR and WLSMV ladders.

:class:`InvarianceResult` holds one scale's ladder whatever the estimator; the fits table has
one vocabulary (:data:`FIT_COLUMNS`), the ``invariance.csv`` table another
(:data:`INVARIANCE_CSV_COLUMNS`). :func:`judge_steps` applies the cited cut-offs to
consecutive models, and :func:`latent_table` reads the later waves' latent means and
variances from the parameter table of the model held.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from _empathic_base.results import Result
from models._columns import CI_HIGH, CI_LOW, ESTIMATE, P_VALUE, SE, STATISTIC
from models._errors import InvalidParameterError, SingularFitWarning

FIT_COLUMNS = [
    "model",
    "level",
    "freed",
    "estimator",
    "n",
    "npar",
    "chisq",
    "df",
    "p_value",
    "chisq_ml",
    "p_value_ml",
    "scaling_factor",
    "cfi",
    "tli",
    "rmsea",
    "rmsea_ci_low",
    "rmsea_ci_high",
    "srmr",
    "loglik",
    "aic",
    "bic",
    "chisq_scaled",
    "df_scaled",
    "p_value_scaled",
    "cfi_scaled",
    "tli_scaled",
    "rmsea_scaled",
    "cfi_robust",
    "tli_robust",
    "rmsea_robust",
    "lrt_chisq",
    "lrt_df",
    "lrt_p",
    "delta_chisq",
    "delta_df",
    "delta_p",
    "delta_cfi",
    "delta_rmsea",
    "decision",
    "converged",
]
"""Columns of :attr:`InvarianceResult.fits`, in order."""

INVARIANCE_CSV_COLUMNS = [
    "instrument",
    "scale",
    "model",
    "freed",
    "estimator",
    "n",
    "chisq",
    "df",
    "p_value",
    "cfi",
    "tli",
    "rmsea",
    "rmsea_ci_low",
    "rmsea_ci_high",
    "srmr",
    "loglik",
    "aic",
    "bic",
    "scaling_factor",
    "chisq_scaled",
    "df_scaled",
    "p_value_scaled",
    "cfi_scaled",
    "tli_scaled",
    "rmsea_scaled",
    "cfi_robust",
    "tli_robust",
    "rmsea_robust",
    "lrt_chisq",
    "lrt_df",
    "lrt_p",
    "delta_chisq",
    "delta_df",
    "delta_p",
    "delta_cfi",
    "delta_rmsea",
    "decision",
    "converged",
]
"""Columns of the ``invariance.csv`` table of one scale (:func:`invariance_tables`)."""

SCORE_COLUMNS = [
    "model",
    "constraint",
    "lhs",
    "op",
    "rhs",
    "item",
    "wave",
    "statistic",
    "df",
    "p_value",
]
"""Columns of :attr:`InvarianceResult.score_tests`, in order."""

PARAMETER_COLUMNS = [
    "model",
    "lhs",
    "op",
    "rhs",
    "kind",
    "item",
    "wave",
    "free",
    ESTIMATE,
    SE,
    STATISTIC,
    P_VALUE,
    CI_LOW,
    CI_HIGH,
]
"""Columns of :attr:`InvarianceResult.parameters`, in order."""

LATENT_COLUMNS = ["quantity", "wave", ESTIMATE, SE, STATISTIC, P_VALUE, CI_LOW, CI_HIGH, "model"]
"""Columns of :attr:`InvarianceResult.latent`, in order."""

_SHOWN = [
    "model",
    "chisq",
    "df",
    "p_value",
    "cfi",
    "tli",
    "rmsea",
    "srmr",
    "delta_chisq",
    "delta_df",
    "delta_p",
    "delta_cfi",
    "delta_rmsea",
    "decision",
]


@dataclass(frozen=True, repr=False)
class InvarianceResult(Result):
    """The invariance ladder of one scale: fits, comparisons, parameters, latent change.

    Attributes
    ----------
    fits : pandas.DataFrame
        One row per model (the levels, then the partial models when some were fitted), with
        the columns of :data:`FIT_COLUMNS`: ``model, level, freed, estimator, n, npar,
        chisq, df, p_value, chisq_ml, p_value_ml, scaling_factor, cfi, tli, rmsea,
        rmsea_ci_low, rmsea_ci_high, srmr, loglik, aic, bic, chisq_scaled, df_scaled,
        p_value_scaled, cfi_scaled, tli_scaled, rmsea_scaled, cfi_robust, tli_robust,
        rmsea_robust, lrt_chisq, lrt_df, lrt_p, delta_chisq, delta_df, delta_p, delta_cfi,
        delta_rmsea, decision, converged``. ``chisq``, ``p_value``, ``cfi``, ``tli`` and
        ``rmsea`` (with its interval) are the statistics the decisions read: normal-theory
        under ML, lavaan's scaled ones under MLR and WLSMV, where the ``*_scaled`` columns
        repeat them under their explicit name (NaN under ML). ``chisq_ml``/``p_value_ml``
        are the normal-theory statistic (ML and MLR), ``loglik``, ``aic``, ``bic`` the
        likelihood's (NaN under WLSMV, which has none). ``cfi_robust``, ``tli_robust`` and
        ``rmsea_robust`` are lavaan's robust indices: under MLR with complete data those of
        Brosseau-Liard, Savalei & Li (2012) and Brosseau-Liard & Savalei (2014) (NaN under
        full-information ML, where lavaan corrects them another way); under WLSMV the catML
        ones, which lavaan 0.6-14 gives for the configural model only (NaN elsewhere).
        ``delta_*`` compare each model with the one before it (a partial model with the
        level below its own): the likelihood-ratio test under ML, the Satorra-Bentler (2001)
        scaled difference under MLR, the Satorra (2000) scaled and shifted difference under
        WLSMV; ``lrt_*`` repeat the first two (NaN under WLSMV, whose test is not a
        likelihood ratio). A model that did not converge has
        ``converged`` False and, under WLSMV, no numbers.
    parameters : pandas.DataFrame
        Every parameter of every model: ``model, lhs, op, rhs, kind, item, wave, free,
        estimate, se, statistic, p_value, ci_low, ci_high`` in lavaan's notation (observed
        ``{item}.{wave}``, latent ``{factor}.{wave}``, thresholds ``{item}.{wave} | t1``;
        fixed parameters have NaN ``se``).
    latent : pandas.DataFrame
        The later waves' latent means and variances under ``level_held`` (the first wave's
        are fixed at 0 and 1): ``quantity, wave, estimate, se, statistic, p_value, ci_low,
        ci_high, model``. Empty when not even metric invariance holds.
    score_tests : pandas.DataFrame
        Univariate score tests (lavaan's ``lavTestScore``) of the restrictions added at the
        first rejected step, worst first, for that model and every partial model tried:
        ``model, constraint, lhs, op, rhs, item, wave, statistic, df, p_value``. Empty when
        no step is rejected.
    level_held : str
        The highest level whose step and every step before it hold (``"configural"`` when
        the next step is rejected), or the partial model when the first rejected step holds
        once restrictions are freed (Byrne, Shavelson & Muthen, 1989): ML and MLR free the
        worst constraint once (``"scalar (partial)"``), WLSMV one at a time until the step
        holds (``"scalar (partial 2)"``: two freed); the ladder stops there.
    meta : dict
        Version, parameters, waves, items, ``n_used`` and ``n_excluded`` participants, the
        estimator note, the missing-data rule, notes.
    """

    fits: pd.DataFrame
    parameters: pd.DataFrame
    latent: pd.DataFrame
    score_tests: pd.DataFrame
    level_held: str
    meta: dict = field(default_factory=dict)

    def _title(self) -> str:
        m = self.meta
        return (
            f"Measurement invariance ({m['estimator']}): {len(m['items'])} items x "
            f"{len(m['waves'])} waves, n = {m['n_used']}; highest level held: {self.level_held}"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            ("Invariance ladder", self.fits),
            ("Latent means and variances of the later waves", self.latent),
            ("Score tests of the rejected step's constraints", self.score_tests),
            ("Parameters", self.parameters),
        ]

    def _text(self, decimals: int) -> str:
        m = self.meta
        blocks = [
            self._title(),
            f"Estimator: {m['estimator_note']}",
            f"Decision rule: {m['decision_rule']}",
            self.fits[_SHOWN].round(decimals).to_string(index=False),
        ]
        if not self.fits["converged"].all():
            bad = ", ".join(self.fits.loc[~self.fits["converged"], "model"])
            blocks.append(f"Did not converge: {bad}; their numbers are not to be read.")
        blocks.extend(m["notes"])
        if len(self.latent):
            blocks.append(
                f"Latent change under the {self.level_held} model (first wave: mean 0, "
                "variance 1)\n" + self.latent.round(decimals).to_string(index=False)
            )
        else:
            blocks.append("Latent change: not comparable (metric invariance does not hold).")
        if len(self.score_tests):
            blocks.append(
                "Score tests (1 df) of the rejected step's restrictions\n"
                + self.score_tests.head(10).round(decimals).to_string(index=False)
            )
        if m["n_excluded"]:
            why = {
                "fiml": "with no answer at all",
                "pairwise": "with no answer at all",
            }.get(m["nan_policy"], "for missing answers")
            blocks.append(
                f"{m['n_excluded']} participant(s) left out {why} (nan_policy={m['nan_policy']!r})."
            )
        return "\n\n".join(blocks)


def z_table(est: np.ndarray, se: np.ndarray, ci_level: float) -> dict[str, np.ndarray]:
    """Return the Wald statistic, p-value and interval columns of estimates and their SEs."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = est / se
    crit = special.ndtri(0.5 + ci_level / 2.0)
    return {
        ESTIMATE: est,
        SE: se,
        STATISTIC: z,
        P_VALUE: 2.0 * special.ndtr(-np.abs(z)),
        CI_LOW: est - crit * se,
        CI_HIGH: est + crit * se,
    }


def step_holds(
    row: dict[str, Any], prev_row: dict[str, Any], delta_cfi: float, delta_rmsea: float
) -> bool:
    """Set ``row``'s ``delta_cfi`` and ``delta_rmsea`` against ``prev_row``; say if they pass."""
    row["delta_cfi"] = prev_row["cfi"] - row["cfi"]
    row["delta_rmsea"] = row["rmsea"] - prev_row["rmsea"]
    return bool(row["delta_cfi"] <= delta_cfi and row["delta_rmsea"] <= delta_rmsea)


def judge_steps(
    rows: list[dict[str, Any]],
    levels: tuple[str, ...],
    converged: list[bool],
    delta_cfi: float,
    delta_rmsea: float,
) -> tuple[str | None, str]:
    """Decide each step of the ladder in ``rows`` (one per level); return (rejected, held).

    A step holds when CFI drops by at most ``delta_cfi`` and RMSEA rises by at most
    ``delta_rmsea``; the first failing step is rejected and later ones are not tested; a
    step with a model that did not converge is not tested and stops the ladder.
    """
    rejected: str | None = None
    for i, level in enumerate(levels[1:], start=1):
        row = rows[i]
        ok = step_holds(row, rows[i - 1], delta_cfi, delta_rmsea)
        if rejected is not None:
            row["decision"] = f"not tested ({rejected} rejected)"
        elif not (converged[i] and converged[i - 1]):
            row["decision"] = "not tested (a model did not converge)"
            rejected = level
        elif ok:
            row["decision"] = "holds"
        else:
            row["decision"] = "rejected"
            rejected = level
    rows[0]["decision"] = "baseline" if converged[0] else "did not converge"
    if not converged[0]:
        return rejected, "none"
    if rejected is None:
        return None, levels[-1]
    return rejected, levels[levels.index(rejected) - 1]


def latent_table(parameters: pd.DataFrame, model: str, level: str) -> pd.DataFrame:
    """Return the later waves' latent means (scalar and up) and variances (metric and up)."""
    if level not in ("metric", "scalar", "strict"):
        return pd.DataFrame(columns=LATENT_COLUMNS)
    table = parameters[parameters["model"] == model]
    wanted = []
    if level in ("scalar", "strict"):
        means = table[(table["kind"] == "alpha") & table["free"]].assign(quantity="mean")
        wanted.append(means)
    variances = table[(table["kind"] == "psi") & table["free"]].assign(quantity="variance")
    wanted.append(variances)
    out = pd.concat(wanted, ignore_index=True)
    out["model"] = model
    return out.reindex(columns=LATENT_COLUMNS).reset_index(drop=True)


def invariance_tables(
    result: InvarianceResult, *, instrument: str, scale: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the ``invariance.csv`` and ``invariance_params.csv`` tables of one scale.

    Parameters
    ----------
    result : InvarianceResult
        What :func:`measurement_invariance` returned.
    instrument, scale : str
        The names written in the first two columns.

    Returns
    -------
    invariance : pandas.DataFrame
        ``instrument, scale, model, freed, estimator, n, chisq, df, p_value, cfi, tli,
        rmsea, rmsea_ci_low, rmsea_ci_high, srmr, loglik, aic, bic, scaling_factor,
        chisq_scaled, df_scaled, p_value_scaled, cfi_scaled, tli_scaled, rmsea_scaled,
        cfi_robust, tli_robust, rmsea_robust, lrt_chisq, lrt_df, lrt_p, delta_chisq,
        delta_df, delta_p, delta_cfi, delta_rmsea, decision, converged`` (one row per model;
        the columns mean what they mean in :attr:`InvarianceResult.fits`).
    params : pandas.DataFrame
        ``instrument, scale, model, estimator, lhs, op, rhs, kind, item, wave, free,
        estimate, se, statistic, p_value, ci_low, ci_high``.

    Raises
    ------
    InvalidParameterError
        ``result`` is not an :class:`InvarianceResult`.
    """
    if not isinstance(result, InvarianceResult):
        raise InvalidParameterError(
            "the `result` parameter of invariance_tables must be an InvarianceResult; got "
            f"{type(result).__name__}"
        )
    fits = result.fits.assign(instrument=instrument, scale=scale)
    params = result.parameters.assign(
        instrument=instrument, scale=scale, estimator=result.meta["estimator"]
    )
    first = ["instrument", "scale", "model", "estimator"]
    params = params[first + [c for c in params.columns if c not in first]]
    return fits.reindex(columns=INVARIANCE_CSV_COLUMNS), params.reset_index(drop=True)


def negative_variances(parameters: pd.DataFrame, *, stacklevel: int = 5) -> list[str]:
    """Name every free variance estimated below zero, and warn once about them (both ladders)."""
    negative = parameters[
        parameters["free"]
        & parameters["kind"].isin(["theta", "psi"])
        & (parameters["estimate"] < 0)
    ]
    notes = [
        f"{row.model}: negative variance estimate {row.lhs} ~~ {row.rhs} = {row.estimate:.4g} "
        "(not admissible: the model does not fit these data as specified)"
        for row in negative.itertuples()
    ]
    if notes:
        warnings.warn(
            "measurement_invariance: " + "; ".join(notes), SingularFitWarning, stacklevel=stacklevel
        )
    return notes
