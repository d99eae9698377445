"""Synthetic EmpathicStories++ study with known truth.

A twin of the EmpathicStories++ deployment (Shen et al., ACL Findings 2024): 41 participants
living with a social robot for a month, 6-12 sessions each (269 in total), three stories rated
for empathy (1-5) per session, and pre/mid/post questionnaires. Every number is generated from
parameters written to ``truth.json``, so analyses of the simulated study can be checked against
the truth.

:func:`simulate_frames` returns the simulated tables in memory (:class:`SimulatedStudy`);
:func:`simulate_study` writes them as a study directory in the layout of
``docs/architecture.md``::

    study.toml                  waves pre/mid/post, surveys blocks, roles
    participants.csv            participant_id, age, gender
    sessions.csv                participant_id, session_id, started_at, duration_min, words,
                                n_utterances and 11 audio/face/text aggregates
    ratings.csv                 participant_id, session_id, story_id, position, empathy
    surveys/pre.csv             plain CSV: participant_id, completed_at, all 83 items
    surveys/mid.csv             plain CSV: participant_id, completed_at, the 24 state items
    surveys/post_qualtrics.csv  Qualtrics export (3 header lines) of the 24 state items
    surveys/post_map.csv        column,item: Qualtrics column -> item id
    truth.json                  every generating parameter (keys below)

Generating model
----------------
*Latent person variables.* Ten standard-normal latent variables per participant, correlated
as in ``truth["latent"]``: the Big Five (extraversion, agreeableness, conscientiousness,
neuroticism, openness), absorption, trait empathy, and the stable person level of three
states (compassion, social connection, well-being).

*Item responses* (every instrument). For item *j* with loading ``l`` and thresholds
``t_1 < ... < t_{K-1}``, the keyed response of a person with latent value ``eta`` is
``response_min + #{k : y > t_k}`` with ``y = l * eta + sqrt(1 - l**2) * e`` and
``e ~ N(0, 1)``. Reverse-keyed items are written reversed,
``raw = response_min + response_max - keyed``. Traits are answered at *pre* only. A state
scale's latent value at wave *w* is
``eta = wave_mean_latent[w] + sd_person * u + sd_change * c * t_w + sd_occasion * o``
with ``u`` the person's latent state level, ``c, o ~ N(0, 1)`` independent and
``t_w = 0, 0.5, 1`` for pre, mid, post (months since pre), so the latent variance at pre
is 1 and states move over the month with person-level variation in change.

*Observed scores* (what the effects below are defined on). Items, reverse keys, response
ranges and scoring rules are read from the instrument files (:func:`surveys.load_instrument`),
and every scale is scored from the simulated item responses by :func:`surveys.score`, so the
generator and the library cannot disagree: reverse keyed items are reflected with
``response_min + response_max - x``; BFI-44 scales, tas4, cls9_humanity and ubc_sscs10 are
the mean of the answered items, sites is its single item and who5 is the sum of its 5 items
times 4 (percentage, 0-100).

*Empathy ratings* follow a cumulative-logit (ordinal) model. For rating *r* of story *s* by
person *p* in session *i*::

    latent_r = intercept + sum_k fixed[k] * x_k + b0_p + b1_p * week_i + v_s + e_r
    empathy  = 1 + #{k : latent_r > cutpoints[k]},      e_r ~ standard logistic

with ``(b0_p, b1_p)`` bivariate normal (``sd_person_intercept``, ``sd_person_slope_week``,
``corr_person``) and ``v_s ~ N(0, sd_story**2)`` for each story of the pool. The
predictors ``x_k`` are all computable from the written files:

``agreeableness_z``, ``openness_z``
    BFI-44 scale score at pre, standardized across participants (sample mean, SD with
    ``ddof=1``): effects are per SD of the person's observed scale score.
``absorption_z``, ``sites_z``
    the same for the tas4 mean and the sites item.
``cls9_humanity_between_z``, ``who5_between_z``
    the person's mean state score over the waves they completed (pre, mid, post) minus the
    mean of these person means, divided by the SD of the scale score at pre across
    participants (``ddof=1``).
``cls9_humanity_within_z``, ``who5_within_z``
    the state score of the most recent wave completed before the session (pre, or mid when
    the session is after the mid survey date and the mid survey was answered) minus the
    person's mean over completed waves, divided by the same SD at pre.
``words_z``
    the session's spoken words standardized over all sessions in ``sessions.csv``
    (``ddof=1``).
``week``
    ``(session date - date of the person's first session).days / 7`` (calendar days).

No other session feature affects empathy. The intercept is 0; the cutpoints carry the
location. They were chosen so that ratings have mean about 3.3 and SD about 1.2.

Sessions
--------
Participant *p* answers the pre survey on their enrolment day (``day 0``), the mid survey on
day 13-16 and the post survey on day 30-33. Sessions happen on distinct days 1-29 (never on
the mid survey day), at 08:00-22:00. The number of sessions per person is 6 plus a share of
``round(n_participants * 269 / 41) - 6 * n_participants`` extra sessions (at most 12 in all),
so the default study has exactly 269. Duration and words are drawn from skewed distributions
driven by a person-level and session-level engagement factor, then affinely rescaled so that
their sample mean and SD equal the paper's (12 min, SD 4.5; 1,258 words, SD 531) and clipped to
the paper's ranges (2-29 min; 40-3,418 words); the session features are correlated with them.

Defects
-------
With ``defects=True`` (default): one participant skipped the mid survey, one BFI-44 item at pre
is blank, one session has no ratings, and the Qualtrics export holds one "Survey Preview" row
(``DistributionChannel`` ``preview``, empty ``participant_id``) as its first data row (line 4).

truth.json
----------
``seed``, ``n_participants``, ``n_sessions``, ``n_ratings``, ``n_stories_pool``
    the call and the realized sizes.
``generator``
    ``{"module": "longitudinal.simulate", "version": ...}``.
``calendar``
    ``study_start`` (ISO date of the earliest enrolment day), ``enrolment_days`` (range of the
    enrolment offset), ``mid_day``, ``post_day`` (ranges of the survey days after pre),
    ``session_days``, ``session_hours`` and ``wave_time`` (``t_w`` in months).
``participants``
    how age and gender were drawn.
``latent``
    ``names`` and ``correlation`` (matrix) of the ten latent person variables.
``items``
    per item id: ``instrument``, ``scale`` (truth key), ``loading``, ``thresholds`` (latent
    scale), ``reverse`` (written reversed).
``traits``
    per trait key (``extraversion``, ``agreeableness``, ``conscientiousness``, ``neuroticism``,
    ``openness``, ``absorption`` (tas4), ``sites``): ``instrument``, ``latent``, ``items``,
    ``reverse``, ``response_min``, ``response_max``, ``scoring``, ``multiplier``,
    ``expected_score`` (population mean of the observed score) and ``sample`` (mean and SD of
    the observed score in this study, used for the ``*_z`` predictors).
``states``
    per instrument (``cls9_humanity``, ``ubc_sscs10``, ``who5``): the same scale fields plus
    ``wave_means`` (population mean of the observed score at pre, mid, post, on the scoring
    above: item mean for cls9_humanity and ubc_sscs10, percentage for who5),
    ``change`` (``mid - pre``, ``post - pre`` of ``wave_means``), ``wave_means_latent``
    (``wave_mean_latent[w]``), ``sd_person``, ``sd_change`` and ``sd_occasion`` (latent units)
    and ``sample`` (observed mean/SD at each wave, and the pre SD that scales the predictors).
``empathy``
    ``family`` ("ordinal-logit"), ``link``, ``scale_min``, ``scale_max``, ``intercept``,
    ``cutpoints`` (4 values), ``fixed`` (the coefficients named above, logit units per unit of
    the predictor), ``sd_person_intercept``, ``sd_person_slope_week``, ``corr_person``,
    ``sd_story``, ``residual`` (the logistic error), ``predictors`` (one-line definition of
    each), ``standardization`` (mean and SD used for ``words_z``), ``target_mean``,
    ``target_sd`` and ``realized`` (mean and SD of the written ratings).
``random_effects``
    the realized ``person`` effects (``intercept``, ``slope_week`` per participant id) and
    ``story`` effects (per story id of the pool).
``sessions``
    targets of duration and words, the session-count rule and a description of every feature.
``defects``
    ``missed_mid`` (ids), ``skipped_item`` (``participant_id``, ``wave``, ``item``, ``file``,
    ``row``) or ``null``, ``session_without_ratings`` (session ids),
    ``qualtrics_preview_rows`` (count) and ``qualtrics_preview_lines`` (file lines).

Floats in truth.json are rounded to 12 significant digits and CSV floats are written with a
fixed number of decimals per column, so the same seed gives byte-identical files.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from longitudinal._checks import check_bool, check_int
from longitudinal._errors import InvalidParameterError
from longitudinal._output import write_csv, write_json
from surveys import ScaleKey, SurveysWarning, load_instrument, score

__all__ = ["SimulatedStudy", "simulate_frames", "simulate_study"]

WAVES = ("pre", "mid", "post")
_WAVE_TIME = {"pre": 0.0, "mid": 0.5, "post": 1.0}
_STUDY_START = date(2023, 3, 6)
_PAPER_SESSIONS, _PAPER_PEOPLE = 269, 41
_MIN_SESSIONS, _MAX_SESSIONS = 6, 12
_N_STORIES = 600
_STORIES_PER_SESSION = 3
_SESSION_DAYS = (1, 29)
_SESSION_HOURS = (8, 22)
_MID_DAYS = (13, 16)
_POST_DAYS = (30, 33)
_ENROLMENT_DAYS = (0, 28)
_GENDERS = ("woman", "man", "non-binary")
_GENDER_P = (0.56, 0.39, 0.05)
_DURATION = {"mean": 12.0, "sd": 4.5, "min": 2.0, "max": 29.0}
_WORDS = {"mean": 1258.0, "sd": 531.0, "min": 40.0, "max": 3418.0}

_LATENT = (
    "extraversion",
    "agreeableness",
    "conscientiousness",
    "neuroticism",
    "openness",
    "absorption",
    "trait_empathy",
    "compassion",
    "social_connection",
    "wellbeing",
)
# Lower triangle of the latent correlation matrix (pairs not listed are 0).
_LATENT_CORR = {
    ("extraversion", "agreeableness"): 0.15,
    ("extraversion", "conscientiousness"): 0.10,
    ("extraversion", "neuroticism"): -0.25,
    ("extraversion", "openness"): 0.20,
    ("agreeableness", "conscientiousness"): 0.25,
    ("agreeableness", "neuroticism"): -0.25,
    ("agreeableness", "openness"): 0.10,
    ("conscientiousness", "neuroticism"): -0.25,
    ("conscientiousness", "openness"): 0.05,
    ("absorption", "openness"): 0.45,
    ("absorption", "extraversion"): 0.10,
    ("absorption", "agreeableness"): 0.10,
    ("trait_empathy", "agreeableness"): 0.45,
    ("trait_empathy", "openness"): 0.20,
    ("trait_empathy", "extraversion"): 0.10,
    ("trait_empathy", "absorption"): 0.20,
    ("compassion", "agreeableness"): 0.40,
    ("compassion", "trait_empathy"): 0.45,
    ("compassion", "openness"): 0.20,
    ("compassion", "extraversion"): 0.15,
    ("social_connection", "extraversion"): 0.35,
    ("social_connection", "neuroticism"): -0.35,
    ("social_connection", "agreeableness"): 0.20,
    ("social_connection", "compassion"): 0.30,
    ("wellbeing", "neuroticism"): -0.45,
    ("wellbeing", "extraversion"): 0.30,
    ("wellbeing", "conscientiousness"): 0.20,
    ("wellbeing", "social_connection"): 0.50,
    ("wellbeing", "compassion"): 0.15,
}


@dataclass(frozen=True)
class _Scale:
    """A simulated scale: keys from the instrument file, generating values from here."""

    key: str  # name in truth.json and in the scores table
    instrument: str
    scale: str  # the scale's name in the instrument file
    latent: str
    probs: tuple[float, ...]  # keyed category probabilities of an item at latent N(0, 1)
    loadings: tuple[float, float]  # range of item loadings

    @property
    def spec(self) -> ScaleKey:
        return _scale_key(self.instrument, self.scale)

    @property
    def items(self) -> tuple[str, ...]:
        return self.spec.items

    @property
    def reverse_items(self) -> tuple[str, ...]:
        return self.spec.reverse

    @property
    def response_min(self) -> int:
        return int(self.spec.response_min)

    @property
    def response_max(self) -> int:
        return int(self.spec.response_max)

    @property
    def scoring(self) -> str:
        return self.spec.scoring

    @property
    def multiplier(self) -> float:
        return float(self.spec.multiplier)

    @property
    def reversed_mask(self) -> np.ndarray:
        return np.isin(np.array(self.items), np.array(self.reverse_items, dtype=object))


@functools.cache
def _scale_key(instrument: str, scale: str) -> ScaleKey:
    (key,) = (k for k in load_instrument(instrument).scales if k.name == scale)
    return key


def _bfi(key: str, probs: tuple[float, ...]) -> _Scale:
    return _Scale(key, "bfi44", key, key, probs, (0.55, 0.78))


_TRAITS = (
    _bfi("extraversion", (0.07, 0.18, 0.22, 0.33, 0.20)),
    _bfi("agreeableness", (0.02, 0.08, 0.17, 0.40, 0.33)),
    _bfi("conscientiousness", (0.03, 0.11, 0.20, 0.38, 0.28)),
    _bfi("neuroticism", (0.12, 0.27, 0.22, 0.27, 0.12)),
    _bfi("openness", (0.03, 0.10, 0.22, 0.38, 0.27)),
    _Scale(
        "absorption",
        "tas4",
        "absorption",
        "absorption",
        (0.06, 0.16, 0.24, 0.34, 0.20),
        (0.68, 0.82),
    ),
    _Scale(
        "sites", "sites", "empathy", "trait_empathy", (0.02, 0.05, 0.15, 0.40, 0.38), (0.80, 0.80)
    ),
)
_STATES = (
    _Scale(
        "cls9_humanity",
        "cls9_humanity",
        "compassionate_love",
        "compassion",
        (0.02, 0.05, 0.10, 0.20, 0.28, 0.22, 0.13),
        (0.62, 0.80),
    ),
    _Scale(
        "ubc_sscs10",
        "ubc_sscs10",
        "social_connection",
        "social_connection",
        (0.03, 0.07, 0.12, 0.20, 0.27, 0.20, 0.11),
        (0.58, 0.78),
    ),
    _Scale(
        "who5",
        "who5",
        "percentage",
        "wellbeing",
        (0.04, 0.12, 0.20, 0.28, 0.26, 0.10),
        (0.70, 0.84),
    ),
)
_INSTRUMENTS = ("bfi44", "tas4", "sites", "cls9_humanity", "ubc_sscs10", "who5")
# Latent change of the states over the month (latent SD units at pre), and person variation.
_STATE_WAVE_MEANS = {
    "cls9_humanity": {"pre": 0.0, "mid": 0.15, "post": 0.30},
    "ubc_sscs10": {"pre": 0.0, "mid": 0.20, "post": 0.35},
    "who5": {"pre": 0.0, "mid": 0.05, "post": 0.15},
}
_SD_STATE_PERSON = 0.85
_SD_STATE_OCCASION = math.sqrt(1.0 - _SD_STATE_PERSON**2)
_SD_STATE_CHANGE = 0.30
_ITEM_LOCATION_SD = 0.15

_EMPATHY_FIXED = {
    "agreeableness_z": 0.20,
    "openness_z": 0.10,
    "absorption_z": 0.25,
    "sites_z": 0.20,
    "cls9_humanity_between_z": 0.25,
    "cls9_humanity_within_z": 0.20,
    "who5_between_z": 0.10,
    "who5_within_z": 0.15,
    "words_z": 0.15,
    "week": 0.05,
}
_EMPATHY_INTERCEPT = 0.0
_EMPATHY_CUTPOINTS = (-2.73, -1.30, 0.17, 1.85)
_SD_PERSON_INTERCEPT = 0.80
_SD_PERSON_SLOPE_WEEK = 0.12
_CORR_PERSON = -0.30
_SD_STORY = 0.50

_ALPHABET = np.array(list("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))
_POST_BLOCKS = {"cls9_humanity": 1, "ubc_sscs10": 2, "who5": 3}
_POST_LABELS = {
    "cls9_humanity": "Compassionate love for humanity",
    "ubc_sscs10": "State social connection",
    "who5": "Well-being",
}
_QUALTRICS_META = (
    ("StartDate", "Start Date", '{"ImportId":"startDate","timeZone":"America/New_York"}'),
    ("EndDate", "End Date", '{"ImportId":"endDate","timeZone":"America/New_York"}'),
    ("Status", "Response Type", '{"ImportId":"status"}'),
    ("IPAddress", "IP Address", '{"ImportId":"ipAddress"}'),
    ("Progress", "Progress", '{"ImportId":"progress"}'),
    ("Duration (in seconds)", "Duration (in seconds)", '{"ImportId":"duration"}'),
    ("Finished", "Finished", '{"ImportId":"finished"}'),
    ("RecordedDate", "Recorded Date", '{"ImportId":"recordedDate","timeZone":"America/New_York"}'),
    ("ResponseId", "Response ID", '{"ImportId":"_recordId"}'),
    ("DistributionChannel", "Distribution Channel", '{"ImportId":"distributionChannel"}'),
    ("UserLanguage", "User Language", '{"ImportId":"userLanguage"}'),
)

# Session features: column -> (decimals, description).
_FEATURES = {
    "audio_pitch_mean": (2, "mean F0 of the participant's speech, Hz"),
    "audio_pitch_sd": (2, "SD of F0 within the session, Hz"),
    "audio_loudness_mean": (4, "mean loudness (openSMILE, sone)"),
    "audio_speech_rate": (3, "syllables per second while speaking"),
    "audio_pause_ratio": (4, "share of the participant's turns spent in pauses"),
    "face_gaze_on_robot": (4, "share of face frames with gaze on the robot"),
    "face_smile_au12": (4, "mean AU12 (lip corner puller) intensity, 0-5"),
    "face_au04_brow": (4, "mean AU04 (brow lowerer) intensity, 0-5"),
    "face_head_motion": (3, "mean head rotation speed, degrees per second"),
    "text_sentiment": (4, "mean sentence sentiment of the transcript, -1 to 1"),
    "text_first_person_rate": (4, "share of words that are first-person pronouns"),
}


@dataclass(frozen=True)
class SimulatedStudy:
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


# ----------------------------------------------------------------------------------------------
# helpers


def _num(x: float) -> float:
    """Round to 12 significant digits for a stable JSON text."""
    return float(f"{float(x):.12g}")


def _fmt(values: np.ndarray, decimals: int) -> list[str]:
    return [f"{v:.{decimals}f}" for v in values]


def _rounded(values: np.ndarray, decimals: int) -> np.ndarray:
    """Round as written: return the float of the decimal text."""
    return np.array([float(s) for s in _fmt(values, decimals)])


def _latent_correlation() -> np.ndarray:
    idx = {name: i for i, name in enumerate(_LATENT)}
    corr = np.eye(len(_LATENT))
    for (a, b), r in _LATENT_CORR.items():
        corr[idx[a], idx[b]] = corr[idx[b], idx[a]] = r
    return corr


def _item_params(scale: _Scale, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    k = len(scale.items)
    low, high = scale.loadings
    loadings = rng.uniform(low, high, size=k)
    base = ndtri(np.cumsum(scale.probs)[:-1])
    shift = rng.normal(0.0, _ITEM_LOCATION_SD, size=k) if k > 1 else np.zeros(1)
    thresholds = base[None, :] + shift[:, None]
    return loadings, thresholds


def _responses(
    eta: np.ndarray,
    scale: _Scale,
    loadings: np.ndarray,
    thresholds: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draw raw responses (reverse items written reversed), shape (n, items)."""
    noise = rng.standard_normal((eta.size, loadings.size))
    ystar = eta[:, None] * loadings[None, :] + noise * np.sqrt(1.0 - loadings**2)[None, :]
    keyed = scale.response_min + (ystar[:, :, None] > thresholds[None, :, :]).sum(axis=2)
    raw = keyed.astype(float)
    rev = scale.reversed_mask
    raw[:, rev] = scale.response_min + scale.response_max - raw[:, rev]
    return raw


