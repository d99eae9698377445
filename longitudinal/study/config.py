"""``study.toml``: what is where in a study directory, read and checked as data.

:func:`read_study_config` parses the file (keys, column roles, survey blocks, paths kept
inside the study directory) and collects every problem in one report; :class:`StudyConfig`
is the result. :class:`Failures` collects problems over every file of a study; the loader
(:mod:`longitudinal.study.loaded`) uses it too.
"""

from __future__ import annotations

import math
import os
import tomllib
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from _empathic_base.invisible import INVISIBLE
from longitudinal._errors import InvalidParameterError
from surveys import FAILURE_COLUMNS, InputValidationError

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_DEMOGRAPHICS",
    "SURVEY_FORMATS",
    "RatingsSpec",
    "StudyConfig",
    "SurveySpec",
    "read_study_config",
    "instrument_is_path",
    "study_inputs",
]

SURVEY_FORMATS = ("csv", "xlsx", "qualtrics", "sav")
CONFIG_FILE = "study.toml"
DEFAULT_DEMOGRAPHICS = ("age", "gender", "sex", "education", "ethnicity", "race")


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
    threshold : float or None
        ``[ratings] threshold``: the cut of the prediction benchmark (a rating or prediction
        above it is "empathic"); ``None`` means the scale's midpoint (:attr:`cut`).
    """

    file: str
    scale_min: float
    scale_max: float
    column: str = "empathy"
    threshold: float | None = None

    @property
    def midpoint(self) -> float:
        """The middle of the declared scale, ``(scale_min + scale_max) / 2``."""
        return (self.scale_min + self.scale_max) / 2

    @property
    def cut(self) -> float:
        """The binarisation threshold in use: the declared one, else the midpoint."""
        return self.midpoint if self.threshold is None else float(self.threshold)

    @property
    def label(self) -> str:
        """The scale as text, e.g. ``"1–7"``."""
        return f"{self.scale_min:g}–{self.scale_max:g}"

    @property
    def kind(self) -> str:
        """``"continuous"`` for more than 11 points, else ``"ordinal"``.

        The rule that decides the models, :func:`longitudinal.study.rating_scale.scale_kind`.
        """
        from longitudinal.study.rating_scale import scale_kind

        return scale_kind(self.scale_min, self.scale_max)


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
    predictors : tuple of str or None
        ``[roles] predictors``: the scales (``instrument_scale`` score columns, or an
        instrument name for all its scales) and session features the empathy models test, in
        priority order; ``None`` means the default rule (traits, then states, then session
        features, in study.toml order).
    instrument_aliases : tuple of (str, str)
        ``(name, entry)`` for each custom instrument listed by its ``.toml`` path in a
        ``[[surveys]]`` block: its ``[instrument] name`` (default the file stem), by which
        ``[roles]`` may refer to it. :attr:`traits` and :attr:`states` hold the entries as
        the surveys list them.
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
    predictors: tuple[str, ...] | None = None
    instrument_aliases: tuple[tuple[str, str], ...] = ()

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


class Failures:
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
    "study": {"name", "waves"},
    "ratings": {"file", "scale_min", "scale_max", "threshold"},
    "sessions": {"file"},
    "participants": {"file", "demographics"},
    "roles": {"traits", "states", "session_features", "predictors"},
    "scoring": {"min_valid", "prorate"},
    "columns": {"person", "session", "story", "position", "rating", "timestamp"},
}
# keys whose column moved to [columns]: (table, key) -> the [columns] key that names it now
_MOVED_KEYS = {("study", "id_col"): "person", ("ratings", "column"): "rating"}
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
    >>> from longitudinal.study.loaded import read_study_config
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
    from _empathic_base.toml_nesting import too_deep

    failures = Failures()
    try:
        text = toml_path.read_text(encoding="utf-8")
        deep = too_deep(text)  # refused before the parser recurses into it
        if deep is not None:
            failures.add(CONFIG_FILE, f"not valid TOML: {deep}")
            failures.raise_if_any(f"cannot read {CONFIG_FILE}")
        raw = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        failures.add(CONFIG_FILE, f"not valid TOML: {err}")
        failures.raise_if_any(f"cannot read {CONFIG_FILE}")
        raise AssertionError("unreachable") from err  # pragma: no cover
    cfg = _parse_config(raw, failures, default_name=toml_path.parent.name, root=toml_path.parent)
    if cfg is not None:
        _check_contained(cfg, toml_path.parent, failures)
    failures.raise_if_any(f"{CONFIG_FILE} is not usable")
    assert cfg is not None  # internal invariant: no failures means a config was built
    return cfg


def _check_contained(cfg: StudyConfig, root: Path, failures: Failures) -> None:
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
            if instrument_is_path(name)
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
    return inputs_of(root, cfg)


def inputs_of(root: Path, cfg: StudyConfig) -> list[Path]:
    """List study.toml and every file it names (see :func:`study_inputs`), from its config."""
    names = [CONFIG_FILE, cfg.ratings.file, cfg.sessions_file, cfg.participants_file]
    for spec in cfg.surveys:
        names.append(spec.file)
        names.extend(n for n in (spec.item_map,) if n)
        names.extend(i for i in spec.instruments if instrument_is_path(i))
    return [root / name for name in dict.fromkeys(names)]


def _fail_once(file: str, reason: str, **kwargs: Any) -> None:
    failures = Failures()
    failures.add(file, reason, **kwargs)
    failures.raise_if_any(f"cannot read {file}")


def instrument_is_path(name: str) -> bool:
    """Whether an instrument entry of study.toml is a key-file path (not a library name).

    A path ends in ``.toml`` (any case) or holds a path separator; such an entry is resolved
    inside the study directory, like every other path of study.toml.
    """
    return name.lower().endswith(".toml") or "/" in name or "\\" in name


def _custom_names(surveys_raw: list, root: Path | None) -> dict[str, str]:
    """``[instrument] name`` (default: file stem) -> entry, for each key file a survey lists.

    Only files inside the study directory are opened; a file that cannot be read is left to the
    loader, which reports it.
    """
    if root is None:
        return {}
    inside = Path(os.path.realpath(root))
    out: dict[str, str] = {}
    for block in surveys_raw:
        if not isinstance(block, dict):
            continue
        for entry in _str_list(block.get("instruments")) or []:
            if not instrument_is_path(entry):
                continue
            target = Path(os.path.realpath(inside / entry))
            if inside not in target.parents or not target.is_file():
                continue
            try:
                data = tomllib.loads(target.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            section = data.get("instrument")
            name = section.get("name") if isinstance(section, dict) else None
            name = name if isinstance(name, str) and name.strip() else Path(entry).stem
            out.setdefault(name.strip(), entry)
    return out


def _parse_config(
    raw: dict[str, Any], failures: Failures, *, default_name: str, root: Path | None = None
):
    """Check ``study.toml`` table by table (every problem into ``failures``); build the config."""
    f = CONFIG_FILE

    def bad(key: str, value: Any, reason: str) -> None:
        failures.add(f, reason, column=key, value=None if isinstance(value, dict) else value)

    for key in sorted(set(raw) - _TOP_KEYS):
        bad(key, None, f"unknown table; allowed: {', '.join(sorted(_TOP_KEYS))}")
    sections = _sections(raw, bad)
    name, waves, id_col = _study_table(sections["study"], default_name, bad)
    r_file, lo, hi, r_col, threshold = _ratings_table(raw, sections["ratings"], bad)
    id_col, r_col, renamed = _columns_table(sections, id_col, r_col, bad)
    s_file, p_file, demographics = _files(sections, bad)
    surveys_raw = raw.get("surveys", [])
    if not isinstance(surveys_raw, list) or not surveys_raw:
        bad("surveys", None, "at least one [[surveys]] block is required")
        surveys_raw = []
    surveys: list[SurveySpec] = []
    for i, block in enumerate(surveys_raw, start=1):
        spec = _parse_survey(block, i, bad, waves=waves, id_col=id_col)
        if spec is not None:
            surveys.append(spec)
    aliases = _custom_names(surveys_raw if isinstance(surveys_raw, list) else [], root)
    traits, states, session_features, predictors = _roles_table(
        raw, sections["roles"], surveys_raw, waves, bad, aliases=aliases
    )
    min_valid, prorate = _scoring_table(sections["scoring"], bad)
    if failures:
        return None
    return StudyConfig(
        name=name,
        waves=tuple(waves),
        id_col=id_col.strip(),
        participants_file=p_file,
        sessions_file=s_file,
        ratings=RatingsSpec(
            file=r_file, scale_min=lo, scale_max=hi, column=r_col, threshold=threshold
        ),
        surveys=tuple(surveys),
        traits=tuple(traits),
        states=tuple(states),
        demographics=demographics,
        min_valid=float(min_valid),
        prorate=prorate,
        session_features=session_features,
        columns=renamed,
        predictors=predictors,
        instrument_aliases=tuple(aliases.items()),
    )


def _sections(raw: dict[str, Any], bad: Any) -> dict[str, dict[str, Any]]:
    """Every known table (empty when absent), unknown keys reported."""
    sections: dict[str, dict[str, Any]] = {}
    for name, allowed in _SECTION_KEYS.items():
        section = raw.get(name, {})
        if not isinstance(section, dict):
            bad(name, None, f"[{name}] must be a table")
            section = {}
        for key in sorted(set(section) - allowed):
            moved = _MOVED_KEYS.get((name, key))
            if moved is not None:
                shown = section[key] if isinstance(section[key], str) else "..."
                bad(
                    f"{name}.{key}",
                    section[key],
                    f"this key is no longer read: name the column under [columns] as "
                    f'{moved} = "{shown}"',
                )
                continue
            allowed_text = ", ".join(sorted(allowed))
            bad(f"{name}.{key}", section[key], f"unknown key; allowed: {allowed_text}")
        sections[name] = section
    return sections


MAX_NAME_CHARACTERS = 255
"""The longest study name: Word's document properties (the title) hold no more."""


