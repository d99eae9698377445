"""Questionnaire instruments: scoring keys as declarative data.

Each instrument of the library is one TOML file in ``surveys/instruments/`` holding its items,
scales (items and reverse-keyed items), declared response range, scoring rule, sources, licence
note and a verification grade. Custom keys are TOML files in psych key notation (a ``-`` before an
item id marks it reverse keyed)::

    [instrument]
    name = "bfi25"
    response_min = 1
    response_max = 6
    scoring = "mean"

    [scales.agree]
    items = ["-A1", "A2", "A3", "A4", "A5"]

Item ids are the data's column names. Library item ids are ``"{instrument}_{k}"`` with ``k`` the
item's number in that instrument's questionnaire (``bfi44_6``, ``mpq_bf_absorption_13``).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from surveys._errors import InputValidationError, InvalidParameterError, UnknownInstrumentError

__all__ = [
    "GRADES",
    "SCORING_RULES",
    "Instrument",
    "ScaleKey",
    "derive_items",
    "list_instruments",
    "load_instrument",
]


#: Scoring rules a scale may declare.
SCORING_RULES = ("mean", "sum", "count")


#: Verification grades, strongest first (see ``Instrument.grade``).
GRADES = ("V2", "V1", "S", "U")


_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*$")


_INSTRUMENT_FIELDS = {
    "name",
    "title",
    "items",
    "response_min",
    "response_max",
    "scoring",
    "grade",
    "grade_notes",
    "sources",
    "licence",
    "notes",
}


_SCALE_FIELDS = {"items", "reverse", "scoring", "multiplier", "description"}


_TOP_LEVEL = {"instrument", "scales", "anchors", "item_text", "derive", "norms"}


@dataclass(frozen=True)
class ScaleKey:
    """Scoring key of one scale.

    Parameters
    ----------
    name : str
        Scale name, e.g. ``"extraversion"``.
    items : tuple of str
        Item ids (= data column names) in questionnaire order.
    reverse : tuple of str
        The subset of ``items`` that is reverse keyed.
    response_min, response_max : float
        Declared response range of the items. Reverse keying uses this range,
        ``x_rev = response_min + response_max - x``, never the observed range.
    scoring : {"mean", "sum", "count"}
        How the (reverse-keyed) items are combined. ``"count"`` counts items answered 1 on
        0/1 (false/true) items, which is their sum.
    multiplier : float, default 1.0
        Factor applied after scoring (WHO-5 percentage = sum x 4).
    description : str, default ""
        Free text, e.g. the direction of the scale (``"high = emotionally stable"``).

    Raises
    ------
    InvalidParameterError
        If the key is inconsistent (reverse item not among the items, duplicated item,
        empty scale, ``response_min >= response_max``, unknown scoring rule, count scoring on a
        range other than 0-1, non-positive multiplier).

    Examples
    --------
    >>> from surveys.instruments import ScaleKey
    >>> key = ScaleKey(name="agree", items=("A1", "A2"), reverse=("A1",), response_min=1,
    ...                response_max=6, scoring="mean")
    >>> key.n_items
    2
    """

    name: str
    items: tuple[str, ...]
    reverse: tuple[str, ...]
    response_min: float
    response_max: float
    scoring: str
    multiplier: float = 1.0
    description: str = ""

    def __post_init__(self) -> None:
        problems = _scale_problems(
            self.name,
            list(self.items),
            list(self.reverse),
            self.response_min,
            self.response_max,
            self.scoring,
            self.multiplier,
        )
        if problems:
            detail = "; ".join(reason for _, _, reason in problems)
            raise InvalidParameterError(f"ScaleKey {self.name!r} is inconsistent: {detail}")

    @property
    def n_items(self) -> int:
        """Number of items in the scale."""
        return len(self.items)

    @property
    def score_range(self) -> tuple[float, float]:
        """Lowest and highest possible score (after the multiplier)."""
        k = 1 if self.scoring == "mean" else len(self.items)
        return (k * self.response_min * self.multiplier, k * self.response_max * self.multiplier)


@dataclass(frozen=True)
class Instrument:
    """A questionnaire with its scoring keys and provenance.

    Attributes
    ----------
    name : str
        Library name (the TOML file stem), e.g. ``"bfi44"``.
    title : str
        Human-readable title.
    items : tuple of str
        Every item id of the instrument, in questionnaire order.
    response_min, response_max : float
        Declared response range of the items.
    scoring : str
        The instrument's own convention: ``"mean"``, ``"sum"`` or ``"count"``.
    scales : tuple of ScaleKey
        Scoring keys, in the order they are reported.
    grade : str
        Verification grade of the weakest fact that matters for scoring: ``"V2"`` (two or
        more independent sources agree), ``"V1"`` (one source seen), ``"S"`` (secondary only)
        or ``"U"`` (unverified).
    grade_notes : str
        Which facts carry which grade.
    sources : tuple of str
        Citations.
    licence : str
        Licence note (whether the item text may be shipped).
    item_text : dict
        Item id -> wording; only for public-domain instruments (IPIP), else empty.
    derive : dict
        ``{source_instrument: {own_item: source_item}}``: how to take this instrument's items
        from another instrument's columns (see :func:`derive_items`).
    anchors : dict
        Named response-anchor sets, ``{set_name: {value: label}}`` (only the points whose
        labels are known).
    norms : dict
        Lookup tables shipped as data, ``{table_name: {raw_score: norm_score}}``.
    notes : str
        Free text.
    path : str
        The TOML file the instrument was read from (empty when built in code).
    """

    name: str
    title: str
    items: tuple[str, ...]
    response_min: float
    response_max: float
    scoring: str
    scales: tuple[ScaleKey, ...]
    grade: str
    grade_notes: str
    sources: tuple[str, ...]
    licence: str
    item_text: dict[str, str]
    derive: dict[str, dict[str, str]]
    anchors: dict[str, dict[int, str]] = field(default_factory=dict)
    norms: dict[str, dict[int, float]] = field(default_factory=dict)
    notes: str = ""
    path: str = ""

    def scale(self, name: str) -> ScaleKey:
        """Return the scale called `name`.

        Parameters
        ----------
        name : str
            Scale name.

        Returns
        -------
        ScaleKey

        Raises
        ------
        InvalidParameterError
            If the instrument has no such scale.
        """
        for key in self.scales:
            if key.name == name:
                return key
        valid = ", ".join(k.name for k in self.scales)
        raise InvalidParameterError(
            f"the `name` parameter of Instrument.scale must be one of {valid} for instrument "
            f"{self.name!r}; got {name!r}"
        )


def _library_dir() -> Path:
    return Path(str(resources.files("surveys").joinpath("instruments")))


def _library_names() -> list[str]:
    return sorted(p.stem for p in _library_dir().glob("*.toml"))


def load_instrument(
    name_or_path: str | os.PathLike[str] | Mapping[str, Any] | Instrument,
) -> Instrument:
    """Load an instrument from the library, a custom TOML key file or a mapping.

    Parameters
    ----------
    name_or_path : str, path-like, mapping or Instrument
        A library name (see :func:`list_instruments`), a path to a ``.toml`` key file, a mapping
        with the same structure as the TOML file, or an :class:`Instrument` (returned as is).
        A string is read as a path when it ends in ``.toml`` or contains a path separator.

    Returns
    -------
    Instrument

    Raises
    ------
    UnknownInstrumentError
        If a library name is not known; the message lists the valid names.
    InputValidationError
        If the key file is missing, is not valid TOML or is malformed. ``failure_cases`` lists
        every problem at once with the columns ``file, row, column, value, reason``; ``row`` is
        missing and ``column`` names the TOML field (``"scales.agree.reverse"``).
    InvalidParameterError
        If `name_or_path` has an unsupported type.

    Notes
    -----
    TOML layout. ``[instrument]``: ``response_min`` and ``response_max`` (required, numbers,
    min < max), ``scoring`` (required: mean, sum or count; count needs the range 0-1), and
    optionally ``name`` (default: the file stem), ``title``, ``items`` (the instrument's item
    ids in questionnaire order; default: the scales' items in order of appearance), ``grade``
    (V2, V1, S or U; default U), ``grade_notes``, ``sources``, ``licence``, ``notes``.
    ``[scales.NAME]``: ``items`` (item ids, ``"-id"`` = reverse keyed), and optionally
    ``reverse`` (further reverse-keyed ids, which must be among the items), ``scoring`` and
    ``multiplier`` (overriding the instrument's rule; multiplier applied after scoring),
    ``description``. Optional tables: ``[item_text]`` (id = wording), ``[derive.SOURCE]``
    (own item id = source item id), ``[anchors.SET]`` (value = label), ``[norms.TABLE]``
    (raw score = norm score). Unknown fields are reported as problems.

    Examples
    --------
    >>> from surveys.instruments import load_instrument
    >>> bfi = load_instrument("bfi44")
    >>> [s.name for s in bfi.scales]
    ['extraversion', 'agreeableness', 'conscientiousness', 'neuroticism', 'openness']
    >>> bfi.scale("extraversion").reverse
    ('bfi44_6', 'bfi44_21', 'bfi44_31')
    >>> bfi.grade
    'V2'
    """
    from surveys._instrument_keys import _build, _load_path  # the key-file checks

    if isinstance(name_or_path, Instrument):
        return name_or_path
    if isinstance(name_or_path, Mapping):
        return _build(dict(name_or_path), file="<mapping>", stem=None)
    if isinstance(name_or_path, os.PathLike):
        return _load_path(Path(os.fspath(name_or_path)))
    if not isinstance(name_or_path, str):
        raise InvalidParameterError(
            "the `name_or_path` parameter of load_instrument must be a library name, a path to "
            f"a .toml key file, a mapping or an Instrument; got {type(name_or_path).__name__}"
        )
    text = name_or_path
    if text.lower().endswith(".toml") or "/" in text or os.sep in text:
        return _load_path(Path(text))
    names = _library_names()
    if text not in names:
        raise UnknownInstrumentError(
            f"unknown instrument {text!r} in load_instrument; the library has: "
            f"{', '.join(names)} (or pass a path to a .toml key file)"
        )
    return _load_path(_library_dir() / f"{text}.toml")


def list_instruments() -> pd.DataFrame:
    """List the instruments of the library.

    Returns
    -------
    pandas.DataFrame
        One row per instrument, sorted by name, with the columns ``name``, ``title``,
        ``n_items``, ``scales`` (scale names joined by ``", "``), ``response_min``,
        ``response_max``, ``scoring`` and ``grade``.

    Examples
    --------
    >>> from surveys.instruments import list_instruments
    >>> table = list_instruments()
    >>> table.loc[table["name"] == "who5", ["n_items", "scales", "scoring"]].to_numpy().tolist()
    [[5, 'raw, percentage', 'sum']]
    """
    rows = []
    for name in _library_names():
        ins = load_instrument(name)
        rows.append(
            {
                "name": ins.name,
                "title": ins.title,
                "n_items": len(ins.items),
                "scales": ", ".join(s.name for s in ins.scales),
                "response_min": ins.response_min,
                "response_max": ins.response_max,
                "scoring": ins.scoring,
                "grade": ins.grade,
            }
        )
    columns = [
        "name",
        "title",
        "n_items",
        "scales",
        "response_min",
        "response_max",
        "scoring",
        "grade",
    ]
    return pd.DataFrame(rows, columns=columns)


def derive_items(
    data: pd.DataFrame,
    instrument: str | os.PathLike[str] | Instrument,
    *,
    source: str | Instrument,
) -> pd.DataFrame:
    """Take a derived instrument's item columns from a source instrument's columns.

    For example, every BFI-10 item is a BFI-44 item, so ``derive_items(data, "bfi10",
    source="bfi44")`` adds the columns ``bfi10_1 ... bfi10_10`` (copies of ``bfi44_6``,
    ``bfi44_22``, ...) and the result can be scored as BFI-10.

    Parameters
    ----------
    data : pandas.DataFrame
        Item responses with the source instrument's item columns. Not modified.
    instrument : str, path-like or Instrument
        The derived instrument (it must have a ``[derive.SOURCE]`` table).
    source : str or Instrument
        The source instrument (its name is looked up in ``instrument.derive``).

    Returns
    -------
    pandas.DataFrame
        A copy of `data` (same index, all columns kept) with the derived instrument's item
        columns added at the end, in its item order, holding the source columns' values.

    Raises
    ------
    InvalidParameterError
        If `data` is not a DataFrame, or `instrument` has no mapping from `source` (the
        message lists the sources it can be derived from).
    InputValidationError
        One line per source item column missing from `data`, and one per derived item column
        that `data` already has (nothing is overwritten).

    Examples
    --------
    >>> import pandas as pd
    >>> from surveys.instruments import derive_items
    >>> data = pd.DataFrame({f"ipip50_{k}": [3] for k in range(1, 51)})
    >>> mini = derive_items(data, "mini_ipip", source="ipip50")
    >>> mini.shape
    (1, 70)
    """
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            "the `data` parameter of derive_items must be a pandas DataFrame; "
            f"got {type(data).__name__}"
        )
    target = load_instrument(instrument)
    source_name = source.name if isinstance(source, Instrument) else source
    if not isinstance(source_name, str) or source_name not in target.derive:
        valid = ", ".join(sorted(target.derive)) or "(none)"
        raise InvalidParameterError(
            f"the `source` parameter of derive_items must name an instrument that "
            f"{target.name!r} can be derived from ({valid}); got {source_name!r}"
        )
    mapping = target.derive[source_name]
    problems = []
    for own, src in mapping.items():
        if src not in data.columns:
            problems.append(
                {
                    "file": None,
                    "row": None,
                    "column": src,
                    "value": None,
                    "reason": f"missing item column of {source_name!r} needed for {own!r}",
                }
            )
        if own in data.columns:
            problems.append(
                {
                    "file": None,
                    "row": None,
                    "column": own,
                    "value": None,
                    "reason": f"column {own!r} already exists; derive_items does not overwrite",
                }
            )
    if problems:
        raise InputValidationError(
            pd.DataFrame(problems),
            summary=f"cannot derive {target.name!r} items from {source_name!r} columns",
        )
    own_order = [item for item in target.items if item in mapping]
    added = pd.DataFrame(
        {own: data[mapping[own]].to_numpy(copy=True) for own in own_order}, index=data.index
    )
    return pd.concat([data.copy(), added], axis=1)


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _scale_problems(
    name: str,
    items: list[Any],
    reverse: list[Any],
    response_min: Any,
    response_max: Any,
    scoring: Any,
    multiplier: Any,
) -> list[tuple[str, Any, str]]:
    """Consistency problems of one scale as (field, value, reason)."""
    out: list[tuple[str, Any, str]] = []
    if not isinstance(name, str) or not _NAME_RE.match(name):
        out.append(("name", name, "scale name must be letters, digits, '_' or '-'"))
    if len(items) == 0:
        out.append(("items", items, "a scale needs at least one item"))
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, str) or item == "":
            out.append(("items", item, "item ids must be non-empty strings"))
        elif item in seen:
            out.append(("items", item, "item listed more than once in the scale"))
        else:
            seen.add(item)
    for item in reverse:
        if item not in seen:
            out.append(("reverse", item, "reverse-keyed item is not among the scale's items"))
    if scoring not in SCORING_RULES:
        out.append(("scoring", scoring, f"unknown scoring rule; use one of {SCORING_RULES}"))
    if _is_number(response_min) and _is_number(response_max):
        if response_min >= response_max:
            out.append(
                (
                    "response_min",
                    response_min,
                    f"response_min must be < response_max ({response_max})",
                )
            )
        elif scoring == "count" and (response_min != 0 or response_max != 1):
            out.append(
                (
                    "scoring",
                    scoring,
                    f"count scoring needs 0/1 items (response range 0-1); got "
                    f"{response_min}-{response_max}",
                )
            )
    if not _is_number(multiplier) or multiplier <= 0:
        out.append(("multiplier", multiplier, "multiplier must be a positive number"))
    return out
