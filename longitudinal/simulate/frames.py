"""The simulated study as data frames: participants, surveys, sessions, ratings and the truth."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._checks import check_bool, check_int
from longitudinal._display import Result
from longitudinal.simulate._questionnaires import (
    _allocate_sessions,
    _expected_score,
    _ids,
    _num,
    _Observed,
    _observed_scores,
    _qualtrics_export,
    _random_time,
    _rescale,
    _rounded,
    _sample_sd,
    _scale_fields,
    _simulate_surveys,
)
from longitudinal.simulate.parameters import (
    _CORR_PERSON,
    _DURATION,
    _EMPATHY_CUTPOINTS,
    _EMPATHY_FIXED,
    _EMPATHY_INTERCEPT,
    _ENROLMENT_DAYS,
    _FEATURES,
    _GENDER_P,
    _GENDERS,
    _LATENT,
    _MAX_SESSIONS,
    _MID_DAYS,
    _MIN_SESSIONS,
    _N_STORIES,
    _POST_DAYS,
    _PREDICTOR_TEXT,
    _SD_PERSON_INTERCEPT,
    _SD_PERSON_SLOPE_WEEK,
    _SD_STATE_CHANGE,
    _SD_STATE_OCCASION,
    _SD_STATE_PERSON,
    _SD_STORY,
    _SESSION_DAYS,
    _SESSION_HOURS,
    _STATE_WAVE_MEANS,
    _STATES,
    _STORIES_PER_SESSION,
    _STUDY_START,
    _TRAITS,
    _WAVE_TIME,
    _WORDS,
    WAVES,
)


@dataclass(frozen=True, repr=False)
class SimulatedStudy(Result):
    """Tables of a simulated study, as written by :func:`simulate_study`.

    Attributes
    ----------
    participants : pandas.DataFrame
        ``participant_id, age, gender``.
    sessions : pandas.DataFrame
        ``participant_id, session_id, started_at`` (ISO 8601 string), ``duration_min, words,
        n_utterances`` and the 11 feature columns listed in ``truth["sessions"]["features"]``,
        with the values as written (rounded).
    ratings : pandas.DataFrame
        ``participant_id, session_id, story_id, position, empathy``.
    surveys : dict of str to pandas.DataFrame
        Per wave (``pre``, ``mid``, ``post``): ``participant_id, completed_at`` (ISO date) and
        one float column per item id (NaN for a skipped item). The post wave is the content of
        the Qualtrics export without its preview row, with item ids as columns.
    post_qualtrics : pandas.DataFrame
        The data rows of ``surveys/post_qualtrics.csv`` as strings, preview row included.
    scores : pandas.DataFrame
        Observed scale scores: ``participant_id, wave, scale, score`` (``scale`` is the truth
        key, e.g. ``agreeableness`` or ``who5``).
    design : pandas.DataFrame
        One row per rating: ``participant_id, session_id, story_id, position, day, week,
        wave_used``, the predictors of ``truth["empathy"]["fixed"]``, ``person_intercept,
        person_slope_week, story_effect, linear_predictor, latent, empathy``.
    truth : dict
        The content of ``truth.json`` (see the module docstring).
    """

    participants: pd.DataFrame
    sessions: pd.DataFrame
    ratings: pd.DataFrame
    surveys: dict[str, pd.DataFrame]
    post_qualtrics: pd.DataFrame
    scores: pd.DataFrame
    design: pd.DataFrame
    truth: dict[str, Any]

    def _title(self) -> str:
        return (
            f"SimulatedStudy: seed {self.truth.get('seed', '?')}, {len(self.participants)} "
            f"participants, {len(self.sessions)} sessions, {len(self.ratings)} ratings"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        fixed = self.truth.get("empathy", {}).get("fixed", {})
        table = pd.DataFrame({"term": list(fixed), "value": list(fixed.values())})
        return [("Generating empathy effects (latent logit scale)", table)]


def simulate_frames(
    *, seed: int | None = None, n_participants: int = 41, defects: bool = True
) -> SimulatedStudy:
    """Simulate the EmpathicStories++ twin in memory.

    Parameters
    ----------
    seed : int, optional
        Seed of every random step (``numpy.random.SeedSequence``); the same seed gives the
        same tables. By default a fresh one, recorded in ``truth["seed"]``.
    n_participants : int, default 41
        Number of participants, 3 to 9999. The total number of sessions is
        ``round(n_participants * 269 / 41)``.
    defects : bool, default True
        Add the realistic defects (a missed mid survey, a skipped item, a session without
        ratings, a Qualtrics preview row). With False the study is complete.

    Returns
    -------
    SimulatedStudy
        The participants, sessions, ratings, surveys (per wave, item-id columns), the Qualtrics
        rows, observed scale scores, the story-level design with every generating quantity,
        and ``truth`` (see the module docstring for the keys).

    Raises
    ------
    InvalidParameterError
        If ``seed`` is not a non-negative int, ``n_participants`` is not an int in
        [3, 9999] or ``defects`` is not a bool.

    See Also
    --------
    simulate_study : write the same tables as a study directory.

    Notes
    -----
    The generating model is described in the module docstring. Calibration against the
    paper (41 people, 269 sessions, ratings mean 3.3 and SD 1.2, duration and words
    summaries) and realistic reliabilities (Cronbach's alpha of the multi-item scales about
    .75-.90) are checked in ``tests/longitudinal/simulate/test_simulate.py``.

    Examples
    --------
    >>> from longitudinal.simulate import simulate_frames
    >>> study = simulate_frames(seed=1)
    >>> len(study.participants), len(study.sessions)
    (41, 269)
    >>> sorted(study.ratings["empathy"].unique().tolist())
    [1, 2, 3, 4, 5]
    """
    func = "simulate_frames"
    if seed is None:  # a fresh seed, recorded in the truth so that the study can be redrawn
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
    seed = check_int(seed, name="seed", where=func, minimum=0, maximum=2**63 - 1)
    n = check_int(n_participants, name="n_participants", where=func, minimum=3, maximum=9999)
    defects = check_bool(defects, name="defects", where=func)

    names = ("people", "latent", "items", "calendar", "sessions", "stories", "ratings", "defects")
    children = np.random.SeedSequence(seed).spawn(len(names))
    rng = {name: np.random.default_rng(child) for name, child in zip(names, children, strict=True)}
    pids = _ids(n)

    # Defects are drawn first from their own stream, so every other draw is the same
    # with or without them.
    chosen = rng["defects"].choice(n, size=3, replace=False)
    bfi_items = [item for scale in _TRAITS if scale.instrument == "bfi44" for item in scale.items]
    skipped_item = bfi_items[int(rng["defects"].integers(0, len(bfi_items)))]
    no_rating_pick = float(rng["defects"].random())
    missed_mid = {pids[int(chosen[0])]} if defects else set()
    skipped_person = pids[int(chosen[1])] if defects else None

    participants = _simulate_participants(rng["people"], pids)
    calendar = _simulate_calendar(rng["calendar"], n)
    surveys, params, corr, skipped = _simulate_surveys(
        rng["latent"], rng["items"], pids, calendar, missed_mid, skipped_person, skipped_item
    )
    observed = _observed_scores(surveys, pids)
    sessions, session_days = _simulate_sessions(
        rng["sessions"], pids, participants["gender"].to_numpy(), calendar
    )
    x, wave_used = _predictors(sessions, session_days, observed, calendar, pids, missed_mid)
    design, person_re, story_ids, story_effect = _simulate_ratings(
        rng["stories"], rng["ratings"], sessions, session_days, x, wave_used
    )

    no_ratings: list[str] = []
    if defects:
        own = np.flatnonzero(sessions["participant_id"].to_numpy() == pids[int(chosen[2])])
        pick = own[min(int(no_rating_pick * own.size), own.size - 1)]
        no_ratings = [str(sessions["session_id"].iloc[pick])]
        design = design[~design["session_id"].isin(no_ratings)].reset_index(drop=True)
    ratings = design.loc[:, ["participant_id", "session_id", "story_id", "position", "empathy"]]

    post_qualtrics, preview_lines = _qualtrics_export(
        rng["defects"], surveys["post"], calendar["post"], defects
    )

    truth = _truth(
        seed=seed,
        n=n,
        pids=pids,
        params=params,
        corr=corr,
        observed=observed,
        words=sessions["words"].to_numpy(dtype=float),
        person_re=person_re,
        story_ids=story_ids,
        story_effect=story_effect,
        ratings=ratings,
        n_sessions=len(sessions),
        defects={
            "missed_mid": sorted(missed_mid),
            "skipped_item": skipped,
            "session_without_ratings": no_ratings,
            "qualtrics_preview_rows": len(preview_lines),
            "qualtrics_preview_lines": preview_lines,
        },
    )
    return SimulatedStudy(
        participants=participants,
        sessions=sessions,
        ratings=ratings.reset_index(drop=True),
        surveys=surveys,
        post_qualtrics=post_qualtrics,
        scores=observed.scores,
        design=design,
        truth=truth,
    )


def _simulate_participants(rng: np.random.Generator, pids: list[str]) -> pd.DataFrame:
    n = len(pids)
    gender = rng.choice(np.array(_GENDERS), size=n, p=list(_GENDER_P))
    age = np.clip(np.round(18 + np.exp(rng.normal(np.log(14.0), 0.6, size=n))), 18, 75)
    return pd.DataFrame(
        {"participant_id": pids, "age": age.astype(int), "gender": gender.astype(str)}
    )


def _simulate_calendar(rng: np.random.Generator, n: int) -> dict[str, Any]:
    """Draw survey dates per wave and the mid-survey day (days after pre) per participant."""
    enrol = rng.integers(_ENROLMENT_DAYS[0], _ENROLMENT_DAYS[1] + 1, size=n)
    mid_day = rng.integers(_MID_DAYS[0], _MID_DAYS[1] + 1, size=n)
    post_day = rng.integers(_POST_DAYS[0], _POST_DAYS[1] + 1, size=n)
    pre_date = [_STUDY_START + timedelta(days=int(d)) for d in enrol]
    return {
        "pre": pre_date,
        "mid": [d + timedelta(days=int(m)) for d, m in zip(pre_date, mid_day, strict=True)],
        "post": [d + timedelta(days=int(m)) for d, m in zip(pre_date, post_day, strict=True)],
        "mid_day": mid_day,
    }


def _simulate_sessions(
    rng: np.random.Generator,
    pids: list[str],
    gender: np.ndarray,
    calendar: dict[str, Any],
) -> tuple[pd.DataFrame, np.ndarray]:
    """Draw the sessions table and the day (after pre) of every session."""
    n = len(pids)
    counts = _allocate_sessions(n, rng)
    person_of = np.repeat(np.arange(n), counts)
    n_sessions = int(counts.sum())
    days: list[int] = []
    started: list[str] = []
    session_ids: list[str] = []
    for p in range(n):
        pool = [
            d for d in range(_SESSION_DAYS[0], _SESSION_DAYS[1] + 1) if d != calendar["mid_day"][p]
        ]
        chosen_days = np.sort(rng.choice(np.array(pool), size=counts[p], replace=False))
        midnight = datetime.combine(calendar["pre"][p], datetime.min.time())
        for k, d in enumerate(chosen_days):
            moment = midnight + timedelta(days=int(d)) + _random_time(rng, _SESSION_HOURS)
            days.append(int(d))
            started.append(moment.strftime("%Y-%m-%dT%H:%M:%S"))
            session_ids.append(f"{pids[p]}-S{k + 1:02d}")

    def person_session(sd_person: float, sd_session: float) -> np.ndarray:
        person = rng.normal(0.0, sd_person, size=n)[person_of]
        return person + rng.normal(0.0, sd_session, size=n_sessions)

    def logistic(v: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-v))

    engagement = person_session(0.55, 0.835)
    log_rate = person_session(0.70, 0.71)
    dur_raw = np.exp(0.30 * (0.75 * engagement + 0.66 * rng.standard_normal(n_sessions)))
    duration = _rounded(_rescale(dur_raw, _DURATION), 2)
    duration_z = (duration - duration.mean()) / _sample_sd(duration)
    words = np.round(_rescale(0.85 * duration_z + 0.53 * log_rate, _WORDS)).astype(int)
    words_per_utterance = 60.0 * np.exp(person_session(0.20, 0.15))
    n_utt = np.maximum(3, np.round(words / words_per_utterance)).astype(int)
    pitch = np.select([gender == "woman", gender == "man"], [205.0, 120.0], default=165.0)
    tone = person_session(0.25, 0.30)
    feats = {
        "audio_pitch_mean": pitch[person_of] + person_session(18.0, 8.0) + 3.0 * engagement,
        "audio_pitch_sd": np.maximum(8.0, 28.0 + person_session(5.0, 3.0) + 2.0 * engagement),
        "audio_loudness_mean": 0.75 * np.exp(person_session(0.25, 0.12) + 0.05 * engagement),
        "audio_speech_rate": 3.9 * np.exp(0.12 * log_rate) + rng.normal(0.0, 0.1, n_sessions),
        "audio_pause_ratio": logistic(
            np.log(0.3 / 0.7) + person_session(0.30, 0.20) - 0.2 * engagement
        ),
        "face_gaze_on_robot": logistic(
            np.log(0.45 / 0.55) + person_session(0.50, 0.30) + 0.15 * engagement
        ),
        "face_smile_au12": np.clip(
            0.7 * np.exp(person_session(0.35, 0.20) + 0.1 * engagement + 0.4 * tone), 0.0, 5.0
        ),
        "face_au04_brow": np.clip(0.35 * np.exp(person_session(0.40, 0.25)), 0.0, 5.0),
        "face_head_motion": 4.0 * np.exp(person_session(0.30, 0.20) + 0.1 * engagement),
        "text_sentiment": np.tanh(0.25 + tone),
        "text_first_person_rate": logistic(
            np.log(0.07 / 0.93) + person_session(0.15, 0.10) + 0.05 * engagement
        ),
    }
    sessions = pd.DataFrame(
        {
            "participant_id": [pids[p] for p in person_of],
            "session_id": session_ids,
            "started_at": started,
            "duration_min": duration,
            "words": words,
            "n_utterances": n_utt,
        }
    )
    for name, (decimals, _) in _FEATURES.items():
        sessions[name] = _rounded(feats[name], decimals)
    return sessions, np.array(days)


def _predictors(
    sessions: pd.DataFrame,
    days: np.ndarray,
    observed: _Observed,
    calendar: dict[str, Any],
    pids: list[str],
    missed_mid: set[str],
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Compute the empathy predictors per session and the wave whose state is used."""
    index = {p: i for i, p in enumerate(pids)}
    person_of = sessions["participant_id"].map(index).to_numpy()
    first_day = pd.Series(days).groupby(person_of).transform("min").to_numpy()
    words = sessions["words"].to_numpy(dtype=float)
    after_mid = (days > calendar["mid_day"][person_of]) & ~sessions["participant_id"].isin(
        missed_mid
    ).to_numpy()
    wave_used = np.where(after_mid, "mid", "pre")
    x = {
        "agreeableness_z": observed.trait_z["agreeableness"][person_of],
        "openness_z": observed.trait_z["openness"][person_of],
        "absorption_z": observed.trait_z["absorption"][person_of],
        "sites_z": observed.trait_z["sites"][person_of],
    }
    # A person's state mean is over the waves that precede their ratings (pre, and mid for
    # those with a session after it); post comes after the last session and never enters.
    used_mid = np.zeros(len(pids), dtype=bool)
    used_mid[np.unique(person_of[after_mid])] = True
    for key in ("cls9_humanity", "who5"):
        table = observed.state[key]
        pre, mid = table["pre"].to_numpy(), table["mid"].to_numpy()
        person_mean = np.where(used_mid & ~np.isnan(mid), (pre + mid) / 2.0, pre)
        sd_pre = observed.state_sample[key]["sd_pre"]
        current = np.where(
            after_mid, table["mid"].to_numpy()[person_of], table["pre"].to_numpy()[person_of]
        )
        x[f"{key}_between_z"] = ((person_mean - person_mean.mean()) / sd_pre)[person_of]
        x[f"{key}_within_z"] = (current - person_mean[person_of]) / sd_pre
    x["words_z"] = (words - words.mean()) / _sample_sd(words)
    x["week"] = (days - first_day) / 7.0
    return x, wave_used