def _unwritable(text: str) -> str | None:
    """Name the characters of ``text`` that the report's documents cannot carry, or None.

    Control characters (line breaks and tabs included: a name is one line), the line and
    paragraph separators, surrogates, Unicode noncharacters and the invisible characters of
    :data:`_empathic_base.invisible.INVISIBLE` (zero-width, direction overrides). Word
    refuses the control characters outright; the others break a line or reorder the text.
    """
    found = []
    for ch in text:
        code = ord(ch)
        bad = (
            unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp")
            or 0xFDD0 <= code <= 0xFDEF
            or code & 0xFFFE == 0xFFFE
            or INVISIBLE.match(ch) is not None
        )
        if bad and ch not in found:
            found.append(ch)
    if not found:
        return None
    names = ", ".join(
        f"U+{ord(ch):04X} "
        + (
            "(a control character)"
            if unicodedata.category(ch) == "Cc"
            else unicodedata.name(ch, "(a character without a name)")
        )
        for ch in found
    )
    return (
        "a character" if len(found) == 1 else "characters"
    ) + f" that a document cannot carry ({names})"


def _shown(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _study_table(study: dict[str, Any], default_name: str, bad: Any) -> tuple[str, list, str]:
    name = study.get("name", default_name)
    if not isinstance(name, str):
        bad("study.name", name, "must be a string")
        name = default_name
    found = _unwritable(name)
    if found:
        where = "" if "name" in study else " (the study folder's name, the default)"
        bad("study.name", _shown(name), f"holds {found}{where}; delete it")
    if len(name) > MAX_NAME_CHARACTERS:
        bad(
            "study.name",
            _shown(name),
            f"is {len(name):,} characters long; at most {MAX_NAME_CHARACTERS} (Word's document "
            "properties hold no more): shorten it",
        )
    waves = _str_list(study.get("waves", ["pre", "mid", "post"]))
    if not waves:
        bad("study.waves", study.get("waves"), "must be a non-empty list of wave labels")
        waves = []
    elif len(set(waves)) != len(waves):
        bad("study.waves", ", ".join(waves), "wave labels must be unique")
    raw_waves = study.get("waves", [])
    for wave in raw_waves if isinstance(raw_waves, list) else []:
        found = _unwritable(wave) if isinstance(wave, str) else None
        if found:
            bad("study.waves", _shown(wave), f"the wave label holds {found}; delete it")
    return name, waves, "participant_id"


_NOT_FINITE = (
    "must be a finite number (TOML reads inf and nan as numbers; the scale's ends are the "
    "lowest and highest rating, e.g. 1 and 5)"
)


def _ratings_table(raw: dict[str, Any], ratings: dict[str, Any], bad: Any) -> tuple:
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
    ends = {"scale_min": lo, "scale_max": hi}
    for key, value in ends.items():
        if value is not None and not math.isfinite(value):
            bad(f"ratings.{key}", str(value), _NOT_FINITE)
            ends[key] = None
    lo, hi = ends["scale_min"], ends["scale_max"]
    if lo is not None and hi is not None and not lo < hi:
        bad("ratings.scale_max", hi, f"must be greater than scale_min ({lo:g})")
    r_col = "empathy"
    threshold = None
    if "threshold" in ratings:
        threshold = _number(ratings["threshold"])
        if threshold is None:
            bad("ratings.threshold", ratings["threshold"], "must be a number")
        elif not math.isfinite(threshold):
            bad("ratings.threshold", str(threshold), _NOT_FINITE)
            threshold = None
        elif lo is not None and hi is not None and not lo <= threshold < hi:
            bad(
                "ratings.threshold",
                threshold,
                f"must lie on the rating scale, at least scale_min ({lo:g}) and below "
                f"scale_max ({hi:g}): a rating above it counts as empathic",
            )
            threshold = None
    return r_file, lo, hi, r_col, threshold


def _columns_table(
    sections: dict[str, dict[str, Any]], id_col: str, r_col: str, bad: Any
) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """Read the study's own column names; return the person and rating columns and the renames."""
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
    id_col = mapped.get("person", id_col)
    r_col = mapped.get("rating", r_col)
    renamed = tuple((_COLUMN_ROLES[k], v) for k, v in mapped.items() if k in _COLUMN_ROLES)
    names = [id_col, r_col, *(v for _, v in renamed)]
    for name in sorted({n for n in names if names.count(n) > 1}):
        bad("columns", name, "one column cannot play two roles")
    return id_col, r_col, renamed


def _files(sections: dict[str, dict[str, Any]], bad: Any) -> tuple[str, str, Any]:
    """Return the sessions and participants files, and the demographic columns if listed."""
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
    return s_file, p_file, demographics


def _roles_table(
    raw: dict[str, Any],
    roles: dict[str, Any],
    surveys_raw: list,
    waves: list,
    bad: Any,
    *,
    aliases: dict[str, str],
) -> tuple[list[str], list[str], tuple[str, ...] | None, tuple[str, ...] | None]:
    """Traits, states, session features and chosen predictors, checked against the surveys.

    A custom instrument may be named by its ``[instrument] name`` (``aliases``); it is stored
    as the entry the survey lists.
    """
    if "roles" not in raw:
        bad("roles", None, "the [roles] table is required (traits = [...], states = [...])")
    listed: dict[str, list[str]] = {}
    for key in ("traits", "states"):
        found = _str_list(roles.get(key, []))
        if found is None:
            if roles.get(key) != []:
                bad(f"roles.{key}", None, "must be a list of instrument names")
            found = []
        listed[key] = found
    blocks = [block for block in surveys_raw if isinstance(block, dict)]
    surveyed = {inst for block in blocks for inst in (_str_list(block.get("instruments")) or [])}
    for key in ("traits", "states"):
        listed[key] = [aliases[n] if n not in surveyed and n in aliases else n for n in listed[key]]
    traits, states = listed["traits"], listed["states"]
    for inst in sorted(set(traits) & set(states)):
        bad("roles", inst, "an instrument cannot be both a trait and a state")
    for key, names in (("roles.traits", traits), ("roles.states", states)):
        for inst in names:
            if inst not in surveyed:
                bad(
                    key,
                    inst,
                    "no [[surveys]] block lists this instrument (a library name, a key file's "
                    "path as a survey lists it, or the [instrument] name inside that file)",
                )
    if waves:
        first = waves[0]
        at_first = {
            inst
            for block in blocks
            if block.get("wave") == first or block.get("wave_col") is not None
            for inst in (_str_list(block.get("instruments")) or [])
        }
        for inst in traits:
            if inst in surveyed and inst not in at_first:
                reason = (
                    f"traits are read from the first wave ({first!r}), "
                    "but no survey of that wave lists this instrument"
                )
                bad("roles.traits", inst, reason)
    session_features = None
    if "session_features" in roles:
        session_features = _str_list(roles["session_features"])
        if session_features is None and roles["session_features"] != []:
            bad("roles.session_features", None, "must be a list of sessions.csv column names")
        session_features = tuple(session_features or ())
    predictors = None
    if "predictors" in roles:
        predictors = _str_list(roles["predictors"])
        if not predictors:
            bad(
                "roles.predictors",
                None,
                "must be a non-empty list of scale or session feature names, in priority order "
                "(leave it out for the default rule)",
            )
        elif len(set(predictors)) != len(predictors):
            bad("roles.predictors", None, "a predictor is listed twice")
        predictors = tuple(predictors or ())
    return traits, states, session_features, predictors


def _scoring_table(scoring: dict[str, Any], bad: Any) -> tuple[Any, bool]:
    min_valid = scoring.get("min_valid", 0.8)
    if _number(min_valid) is None or not 0 < float(min_valid) <= 1:
        bad("scoring.min_valid", min_valid, "must be a number in (0, 1]")
        min_valid = 0.8
    prorate = scoring.get("prorate", False)
    if not isinstance(prorate, bool):
        bad("scoring.prorate", prorate, "must be true or false")
        prorate = False
    return min_valid, prorate


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
    elif isinstance(wave_col, str) and wave_col.strip() == s_id.strip():
        bad(
            f"{key}.wave_col",
            wave_col,
            "names the participant id column; the wave column says which wave each row "
            "belongs to and must be another column",
        )
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
