"""Analysis frames of a study: story level, session level and person x wave.

The three frames are built from a loaded :class:`longitudinal.study.loaded.Study` and share one
vocabulary:

- time coding from ``started_at``: ``day`` (calendar days since the participant's first
  session, 0 for that session), ``week`` (``day / 7``, fractional) and ``session_index``
  (1 for the participant's first session); sessions excluded from the study (see
  :attr:`longitudinal.study.loaded.Study.exclusions`) do not count;
- trait scores (instruments listed under ``[roles] traits``) come from the first wave;
- state scores (``[roles] states``) come from the *nearest preceding wave*: the latest survey
  of that participant completed on or before the session started (``state_wave``);
- score columns are named ``{instrument}_{scale}`` (just ``{instrument}`` when the scale
  carries the instrument's name), so they can be used in model formulas.

:func:`within_between` splits any time-varying predictor into a person mean and a deviation
from it, the usual within/between-person decomposition for multilevel models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from longitudinal._checks import check_frame
from longitudinal._errors import InvalidParameterError
from models.panel import within_between

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    from longitudinal.study.loaded import Study

__all__ = [
    "nearest_preceding_wave",
    "person_wave_frame",
    "scale_column",
    "session_frame",
    "story_frame",
    "time_coding",
    "within_between",
]


def scale_column(instrument: str, scale: str) -> str:
    """Name of the frame column that holds one scale's score.

    Parameters
    ----------
    instrument : str
        Instrument name, e.g. ``"bfi44"``.
    scale : str
        Scale name within the instrument, e.g. ``"extraversion"``.

    Returns
    -------
    str
        ``"{instrument}_{scale}"``, or ``instrument`` alone when ``scale == instrument``.

    Examples
    --------
    >>> from longitudinal.study.frames import scale_column
    >>> scale_column("bfi44", "extraversion")
    'bfi44_extraversion'
    >>> scale_column("sites", "sites")
    'sites'
    """
    return instrument if scale == instrument else f"{instrument}_{scale}"


def time_coding(
    sessions: pd.DataFrame,
    *,
    id_col: str = "participant_id",
    time_col: str = "started_at",
    session_col: str = "session_id",
) -> pd.DataFrame:
    """Add day, week and session index, counted from each participant's first session.

    Parameters
    ----------
    sessions : pandas.DataFrame
        One row per session with a datetime column ``time_col``.
    id_col : str, default "participant_id"
        Participant identifier.
    time_col : str, default "started_at"
        Session start (datetime64).
    session_col : str, default "session_id"
        Session identifier; breaks ties between sessions that started at the same moment.

    Returns
    -------
    pandas.DataFrame
        A copy of ``sessions`` (same row order) with the added columns

        - ``day`` (int): calendar days between the session's date and the date of the
          participant's first session (0 for the first session);
        - ``week`` (float): ``day / 7``, weeks since the first session (``floor(week)`` is
          the study week, 0 for days 0-6);
        - ``session_index`` (int): rank of the session within the participant by start time,
          1 for the first.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or ``time_col`` is not datetime64.

    Notes
    -----
    Days are calendar days of the recorded wall-clock time, so a session at 23:50 and one at
    00:10 the next morning are one day apart.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.study.frames import time_coding
    >>> s = pd.DataFrame({"participant_id": ["a", "a", "a"], "session_id": ["s1", "s2", "s3"],
    ...                   "started_at": pd.to_datetime(["2024-03-01 10:00", "2024-03-09 09:00",
    ...                                                 "2024-03-04 20:00"])})
    >>> time_coding(s)[["session_id", "day", "week", "session_index"]]
      session_id  day      week  session_index
    0         s1    0  0.000000              1
    1         s2    8  1.142857              3
    2         s3    3  0.428571              2
    """
    func = "time_coding"
    check_frame(sessions, [id_col, time_col, session_col], where=func, name="sessions")
    if not pd.api.types.is_datetime64_any_dtype(sessions[time_col]):
        raise InvalidParameterError(
            f"the `{time_col}` column passed to {func} must be datetime64; "
            f"got {sessions[time_col].dtype}"
        )
    out = sessions.copy()
    dates = out[time_col].dt.normalize()
    first = dates.groupby(out[id_col], sort=False).transform("min")
    day = (dates - first).dt.days
    out["day"] = day.astype("int64")
    out["week"] = day.astype("float64") / 7.0
    order = out.sort_values([id_col, time_col, session_col], kind="mergesort")
    index = order.groupby(id_col, sort=False).cumcount() + 1
    out["session_index"] = index.reindex(out.index).astype("int64")
    return out


def nearest_preceding_wave(
    sessions: pd.DataFrame,
    survey_dates: pd.DataFrame,
    *,
    waves: Sequence[str],
    id_col: str = "participant_id",
    time_col: str = "started_at",
    date_col: str = "completed_at",
    wave_col: str = "wave",
) -> pd.DataFrame:
    """Attach to each session the participant's latest survey wave completed before it.

    Parameters
    ----------
    sessions : pandas.DataFrame
        One row per session with ``id_col`` and a datetime ``time_col``.
    survey_dates : pandas.DataFrame
        One row per participant x wave with ``id_col``, ``wave_col`` and a datetime
        ``date_col`` (when that wave's survey was completed).
    waves : sequence of str
        Wave labels in study order; breaks ties between waves completed at the same moment
        (the later wave wins).
    id_col, time_col, date_col, wave_col : str
        Column names.

    Returns
    -------
    pandas.DataFrame
        A copy of ``sessions`` (same row order) with ``state_wave`` (the wave label, missing
        when no survey precedes the session) and ``state_completed_at`` (its completion time).

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or a wave label is not in ``waves``.

    Notes
    -----
    A survey completed exactly at the session's start counts as preceding it ("on or before").

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.study.frames import nearest_preceding_wave
    >>> s = pd.DataFrame({"participant_id": ["a", "a"],
    ...                   "started_at": pd.to_datetime(["2024-03-05", "2024-03-20"])})
    >>> d = pd.DataFrame({"participant_id": ["a", "a"], "wave": ["pre", "mid"],
    ...                   "completed_at": pd.to_datetime(["2024-03-01", "2024-03-15"])})
    >>> nearest_preceding_wave(s, d, waves=["pre", "mid", "post"])["state_wave"].tolist()
    ['pre', 'mid']
    """
    func = "nearest_preceding_wave"
    check_frame(sessions, [id_col, time_col], where=func, name="sessions")
    check_frame(survey_dates, [id_col, wave_col, date_col], where=func, name="survey_dates")
    waves = list(waves)
    unknown = sorted(set(survey_dates[wave_col].dropna().astype(str)) - set(waves))
    if unknown:
        raise InvalidParameterError(
            f"the `survey_dates` parameter of {func} has waves {unknown} that are not in "
            f"`waves` {waves}"
        )
    out = sessions.copy()
    left = pd.DataFrame(
        {
            "_pos": np.arange(len(out)),
            "_id": out[id_col].astype(str).to_numpy(),
            "_t": out[time_col].to_numpy(),
        }
    )
    right = survey_dates[[id_col, wave_col, date_col]].dropna(subset=[date_col]).copy()
    right = pd.DataFrame(
        {
            "_id": right[id_col].astype(str).to_numpy(),
            "_t": right[date_col].to_numpy(),
            "_order": right[wave_col].map({w: i for i, w in enumerate(waves)}).to_numpy(),
            "state_wave": right[wave_col].astype(str).to_numpy(),
            "state_completed_at": right[date_col].to_numpy(),
        }
    )
    right = right.sort_values(["_t", "_order"], kind="mergesort")
    left_sorted = left.dropna(subset=["_t"]).sort_values("_t", kind="mergesort")
    merged = pd.merge_asof(
        left_sorted,
        right.drop(columns="_order"),
        on="_t",
        by="_id",
        direction="backward",
        allow_exact_matches=True,
    ).set_index("_pos")
    wave = merged["state_wave"].reindex(np.arange(len(out)))
    completed = merged["state_completed_at"].reindex(np.arange(len(out)))
    out["state_wave"] = pd.Categorical(wave.to_numpy(), categories=waves, ordered=True)
    out["state_completed_at"] = pd.to_datetime(completed.to_numpy())
    return out


# ---------------------------------------------------------------------------------------------
# frames of a loaded study


def _wide_scores(study: Study, instruments: Sequence[str], *, waves: Sequence[str] | None):
    """Person (x wave) wide table of the scores of ``instruments``."""
    id_col = study.config.id_col
    scores = study.scores
    keep = scores["instrument"].isin(list(instruments))
    if waves is not None:
        keep &= scores["wave"].isin(list(waves))
    sub = scores.loc[keep]
    columns = [scale_column(i, s) for i, s in zip(sub["instrument"], sub["scale"], strict=True)]
    sub = sub.assign(_column=columns)
    order = []
    for inst in instruments:  # instrument order of the config, scale order of the scoring
        order.extend(dict.fromkeys(sub.loc[sub["instrument"] == inst, "_column"]))
    if sub.empty:
        return pd.DataFrame(columns=[id_col, "wave"]), []
    wide = sub.pivot(index=[id_col, "wave"], columns="_column", values="score")
    wide = wide.reindex(columns=order).reset_index()
    wide.columns.name = None
    return wide, order


def _traits_wide(study: Study) -> tuple[pd.DataFrame, list[str]]:
    first = study.config.waves[0]
    wide, cols = _wide_scores(study, study.trait_instruments, waves=[first])
    wide = wide.drop(columns="wave")
    return wide.reset_index(drop=True), cols


def _states_wide(study: Study) -> tuple[pd.DataFrame, list[str]]:
    return _wide_scores(study, study.state_instruments, waves=None)


def _sessions_with_waves(study: Study) -> pd.DataFrame:
    cfg = study.config
    sessions = time_coding(study.sessions, id_col=cfg.id_col)
    return nearest_preceding_wave(sessions, study.survey_dates, waves=cfg.waves, id_col=cfg.id_col)


def _feature_columns(study: Study) -> list[str]:
    """Every numeric behaviour column: the frames carry them all; models pick their own."""
    return list(study.numeric_session_columns or study.session_features)


def story_frame(study: Study) -> pd.DataFrame:
    """One row per empathy rating, with traits, preceding states, session features and time.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study.

    Returns
    -------
    pandas.DataFrame
        Sorted by participant, session start and position; columns

        - the id column (``[study] id_col``), ``session_id``, ``story_id``, ``position``,
          the rating column (``empathy``), any other numeric rating columns;
        - ``started_at``, ``day``, ``week``, ``session_index``;
        - the numeric session features of ``sessions.csv``;
        - ``state_wave`` and ``state_completed_at`` (nearest preceding wave);
        - one column per trait scale (first wave) and per state scale (``state_wave``).

        Sessions without ratings have no row here (the exclusion log lists them).

    See Also
    --------
    session_frame, person_wave_frame
    """
    cfg = study.config
    id_col = cfg.id_col
    sessions = _sessions_with_waves(study)
    features = _feature_columns(study)
    ratings = study.ratings
    rating_cols = [id_col, "session_id", "story_id", "position", cfg.rating_col]
    extra = [
        c
        for c in ratings.columns
        if c not in rating_cols and pd.api.types.is_numeric_dtype(ratings[c])
    ]
    time_cols = ["started_at", "day", "week", "session_index"]
    sess = sessions[["session_id", *time_cols, *features, "state_wave", "state_completed_at"]]
    frame = ratings[rating_cols + extra].merge(sess, on="session_id", how="left", validate="m:1")
    frame = _attach_scores(study, frame)
    frame = frame.sort_values([id_col, "started_at", "session_id", "position"], kind="mergesort")
    return frame.reset_index(drop=True)


def _attach_scores(study: Study, frame: pd.DataFrame) -> pd.DataFrame:
    id_col = study.config.id_col
    traits, _ = _traits_wide(study)
    states, state_cols = _states_wide(study)
    out = frame.merge(traits, on=id_col, how="left", validate="m:1")
    states = states.rename(columns={"wave": "state_wave"})
    states["state_wave"] = states["state_wave"].astype(str)
    left_wave = out["state_wave"].astype(object).where(out["state_wave"].notna(), None)
    out = out.assign(_wave=left_wave).merge(
        states.rename(columns={"state_wave": "_wave"}),
        on=[id_col, "_wave"],
        how="left",
        validate="m:1",
    )
    for col in state_cols:
        if col not in out.columns:
            out[col] = np.nan
    return out.drop(columns="_wave")


def session_frame(study: Study) -> pd.DataFrame:
    """One row per session, with time coding, rating summary, traits and preceding states.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study.

    Returns
    -------
    pandas.DataFrame
        Sorted by participant and session start; columns

        - the id column, ``session_id``, ``started_at``, ``day``, ``week``, ``session_index``;
        - the numeric session features;
        - ``n_ratings`` (ratings kept for the session, possibly 0) and ``empathy_mean``
          (their mean, missing when there are none; named ``{rating_col}_mean``);
        - ``state_wave``, ``state_completed_at``, trait and state score columns.

    See Also
    --------
    story_frame, person_wave_frame
    """
    cfg = study.config
    id_col = cfg.id_col
    sessions = _sessions_with_waves(study)
    features = _feature_columns(study)
    cols = [id_col, "session_id", "started_at", "day", "week", "session_index", *features]
    frame = sessions[[*cols, "state_wave", "state_completed_at"]]
    ratings = study.ratings
    summary = ratings.groupby("session_id", sort=False)[cfg.rating_col].agg(["size", "mean"])
    summary = summary.rename(columns={"size": "n_ratings", "mean": f"{cfg.rating_col}_mean"})
    frame = frame.merge(summary, left_on="session_id", right_index=True, how="left")
    frame["n_ratings"] = frame["n_ratings"].fillna(0).astype("int64")
    order = [*cols, "n_ratings", f"{cfg.rating_col}_mean", "state_wave", "state_completed_at"]
    frame = _attach_scores(study, frame[order])
    frame = frame.sort_values([id_col, "started_at", "session_id"], kind="mergesort")
    return frame.reset_index(drop=True)


def person_wave_frame(study: Study) -> pd.DataFrame:
    """One row per participant x completed survey wave, with state and trait scores.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study.

    Returns
    -------
    pandas.DataFrame
        Sorted by participant and wave; only waves a participant completed appear. Columns

        - the id column, ``wave`` (ordered categorical in study order), ``wave_index``
          (0 for the first wave), ``completed_at``, ``day`` (calendar days from the
          participant's first session to the survey; negative before it, missing for a
          participant without sessions);
        - ``n_sessions`` and ``{rating_col}_mean``: sessions whose nearest preceding wave is
          this one, and the mean rating over their ratings;
        - one column per state scale (this wave) and per trait scale (first wave).

    See Also
    --------
    story_frame, session_frame
    """
    cfg = study.config
    id_col = cfg.id_col
    waves = list(cfg.waves)
    dates = study.survey_dates[[id_col, "wave", "completed_at"]].copy()
    dates["wave"] = dates["wave"].astype(str)
    states, state_cols = _states_wide(study)
    states["wave"] = states["wave"].astype(str)
    frame = dates.merge(states, on=[id_col, "wave"], how="outer", validate="1:1")
    traits, trait_cols = _traits_wide(study)
    frame = frame.merge(traits, on=id_col, how="left", validate="m:1")
    frame["wave_index"] = frame["wave"].map({w: i for i, w in enumerate(waves)}).astype("int64")

    sessions = _sessions_with_waves(study)
    first = sessions.groupby(id_col)["started_at"].min().dt.normalize()
    start = frame[id_col].map(first)
    frame["day"] = (frame["completed_at"].dt.normalize() - start).dt.days.astype("Float64")

    ratings = study.ratings[["session_id", cfg.rating_col]]
    per_session = sessions[[id_col, "session_id", "state_wave"]].dropna(subset=["state_wave"])
    per_session = per_session.assign(state_wave=per_session["state_wave"].astype(str))
    n_sessions = per_session.groupby([id_col, "state_wave"]).size().rename("n_sessions")
    rated = per_session.merge(ratings, on="session_id", how="inner")
    mean_rating = (
        rated.groupby([id_col, "state_wave"])[cfg.rating_col]
        .mean()
        .rename(f"{cfg.rating_col}_mean")
    )
    by = pd.concat([n_sessions, mean_rating], axis=1).reset_index()
    by = by.rename(columns={"state_wave": "wave"})
    frame = frame.merge(by, on=[id_col, "wave"], how="left")
    frame["n_sessions"] = frame["n_sessions"].fillna(0).astype("int64")
    if f"{cfg.rating_col}_mean" not in frame.columns:
        frame[f"{cfg.rating_col}_mean"] = np.nan
    frame["wave"] = pd.Categorical(frame["wave"], categories=waves, ordered=True)
    order = [
        id_col,
        "wave",
        "wave_index",
        "completed_at",
        "day",
        "n_sessions",
        f"{cfg.rating_col}_mean",
        *state_cols,
        *trait_cols,
    ]
    frame = frame[order].sort_values([id_col, "wave_index"], kind="mergesort")
    return frame.reset_index(drop=True)
