"""Multiple imputation of a study's survey scores: the wide participant x wave table.

One row per participant listed in ``participants.csv`` (those who left included), one column
per state scale and wave (``{scale}@{wave}``) and one per trait scale of the first wave; the
missing cells are imputed by :func:`models.imputation.impute_chained` (chained equations,
Bayesian linear regression by default, predictive mean matching on request). Each completed
table is also given back in the long form of the person-wave frame, for the analyses that run
on it (one fit per imputation, pooled with :func:`models.pool_imputations`).

An analysis whose outcome is not in the table (the empathy ratings, which the scores predict)
needs that outcome in the imputation model, or the imputed scores carry no relation to it and
their pooled effects shrink towards zero (the imputation model must be congenial with the
analysis model; Meng 1994). :func:`rating_auxiliaries` gives each participant's mean rating
and number of ratings, overall and per wave (the ratings of the sessions whose nearest
preceding wave it is), as auxiliary columns of :func:`impute_scores`: they are imputed with
the scores but never given back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from _empathic_base.results import Result, json_ready
from longitudinal._checks import check_bool
from longitudinal._errors import InvalidParameterError
from longitudinal.study.frames import scale_column
from models.imputation import ImputedTables, impute_chained

if TYPE_CHECKING:
    from longitudinal.study.loaded import Study

__all__ = [
    "COLUMN_TABLE_COLUMNS",
    "ImputedScores",
    "impute_scores",
    "rating_auxiliaries",
    "rating_means",
]

COLUMN_TABLE_COLUMNS = ["column", "scale", "wave", "role"]
"""Columns of :attr:`ImputedScores.columns`."""


@dataclass(frozen=True, repr=False)
class ImputedScores(Result):
    """m completed copies of a study's wide score table.

    Attributes
    ----------
    wide : pandas.DataFrame
        The table as observed, indexed by participant (missing cells NaN).
    columns : pandas.DataFrame
        ``column, scale, wave, role``: each column's scale, its wave and ``state`` or
        ``trait``.
    imputations : models.ImputedTables
        The completed tables (``imputations.datasets``), how many and why.
    id_col : str
        The participant column of the long tables.
    auxiliary : tuple of str
        The auxiliary columns that were in the imputation model (imputed with the scores,
        left out of ``datasets``, ``wide`` and ``imputations.missing``).
    """

    wide: pd.DataFrame
    columns: pd.DataFrame
    imputations: ImputedTables
    id_col: str
    auxiliary: tuple[str, ...] = ()

    @property
    def datasets(self) -> list[pd.DataFrame]:
        """The m completed wide tables."""
        return self.imputations.datasets

    def long(self, i: int) -> pd.DataFrame:
        """Return completed table ``i`` (from 0) as a person-wave frame.

        One row per participant and wave: the id column, ``wave`` (ordered as the study), one
        column per state scale and the trait columns repeated on every wave.
        """
        table = self.datasets[i]
        states = self.columns[self.columns["role"] == "state"]
        traits = self.columns.loc[self.columns["role"] == "trait", "column"].tolist()
        traits = [c for c in traits if c in table.columns]
        waves = list(dict.fromkeys(states["wave"])) or list(dict.fromkeys(self.columns["wave"]))
        rows = []
        for wave in waves:
            part = states[states["wave"] == wave]
            block = table[part["column"].tolist()].set_axis(part["scale"].tolist(), axis=1)
            block = pd.concat([block, table[traits]], axis=1)
            rows.append(block.assign(wave=wave).rename_axis(self.id_col).reset_index())
        long = pd.concat(rows, ignore_index=True)
        long["wave"] = pd.Categorical(long["wave"], categories=waves, ordered=True)
        order = [self.id_col, "wave", *dict.fromkeys(states["scale"]), *traits]
        return (
            long[order].sort_values([self.id_col, "wave"], kind="mergesort").reset_index(drop=True)
        )

    def _title(self) -> str:
        return f"ImputedScores({len(self.wide)} participants, m = {self.imputations.m})"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        missing = self.imputations.missing
        return [("Missing cells per column", self.columns.merge(missing, on="column"))]

    def to_dict(self) -> dict[str, Any]:
        """Return how the scores were imputed (not the tables) as JSON-ready data."""
        return json_ready(
            {
                **self.imputations.to_dict(),
                "columns": self.columns.to_dict("records"),
                "auxiliary": list(self.auxiliary),
            }
        )


def impute_scores(
    study: Study,
    *,
    traits: bool = True,
    m: int | None = None,
    seed: int | None = None,
    burn_in: int = 10,
    method: str = "norm",
    scales: list[str] | None = None,
    auxiliary: pd.DataFrame | None = None,
) -> ImputedScores:
    """Impute the missing survey scores of a study m times.

    Parameters
    ----------
    study : longitudinal.Study
        A loaded study.
    traits : bool, default True
        Use the first wave's trait scores as predictors too (each incomplete column needs
        more observed values than the table has columns: a small study may need False).
    m : int, optional
        Imputations; None: von Hippel's (2020) rule (:func:`models.impute_chained`).
    seed : int, optional
        Seed of the imputation chains.
    burn_in : int, default 10
        Cycles per chain.
    method : {"norm", "pmm"}, default "norm"
        How a missing score is drawn (:func:`models.impute_chained`): Bayesian linear
        regression by default, because those who leave a study early tend to sit at an edge
        of the observed scores, where predictive mean matching, which can only give observed
        values, pulls their imputations inwards (benchmarks/sim_imputation_coverage.py: 95.0%
        coverage of the pooled change for ``norm`` against 92.0% for ``pmm``, whose change was
        10% too small).
    scales : list of str, optional
        Impute only these score columns (``{instrument}_{scale}``, every wave of a state),
        for a study too small to impute every scale together; default all.
    auxiliary : pandas.DataFrame, optional
        Numeric columns indexed by participant id (:func:`rating_auxiliaries`) put into the
        imputation model beside the scores: they help impute, and they are imputed where
        missing, but the completed tables leave them out. A column with fewer than 5
        observed values, without variation, or a linear combination of the auxiliary
        columns before it is left out (``ImputedScores.auxiliary`` lists those used).
        A participant with every score and auxiliary missing is left out of the completed
        tables (nothing to impute from).

    Returns
    -------
    ImputedScores
        The wide table, its columns, and the m completed tables (also as person-wave frames
        by :meth:`ImputedScores.long`).
    """
    check_bool(traits, name="traits", where="impute_scores")
    wide, columns = score_table(study)
    if not traits:
        wide = wide[columns.loc[columns["role"] == "state", "column"].tolist()]
    if scales is not None:
        known = set(columns["scale"])
        unknown = [c for c in scales if c not in known]
        if unknown or not scales:
            raise InvalidParameterError(
                f"the `scales` parameter of impute_scores must name score columns of the "
                f"study ({sorted(known)}); got {list(scales)}"
            )
        keep = columns.loc[columns["scale"].isin(list(scales)), "column"]
        wide = wide[[c for c in wide.columns if c in set(keep)]]
    usable = wide.columns[wide.notna().sum() >= 5]
    extra = _auxiliary_columns(auxiliary, wide)
    table = pd.concat([wide[usable], extra], axis=1)
    table = table[table.notna().any(axis=1)]
    imputed = impute_chained(table, m=m, seed=seed, burn_in=burn_in, method=method)
    if not extra.empty:  # the auxiliaries helped impute; they are not given back
        imputed = replace(
            imputed,
            datasets=[t.drop(columns=extra.columns) for t in imputed.datasets],
            missing=imputed.missing[imputed.missing["column"].isin(usable)].reset_index(drop=True),
        )
    return ImputedScores(
        wide=wide[usable],
        columns=columns[columns["column"].isin(usable)].reset_index(drop=True),
        imputations=imputed,
        id_col=study.config.id_col,
        auxiliary=tuple(extra.columns),
    )


def _auxiliary_columns(
    auxiliary: Any, wide: pd.DataFrame, *, func: str = "impute_scores"
) -> pd.DataFrame:
    """Return the usable auxiliary columns on the rows of ``wide`` (none: an empty frame).

    A column with fewer than 5 observed values, without variation, or a linear combination
    of the columns kept before it (on the rows where all are observed) is left out.
    """
    if auxiliary is None:
        return pd.DataFrame(index=wide.index)
    if not isinstance(auxiliary, pd.DataFrame):
        raise InvalidParameterError(
            f"the `auxiliary` parameter of {func} must be a DataFrame indexed as the table's "
            f"rows (rating_auxiliaries) or None; got {type(auxiliary).__name__}"
        )
    text = [c for c in auxiliary.columns if not pd.api.types.is_numeric_dtype(auxiliary[c])]
    clash = [c for c in auxiliary.columns if c in wide.columns]
    if text or clash:
        raise InvalidParameterError(
            f"the `auxiliary` parameter of {func} must hold numeric columns named unlike the "
            f"score columns; "
            + (f"not numeric: {text}" if text else f"named as score columns: {clash}")
        )
    frame = auxiliary.set_axis(auxiliary.index.astype(str), axis=0).reindex(wide.index)
    frame = frame.astype(float)
    keep: list[str] = []
    for column in frame.columns:
        values = frame[column]
        if values.notna().sum() < 5 or values.nunique() < 2:
            continue
        rows = frame[[*keep, column]].dropna().to_numpy()
        design = np.column_stack([np.ones(len(rows)), rows])
        if np.linalg.matrix_rank(design) == design.shape[1]:
            keep.append(column)
    return frame[keep]


def rating_means(
    ratings: pd.DataFrame, *, id_col: str, rating_col: str, wave_col: str | None = None
) -> pd.DataFrame:
    """Return each participant's mean rating and number of ratings, one row per participant.

    Parameters
    ----------
    ratings : pandas.DataFrame
        One row per rating (the story frame): ``id_col``, ``rating_col`` and, with
        ``wave_col``, the wave each rating follows (its nearest preceding wave).
    id_col, rating_col : str
        The participant and rating columns.
    wave_col : str, optional
        With it, per wave too: ``mean rating@{wave}`` and ``ratings@{wave}`` (the ratings
        after that wave and before the next); the overall count is then left out, being the
        sum of the waves' counts when every rating follows a wave.

    Returns
    -------
    pandas.DataFrame
        Indexed by participant id (as text): ``mean rating``, then ``ratings`` or the
        per-wave columns. A missing rating counts nowhere; a participant or wave without a
        rating has a missing mean.
    """
    rated = ratings.dropna(subset=[rating_col])
    people = rated[id_col].astype(str)
    by_person = rated.groupby(people)[rating_col]
    out = pd.DataFrame({"mean rating": by_person.mean()})
    if wave_col is None:
        out["ratings"] = by_person.size().astype(float)
    else:
        waves = rated[wave_col].astype(str).where(rated[wave_col].notna())
        for wave in dict.fromkeys(waves.dropna()):
            mine = rated[rating_col].where(waves == wave)
            grouped = mine.groupby(people)
            out[f"mean rating@{wave}"] = grouped.mean()
            out[f"ratings@{wave}"] = grouped.count().astype(float)
    ids = pd.Index(pd.unique(ratings[id_col].astype(str)), name=id_col)
    return out.reindex(ids).rename_axis(id_col)


def rating_auxiliaries(study: Study, *, by_wave: bool = True) -> pd.DataFrame:
    """Return the study's :func:`rating_means` for every participant of ``participants.csv``.

    ``by_wave``: per wave too (the ratings after each wave), for an analysis whose state
    scores predict the ratings after their wave. Participants without a rating have a
    missing mean and a count of 0.
    """
    check_bool(by_wave, name="by_wave", where="rating_auxiliaries")
    cfg = study.config
    means = rating_means(
        study.story_frame(),
        id_col=cfg.id_col,
        rating_col=cfg.rating_col,
        wave_col="state_wave" if by_wave else None,
    )
    ids = pd.Index(study.participants[cfg.id_col].astype(str).unique(), name=cfg.id_col)
    out = means.reindex(ids)
    counts = [c for c in out.columns if c.startswith("ratings")]
    out[counts] = out[counts].fillna(0.0)
    return out


def score_table(study: Study) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the wide participant x (scale, wave) table of a study and its column table."""
    cfg = study.config
    id_col, waves = cfg.id_col, [str(w) for w in cfg.waves]
    ids = pd.Index(study.participants[id_col].astype(str).unique(), name=id_col)
    scores = study.scores.assign(
        wave=study.scores["wave"].astype(str), **{id_col: study.scores[id_col].astype(str)}
    )
    pieces, rows = [], []
    for role, instruments in (
        ("trait", study.trait_instruments),
        ("state", study.state_instruments),
    ):
        for inst in instruments:
            mine = scores[scores["instrument"] == inst]
            for scale in _distinct_scales(study.instruments[inst], mine["scale"]):
                col = scale_column(inst, scale)
                for wave in waves if role == "state" else waves[:1]:
                    one = mine[(mine["scale"] == scale) & (mine["wave"] == wave)]
                    if one.empty:
                        continue
                    name = f"{col}@{wave}" if role == "state" else col
                    pieces.append(one.set_index(id_col)["score"].astype(float).rename(name))
                    rows.append((name, col, wave, role))
    wide = pd.concat(pieces, axis=1).reindex(ids) if pieces else pd.DataFrame(index=ids)
    return wide, pd.DataFrame(rows, columns=COLUMN_TABLE_COLUMNS)


def _distinct_scales(instrument: Any, scored: pd.Series) -> list[str]:
    """Scales of ``instrument`` that were scored, without one that a later scale rescales.

    Two scales with the same items, reverse keys and scoring differ by a factor (WHO-5's raw
    sum and its percentage): the later one is kept, as the report does, since a column that is
    a multiple of another leaves nothing to impute it from.
    """
    keys = list(instrument.scales)
    keep = []
    for k, key in enumerate(keys):
        signature = (tuple(key.items), tuple(key.reverse), key.scoring)
        later = any(
            (tuple(o.items), tuple(o.reverse), o.scoring) == signature for o in keys[k + 1 :]
        )
        if not later and key.name in set(scored):
            keep.append(key.name)
    return keep