def _score(items: pd.DataFrame, scale: _Scale) -> np.ndarray:
    """Score one scale of a simulated wave with :func:`surveys.score` (rows in input order)."""
    frame = items.loc[:, ["participant_id", *load_instrument(scale.instrument).items]]
    with warnings.catch_warnings():
        # only the scores are used here; reliability diagnostics (a one-item scale, a Heywood
        # case in a small sample) are the report's business, not the generator's
        warnings.simplefilter("ignore", SurveysWarning)
        result = score(frame, scale.instrument, id_col="participant_id")
    table = result.scores[result.scores["scale"] == scale.scale].set_index("id")
    return table["score"].reindex(items["participant_id"]).to_numpy(dtype=float)


def _expected_score(
    scale: _Scale, loadings: np.ndarray, thresholds: np.ndarray, mean: float, var: float
) -> float:
    """Return the population mean of the observed score for a N(mean, var) latent value."""
    sd = np.sqrt(loadings**2 * var + 1.0 - loadings**2)
    per_item = scale.response_min + ndtr((loadings[:, None] * mean - thresholds) / sd[:, None]).sum(
        axis=1
    )
    total = per_item.mean() if scale.scoring == "mean" else per_item.sum()
    return float(total * scale.multiplier)


def _sample_sd(x: np.ndarray) -> float:
    return float(np.std(x, ddof=1))


