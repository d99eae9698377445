"""The instrument types and their consistency rules: :class:`ScaleKey`, :class:`Instrument`.

The lowest module of the instrument layer: :mod:`surveys._instrument_keys` (the key-file checks)
and :mod:`surveys.instruments` (loading, the library, ``derive_items``) both import it, and it
imports neither, so the dependency runs one way. Import the public names from
:mod:`surveys.instruments` or :mod:`surveys`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from surveys._errors import InvalidParameterError

__all__ = ["GRADES", "SCORING_RULES", "Instrument", "ScaleKey"]


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
