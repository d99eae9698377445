"""The simulator's generating parameters: design, instruments, latent structure, empathy model.

Every number here is part of the truth a simulated study is checked against (``truth.json``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from datetime import date

import numpy as np

from surveys import ScaleKey, load_instrument

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

_PREDICTOR_TEXT = {
    "agreeableness_z": "BFI-44 agreeableness (pre) standardized across participants",
    "openness_z": "BFI-44 openness (pre) standardized across participants",
    "absorption_z": "tas4 mean (pre) standardized across participants",
    "sites_z": "sites item (pre) standardized across participants",
    "cls9_humanity_between_z": "person mean of cls9_humanity over the waves before "
    "the person's ratings (pre, and mid when a session follows it), "
    "centred at the mean of person means, divided by the SD at pre",
    "cls9_humanity_within_z": "cls9_humanity at the last completed wave before the session "
    "minus the person mean, divided by the SD at pre",
    "who5_between_z": "as cls9_humanity_between_z for who5 (percentage score)",
    "who5_within_z": "as cls9_humanity_within_z for who5 (percentage score)",
    "words_z": "session words standardized over all sessions (ddof=1)",
    "week": "calendar days since the person's first session, divided by 7",
}
"""What each empathy predictor of the truth is (``truth.json``: empathy.predictors)."""