def _rescale(raw: np.ndarray, target: dict[str, float]) -> np.ndarray:
    z = (raw - raw.mean()) / _sample_sd(raw)
    return np.clip(target["mean"] + target["sd"] * z, target["min"], target["max"])


def _allocate_sessions(n: int, rng: np.random.Generator) -> np.ndarray:
    total = round(n * _PAPER_SESSIONS / _PAPER_PEOPLE)
    counts = np.full(n, _MIN_SESSIONS)
    extra = max(total - counts.sum(), 0)
    weight = rng.gamma(0.35, 1.0, size=n) + 1e-9
    for _ in range(extra):
        open_ = counts < _MAX_SESSIONS
        w = np.where(open_, weight, 0.0)
        if w.sum() <= 0 or not open_.any():
            break
        counts[rng.choice(n, p=w / w.sum())] += 1
    return counts


def _questionnaire_order(items: dict[str, Any]) -> list[str]:
    """Order item ids by instrument (study order) and item number."""

    def key(item: str) -> tuple[int, int]:
        instrument, number = item.rsplit("_", 1)
        return _INSTRUMENTS.index(instrument), int(number)

    return sorted(items, key=key)


def _ids(n: int) -> list[str]:
    width = max(2, len(str(n)))
    return [f"P{i + 1:0{width}d}" for i in range(n)]


