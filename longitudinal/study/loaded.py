"""Study directories: read, validate and score a longitudinal empathy study.

A study directory holds ``study.toml`` (what is where), ``participants.csv``, one or more
raw survey exports, ``sessions.csv`` and ``ratings.csv`` (see ``docs/study.md``).
:func:`load_study` reads all of it, checks every file against the others, scores every
instrument with :func:`surveys.scoring.score`, and returns a :class:`Study`.

Two kinds of problems are told apart:

- problems that make the study unusable (an unknown participant, a duplicate session id, a
  rating outside the declared scale, an unparseable date, a missing column, ...) are
  collected over *all* files and raised once as :class:`surveys.InputValidationError`, whose
  ``failure_cases`` table has the columns ``file, row, column, value, reason``;
- rows that can be safely left out are dropped and written to the exclusion log
  (:attr:`Study.exclusions`, columns ``file, row, reason, scope``): Qualtrics previews, tests
  and unfinished responses, sessions that started before the participant's first survey
  (with each of their ratings), ratings without a value, and sessions without ratings (kept
  in the session frame, absent from the story frame).

Rows are numbered as in :mod:`surveys.readers`: the header is row 1 and the first data row
of a CSV file is row 2 (blank lines are counted and skipped).

``study.toml`` is parsed by :mod:`longitudinal.study.config`, the plain CSV tables are read
by :mod:`longitudinal.study.tables` and the files are checked against each other and the
surveys scored by the loader in :mod:`longitudinal.study._loader`; this module holds
:class:`Study` and :func:`load_study`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from _empathic_base.results import Result
from longitudinal._errors import InvalidParameterError
from longitudinal.study import frames as _frames
from longitudinal.study.config import (
    CONFIG_FILE,
    DEFAULT_DEMOGRAPHICS,
    RatingsSpec,
    StudyConfig,
    SurveySpec,
)
from longitudinal.study.config import read_study_config as _read_study_config
from longitudinal.study.config import study_inputs as _study_inputs
from longitudinal.study.tables import EXCLUSION_COLUMNS
from surveys import InputValidationError

__all__ = [
    "EXCLUSION_COLUMNS",
    "RatingsSpec",
    "Study",
    "StudyConfig",
    "SurveySpec",
    "load_study",
    "read_study_config",
    "study_inputs",
]


# ---------------------------------------------------------------------------------------------
# the study


@dataclass(frozen=True, repr=False)
class Study(Result):
    """A loaded, validated and scored study directory.

    Use :func:`load_study` (or :meth:`Study.load`) to create one.

    Attributes
    ----------
    root : pathlib.Path
        The study directory.
    config : StudyConfig
        Parsed ``study.toml``.
    participants : pandas.DataFrame
        ``participants.csv``: the id column (str) and the other columns (float where every
        cell is a number, else str).
    sessions : pandas.DataFrame
        Sessions kept: the id column, ``session_id`` (str), ``started_at`` (datetime64,
        wall-clock time), numeric features (float) and other columns (str), in file order.
    ratings : pandas.DataFrame
        Ratings kept: the id column, ``session_id``, ``story_id`` (str), ``position`` (int),
        the rating column (float) and other columns, in file order.
    survey_dates : pandas.DataFrame
        ``id column, wave, completed_at``: one row per participant x wave with a survey (the
        latest completion time over that wave's files).
    scores : pandas.DataFrame
        Tidy scale scores, one block per instrument x wave: ``id column, wave, instrument,
        scale, score, n_items, n_answered`` (traits at the first wave only).
    reliability : pandas.DataFrame
        ``instrument, scale, wave, n, n_items, alpha, alpha_ci_low, alpha_ci_high,
        alpha_standardized, omega_total`` from :func:`surveys.scoring.score`.
    item_stats : pandas.DataFrame
        Item statistics per instrument x scale x wave.
    missing : pandas.DataFrame
        Unscored respondents per instrument x scale x wave.
    item_answers : pandas.DataFrame
        The keyed item answers, one row per answer: ``id column, wave, instrument, scale,
        item, answer``, on the participant x wave rows scored for the instrument (traits at
        the first wave only). ``answer`` (float) is reverse keyed from the scale's declared
        range as the scoring does (:func:`surveys.keyed_item_answers`), NaN when missing; an
        item of two scales has a row in each. Multilevel reliability and measurement
        invariance read their answers here.
    exclusions : pandas.DataFrame
        The exclusion log: ``file, row, reason, scope``. ``scope`` is ``"study"`` for rows
        left out of everything and ``"story_frame"`` for sessions kept in the session frame
        but absent from the story frame (no ratings).
    instruments : dict
        ``{name: surveys.instruments.Instrument}`` of every instrument scored, keyed by the
        instrument's own name (the ``instrument`` column of :attr:`scores`).
    instrument_names : dict
        ``{entry in study.toml: instrument name}``; the same string for library instruments,
        the file stem's ``name`` for a custom ``.toml`` key.
    inputs : tuple of str
        Every file read, relative to ``root`` (for checksums).
    session_features : tuple of str
        The behaviour columns of ``sessions.csv`` the analyses use: ``[roles] session_features``
        of study.toml, or every numeric column when it is not given.
    numeric_session_columns : tuple of str
        Every numeric behaviour column of ``sessions.csv`` (described in the report).
    meta : dict
        Row counts read / kept / excluded per file and the scoring parameters.
    id_map : dict or None
        ``{raw id: pseudonym}`` of a study from :meth:`pseudonymised`; None for the study as
        loaded.
    """

    root: Path
    config: StudyConfig
    participants: pd.DataFrame
    sessions: pd.DataFrame
    ratings: pd.DataFrame
    survey_dates: pd.DataFrame
    scores: pd.DataFrame
    reliability: pd.DataFrame
    item_stats: pd.DataFrame
    missing: pd.DataFrame
    item_answers: pd.DataFrame
    exclusions: pd.DataFrame
    instruments: dict[str, Any]
    instrument_names: dict[str, str]
    inputs: tuple[str, ...]
    session_features: tuple[str, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    numeric_session_columns: tuple[str, ...] = ()
    id_map: dict[str, str] | None = None

    def _title(self) -> str:
        cfg = self.config
        return (
            f"Study({cfg.name!r}: {len(self.participants)} participants, {len(self.sessions)} "
            f"sessions, {len(self.ratings)} ratings, waves {', '.join(cfg.waves)}; "
            f"{len(self.exclusions)} row(s) in the exclusion log)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        cfg = self.config
        rows = [
            ("participants", len(self.participants)),
            ("sessions", len(self.sessions)),
            ("ratings", len(self.ratings)),
            ("survey waves", ", ".join(cfg.waves)),
            ("instruments", ", ".join(self.instrument_names) or "none"),
            ("session features in the models", ", ".join(self.session_features) or "none"),
            ("rows in the exclusion log", len(self.exclusions)),
        ]
        overview = pd.DataFrame(
            {"quantity": [k for k, _ in rows], "value": [str(v) for _, v in rows]}
        )
        return [(f"Study {cfg.name}", overview), ("Exclusion log", self.exclusions)]

    @classmethod
    def load(cls, path: str | Path) -> Study:
        """Load a study directory; see :func:`load_study`."""
        return load_study(path)

    def story_frame(self) -> pd.DataFrame:
        """One row per rating; see :func:`longitudinal.study.frames.story_frame`.

        Built once per Study; each call returns a copy.
        """
        return self._story_frame.copy()

    def session_frame(self) -> pd.DataFrame:
        """One row per session; see :func:`longitudinal.study.frames.session_frame`.

        Built once per Study; each call returns a copy.
        """
        return self._session_frame.copy()

    def person_wave_frame(self) -> pd.DataFrame:
        """One row per participant x wave; see :func:`longitudinal.study.frames.person_wave_frame`.

        Built once per Study; each call returns a copy.
        """
        return self._person_wave_frame.copy()

    def pseudonymised(self, key: bytes) -> Study:
        """Return this study with every participant id replaced by its pseudonym.

        Parameters
        ----------
        key : bytes
            The secret key of the pseudonyms (:func:`pseudonym_map`): the same key gives the
            same pseudonyms.

        Returns
        -------
        Study
            The same study, its tables renamed: the id column of :attr:`participants`,
            :attr:`sessions`, :attr:`ratings`, :attr:`survey_dates`, :attr:`scores` and
            :attr:`item_answers` holds the pseudonyms, and their rows are put in pseudonym
            order (stably, so each participant's rows keep their order): a table listed in the
            raw ids' order would let a reader who knows the ids map every pseudonym back.
            Session ids, which often hold the participant's raw id, become
            ``{pseudonym}-{n}`` (``n`` counting the participant's sessions in the order of
            their raw ids), in sessions and ratings alike. The exclusion log, the scoring
            notes and the other tables are kept as they are (free text is not searched for
            ids). :attr:`id_map` holds ``{raw id: pseudonym}``.

        Raises
        ------
        longitudinal.InvalidParameterError
            If `key` is not non-empty bytes.

        Examples
        --------
        >>> from longitudinal.study.loaded import load_study
        >>> shown = load_study("path/to/study").pseudonymised(b"...")  # doctest: +SKIP
        >>> shown.participants["participant_id"].head(2).tolist()  # doctest: +SKIP
        ['S01', 'S02']
        """
        if not isinstance(key, bytes) or not key:
            raise InvalidParameterError(
                "the `key` parameter of Study.pseudonymised must be non-empty bytes; got "
                f"{type(key).__name__}"
            )
        id_col = self.config.id_col
        id_map = pseudonym_map(self.participants[id_col].astype(str), key=key)
        sessions = pseudonymised_frame(self.sessions, id_col, id_map)
        session_map = _session_pseudonyms(self.sessions, self.ratings, id_col, id_map)
        ratings = pseudonymised_frame(self.ratings, id_col, id_map)
        for table in (sessions, ratings):
            table["session_id"] = table["session_id"].map(session_map)
        return dataclasses.replace(
            self,
            participants=pseudonymised_frame(self.participants, id_col, id_map),
            sessions=sessions,
            ratings=ratings,
            survey_dates=pseudonymised_frame(self.survey_dates, id_col, id_map),
            scores=pseudonymised_frame(self.scores, id_col, id_map),
            item_answers=pseudonymised_frame(self.item_answers, id_col, id_map),
            id_map=id_map,
        )

    @functools.cached_property
    def _story_frame(self) -> pd.DataFrame:
        return _frames.story_frame(self)

    @functools.cached_property
    def _session_frame(self) -> pd.DataFrame:
        return _frames.session_frame(self)

    @functools.cached_property
    def _person_wave_frame(self) -> pd.DataFrame:
        return _frames.person_wave_frame(self)

    @property
    def trait_instruments(self) -> tuple[str, ...]:
        """Names (as in :attr:`scores`) of the trait instruments, in ``[roles]`` order."""
        return tuple(self.instrument_names[n] for n in self.config.traits)

    @property
    def state_instruments(self) -> tuple[str, ...]:
        """Names (as in :attr:`scores`) of the state instruments, in ``[roles]`` order."""
        return tuple(self.instrument_names[n] for n in self.config.states)

    @property
    def demographics(self) -> tuple[str, ...]:
        """Participant columns summarised in reports (configured, or the usual names found)."""
        if self.config.demographics is not None:
            return tuple(c for c in self.config.demographics if c in self.participants.columns)
        return tuple(c for c in DEFAULT_DEMOGRAPHICS if c in self.participants.columns)


def pseudonym_map(ids: Iterable[str], *, key: bytes, prefix: str = "S") -> dict[str, str]:
    """Give participant ids pseudonyms, numbered in an order only the key reveals.

    The pseudonym of an id is its rank under a keyed hash (HMAC-SHA-256), so the numbering is
    a random permutation for anyone without the key; numbers are zero-padded to at least two
    digits. See :func:`longitudinal.report.pseudonyms.pseudonyms`.
    """
    unique = {str(i) for i in ids}
    order = sorted(unique, key=lambda raw: hmac.new(key, raw.encode(), hashlib.sha256).digest())
    width = max(2, len(str(len(order))))
    return {raw: f"{prefix}{k:0{width}d}" for k, raw in enumerate(order, start=1)}


def pseudonymised_frame(
    frame: pd.DataFrame, id_col: str, id_map: Mapping[str, str]
) -> pd.DataFrame:
    """Put pseudonyms in the id column, the rows in pseudonym order (stable)."""
    out = frame.copy()
    out[id_col] = out[id_col].astype(str).map(id_map)
    return out.sort_values(id_col, kind="mergesort", na_position="last").reset_index(drop=True)


def _session_pseudonyms(
    sessions: pd.DataFrame, ratings: pd.DataFrame, id_col: str, id_map: Mapping[str, str]
) -> dict[str, str]:
    """``{raw session id: {pseudonym}-{n}}``, ``n`` in the order of the participant's raw ids.

    The numbers are zero-padded to one width, so the new ids sort within a participant as the
    raw ids did (the frames break ties between sessions by session id).
    """
    owned = pd.concat([sessions[[id_col, "session_id"]], ratings[[id_col, "session_id"]]])
    owned = owned.drop_duplicates("session_id")
    counts = owned.groupby(id_col)["session_id"].size()
    width = len(str(int(counts.max()))) if len(counts) else 1
    out: dict[str, str] = {}
    for raw_id, group in owned.groupby(id_col, sort=False):
        shown = id_map.get(str(raw_id), "")
        for n, session in enumerate(sorted(group["session_id"]), start=1):
            out[session] = f"{shown}-{n:0{width}d}"
    return out


def load_study(path: str | Path) -> Study:
    """Read, validate and score a study directory.

    Parameters
    ----------
    path : str or path-like
        The study directory (holding ``study.toml``).

    Returns
    -------
    Study
        Validated tables, scale scores, reliability and the exclusion log.

    Raises
    ------
    surveys.InputValidationError
        One error listing every problem in every file (``failure_cases``: ``file, row,
        column, value, reason``; ``row`` is the file row with the header as row 1): problems
        of ``study.toml``; missing files or required columns; unknown instruments; unknown or
        missing participant ids in ratings, sessions or surveys; duplicate participant ids,
        session ids, participant x wave x instrument surveys or session x position ratings;
        unparseable ``started_at`` or survey dates; ratings that are non-numeric, outside
        ``[scale_min, scale_max]``, for an unknown session or for a session of another
        participant; invalid positions; and every problem the survey readers and
        :func:`surveys.validation.validate_responses` find.
    longitudinal.InvalidParameterError
        If ``path`` does not exist.

    Notes
    -----
    Excluded and logged (never silently dropped): Qualtrics previews, tests, spam and
    unfinished responses (read with ``flagged="exclude"``); sessions that started before the
    participant's first survey (their pre survey, or their earliest survey when pre is
    missing) together with each of their ratings; ratings with an empty rating cell; and
    sessions without ratings (``scope="story_frame"``: they stay in :attr:`Study.sessions`).

    Times are read as ISO 8601 and kept as wall-clock time (a UTC offset, if written, is
    dropped, not converted), so days are counted in the participant's local calendar.

    Traits are scored from the first wave only; every other instrument at every wave the
    export holds.

    Examples
    --------
    >>> from longitudinal.study.loaded import load_study
    >>> study = load_study("path/to/study")  # doctest: +SKIP
    >>> study.exclusions.head()  # doctest: +SKIP
    """
    root = Path(path)
    if not root.exists():
        raise InvalidParameterError(
            f"the `path` parameter of load_study must be a study directory; "
            f"{str(path)!r} does not exist"
        )
    if not root.is_dir():
        raise InvalidParameterError(
            f"the `path` parameter of load_study must be a study directory (holding "
            f"{CONFIG_FILE}); got the file {str(path)!r}"
        )
    return load_configured_study(root, read_study_config(root))


def load_configured_study(root: Path, config: StudyConfig) -> Study:
    """Load the study directory ``root`` whose ``study.toml`` was read into ``config``."""
    from longitudinal.study._loader import _Loader  # the loader checks; the Study is built here

    return Study(**_Loader(root, config).run())


def _refuse_deep_toml(reason: str) -> None:
    """Refuse a study.toml whose instrument key files nest too deeply for the TOML parser."""
    raise InputValidationError(
        pd.DataFrame([{"file": CONFIG_FILE, "row": None, "reason": f"not valid TOML: {reason}"}]),
        summary=f"cannot read {CONFIG_FILE}",
    )


_NESTED_KEY = "an instrument key file it names nests arrays or inline tables too deeply"


@functools.wraps(_read_study_config)
def read_study_config(path: str | Path) -> StudyConfig:  # noqa: D103 (docstring from wraps)
    try:
        return _read_study_config(path)
    except RecursionError:
        _refuse_deep_toml(_NESTED_KEY)
        raise


@functools.wraps(_study_inputs)
def study_inputs(path: str | Path) -> list[Path]:  # noqa: D103 (docstring from wraps)
    try:
        return _study_inputs(path)
    except RecursionError:
        _refuse_deep_toml(_NESTED_KEY)
        raise
