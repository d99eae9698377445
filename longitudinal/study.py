"""Study directories: read, validate and score a month-long empathy study.

A study directory holds ``study.toml`` (what is where), ``participants.csv``, one or more
raw survey exports, ``sessions.csv`` and ``ratings.csv`` (see ``docs/architecture.md``).
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
"""

from __future__ import annotations

import csv
import math
import os
import re
import tomllib
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from longitudinal import frames as _frames
from longitudinal._errors import InvalidParameterError
from surveys._errors import FAILURE_COLUMNS, InputValidationError, SurveysError

__all__ = [
    "EXCLUSION_COLUMNS",
    "RatingsSpec",
    "Study",
    "StudyConfig",
    "SurveySpec",
    "load_study",
    "read_study_config",
]

#: Columns of :attr:`Study.exclusions`.
EXCLUSION_COLUMNS = ["file", "row", "reason", "scope"]
SURVEY_FORMATS = ("csv", "xlsx", "qualtrics", "sav")
CONFIG_FILE = "study.toml"
DEFAULT_DEMOGRAPHICS = ("age", "gender", "sex", "education", "ethnicity", "race")

_SESSION_REQUIRED = ("session_id", "started_at")
_RATING_REQUIRED = ("session_id", "story_id", "position")


# ---------------------------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class SurveySpec:
    """One ``[[surveys]]`` block of ``study.toml``: a raw export and what it holds.

    Attributes
    ----------
    file : str
        Path of the export relative to the study directory.
    format : str
        ``csv``, ``xlsx``, ``qualtrics`` or ``sav``.
    instruments : tuple of str
        Instrument names (library names, or ``.toml`` paths relative to the study directory).
    id_col : str
        Participant id column in the export.
    date_col : str
        Column with the completion time (ISO 8601).
    wave : str or None
        The wave of every row (one file per wave) ...
    wave_col : str or None
        ... or the column holding the wave label (one long file).
    item_map : str or None
        Optional ``column,item`` CSV (relative path) renaming export columns to item ids.
    missing_codes : tuple
        Values that mean "no answer".
    sheet : str or None
        Worksheet of an Excel export (required when several sheets hold data).
    """

    file: str
    format: str
    instruments: tuple[str, ...]
    id_col: str
    date_col: str
    wave: str | None = None
    wave_col: str | None = None
    item_map: str | None = None
    missing_codes: tuple[float | str, ...] = ()
    sheet: str | None = None


@dataclass(frozen=True)
class RatingsSpec:
    """The ``[ratings]`` table of ``study.toml``.

    Attributes
    ----------
    file : str
        Path of the ratings file relative to the study directory.
    scale_min, scale_max : float
        Declared range of the rating scale (inclusive).
    column : str
        Name of the rating column (default ``empathy``).
    """

    file: str
    scale_min: float
    scale_max: float
    column: str = "empathy"


@dataclass(frozen=True)
class StudyConfig:
    """Parsed ``study.toml``.

    Attributes
    ----------
    name : str
        Study name.
    waves : tuple of str
        Wave labels in study order; the first is the trait wave (``pre``).
    id_col : str
        Participant id column of ``participants.csv``, ``sessions.csv`` and ``ratings.csv``.
    participants_file, sessions_file : str
        Relative paths.
    ratings : RatingsSpec
        Ratings file and scale.
    surveys : tuple of SurveySpec
        The survey exports.
    traits, states : tuple of str
        Instrument names measured at the first wave only / repeated at every wave.
    demographics : tuple of str
        Participant columns summarised in the report (default: those of ``age, gender, sex,
        education, ethnicity, race`` that exist).
    min_valid : float
        Passed to :func:`surveys.scoring.score`.
    prorate : bool
        Passed to :func:`surveys.scoring.score`.
    session_features : tuple of str or None
        ``[roles] session_features``: the behaviour columns of ``sessions.csv`` the analyses use;
        ``None`` (not given) means every numeric column other than ids and time.
    columns : tuple of (str, str)
        ``[columns]``: internal name -> the study's own column name, for the session, story,
        position and time columns (see :attr:`column_names`).
    """

    name: str
    waves: tuple[str, ...]
    id_col: str
    participants_file: str
    sessions_file: str
    ratings: RatingsSpec
    surveys: tuple[SurveySpec, ...]
    traits: tuple[str, ...]
    states: tuple[str, ...]
    demographics: tuple[str, ...] | None = None
    min_valid: float = 0.8
    prorate: bool = False
    session_features: tuple[str, ...] | None = None
    columns: tuple[tuple[str, str], ...] = ()

    @property
    def column_names(self) -> dict[str, str]:
        """The study's own names of the session, story, position and time columns.

        Keys are the names used inside the package (``session_id``, ``story_id``,
        ``position``, ``started_at``); values are the names in ``sessions.csv`` and
        ``ratings.csv`` (set in ``[columns]``; the same by default).
        """
        names = {internal: internal for internal in _COLUMN_ROLES.values()}
        names.update(dict(self.columns))
        return names

    @property
    def rating_col(self) -> str:
        """Name of the rating column."""
        return self.ratings.column