def _random_time(rng: np.random.Generator, hours: tuple[int, int]) -> timedelta:
    hour = int(rng.integers(hours[0], hours[1]))
    return timedelta(hours=hour, minutes=int(rng.integers(0, 60)), seconds=int(rng.integers(0, 60)))


# ----------------------------------------------------------------------------------------------
# simulation


def simulate_frames(
    *, seed: int = 2024, n_participants: int = 41, defects: bool = True
) -> SimulatedStudy:
    """Simulate the EmpathicStories++ twin in memory.

    Parameters
    ----------
    seed : int, default 2024
        Seed of every random step (``numpy.random.SeedSequence``); the same seed gives the
        same tables.
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
    .75-.90) are checked in ``tests/longitudinal/test_simulate.py``.

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


def _simulate_surveys(
    rng_latent: np.random.Generator,
    rng_items: np.random.Generator,
    pids: list[str],
    calendar: dict[str, Any],
    missed_mid: set[str],
    skipped_person: str | None,
    skipped_item: str,
) -> tuple[dict[str, pd.DataFrame], dict[str, Any], np.ndarray, dict[str, Any] | None]:
    n = len(pids)
    corr = _latent_correlation()
    latent = rng_latent.standard_normal((n, len(_LATENT))) @ np.linalg.cholesky(corr).T
    lat = {name: latent[:, i] for i, name in enumerate(_LATENT)}
    change = rng_latent.standard_normal((n, len(_STATES)))
    occasion = rng_latent.standard_normal((n, len(_STATES), len(WAVES)))

    params = {scale.key: _item_params(scale, rng_items) for scale in (*_TRAITS, *_STATES)}
    answers: dict[str, dict[str, np.ndarray]] = {wave: {} for wave in WAVES}
    for scale in _TRAITS:
        raw = _responses(lat[scale.latent], scale, *params[scale.key], rng_items)
        answers["pre"].update({item: raw[:, j] for j, item in enumerate(scale.items)})
    for s, scale in enumerate(_STATES):
        for w, wave in enumerate(WAVES):
            eta = (
                _STATE_WAVE_MEANS[scale.key][wave]
                + _SD_STATE_PERSON * lat[scale.latent]
                + _SD_STATE_CHANGE * change[:, s] * _WAVE_TIME[wave]
                + _SD_STATE_OCCASION * occasion[:, s, w]
            )
            raw = _responses(eta, scale, *params[scale.key], rng_items)
            answers[wave].update({item: raw[:, j] for j, item in enumerate(scale.items)})

    surveys: dict[str, pd.DataFrame] = {}
    for wave in WAVES:
        cols: dict[str, Any] = {
            "participant_id": pids,
            "completed_at": [d.isoformat() for d in calendar[wave]],
        }
        cols.update({item: answers[wave][item] for item in _questionnaire_order(answers[wave])})
        frame = pd.DataFrame(cols)
        if wave == "mid" and missed_mid:
            frame = frame[~frame["participant_id"].isin(missed_mid)].reset_index(drop=True)
        surveys[wave] = frame

    skipped = None
    if skipped_person is not None:
        pre = surveys["pre"].copy()
        row = int(np.flatnonzero(pre["participant_id"].to_numpy() == skipped_person)[0])
        pre.loc[row, skipped_item] = np.nan
        surveys["pre"] = pre
        skipped = {
            "participant_id": skipped_person,
            "wave": "pre",
            "item": skipped_item,
            "file": "surveys/pre.csv",
            "row": row + 2,
        }
    return surveys, params, corr, skipped


@dataclass(frozen=True)
class _Observed:
    scores: pd.DataFrame  # participant_id, wave, scale, score
    trait_z: dict[str, np.ndarray]  # per trait key, aligned with the participant ids
    trait_sample: dict[str, dict[str, float]]
    state: dict[str, pd.DataFrame]  # per state key: index participant_id, columns waves
    state_sample: dict[str, dict[str, Any]]


def _observed_scores(surveys: dict[str, pd.DataFrame], pids: list[str]) -> _Observed:
    rows = []
    trait_z, trait_sample = {}, {}
    for scale in _TRAITS:
        sc = _score(surveys["pre"], scale)
        trait_sample[scale.key] = {"mean": float(sc.mean()), "sd": _sample_sd(sc)}
        trait_z[scale.key] = (sc - sc.mean()) / _sample_sd(sc)
        rows.append((pids, "pre", scale.key, sc))
    state, state_sample = {}, {}
    for scale in _STATES:
        table = pd.DataFrame(
            np.nan, index=pd.Index(pids, name="participant_id"), columns=list(WAVES)
        )
        for wave in WAVES:
            sc = _score(surveys[wave], scale)
            ids = surveys[wave]["participant_id"].to_numpy()
            table.loc[ids, wave] = sc
            rows.append((ids, wave, scale.key, sc))
        state[scale.key] = table
        state_sample[scale.key] = {
            "wave_mean": {w: float(table[w].mean()) for w in WAVES},
            "wave_sd": {w: float(table[w].std(ddof=1)) for w in WAVES},
            "sd_pre": float(table["pre"].std(ddof=1)),
        }
    scores = pd.concat(
        [
            pd.DataFrame({"participant_id": ids, "wave": wave, "scale": key, "score": sc})
            for ids, wave, key, sc in rows
        ],
        ignore_index=True,
    )
    order = {
        "participant_id": {p: i for i, p in enumerate(pids)},
        "wave": {w: i for i, w in enumerate(WAVES)},
        "scale": {s.key: i for i, s in enumerate((*_TRAITS, *_STATES))},
    }
    sort_key = pd.DataFrame({col: scores[col].map(rank) for col, rank in order.items()})
    scores = scores.iloc[sort_key.sort_values(list(order), kind="stable").index]
    return _Observed(
        scores=scores.reset_index(drop=True),
        trait_z=trait_z,
        trait_sample=trait_sample,
        state=state,
        state_sample=state_sample,
    )


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
    for key in ("cls9_humanity", "who5"):
        table = observed.state[key]
        person_mean = table.mean(axis=1, skipna=True).to_numpy()
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


def _qualtrics_export(
    rng: np.random.Generator, post: pd.DataFrame, post_dates: list[date], defects: bool
) -> tuple[pd.DataFrame, list[int]]:
    """Build the Qualtrics data rows (strings) and list the file lines of preview rows."""
    items = [item for scale in _STATES for item in scale.items]
    columns = [name for name, _, _ in _QUALTRICS_META]
    columns += [_qualtrics_column(item) for item in items] + ["participant_id"]
    answers = post.loc[:, items].to_dict("records")
    rows = [
        _qualtrics_row(rng, post_dates[i], str(pid), answers[i], preview=False)
        for i, pid in enumerate(post["participant_id"])
    ]
    rows.sort(key=lambda row: (row["RecordedDate"], row["participant_id"]))
    preview_lines: list[int] = []
    if defects:
        day = min(post_dates) - timedelta(days=int(rng.integers(2, 6)))
        fake = {
            item: float(rng.integers(1, 6)) - (1.0 if item.startswith("who5") else 0.0)
            for item in items
        }
        rows.insert(0, _qualtrics_row(rng, day, "", fake, preview=True))
        preview_lines = [4]
    return pd.DataFrame(rows, columns=columns), preview_lines


def _qualtrics_column(item: str) -> str:
    instrument, number = item.rsplit("_", 1)
    return f"Q{_POST_BLOCKS[instrument]}_{number}"


def _qualtrics_row(
    rng: np.random.Generator,
    day: date,
    pid: str,
    answers: dict[str, float],
    *,
    preview: bool,
) -> dict[str, str]:
    seconds = int(rng.integers(150, 901))
    end = datetime.combine(day, datetime.min.time()) + _random_time(rng, (9, 23))
    start = end - timedelta(seconds=seconds)
    response_id = "R_" + "".join(_ALPHABET[rng.integers(0, len(_ALPHABET), size=15)])
    net = ("192.0.2", "198.51.100", "203.0.113")[int(rng.integers(0, 3))]
    ip = f"{net}.{int(rng.integers(1, 255))}"
    stamp = "%Y-%m-%d %H:%M:%S"
    row = {
        "StartDate": start.strftime(stamp),
        "EndDate": end.strftime(stamp),
        "Status": "Survey Preview" if preview else "IP Address",
        "IPAddress": "" if preview else ip,
        "Progress": "100",
        "Duration (in seconds)": str(seconds),
        "Finished": "True",
        "RecordedDate": end.strftime(stamp),
        "ResponseId": response_id,
        "DistributionChannel": "preview" if preview else "anonymous",
        "UserLanguage": "EN",
    }
    for item, value in answers.items():
        row[_qualtrics_column(item)] = "" if np.isnan(value) else str(int(value))
    row["participant_id"] = pid
    return row


def _scale_fields(scale: _Scale) -> dict[str, Any]:
    return {
        "instrument": scale.instrument,
        "latent": scale.latent,
        "items": list(scale.items),
        "reverse": list(scale.reverse_items),
        "response_min": scale.response_min,
        "response_max": scale.response_max,
        "scoring": scale.scoring,
        "multiplier": scale.multiplier,
    }


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

    empathy_values = ratings["empathy"].to_numpy(dtype=float)
    predictors = {
        "agreeableness_z": "BFI-44 agreeableness (pre) standardized across participants",
        "openness_z": "BFI-44 openness (pre) standardized across participants",
        "absorption_z": "tas4 mean (pre) standardized across participants",
        "sites_z": "sites item (pre) standardized across participants",
        "cls9_humanity_between_z": "person mean of cls9_humanity over completed waves, "
        "centred at the mean of person means, divided by the SD at pre",
        "cls9_humanity_within_z": "cls9_humanity at the last completed wave before the session "
        "minus the person mean, divided by the SD at pre",
        "who5_between_z": "as cls9_humanity_between_z for who5 (percentage score)",
        "who5_within_z": "as cls9_humanity_within_z for who5 (percentage score)",
        "words_z": "session words standardized over all sessions (ddof=1)",
        "week": "calendar days since the person's first session, divided by 7",
    }
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
            "predictors": predictors,
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


# ----------------------------------------------------------------------------------------------
# writing


def _study_toml(seed: int) -> str:
    states = '["cls9_humanity", "ubc_sscs10", "who5"]'
    return f"""[study]
