"""Study designs for simulation-based power: read from TOML, generated, or resampled from a pilot.

A design TOML is data: it is parsed with :mod:`tomllib`, every key is checked against the
schema below, and the model formula goes through the allow-list of
:func:`models.formula.parse_formula`. Nothing in the file is evaluated.

Generated columns (one row per rating): ``participant_id``, ``session_id`` (unique across
participants), ``session`` (1, 2, ... within a participant, in time order), ``day`` (uniform on
``[0, days)``, sorted), ``week`` (``day / 7``), ``wave`` (the last wave on or before the day;
waves evenly spaced from day 0 to ``days``), ``story_id`` (``stories_per_session`` different
stories of a pool of ``stories`` per session), ``position`` (1, 2, ... within a session), and one
column per ``[predictors.NAME]`` table.
"""

from __future__ import annotations

import math
import numbers
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from models._errors import InvalidParameterError
from models.limits import POWER_MAX_PARTICIPANTS, POWER_MAX_SESSIONS, POWER_MAX_STORIES

ENGINES = ("lmm", "clmm")
"""Engines a design can name: a linear mixed model (``[residual]``) or a cumulative link mixed
model of an ordinal response (``[thresholds]``)."""

LINKS = ("logit", "probit")

LEVELS = ("participant", "session", "wave", "story", "rating")
"""Where a generated predictor varies."""

DISTRIBUTIONS = ("normal", "bernoulli", "cycle")

_DESIGN_KEYS = {
    "formula",
    "engine",
    "participants",
    "sessions",
    "stories_per_session",
    "stories",
    "days",
    "waves",
}
_TOP_KEYS = {"design", "predictors", "fixed", "random", "residual", "thresholds"}
_PREDICTOR_KEYS = {"level", "distribution", "mean", "sd", "p", "values"}


@dataclass(frozen=True)
class Predictor:
    """One generated predictor column of a design."""

    name: str
    level: str
    distribution: str
    mean: float = 0.0
    sd: float = 1.0
    p: float = 0.5
    values: tuple[float, ...] = ()


@dataclass(frozen=True)
class PowerDesign:
    """A study design and the true parameters to simulate from (see :func:`read_design`).

    Attributes
    ----------
    formula : str
        The analysis model, lme4 syntax.
    engine : str
        ``"lmm"`` (continuous response) or ``"clmm"`` (ordinal response, categories
        ``1 .. J``).
    participants : int
        Participants when the caller gives no grid.
    sessions : tuple of int
        ``(min, max)`` sessions per participant (uniform on the integers between).
    stories_per_session, stories : int
        Stories rated per session, drawn without replacement from a pool of ``stories``.
    days : float
        Length of the study period in days.
    waves : tuple of str
        Survey waves, evenly spaced over the period.
    predictors : tuple of Predictor
        Generated predictor columns.
    fixed : dict
        ``{term: value}`` for the fixed-effect columns (formulaic names).
    random : dict
        ``{group: {"sd": {term: sd}, "corr": [(term1, term2, r), ...]}}``.
    residual_sd : float or None
        Residual standard deviation (``lmm``).
    thresholds : tuple of float
        The ``J - 1`` increasing thresholds on the latent scale (``clmm``):
        ``P(Y <= j) = F(threshold_j - X beta - Z b)``.
    link : str
        ``"logit"`` or ``"probit"`` (``clmm``).
    source : str
        The file read, or ``"<dict>"``.
    """

    formula: str
    engine: str
    participants: int
    sessions: tuple[int, int]
    stories_per_session: int
    stories: int
    days: float
    waves: tuple[str, ...]
    predictors: tuple[Predictor, ...]
    fixed: dict[str, float]
    random: dict[str, dict[str, Any]]
    residual_sd: float | None
    source: str = "<dict>"
    thresholds: tuple[float, ...] = ()
    link: str = "logit"
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


# ---------------------------------------------------------------------------------------------
# reading


def _where(source: str, key: str) -> str:
    return f"{source}: {key}"