class _Failures:
    """Failure rows collected over every file; raised together."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.aliases: dict[str, dict[str, str]] = {}  # file -> internal column -> user's name

    def add(
        self,
        file: str,
        reason: str,
        *,
        row: int | None = None,
        column: str | None = None,
        value: Any = None,
    ) -> None:
        column = self.aliases.get(file, {}).get(column, column) if column else column
        self.rows.append(
            {"file": file, "row": row, "column": column, "value": value, "reason": reason}
        )

    def extend(self, cases: pd.DataFrame, *, root: Path) -> None:
        for rec in cases.reindex(columns=FAILURE_COLUMNS).itertuples(index=False):
            row = None if pd.isna(rec.row) else int(rec.row)
            value = None if _is_missing(rec.value) else rec.value
            column = None if _is_missing(rec.column) else rec.column
            self.add(_relative(rec.file, root), rec.reason, row=row, column=column, value=value)

    def __bool__(self) -> bool:
        return bool(self.rows)

    def frame(self) -> pd.DataFrame:
        """Failures grouped by file (in the order files were read), then by row."""
        cases = pd.DataFrame(self.rows, columns=FAILURE_COLUMNS)
        cases["row"] = cases["row"].astype("Int64")
        order = {f: i for i, f in enumerate(dict.fromkeys(cases["file"]))}
        keys = pd.DataFrame(
            {"f": cases["file"].map(order), "r": cases["row"].fillna(0).astype("int64")}
        )
        ranked = keys.sort_values(["f", "r"], kind="mergesort").index
        return cases.loc[ranked].reset_index(drop=True)

    def raise_if_any(self, summary: str) -> None:
        if self.rows:
            raise InputValidationError(self.frame(), summary)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def _relative(file: Any, root: Path) -> str:
    if _is_missing(file):
        return ""
    text = str(file)
    try:
        return Path(text).resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return text


_TOP_KEYS = {
    "study",
    "ratings",
    "sessions",
    "participants",
    "surveys",
    "roles",
    "scoring",
    "columns",
}
_SECTION_KEYS = {
    "study": {"name", "waves", "id_col"},
    "ratings": {"file", "scale_min", "scale_max", "column"},
    "sessions": {"file"},
    "participants": {"file", "demographics"},
    "roles": {"traits", "states", "session_features"},
    "scoring": {"min_valid", "prorate"},
    "columns": {"person", "session", "story", "position", "rating", "timestamp"},
}
# [columns] keys for the fixed columns of sessions.csv and ratings.csv -> their internal names
_COLUMN_ROLES = {
    "session": "session_id",
    "story": "story_id",
    "position": "position",
    "timestamp": "started_at",
}
_SURVEY_KEYS = {
    "file",
    "format",
    "wave",
    "wave_col",
    "id_col",
    "date_col",
    "instruments",
    "item_map",
    "missing_codes",
    "sheet",
}


def _str_list(value: Any) -> list[str] | None:
    if isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value):
        return [v.strip() for v in value]
    return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def read_study_config(path: str | Path) -> StudyConfig:
    """Read and check ``study.toml``.

    Parameters
    ----------
    path : str or path-like
        The study directory or its ``study.toml``.

    Returns
    -------
    StudyConfig
        The parsed configuration with defaults filled in.

    Raises
    ------
    surveys.InputValidationError
        Every problem of the file at once (``file`` = ``study.toml``, ``column`` = the key,
        e.g. ``surveys[2].wave``): TOML syntax, unknown keys, missing or mistyped values,
        waves not declared, a survey without ``wave`` or ``wave_col``, an unknown format,
        a role instrument that no survey measures, a trait not measured at the first wave.
    longitudinal.InvalidParameterError
        If ``path`` does not exist.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from longitudinal.study import read_study_config
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "study.toml").write_text('''
    ... [study]
    ... waves = ["pre", "post"]
    ... [ratings]
    ... scale_min = 1
    ... scale_max = 5
    ... [[surveys]]
    ... file = "surveys/all.csv"
    ... format = "csv"
    ... wave_col = "wave"
    ... date_col = "completed_at"
    ... instruments = ["who5"]
    ... [roles]
    ... traits = []
    ... states = ["who5"]
    ... ''')
    >>> cfg = read_study_config(d)
    >>> cfg.waves, cfg.ratings.scale_max, cfg.surveys[0].id_col
    (('pre', 'post'), 5.0, 'participant_id')
    >>> import shutil; shutil.rmtree(d)
    """
    path = Path(path)
    toml_path = path / CONFIG_FILE if path.is_dir() else path
    if not toml_path.exists():
        if not path.exists():
            raise InvalidParameterError(
                f"the `path` parameter of read_study_config must be a study directory or its "
                f"{CONFIG_FILE}; {str(path)!r} does not exist"
            )
        _fail_once(CONFIG_FILE, f"the study directory has no {CONFIG_FILE}")
    failures = _Failures()
    try:
        raw = tomllib.loads(toml_path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        failures.add(CONFIG_FILE, f"not valid TOML: {err}")
        failures.raise_if_any(f"cannot read {CONFIG_FILE}")
        raise AssertionError("unreachable") from err  # pragma: no cover
    cfg = _parse_config(raw, failures, default_name=toml_path.parent.name)
    if cfg is not None:
        _check_contained(cfg, toml_path.parent, failures)
    failures.raise_if_any(f"{CONFIG_FILE} is not usable")
    assert cfg is not None  # internal invariant: no failures means a config was built
    return cfg


def _check_contained(cfg: StudyConfig, root: Path, failures: _Failures) -> None:
    """Every path of study.toml must resolve, after symbolic links, inside the study directory.

    A study is self-contained: a path outside it (absolute, with ``..``, or through a link) is
    refused naming the key and the path as written, and the file is never opened.
    """
    keys = [
        ("ratings.file", cfg.ratings.file),
        ("sessions.file", cfg.sessions_file),
        ("participants.file", cfg.participants_file),
    ]
    for i, spec in enumerate(cfg.surveys, start=1):
        keys.append((f"surveys[{i}].file", spec.file))
        if spec.item_map:
            keys.append((f"surveys[{i}].item_map", spec.item_map))
        keys.extend(
            (f"surveys[{i}].instruments", name)
            for name in spec.instruments
            if name.endswith(".toml")
        )
    inside = Path(os.path.realpath(root))
    for key, name in keys:
        target = Path(os.path.realpath(inside / name))
        if target != inside and inside not in target.parents:
            failures.add(
                CONFIG_FILE,
                "the path leads outside the study directory (a study is self-contained: "
                "copy the file into it); the file was not read",
                column=key,
                value=name,
            )


def study_inputs(path: str | Path) -> list[Path]:
    """List the files a study directory's analyses read: study.toml and every file it names.

    Used to refuse, before any work, an output that would replace one of them. When
    ``study.toml`` cannot be read the study directory itself is returned (loading it will
    fail with the reasons).
    """
    root = Path(path)
    try:
        cfg = read_study_config(root)
    except (InputValidationError, InvalidParameterError):
        return [root]
    names = [CONFIG_FILE, cfg.ratings.file, cfg.sessions_file, cfg.participants_file]
    for spec in cfg.surveys:
        names.append(spec.file)
        names.extend(n for n in (spec.item_map,) if n)
        names.extend(i for i in spec.instruments if i.endswith(".toml"))
    return [root / name for name in dict.fromkeys(names)]


def _fail_once(file: str, reason: str, **kwargs: Any) -> None:
    failures = _Failures()
    failures.add(file, reason, **kwargs)
    failures.raise_if_any(f"cannot read {file}")


def _parse_config(raw: dict[str, Any], failures: _Failures, *, default_name: str):
    f = CONFIG_FILE

    def bad(key: str, value: Any, reason: str) -> None:
        failures.add(f, reason, column=key, value=None if isinstance(value, dict) else value)

    for key in sorted(set(raw) - _TOP_KEYS):
        bad(key, None, f"unknown table; allowed: {', '.join(sorted(_TOP_KEYS))}")
    sections: dict[str, dict[str, Any]] = {}
    for name, allowed in _SECTION_KEYS.items():
        section = raw.get(name, {})
        if not isinstance(section, dict):
            bad(name, None, f"[{name}] must be a table")
            section = {}
        for key in sorted(set(section) - allowed):
            allowed_text = ", ".join(sorted(allowed))
            bad(f"{name}.{key}", section[key], f"unknown key; allowed: {allowed_text}")
        sections[name] = section

    study = sections["study"]
    name = study.get("name", default_name)
    if not isinstance(name, str):
        bad("study.name", name, "must be a string")
        name = default_name
    waves = _str_list(study.get("waves", ["pre", "mid", "post"]))
    if not waves:
        bad("study.waves", study.get("waves"), "must be a non-empty list of wave labels")
        waves = []
    elif len(set(waves)) != len(waves):
        bad("study.waves", ", ".join(waves), "wave labels must be unique")
    id_col = study.get("id_col", "participant_id")
    if not isinstance(id_col, str) or not id_col.strip():
        bad("study.id_col", id_col, "must be a column name")
        id_col = "participant_id"

    ratings = sections["ratings"]
    if "ratings" not in raw:
        bad("ratings", None, "the [ratings] table is required (file, scale_min, scale_max)")
    r_file = ratings.get("file", "ratings.csv")
    if not isinstance(r_file, str) or not r_file:
        bad("ratings.file", r_file, "must be a relative path")
        r_file = "ratings.csv"
    lo, hi = _number(ratings.get("scale_min")), _number(ratings.get("scale_max"))
    if "ratings" in raw:
        if lo is None:
            bad("ratings.scale_min", ratings.get("scale_min"), "must be a number")
        if hi is None:
            bad("ratings.scale_max", ratings.get("scale_max"), "must be a number")
    if lo is not None and hi is not None and not lo < hi:
        bad("ratings.scale_max", hi, f"must be greater than scale_min ({lo:g})")
    r_col = ratings.get("column", "empathy")
    if not isinstance(r_col, str) or not r_col:
        bad("ratings.column", r_col, "must be a column name")
        r_col = "empathy"

    columns_section = sections["columns"]
    mapped: dict[str, str] = {}
    for key in ("person", "session", "story", "position", "rating", "timestamp"):
        if key not in columns_section:
            continue
        value = columns_section[key]
        if not isinstance(value, str) or not value.strip():
            bad(f"columns.{key}", value, "must be a column name")
            continue
        mapped[key] = value.strip()
    if "person" in mapped:
        if "id_col" in study and study.get("id_col") != mapped["person"]:
            bad("columns.person", mapped["person"], f"differs from study.id_col ({id_col!r})")
        id_col = mapped["person"]
    if "rating" in mapped:
        if "column" in ratings and ratings.get("column") != mapped["rating"]:
            bad("columns.rating", mapped["rating"], f"differs from ratings.column ({r_col!r})")
        r_col = mapped["rating"]
    renamed = tuple((_COLUMN_ROLES[k], v) for k, v in mapped.items() if k in _COLUMN_ROLES)
    names = [id_col, r_col, *(v for _, v in renamed)]
    for name in sorted({n for n in names if names.count(n) > 1}):
        bad("columns", name, "one column cannot play two roles")

    s_file = sections["sessions"].get("file", "sessions.csv")
    if not isinstance(s_file, str) or not s_file:
        bad("sessions.file", s_file, "must be a relative path")
        s_file = "sessions.csv"
    p_section = sections["participants"]
    p_file = p_section.get("file", "participants.csv")
    if not isinstance(p_file, str) or not p_file:
        bad("participants.file", p_file, "must be a relative path")
        p_file = "participants.csv"
    demographics = None
    if "demographics" in p_section:
        demographics = _str_list(p_section["demographics"])
        if demographics is None and p_section["demographics"] != []:
            bad("participants.demographics", None, "must be a list of column names")
        demographics = tuple(demographics or ())

    surveys_raw = raw.get("surveys", [])
    if not isinstance(surveys_raw, list) or not surveys_raw:
        bad("surveys", None, "at least one [[surveys]] block is required")
        surveys_raw = []
    surveys: list[SurveySpec] = []
    for i, block in enumerate(surveys_raw, start=1):
        spec = _parse_survey(block, i, bad, waves=waves, id_col=id_col)
        if spec is not None:
            surveys.append(spec)

    roles = sections["roles"]
    if "roles" not in raw:
        bad("roles", None, "the [roles] table is required (traits = [...], states = [...])")
    traits = _str_list(roles.get("traits", []))
    states = _str_list(roles.get("states", []))
    if traits is None:
        if roles.get("traits") != []:
            bad("roles.traits", None, "must be a list of instrument names")
        traits = []
    if states is None:
        if roles.get("states") != []:
            bad("roles.states", None, "must be a list of instrument names")
        states = []
    for inst in sorted(set(traits) & set(states)):
        bad("roles", inst, "an instrument cannot be both a trait and a state")
    surveyed = {
        inst
        for block in surveys_raw
        if isinstance(block, dict)
        for inst in (_str_list(block.get("instruments")) or [])
    }
    for key, listed in (("roles.traits", traits), ("roles.states", states)):
        for inst in listed:
            if inst not in surveyed:
                bad(key, inst, "no [[surveys]] block lists this instrument")
    if waves:
        first = waves[0]
        at_first = {
            inst
            for block in surveys_raw
            if isinstance(block, dict)
            and (block.get("wave") == first or block.get("wave_col") is not None)
            for inst in (_str_list(block.get("instruments")) or [])
        }
        for inst in traits:
            if inst in surveyed and inst not in at_first:
                bad(
                    "roles.traits",
                    inst,
                    f"traits are read from the first wave ({first!r}), "
                    "but no survey of that wave lists this instrument",
                )

    session_features = None
    if "session_features" in roles:
        session_features = _str_list(roles["session_features"])
        if session_features is None and roles["session_features"] != []:
            bad("roles.session_features", None, "must be a list of sessions.csv column names")
        session_features = tuple(session_features or ())

    scoring = sections["scoring"]
    min_valid = scoring.get("min_valid", 0.8)
    if _number(min_valid) is None or not 0 < float(min_valid) <= 1:
        bad("scoring.min_valid", min_valid, "must be a number in (0, 1]")
        min_valid = 0.8
    prorate = scoring.get("prorate", False)
    if not isinstance(prorate, bool):
        bad("scoring.prorate", prorate, "must be true or false")
        prorate = False

    if failures:
        return None
    return StudyConfig(
        name=name,
        waves=tuple(waves),
        id_col=id_col.strip(),
        participants_file=p_file,
        sessions_file=s_file,
        ratings=RatingsSpec(file=r_file, scale_min=lo, scale_max=hi, column=r_col),
        surveys=tuple(surveys),
        traits=tuple(traits),
        states=tuple(states),
        demographics=demographics,
        min_valid=float(min_valid),
        prorate=prorate,
        session_features=session_features,
        columns=renamed,
    )


def _parse_survey(block: Any, i: int, bad, *, waves: list[str], id_col: str):
    key = f"surveys[{i}]"
    if not isinstance(block, dict):
        bad(key, None, "must be a table")
        return None
    ok = True
    for k in sorted(set(block) - _SURVEY_KEYS):
        bad(f"{key}.{k}", block[k], f"unknown key; allowed: {', '.join(sorted(_SURVEY_KEYS))}")
        ok = False
    file = block.get("file")
    if not isinstance(file, str) or not file:
        bad(f"{key}.file", file, "required: path of the export relative to the study directory")
        ok = False
    fmt = block.get("format")
    if fmt not in SURVEY_FORMATS:
        bad(f"{key}.format", fmt, f"required: one of {', '.join(SURVEY_FORMATS)}")
        ok = False
    wave, wave_col = block.get("wave"), block.get("wave_col")
    if (wave is None) == (wave_col is None):
        bad(f"{key}.wave", wave, "give exactly one of wave (one file per wave) or wave_col")
        ok = False
    elif wave is not None and (not isinstance(wave, str) or wave not in waves):
        bad(f"{key}.wave", wave, f"must be one of the study waves {waves}")
        ok = False
    elif wave_col is not None and (not isinstance(wave_col, str) or not wave_col):
        bad(f"{key}.wave_col", wave_col, "must be a column name")
        ok = False
    s_id = block.get("id_col", id_col)
    if not isinstance(s_id, str) or not s_id:
        bad(f"{key}.id_col", s_id, "must be a column name")
        ok = False
    date_col = block.get("date_col")
    if not isinstance(date_col, str) or not date_col:
        bad(
            f"{key}.date_col",
            date_col,
            "required: the column with the completion date (needed to match sessions to the "
            "preceding survey)",
        )
        ok = False
    instruments = _str_list(block.get("instruments"))
    if not instruments:
        bad(f"{key}.instruments", None, "required: a non-empty list of instrument names")
        ok = False
    elif len(set(instruments)) != len(instruments):
        bad(f"{key}.instruments", None, "an instrument is listed twice")
        ok = False
    item_map = block.get("item_map")
    if item_map is not None and (not isinstance(item_map, str) or not item_map):
        bad(f"{key}.item_map", item_map, "must be a relative path to a column,item CSV")
        ok = False
    codes = block.get("missing_codes", [])
    if not isinstance(codes, list) or not all(
        isinstance(c, int | float | str) and not isinstance(c, bool) for c in codes
    ):
        bad(f"{key}.missing_codes", None, "must be a list of numbers or strings")
        ok = False
    sheet = block.get("sheet")
    if sheet is not None and (not isinstance(sheet, str) or not sheet):
        bad(f"{key}.sheet", sheet, "must be the name of a worksheet")
        ok = False
    if not ok:
        return None
    return SurveySpec(
        file=file,
        format=fmt,
        instruments=tuple(instruments),
        id_col=s_id,
        date_col=date_col,
        wave=wave,
        wave_col=wave_col,
        item_map=item_map,
        missing_codes=tuple(codes),
        sheet=sheet,
    )


# ---------------------------------------------------------------------------------------------
# plain CSV tables


@dataclass
class _Table:
    file: str
    data: pd.DataFrame  # every cell a stripped string
    rows: pd.Series  # file row of each record


def _read_table(
    root: Path,
    rel: str,
    failures: _Failures,
    *,
    required: Sequence[str],
    names: Mapping[str, str] | None = None,
):
    """Read a CSV into strings with file rows; None when unusable (failures recorded).

    ``names`` maps internal column names to the file's own (``[columns]`` of study.toml): the
    file's columns are renamed to the internal names, and every failure of this file names
    the column as the file does.
    """
    names = {k: v for k, v in (names or {}).items() if k != v}
    if names:
        failures.aliases[rel] = dict(names)
    path = root / rel
    if not path.is_file():
        failures.add(rel, "file not found")
        return None
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        failures.add(rel, f"not UTF-8 text ({err.reason} at byte {err.start}); save as CSV UTF-8")
        return None
    records: list[tuple[int, list[str]]] = []
    try:
        for row, fields in enumerate(csv.reader(text.splitlines(keepends=True), strict=True), 1):
            records.append((row, fields))
    except csv.Error as err:
        failures.add(rel, f"broken CSV structure near row {len(records) + 1} ({err})")
        return None
    records = [(r, f) for r, f in records if any(c.strip() for c in f)]
    if not records:
        failures.add(rel, "the file is empty")
        return None
    header_row, header = records[0]
    header = [h.strip() for h in header]
    ok = True
    seen: set[str] = set()
    for name in header:
        if not name:
            failures.add(rel, "a column has no name", row=header_row)
            ok = False
        elif name in seen:
            failures.add(rel, "the column name is repeated", row=header_row, column=name)
            ok = False
        seen.add(name)
    for name in required:
        if names.get(name, name) not in header:
            failures.add(
                rel,
                f"missing required column; the columns are: {', '.join(header)}",
                row=header_row,
                column=name,
            )
            ok = False
    for internal, own in names.items():
        if internal in header and own in header:
            failures.add(
                rel,
                f"the file has both {own!r} (named in [columns]) and a column {internal!r}; "
                "rename one of them",
                row=header_row,
                column=internal,
            )
            ok = False
    body: list[list[str]] = []
    numbers: list[int] = []
    for row, fields in records[1:]:
        if len(fields) != len(header):
            failures.add(
                rel, f"the row has {len(fields)} fields but the header has {len(header)}", row=row
            )
            ok = False
            continue
        body.append([c.strip() for c in fields])
        numbers.append(row)
    if not ok:
        return None
    header = [{own: internal for internal, own in names.items()}.get(h, h) for h in header]
    data = pd.DataFrame(body, columns=header, dtype=object)
    if data.empty:
        data = pd.DataFrame({h: pd.Series(dtype=object) for h in header})
    return _Table(rel, data, pd.Series(numbers, index=data.index, dtype="int64"))


def _to_float(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _numeric_column(values: pd.Series) -> pd.Series | None:
    """Float column when every non-empty cell is a finite number, else None."""
    converted = [None if v == "" else _to_float(v) for v in values]
    if any(c is None and v != "" for c, v in zip(converted, values, strict=True)):
        return None
    return pd.Series(
        [np.nan if c is None else c for c in converted], index=values.index, dtype="float64"
    )


def _parse_time(value: Any) -> pd.Timestamp | None:
    """Parse ISO 8601 into a naive wall-clock Timestamp; None when unparseable."""
    if _is_missing(value):
        return None
    if isinstance(value, pd.Timestamp):
        ts = value
    elif hasattr(value, "isoformat") and not isinstance(value, str):
        ts = pd.Timestamp(value)
    else:
        text = str(value).strip()
        if not text:
            return None
        try:
            ts = pd.to_datetime(text, format="ISO8601")
        except (ValueError, TypeError, OverflowError):
            return None
    if pd.isna(ts):
        return None
    if ts.tzinfo is not None:
        ts = ts.tz_localize(None)  # keep the participant's wall-clock time
    return ts


def _time_problem(value: Any) -> str:
    """Say why a date/time cell could not be read."""
    match = re.match(r"\s*([+-]?\d{4,})-\d{2}", str(value))
    if match and not 1678 <= int(match.group(1)) <= 2261:
        return (
            f"the year {int(match.group(1))} is outside the years 1678-2261 that dates can have "
            "here; check the year"
        )
    return "unparseable date/time; use ISO 8601, e.g. 2024-03-01T18:30:00"


def _times(values: pd.Series) -> pd.Series:
    parsed = [_parse_time(v) for v in values]
    return pd.Series(
        pd.to_datetime([pd.NaT if p is None else p for p in parsed]), index=values.index
    )


def _duplicate_reason(rows: pd.Series, label: str) -> dict[int, str]:
    """For each duplicated row: a reason naming the other rows."""
    out: dict[int, str] = {}
    for idx in rows.index:
        others = [int(r) for r in rows if r != rows[idx]]
        out[idx] = f"duplicate {label} (also on row{'s' if len(others) > 1 else ''} " + (
            ", ".join(map(str, others)) + ")"
        )
    return out


# ---------------------------------------------------------------------------------------------
# the study


@dataclass(frozen=True)
class Study:
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
    exclusions: pd.DataFrame
    instruments: dict[str, Any]
    instrument_names: dict[str, str]
    inputs: tuple[str, ...]
    session_features: tuple[str, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    numeric_session_columns: tuple[str, ...] = ()

    def __repr__(self) -> str:
        cfg = self.config
        return (
            f"Study({cfg.name!r}: {len(self.participants)} participants, {len(self.sessions)} "
            f"sessions, {len(self.ratings)} ratings, waves {', '.join(cfg.waves)}; "
            f"{len(self.exclusions)} row(s) in the exclusion log)"
        )

    @classmethod
    def load(cls, path: str | Path) -> Study:
        """Load a study directory; see :func:`load_study`."""
        return load_study(path)

    def story_frame(self) -> pd.DataFrame:
        """One row per rating; see :func:`longitudinal.frames.story_frame`."""
        return _frames.story_frame(self)

    def session_frame(self) -> pd.DataFrame:
        """One row per session; see :func:`longitudinal.frames.session_frame`."""
        return _frames.session_frame(self)

    def person_wave_frame(self) -> pd.DataFrame:
        """One row per participant x wave; see :func:`longitudinal.frames.person_wave_frame`."""
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
    >>> from longitudinal.study import load_study
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
    config = read_study_config(root)
    return _Loader(root, config).run()


class _Loader:
    """One loading pass: collects failures over every file, then builds the Study."""

    def __init__(self, root: Path, config: StudyConfig) -> None:
        self.root = root
        self.cfg = config
        self.failures = _Failures()
        self.exclusions: list[dict[str, Any]] = []
        self.inputs: list[str] = [CONFIG_FILE]
        self.meta: dict[str, Any] = {"files": {}}
        self.features: list[str] = []
        self.numeric_columns: list[str] = []
        self.missing_rating: list[int] = []

    # -- helpers -----------------------------------------------------------------------------

    def exclude(self, file: str, row: int, reason: str, scope: str = "study") -> None:
        self.exclusions.append({"file": file, "row": int(row), "reason": reason, "scope": scope})

    def run(self) -> Study:
        cfg = self.cfg
        instruments = self.load_instruments()
        participants = self.read_participants()
        known = None if participants is None else set(participants.data[cfg.id_col])
        sessions = self.read_sessions(known)
        ratings = self.read_ratings(known, sessions)
        surveys = self.read_surveys(instruments, known)
        self.failures.raise_if_any(f"the study directory {str(self.root)!r} is not usable")
        assert participants is not None and sessions is not None and ratings is not None

        survey_dates = self.survey_dates(surveys)
        sessions_df, ratings_df = self.apply_exclusions(sessions, ratings, survey_dates)
        scored = self.score(surveys, instruments)
        participants_df = self.convert_participants(participants)
        for _, responses, _ in surveys:
            for rec in responses.excluded.itertuples(index=False):
                self.exclude(_relative(rec.file, self.root), rec.row, str(rec.reason))
        exclusions = pd.DataFrame(self.exclusions, columns=EXCLUSION_COLUMNS)
        exclusions["row"] = exclusions["row"].astype("int64")
        order = {f: i for i, f in enumerate(self.inputs)}
        exclusions = exclusions.assign(_o=exclusions["file"].map(order).fillna(len(order)))
        exclusions = exclusions.sort_values(["_o", "row"], kind="mergesort").drop(columns="_o")
        exclusions = exclusions.reset_index(drop=True)

        self.meta["scoring"] = {"min_valid": cfg.min_valid, "prorate": cfg.prorate}
        return Study(
            root=self.root,
            config=cfg,
            participants=participants_df,
            sessions=sessions_df,
            ratings=ratings_df,
            survey_dates=survey_dates,
            scores=scored["scores"],
            reliability=scored["reliability"],
            item_stats=scored["item_stats"],
            missing=scored["missing"],
            exclusions=exclusions,
            instruments={inst.name: inst for inst in instruments.values()},
            instrument_names={entry: inst.name for entry, inst in instruments.items()},
            inputs=tuple(self.inputs),
            session_features=tuple(self.features),
            meta=self.meta,
            numeric_session_columns=tuple(self.numeric_columns),
        )

    # -- instruments ---------------------------------------------------------------------------

    def load_instruments(self) -> dict[str, Any]:
        from surveys.instruments import load_instrument

        out: dict[str, Any] = {}
        for i, spec in enumerate(self.cfg.surveys, start=1):
            for name in spec.instruments:
                if name in out:
                    continue
                target: str | Path = name
                if name.endswith(".toml"):
                    target = self.root / name
                    self.inputs.append(name)
                try:
                    out[name] = load_instrument(target)
                except (SurveysError, OSError) as err:
                    self.failures.add(
                        CONFIG_FILE, str(err), column=f"surveys[{i}].instruments", value=name
                    )
        return out

    # -- participants --------------------------------------------------------------------------

    def read_participants(self) -> _Table | None:
        cfg = self.cfg
        rel = cfg.participants_file
        self.inputs.append(rel)
        table = _read_table(self.root, rel, self.failures, required=[cfg.id_col])
        if table is None:
            return None
        ids = table.data[cfg.id_col]
        for idx in ids.index[ids == ""]:
            self.failures.add(rel, "missing participant id", row=table.rows[idx], column=cfg.id_col)
        dup = ids[(ids != "") & ids.duplicated(keep=False)]
        for value, group in dup.groupby(dup, sort=False):
            reasons = _duplicate_reason(table.rows[group.index], "participant id")
            for idx in group.index:
                self.failures.add(
                    rel, reasons[idx], row=table.rows[idx], column=cfg.id_col, value=value
                )
        self.meta["files"][rel] = {"rows": len(table.data)}
        return table

    def convert_participants(self, table: _Table) -> pd.DataFrame:
        data = table.data.copy()
        for col in data.columns:
            if col == self.cfg.id_col:
                continue
            numeric = _numeric_column(data[col])
            if numeric is not None and data[col].ne("").any():
                data[col] = numeric
            else:
                data[col] = data[col].replace("", np.nan)
        return data.reset_index(drop=True)

    # -- sessions ------------------------------------------------------------------------------

    def read_sessions(self, known: set[str] | None) -> _Table | None:
        cfg = self.cfg
        rel = cfg.sessions_file
        self.inputs.append(rel)
        id_col = cfg.id_col
        table = _read_table(
            self.root,
            rel,
            self.failures,
            required=[id_col, *_SESSION_REQUIRED],
            names=cfg.column_names,
        )
        if table is None:
            return None
        data, rows = table.data, table.rows
        self.check_ids(table, id_col, known, what="participant")
        sid = data["session_id"]
        for idx in sid.index[sid == ""]:
            self.failures.add(rel, "missing session id", row=rows[idx], column="session_id")
        dup = sid[(sid != "") & sid.duplicated(keep=False)]
        for value, group in dup.groupby(dup, sort=False):
            reasons = _duplicate_reason(rows[group.index], "session id")
            for idx in group.index:
                self.failures.add(
                    rel, reasons[idx], row=rows[idx], column="session_id", value=value
                )
        started = _times(data["started_at"])
        for idx in started.index[started.isna()]:
            value = data.at[idx, "started_at"]
            reason = _time_problem(value)
            if value == "":
                reason = "missing session start time"
            self.failures.add(rel, reason, row=rows[idx], column="started_at", value=value or None)
        converted = data.copy()
        converted["started_at"] = started
        for col in data.columns:
            if col in (id_col, *_SESSION_REQUIRED):
                continue
            numeric = _numeric_column(data[col])
            if numeric is not None:
                if data[col].ne("").any():
                    converted[col] = numeric
                    self.features.append(col)
                else:
                    converted[col] = np.nan
                continue
            parsed = [None if v == "" else _to_float(v) for v in data[col]]
            if any(p is not None for p in parsed):
                # a numeric feature column with stray text: report the cells
                for idx, (p, v) in enumerate(zip(parsed, data[col], strict=True)):
                    if p is None and v != "":
                        self.failures.add(
                            rel,
                            "not a finite number in a numeric feature column"
                            if v.strip().lower().lstrip("+-") in ("inf", "infinity", "nan")
                            else "non-numeric value in a numeric feature column",
                            row=rows.iloc[idx],
                            column=col,
                            value=v,
                        )
            else:
                converted[col] = data[col].replace("", np.nan)
        self.numeric_columns = list(self.features)
        if cfg.session_features is not None:
            self.features = self.chosen_features(rel, data, cfg.session_features)
        self.meta["files"][rel] = {"rows": len(data)}
        return _Table(rel, converted, rows)

    def chosen_features(self, rel: str, data: pd.DataFrame, listed: Sequence[str]) -> list[str]:
        """Check the ``[roles] session_features`` of study.toml: numeric columns of sessions.csv."""
        for name in listed:
            if name not in data.columns:
                self.failures.add(
                    CONFIG_FILE,
                    f"roles.session_features names a column that {rel} does not have; its "
                    f"numeric columns are: {', '.join(self.features) or 'none'}",
                    column="roles.session_features",
                    value=name,
                )
            elif name not in self.features:
                self.failures.add(
                    CONFIG_FILE,
                    f"roles.session_features names a column of {rel} that is not numeric",
                    column="roles.session_features",
                    value=name,
                )
        return [name for name in listed if name in self.features]

    def check_ids(self, table: _Table, id_col: str, known: set[str] | None, *, what: str) -> None:
        ids = table.data[id_col]
        for idx in ids.index:
            value = ids[idx]
            if value == "":
                self.failures.add(
                    table.file, f"missing {what} id", row=table.rows[idx], column=id_col
                )
            elif known is not None and value not in known:
                self.failures.add(
                    table.file,
                    f"unknown participant (not in {self.cfg.participants_file})",
                    row=table.rows[idx],
                    column=id_col,
                    value=value,
                )

    # -- ratings -------------------------------------------------------------------------------

    def read_ratings(self, known: set[str] | None, sessions: _Table | None) -> _Table | None:
        cfg = self.cfg
        spec = cfg.ratings
        rel = spec.file
        self.inputs.append(rel)
        id_col = cfg.id_col
        required = [id_col, *_RATING_REQUIRED, spec.column]
        table = _read_table(
            self.root, rel, self.failures, required=required, names=cfg.column_names
        )
        if table is None:
            return None
        if table.data.empty:
            self.failures.add(
                rel,
                "the file has a header but no ratings; the analyses need the ratings of the "
                "stories",
                row=1,
            )
            return None
        data, rows = table.data, table.rows
        self.check_ids(table, id_col, known, what="participant")
        owner: dict[str, str] | None = None
        if sessions is not None:
            owner = {}
            for s, p in zip(sessions.data["session_id"], sessions.data[id_col], strict=True):
                owner.setdefault(s, p)
        converted = data.copy()
        value = np.full(len(data), np.nan)
        position = np.zeros(len(data), dtype="int64")
        lo, hi = spec.scale_min, spec.scale_max
        for k, idx in enumerate(data.index):
            row = int(rows[idx])
            sid = data.at[idx, "session_id"]
            if sid == "":
                self.failures.add(rel, "missing session id", row=row, column="session_id")
            elif owner is not None and sid not in owner:
                self.failures.add(
                    rel,
                    f"rating for an unknown session (not in {cfg.sessions_file})",
                    row=row,
                    column="session_id",
                    value=sid,
                )
            elif (
                owner is not None
                and data.at[idx, id_col] not in ("", owner[sid])
                and (known is None or data.at[idx, id_col] in known)
            ):
                self.failures.add(
                    rel,
                    f"the session belongs to another participant in {cfg.sessions_file}",
                    row=row,
                    column=id_col,
                    value=data.at[idx, id_col],
                )
            if data.at[idx, "story_id"] == "":
                self.failures.add(rel, "missing story id", row=row, column="story_id")
            raw = data.at[idx, spec.column]
            if raw == "":
                self.missing_rating.append(k)
            else:
                number = _to_float(raw)
                if number is None:
                    self.failures.add(
                        rel, "non-numeric rating", row=row, column=spec.column, value=raw
                    )
                elif not lo <= number <= hi:
                    self.failures.add(
                        rel,
                        f"rating outside the declared scale {lo:g}-{hi:g}",
                        row=row,
                        column=spec.column,
                        value=raw,
                    )
                else:
                    value[k] = number
            pos = _to_float(data.at[idx, "position"])
            if pos is None or pos < 1 or not float(pos).is_integer():
                self.failures.add(
                    rel,
                    "position must be a whole number 1, 2, 3, ...",
                    row=row,
                    column="position",
                    value=data.at[idx, "position"] or None,
                )
            else:
                position[k] = int(pos)
        keyed = pd.DataFrame({"s": data["session_id"].to_numpy(), "p": position})
        valid = (keyed["s"] != "") & (keyed["p"] > 0)
        dup = keyed[valid & keyed.duplicated(keep=False)]
        for _, group in dup.groupby(["s", "p"], sort=False):
            reasons = _duplicate_reason(
                rows.iloc[group.index], "rating for this session and position"
            )
            for k in group.index:
                self.failures.add(
                    rel,
                    reasons[k],
                    row=int(rows.iloc[k]),
                    column="position",
                    value=str(position[k]),
                )
        converted[spec.column] = value
        converted["position"] = position
        for col in data.columns:
            if col in required:
                continue
            numeric = _numeric_column(data[col])
            if numeric is not None and data[col].ne("").any():
                converted[col] = numeric
            else:
                converted[col] = data[col].replace("", np.nan)
        self.meta["files"][rel] = {"rows": len(data)}
        return _Table(rel, converted, rows)

    # -- surveys -------------------------------------------------------------------------------

    def read_surveys(self, instruments: dict[str, Any], known: set[str] | None) -> list:
        """Read every export; returns [(spec, responses, survey_rows DataFrame)]."""
        from surveys.readers import read_responses
        from surveys.validation import validate_responses

        cfg = self.cfg
        out = []
        for spec in cfg.surveys:
            rel = spec.file
            self.inputs.append(rel)
            path = self.root / rel
            item_map = None
            if spec.item_map is not None:
                self.inputs.append(spec.item_map)
                item_map = self.root / spec.item_map
                if not item_map.is_file():
                    self.failures.add(spec.item_map, "item map file not found")
                    continue
            if not path.is_file():
                self.failures.add(rel, "file not found")
                continue
            try:
                responses = read_responses(
                    path,
                    format=spec.format,
                    id_col=spec.id_col,
                    wave_col=spec.wave_col,
                    item_map=item_map,
                    missing_codes=spec.missing_codes,
                    sheet=spec.sheet,
                    flagged="exclude",
                )
            except InputValidationError as err:
                self.failures.extend(err.failure_cases, root=self.root)
                continue
            except ImportError as err:
                self.failures.add(rel, f"cannot read this format here: {err}")
                continue
            # unknown instruments are already reported; check the items of the known ones
            insts = [instruments[n] for n in spec.instruments if n in instruments]
            try:
                validate_responses(responses, insts, id_col=spec.id_col, wave_col=spec.wave_col)
            except InputValidationError as err:
                self.failures.extend(err.failure_cases, root=self.root)
            rows = self.check_survey_rows(spec, responses, known)
            self.meta["files"][rel] = {
                "rows": int(responses.meta.get("n_rows_read", len(responses.data))),
                "excluded": len(responses.excluded),
            }
            out.append((spec, responses, rows))
        self.check_duplicate_surveys(out)
        return out

    def check_survey_rows(self, spec: SurveySpec, responses, known: set[str] | None):
        cfg = self.cfg
        rel = spec.file
        data = responses.data
        rows = responses.row_numbers
        if spec.date_col not in data.columns:
            self.failures.add(
                rel,
                "missing the completion-date column named by date_col in study.toml",
                row=1,
                column=spec.date_col,
            )
            dates = pd.Series(pd.NaT, index=data.index)
        else:
            dates = _times(data[spec.date_col])
            for idx in dates.index[dates.isna()]:
                raw = data.at[idx, spec.date_col]
                missing = _is_missing(raw) or str(raw).strip() == ""
                self.failures.add(
                    rel,
                    "missing completion date" if missing else _time_problem(raw),
                    row=int(rows[idx]),
                    column=spec.date_col,
                    value=None if missing else raw,
                )
        ids = data[spec.id_col]
        for idx in ids.index:
            value = ids[idx]
            if _is_missing(value) or value == "":
                continue  # reported by validate_responses
            if known is not None and value not in known:
                self.failures.add(
                    rel,
                    f"unknown participant (not in {cfg.participants_file})",
                    row=int(rows[idx]),
                    column=spec.id_col,
                    value=value,
                )
        if spec.wave_col is not None:
            waves = data[spec.wave_col]
            for idx in waves.index:
                if waves[idx] not in cfg.waves:
                    self.failures.add(
                        rel,
                        f"unknown wave; study.toml declares {list(cfg.waves)}",
                        row=int(rows[idx]),
                        column=spec.wave_col,
                        value=waves[idx],
                    )
            wave = waves
        else:
            wave = pd.Series(spec.wave, index=data.index)
        return pd.DataFrame(
            {
                "id": ids.astype(object),
                "wave": wave.astype(object),
                "completed_at": dates,
                "row": rows.astype("int64"),
            }
        )

    def check_duplicate_surveys(self, surveys: list) -> None:
        """Reject a participant x wave x instrument found in two files.

        Duplicates within one file are reported by ``validate_responses``.
        """
        seen: dict[tuple[str, str, str], tuple[str, int]] = {}
        for spec, _, rows in surveys:
            pairs = rows.drop_duplicates(subset=["id", "wave"])
            for inst in spec.instruments:
                for rec in pairs.itertuples(index=False):
                    key = (rec.id, rec.wave, inst)
                    if key in seen and seen[key][0] != spec.file:
                        first_file, first_row = seen[key]
                        self.failures.add(
                            spec.file,
                            f"duplicate participant x wave survey for {inst} (also in "
                            f"{first_file} row {first_row})",
                            row=int(rec.row),
                            column=spec.id_col,
                            value=rec.id,
                        )
                    else:
                        seen.setdefault(key, (spec.file, int(rec.row)))

    def survey_dates(self, surveys: list) -> pd.DataFrame:
        cfg = self.cfg
        parts = [rows for _, _, rows in surveys]
        if parts:
            allrows = pd.concat(parts, ignore_index=True)
        else:
            allrows = pd.DataFrame(columns=["id", "wave", "completed_at"])
        dates = allrows.groupby(["id", "wave"], sort=False)["completed_at"].max().reset_index()
        dates = dates.rename(columns={"id": cfg.id_col})
        dates["completed_at"] = pd.to_datetime(dates["completed_at"])
        order = {w: i for i, w in enumerate(cfg.waves)}
        dates = dates.assign(_o=dates["wave"].map(order)).sort_values(
            [cfg.id_col, "_o"], kind="mergesort"
        )
        return dates.drop(columns="_o").reset_index(drop=True)

    # -- exclusions ----------------------------------------------------------------------------

    def apply_exclusions(self, sessions: _Table, ratings: _Table, survey_dates: pd.DataFrame):
        cfg = self.cfg
        id_col = cfg.id_col
        first_wave = cfg.waves[0]
        by_person: dict[str, tuple[pd.Timestamp, str]] = {}
        for pid, group in survey_dates.groupby(id_col, sort=False):
            at_first = group.loc[group["wave"] == first_wave, "completed_at"]
            if len(at_first):
                by_person[pid] = (at_first.iloc[0], f"{first_wave} survey")
            else:
                earliest = group.sort_values("completed_at").iloc[0]
                by_person[pid] = (
                    earliest["completed_at"],
                    f"earliest survey ({earliest['wave']}; {first_wave} is missing)",
                )
        s = sessions.data
        dropped_sessions: dict[str, int] = {}
        keep_s = np.ones(len(s), dtype=bool)
        for k, idx in enumerate(s.index):
            pid = s.at[idx, id_col]
            if pid in by_person and s.at[idx, "started_at"] < by_person[pid][0]:
                keep_s[k] = False
                row = int(sessions.rows[idx])
                dropped_sessions[s.at[idx, "session_id"]] = row
                self.exclude(
                    sessions.file,
                    row,
                    f"session started before the participant's {by_person[pid][1]}; "
                    "excluded with its ratings",
                )
        r = ratings.data
        keep_r = np.ones(len(r), dtype=bool)
        missing = set(self.missing_rating)
        for k, idx in enumerate(r.index):
            row = int(ratings.rows[idx])
            sid = r.at[idx, "session_id"]
            if sid in dropped_sessions:
                keep_r[k] = False
                self.exclude(
                    ratings.file,
                    row,
                    f"rating of an excluded session (the session in {sessions.file} started "
                    "before the participant's first survey)",
                )
            elif k in missing:
                keep_r[k] = False
                self.exclude(ratings.file, row, f"empty {cfg.rating_col} rating")
        kept_ratings = r.loc[keep_r].reset_index(drop=True)
        rated = set(kept_ratings["session_id"])
        for k, idx in enumerate(s.index):
            if keep_s[k] and s.at[idx, "session_id"] not in rated:
                self.exclude(
                    sessions.file,
                    int(sessions.rows[idx]),
                    "no ratings: session kept in the session frame, absent from the story frame",
                    scope="story_frame",
                )
        kept_sessions = s.loc[keep_s].reset_index(drop=True)
        kept_sessions["started_at"] = pd.to_datetime(kept_sessions["started_at"])
        kept_ratings[cfg.rating_col] = kept_ratings[cfg.rating_col].astype("float64")
        kept_ratings["position"] = kept_ratings["position"].astype("int64")
        self.meta["files"][sessions.file]["kept"] = int(keep_s.sum())
        self.meta["files"][ratings.file]["kept"] = int(keep_r.sum())
        return kept_sessions, kept_ratings

    # -- scoring -------------------------------------------------------------------------------

    def score(self, surveys: list, instruments: dict[str, Any]) -> dict[str, pd.DataFrame]:
        from surveys._errors import UndefinedStatisticWarning
        from surveys.scoring import score

        cfg = self.cfg
        first = cfg.waves[0]
        parts: dict[str, list[pd.DataFrame]] = {
            "scores": [],
            "reliability": [],
            "item_stats": [],
            "missing": [],
        }
        notes: list[str] = []
        for spec, responses, _ in surveys:
            data = responses.data
            rows = responses.row_numbers
            wave_col = spec.wave_col or "wave"
            if spec.wave_col is None:
                data = data.assign(**{wave_col: spec.wave})
            for name in spec.instruments:
                subset, subset_rows = data, rows
                if name in cfg.traits:
                    keep = data[wave_col] == first
                    subset, subset_rows = data.loc[keep], rows.loc[keep]
                    if subset.empty:
                        continue
                instrument = instruments[name]
                single_items = all(len(k.items) == 1 for k in instrument.scales)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    result = score(
                        subset,
                        instrument,
                        id_col=spec.id_col,
                        wave_col=wave_col,
                        min_valid=cfg.min_valid,
                        prorate=cfg.prorate,
                        row_numbers=subset_rows,
                        source_file=spec.file,
                    )
                for w in caught:
                    text = f"{spec.file}, {name}: {w.message}"
                    notes.append(text)
                    # alpha of a one-item scale is undefined by construction: noted, not warned
                    if not (single_items and issubclass(w.category, UndefinedStatisticWarning)):
                        warnings.warn(text, w.category, stacklevel=4)
                rename = {"id": cfg.id_col}
                for key in parts:
                    table = getattr(result, key).rename(columns=rename)
                    parts[key].append(table)
        out: dict[str, pd.DataFrame] = {}
        for key, tables in parts.items():
            tables = [t for t in tables if not t.empty]
            out[key] = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
        scores = out["scores"]
        if scores.empty:
            scores = pd.DataFrame(
                columns=[
                    cfg.id_col,
                    "wave",
                    "instrument",
                    "scale",
                    "score",
                    "n_items",
                    "n_answered",
                ]
            )
        scores[cfg.id_col] = scores[cfg.id_col].astype(str)
        scores["wave"] = scores["wave"].astype(str)
        out["scores"] = scores
        self.meta["scoring_notes"] = notes
        return out
