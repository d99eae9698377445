"""The predictors of the empathy models, standardized for any set of reference participants.

Predictor construction
----------------------
For a participant *p*, a session *i* and a story rating *r* in that session:

``{trait}_z``
    the trait score at the first wave, minus the mean over the reference participants,
    divided by their SD (``ddof=1``).
``{state}_between_z``
    ``(m_p - mean of m over the reference participants) / s``, where ``m_p`` is the mean of
    the person's state score over the waves that preceded their ratings (every wave up to
    the latest that is the nearest preceding wave of a rated session, each counted once; a
    survey taken after the last rated session, such as an exit survey, never enters) and
    ``s`` is the SD
    of the state score at the first wave across the reference participants.
``{state}_within_z``
    ``(x_pi - m_p) / s`` with ``x_pi`` the state score of the nearest wave completed on or
    before the session (:func:`longitudinal.study.frames.nearest_preceding_wave`). A state whose
    preceding waves agree for every person (two waves, only the first before the sessions)
    has no within-person part: it is zero at every rating, so it is not a predictor, and
    ``meta["states_without_within"]`` lists it.

Every predictor of a rating is thus measured before that rating: a later survey never
predicts earlier ratings.
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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from longitudinal._display import Result
from longitudinal._errors import InvalidParameterError
from longitudinal.predict.common import check_study
from longitudinal.study.frames import scale_column

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.study.loaded import Study


PREDICTOR_COLUMNS = ["predictor", "source", "kind", "part", "center", "scale", "label", "unit"]
"""Columns of :attr:`EmpathyData.predictors`."""


_KINDS = ("trait", "state", "session", "time")
_GENERIC_SCALES = ("raw", "percentage", "total", "sum", "mean", "score")


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
    no_within: tuple[str, ...] = ()  # states without within-person variation before ratings


@dataclass(frozen=True, repr=False)
class EmpathyData(Result):
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
        Reference participants, rows per reason dropped (``dropped_by_column``), per
        participant with a rating left out the ratings left out, of how many, and the rows
        missing each source column (``dropped_by_participant``), the traits, states and
        features used, and ``states_without_within``: ``(column, label)`` of each state with
        no within-person variation before the ratings (its within part is not a predictor).
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

    def _title(self) -> str:
        people = self.data[self.id_col].nunique() if self.id_col in self.data else "?"
        return (
            f"EmpathyData: {len(self.data)} ratings of {people} participants, "
            f"{len(self.predictors)} predictors ({self.n_dropped} ratings left out)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        keep = ["predictor", "kind", "part", "label"]
        return [("Predictors", self.predictors[[c for c in keep if c in self.predictors]])]


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
    completed: pd.DataFrame | None = None,
    completed_sessions: pd.DataFrame | None = None,
) -> _Raw:
    cfg = study.config
    id_col = cfg.id_col
    response = cfg.rating_col
    story = study.story_frame()
    pw = study.person_wave_frame()
    sessions = study.session_frame()
    first = cfg.waves[0]

    trait_defaults = _dedupe_scales(study, study.trait_instruments)
    state_defaults = _dedupe_scales(study, study.state_instruments)
    meta_cols = {id_col, "wave", "wave_index", "completed_at", "day", "n_sessions"}
    scores = [c for c in pw.columns if c not in meta_cols and c != f"{response}_mean"]
    trait_avail = [c for c, _, _ in trait_defaults] if traits is None else scores
    state_avail = [c for c, _, _ in state_defaults] if states is None else scores
    trait_cols = _pick(traits, trait_defaults, trait_avail, name="traits", func=func)
    state_cols = _pick(states, state_defaults, state_avail, name="states", func=func)
    if completed is not None:
        traits_used = [c for c, _ in trait_cols]
        story, pw = _filled(story, pw, completed, id_col=id_col, traits=traits_used, first=first)
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
    if completed_sessions is not None:
        story, sessions = _filled_sessions(story, sessions, completed_sessions, features)
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
    # The waves that precede a person's ratings: every wave up to the latest one that is the
    # nearest preceding wave of a rated session. A later survey (an exit survey after the last
    # session) never enters.
    order = {str(w): i for i, w in enumerate(cfg.waves)}
    rated = story[[id_col, "state_wave"]].dropna(subset=["state_wave"])
    latest = rated["state_wave"].astype(str).map(order).groupby(rated[id_col].astype(str)).max()
    waves_before = pw.assign(**{id_col: pw[id_col].astype(str)})
    position = waves_before["wave"].astype(str).map(order)
    waves_before = waves_before[position <= waves_before[id_col].map(latest)]
    no_within: list[str] = []
    for col, _ in state_cols:
        persons[f"{col}__mean"] = waves_before.groupby(id_col)[col].mean().reindex(ids)
        persons[f"{col}__first"] = firstwave[col].reindex(ids).to_numpy(dtype=float)
        spread = waves_before.groupby(id_col)[col].agg(lambda v: v.max() - v.min())
        if not (spread.fillna(0.0).abs() > 0).any():
            # Every person's preceding waves agree (one wave before the sessions): the
            # deviation from the person mean is zero at every rating, not a predictor.
            no_within.append(col)
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
        no_within=tuple(no_within),
    )


def _filled(
    story: pd.DataFrame,
    pw: pd.DataFrame,
    completed: pd.DataFrame,
    *,
    id_col: str,
    traits: Sequence[str],
    first: Any,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Replace the missing scores of the story and person-wave frames by completed ones.

    ``completed`` is a person-wave table (:meth:`longitudinal.ImputedScores.long`): a state
    score of a rating is looked up at its ``state_wave``, a person-wave row's at its wave, a
    trait at the first wave. Only missing cells change; rows stay as they are.
    """
    table = completed.assign(
        **{id_col: completed[id_col].astype(str), "wave": completed["wave"].astype(str)}
    ).set_index([id_col, "wave"])
    at_first = table[table.index.get_level_values("wave") == str(first)].droplevel("wave")
    surveyed = pw.loc[pw["wave"].astype(str) == str(first), id_col].astype(str)
    at_first = at_first[at_first.index.isin(surveyed)]  # a trait only where the wave was taken
    out = []
    for frame, wave_col in ((story, "state_wave"), (pw, "wave")):
        frame = frame.copy()
        people = frame[id_col].astype(str)
        key = pd.MultiIndex.from_arrays([people, frame[wave_col].astype(str)])
        for col in table.columns:
            if col not in frame.columns:
                continue
            by_person = col in traits and wave_col == "state_wave"
            found = at_first[col].reindex(people) if by_person else table[col].reindex(key)
            frame[col] = frame[col].fillna(pd.Series(found.to_numpy(), index=frame.index))
        out.append(frame)
    return out[0], out[1]