name = "EmpathicStories++ synthetic twin (seed {seed})"
waves = ["pre", "mid", "post"]
id_col = "participant_id"

[ratings]
file = "ratings.csv"
scale_min = 1
scale_max = 5

[sessions]
file = "sessions.csv"

[participants]
file = "participants.csv"

[[surveys]]
file = "surveys/pre.csv"
format = "csv"
wave = "pre"
id_col = "participant_id"
date_col = "completed_at"
instruments = ["bfi44", "tas4", "sites", "cls9_humanity", "ubc_sscs10", "who5"]

[[surveys]]
file = "surveys/mid.csv"
format = "csv"
wave = "mid"
id_col = "participant_id"
date_col = "completed_at"
instruments = {states}

[[surveys]]
file = "surveys/post_qualtrics.csv"
format = "qualtrics"
wave = "post"
id_col = "participant_id"
date_col = "RecordedDate"
instruments = {states}
item_map = "surveys/post_map.csv"

[roles]
traits = ["bfi44", "tas4", "sites"]
states = {states}
session_features = ["words"]
"""


def _item_strings(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if col in ("participant_id", "completed_at"):
            continue
        out[col] = ["" if pd.isna(v) else str(int(v)) for v in out[col]]
    return out


def simulate_study(
    out_dir: str | Path,
    *,
    seed: int = 2024,
    n_participants: int = 41,
    defects: bool = True,
    overwrite: bool = False,
) -> Path:
    r"""Write a synthetic EmpathicStories++ study directory with known truth.

    Parameters
    ----------
    out_dir : str or pathlib.Path
        Directory to write; created if missing (parents included).
    seed : int, default 2024
        Seed of every random step; the same seed writes byte-identical files.
    n_participants : int, default 41
        Number of participants, 3 to 9999.
    defects : bool, default True
        Add the realistic defects (see the module docstring).
    overwrite : bool, default False
        Write into a directory that is not empty. Files of the study layout are replaced;
        other files are left alone.

    Returns
    -------
    pathlib.Path
        The study directory. It holds ``study.toml``, ``participants.csv``, ``sessions.csv``,
        ``ratings.csv``, ``surveys/pre.csv``, ``surveys/mid.csv``,
        ``surveys/post_qualtrics.csv``, ``surveys/post_map.csv`` and ``truth.json``.

    Raises
    ------
    InvalidParameterError
        If ``out_dir`` is a file or a non-empty directory (without ``overwrite=True``), or a
        parameter has the wrong type or value.

    See Also
    --------
    simulate_frames : the same tables in memory.

    Notes
    -----
    Tables are formatted deterministically: integers as integers, floats with a fixed number
    of decimals per column, ``\n`` line ends, JSON with sorted keys and floats rounded to 12
    significant digits. The Qualtrics export follows the three-line header layout of
    Qualtrics CSV exports (column names, question text, ``ImportId`` JSON) without a byte
    order mark.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from longitudinal.simulate import simulate_study
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     study = simulate_study(Path(tmp) / "study", seed=7)
    ...     sorted(p.name for p in study.iterdir() if not p.name.startswith("."))
    ['participants.csv', 'ratings.csv', 'sessions.csv', 'study.toml', 'surveys', 'truth.json']
    """
    func = "simulate_study"
    if not isinstance(out_dir, str | Path):
        raise InvalidParameterError(
            f"The `out_dir` parameter of `{func}` must be a str or pathlib.Path; "
            f"got {type(out_dir).__name__}."
        )
    overwrite = check_bool(overwrite, name="overwrite", where=func)
    from longitudinal._output import MARKER, check_out_dir

    out = check_out_dir(out_dir, overwrite=overwrite, func=func, command="simulate")
    sim = simulate_frames(seed=seed, n_participants=n_participants, defects=defects)

    (out / "surveys").mkdir(parents=True, exist_ok=True)
    (out / "study.toml").write_text(_study_toml(sim.truth["seed"]), encoding="utf-8")
    write_csv(sim.participants, out / "participants.csv")

    sessions = sim.sessions.copy()
    sessions["duration_min"] = _fmt(sessions["duration_min"].to_numpy(), 2)
    for name, (decimals, _) in _FEATURES.items():
        sessions[name] = _fmt(sessions[name].to_numpy(), decimals)
    write_csv(sessions, out / "sessions.csv")
    write_csv(sim.ratings, out / "ratings.csv")

    write_csv(_item_strings(sim.surveys["pre"]), out / "surveys" / "pre.csv")
    write_csv(_item_strings(sim.surveys["mid"]), out / "surveys" / "mid.csv")
    _write_qualtrics(sim.post_qualtrics, out / "surveys" / "post_qualtrics.csv")
    items = [item for scale in _STATES for item in scale.items]
    item_map = pd.DataFrame({"column": [_qualtrics_column(i) for i in items], "item": items})
    write_csv(item_map, out / "surveys" / "post_map.csv")

    write_json(sim.truth, out / "truth.json")
    (out / MARKER).write_text("simulate\n", encoding="utf-8")
    return out


def _write_qualtrics(rows: pd.DataFrame, path: Path) -> None:
    meta = {name: (text, import_id) for name, text, import_id in _QUALTRICS_META}
    text_row, import_row = {}, {}
    for col in rows.columns:
        if col in meta:
            text_row[col], import_row[col] = meta[col]
        elif col == "participant_id":
            text_row[col], import_row[col] = "participant_id", '{"ImportId":"participant_id"}'
        else:
            block, number = col[1:].split("_")
            instrument = next(k for k, v in _POST_BLOCKS.items() if v == int(block))
            text_row[col] = f"{_POST_LABELS[instrument]} - item {number}"
            import_row[col] = f'{{"ImportId":"QID{block}_{number}"}}'
    header = pd.DataFrame([text_row, import_row], columns=rows.columns)
    write_csv(pd.concat([header, rows], ignore_index=True), path)
