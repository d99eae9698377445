"""What predicts empathy: participant-level empathy models and the out-of-person benchmark.

Two questions about the story-level ratings of a study (one row per story a participant
rated, :meth:`longitudinal.study.Study.story_frame`):

*Which person and session characteristics go with higher empathy?*
    :func:`empathy_data` builds the predictors (standardized traits; states of the nearest
    preceding survey wave and session features, each split into a between-person and a
    within-person part; weeks since the first session) and :func:`fit_empathy_models` fits
    the same model with two engines: a linear mixed model on the 1-5 rating
    (:class:`models.lmm.LinearMixedModel`, REML) and a Bayesian cumulative-logit model
    (:class:`models.bayes.BayesianMixedModel`), both with a random intercept and week slope
    per participant and a random intercept per story. It returns one effects table for both
    engines, a variance decomposition with ICCs, and :func:`plot_effects` draws the forest
    plot. :func:`empathy_effects_section` packages all of it as a report section.

*How well can a person's ratings be predicted when the model has never seen that person?*
    :func:`evaluate_predictions` runs the EmpathicStories++ benchmark (Shen et al., ACL
    Findings 2024) on participant-grouped splits (70/20/10 per seed, and grouped K-fold;
    drawn by :func:`longitudinal.splits.draw_splits`, which ``longitudinal splits`` exports)
    with the metrics of :mod:`models.evaluation`, and scores a researcher's own predictions
    on the same splits beside the package's models (:mod:`longitudinal.user_predictions`);
    :func:`run_evaluation` writes ``metrics.csv``, ``summary.csv``, the table in the paper's
    layout and a figure (the ``longitudinal evaluate`` command).

Predictor construction
----------------------
For a participant *p*, a session *i* and a story rating *r* in that session:

``{trait}_z``
    the trait score at the first wave, minus the mean over the reference participants,
    divided by their SD (``ddof=1``).
``{state}_between_z``
    ``(m_p - mean of m over the reference participants) / s``, where ``m_p`` is the mean of
    the person's state score over the waves they completed (every wave counts once) and
    ``s`` is the SD of the state score at the first wave across the reference participants.
``{state}_within_z``
    ``(x_pi - m_p) / s`` with ``x_pi`` the state score of the nearest wave completed on or
    before the session (:func:`longitudinal.frames.nearest_preceding_wave`).
``{feature}_between_z``, ``{feature}_within_z``
    ``(f_p - c) / d`` and ``(f_i - f_p) / d`` with ``f_p`` the person's mean of the feature
    over their sessions and ``c, d`` its mean and SD (``ddof=1``) over all sessions of the
    reference participants.
``week``
    weeks since the participant's first session (not standardized).

The reference participants are everyone in the study for the effects models, and the
training participants of each split in the benchmark. These are the definitions of the
simulator's ``truth.json`` (:mod:`longitudinal.simulate`), so simulated effects are
recovered on their own scale.

Of several scales of one instrument built from the same items with the same keys (WHO-5 raw
and percentage), only the last is used: they carry the same information and would make the
design rank deficient.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal._output import atomic_write, check_out_dir
from longitudinal.frames import scale_column
from longitudinal.splits import draw_splits, seed_list, splits_table
from models._errors import DataQualityWarning, ModelsError
from models._errors import InvalidParameterError as ModelsInvalidParameterError
from models.evaluation import (
    BOOTSTRAP_COLUMNS,
    COMPARISON_COLUMNS,
    DEFAULT_THRESHOLD,
    METRIC_NAMES,
    SPLIT_SIZES,
    KFoldBootstrap,
    binarize,
    kfold_bootstrap,
    overlapping_groups,
    prediction_metrics,
    summarize_metrics,
)

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from matplotlib.figure import Figure

    from longitudinal.study import Study

__all__ = [
    "EFFECT_COLUMNS",
    "MODEL_DESCRIPTIONS",
    "VARIANCE_COLUMNS",
    "EffectsSection",
    "EmpathyData",
    "EmpathyEffects",
    "EvaluationResult",
    "default_predictors",
    "describe_effects",
    "empathy_data",
    "empathy_effects_section",
    "empathy_formula",
    "evaluate_predictions",
    "fit_empathy_models",
    "plot_effects",
    "plot_metrics",
    "run_evaluation",
]

PREDICTOR_COLUMNS = ["predictor", "source", "kind", "part", "center", "scale", "label", "unit"]
"""Columns of :attr:`EmpathyData.predictors`."""

EFFECT_COLUMNS = [
    "engine",
    "scale",
    "quantity",
    "term",
    "label",
    "kind",
    "part",
    "estimate",
    "se",
    "df",
    "p_value",
    "ci_low",
    "ci_high",
    "prob_positive",
    "r_hat",
    "ess_bulk",
]
"""Columns of :attr:`EmpathyEffects.effects`."""

VARIANCE_COLUMNS = [
    "engine",
    "model",
    "scale",
    "component",
    "variance",
    "variance_ci_low",
    "variance_ci_high",
    "icc",
    "icc_ci_low",
    "icc_ci_high",
    "at_boundary",
]
"""Columns of :attr:`EmpathyEffects.variance`."""

MODEL_DESCRIPTIONS = {
    "majority_vote": (
        "the most frequent rating of the training participants (ties: the one nearest their "
        "mean, then the lower), the same for everyone"
    ),
    "grand_mean": "mean rating of the training participants",
    "lmm_traits": "linear mixed model: traits; random intercept per participant",
    "lmm_traits_session": (
        "linear mixed model: traits + session features (between/within) + week; random "
        "intercept and week slope per participant"
    ),
    "lmm_full": (
        "linear mixed model: traits + states (between/within) + session features "
        "(between/within) + week; random intercept and week slope per participant"
    ),
    "clmm_full": (
        "cumulative link (ordinal) mixed model with the predictors of lmm_full, by maximum "
        "likelihood; random intercept and week slope per participant; prediction = expected "
        "rating averaged over the participant effects"
    ),
    "bayes_ordinal": (
        "Bayesian cumulative-logit model with the predictors of lmm_full; random intercept "
        "and week slope per participant; prediction = posterior expected rating"
    ),
}
"""The benchmark's models, in table order."""

METRICS_FILE = "metrics.csv"
SUMMARY_FILE = "summary.csv"
TABLE_FILE = "table.md"
FIGURE_FILE = "metrics.png"
RUNS_FILE = "runs.csv"
INTERVALS_FILE = "metrics_ci.csv"
COMPARISONS_FILE = "comparisons.csv"
PARAMETERS_FILE = "evaluation.json"

_PAPER_BESTS = (
    ("story share, best model (GPT-4)", 23.2, 17.6),
    ("reflection, best model (LF-LSTM, video + text)", 56.0, None),
)
_KINDS = ("trait", "state", "session", "time")
_GENERIC_SCALES = ("raw", "percentage", "total", "sum", "mean", "score")


# ---------------------------------------------------------------------------------------------
# small helpers


