"""Instrument key files checked table by table: every problem of a key file reported at once.

:func:`surveys.instruments.load_instrument` reads a key (TOML or a mapping) and hands it to
:func:`_build`, which checks ``[instrument]``, each ``[scales.NAME]``, ``[item_text]``,
``[derive]``, ``[anchors]`` and ``[norms]`` and builds the :class:`~surveys.instruments.Instrument`.
The types and the scale rules come from :mod:`surveys._instrument_types`; this module does not
import :mod:`surveys.instruments` (which imports it).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from _empathic_base.toml_nesting import too_deep
from surveys._errors import InputValidationError
from surveys._instrument_types import (
    _INSTRUMENT_FIELDS,
    _NAME_RE,
    _SCALE_FIELDS,
    _TOP_LEVEL,
    GRADES,
    SCORING_RULES,
    Instrument,
    ScaleKey,
    _is_number,
    _scale_problems,
)


def _problem(file: str, column: str | None, value: Any, reason: str) -> dict[str, Any]:
    return {"file": file, "row": None, "column": column, "value": value, "reason": reason}


def _load_path(path: Path) -> Instrument:
    file = str(path)
    if not path.is_file():
        what = "is not a regular file" if path.exists() else "does not exist"
        raise InputValidationError(
            pd.DataFrame([_problem(file, None, None, f"key file {what}")]),
            summary="cannot load instrument",
        )
    try:
        text = path.read_bytes().decode("utf-8")
        deep = too_deep(text)
        if deep is not None:
            raise tomllib.TOMLDecodeError(deep)
        raw = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as err:
        reason = "nested too deeply" if isinstance(err, RecursionError) else str(err)
        raise InputValidationError(
            pd.DataFrame([_problem(file, None, None, f"not valid TOML: {reason}")]),
            summary="cannot load instrument",
        ) from None
    return _build(raw, file=file, stem=path.stem)


def _as_str_list(value: Any) -> list[Any] | None:
    if isinstance(value, list | tuple):
        return list(value)
    return None


_Bad = Any  # the problem collector of _build: bad(column, value, reason)


def _build(raw: dict[str, Any], *, file: str, stem: str | None) -> Instrument:
    """Check a parsed key file table by table; raise every problem at once, else build it."""
    problems: list[dict[str, Any]] = []

    def bad(column: str | None, value: Any, reason: str) -> None:
        problems.append(_problem(file, column, value, reason))

    for key in raw:
        if key not in _TOP_LEVEL:
            bad(key, None, f"unknown table; allowed: {', '.join(sorted(_TOP_LEVEL))}")
    head = _head(raw, stem, bad)
    raw_scales = raw.get("scales")
    if not isinstance(raw_scales, dict) or not raw_scales:
        bad("scales", None, "at least one [scales.NAME] table is required")
        raw_scales = {}
    scales: list[ScaleKey] = []
    order: list[str] = []
    for sname, spec in raw_scales.items():
        scale, items = _scale(sname, spec, head, bad)
        if scale is not None:
            scales.append(scale)
        order += [i for i in items if isinstance(i, str) and i not in order]
    all_items = list(head.declared) if head.declared is not None else order
    item_text = _item_text(raw, set(all_items), bad)
    derive = _derive(raw, set(all_items), bad)
    anchors = _points(raw, "anchors", bad)
    norms = _points(raw, "norms", bad)
    if problems:
        raise InputValidationError(
            pd.DataFrame(problems), summary=f"malformed instrument key {file}"
        )
    fields = head.fields
    return Instrument(
        name=head.name,
        title=fields.get("title", head.name).strip(),
        items=tuple(all_items),
        response_min=float(head.rmin),
        response_max=float(head.rmax),
        scoring=head.scoring,
        scales=tuple(scales),
        grade=head.grade,
        grade_notes=fields.get("grade_notes", head.default_notes).strip(),
        sources=tuple(head.sources),
        licence=fields.get("licence", "").strip(),
        item_text=item_text,
        derive=derive,
        anchors=anchors,
        norms=norms,
        notes=fields.get("notes", "").strip(),
        path=file if file != "<mapping>" else "",
    )


@dataclass(frozen=True)
class _Head:
    """The checked ``[instrument]`` table of a key file."""

    fields: dict[str, Any]
    name: str
    rmin: Any
    rmax: Any
    range_ok: bool
    scoring: Any
    grade: Any
    default_notes: str
    declared: list[str] | None
    sources: list[str]


def _head(raw: dict[str, Any], stem: str | None, bad: _Bad) -> _Head:
    head = raw.get("instrument")
    if not isinstance(head, dict):
        bad("instrument", None, "missing [instrument] table")
        head = {}
    for key in head:
        if key not in _INSTRUMENT_FIELDS:
            bad(f"instrument.{key}", head[key], "unknown field")
    name = head.get("name", stem)
    if not isinstance(name, str) or not _NAME_RE.match(name):
        bad("instrument.name", name, "name must be letters, digits, '_' or '-' (required)")
        name = str(name)
    rmin, rmax = head.get("response_min"), head.get("response_max")
    range_ok = True
    for label, value in (("response_min", rmin), ("response_max", rmax)):
        if value is None:
            bad(f"instrument.{label}", None, "missing declared response range")
            range_ok = False
        elif not _is_number(value):
            bad(f"instrument.{label}", value, "must be a finite number")
            range_ok = False
    if range_ok and rmin >= rmax:
        bad("instrument.response_min", rmin, f"response_min must be < response_max ({rmax})")
        range_ok = False
    scoring = head.get("scoring")
    if scoring is None:
        bad("instrument.scoring", None, f"missing scoring rule; use one of {SCORING_RULES}")
    elif scoring not in SCORING_RULES:
        bad("instrument.scoring", scoring, f"unknown scoring rule; use one of {SCORING_RULES}")
    elif scoring == "count" and range_ok and (rmin != 0 or rmax != 1):
        reason = f"count scoring needs 0/1 items (response range 0-1); got {rmin}-{rmax}"
        bad("instrument.scoring", scoring, reason)
    grade = head.get("grade", "U")
    if grade not in GRADES:
        bad("instrument.grade", grade, f"grade must be one of {GRADES}")
    for label in ("title", "grade_notes", "licence", "notes"):
        if label in head and not isinstance(head[label], str):
            bad(f"instrument.{label}", head[label], "must be a string")
    sources = head.get("sources", [])
    if isinstance(sources, str):
        sources = [sources]
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        bad("instrument.sources", sources, "must be a list of strings")
        sources = []
    return _Head(
        fields=head,
        name=name,
        rmin=rmin,
        rmax=rmax,
        range_ok=range_ok,
        scoring=scoring,
        grade=grade,
        default_notes=(
            "" if "grade" in head else "No grade in the key file: treated as unverified (U)."
        ),
        declared=_declared_items(head.get("items"), bad),
        sources=sources,
    )


def _declared_items(declared: Any, bad: _Bad) -> list[str] | None:
    """Check ``instrument.items`` (optional): a list of distinct item ids."""
    if declared is None:
        return None
    declared_list = _as_str_list(declared)
    if declared_list is None:
        bad("instrument.items", declared, "must be a list of item ids")
        return None
    seen: set[str] = set()
    for item in declared_list:
        if not isinstance(item, str) or item == "" or item.startswith("-"):
            bad("instrument.items", item, "item ids must be non-empty strings without '-'")
        elif item in seen:
            bad("instrument.items", item, "duplicated item")
        else:
            seen.add(item)
    return declared_list


def _scale(sname: str, spec: Any, head: _Head, bad: _Bad) -> tuple[ScaleKey | None, list[Any]]:
    """Check one ``[scales.NAME]`` table; return the scale (None when faulty) and its items."""
    col = f"scales.{sname}"
    if not isinstance(spec, dict):
        bad(col, spec, "must be a table with an items list")
        return None, []
    for key in spec:
        if key not in _SCALE_FIELDS:
            bad(f"{col}.{key}", spec[key], "unknown field")
    entries = _as_str_list(spec.get("items"))
    if entries is None:
        bad(f"{col}.items", spec.get("items"), "missing or not a list of item ids")
        return None, []
    items = [e[1:] if isinstance(e, str) and e.startswith("-") else e for e in entries]
    reverse = [e[1:] for e in entries if isinstance(e, str) and e.startswith("-")]
    extra_rev = spec.get("reverse", [])
    extra_list = _as_str_list(extra_rev)
    if extra_list is None:
        bad(f"{col}.reverse", extra_rev, "must be a list of item ids")
        extra_list = []
    reverse += [e for e in extra_list if e not in reverse]
    s_scoring = spec.get("scoring", head.scoring)
    multiplier = spec.get("multiplier", 1.0)
    found = _scale_problems(
        sname,
        items,
        reverse,
        head.rmin if head.range_ok else 0,
        head.rmax if head.range_ok else 1,
        s_scoring if s_scoring is not None else "mean",
        multiplier,
    )
    # the instrument-level range and scoring problems are reported once, in _head
    for fld, value, reason in found:
        if fld == "response_min" or (fld == "scoring" and "scoring" not in spec):
            continue
        bad(f"{col}.{fld}" if fld != "name" else col, value, reason)
    if head.declared is not None:
        for item in items:
            if isinstance(item, str) and item not in head.declared:
                bad(f"{col}.items", item, "item in scale is not declared in instrument.items")
    description = spec.get("description", "")
    if not isinstance(description, str):
        bad(f"{col}.description", description, "must be a string")
        description = ""
    if found or not head.range_ok or s_scoring not in SCORING_RULES:
        return None, items
    scale = ScaleKey(
        name=sname,
        items=tuple(items),
        reverse=tuple(i for i in items if i in set(reverse)),
        response_min=float(head.rmin),
        response_max=float(head.rmax),
        scoring=s_scoring,
        multiplier=float(multiplier),
        description=description,
    )
    return scale, items


def _item_text(raw: dict[str, Any], items: set[str], bad: _Bad) -> dict[str, str]:
    item_text = raw.get("item_text", {})
    if not isinstance(item_text, dict):
        bad("item_text", None, "must be a table of item id = wording")
        return {}
    for key, value in item_text.items():
        if key not in items:
            bad(f"item_text.{key}", value, "item not declared in the instrument")
        elif not isinstance(value, str):
            bad(f"item_text.{key}", value, "wording must be a string")
    return dict(item_text)


def _derive(raw: dict[str, Any], items: set[str], bad: _Bad) -> dict[str, dict[str, str]]:
    derive = raw.get("derive", {})
    if not isinstance(derive, dict):
        bad("derive", None, "must be tables [derive.SOURCE] of own item = source item")
        return {}
    out: dict[str, dict[str, str]] = {}
    for src, mapping in derive.items():
        if not isinstance(mapping, dict):
            bad(f"derive.{src}", mapping, "must be a table of own item = source item")
            continue
        targets = list(mapping.values())
        for own, other in mapping.items():
            if own not in items:
                bad(f"derive.{src}.{own}", other, "item not declared in the instrument")
            if not isinstance(other, str) or other == "":
                bad(f"derive.{src}.{own}", other, "source item id must be a non-empty string")
            elif targets.count(other) > 1:
                bad(f"derive.{src}.{own}", other, "source item used for more than one item")
        out[src] = {str(k): str(v) for k, v in mapping.items()}
    return out


_POINTS = {  # table -> (what a table is, what an entry must be, its value check)
    "anchors": (
        "must be a table of value = label",
        "anchors map an integer value to a label",
        lambda v: isinstance(v, str),
    ),
    "norms": (
        "must be a table of raw score = norm score",
        "norms map an integer score to a number",
        _is_number,
    ),
}


def _points(raw: dict[str, Any], key: str, bad: _Bad) -> dict[str, dict[int, Any]]:
    """Check ``[anchors.SET]`` or ``[norms.TABLE]``: integer points to labels or numbers."""
    table_reason, entry_reason, valid = _POINTS[key]
    out: dict[str, dict[int, Any]] = {}
    for name, table in _table(raw, key, bad).items():
        if not isinstance(table, dict):
            bad(f"{key}.{name}", table, table_reason)
            continue
        converted: dict[int, Any] = {}
        for point_key, value in table.items():
            point = _int_key(point_key)
            if point is None or not valid(value):
                bad(f"{key}.{name}.{point_key}", value, entry_reason)
            else:
                converted[point] = float(value) if key == "norms" else value
        out[name] = converted
    return out


def _table(raw: dict[str, Any], key: str, bad: Any) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, dict):
        bad(key, None, "must be a table")
        return {}
    return value


def _int_key(key: Any) -> int | None:
    try:
        return int(str(key))
    except ValueError:
        return None