def _number(value: Any, *, source: str, key: str, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise InvalidParameterError(f"{_where(source, key)} must be a number; got {value!r}")
    if minimum is not None and value < minimum:
        raise InvalidParameterError(
            f"{_where(source, key)} must be a number >= {minimum:g}; got {value!r}"
        )
    return float(value)


def _integer(value: Any, *, source: str, key: str, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InvalidParameterError(
            f"{_where(source, key)} must be an integer >= {minimum}; got {value!r}"
        )
    if maximum is not None and value > maximum:
        raise InvalidParameterError(
            f"{_where(source, key)} must be at most {maximum:,} (the ceiling that keeps a "
            f"simulated study within memory); got {value!r}"
        )
    return int(value)


def _table(value: Any, *, source: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidParameterError(f"{_where(source, key)} must be a table; got {value!r}")
    return value


def _unknown(found: dict[str, Any], allowed: set[str], *, source: str, key: str) -> None:
    extra = sorted(set(found) - allowed)
    if extra:
        raise InvalidParameterError(
            f"{_where(source, key)}: unknown key(s) {extra}; expected some of {sorted(allowed)}"
        )


def session_range(value: Any, *, source: str, key: str) -> tuple[int, int]:
    """Read a sessions setting: an int, ``[min, max]`` or the text ``"min-max"``.

    Each count is from 1 to :data:`~models.limits.POWER_MAX_SESSIONS` (1,000).
    """
    if isinstance(value, str):
        lo, sep, hi = value.partition("-")
        try:
            value = [int(lo), int(hi)] if sep else int(lo)
        except ValueError:
            raise InvalidParameterError(
                f"{_where(source, key)} must be a count such as 8 or a range such as 6-12; "
                f"got {value!r}"
            ) from None
    if isinstance(value, list | tuple):
        if len(value) != 2:
            raise InvalidParameterError(
                f"{_where(source, key)} must be [min, max]; got {list(value)!r}"
            )
        lo = _integer(value[0], source=source, key=key, minimum=1, maximum=POWER_MAX_SESSIONS)
        hi = _integer(value[1], source=source, key=key, minimum=1, maximum=POWER_MAX_SESSIONS)
        if hi < lo:
            raise InvalidParameterError(
                f"{_where(source, key)} must have min <= max; got {list(value)!r}"
            )
        return lo, hi
    n = _integer(value, source=source, key=key, minimum=1, maximum=POWER_MAX_SESSIONS)
    return n, n


def read_design(path_or_dict: str | Path | dict[str, Any]) -> PowerDesign:
    """Read a power-analysis design from a TOML file (or the dict such a file parses to).

    Parameters
    ----------
    path_or_dict : str, path-like or dict
        The TOML file, or its content.

    Returns
    -------
    PowerDesign

    Raises
    ------
    InvalidParameterError
        For an unreadable file, an unknown or missing key, or a value of the wrong kind, with
        the file and the key named.
    FormulaError
        For a formula outside the allow-list.

    Notes
    -----
    The file::

        [design]
        formula = "empathy ~ trait + week + (1 + week | participant_id) + (1 | story_id)"
        engine = "lmm"                 # the only engine so far
        participants = 40              # used when no grid is given (at most 100,000)
        sessions = [6, 12]             # per participant: [min, max] or one integer (<= 1,000)
        stories_per_session = 3
        stories = 120                  # pool of stories (at most 1,000,000)
        days = 30                      # length of the study period
        waves = ["pre", "mid", "post"]

        [predictors.trait]             # one table per generated predictor
        level = "participant"          # participant | session | wave | story | rating
        distribution = "normal"        # normal (mean, sd) | bernoulli (p) | cycle (values)

        [fixed]                        # every fixed-effect column, formulaic names
        Intercept = 3.3
        trait = 0.2
        week = 0.0

        [random.participant_id]        # one table per grouping factor of the formula
        sd = { Intercept = 0.6, week = 0.1 }
        corr = [["Intercept", "week", -0.2]]

        [random.story_id]
        sd = { Intercept = 0.3 }

        [residual]
        sd = 0.9

    An ordinal design (``engine = "clmm"``) has no ``[residual]`` and no ``Intercept`` in
    ``[fixed]`` (the thresholds take its place); it gives the thresholds on the latent scale
    and, optionally, the link::

        [thresholds]
        values = [-2.2, -0.9, 0.4, 1.9]   # J - 1 increasing values: categories 1 .. J
        link = "logit"                     # logit (default) | probit

    A ``cycle`` predictor takes ``values`` in turn along its level (for ``session``: the first
    session of every participant gets ``values[0]``, the second ``values[1]``, ...), which
    writes crossover and paired designs.
    """
    raw, source = _load(path_or_dict)
    _unknown(raw, _TOP_KEYS, source=source, key="top level")
    for required in ("design", "fixed", "random"):
        if required not in raw:
            raise InvalidParameterError(f"{source}: the table [{required}] is missing")
    design = _table(raw["design"], source=source, key="[design]")
    _unknown(design, _DESIGN_KEYS, source=source, key="[design]")
    if not isinstance(design.get("formula"), str):
        raise InvalidParameterError(
            f"{source}: [design] formula must be a text in lme4 syntax, e.g. "
            f"'empathy ~ trait + (1 | participant_id)'; got {design.get('formula')!r}"
        )
    formula = design["formula"]
    from models.formula import parse_formula

    parse_formula(formula)  # the allow-list check
    engine = design.get("engine", "lmm")
    if engine not in ENGINES:
        raise InvalidParameterError(
            f"{source}: [design] engine must be one of {list(ENGINES)}; got {engine!r}"
        )
    _check_engine_tables(raw, engine, source)
    participants = _integer(
        design.get("participants", 40),
        source=source,
        key="[design] participants",
        minimum=2,
        maximum=POWER_MAX_PARTICIPANTS,
    )
    sessions = session_range(design.get("sessions", 1), source=source, key="[design] sessions")
    per = _integer(
        design.get("stories_per_session", 1),
        source=source,
        key="[design] stories_per_session",
        minimum=1,
        maximum=POWER_MAX_STORIES,
    )
    stories = _integer(
        design.get("stories", per),
        source=source,
        key="[design] stories",
        minimum=1,
        maximum=POWER_MAX_STORIES,
    )
    if stories < per:
        raise InvalidParameterError(
            f"{source}: [design] stories ({stories}) must be at least stories_per_session ({per})"
        )
    days = _number(design.get("days", 30), source=source, key="[design] days", minimum=0)
    waves = design.get("waves", ["pre", "mid", "post"])
    if (
        not isinstance(waves, list)
        or not waves
        or not all(isinstance(w, str) for w in waves)
        or len(set(waves)) != len(waves)
    ):
        raise InvalidParameterError(
            f"{source}: [design] waves must be a list of distinct names; got {waves!r}"
        )
    predictors = [
        _predictor(name, spec, source)
        for name, spec in _table(
            raw.get("predictors", {}), source=source, key="[predictors]"
        ).items()
    ]
    fixed = {
        str(k): _number(v, source=source, key=f"[fixed] {k}")
        for k, v in _table(raw["fixed"], source=source, key="[fixed]").items()
    }
    random = {
        str(group): _random_block(group, spec, source)
        for group, spec in _table(raw["random"], source=source, key="[random]").items()
    }
    residual_sd: float | None = None
    thresholds: tuple[float, ...] = ()
    link = "logit"
    if engine == "clmm":
        thresholds, link = _thresholds(raw["thresholds"], source=source)
        if "Intercept" in fixed:
            raise InvalidParameterError(
                f"{source}: [fixed] Intercept: an ordinal model has no intercept (the "
                "[thresholds] values take its place); leave it out"
            )
    else:
        residual_sd = _residual_sd(raw, source)
    return PowerDesign(
        formula=formula,
        engine=engine,
        participants=participants,
        sessions=sessions,
        stories_per_session=per,
        stories=stories,
        days=days,
        waves=tuple(waves),
        predictors=tuple(predictors),
        fixed=fixed,
        random=random,
        residual_sd=residual_sd,
        source=source,
        thresholds=thresholds,
        link=link,
    )


def _load(path_or_dict: Any) -> tuple[dict[str, Any], str]:
    """Return the design's tables and where they came from (a TOML file is read)."""
    if isinstance(path_or_dict, dict):
        raw, source = path_or_dict, "<dict>"
    elif isinstance(path_or_dict, str | Path):
        path = Path(path_or_dict)
        source = str(path)
        if path.exists() and not path.is_file():
            raise InvalidParameterError(
                f"the design {source} must be a TOML file; it is not a regular file"
            )
        try:
            with path.open("rb") as fh:
                raw = tomllib.load(fh)
        except OSError as err:
            raise InvalidParameterError(f"cannot read the design {source}: {err}") from err
        except tomllib.TOMLDecodeError as err:
            raise InvalidParameterError(f"the design {source} is not valid TOML: {err}") from err
        except RecursionError:
            raise InvalidParameterError(
                f"the design {source} is not valid TOML: arrays or inline tables are nested "
                "too deeply"
            ) from None
    else:
        raise InvalidParameterError(
            "the `path_or_dict` parameter of read_design must be a path to a TOML file or a "
            f"dict; got {type(path_or_dict).__name__}"
        )
    return raw, source


def _check_engine_tables(raw: dict[str, Any], engine: str, source: str) -> None:
    """Refuse the tables of the other engine and require the engine's own."""
    if engine == "lmm" and "thresholds" in raw:
        raise InvalidParameterError(
            f'{source}: [thresholds] belongs to an ordinal design (engine = "clmm"); engine '
            "'lmm' simulates a continuous response with [residual] sd"
        )
    if engine == "clmm" and "residual" in raw:
        raise InvalidParameterError(
            f"{source}: [residual] belongs to a linear design; engine 'clmm' draws an ordinal "
            "response from [thresholds] values (the latent residual is fixed by the link)"
        )
    if engine not in ("clmm",) and "residual" not in raw:
        raise InvalidParameterError(f"{source}: the table [residual] is missing")
    if engine == "clmm" and "thresholds" not in raw:
        raise InvalidParameterError(f"{source}: the table [thresholds] is missing")


def _predictor(name: str, spec: Any, source: str) -> Predictor:
    """Check one ``[predictors.NAME]`` table."""
    key = f"[predictors.{name}]"
    spec = _table(spec, source=source, key=key)
    _unknown(spec, _PREDICTOR_KEYS, source=source, key=key)
    level = spec.get("level")
    if level not in LEVELS:
        raise InvalidParameterError(
            f"{source}: {key} level must be one of {list(LEVELS)}; got {level!r}"
        )
    dist = spec.get("distribution", "normal")
    if dist not in DISTRIBUTIONS:
        raise InvalidParameterError(
            f"{source}: {key} distribution must be one of {list(DISTRIBUTIONS)}; got {dist!r}"
        )
    values: tuple[float, ...] = ()
    if dist == "cycle":
        vals = spec.get("values")
        if not isinstance(vals, list) or not vals:
            raise InvalidParameterError(
                f"{source}: {key} values must be a non-empty list of numbers for a cycle; "
                f"got {vals!r}"
            )
        values = tuple(_number(v, source=source, key=f"{key} values") for v in vals)
    p = _number(spec.get("p", 0.5), source=source, key=f"{key} p")
    if not 0 <= p <= 1:
        raise InvalidParameterError(f"{source}: {key} p must be in [0, 1]; got {p!r}")
    return Predictor(
        name=name,
        level=level,
        distribution=dist,
        mean=_number(spec.get("mean", 0.0), source=source, key=f"{key} mean"),
        sd=_number(spec.get("sd", 1.0), source=source, key=f"{key} sd", minimum=0),
        p=p,
        values=values,
    )


def _random_block(group: str, spec: Any, source: str) -> dict[str, Any]:
    """Check one ``[random.GROUP]`` table: the SDs of its terms and their correlations."""
    key = f"[random.{group}]"
    spec = _table(spec, source=source, key=key)
    _unknown(spec, {"sd", "corr"}, source=source, key=key)
    sds = {
        str(t): _number(v, source=source, key=f"{key} sd.{t}", minimum=0)
        for t, v in _table(spec.get("sd", {}), source=source, key=f"{key} sd").items()
    }
    corr = []
    for entry in spec.get("corr", []):
        if (
            not isinstance(entry, list)
            or len(entry) != 3
            or not all(isinstance(t, str) for t in entry[:2])
        ):
            raise InvalidParameterError(
                f"{source}: {key} corr must list [term1, term2, r] triples; got {entry!r}"
            )
        r = _number(entry[2], source=source, key=f"{key} corr")
        if not -1 < r < 1:
            raise InvalidParameterError(
                f"{source}: {key} corr {entry[0]}, {entry[1]} must be in (-1, 1); got {r!r}"
            )
        corr.append((entry[0], entry[1], r))
    return {"sd": sds, "corr": corr}


def _residual_sd(raw: dict[str, Any], source: str) -> float:
    """Check ``[residual]`` of a linear design: its SD, positive."""
    residual = _table(raw["residual"], source=source, key="[residual]")
    _unknown(residual, {"sd"}, source=source, key="[residual]")
    if "sd" not in residual:
        raise InvalidParameterError(f"{source}: [residual] sd is missing")
    residual_sd = _number(residual["sd"], source=source, key="[residual] sd", minimum=0)
    if residual_sd <= 0:
        raise InvalidParameterError(f"{source}: [residual] sd must be > 0; got {residual_sd!r}")
    return residual_sd


def _thresholds(value: Any, *, source: str) -> tuple[tuple[float, ...], str]:
    table = _table(value, source=source, key="[thresholds]")
    _unknown(table, {"values", "link"}, source=source, key="[thresholds]")
    values = table.get("values")
    if not isinstance(values, list) or not values:
        raise InvalidParameterError(
            f"{source}: [thresholds] values must be a list of increasing numbers, one fewer "
            f"than the categories, e.g. [-2.2, -0.9, 0.4, 1.9] for 5; got {values!r}"
        )
    cut = tuple(_number(v, source=source, key="[thresholds] values") for v in values)
    if any(b <= a for a, b in zip(cut, cut[1:], strict=False)):
        raise InvalidParameterError(
            f"{source}: [thresholds] values must increase strictly; got {list(cut)!r}"
        )
    link = table.get("link", "logit")
    if link not in LINKS:
        raise InvalidParameterError(
            f"{source}: [thresholds] link must be one of {list(LINKS)}; got {link!r}"
        )
    return cut, str(link)


# ---------------------------------------------------------------------------------------------
# generating rows


def _draw(pred: Predictor, n: int, index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if pred.distribution == "normal":
        return pred.mean + pred.sd * rng.standard_normal(n)
    if pred.distribution == "bernoulli":
        return (rng.random(n) < pred.p).astype(float)
    values = np.asarray(pred.values, dtype=float)
    return values[index % len(values)]


def generate_frame(
    design: PowerDesign,
    *,
    n_participants: int,
    sessions: tuple[int, int],
    rng: np.random.Generator,
    response: str,
) -> pd.DataFrame:
    """Rows of one simulated study of ``design`` (the response column holds zeros)."""
    lo, hi = sessions
    counts = rng.integers(lo, hi + 1, size=n_participants)
    n_sessions = int(counts.sum())
    person = np.repeat(np.arange(n_participants), counts)
    start = np.repeat(np.cumsum(counts) - counts, counts)
    index = np.arange(n_sessions) - start  # session index within participant, 0-based
    day = (
        rng.uniform(0.0, design.days, size=n_sessions) if design.days > 0 else np.zeros(n_sessions)
    )
    order = np.lexsort((day, person))
    day = day[order]
    n_waves = len(design.waves)
    wave_days = np.linspace(0.0, design.days, n_waves) if n_waves > 1 else np.zeros(1)
    wave = np.searchsorted(wave_days, day, side="right") - 1
    per = design.stories_per_session
    story = np.concatenate(
        [rng.choice(design.stories, size=per, replace=False) for _ in range(n_sessions)]
    )
    session_row = np.repeat(np.arange(n_sessions), per)
    width = max(4, len(str(n_participants)))
    pid = np.array([f"P{p + 1:0{width}d}" for p in range(n_participants)], dtype=object)
    frame = pd.DataFrame(
        {
            "participant_id": pid[person[session_row]],
            "session_id": [f"S{s + 1:06d}" for s in session_row],
            "session": index[session_row] + 1,
            "day": day[session_row],
            "week": day[session_row] / 7.0,
            "wave": np.asarray(design.waves, dtype=object)[wave[session_row]],
            "story_id": [f"story{j + 1:04d}" for j in story],
            "position": np.tile(np.arange(1, per + 1), n_sessions),
        }
    )
    n = len(frame)
    for pred in design.predictors:
        if pred.level == "participant":
            values = _draw(pred, n_participants, np.arange(n_participants), rng)
            frame[pred.name] = values[person[session_row]]
        elif pred.level == "session":
            values = _draw(pred, n_sessions, index, rng)
            frame[pred.name] = values[session_row]
        elif pred.level == "wave":
            within = np.tile(np.arange(n_waves), n_participants)
            grid = _draw(pred, n_participants * n_waves, within, rng)
            frame[pred.name] = grid[person[session_row] * n_waves + wave[session_row]]
        elif pred.level == "story":
            values = _draw(pred, design.stories, np.arange(design.stories), rng)
            frame[pred.name] = values[story]
        else:
            frame[pred.name] = _draw(pred, n, frame["position"].to_numpy() - 1, rng)
    frame[response] = 0.0
    return frame


# ---------------------------------------------------------------------------------------------
# resampling a pilot (simr's extend)


def extend_frame(
    data: pd.DataFrame,
    *,
    participant_col: str,
    session_col: str | None,
    n_participants: int,
    sessions: tuple[int, int] | None,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Resample a pilot's rows into a study of ``n_participants`` (and sessions per person).

    New participant ``k`` copies a donor: the donors are the pilot participants in random
    order, cycled (each is used ``n // n0`` or ``n // n0 + 1`` times). With ``sessions``, each
    new participant gets ``m`` sessions (uniform on the range): ``m`` of the donor's sessions
    drawn without replacement when the donor has that many, else all of them and the rest
    drawn with replacement, kept in time order with every rating row of the session. Every copy
    gets new participant and session ids; other columns (stories, predictors) are kept.
    """
    people = pd.unique(data[participant_col])
    n0 = len(people)
    reps = math.ceil(n_participants / n0)
    donors = np.concatenate([rng.permutation(n0) for _ in range(reps)])[:n_participants]
    by_person = {p: np.flatnonzero(data[participant_col].to_numpy() == p) for p in people}
    width = max(4, len(str(n_participants)))
    pieces = []
    for k, d in enumerate(donors):
        rows = by_person[people[d]]
        new_id = f"P{k + 1:0{width}d}"
        if sessions is None:
            part = data.iloc[rows].copy()
            if session_col is not None:
                part[session_col] = [f"{new_id}:{s}" for s in part[session_col]]
        else:
            assert session_col is not None  # checked by the caller
            own = data[session_col].to_numpy()[rows]
            ids = pd.unique(own)
            m = int(rng.integers(sessions[0], sessions[1] + 1))
            if m <= len(ids):
                pick = np.sort(rng.choice(len(ids), size=m, replace=False))
            else:
                extra = rng.choice(len(ids), size=m - len(ids), replace=True)
                pick = np.sort(np.concatenate([np.arange(len(ids)), extra]))
            parts = []
            for copy, j in enumerate(pick):
                sub = data.iloc[rows[own == ids[j]]].copy()
                sub[session_col] = f"{new_id}:{ids[j]}#{copy + 1}"
                parts.append(sub)
            part = pd.concat(parts)
        part[participant_col] = new_id
        pieces.append(part)
    return pd.concat(pieces, ignore_index=True)


def recode_groups(design: Any, frame: pd.DataFrame) -> Any:
    """Give every random block of ``design`` the group codes of ``frame``'s own labels."""
    blocks = []
    rows = frame.loc[design.rows]
    for block in design.random:
        if len(block.factors) == 1:
            key = rows[block.factors[0]].astype(str)
        else:
            key = rows[list(block.factors)].astype(str).agg(":".join, axis=1)
        codes, levels = pd.factorize(key, sort=True)
        blocks.append(replace(block, codes=codes.astype(np.intp), levels=pd.Index(levels)))
    return replace(design, random=blocks)