def _simulate_ratings(
    rng_stories: np.random.Generator,
    rng_ratings: np.random.Generator,
    sessions: pd.DataFrame,
    days: np.ndarray,
    x: dict[str, np.ndarray],
    wave_used: np.ndarray,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """Draw story, person and rating effects; return the story-level design."""
    pids = list(dict.fromkeys(sessions["participant_id"]))
    person_of = sessions["participant_id"].map({p: i for i, p in enumerate(pids)}).to_numpy()
    counts = np.bincount(person_of, minlength=len(pids))
    n_sessions = len(sessions)

    width = max(4, len(str(_N_STORIES)))
    story_ids = np.array([f"story_{j + 1:0{width}d}" for j in range(_N_STORIES)])
    story_effect = rng_stories.normal(0.0, _SD_STORY, size=_N_STORIES)
    drawn = []
    for count in counts:
        take = int(count) * _STORIES_PER_SESSION
        drawn.append(rng_stories.choice(_N_STORIES, size=take, replace=take > _N_STORIES))
    story_idx = np.concatenate(drawn)

    cov_01 = _CORR_PERSON * _SD_PERSON_INTERCEPT * _SD_PERSON_SLOPE_WEEK
    cov = np.array([[_SD_PERSON_INTERCEPT**2, cov_01], [cov_01, _SD_PERSON_SLOPE_WEEK**2]])
    person_re = rng_ratings.standard_normal((len(pids), 2)) @ np.linalg.cholesky(cov).T
    session_of = np.repeat(np.arange(n_sessions), _STORIES_PER_SESSION)
    rater = person_of[session_of]
    week = x["week"][session_of]
    fixed_part = sum(_EMPATHY_FIXED[k] * x[k][session_of] for k in _EMPATHY_FIXED)
    b0, b1 = person_re[rater, 0], person_re[rater, 1]
    linear = _EMPATHY_INTERCEPT + fixed_part + b0 + b1 * week + story_effect[story_idx]
    latent = linear + rng_ratings.logistic(0.0, 1.0, size=linear.size)
    empathy = 1 + (latent[:, None] > np.array(_EMPATHY_CUTPOINTS)[None, :]).sum(axis=1)

    design = pd.DataFrame(
        {
            "participant_id": sessions["participant_id"].to_numpy()[session_of],
            "session_id": sessions["session_id"].to_numpy()[session_of],
            "story_id": story_ids[story_idx],
            "position": np.tile(np.arange(1, _STORIES_PER_SESSION + 1), n_sessions),
            "day": days[session_of],
            "week": week,
            "wave_used": wave_used[session_of],
        }
    )
    for k in _EMPATHY_FIXED:
        if k != "week":
            design[k] = x[k][session_of]
    design["person_intercept"] = b0
    design["person_slope_week"] = b1
    design["story_effect"] = story_effect[story_idx]
    design["linear_predictor"] = linear
    design["latent"] = latent
    design["empathy"] = empathy.astype(int)
    return design, person_re, story_ids, story_effect


def _instrument_truth(
    params: dict[str, tuple[np.ndarray, np.ndarray]], observed: _Observed
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Return the item parameters and each trait's and state's expected and sample scores."""
    items: dict[str, Any] = {}
    for scale in (*_TRAITS, *_STATES):
        loadings, thresholds = params[scale.key]
        for j, item in enumerate(scale.items):
            items[item] = {
                "instrument": scale.instrument,
                "scale": scale.key,
                "loading": _num(loadings[j]),
                "thresholds": [_num(t) for t in thresholds[j]],
                "reverse": item in scale.reverse_items,
            }
    traits = {}
    for scale in _TRAITS:
        entry = _scale_fields(scale)
        entry["expected_score"] = _num(_expected_score(scale, *params[scale.key], 0.0, 1.0))
        entry["sample"] = {k: _num(v) for k, v in observed.trait_sample[scale.key].items()}
        traits[scale.key] = entry
    states = {}
    for scale in _STATES:
        entry = _scale_fields(scale)
        means = {}
        for wave in WAVES:
            t = _WAVE_TIME[wave]
            var = _SD_STATE_PERSON**2 + (_SD_STATE_CHANGE * t) ** 2 + _SD_STATE_OCCASION**2
            mu = _STATE_WAVE_MEANS[scale.key][wave]
            means[wave] = _expected_score(scale, *params[scale.key], mu, var)
        entry["wave_means"] = {w: _num(v) for w, v in means.items()}
        entry["change"] = {
            "mid_minus_pre": _num(means["mid"] - means["pre"]),
            "post_minus_pre": _num(means["post"] - means["pre"]),
        }
        entry["wave_means_latent"] = dict(_STATE_WAVE_MEANS[scale.key])
        entry["sd_person"] = _SD_STATE_PERSON
        entry["sd_change"] = _SD_STATE_CHANGE
        entry["sd_occasion"] = _num(_SD_STATE_OCCASION)
        sample = observed.state_sample[scale.key]
        entry["sample"] = {
            "wave_mean": {w: _num(v) for w, v in sample["wave_mean"].items()},
            "wave_sd": {w: _num(v) for w, v in sample["wave_sd"].items()},
            "sd_pre": _num(sample["sd_pre"]),
        }
        states[scale.key] = entry

    return items, traits, states


def _truth(
    *,
    seed: int,
    n: int,
    pids: list[str],
    params: dict[str, tuple[np.ndarray, np.ndarray]],
    corr: np.ndarray,
    observed: _Observed,
    words: np.ndarray,
    person_re: np.ndarray,
    story_ids: np.ndarray,
    story_effect: np.ndarray,
    ratings: pd.DataFrame,
    n_sessions: int,
    defects: dict[str, Any],
) -> dict[str, Any]:
    from surveys import __version__ as pkg_version

    items, traits, states = _instrument_truth(params, observed)
    empathy_values = ratings["empathy"].to_numpy(dtype=float)
    return {
        "seed": seed,
        "n_participants": n,
        "n_sessions": n_sessions,
        "n_ratings": len(ratings),
        "n_stories_pool": _N_STORIES,
        "generator": {"module": "longitudinal.simulate", "version": pkg_version},
        "calendar": {
            "study_start": _STUDY_START.isoformat(),
            "enrolment_days": list(_ENROLMENT_DAYS),
            "mid_day": list(_MID_DAYS),
            "post_day": list(_POST_DAYS),
            "session_days": list(_SESSION_DAYS),
            "session_hours": list(_SESSION_HOURS),
            "wave_time": dict(_WAVE_TIME),
        },
        "participants": {
            "gender": dict(zip(_GENDERS, _GENDER_P, strict=True)),
            "age": "round(18 + exp(N(log 14, 0.6**2))), clipped to 18-75",
        },
        "latent": {
            "names": list(_LATENT),
            "correlation": [[_num(v) for v in row] for row in corr],
        },
        "items": items,
        "traits": traits,
        "states": states,
        "empathy": {
            "family": "ordinal-logit",
            "link": "logit",
            "scale_min": 1,
            "scale_max": 5,
            "intercept": _EMPATHY_INTERCEPT,
            "cutpoints": list(_EMPATHY_CUTPOINTS),
            "fixed": dict(_EMPATHY_FIXED),
            "sd_person_intercept": _SD_PERSON_INTERCEPT,
            "sd_person_slope_week": _SD_PERSON_SLOPE_WEEK,
            "corr_person": _CORR_PERSON,
            "sd_story": _SD_STORY,
            "residual": "standard logistic (variance pi**2 / 3)",
            "predictors": dict(_PREDICTOR_TEXT),
            "standardization": {
                "words": {"mean": _num(words.mean()), "sd": _num(_sample_sd(words))}
            },
            "target_mean": 3.3,
            "target_sd": 1.2,
            "realized": {
                "mean": _num(empathy_values.mean()),
                "sd": _num(np.std(empathy_values, ddof=1)),
            },
        },
        "random_effects": {
            "person": {
                pid: {"intercept": _num(person_re[i, 0]), "slope_week": _num(person_re[i, 1])}
                for i, pid in enumerate(pids)
            },
            "story": {sid: _num(v) for sid, v in zip(story_ids, story_effect, strict=True)},
        },
        "sessions": {
            "duration_min": dict(_DURATION),
            "words": dict(_WORDS),
            "sessions_per_participant": [_MIN_SESSIONS, _MAX_SESSIONS],
            "total_sessions_rule": "round(n_participants * 269 / 41)",
            "stories_per_session": _STORIES_PER_SESSION,
            "features": {name: desc for name, (_, desc) in _FEATURES.items()},
            "empathy_effects": "only words_z (see empathy.fixed)",
        },
        "defects": defects,
    }