def _filled_sessions(
    story: pd.DataFrame, sessions: pd.DataFrame, completed: pd.DataFrame, features: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Replace the missing features of the story and session frames by completed ones.

    ``completed`` has ``session_id`` and feature columns (:attr:`ImputedSessions.datasets`);
    only missing cells change, by session.
    """
    table = completed.assign(session_id=completed["session_id"].astype(str)).set_index("session_id")
    out = []
    for frame in (story, sessions):
        frame = frame.copy()
        key = frame["session_id"].astype(str)
        for col in features:
            if col in table.columns:
                found = table[col].reindex(key).to_numpy()
                frame[col] = frame[col].fillna(pd.Series(found, index=frame.index))
        out.append(frame)
    return out[0], out[1]


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
            parts = [("between", center)]
            if c not in raw.no_within:
                out[f"{c}_within_z"] = (rows[c] - pm) / scale
                parts.append(("within", 0.0))
            for part, part_center in parts:
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
    # per participant: ratings left out, of how many, and per source column the rows missing it
    source_of = dict(zip(predictors["predictor"], predictors["source"], strict=True))
    source_of[raw.response_col] = raw.response_col
    by_person: dict[str, dict[str, Any]] = {}
    totals = out[id_col].value_counts()
    for pid, block in missing[dropped].groupby(out.loc[dropped, id_col], sort=True):
        columns: dict[str, int] = {}
        for source in dict.fromkeys(source_of[c] for c in used):
            parts = [c for c in used if source_of[c] == source]
            n = int(block[parts].any(axis=1).sum())
            if n:
                columns[source] = n
        by_person[str(pid)] = {
            "ratings": len(block),
            "of": int(totals[pid]),
            "columns": columns,
        }
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
            "dropped_by_participant": by_person,
            "traits": [s.column for s in raw.sources if s.kind == "trait"],
            "states": [s.column for s in raw.sources if s.kind == "state"],
            "session_features": [s.column for s in raw.sources if s.kind == "session"],
            "states_without_within": [
                (s.column, s.label) for s in raw.sources if s.column in raw.no_within
            ],
        },
    )


def empathy_data(
    study: Study,
    *,
    traits: Sequence[str] | None = None,
    states: Sequence[str] | None = None,
    session_features: Sequence[str] | None = None,
    session_between: Sequence[str] | None = None,
    completed: pd.DataFrame | None = None,
    completed_sessions: pd.DataFrame | None = None,
) -> EmpathyData:
    """Story-level ratings with the standardized, within/between-split predictors.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study (:func:`longitudinal.study.loaded.load_study`).
    traits : sequence of str, optional
        Trait score columns (first wave) to use; default every scale of the ``[roles]
        traits`` instruments (rescaled duplicates left out, see the module docstring).
    states : sequence of str, optional
        State score columns; default every scale of the ``[roles] states`` instruments.
    session_features : sequence of str, optional
        Numeric columns of ``sessions.csv``; by default the study's session features
        (``[roles] session_features`` of study.toml, or every numeric column of sessions.csv).
    session_between : sequence of str, optional
        The session features whose between-person part enters; default all of them. The
        others enter their within-person part only (see
        :func:`longitudinal.predict.selection.plan_predictors`).
    completed : pandas.DataFrame, optional
        One completed table of a multiple imputation in person-wave form
        (:meth:`longitudinal.ImputedScores.long`): its scores replace the missing ones (a
        state score of a rating at the rating's nearest preceding wave, a trait at the first
        wave) before the predictors are built and standardized as always, with this table's
        means and SDs. Only missing cells of survey rows that exist change; a wave a person
        never took stays out. Default: the scores as observed.
    completed_sessions : pandas.DataFrame, optional
        One completed table of the session features (``session_id`` and the features:
        :attr:`longitudinal.study.session_imputation.ImputedSessions.datasets`): its values
        replace the missing features of the sessions before the predictors are built.
        Default: the features as observed.

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
    >>> from longitudinal.study.loaded import load_study
    >>> data = empathy_data(load_study("path/to/study"))  # doctest: +SKIP
    >>> data.predictors[["predictor", "kind", "part"]]  # doctest: +SKIP
    """
    func = "empathy_data"
    check_study(study, func=func)
    if completed is not None and not isinstance(completed, pd.DataFrame):
        raise InvalidParameterError(
            f"the `completed` parameter of {func} must be a person-wave DataFrame "
            f"(ImputedScores.long(i)) or None; got {type(completed).__name__}"
        )
    if completed_sessions is not None and not (
        isinstance(completed_sessions, pd.DataFrame) and "session_id" in completed_sessions
    ):
        raise InvalidParameterError(
            f"the `completed_sessions` parameter of {func} must be a DataFrame with a "
            f"session_id column (ImputedSessions.datasets[i]) or None; got "
            f"{type(completed_sessions).__name__}"
        )
    raw = _raw_predictors(
        study,
        traits=traits,
        states=states,
        session_features=session_features,
        func=func,
        completed=completed,
        completed_sessions=completed_sessions,
    )
    data = _standardize(raw, None, func=func)
    if session_between is None:
        return data
    keep_between = set(session_between)
    unknown = keep_between - set(data.meta["session_features"])
    if unknown:
        raise InvalidParameterError(
            f"the `session_between` parameter of {func} names features that are not among the "
            f"session features: {sorted(unknown)}"
        )
    preds = data.predictors
    drop = preds[
        (preds["kind"] == "session")
        & (preds["part"] == "between")
        & ~preds["source"].isin(keep_between)
    ]["predictor"].tolist()
    if not drop:
        return data
    meta = dict(data.meta)
    meta["session_within_only"] = [c for c in meta["session_features"] if c not in keep_between]
    return EmpathyData(
        data=data.data.drop(columns=drop),
        predictors=preds[~preds["predictor"].isin(drop)].reset_index(drop=True),
        id_col=data.id_col,
        response_col=data.response_col,
        scale_min=data.scale_min,
        scale_max=data.scale_max,
        n_dropped=data.n_dropped,
        meta=meta,
    )


def default_predictors(study: Study) -> dict[str, list[str]]:
    """List the empathy models' candidate predictors, in study.toml order.

    Returns ``{"traits": [...], "states": [...], "session_features": [...]}``: the score columns
    of the ``[roles] traits`` and ``states`` instruments (a rescaled duplicate scale left out)
    and the study's session features.
    """
    return {
        "traits": [c for c, _, _ in _dedupe_scales(study, study.trait_instruments)],
        "states": [c for c, _, _ in _dedupe_scales(study, study.state_instruments)],
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
        ``"{rating} ~ x1 + x2 + ... + (1 + week | id) + (1 | story_id)"``. A name that is not
        a plain name (letters, digits, ``_``) is written in backticks
        (:func:`models.formula.formula_name`), so a column name is never read as formula
        syntax.

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
    >>> d = EmpathyData(pd.DataFrame(), preds, "id) + (1 | x", "empathy", 1, 5, 0)
    >>> empathy_formula(d, story_effects=False)
    'empathy ~ tas4_absorption_z + week + (1 + week | `id) + (1 | x`)'
    """
    func = "empathy_formula"
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    bad = [k for k in kinds if k not in _KINDS]
    if bad:
        raise InvalidParameterError(
            f"the `kinds` parameter of {func} must hold kinds from {list(_KINDS)}; got {bad}"
        )
    from models.formula import formula_name as name  # a column name is data: quoted if odd

    terms = data.terms(kinds=kinds)
    rhs = " + ".join(name(t) for t in terms) if terms else "1"
    slope = random_slope and "week" in terms
    group = name(data.id_col)
    random = f"(1 + week | {group})" if slope else f"(1 | {group})"
    formula = f"{name(data.response_col)} ~ {rhs} + {random}"
    if story_effects:
        formula += " + (1 | story_id)"
    return formula