def _empty(columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def _check_study(study: Any, *, func: str) -> None:
    from longitudinal.study import Study

    if not isinstance(study, Study):
        raise InvalidParameterError(
            f"the `study` parameter of {func} must be a longitudinal.study.Study (from "
            f"load_study); got {type(study).__name__}"
        )


def _check_int(value: Any, *, name: str, func: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InvalidParameterError(
            f"the `{name}` parameter of {func} must be an int >= {minimum}; got {value!r}"
        )
    return int(value)


def _check_ci(ci_level: Any, *, func: str) -> float:
    if isinstance(ci_level, bool) or not isinstance(ci_level, float | int) or not 0 < ci_level < 1:
        raise InvalidParameterError(
            f"the `ci_level` parameter of {func} must be a float in (0, 1); got {ci_level!r}"
        )
    return float(ci_level)


def _default_sampler() -> str:
    import importlib.util

    return "nutpie" if importlib.util.find_spec("nutpie") is not None else "pymc"


@contextmanager
def _recording(
    notes: list[str], *, prefix: str, expected: Callable[[Any], bool] | None = None
) -> Iterator[None]:
    """Catch warnings and keep them as notes (reports record warnings, they do not re-issue).

    Warnings for which ``expected(warning)`` is true are dropped.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        if expected is not None and expected(w):
            continue
        text = f"{prefix}: {w.category.__name__}: {_short(str(w.message))}"
        if text not in notes:
            notes.append(text)


def _short(message: str, limit: int = 300) -> str:
    """First line of a warning, with long formulas elided."""
    line = message.splitlines()[0] if message else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _package_version() -> str:
    from surveys import __version__

    return __version__


# ---------------------------------------------------------------------------------------------
# predictors


@dataclass(frozen=True)
class _Source:
    column: str  # frame column with the raw score / feature
    kind: str  # trait | state | session
    label: str


@dataclass(frozen=True)
class _Raw:
    """Everything needed to standardize the predictors for any set of reference people."""

    rows: pd.DataFrame  # story rows: ids, response, week, raw sources, person means
    persons: pd.DataFrame  # one row per participant: traits, state means, first-wave states
    sessions: pd.DataFrame  # one row per session (rated or not): id, features
    sources: tuple[_Source, ...]
    id_col: str
    response_col: str
    scale_min: float
    scale_max: float
    first_wave: str


@dataclass(frozen=True)
class EmpathyData:
    """Story-level ratings with standardized, decomposed predictors.

    Attributes
    ----------
    data : pandas.DataFrame
        One row per rating with complete predictors: the id column, ``session_id``,
        ``story_id``, ``position``, the rating column, ``week``, then every predictor column
        listed in ``predictors``.
    predictors : pandas.DataFrame
        One row per predictor: ``predictor`` (column name), ``source`` (score or feature
        column it comes from), ``kind`` (``trait``, ``state``, ``session``, ``time``),
        ``part`` (``person``, ``between``, ``within``, ``time``), ``center`` and ``scale``
        (``predictor = (value - center) / scale``; within parts are centred on the person
        mean instead, so their ``center`` is 0), ``label`` and ``unit`` (what one unit is).
    id_col, response_col : str
        Participant id and rating columns.
    scale_min, scale_max : float
        Declared rating range.
    n_dropped : int
        Ratings left out for a missing rating or predictor.
    meta : dict
        Reference participants, rows per reason dropped, the traits, states and features
        used.
    """

    data: pd.DataFrame
    predictors: pd.DataFrame
    id_col: str
    response_col: str
    scale_min: float
    scale_max: float
    n_dropped: int
    meta: dict[str, Any] = field(default_factory=dict)

    def terms(self, *, kinds: Sequence[str] = _KINDS) -> list[str]:
        """Return the predictor columns of the given kinds, in table order.

        Parameters
        ----------
        kinds : sequence of str, default all
            Any of ``trait``, ``state``, ``session``, ``time``.

        Returns
        -------
        list of str
            Predictor column names.
        """
        keep = self.predictors["kind"].isin(list(kinds))
        return self.predictors.loc[keep, "predictor"].tolist()


def _dedupe_scales(study: Study, instruments: Sequence[str]) -> list[tuple[str, str, str]]:
    """(column, instrument, label) for each scale, keeping the last of identical-item scales."""
    out: list[tuple[str, str, str]] = []
    for name in instruments:
        inst = study.instruments.get(name)
        if inst is None:
            continue
        chosen: dict[tuple, Any] = {}
        for scale in inst.scales:
            key = (tuple(scale.items), tuple(sorted(scale.reverse)))
            chosen[key] = scale  # the last one wins
        kept = {id(s) for s in chosen.values()}
        for scale in inst.scales:
            if id(scale) in kept:
                label = scale.name.replace("_", " ")
                if scale.name in _GENERIC_SCALES:
                    title = str(getattr(inst, "title", "") or name)
                    label = title.split(",")[0].split(" (")[0]
                elif scale.name != name:
                    label = f"{label} ({name})"
                out.append((scale_column(name, scale.name), name, label))
    return out


def _pick(
    requested: Sequence[str] | None,
    defaults: list[tuple[str, str, str]],
    available: Sequence[str],
    *,
    name: str,
    func: str,
) -> list[tuple[str, str]]:
    if requested is None:
        return [(c, lab) for c, _, lab in defaults if c in available]
    requested = [requested] if isinstance(requested, str) else list(requested)
    unknown = [c for c in requested if c not in available]
    if unknown:
        raise InvalidParameterError(
            f"the `{name}` parameter of {func} names columns that the study does not have: "
            f"{unknown}; available: {list(available)}"
        )
    labels = {c: lab for c, _, lab in defaults}
    return [(c, labels.get(c, c.replace("_", " "))) for c in requested]


def _raw_predictors(
    study: Study,
    *,
    traits: Sequence[str] | None,
    states: Sequence[str] | None,
    session_features: Sequence[str],
    func: str,
) -> _Raw:
    cfg = study.config
    id_col = cfg.id_col
    response = cfg.rating_col
    story = study.story_frame()
    pw = study.person_wave_frame()
    sessions = study.session_frame()
    first = cfg.waves[0]

    trait_defaults = _dedupe_scales(study, cfg.traits)
    state_defaults = _dedupe_scales(study, cfg.states)
    meta_cols = {id_col, "wave", "wave_index", "completed_at", "day", "n_sessions"}
    scores = [c for c in pw.columns if c not in meta_cols and c != f"{response}_mean"]
    trait_avail = [c for c, _, _ in trait_defaults] if traits is None else scores
    state_avail = [c for c, _, _ in state_defaults] if states is None else scores
    trait_cols = _pick(traits, trait_defaults, trait_avail, name="traits", func=func)
    state_cols = _pick(states, state_defaults, state_avail, name="states", func=func)
    if session_features is None:
        session_features = study.session_features
    if isinstance(session_features, str):
        session_features = [session_features]
    features = list(session_features)
    numeric = list(study.numeric_session_columns or study.session_features)
    unknown = [f for f in features if f not in numeric]
    if unknown:
        raise InvalidParameterError(
            f"the `session_features` parameter of {func} names features that sessions.csv does "
            f"not have as numeric columns: {unknown}; available: {numeric}"
        )
    for col, _ in state_cols:
        if col not in story.columns:
            raise InvalidParameterError(
                f"the `states` parameter of {func}: {col!r} is not a state score of the story "
                "frame (states must be repeated at the waves)"
            )
    sources = (
        [_Source(c, "trait", lab) for c, lab in trait_cols]
        + [_Source(c, "state", lab) for c, lab in state_cols]
        + [_Source(f, "session", f.replace("_", " ")) for f in features]
    )
    if not sources:
        raise InvalidParameterError(f"{func}: the study has no trait, state or session predictor")

    ids = pd.Index(pd.unique(study.participants[id_col].astype(str)), name=id_col)
    persons = pd.DataFrame(index=ids)
    firstwave = pw[pw["wave"].astype(str) == first].set_index(id_col)
    firstwave.index = firstwave.index.astype(str)
    for col, _ in trait_cols:
        persons[col] = firstwave[col].reindex(ids).to_numpy(dtype=float)
    for col, _ in state_cols:
        values = pw[[id_col, col]].assign(**{id_col: pw[id_col].astype(str)})
        persons[f"{col}__mean"] = values.groupby(id_col)[col].mean().reindex(ids)
        persons[f"{col}__first"] = firstwave[col].reindex(ids).to_numpy(dtype=float)
    sess = sessions[[id_col, "session_id", *features]].copy()
    sess[id_col] = sess[id_col].astype(str)
    for f in features:
        persons[f"{f}__mean"] = sess.groupby(id_col)[f].mean().reindex(ids)

    keep = [id_col, "session_id", "story_id", "position", response, "week"]
    keep += [c for c, _ in trait_cols if c not in keep]
    keep += [c for c, _ in state_cols if c not in keep]
    keep += [f for f in features if f not in keep]
    rows = story[keep].copy()
    rows[id_col] = rows[id_col].astype(str)
    return _Raw(
        rows=rows.reset_index(drop=True),
        persons=persons,
        sessions=sess.reset_index(drop=True),
        sources=tuple(sources),
        id_col=id_col,
        response_col=response,
        scale_min=float(cfg.ratings.scale_min),
        scale_max=float(cfg.ratings.scale_max),
        first_wave=str(first),
    )


def _sd(values: pd.Series | np.ndarray) -> float:
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    return float(arr.std(ddof=1)) if arr.size > 1 else float("nan")


def _standardize(raw: _Raw, reference: Sequence[str] | None, *, func: str) -> EmpathyData:
    id_col = raw.id_col
    persons = raw.persons
    ref = persons.index if reference is None else pd.Index([str(r) for r in reference])
    ref = ref[ref.isin(persons.index)]
    ref_persons = persons.loc[ref]
    ref_sessions = raw.sessions[raw.sessions[id_col].isin(ref)]
    rows = raw.rows
    person_of = rows[id_col]
    out = rows[[id_col, "session_id", "story_id", "position", raw.response_col, "week"]].copy()
    specs: list[dict[str, Any]] = []

    def bad_scale(source: str, what: str) -> InvalidParameterError:
        return InvalidParameterError(
            f"{func}: the predictor {source!r} cannot be standardized: {what} across the "
            f"{len(ref)} reference participants is 0 or undefined; leave it out"
        )

    for src in raw.sources:
        c = src.column
        if src.kind == "trait":
            center = float(ref_persons[c].mean())
            scale = _sd(ref_persons[c])
            if not scale > 0:
                raise bad_scale(c, "the SD of the score")
            out[f"{c}_z"] = (rows[c] - center) / scale
            specs.append(
                dict(
                    predictor=f"{c}_z",
                    source=c,
                    kind="trait",
                    part="person",
                    center=center,
                    scale=scale,
                    label=src.label,
                    unit=f"SD of the score at {raw.first_wave}",
                )
            )
        else:
            # States and session features: person mean (between) and deviation (within),
            # both divided by one reference SD so the two parts share a unit.
            if src.kind == "state":
                center = float(ref_persons[f"{c}__mean"].mean())
                scale = _sd(ref_persons[f"{c}__first"])
                unit = f"SD of the score at {raw.first_wave}"
                what = f"the SD of the score at {raw.first_wave}"
            else:
                center = float(ref_sessions[c].mean())
                scale = _sd(ref_sessions[c])
                unit = "SD over sessions"
                what = "the SD over sessions"
            if not scale > 0:
                raise bad_scale(c, what)
            pm = person_of.map(persons[f"{c}__mean"])
            out[f"{c}_between_z"] = (pm - center) / scale
            out[f"{c}_within_z"] = (rows[c] - pm) / scale
            for part, part_center in (("between", center), ("within", 0.0)):
                specs.append(
                    dict(
                        predictor=f"{c}_{part}_z",
                        source=c,
                        kind="state" if src.kind == "state" else "session",
                        part=part,
                        center=part_center,
                        scale=scale,
                        label=src.label,
                        unit=unit,
                    )
                )
    specs.append(
        dict(
            predictor="week",
            source="week",
            kind="time",
            part="time",
            center=0.0,
            scale=1.0,
            label="weeks since the first session",
            unit="week",
        )
    )
    predictors = pd.DataFrame(specs, columns=PREDICTOR_COLUMNS)
    used = [raw.response_col, *predictors["predictor"]]
    missing = out[used].isna()
    dropped = missing.any(axis=1)
    reasons = {c: int(missing[c].sum()) for c in used if missing[c].any()}
    data = out.loc[~dropped].reset_index(drop=True)
    return EmpathyData(
        data=data,
        predictors=predictors,
        id_col=id_col,
        response_col=raw.response_col,
        scale_min=raw.scale_min,
        scale_max=raw.scale_max,
        n_dropped=int(dropped.sum()),
        meta={
            "reference_participants": len(ref),
            "dropped_by_column": reasons,
            "traits": [s.column for s in raw.sources if s.kind == "trait"],
            "states": [s.column for s in raw.sources if s.kind == "state"],
            "session_features": [s.column for s in raw.sources if s.kind == "session"],
        },
    )


def empathy_data(
    study: Study,
    *,
    traits: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
    session_features: Sequence[str] | None = None,
) -> EmpathyData:
    """Story-level ratings with the standardized, within/between-split predictors.

    Parameters
    ----------
    study : longitudinal.study.Study
        A loaded study (:func:`longitudinal.study.load_study`).
    traits : sequence of str, optional
        Trait score columns (first wave) to use; default every scale of the ``[roles]
        traits`` instruments (rescaled duplicates left out, see the module docstring).
    states : sequence of str, optional
        State score columns; default every scale of the ``[roles] states`` instruments.
    session_features : sequence of str, optional
        Numeric columns of ``sessions.csv``; by default the study's session features
        (``[roles] session_features`` of study.toml, or every numeric column of sessions.csv).

    Returns
    -------
    EmpathyData
        The model frame and the predictor table (with the centring and scaling used).

    Raises
    ------
    longitudinal.InvalidParameterError
        For a ``study`` that is not a Study, unknown columns, or a predictor without
        variation.

    Notes
    -----
    The predictors are defined in the module docstring; every participant of the study is a
    reference participant. Ratings with a missing rating or predictor (e.g. a trait not
    scored for lack of answered items) are left out and counted in ``n_dropped``.

    Validated on simulated studies (:func:`longitudinal.simulate.simulate_frames`): every
    predictor equals the simulator's design column to 1e-12 (tests).

    Examples
    --------
    >>> from longitudinal.predict import empathy_data
    >>> from longitudinal.study import load_study
    >>> data = empathy_data(load_study("path/to/study"))  # doctest: +SKIP
    >>> data.predictors[["predictor", "kind", "part"]]  # doctest: +SKIP
    """
    func = "empathy_data"
    _check_study(study, func=func)
    raw = _raw_predictors(
        study, traits=traits, states=states, session_features=session_features, func=func
    )
    return _standardize(raw, None, func=func)


def default_predictors(study: Study) -> dict[str, list[str]]:
    """List the empathy models' candidate predictors, in study.toml order.

    Returns ``{"traits": [...], "states": [...], "session_features": [...]}``: the score columns
    of the ``[roles] traits`` and ``states`` instruments (a rescaled duplicate scale left out)
    and the study's session features.
    """
    return {
        "traits": [c for c, _, _ in _dedupe_scales(study, study.config.traits)],
        "states": [c for c, _, _ in _dedupe_scales(study, study.config.states)],
        "session_features": list(study.session_features),
    }


def empathy_formula(
    data: EmpathyData,
    *,
    kinds: Sequence[str] = _KINDS,
    random_slope: bool = True,
    story_effects: bool = True,
) -> str:
    """Write the lme4-style formula of an empathy model.

    Parameters
    ----------
    data : EmpathyData
        From :func:`empathy_data`.
    kinds : sequence of str, default all
        Predictor kinds to include: ``trait``, ``state``, ``session``, ``time``.
    random_slope : bool, default True
        Random week slope per participant (correlated with the intercept).
    story_effects : bool, default True
        Random intercept per story.

    Returns
    -------
    str
        ``"{rating} ~ x1 + x2 + ... + (1 + week | id) + (1 | story_id)"``.

    Raises
    ------
    longitudinal.InvalidParameterError
        For an unknown kind.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.predict import EmpathyData, empathy_formula
    >>> preds = pd.DataFrame({"predictor": ["tas4_absorption_z", "week"],
    ...                       "kind": ["trait", "time"]})
    >>> d = EmpathyData(pd.DataFrame(), preds, "participant_id", "empathy", 1, 5, 0)
    >>> empathy_formula(d, story_effects=False)
    'empathy ~ tas4_absorption_z + week + (1 + week | participant_id)'
    """
    func = "empathy_formula"
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    bad = [k for k in kinds if k not in _KINDS]
    if bad:
        raise InvalidParameterError(
            f"the `kinds` parameter of {func} must hold kinds from {list(_KINDS)}; got {bad}"
        )
    terms = data.terms(kinds=kinds)
    rhs = " + ".join(terms) if terms else "1"
    slope = random_slope and "week" in terms
    random = f"(1 + week | {data.id_col})" if slope else f"(1 | {data.id_col})"
    formula = f"{data.response_col} ~ {rhs} + {random}"
    if story_effects:
        formula += " + (1 | story_id)"
    return formula


# ---------------------------------------------------------------------------------------------
# effects: both engines


@dataclass(frozen=True)
class EmpathyEffects:
    """Empathy effects estimated by the linear mixed model and the Bayesian ordinal model.

    Attributes
    ----------
    effects : pandas.DataFrame
        One row per engine x scale x predictor (columns :data:`EFFECT_COLUMNS`):
        ``engine`` (``lmm``, ``clmm`` or ``bayes_ordinal``), ``scale`` (``rating``: rating
        points per unit of the predictor; ``logit``: latent logit units per unit),
        ``quantity`` (``coefficient``, or ``average marginal effect`` for the ordinal models on
        the rating scale), ``term``, ``label``, ``kind``, ``part``, ``estimate``, ``se``
        (standard error or posterior SD), ``df`` and ``p_value`` (LMM: Satterthwaite; clmm: z,
        df NaN), ``ci_low, ci_high`` (LMM: t interval; clmm: Wald; Bayesian: highest-density
        interval), ``prob_positive`` (posterior
        probability that the effect is above 0), ``r_hat``, ``ess_bulk`` (Bayesian).
    variance : pandas.DataFrame
        Variance decomposition (columns :data:`VARIANCE_COLUMNS`): ``engine``, ``model``
        (``unconditional``: intercept-only LMM with participant, session and story
        intercepts; ``conditional``: the effects model), ``scale``, ``component``
        (``participant``, ``session``, ``story``, ``residual``), ``variance`` with its
        interval (Bayesian only), ``icc`` (share of the total variance) with its interval,
        and ``at_boundary`` (LMM variance estimated at 0).
    predictors : pandas.DataFrame
        :attr:`EmpathyData.predictors`.
    formula : str
        The effects model.
    lmm : models.lmm.LinearMixedModel
        The fitted LMM.
    clmm : models.ordinal.OrdinalMixedModel or None
        The fitted cumulative link mixed model (None when not fitted).
    bayes : models.bayes.BayesianMixedModel or None
        The fitted Bayesian model (None when not requested).
    notes : tuple of str
        Warnings raised by the fits (convergence, boundary, sampling diagnostics).
    meta : dict
        Options, sizes, timings and package version.
    """

    effects: pd.DataFrame
    variance: pd.DataFrame
    predictors: pd.DataFrame
    formula: str
    lmm: Any
    bayes: Any
    notes: tuple[str, ...]
    meta: dict[str, Any]
    clmm: Any = None


def _hdi(draws: np.ndarray, ci_level: float) -> tuple[float, float]:
    """Narrowest interval holding ``ci_level`` of the draws (as arviz.hdi for one mode)."""
    x = np.sort(np.asarray(draws, dtype=float))
    n = x.size
    m = int(math.floor(ci_level * n))
    if m < 1 or m >= n:
        return float(x[0]), float(x[-1])
    widths = x[m:] - x[: n - m]
    i = int(np.argmin(widths))
    return float(x[i]), float(x[i + m])


def _flat(values: np.ndarray) -> np.ndarray:
    return values.reshape(-1, *values.shape[2:])


def _bayes_eta(model: Any, data: pd.DataFrame, formula: str) -> tuple[np.ndarray, list[Any]]:
    """Linear predictor per draw (S x n) for the rows the Bayesian model was fitted to."""
    from models.formula import build_design, parse_formula

    design = build_design(parse_formula(formula), data)
    post = model.idata_.posterior
    terms = [str(t) for t in post["fixed"].coords["term"].values]
    beta = _flat(post["fixed"].values)
    X = design.X.loc[:, terms].to_numpy(dtype=float)
    eta = beta @ X.T
    for r, block in enumerate(design.random):
        re = _flat(post[f"re_{r}"].values)  # S x levels x q
        fitted_levels = pd.Index([str(v) for v in post[f"level_{r}"].values])
        labels = [str(v) for v in np.asarray(block.levels)[block.codes]]
        idx = fitted_levels.get_indexer(labels)
        if (idx < 0).any():  # pragma: no cover - same data as the fit
            raise RuntimeError("group levels of the Bayesian fit do not match the data")
        eta = eta + np.einsum("snq,nq->sn", re[:, idx, :], np.asarray(block.Z, dtype=float))
    return eta, list(design.random)


def _density(x: np.ndarray, link: str) -> np.ndarray:
    from scipy import special, stats

    if link == "probit":
        return stats.norm.pdf(x)
    p = special.expit(x)
    return p * (1.0 - p)


def _lmm_effects(model: Any, predictors: pd.DataFrame) -> pd.DataFrame:
    fixed = model.fixed_.set_index("term")
    info = predictors.set_index("predictor")
    rows = []
    for term in predictors["predictor"]:
        rec = fixed.loc[term]
        rows.append(
            {
                "engine": "lmm",
                "scale": "rating",
                "quantity": "coefficient",
                "term": term,
                "label": info.at[term, "label"],
                "kind": info.at[term, "kind"],
                "part": info.at[term, "part"],
                "estimate": rec["estimate"],
                "se": rec["se"],
                "df": rec["df"],
                "p_value": rec["p_value"],
                "ci_low": rec["ci_low"],
                "ci_high": rec["ci_high"],
            }
        )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)


def _clmm_effects(model: Any, predictors: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """Coefficients (logit) and average marginal effects on the expected rating (Wald)."""
    info = predictors.set_index("predictor")
    eta = model.linear_predictor().to_numpy()
    cats = np.asarray(model.categories_, dtype=float)
    gaps = np.diff(cats)
    slope = float(
        (_density(model.cutpoints_[None, :] - eta[:, None], model.link) * gaps).sum(axis=1).mean()
    )
    fixed = model.fixed_.set_index("term")
    rows = []
    for term in predictors["predictor"]:
        if term not in fixed.index:
            continue
        rec = fixed.loc[term]
        base = {
            "engine": "clmm",
            "term": term,
            "label": info.at[term, "label"],
            "kind": info.at[term, "kind"],
            "part": info.at[term, "part"],
            "df": np.nan,
            "p_value": rec["p_value"],
        }
        for scale, quantity, factor in (
            ("logit", "coefficient", 1.0),
            ("rating", "average marginal effect", slope),
        ):
            rows.append(
                {
                    **base,
                    "scale": scale,
                    "quantity": quantity,
                    "estimate": rec["estimate"] * factor,
                    "se": rec["se"] * factor,
                    "ci_low": rec["ci_low"] * factor,
                    "ci_high": rec["ci_high"] * factor,
                }
            )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS), slope


def _point_shares(
    engine: str, label: str, scale: str, comps: list[tuple[str, float]]
) -> pd.DataFrame:
    """Variance shares of point estimates (no intervals); a component at 0 is flagged."""
    total = sum(v for _, v in comps)
    rows = [
        {
            "engine": engine,
            "model": label,
            "scale": scale,
            "component": component,
            "variance": var,
            "variance_ci_low": np.nan,
            "variance_ci_high": np.nan,
            "icc": var / total,
            "icc_ci_low": np.nan,
            "icc_ci_high": np.nan,
            "at_boundary": bool(component != "residual" and var <= 1e-8 * total),
        }
        for component, var in comps
    ]
    return pd.DataFrame(rows, columns=VARIANCE_COLUMNS)


def _clmm_variance(model: Any, *, id_col: str) -> pd.DataFrame:
    names = {id_col: "participant", "session_id": "session", "story_id": "story"}
    rand = model.random_[model.random_["term"] == "Intercept"]
    comps = [(names.get(r.group, r.group), float(r.variance)) for r in rand.itertuples()]
    comps.append(("residual", math.pi**2 / 3.0 if model.link == "logit" else 1.0))
    return _point_shares("clmm", "conditional", model.link, comps)


def _bayes_effects(
    model: Any, data: pd.DataFrame, formula: str, predictors: pd.DataFrame, ci_level: float
) -> tuple[pd.DataFrame, np.ndarray]:
    info = predictors.set_index("predictor")
    post = model.idata_.posterior
    terms = [str(t) for t in post["fixed"].coords["term"].values]
    beta = _flat(post["fixed"].values)
    cut = _flat(post["cutpoints"].values)
    link = model.link
    eta, _ = _bayes_eta(model, data, formula)
    # d E[y] / d eta = sum_k f(c_k - eta) for y = 1 + #{k: latent > c_k}, categories 1 apart;
    # with other category values use the spacing between consecutive categories.
    cats = np.asarray(model.categories_, dtype=float)
    gaps = np.diff(cats)
    slope = (_density(cut[:, None, :] - eta[:, :, None], link) * gaps).sum(axis=-1).mean(axis=1)
    table = model.fixed_effects().set_index("term")
    rows = []
    for j, term in enumerate(terms):
        if term not in info.index:
            continue
        base = {
            "engine": "bayes_ordinal",
            "term": term,
            "label": info.at[term, "label"],
            "kind": info.at[term, "kind"],
            "part": info.at[term, "part"],
            "df": np.nan,
            "p_value": np.nan,
            "r_hat": table.at[term, "r_hat"],
            "ess_bulk": table.at[term, "ess_bulk"],
        }
        for scale, quantity, draws in (
            ("logit", "coefficient", beta[:, j]),
            ("rating", "average marginal effect", beta[:, j] * slope),
        ):
            lo, hi = _hdi(draws, ci_level)
            rows.append(
                {
                    **base,
                    "scale": scale,
                    "quantity": quantity,
                    "estimate": float(draws.mean()),
                    "se": float(draws.std(ddof=1)),
                    "ci_low": lo,
                    "ci_high": hi,
                    "prob_positive": float(np.mean(draws > 0)),
                }
            )
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS), slope


def _lmm_variance(model: Any, *, id_col: str, label: str) -> pd.DataFrame:
    rand = model.random_
    names = {id_col: "participant", "session_id": "session", "story_id": "story"}
    intercepts = rand[(rand["term"] == "Intercept") | (rand["group"] == "Residual")]
    comps = [
        ("residual" if r.group == "Residual" else names.get(r.group, r.group), float(r.variance))
        for r in intercepts.itertuples(index=False)
    ]
    return _point_shares("lmm", label, "rating", comps)


def _bayes_variance(model: Any, blocks: list[Any], *, id_col: str, ci_level: float) -> pd.DataFrame:
    post = model.idata_.posterior
    names = {id_col: "participant", "session_id": "session", "story_id": "story"}
    comps: list[tuple[str, np.ndarray]] = []
    for r, block in enumerate(blocks):
        terms = [str(t) for t in block.terms]
        if "Intercept" not in terms:
            continue
        sd = _flat(post[f"sd_{r}"].values)[:, terms.index("Intercept")]
        comps.append((names.get(block.group, block.group), sd**2))
    resid = math.pi**2 / 3.0 if model.link == "logit" else 1.0
    comps.append(("residual", np.full_like(comps[0][1] if comps else np.zeros(1), resid)))
    total = sum(v for _, v in comps)
    rows = []
    for component, var in comps:
        share = var / total
        vlo, vhi = _hdi(var, ci_level)
        ilo, ihi = _hdi(share, ci_level)
        fixed_resid = component == "residual"
        rows.append(
            {
                "engine": "bayes_ordinal",
                "model": "conditional",
                "scale": model.link,
                "component": component,
                "variance": float(var.mean()),
                "variance_ci_low": np.nan if fixed_resid else vlo,
                "variance_ci_high": np.nan if fixed_resid else vhi,
                "icc": float(share.mean()),
                "icc_ci_low": ilo,
                "icc_ci_high": ihi,
                "at_boundary": False,
            }
        )
    return pd.DataFrame(rows, columns=VARIANCE_COLUMNS)


def fit_empathy_models(
    data: EmpathyData,
    *,
    include_bayes: bool = True,
    include_clmm: bool = True,
    story_effects: bool = True,
    draws: int = 500,
    tune: int = 500,
    chains: int = 2,
    sampler: str | None = None,
    seed: int = 2024,
    ci_level: float = 0.95,
    target_accept: float = 0.9,
) -> EmpathyEffects:
    """Fit the empathy model with both engines and tabulate effects and variance shares.

    Parameters
    ----------
    data : EmpathyData
        From :func:`empathy_data`.
    include_bayes : bool, default True
        Also fit the Bayesian cumulative-logit model (needs whole-number ratings).
    include_clmm : bool, default True
        Also fit the cumulative link (ordinal) mixed model by maximum likelihood (needs
        whole-number ratings).
    story_effects : bool, default True
        Random intercept per story in the effects models.
    draws, tune, chains : int, default 500, 500, 2
        Sampler settings of the Bayesian model.
    sampler : {"nutpie", "pymc", "numpyro"}, optional
        NUTS implementation; default nutpie when installed, else PyMC.
    seed : int, default 2024
        Seed of the sampler.
    ci_level : float, default 0.95
        Level of every interval.
    target_accept : float, default 0.9
        NUTS target acceptance of the Bayesian model.

    Returns
    -------
    EmpathyEffects
        Effects of both engines, the variance decomposition, the fitted models and notes.

    Raises
    ------
    longitudinal.InvalidParameterError
        For invalid options, or ``include_bayes=True`` with ratings that are not whole
        numbers.

    Warns
    -----
    models.ConvergenceWarning, models.SingularFitWarning, models.SamplingWarning
        Re-issued from the engines (and also listed in ``notes``).

    Notes
    -----
    **Model.** ``rating ~ predictors + week + (1 + week | participant) + (1 | story)``,
    the LMM by REML on the rating (Satterthwaite df), the Bayesian model as
    ``P(rating <= k) = F(c_k - eta)`` with the same linear predictor ``eta`` (no intercept;
    the cutpoints carry the location) and the default priors of
    :class:`models.bayes.BayesianMixedModel`.

    **Scales.** LMM coefficients are rating points per unit of the predictor (one SD for the
    standardized ones). Bayesian coefficients are latent logit units and are *not* on that
    scale. To put them side by side, each Bayesian draw is also converted to an average
    marginal effect on the expected rating, ``beta_k * mean_i sum_j f(c_j - eta_i)`` (``f``
    the logistic density; ``eta_i`` includes the participant and story effects of row
    ``i``), the average slope of ``E[rating]`` in the predictor. Both versions are in the
    table, labelled by ``scale`` and ``quantity``.

    **Variance decomposition.** The LMM shares come from an intercept-only model with
    participant, session and story intercepts (the classic unconditional decomposition),
    and from the effects model (participant intercept variance at week 0, story, residual).
    The Bayesian shares are on the latent scale, conditional on the predictors, with the
    residual variance of the logistic distribution, ``pi^2 / 3``.

    Validated by simulation (:mod:`longitudinal.simulate`): the logit coefficients of the
    Bayesian model cover ``truth.json``'s ``empathy.fixed``, the LMM coefficients cover
    ``fixed`` times the true average slope of ``E[rating]`` and the two engines agree
    (``tests/longitudinal/test_predict.py``).

    Examples
    --------
    >>> from longitudinal.predict import empathy_data, fit_empathy_models
    >>> effects = fit_empathy_models(empathy_data(study), seed=1)  # doctest: +SKIP
    >>> effects.effects.query("scale == 'rating'")  # doctest: +SKIP
    """
    func = "fit_empathy_models"
    if not isinstance(data, EmpathyData):
        raise InvalidParameterError(
            f"the `data` parameter of {func} must be an EmpathyData (from empathy_data); "
            f"got {type(data).__name__}"
        )
    flags = (
        ("include_bayes", include_bayes),
        ("include_clmm", include_clmm),
        ("story_effects", story_effects),
    )
    for name, value in flags:
        if not isinstance(value, bool):
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must be True or False; got {value!r}"
            )
    draws = _check_int(draws, name="draws", func=func, minimum=1)
    tune = _check_int(tune, name="tune", func=func, minimum=0)
    chains = _check_int(chains, name="chains", func=func, minimum=1)
    seed = _check_int(seed, name="seed", func=func, minimum=0)
    ci_level = _check_ci(ci_level, func=func)
    frame = data.data
    response = data.response_col
    if include_bayes or include_clmm:
        _check_whole(frame[response], func=func)
    sampler = sampler or _default_sampler()

    from models.lmm import LinearMixedModel

    formula = empathy_formula(data, story_effects=story_effects)
    caught: list[warnings.WarningMessage] = []
    timings: dict[str, float] = {}
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        start = time.perf_counter()
        lmm = LinearMixedModel(formula, reml=True, ci_level=ci_level).fit(frame)
        # The stated rule: step the random effects down while the fit is singular or does
        # not converge, first the week slope per participant, then the story intercept.
        slope = True
        simpler = empathy_formula(data, story_effects=story_effects, random_slope=False)
        if (lmm.singular_ or not lmm.converged_) and simpler != formula:
            why = "a singular fit" if lmm.singular_ else "no convergence"
            formula, slope = simpler, False
            lmm = LinearMixedModel(formula, reml=True, ci_level=ci_level).fit(frame)
            warnings.warn(
                f"the random week slope per participant gave {why}; the empathy models have "
                "a random intercept per participant instead",
                DataQualityWarning,
                stacklevel=2,
            )
        if lmm.singular_ and story_effects:
            formula = empathy_formula(data, story_effects=False, random_slope=slope)
            lmm = LinearMixedModel(formula, reml=True, ci_level=ci_level).fit(frame)
            warnings.warn(
                "the story random intercept was estimated at (or near) zero, a singular fit; "
                "the empathy models leave it out",
                DataQualityWarning,
                stacklevel=2,
            )
        timings["lmm"] = time.perf_counter() - start
        random = f"(1 | {data.id_col}) + (1 | session_id)"
        if story_effects:
            random += " + (1 | story_id)"
        null = LinearMixedModel(f"{response} ~ 1 + {random}", reml=True).fit(frame)
        clmm = None
        if include_clmm:
            from models.ordinal import OrdinalMixedModel

            start = time.perf_counter()
            try:
                clmm = OrdinalMixedModel(formula, ci_level=ci_level).fit(frame)
            except ModelsError as err:
                warnings.warn(
                    f"the cumulative link (ordinal) mixed model could not be fitted: {err}",
                    DataQualityWarning,
                    stacklevel=2,
                )
            timings["clmm"] = time.perf_counter() - start
        bayes = None
        if include_bayes:
            from models.bayes import BayesianMixedModel

            start = time.perf_counter()
            bayes = BayesianMixedModel(
                formula,
                family="ordinal",
                draws=draws,
                tune=tune,
                chains=chains,
                sampler=sampler,  # type: ignore[arg-type]
                target_accept=target_accept,
                ci_level=ci_level,
                seed=seed,
            ).fit(frame)
            timings["bayes"] = time.perf_counter() - start
    caught.extend(rec)
    notes: list[str] = []
    for w in caught:
        text = f"{w.category.__name__}: {_short(str(w.message))}"
        if text not in notes:
            notes.append(text)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    parts = [_lmm_effects(lmm, data.predictors)]
    variance = [
        _lmm_variance(null, id_col=data.id_col, label="unconditional"),
        _lmm_variance(lmm, id_col=data.id_col, label="conditional"),
    ]
    meta: dict[str, Any] = {
        "package_version": _package_version(),
        "formula": formula,
        "n_obs": int(len(frame)),
        "n_participants": int(frame[data.id_col].nunique()),
        "n_dropped": data.n_dropped,
        "ci_level": ci_level,
        "seconds": timings,
    }
    if clmm is not None:
        table, clmm_slope = _clmm_effects(clmm, data.predictors)
        parts.append(table)
        variance.append(_clmm_variance(clmm, id_col=data.id_col))
        meta["clmm"] = {
            "converged": clmm.converged_,
            "singular": clmm.singular_,
            "loglik": clmm.loglik_,
            "marginal_slope": clmm_slope,
        }
    if bayes is not None:
        table, slope = _bayes_effects(bayes, frame, formula, data.predictors, ci_level)
        parts.append(table)
        _, blocks = _bayes_eta(bayes, frame, formula)
        variance.append(_bayes_variance(bayes, blocks, id_col=data.id_col, ci_level=ci_level))
        meta.update(
            bayes={
                "sampler": sampler,
                "draws": draws,
                "tune": tune,
                "chains": chains,
                "seed": seed,
                "failures": list(bayes.diagnostics_["failures"]),
                "marginal_slope": float(slope.mean()),
            }
        )
    effects = pd.concat(parts, ignore_index=True)
    return EmpathyEffects(
        effects=effects,
        variance=pd.concat(variance, ignore_index=True),
        predictors=data.predictors.copy(),
        formula=formula,
        lmm=lmm,
        bayes=bayes,
        notes=tuple(notes),
        meta=meta,
        clmm=clmm,
    )


def _check_whole(values: pd.Series, *, func: str) -> None:
    v = values.to_numpy(dtype=float)
    if not np.all(np.equal(np.round(v), v)):
        raise InvalidParameterError(
            f"{func}: the ordinal models need whole-number ratings; this study has "
            "fractional ones (a continuous slider?). Pass include_bayes=False and "
            "include_clmm=False."
        )


# ---------------------------------------------------------------------------------------------
# reading and plotting the effects


_CLEAR = {  # how a clear effect is read, by kind and part of the predictor
    ("trait", "person"): "people with a higher {label} score gave {direction} empathy ratings",
    ("state", "between"): (
        "people whose {label} was higher on average across the surveys gave {direction} "
        "empathy ratings"
    ),
    ("state", "within"): (
        "when a person's {label} at the latest survey was above their own average, their "
        "empathy ratings were {direction}"
    ),
    ("session", "between"): (
        "people with more {label} on average across their sessions gave {direction} empathy ratings"
    ),
    ("session", "within"): (
        "in sessions with more {label} than the person's own average, empathy ratings were "
        "{direction}"
    ),
    ("time", "time"): "empathy ratings were {direction} as the weeks went by",
}


SMALL_SAMPLE = 20
"""Below this many participants every inferential paragraph carries a small-sample caveat."""


def describe_effects(
    effects: pd.DataFrame,
    *,
    ci_level: float = 0.95,
    n_people: int | None = None,
    lmm_problem: str | None = None,
    bayes_problem: str | None = None,
) -> pd.DataFrame:
    """Read each effect in plain language, saying no more than the model supports.

    Parameters
    ----------
    effects : pandas.DataFrame
        :attr:`EmpathyEffects.effects`.
    ci_level : float, default 0.95
        The level the intervals were computed at (used in the wording).
    n_people : int, optional
        Participants in the model; below :data:`SMALL_SAMPLE` every paragraph says so.
    lmm_problem, bayes_problem : str, optional
        Why a model's estimates must not be read (a singular or unconverged fit, failed
        sampling diagnostics); that model's effects are then not narrated.

    Returns
    -------
    pandas.DataFrame
        One row per predictor: ``term``, ``label``, ``kind``, ``part``, ``direction``
        (``higher``, ``lower``, or missing when the interval includes zero or cannot be
        trusted), ``clear`` (the LMM interval excludes 0), ``agree`` (the Bayesian average
        marginal effect has the same sign as the LMM estimate; missing without a usable
        Bayesian fit) and ``text``.

    Raises
    ------
    longitudinal.InvalidParameterError
        When ``effects`` lacks the columns of :data:`EFFECT_COLUMNS` or LMM rows.

    Notes
    -----
    The gates: an interval that includes zero is never read as a direction; an estimate whose
    Satterthwaite df is below 1 or whose interval is not finite or absurdly wide (more than
    100 times the rating scale's usual range) is reported as unusable; a model named in
    ``lmm_problem`` or ``bayes_problem`` is not narrated at all.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.predict import EFFECT_COLUMNS, describe_effects
    >>> row = dict.fromkeys(EFFECT_COLUMNS, float("nan"))
    >>> row.update(engine="lmm", scale="rating", quantity="coefficient", term="week",
    ...            label="weeks since the first session", kind="time", part="time",
    ...            estimate=0.05, ci_low=-0.02, ci_high=0.12, df=80.0)
    >>> print(describe_effects(pd.DataFrame([row]))["text"].iloc[0])
    Weeks since the first session: +0.05 rating points per week, 95% CI −0.02 to 0.12. The
    interval includes zero, so these data do not show a direction.
    """
    func = "describe_effects"
    if not isinstance(effects, pd.DataFrame) or any(
        c not in effects.columns for c in EFFECT_COLUMNS
    ):
        raise InvalidParameterError(
            f"the `effects` parameter of {func} must be the effects table of "
            f"fit_empathy_models (columns {EFFECT_COLUMNS})"
        )
    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    if lmm.empty:
        raise InvalidParameterError(f"the `effects` parameter of {func} has no LMM rows")
    bayes = effects[(effects["engine"] == "bayes_ordinal") & (effects["scale"] == "rating")]
    bayes = bayes.set_index("term")
    pct = f"{100 * ci_level:g}%"
    caveat = (
        f" With {n_people} participants this estimate is imprecise and may not replicate."
        if n_people is not None and n_people < SMALL_SAMPLE
        else ""
    )
    rows = []
    for rec in lmm.itertuples(index=False):
        unit = "week" if rec.kind == "time" else "SD"
        label = rec.label[:1].upper() + rec.label[1:]
        width = rec.ci_high - rec.ci_low
        usable = (
            np.isfinite(rec.ci_low)
            and np.isfinite(rec.ci_high)
            and width < 400
            and not (np.isfinite(rec.df) and rec.df < 1)
        )
        clear = bool(usable and (rec.ci_low > 0 or rec.ci_high < 0))
        direction: Any = pd.NA
        if lmm_problem:
            text = f"{label}: not interpreted, because {lmm_problem}."
        elif not usable:
            text = (
                f"{label}: the model cannot estimate this effect reliably (Satterthwaite df "
                f"{_num(rec.df)}, {pct} CI {_num(rec.ci_low)} to {_num(rec.ci_high)}); it is "
                "not interpreted."
            )
        else:
            text = (
                f"{label}: {_signed(rec.estimate)} rating points per {unit}, {pct} CI "
                f"{_num(rec.ci_low)} to {_num(rec.ci_high)}. "
            )
            if clear:
                direction = "higher" if rec.estimate >= 0 else "lower"
                reading = _CLEAR.get(
                    (rec.kind, rec.part), "higher {label} went with {direction} empathy ratings"
                ).format(label=rec.label, direction=direction)
                text += f"The interval excludes zero: in these data, {reading}."
            else:
                text += "The interval includes zero, so these data do not show a direction."
            text += caveat
        agree: Any = pd.NA
        if rec.term in bayes.index and not bayes_problem:
            b = bayes.loc[rec.term]
            agree = bool(np.sign(b["estimate"]) == np.sign(rec.estimate))
            text += (
                f" The Bayesian ordinal model gives {_signed(b['estimate'])} points "
                f"({pct} HDI {_num(b['ci_low'])} to {_num(b['ci_high'])}); posterior "
                f"probability of a positive effect {_share(b['prob_positive'])}."
            )
        rows.append(
            {
                "term": rec.term,
                "label": rec.label,
                "kind": rec.kind,
                "part": rec.part,
                "direction": direction,
                "clear": clear,
                "agree": agree,
                "text": text,
            }
        )
    return pd.DataFrame(rows)


def _num(value: float, digits: int = 2) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    return f"{value:.{digits}f}".replace("-", "−")


def _share(p: float) -> str:
    if p >= 0.995:
        return "above 99%"
    if p <= 0.005:
        return "below 1%"
    return f"{100 * p:.0f}%"


def _signed(value: float, digits: int = 2) -> str:
    return ("+" if value >= 0 else "") + _num(value, digits)


def _term_label(rec: Any) -> str:
    if rec.part in ("between", "within"):
        return f"{rec.label} [{rec.part}]"
    return str(rec.label)


def plot_effects(effects: pd.DataFrame, *, ci_level: float = 0.95) -> Figure:
    """Forest plot of the standardized effects of both engines, side by side.

    Parameters
    ----------
    effects : pandas.DataFrame
        :attr:`EmpathyEffects.effects`.
    ci_level : float, default 0.95
        Level of the intervals (for the axis label).

    Returns
    -------
    matplotlib.figure.Figure
        Left panel: rating points per SD (per week for time) — LMM coefficients with their
        confidence intervals and, offset below them, the Bayesian average marginal effects
        with their HDIs. Right panel (with a Bayesian fit): the Bayesian coefficients on the
        latent logit scale, on their own axis.

    Raises
    ------
    longitudinal.InvalidParameterError
        When ``effects`` lacks the columns of :data:`EFFECT_COLUMNS`.

    Examples
    --------
    >>> from longitudinal.predict import plot_effects
    >>> fig = plot_effects(fitted.effects)  # doctest: +SKIP
    """
    func = "plot_effects"
    if not isinstance(effects, pd.DataFrame) or any(
        c not in effects.columns for c in EFFECT_COLUMNS
    ):
        raise InvalidParameterError(
            f"the `effects` parameter of {func} must be the effects table of "
            f"fit_empathy_models (columns {EFFECT_COLUMNS})"
        )
    _check_ci(ci_level, func=func)
    from matplotlib.figure import Figure

    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    bayes_r = effects[(effects["engine"] == "bayes_ordinal") & (effects["scale"] == "rating")]
    bayes_l = effects[(effects["engine"] == "bayes_ordinal") & (effects["scale"] == "logit")]
    clmm_r = effects[(effects["engine"] == "clmm") & (effects["scale"] == "rating")]
    clmm_l = effects[(effects["engine"] == "clmm") & (effects["scale"] == "logit")]
    order = list(dict.fromkeys(effects["term"]))
    labels = {rec.term: _term_label(rec) for rec in effects.drop_duplicates("term").itertuples()}
    n = len(order)
    two = not (bayes_l.empty and clmm_l.empty)
    from longitudinal.plotting import figure_style

    with figure_style() as sns:
        palette = sns.color_palette("colorblind")
        fig = Figure(figsize=(12.0 if two else 7.5, 0.4 * n + 2.0), layout="constrained")
        grid = fig.add_gridspec(1, 2, width_ratios=[1.3, 1.0]) if two else fig.add_gridspec(1, 1)
        axes = [fig.add_subplot(grid[0, k]) for k in range(2 if two else 1)]
        y = {t: n - 1 - i for i, t in enumerate(order)}
        pct = f"{100 * ci_level:g}%"

        def draw(ax, table, offset, color, marker, label):
            if table.empty:
                return
            ys = np.array([y[t] + offset for t in table["term"]])
            est = table["estimate"].to_numpy(dtype=float)
            lo = est - table["ci_low"].to_numpy(dtype=float)
            hi = table["ci_high"].to_numpy(dtype=float) - est
            ax.errorbar(
                est,
                ys,
                xerr=[lo, hi],
                fmt=marker,
                color=color,
                ecolor=color,
                capsize=2.5,
                markersize=5,
                linewidth=1.2,
                label=label,
            )

        ax = axes[0]
        draw(ax, lmm, 0.2, palette[0], "o", f"LMM coefficient ({pct} CI)")
        draw(
            ax,
            clmm_r,
            0.0,
            palette[2],
            "^",
            f"ordinal mixed model: average marginal effect ({pct} CI)",
        )
        draw(
            ax,
            bayes_r,
            -0.2,
            palette[1],
            "s",
            f"Bayesian ordinal: average marginal effect ({pct} HDI)",
        )
        ax.axvline(0.0, color="0.4", linewidth=0.8, linestyle="--")
        ax.set_yticks([y[t] for t in order], [labels[t] for t in order])
        ax.set_xlabel("rating points per SD of the predictor\n(weeks: per week)")
        ax.set_title("Effects on the 1–5 rating")
        ax.grid(axis="x", color="0.9")
        ax.set_ylim(-0.7, n - 0.3)
        if two:
            ax2 = axes[1]
            draw(ax2, clmm_l, 0.1, palette[2], "v", f"ordinal mixed model: coefficient ({pct} CI)")
            draw(ax2, bayes_l, -0.1, palette[1], "D", f"Bayesian ordinal: coefficient ({pct} HDI)")
            ax2.axvline(0.0, color="0.4", linewidth=0.8, linestyle="--")
            ax2.set_yticks([y[t] for t in order], [""] * n)
            ax2.set_xlabel("latent logit units per SD (weeks: per week)\nnot the rating scale")
            ax2.set_title("Cumulative-logit coefficients")
            ax2.grid(axis="x", color="0.9")
            ax2.set_ylim(ax.get_ylim())
        fig.legend(loc="outside lower center", ncols=3, fontsize=8, frameon=False)
    return fig


# ---------------------------------------------------------------------------------------------
# report section


@dataclass(frozen=True)
class EffectsSection:
    """The "What predicts empathy" section of a report.

    Attributes
    ----------
    anchor : str
        HTML id of the section (``"predictors"``).
    heading : str
        ``"What predicts empathy"``.
    html : str
        Section body: the reading of each effect, the effects table, the forest plot (PNG
        embedded as a data URI, with a link to the file), the variance table and a note on
        the scales. Every text is escaped.
    tables : dict of str to pandas.DataFrame
        ``empathy_effects``, ``empathy_variance``, ``empathy_predictors``,
        ``empathy_reading`` at full precision, for ``tables/*.csv``.
    figures : dict of str to tuple of (str, str)
        ``{"empathy_effects": (file relative to the report folder, caption)}``.
    notes : tuple of str
        Warnings raised while fitting (recorded, not re-issued).
    """

    anchor: str
    heading: str
    html: str
    tables: dict[str, pd.DataFrame]
    figures: dict[str, tuple[str, str]]
    notes: tuple[str, ...]


def _html_table(frame: pd.DataFrame, columns: Mapping[str, str], *, caption: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in columns.values())
    body = []
    for rec in frame.itertuples(index=False):
        cells = []
        for c in columns:
            v = getattr(rec, c)
            if isinstance(v, float | np.floating):
                shown = "–" if not np.isfinite(v) else _num(float(v), 3 if c == "icc" else 2)
                if c in ("p_value", "O_p") and np.isfinite(v):
                    shown = "< .001" if v < 0.001 else f"{v:.3f}".lstrip("0")
                cls = "num"
            elif isinstance(v, bool | np.bool_):
                shown, cls = ("yes" if v else "no"), "text"
            else:
                shown, cls = str(v), "text"
            cells.append(f'<td class="{cls}">{html.escape(shown)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f"<table><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _lmm_problem(lmm: Any) -> str | None:
    """Why the mixed model's effects must not be read, or None."""
    if not lmm.converged_:
        return "its fit did not converge"
    if lmm.singular_:
        return "its fit is singular (a variance estimated at zero or a correlation at ±1)"
    return None


def _bayes_problem(bayes: Any) -> str | None:
    """Why the Bayesian model's effects must not be read (failed diagnostics), or None."""
    if bayes is None:
        return None
    diagnostics = getattr(bayes, "diagnostics_", None) or {}
    if diagnostics.get("passed", True):
        return None
    return "; ".join(diagnostics.get("messages", [])) or "its sampling diagnostics failed"


def _bayes_remedy(problem: str) -> str:
    return (
        f"The Bayesian ordinal model did not pass its sampling diagnostics ({problem}), so "
        "none of its estimates is read here. Longer sampling usually fixes it: "
        "longitudinal report STUDY --out DIR --bayes --draws 2000 --tune 2000 --chains 4 "
        "--target-accept 0.95 (and --sampler nutpie when it is installed)."
    )


def empathy_effects_section(
    study: Study,
    out_dir: str | os.PathLike[str],
    *,
    include_bayes: bool = True,
    traits: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
    session_features: Sequence[str] | None = None,
    story_effects: bool = True,
    draws: int = 500,
    tune: int = 500,
    chains: int = 2,
    sampler: str | None = None,
    seed: int = 2024,
    ci_level: float = 0.95,
    figure_dir: str = "figures",
    target_accept: float = 0.9,
) -> EffectsSection:
    """Fit the empathy models and build the "What predicts empathy" report section.

    Parameters
    ----------
    study : longitudinal.study.Study
        A loaded study.
    out_dir : str or path-like
        The report folder; the forest plot is written to ``out_dir / figure_dir /
        "empathy_effects.png"``.
    include_bayes : bool, default True
        Fit the Bayesian ordinal model too (skipped, with a note, when the ratings are not
        whole numbers).
    traits, states, session_features : sequence of str, optional
        Predictors (score columns, session feature names); by default the study's (see
        :func:`empathy_data`).
    story_effects : bool, default True
        Random intercept per story (left out, with a note, when no story was rated twice).
    draws, tune, chains : int, default 500, 500, 2
        Sampler settings.
    sampler : str, optional
        Default nutpie when installed, else PyMC.
    seed : int, default 2024
        Sampler seed.
    ci_level : float, default 0.95
        Level of the intervals.
    figure_dir : str, default "figures"
        Folder of the figure, relative to ``out_dir``.
    target_accept : float, default 0.9
        NUTS target acceptance of the Bayesian model (raise it after divergent transitions).

    Returns
    -------
    EffectsSection
        HTML body, full-precision tables, the figure and the notes.

    Raises
    ------
    longitudinal.InvalidParameterError
        As :func:`empathy_data` and :func:`fit_empathy_models`.

    Notes
    -----
    Warnings of the fits are caught and returned in ``notes`` (a report records them rather
    than re-issuing them). No participant id appears in the tables, text or figure.

    Examples
    --------
    >>> from longitudinal.predict import empathy_effects_section
    >>> section = empathy_effects_section(study, "report")  # doctest: +SKIP
    >>> sorted(section.tables)  # doctest: +SKIP
    ['empathy_effects', 'empathy_predictors', 'empathy_reading', 'empathy_variance']
    """
    func = "empathy_effects_section"
    _check_study(study, func=func)
    notes: list[str] = []
    data = empathy_data(study, traits=traits, states=states, session_features=session_features)
    bayes_ok = include_bayes
    v = data.data[data.response_col].to_numpy(dtype=float)
    clmm_ok = bool(np.all(np.equal(np.round(v), v)))
    if not clmm_ok:
        bayes_ok = False
        notes.append("the ordinal models were not fitted: the ratings are not whole numbers")
    if story_effects and data.data["story_id"].nunique() >= len(data.data):
        # One rating per story: a story intercept cannot be told apart from the residual.
        story_effects = False
        notes.append("no story was rated more than once, so the models have no story random effect")
    with _recording(notes, prefix="empathy models"):
        fitted = fit_empathy_models(
            data,
            include_bayes=bayes_ok,
            include_clmm=clmm_ok,
            story_effects=story_effects,
            draws=draws,
            tune=tune,
            chains=chains,
            sampler=sampler,
            seed=seed,
            ci_level=ci_level,
            target_accept=target_accept,
        )
    lmm_problem = _lmm_problem(fitted.lmm)
    clmm_problem = _lmm_problem(fitted.clmm) if fitted.clmm is not None else None
    bayes_problem = _bayes_problem(fitted.bayes)
    reading = describe_effects(
        fitted.effects,
        ci_level=ci_level,
        n_people=int(fitted.meta["n_participants"]),
        lmm_problem=lmm_problem,
        bayes_problem=bayes_problem,
    )
    folder = Path(out_dir) / figure_dir
    folder.mkdir(parents=True, exist_ok=True)
    fig = plot_effects(fitted.effects, ci_level=ci_level)
    from longitudinal.plotting import save_figure

    png = save_figure(fig, folder / "empathy_effects.png")
    rel = f"{figure_dir}/empathy_effects.png"
    with_bayes = bool((fitted.effects["engine"] == "bayes_ordinal").any())
    with_clmm = fitted.clmm is not None
    ordinal = " and ".join(
        name
        for name, present in (("ordinal mixed model", with_clmm), ("Bayesian", with_bayes))
        if present
    )
    caption = (
        (
            f"Standardized effects on empathy ratings: LMM coefficients and {ordinal} average "
            f"marginal effects in rating points (left); {ordinal} coefficients in latent logit "
            "units (right)."
        )
        if ordinal
        else "Standardized effects on empathy ratings: LMM coefficients in rating points."
    )
    pct = f"{100 * ci_level:g}%"
    eff = fitted.effects
    wide = eff[(eff["scale"] == "rating") & (eff["engine"] == "lmm")][
        ["term", "label", "part", "estimate", "ci_low", "ci_high", "p_value"]
    ].copy()
    wide["label"] = [
        _term_label(r)
        for r in eff[(eff["scale"] == "rating") & (eff["engine"] == "lmm")].itertuples()
    ]
    columns = {
        "label": "predictor",
        "estimate": "LMM b",
        "ci_low": "low",
        "ci_high": "high",
        "p_value": "p",
    }
    c = eff[(eff["engine"] == "clmm")]
    if not c.empty:
        for scale, tag in (("rating", "OAME"), ("logit", "Ologit")):
            part = c[c["scale"] == scale].set_index("term")
            wide[f"{tag}_est"] = wide["term"].map(part["estimate"])
            wide[f"{tag}_low"] = wide["term"].map(part["ci_low"])
            wide[f"{tag}_high"] = wide["term"].map(part["ci_high"])
        wide["O_p"] = wide["term"].map(c[c["scale"] == "logit"].set_index("term")["p_value"])
        columns.update(
            {
                "OAME_est": "Ordinal AME",
                "OAME_low": "low",
                "OAME_high": "high",
                "Ologit_est": "Ordinal logit",
                "Ologit_low": "low",
                "Ologit_high": "high",
                "O_p": "p (z)",
            }
        )
    b = eff[(eff["engine"] == "bayes_ordinal")]
    if not b.empty:
        for scale, tag in (("rating", "AME"), ("logit", "logit")):
            part = b[b["scale"] == scale].set_index("term")
            wide[f"{tag}_est"] = wide["term"].map(part["estimate"])
            wide[f"{tag}_low"] = wide["term"].map(part["ci_low"])
            wide[f"{tag}_high"] = wide["term"].map(part["ci_high"])
        columns.update(
            {
                "AME_est": "Bayes AME",
                "AME_low": "low",
                "AME_high": "high",
                "logit_est": "Bayes logit",
                "logit_low": "low",
                "logit_high": "high",
            }
        )
    table_html = _html_table(
        wide,
        columns,
        caption=(
            f"Effects on the empathy rating per SD of each predictor (week: per week), "
            f"{pct} intervals. "
            + "LMM b: rating points (Satterthwaite t tests)"
            + (
                "; Ordinal AME: the cumulative link mixed model's average marginal effect on "
                "the expected rating (Wald intervals, z tests); Ordinal logit: its coefficient "
                "in latent logit units (a different scale)"
                if not c.empty
                else ""
            )
            + (
                "; Bayes AME and Bayes logit: the same two quantities from the Bayesian "
                "ordinal model (highest-density intervals)"
                if not b.empty
                else ""
            )
            + "."
        ),
    )
    var = fitted.variance
    icc_ci = {"icc_ci_low": "low", "icc_ci_high": "high"}
    if var[list(icc_ci)].isna().all().all():  # no interval was computed: no empty columns
        icc_ci = {}
    var_html = _html_table(
        var,
        {
            "engine": "engine",
            "model": "model",
            "scale": "scale",
            "component": "component",
            "variance": "variance",
            "icc": "share (ICC)",
            **icc_ci,
            "at_boundary": "at 0",
        },
        caption="Variance decomposition and intraclass correlations",
    )
    items = "".join(f"<li>{html.escape(t)}</li>" for t in reading["text"])
    n = fitted.meta["n_obs"]
    lead = (
        f"Model: {html.escape(fitted.formula)} on {n} ratings of "
        f"{fitted.meta['n_participants']} participants ({data.n_dropped} left out for a "
        "missing rating or predictor). Traits are standardized across participants; states "
        "(nearest preceding survey) and session features are split into a between-person part "
        "(the person's average) and a within-person part (the deviation from it). The linear "
        "mixed model is fitted to the 1–5 rating"
        + (
            "; the cumulative link (ordinal) mixed model treats the ratings as ordered "
            "categories (maximum likelihood, Laplace approximation, as R's ordinal::clmm): its "
            "coefficients are on the latent logit scale and are shown converted to average "
            "marginal effects on the expected rating"
            if fitted.clmm is not None
            else ""
        )
        + (
            "; the Bayesian model is a cumulative-logit (ordinal) model whose coefficients are "
            "on the latent logit scale, shown converted to average marginal effects on the "
            "expected rating next to the LMM."
            if with_bayes
            else ". The Bayesian ordinal model was not fitted for this report (`--bayes` adds "
            "it, about a minute more)."
        )
    )
    figure_html = (
        f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,'
        f'{base64.b64encode(png.read_bytes()).decode("ascii")}">'
        f'<figcaption>{html.escape(caption)} <a href="{html.escape(rel)}">{html.escape(rel)}'
        "</a></figcaption></figure>"
    )
    gates = "".join(
        f'<p class="note">{html.escape(problem)}</p>'
        for problem in (lmm_problem and f"The mixed model is not interpreted: {lmm_problem}.",
                        clmm_problem and f"The ordinal mixed model is shown, not interpreted: "
                        f"{clmm_problem}.",
                        bayes_problem and _bayes_remedy(bayes_problem))
        if problem
    )  # fmt: skip
    body = (
        f'<p>{lead}</p>{gates}<ul class="reading">{items}</ul>{table_html}{figure_html}{var_html}'
    )
    if notes:
        body += (
            '<ul class="notes">' + "".join(f"<li>{html.escape(t)}</li>" for t in notes) + "</ul>"
        )
    return EffectsSection(
        anchor="predictors",
        heading="What predicts empathy",
        html=body,
        tables={
            "empathy_effects": fitted.effects,
            "empathy_variance": fitted.variance,
            "empathy_predictors": fitted.predictors,
            "empathy_reading": reading,
        },
        figures={"empathy_effects": (rel, caption)},
        notes=tuple(notes),
    )


# ---------------------------------------------------------------------------------------------
# the prediction benchmark


@dataclass(frozen=True)
class EvaluationResult:
    """Metrics of the out-of-person prediction benchmark.

    Attributes
    ----------
    metrics : pandas.DataFrame
        ``model, split, seed, r, rho, acc, f1, mse`` (x 100), one row per model x split x
        seed; ``split`` is ``val`` or ``test`` (70/20/10 participant split) or ``kfold``
        (grouped K-fold: the metrics of every participant's out-of-fold prediction, pooled;
        see :func:`evaluate_predictions`). The package's
        models come first, then a researcher's (``predictions``), in order of appearance.
    summary : pandas.DataFrame
        :func:`models.evaluation.summarize_metrics` over seeds: ``model, split, n`` and
        ``{metric}_mean, {metric}_sd, {metric}_n``.
    runs : pandas.DataFrame
        One row per fitted model and test set: ``model, split, seed, fold, n_train, n_test,
        participants_train, participants_test, seconds`` (wall time of the fit and its
        predictions; the ``val`` and ``test`` rows of one fit repeat the same time; NaN for
        a researcher's model, fitted elsewhere).
    parameters : dict
        Everything needed to reproduce and read the numbers (threshold rule, sizes, seeds,
        k, model descriptions, sampler settings, package version, total seconds).
    notes : tuple of str
        Warnings of the fits and of the metrics (e.g. r undefined for the grand mean), and
        predictions of a researcher's model that were not scored.
    splits : pandas.DataFrame
        The participant splits used, ``scheme, seed, {participant column}, split``
        (:func:`longitudinal.splits.splits_table`; what ``longitudinal splits`` exports). Not
        written by :func:`run_evaluation` (its files name no participant).
    intervals : pandas.DataFrame
        Participant-cluster bootstrap intervals of the grouped K-fold metrics, one row per
        model x metric (:attr:`models.evaluation.KFoldBootstrap.intervals`: ``model, metric,
        estimate, ci_low, ci_high, ci_level, n_boot, n_groups``); empty without a K-fold.
    comparisons : pandas.DataFrame
        Paired differences between models on the same bootstrap draws, one row per pair x
        metric (:attr:`models.evaluation.KFoldBootstrap.comparisons`).
    """

    metrics: pd.DataFrame
    summary: pd.DataFrame
    runs: pd.DataFrame
    parameters: dict[str, Any]
    notes: tuple[str, ...]
    splits: pd.DataFrame = field(default_factory=pd.DataFrame)
    intervals: pd.DataFrame = field(default_factory=lambda: _empty(BOOTSTRAP_COLUMNS))
    comparisons: pd.DataFrame = field(default_factory=lambda: _empty(COMPARISON_COLUMNS))


def _fit_predict(
    model: str,
    raw: _Raw,
    train_ids: Sequence[str],
    tests: Mapping[str, Sequence[str]],
    *,
    seed: int,
    bayes: Mapping[str, Any],
    notes: list[str],
    random_slope: bool = True,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Fit ``model`` on the training participants; predict each test set (y, yhat)."""
    data = _standardize(raw, train_ids, func="evaluate_predictions")
    frame = data.data
    id_col = data.id_col
    response = data.response_col
    train = frame[frame[id_col].isin(list(train_ids))]
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    prefix = f"{model} (seed {seed})"
    if model in CONSTANT_MODELS:
        value = (
            majority_rating(train[response].to_numpy(dtype=float))
            if model == "majority_vote"
            else float(train[response].mean())
        )

        def predict(test: pd.DataFrame) -> np.ndarray:
            return np.full(len(test), value)

    elif model.startswith("lmm_"):
        from models.lmm import LinearMixedModel

        kinds = {
            "lmm_traits": ("trait",),
            "lmm_traits_session": ("trait", "session", "time"),
            "lmm_full": _KINDS,
        }[model]
        formula = empathy_formula(data, kinds=kinds, random_slope=random_slope, story_effects=False)
        with _recording(notes, prefix=prefix):
            fitted = LinearMixedModel(formula, reml=True).fit(train)

        def predict(test: pd.DataFrame) -> np.ndarray:
            return fitted.predict(test, re_form="~0").to_numpy(dtype=float)

    elif model == "clmm_full":
        from models.ordinal import OrdinalMixedModel

        formula = empathy_formula(data, random_slope=random_slope, story_effects=False)
        with _recording(notes, prefix=prefix):
            fitted_o = OrdinalMixedModel(formula).fit(train)

        def predict(test: pd.DataFrame) -> np.ndarray:
            return fitted_o.predict_expected(test, re_form="marginal").to_numpy(dtype=float)

    elif model == "bayes_ordinal":
        from models.bayes import BayesianMixedModel

        formula = empathy_formula(data, random_slope=random_slope, story_effects=False)
        with _recording(notes, prefix=prefix):
            fitted_b = BayesianMixedModel(formula, family="ordinal", seed=seed, **bayes).fit(train)

        def predict(test: pd.DataFrame) -> np.ndarray:
            proba = fitted_b.predict_proba(test, new_groups="population")
            values = np.asarray(proba.columns, dtype=float)
            return proba.to_numpy(dtype=float) @ values

    else:  # pragma: no cover - names are checked by the caller
        raise AssertionError(model)
    for name, ids in tests.items():
        test = frame[frame[id_col].isin(list(ids))]
        out[name] = (test[response].to_numpy(dtype=float), predict(test))
    return out


def _metric_row(
    model: str,
    split: str,
    seed: int,
    y: np.ndarray,
    yhat: np.ndarray,
    *,
    threshold: float,
    notes: list[str],
) -> dict[str, Any]:
    def expected(w: Any) -> bool:
        # a constant predictor: r and rho are undefined by design
        return (
            model in CONSTANT_MODELS
            and issubclass(w.category, DataQualityWarning)
            and "constant" in str(w.message)
        )

    with _recording(notes, prefix=f"{model} {split} (seed {seed})", expected=expected):
        m = prediction_metrics(y, yhat, threshold=threshold)
    row = {"model": model, "split": split, "seed": seed, **{k: getattr(m, k) for k in METRIC_NAMES}}
    if model in CONSTANT_MODELS:
        # pooled over K-fold folds, a constant predictor varies with the fold's training
        # participants; its correlation says nothing about prediction, so it stays undefined
        row["r"] = row["rho"] = float("nan")
    return row


CONSTANT_MODELS = ("majority_vote", "grand_mean")
"""The package's models that predict one value for everyone (r and rho undefined)."""


def majority_rating(ratings: np.ndarray) -> float:
    """Return the most frequent rating; ties broken by the distance to the mean, then lower.

    >>> majority_rating(np.array([1.0, 4.0, 4.0, 5.0, 5.0, 2.0]))
    4.0
    """
    values, counts = np.unique(ratings, return_counts=True)
    tied = values[counts == counts.max()]
    distance = np.abs(tied - ratings.mean())
    return float(tied[np.flatnonzero(distance == distance.min())[0]])


def _benchmark_data(
    study: Study, *, session_features: Sequence[str] | None, func: str
) -> tuple[_Raw, EmpathyData]:
    """Build the benchmark's ratings: raw predictors, and the frame standardized over all.

    Its rows are the ratings the benchmark scores and its participants the ones that
    :func:`longitudinal.splits.draw_splits` splits (for ``evaluate`` and ``splits`` alike).
    """
    raw = _raw_predictors(
        study, traits=None, states=None, session_features=session_features, func=func
    )
    return raw, _standardize(raw, None, func=func)


def evaluate_predictions(
    study: Study,
    *,
    seeds: int | Sequence[int] = 5,
    k: int = 5,
    models: Sequence[str] | None = None,
    include_bayes: bool = True,
    bayes_kfold: bool = False,
    threshold: float = DEFAULT_THRESHOLD,
    sizes: tuple[float, float, float] = SPLIT_SIZES,
    session_features: Sequence[str] | None = None,
    random_slope: bool = True,
    draws: int = 500,
    tune: int = 500,
    chains: int = 2,
    sampler: str | None = None,
    n_boot: int = 2000,
    ci_level: float = 0.95,
    bootstrap_seed: int = 0,
    predictions: pd.DataFrame
    | Mapping[str, pd.DataFrame]
    | str
    | os.PathLike[str]
    | Sequence[str | os.PathLike[str]]
    | None = None,
) -> EvaluationResult:
    """Run the out-of-person empathy prediction benchmark on a study.

    Parameters
    ----------
    study : longitudinal.study.Study
        A loaded study.
    seeds : int or sequence of int, default 5
        Split seeds; an int ``n`` means ``0, ..., n - 1``.
    k : int, default 5
        Folds of the grouped K-fold, repeated for every seed; 0 skips the K-fold.
    models : sequence of str, optional
        Subset of :data:`MODEL_DESCRIPTIONS` (default all, ``bayes_ordinal`` only with
        ``include_bayes``).
    include_bayes : bool, default True
        Include the Bayesian ordinal model.
    bayes_kfold : bool, default False
        Also fit the Bayesian model in every K-fold fold (``k`` times more sampling).
    threshold : float, default 3.0
        Binarisation cut for accuracy and F1: positive ("empathic") when rating or prediction
        > ``threshold``; 3.0, the midpoint of the 1-5 scale, makes whole-number ratings 4 and
        5 positive. The paper does not state its threshold; this one is recorded in the output.
    sizes : tuple of float, default (0.7, 0.2, 0.1)
        Train, validation and test shares of the participants.
    session_features : sequence of str, optional
        Session features used by the session and full models; by default the study's (see
        :func:`empathy_data`).
    random_slope : bool, default True
        Random week slope per participant in the models that have the week term
        (``lmm_traits`` has a random intercept only).
    draws, tune, chains : int, default 500, 500, 2
        Sampler settings of the Bayesian model, kept modest for run time (one fit per seed
        takes about 25 s on 2 cores); failed diagnostics are recorded in ``notes``.
    sampler : str, optional
        Default nutpie when installed, else PyMC.
    n_boot : int, default 2000
        Replicates B of the participant-cluster bootstrap of the K-fold metrics (0: none).
    ci_level : float, default 0.95
        Level of the bootstrap intervals.
    bootstrap_seed : int, default 0
        Seed of the bootstrap draws.
    predictions : CSV path(s), DataFrame or mapping of str to DataFrame, optional
        A researcher's own models' predictions on the splits of
        :func:`longitudinal.splits.participant_splits` (same ``seeds``, ``k`` and ``sizes``):
        files, one table, or source name -> table, with the columns ``model, scheme, seed``,
        the study's participant, session and position columns and ``prediction``
        (:mod:`longitudinal.user_predictions`). Each model is scored beside the package's
        models.

    Returns
    -------
    EvaluationResult
        Metrics per model x split x seed, their summary over seeds, per-fit details,
        the splits, the K-fold bootstrap intervals and paired comparisons, parameters and
        notes.

    Raises
    ------
    longitudinal.InvalidParameterError
        For invalid options, unknown models, or too few participants for the splits.
    surveys.InputValidationError
        For ``predictions`` that cannot be scored, listing every problem (file, row, rating);
        raised before any model is fitted.

    Notes
    -----
    Per seed, the participants are split 70/20/10 (:func:`models.evaluation.grouped_split`)
    and every model is fitted on the training participants only and evaluated on the
    validation and test participants; then, with ``k > 0``, on grouped K-folds
    (:func:`models.evaluation.grouped_kfold`): every participant is predicted by the model
    fitted without their fold, and a seed's K-fold metric is that of all these out-of-fold
    predictions pooled. (The mean of per-fold metrics would not estimate the population
    value: a correlation within a fold of a few people is centred on that fold's own mean.)
    Both are drawn by
    :func:`longitudinal.splits.draw_splits`, which also gives ``longitudinal splits`` its
    splits. The predictors are standardized with the training participants' means and SDs.
    No participant is in two parts of a split (checked before fitting,
    :func:`models.evaluation.overlapping_groups`). A test participant's between-person parts
    come from their own surveys and sessions (never their ratings).

    Predictions for the unseen participants use population-level effects only: ``X beta``
    for the LMMs (``re_form="~0"``); for the Bayesian model, the expected rating ``sum_k k
    P(y = k)`` with the participant effects integrated over their fitted distribution
    (``predict_proba(new_groups="population")``). The prediction models have no story
    effect (stories add nothing to a population-level prediction and cost run time).

    Metrics (x 100, :func:`models.evaluation.prediction_metrics`): Pearson r, Spearman rho,
    accuracy and binary F1 after binarising at ``threshold``, and MSE on the rating scale.
    The baselines to beat are ``majority_vote`` (the most frequent training rating for
    everyone), ``grand_mean`` (the training mean) and ``lmm_traits``; the first two predict
    one value for everyone, so their r and rho are undefined (NaN) by design. A researcher's
    model is scored by the same code on the same ratings: per seed, its predictions of the
    test (and, when given, validation) ratings of the holdout split, and its out-of-fold
    predictions of the K-fold, pooled.

    Uncertainty. The holdout test set of a seed holds few people (4 of 41 participants): its
    mean ± SD over seeds is the spread of the splits, not a sampling interval, and a test
    set of fewer than 10 people supports no inference (``parameters["holdout_caveat"]``).
    For the grouped K-fold, where every participant is predicted once per seed by a model
    that did not see them, :func:`models.evaluation.kfold_bootstrap` gives each model's
    metrics a participant-cluster bootstrap interval (``intervals``; B = ``n_boot``
    replicates drawn with ``bootstrap_seed``, predictions held fixed; estimate ± t SE on
    Fisher's z, the logit or the log, which covered the population value in 94-95% of
    simulated 41-person studies) and every pair of models a paired difference with its
    interval (``comparisons``), which calls a difference better or worse only when its
    interval excludes 0.

    Examples
    --------
    >>> from longitudinal.predict import evaluate_predictions
    >>> result = evaluate_predictions(study, seeds=2, include_bayes=False)  # doctest: +SKIP
    >>> result.summary[["model", "split", "r_mean", "r_sd"]]  # doctest: +SKIP
    """
    func = "evaluate_predictions"
    _check_study(study, func=func)
    seed_list_ = seed_list(seeds, func=func)
    k = _check_int(k, name="k", func=func, minimum=0)
    if k == 1:
        raise InvalidParameterError(f"the `k` parameter of {func} must be 0 (no K-fold) or >= 2")
    for name, value in (
        ("include_bayes", include_bayes),
        ("bayes_kfold", bayes_kfold),
        ("random_slope", random_slope),
    ):
        if not isinstance(value, bool):
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must be True or False; got {value!r}"
            )
    known = list(MODEL_DESCRIPTIONS)
    if models is None:
        chosen = [m for m in known if include_bayes or m != "bayes_ordinal"]
    else:
        chosen = [models] if isinstance(models, str) else list(models)
        unknown = [m for m in chosen if m not in known]
        if unknown or not chosen:
            raise InvalidParameterError(
                f"the `models` parameter of {func} must name models from {known}; got {models!r}"
            )
        if not include_bayes:
            chosen = [m for m in chosen if m != "bayes_ordinal"]
        chosen = [m for m in known if m in chosen]
    bayes_opts = {
        "draws": _check_int(draws, name="draws", func=func, minimum=1),
        "tune": _check_int(tune, name="tune", func=func, minimum=0),
        "chains": _check_int(chains, name="chains", func=func, minimum=1),
        "sampler": sampler or _default_sampler(),
    }
    n_boot = _check_int(n_boot, name="n_boot", func=func, minimum=0)
    ci_level = _check_ci(ci_level, func=func)
    bootstrap_seed = _check_int(bootstrap_seed, name="bootstrap_seed", func=func, minimum=0)
    start = time.perf_counter()
    raw, full = _benchmark_data(study, session_features=session_features, func=func)
    ordinal = [m for m in chosen if m in ("clmm_full", "bayes_ordinal")]
    fractional_note = None
    if ordinal:
        values = full.data[full.response_col].to_numpy(dtype=float)
        if models is None and not np.all(np.equal(np.round(values), values)):
            chosen = [m for m in chosen if m not in ordinal]
            fractional_note = (
                f"{', '.join(ordinal)} not run: the ratings are not whole numbers (an ordinal "
                "model needs ordered categories)"
            )
        else:
            _check_whole(full.data[full.response_col], func=func)
    groups = full.data[full.id_col].to_numpy(dtype=object)
    try:  # the metrics' own check of the threshold, before anything is fitted
        binarize([0.0], threshold=threshold)
    except ModelsInvalidParameterError as err:
        raise InvalidParameterError(f"{func}: {err}") from err
    plan = draw_splits(groups, seeds=seed_list_, k=k, sizes=sizes)
    user = None
    if predictions is not None:  # every problem of the user's predictions, before any fit
        from longitudinal.user_predictions import check_predictions

        user = check_predictions(
            predictions, study=study, frame=full.data, splits=plan, reserved=known
        )
    notes: list[str] = []
    if fractional_note:
        notes.append(fractional_note)
    if user is not None:
        notes += user.notes()
    rows: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    y_all = full.data[full.response_col].to_numpy(dtype=float)

    def run(model: str, split: str, seed: int, fold: int | None, train_idx, tests) -> dict:
        leaked = overlapping_groups(groups, [train_idx, *tests.values()])
        if leaked:  # pragma: no cover - guarded by the splitters' own tests
            raise AssertionError(f"participants in train and test: {leaked}")
        train_ids = sorted(set(groups[train_idx].tolist()))
        test_ids = {name: sorted(set(groups[idx].tolist())) for name, idx in tests.items()}
        t0 = time.perf_counter()
        if user is not None and model in user.models:
            scheme = plan_scheme[(split, seed)]
            given = user.values[(model, scheme, seed)]
            pred = {
                name: (y_all[idx], given[idx])
                for name, idx in tests.items()
                if name == "test" or not np.isnan(given[idx]).all()
            }
        else:
            pred = _fit_predict(
                model,
                raw,
                train_ids,
                test_ids,
                seed=seed,
                bayes=bayes_opts,
                notes=notes,
                random_slope=random_slope,
            )
        seconds = time.perf_counter() - t0
        for name, (y, _) in pred.items():
            runs.append(
                {
                    "model": model,
                    "split": split if split == "kfold" else name,
                    "seed": seed,
                    "fold": fold,
                    "n_train": int(len(train_idx)),
                    "n_test": int(len(y)),
                    "participants_train": len(train_ids),
                    "participants_test": len(test_ids[name]),
                    "seconds": float("nan") if user and model in user.models else seconds,
                }
            )
        return pred

    plan_scheme = {("holdout" if s.fold is None else "kfold", s.seed): s.scheme for s in plan}
    user_models = list(user.models) if user is not None else []
    n_rows = len(full.data)
    out_of_fold: dict[str, np.ndarray] = {}  # model -> (seed, rating): K-fold prediction
    for seed_index, seed in enumerate(seed_list_):
        holdout = next(s for s in plan if s.seed == seed and s.fold is None)
        folds = [s for s in plan if s.seed == seed and s.fold is not None]
        for model in chosen + user_models:
            if model in user_models and holdout.scheme not in user.schemes[model]:
                continue
            pred = run(model, "holdout", seed, None, holdout.train, holdout.parts)
            for name, (y, yhat) in pred.items():
                rows.append(
                    _metric_row(model, name, seed, y, yhat, threshold=threshold, notes=notes)
                )
        if not folds:
            continue
        for model in chosen + user_models:
            if model == "bayes_ordinal" and not bayes_kfold:
                continue
            if model in user_models and folds[0].scheme not in user.schemes[model]:
                continue
            oof = out_of_fold.setdefault(model, np.full((len(seed_list_), n_rows), np.nan))
            for f in folds:
                pred = run(model, "kfold", seed, f.fold, f.train, f.parts)
                oof[seed_index, f.parts["test"]] = pred["test"][1]
            rows.append(
                _metric_row(
                    model, "kfold", seed, y_all, oof[seed_index], threshold=threshold, notes=notes
                )
            )
    metrics = pd.DataFrame(rows, columns=["model", "split", "seed", *METRIC_NAMES])
    split_order = {"val": 0, "test": 1, "kfold": 2}
    model_order = {m: i for i, m in enumerate(known + user_models)}
    metrics = metrics.sort_values(
        ["split", "model", "seed"],
        key=lambda s: (
            s.map(split_order)
            if s.name == "split"
            else (s.map(model_order) if s.name == "model" else s)
        ),
        kind="mergesort",
    ).reset_index(drop=True)
    summary = summarize_metrics(metrics)
    boot = None
    complete = {m: v for m, v in out_of_fold.items() if np.isfinite(v).all()}
    if complete and n_boot > 0:
        boot = _undefined_for_constants(
            kfold_bootstrap(
                y_all,
                complete,
                groups=groups,
                n_boot=n_boot,
                ci_level=ci_level,
                threshold=threshold,
                seed=bootstrap_seed,
            )
        )
    # participants in each seed's holdout test set (the same count for every seed)
    n_test = sorted({len(set(groups[s.parts["test"]])) for s in plan if s.fold is None})
    seconds = time.perf_counter() - start
    descriptions = {m: MODEL_DESCRIPTIONS[m] for m in chosen}
    if user is not None:
        for m in user_models:
            descriptions[m] = (
                f"your predictions ({', '.join(user.files[m])}; {', '.join(user.schemes[m])})"
            )
    parameters = {
        "package_version": _package_version(),
        "seeds": seed_list_,
        "sizes": list(sizes),
        "k": k,
        "schemes": list(dict.fromkeys(s.scheme for s in plan)),
        "models": descriptions,
        "baselines": chosen,
        "user_models": user_models,
        "predictions": None
        if user is None
        else {
            "sources": sorted({f for m in user_models for f in user.files[m]}),
            "rows": user.n_rows,
            "not_scored": user.n_ignored,
            "rule": (
                "each model x scheme x seed predicts every test rating once (validation "
                "ratings optional, all or none); the same metric code, threshold and ratings "
                "as the package's models"
            ),
        },
        "bayes": {**bayes_opts, "in_kfold": bool(bayes_kfold)}
        if "bayes_ordinal" in chosen
        else None,
        "threshold": float(threshold),
        "threshold_rule": (
            f"positive ('empathic') when the rating or the prediction is > {float(threshold):g} "
            "(chosen here; the paper does not state its threshold)"
        ),
        "metrics": {
            "r": "Pearson correlation x 100",
            "rho": "Spearman rank correlation (average ranks for ties) x 100",
            "acc": "accuracy after binarising both vectors x 100",
            "f1": "binary F1 of the positive class, 2TP / (2TP + FP + FN), x 100",
            "mse": "mean squared error on the rating scale x 100",
        },
        "splits": {
            "val": "validation participants of the 70/20/10 split (models are not tuned on it)",
            "test": "test participants of the 70/20/10 split",
            "kfold": (
                f"grouped {k}-fold: every participant predicted by the model fitted without "
                "their fold; metrics of these out-of-fold predictions pooled, per seed"
            ),
        },
        "summary": "mean and sample SD (ddof=1) over seeds; undefined metrics left out",
        "undefined": (
            "majority_vote and grand_mean predict one value for everyone, so their r and rho "
            "are undefined (NaN) by design"
        ),
        "prediction": "population-level effects only for unseen participants",
        "random_slope": random_slope,
        "session_features": list(full.meta["session_features"]),
        "n_ratings": int(len(full.data)),
        "n_participants": int(full.data[full.id_col].nunique()),
        "n_dropped": full.n_dropped,
        "holdout_test_participants": n_test,
        "holdout_caveat": (
            f"each seed's test set holds {', '.join(map(str, n_test))} participant(s); "
            + (
                "a test set of fewer than 10 people supports no inference: the ± over seeds "
                "is the spread of the splits, not sampling uncertainty"
                if min(n_test) < 10
                else "the ± over seeds is the spread of the splits, not sampling uncertainty"
            )
        ),
        "bootstrap": None if boot is None else {**boot.meta, "models": list(complete)},
        "seconds": seconds,
        "paper": {
            "citation": "Shen et al. (2024), EmpathicStories++, Findings of ACL 2024",
            "reported_bests": [{"context": c, "r": r, "rho": rho} for c, r, rho in _PAPER_BESTS],
        },
    }
    return EvaluationResult(
        metrics=metrics,
        summary=summary,
        runs=pd.DataFrame(runs),
        parameters=parameters,
        notes=tuple(notes),
        splits=splits_table(groups, plan, id_col=study.config.id_col),
        intervals=boot.intervals if boot is not None else _empty(BOOTSTRAP_COLUMNS),
        comparisons=boot.comparisons if boot is not None else _empty(COMPARISON_COLUMNS),
    )


def _undefined_for_constants(boot: KFoldBootstrap) -> KFoldBootstrap:
    """Blank r and rho of the constant predictors (and differences from them)."""
    ci = boot.intervals.copy()
    mask = ci["model"].isin(CONSTANT_MODELS) & ci["metric"].isin(["r", "rho"])
    ci.loc[mask, ["estimate", "ci_low", "ci_high"]] = float("nan")
    ci.loc[mask, "interval"] = "undefined"
    ci.loc[mask, "n_boot"] = 0
    comp = boot.comparisons.copy()
    mask = (comp["model"].isin(CONSTANT_MODELS) | comp["versus"].isin(CONSTANT_MODELS)) & comp[
        "metric"
    ].isin(["r", "rho"])
    comp.loc[mask, ["estimate", "ci_low", "ci_high"]] = float("nan")
    comp.loc[mask, "n_boot"] = 0
    comp.loc[mask, "verdict"] = "undefined"
    return KFoldBootstrap(intervals=ci, comparisons=comp, meta=boot.meta)


def _cell(mean: float, sd: float) -> str:
    if not np.isfinite(mean):
        return "–"
    if not np.isfinite(sd):
        return f"{mean:.1f}"
    return f"{mean:.1f} ± {sd:.1f}"


def _interval(estimate: float, low: float, high: float, *, signed: bool = False) -> str:
    if not np.isfinite(estimate):
        return "–"
    fmt = "{:+.1f}" if signed else "{:.1f}"

    def show(value: float) -> str:
        return fmt.format(0.0 if abs(value) < 0.05 else value)  # no "-0.0"

    text = show(estimate)
    if np.isfinite(low) and np.isfinite(high):
        text += f" [{show(low)}, {show(high)}]"
    return text


BASELINES_TO_BEAT = ("majority_vote", "grand_mean", "lmm_traits")
"""The package's models every other model is compared with in ``table.md``."""


METRIC_HEADERS = {"r": "r", "rho": "ρ", "acc": "Acc", "f1": "F1", "mse": "MSE"}
"""Display names of the benchmark metrics, in the paper's order."""


def interval_table(intervals: pd.DataFrame) -> pd.DataFrame:
    """One row per model: ``model`` and each metric as ``estimate [ci_low, ci_high]`` text.

    ``intervals`` is :attr:`EvaluationResult.intervals` (or ``metrics_ci.csv``); models keep
    their order.
    """
    rows = []
    for model, block in intervals.groupby("model", sort=False):
        by = block.set_index("metric")
        rows.append(
            {
                "model": model,
                **{
                    m: _interval(*(float(by.loc[m, c]) for c in ("estimate", "ci_low", "ci_high")))
                    for m in METRIC_NAMES
                },
            }
        )
    return pd.DataFrame(rows, columns=["model", *METRIC_NAMES])


def difference_table(
    comparisons: pd.DataFrame, baselines: Sequence[str] = BASELINES_TO_BEAT
) -> pd.DataFrame:
    """Differences of every model from the baselines to beat, as display text.

    One row per model x baseline: ``model, versus`` and each metric as ``+d [low, high]``,
    followed by ``(better)`` or ``(worse)`` only when the interval excludes 0.
    """
    versus = [b for b in baselines if b in set(comparisons["versus"])]
    block = comparisons[comparisons["versus"].isin(versus)]
    rows = []
    for (model, other), part in block.groupby(["model", "versus"], sort=False):
        by = part.set_index("metric")
        row = {"model": model, "versus": other}
        for m in METRIC_NAMES:
            rec = by.loc[m]
            text = _interval(rec["estimate"], rec["ci_low"], rec["ci_high"], signed=True)
            if rec["verdict"] in ("better", "worse"):
                text += f" ({rec['verdict']})"
            row[m] = text
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", "versus", *METRIC_NAMES])


def spread_table(summary: pd.DataFrame, split: str) -> pd.DataFrame:
    """One row per model of ``split``: each metric as ``mean ± SD`` over seeds (text)."""
    block = summary[summary["split"] == split]
    rows = [
        {
            "model": rec["model"],
            **{m: _cell(float(rec[f"{m}_mean"]), float(rec[f"{m}_sd"])) for m in METRIC_NAMES},
        }
        for _, rec in block.iterrows()
    ]
    return pd.DataFrame(rows, columns=["model", *METRIC_NAMES])


def interval_note(parameters: Mapping[str, Any]) -> str:
    """Describe the K-fold intervals for the table's reader (from the run's parameters)."""
    boot = parameters["bootstrap"]
    pct = f"{100 * boot['ci_level']:g}%"
    return (
        f"Estimate [{pct} interval]: every participant is predicted once per seed by a model "
        "that did not see them; the metric of these predictions pooled, averaged over seeds. "
        f"Interval: participant-cluster bootstrap, B = {boot['n_boot']} replicates, seed "
        f"{boot['seed']}; each replicate draws the {boot['n_groups']} participants with "
        "replacement and recomputes the metric with the predictions held fixed (the models "
        "are not refitted); estimate ± t SE on Fisher's z (r, ρ), the logit (Acc, F1) or the "
        f"log (MSE), t with {boot['n_groups'] - 1} degrees of freedom. In simulated studies "
        "of 41 people these intervals covered the population value in 94-95% of studies. A "
        "model refitted on every fold and without signal scores a negative pooled r (each "
        "fold model is centred on its own training participants): read r near or below 0 as "
        "no signal."
    )


def difference_note(parameters: Mapping[str, Any]) -> str:
    """Say how the differences from the baselines are read."""
    pct = f"{100 * parameters['bootstrap']['ci_level']:g}%"
    return (
        f"Model minus baseline [{pct} interval of the paired differences, same bootstrap "
        "draws, estimate ± t SE]. A difference is called better or worse only when its "
        "interval excludes 0 (for MSE, lower is better); otherwise it is not shown to "
        "differ. r and ρ of a model that predicts one value for everyone are undefined (–)."
    )


def _markdown(frame: pd.DataFrame) -> list[str]:
    headers = [{**METRIC_HEADERS, "model": "Model"}.get(c, c) for c in frame.columns]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return [*lines, ""]


def _interval_lines(result: EvaluationResult) -> list[str]:
    """Render the K-fold intervals and the differences from the baselines as Markdown."""
    boot = result.parameters.get("bootstrap")
    if not boot or result.intervals.empty:
        return []
    pct = f"{100 * boot['ci_level']:g}%"
    lines = [
        f"### Grouped {result.parameters['k']}-fold with {pct} intervals",
        "",
        interval_note(result.parameters),
        "",
        *_markdown(interval_table(result.intervals)),
    ]
    differences = difference_table(result.comparisons)
    if differences.empty:
        return lines
    versus = list(dict.fromkeys(differences["versus"]))
    return [
        *lines,
        f"### Differences from the baselines to beat ({', '.join(versus)})",
        "",
        difference_note(result.parameters),
        "",
        *_markdown(differences),
    ]


def _paper_table(result: EvaluationResult) -> str:
    """Markdown table in the paper's layout: models x (r, rho, Acc, F1, MSE), mean ± SD."""
    p = result.parameters
    lines = [
        "# Out-of-person empathy prediction",
        "",
        f"Participants split {'/'.join(f'{100 * s:g}' for s in p['sizes'])} (train/val/test) "
        f"with seeds {p['seeds']}; metrics x 100, mean ± SD over seeds. Accuracy and F1: "
        f"{p['threshold_rule']}. MSE on the rating scale.",
        "",
    ]
    names = {"val": "Validation", "test": "Test", "kfold": f"Grouped {p['k']}-fold"}
    for split in ("test", "val", "kfold"):
        block = spread_table(result.summary, split)
        if block.empty:
            continue
        lines += [f"## {names[split]}", "", *_markdown(block)]
        if split == "test" and p.get("holdout_caveat"):
            lines += [f"Caveat: {p['holdout_caveat']}.", ""]
        if split == "kfold":
            lines += _interval_lines(result)
    lines += ["## Models", ""]
    lines += [f"- `{m}`: {d}" for m, d in p["models"].items()]
    lines += [
        "",
        "For orientation only (different inputs: the paper's models read transcripts and "
        "video): the paper reports, on its test participants, "
        + "; ".join(
            f"{c} r = {r:.1f}" + (f", ρ = {rho:.1f}" if rho is not None else "")
            for c, r, rho in _PAPER_BESTS
        )
        + " (x 100).",
        "",
    ]
    return "\n".join(lines)


def plot_metrics(summary: pd.DataFrame, *, split: str = "test") -> Figure:
    """Bar chart of the benchmark metrics per model (mean ± SD over seeds).

    Parameters
    ----------
    summary : pandas.DataFrame
        :attr:`EvaluationResult.summary`.
    split : {"test", "val", "kfold"}, default "test"
        Which split to draw.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per metric (r, rho, Acc, F1, MSE; all x 100), one bar per model with the
        SD over seeds as an error bar; the bars of models that are not the package's (a
        researcher's predictions) are hatched.

    Raises
    ------
    longitudinal.InvalidParameterError
        When ``summary`` lacks the columns or has no row for ``split``.

    Examples
    --------
    >>> from longitudinal.predict import plot_metrics
    >>> fig = plot_metrics(result.summary)  # doctest: +SKIP
    """
    func = "plot_metrics"
    need = ["model", "split"] + [f"{m}_{s}" for m in METRIC_NAMES for s in ("mean", "sd")]
    if not isinstance(summary, pd.DataFrame) or any(c not in summary.columns for c in need):
        raise InvalidParameterError(
            f"the `summary` parameter of {func} must be EvaluationResult.summary (columns {need})"
        )
    block = summary[summary["split"] == split]
    if block.empty:
        raise InvalidParameterError(
            f"the `split` parameter of {func}: no row for split {split!r}; "
            f"have {sorted(set(summary['split']))}"
        )
    from matplotlib.figure import Figure

    titles = {"r": "Pearson r", "rho": "Spearman ρ", "acc": "Accuracy", "f1": "F1", "mse": "MSE"}
    fig = Figure(figsize=(13.0, 3.4), layout="constrained")
    x = np.arange(len(block))
    colors = ["#8c8c8c", "#9ecae1", "#4292c6", "#1f4e79", "#b5541c"]
    theirs = [m not in MODEL_DESCRIPTIONS for m in block["model"]]
    own_colors = ["#238b45", "#6a51a3", "#c9a227", "#d94801"]
    palette = [
        own_colors[sum(theirs[:i]) % len(own_colors)] if theirs[i] else colors[i % len(colors)]
        for i in range(len(block))
    ]
    for j, m in enumerate(METRIC_NAMES):
        ax = fig.add_subplot(1, len(METRIC_NAMES), j + 1)
        mean = block[f"{m}_mean"].to_numpy(dtype=float)
        sd = np.nan_to_num(block[f"{m}_sd"].to_numpy(dtype=float))
        bars = ax.bar(
            x,
            np.nan_to_num(mean),
            yerr=sd,
            color=palette,
            capsize=3,
            width=0.7,
        )
        for bar, own in zip(bars, theirs, strict=True):
            if own:  # a researcher's model, beside the package's
                bar.set_hatch("///")
                bar.set_edgecolor("white")
        for i, v in enumerate(mean):
            if not np.isfinite(v):
                ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(x, block["model"].tolist(), rotation=45, ha="right", fontsize=7)
        ax.set_title(f"{titles[m]} (x100)")
        ax.axhline(0, color="0.4", linewidth=0.6)
    title = f"Out-of-person prediction, {split} participants (mean ± SD over seeds)"
    if any(theirs):
        title += "; hatched: your models"
    fig.suptitle(title)
    return fig


def run_evaluation(
    study_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    seeds: int | Sequence[int] = 5,
    include_bayes: bool = True,
    predictions: Sequence[str | os.PathLike[str]] | None = None,
    overwrite: bool = False,
    **options: Any,
) -> Path:
    """Run the prediction benchmark on a study directory and write its outputs.

    Parameters
    ----------
    study_dir : str or path-like
        The study directory (:func:`longitudinal.study.load_study`).
    out_dir : str or path-like
        Folder to create (must not exist or be empty unless ``overwrite=True``). Write it to
        ``STUDY_DIR/evaluate`` for ``longitudinal report`` to pick it up.
    seeds : int or sequence of int, default 5
        Split seeds (an int ``n`` means ``0, ..., n - 1``).
    include_bayes : bool, default True
        Include the Bayesian ordinal model.
    predictions : sequence of path-like, optional
        CSV files of a researcher's own models' predictions
        (:mod:`longitudinal.user_predictions`); each model is scored beside the package's and
        appears in every output. Checked before any model is fitted.
    overwrite : bool, default False
        Replace a non-empty ``out_dir`` once the new results are complete.
    **options
        Further keyword arguments of :func:`evaluate_predictions` (``k``, ``models``,
        ``threshold``, ``sizes``, ``session_features``, ``draws``, ``tune``, ``chains``,
        ``sampler``, ``bayes_kfold``, ``n_boot``, ``ci_level``, ``bootstrap_seed``).

    Returns
    -------
    pathlib.Path
        ``out_dir``, holding::

            metrics.csv       model, split, seed, r, rho, acc, f1, mse (x 100), the
                              package's models first, then the researcher's
            summary.csv       mean, SD and count per model x split over seeds
            table.md          the summary in the paper's layout
            metrics.png       bar chart of the test-participant metrics
            runs.csv          one row per fit: sizes and seconds
            metrics_ci.csv    grouped K-fold: estimate and participant-cluster bootstrap
                              interval per model x metric (header only without K-fold)
            comparisons.csv   paired differences between models with their intervals
            evaluation.json   parameters (threshold rule, seeds, sizes, models), notes, time

        No file names a participant.

    Raises
    ------
    surveys.InputValidationError
        The study directory is not usable, or the predictions cannot be scored (every
        problem listed; nothing is written).
    longitudinal.InvalidParameterError
        For invalid options or an ``out_dir`` that is a file or non-empty.

    Notes
    -----
    The folder is written to a temporary sibling and moved into place at the end, so a
    failed run leaves nothing half-written. Warnings of the fits are recorded in
    ``evaluation.json`` (``notes``), not re-issued.

    Examples
    --------
    >>> from longitudinal.predict import run_evaluation
    >>> run_evaluation("demo-report/study", "demo-report/study/evaluate")  # doctest: +SKIP
    PosixPath('demo-report/study/evaluate')
    """
    func = "run_evaluation"
    if not isinstance(overwrite, bool):
        raise InvalidParameterError(
            f"the `overwrite` parameter of {func} must be True or False; got {overwrite!r}"
        )
    from longitudinal.study import load_study, study_inputs

    files = [] if predictions is None else [Path(p) for p in predictions]
    out = check_out_dir(
        out_dir,
        overwrite=overwrite,
        func=func,
        command="evaluate",
        inputs=[*study_inputs(study_dir), *files],
    )

    study = load_study(study_dir)
    result = evaluate_predictions(
        study,
        seeds=seeds,
        include_bayes=include_bayes,
        predictions=[str(p) for p in files] or None,
        **options,
    )

    def write(folder: Path) -> None:
        result.metrics.to_csv(folder / METRICS_FILE, index=False, float_format="%.17g")
        result.summary.to_csv(folder / SUMMARY_FILE, index=False, float_format="%.17g")
        result.runs.to_csv(folder / RUNS_FILE, index=False, float_format="%.17g")
        result.intervals.to_csv(folder / INTERVALS_FILE, index=False, float_format="%.17g")
        result.comparisons.to_csv(folder / COMPARISONS_FILE, index=False, float_format="%.17g")
        (folder / TABLE_FILE).write_text(_paper_table(result), encoding="utf-8")
        from longitudinal.plotting import save_figure

        split = "test" if (result.summary["split"] == "test").any() else "kfold"
        save_figure(plot_metrics(result.summary, split=split), folder / FIGURE_FILE)
        payload = {**result.parameters, "notes": list(result.notes)}
        (folder / PARAMETERS_FILE).write_text(
            json.dumps(payload, indent=2, sort_keys=True, default=_json_default) + "\n",
            encoding="utf-8",
        )

    atomic_write(out, write, overwrite=overwrite, what="the evaluation", command="evaluate")
    return out


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
