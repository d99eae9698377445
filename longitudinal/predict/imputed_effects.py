"""The empathy model's effects on the complete cases beside those pooled over imputations.

When a participant is left out of the linear mixed model of the empathy ratings only because a
survey score used as a predictor is missing (or a rating only because its session's feature
is), :func:`imputed_empathy_effects` refits the same model to each completed score table of
:func:`longitudinal.impute_scores` and each completed session table of
:func:`longitudinal.study.session_imputation.impute_sessions` (the predictors
built and standardized by :func:`longitudinal.predict.empathy_data` from that table, with its
own means and SDs) and pools the fixed effects by Rubin's rules with Barnard and Rubin's df
(:func:`models.pool_imputations`; each term's complete-data df: its Satterthwaite df in the
completed data).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from longitudinal._checks import check_unit
from longitudinal._display import Result
from longitudinal._errors import InvalidParameterError
from longitudinal.narrate.gates import fit_problem
from longitudinal.predict.effects import EmpathyEffects
from longitudinal.predict.predictors import EmpathyData, empathy_data
from surveys import __version__

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.study.loaded import Study
    from longitudinal.study.score_imputation import ImputedScores
    from longitudinal.study.session_imputation import ImputedSessions

__all__ = ["IMPUTED_EFFECT_COLUMNS", "ImputedEffects", "imputed_empathy_effects"]

IMPUTED_EFFECT_COLUMNS = [
    "term",
    "label",
    "estimate_cc",
    "se_cc",
    "df_cc",
    "p_value_cc",
    "ci_low_cc",
    "ci_high_cc",
    "n_participants_cc",
    "n_obs_cc",
    "estimate_mi",
    "se_mi",
    "df_mi",
    "p_value_mi",
    "ci_low_mi",
    "ci_high_mi",
    "riv",
    "fmi",
    "n_participants_mi",
    "n_obs_mi",
    "m",
    "failed_fits",
]
"""Columns of :attr:`ImputedEffects.table`: ``_cc`` the complete cases, ``_mi`` pooled."""


@dataclass(frozen=True, repr=False)
class ImputedEffects(Result):
    """The LMM's effects on the complete cases and pooled over m imputations, per term.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per predictor (columns :data:`IMPUTED_EFFECT_COLUMNS`): the complete-case
        coefficient (Satterthwaite df and t interval, as the effects table), the pooled one
        (Barnard-Rubin df), ``riv`` and ``fmi`` (fraction of missing information), the
        participants and ratings of each model, ``m`` and ``failed_fits`` (imputations whose
        fit was singular or did not converge).
    pooled : models.PooledEstimates
        The pooled fixed effects (the intercept too).
    fits : tuple
        The m fitted :class:`models.lmm.LinearMixedModel`.
    meta : dict
        ``formula``, ``m``, ``n_obs`` and ``n_participants`` of both analyses, ``problems``
        (why each failed fit failed), ``ci_level``, ``dfcom`` and the package version.
    """

    table: pd.DataFrame
    pooled: Any
    fits: tuple[Any, ...]
    meta: dict[str, Any]

    def _title(self) -> str:
        m = self.meta
        return (
            f"ImputedEffects: {m['n_participants_cc']} -> {m['n_participants_mi']} "
            f"participants, m = {m['m']}"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        keep = ["term", "estimate_cc", "estimate_mi", "ci_low_mi", "ci_high_mi", "fmi"]
        return [("Complete cases and pooled", self.table[keep])]


def imputed_frames(
    study: Study,
    imputed: ImputedScores | None,
    *,
    m: int | None = None,
    sessions: ImputedSessions | None = None,
    **data_kwargs: Any,
) -> list[EmpathyData]:
    """Build the empathy model's frame from each of the first ``m`` completed tables.

    ``imputed`` are the completed score tables, ``sessions`` the completed session features
    (:func:`longitudinal.study.session_imputation.impute_sessions`), either None when
    nothing of that kind is missing; table ``i`` of each goes into frame ``i``.
    ``data_kwargs`` are those of :func:`longitudinal.predict.empathy_data` (``traits``,
    ``states``, ``session_features``, ``session_between``); default ``m``: every table.
    """
    sources = [s.datasets for s in (imputed, sessions) if s is not None]
    if not sources:
        raise InvalidParameterError(
            "imputed_frames needs completed scores (`imputed`), completed session features "
            "(`sessions`) or both; got neither"
        )
    available = min(len(d) for d in sources)
    count = available if m is None else min(int(m), available)
    return [
        empathy_data(
            study,
            completed=None if imputed is None else imputed.long(i),
            completed_sessions=None if sessions is None else sessions.datasets[i],
            **data_kwargs,
        )
        for i in range(count)
    ]


def imputed_empathy_effects(
    frames: Sequence[EmpathyData],
    *,
    complete: EmpathyEffects,
    ci_level: float = 0.95,
) -> ImputedEffects:
    """Fit the complete-case LMM's formula to each imputed frame and pool its fixed effects.

    Parameters
    ----------
    frames : sequence of EmpathyData
        One per imputation (:func:`imputed_frames`), at least two.
    complete : EmpathyEffects
        The complete-case fit (:func:`longitudinal.predict.fit_empathy_models`): its formula
        (random effects as stepped down there) is refitted, its LMM rows sit beside the pooled.
    ci_level : float, default 0.95
        Level of the pooled intervals.

    Returns
    -------
    ImputedEffects
        The per-term table, the pooled estimates and the fits.

    Raises
    ------
    longitudinal.InvalidParameterError
        For fewer than two frames or a ``complete`` that is not an EmpathyEffects.

    Notes
    -----
    Each fit is ``LinearMixedModel(formula, reml=True)`` on that imputation's frame; the
    pooling is :func:`models.pool_imputations` with Barnard & Rubin's df, each term's
    complete-data df (``dfcom``) being its Satterthwaite df in the completed data averaged over
    the imputations (ratings minus fixed effects would give a person-level predictor hundreds
    of df it does not have). Warnings of the fits
    are caught; a singular or unconverged fit is counted in ``failed_fits``.
    """
    func = "imputed_empathy_effects"
    if not isinstance(complete, EmpathyEffects):
        raise InvalidParameterError(
            f"the `complete` parameter of {func} must be an EmpathyEffects "
            f"(fit_empathy_models); got {type(complete).__name__}"
        )
    frames = list(frames)
    if len(frames) < 2 or not all(isinstance(f, EmpathyData) for f in frames):
        raise InvalidParameterError(
            f"the `frames` parameter of {func} must hold at least two EmpathyData "
            f"(imputed_frames); got {len(frames)}"
        )
    ci_level = check_unit(ci_level, name="ci_level", where=func)
    from models import pool_imputations
    from models.lmm import LinearMixedModel

    fits, problems = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for frame in frames:
            fit = LinearMixedModel(complete.formula, reml=True, ci_level=ci_level).fit(frame.data)
            _ = fit.fixed_  # the df are computed on first access
            fits.append(fit)
            problem = fit_problem(fit)
            if problem:
                problems.append(problem)
        pooled = pool_imputations(fits, ci_level=ci_level)
        # each term's complete-data df is its Satterthwaite df in the completed data (the
        # mean over the imputations), not the ratings minus the fixed effects: a person-level
        # predictor has about as many df as people, and Barnard & Rubin's df never exceed it
        satterthwaite = pd.concat([f.fixed_.set_index("term")["df"] for f in fits], axis=1)
        dfcom = satterthwaite.mean(axis=1)
        per_term = {
            term: pool_imputations(fits, dfcom=float(dfcom[term]), ci_level=ci_level)
            .table.set_index("term")
            .loc[term]
            for term in dfcom.index
            if np.isfinite(dfcom[term]) and dfcom[term] > 0
        }
    first = frames[0]
    n_mi = int(first.data[first.id_col].nunique())
    n_cc = int(complete.meta["n_participants"])
    lmm = complete.effects[complete.effects["engine"] == "lmm"].set_index("term")
    rows = pooled.table.set_index("term")
    if per_term:
        rows = pd.DataFrame(per_term).T.reindex(rows.index).fillna(rows)
    table = pd.DataFrame({"term": complete.predictors["predictor"].to_numpy()})
    table["label"] = table["term"].map(complete.predictors.set_index("predictor")["label"])
    for column in ("estimate", "se", "df", "p_value", "ci_low", "ci_high"):
        table[f"{column}_cc"] = table["term"].map(lmm[column]).astype(float)
    table["n_participants_cc"] = n_cc
    table["n_obs_cc"] = int(complete.meta["n_obs"])
    for column in ("estimate", "se", "df", "p_value", "ci_low", "ci_high", "riv", "fmi"):
        key = column if column in ("riv", "fmi") else f"{column}_mi"
        table[key] = table["term"].map(rows[column]).astype(float)
    table["n_participants_mi"] = n_mi
    table["n_obs_mi"] = int(len(first.data))
    table["m"] = len(fits)
    table["failed_fits"] = len(problems)
    return ImputedEffects(
        table=table[IMPUTED_EFFECT_COLUMNS],
        pooled=pooled,
        fits=tuple(fits),
        meta={
            "package_version": __version__,
            "formula": complete.formula,
            "m": len(fits),
            "n_obs_cc": int(complete.meta["n_obs"]),
            "n_obs_mi": int(len(first.data)),
            "n_participants_cc": n_cc,
            "n_participants_mi": n_mi,
            "problems": sorted(set(problems)),
            "ci_level": ci_level,
            "dfcom": "each term's Satterthwaite df in the completed data, averaged over the "
            "imputations",
            "sizes_agree": bool(np.all([len(f.data) == len(first.data) for f in frames])),
        },
    )
