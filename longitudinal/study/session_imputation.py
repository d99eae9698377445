"""Multiple imputation of a study's missing session features, sessions within participants.

A session whose behaviour is missing (``words`` blank in sessions.csv, say) leaves its ratings
out of the empathy models. :func:`impute_sessions` fills those cells m times by
:func:`models.impute_chained`'s two-level method (``"2l.norm"``: a random intercept per
participant, the others' participant means among the predictors), one row per session of the
session frame, with the session's mean rating and number of ratings as auxiliary columns: the
ratings are the empathy model's outcome, so they belong in the imputation model (without them
the imputed features carry no relation to the ratings and their pooled effects shrink towards
zero); they help impute and are never given back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import pandas as pd

from _empathic_base.results import Result, json_ready
from longitudinal._checks import check_bool
from longitudinal._errors import InvalidParameterError
from longitudinal.study.score_imputation import _auxiliary_columns
from models.imputation import ImputedTables, impute_chained

if TYPE_CHECKING:
    from longitudinal.study.loaded import Study

__all__ = ["ImputedSessions", "impute_sessions"]


@dataclass(frozen=True, repr=False)
class ImputedSessions(Result):
    """m completed copies of a study's session features.

    Attributes
    ----------
    observed : pandas.DataFrame
        One row per session: the id column, ``session_id`` and the features as observed.
    imputations : models.ImputedTables
        The completed tables (the auxiliary columns left out), how many and why.
    features : tuple of str
        The imputed feature columns.
    auxiliary : tuple of str
        The auxiliary columns that were in the imputation model.
    """

    observed: pd.DataFrame
    imputations: ImputedTables
    features: tuple[str, ...]
    auxiliary: tuple[str, ...]

    @property
    def datasets(self) -> list[pd.DataFrame]:
        """The m completed tables: the id column, ``session_id`` and the features."""
        return self.imputations.datasets

    def _title(self) -> str:
        return f"ImputedSessions({len(self.observed)} sessions, m = {self.imputations.m})"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("Missing cells per column", self.imputations.missing)]

    def to_dict(self) -> dict[str, Any]:
        """Return how the features were imputed (not the tables) as JSON-ready data."""
        return json_ready(
            {
                **self.imputations.to_dict(),
                "features": list(self.features),
                "auxiliary": list(self.auxiliary),
            }
        )


def impute_sessions(
    study: Study,
    *,
    features: Sequence[str] | None = None,
    m: int | None = None,
    seed: int | None = None,
    burn_in: int = 10,
    ratings: bool = True,
) -> ImputedSessions:
    """Impute the missing session features of a study m times, sessions within participants.

    Parameters
    ----------
    study : longitudinal.Study
        A loaded study.
    features : sequence of str, optional
        The numeric session columns to impute together (at least one; each needs observed
        values in more sessions than twice the columns); default the study's session
        features.
    m : int, optional
        Imputations; None: von Hippel's (2020) rule (:func:`models.impute_chained`).
    seed : int, optional
        Seed of the imputation chains.
    burn_in : int, default 10
        Cycles per chain.
    ratings : bool, default True
        Put each session's mean rating and number of ratings into the imputation model (a
        constant count, every session rating the same number of stories, is left out).

    Returns
    -------
    ImputedSessions
        The observed features and the m completed tables.

    Notes
    -----
    The ratings themselves are not imputed: the linear mixed model of the ratings uses every
    observed rating, and for ratings missing at random given its predictors it needs no
    imputation; filling them would add something only with an auxiliary measure that the
    model leaves out.
    """
    func = "impute_sessions"
    check_bool(ratings, name="ratings", where=func)
    cfg = study.config
    frame = study.session_frame()
    numeric = list(study.numeric_session_columns or study.session_features)
    chosen = list(study.session_features if features is None else features)
    unknown = [f for f in chosen if f not in numeric]
    if unknown or not chosen:
        raise InvalidParameterError(
            f"the `features` parameter of {func} must name numeric columns of sessions.csv "
            f"({numeric}); got {chosen}"
        )
    id_col = cfg.id_col
    sessions = pd.Index(frame["session_id"].astype(str), name="session_id")
    observed = frame[[id_col, *chosen]].set_axis(sessions, axis=0)
    observed[id_col] = observed[id_col].astype(str)
    aux = None
    if ratings:
        aux = frame[[f"{cfg.rating_col}_mean", "n_ratings"]].set_axis(sessions, axis=0)
        aux = aux.set_axis(["mean rating", "ratings"], axis=1)
    extra = _auxiliary_columns(aux, observed[chosen], func=func)
    table = pd.concat([observed, extra], axis=1)
    table = table[table[[*chosen, *extra.columns]].notna().any(axis=1)]
    imputed = impute_chained(
        table, m=m, seed=seed, burn_in=burn_in, method="2l.norm", cluster=id_col
    )
    kept = [id_col, *chosen]
    imputed = replace(
        imputed,
        datasets=[t[kept].rename_axis("session_id").reset_index() for t in imputed.datasets],
        missing=imputed.missing[imputed.missing["column"].isin(chosen)].reset_index(drop=True),
    )
    return ImputedSessions(
        observed=observed.reset_index()[[id_col, "session_id", *chosen]],
        imputations=imputed,
        features=tuple(chosen),
        auxiliary=tuple(extra.columns),
    )
