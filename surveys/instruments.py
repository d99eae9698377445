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

import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from surveys._errors import InputValidationError, InvalidParameterError, UnknownInstrumentError
from surveys._instrument_keys import _build, _load_path
from surveys._instrument_types import GRADES, SCORING_RULES, Instrument, ScaleKey

__all__ = [
    "GRADES",
    "SCORING_RULES",
    "Instrument",
    "ScaleKey",
    "derive_items",
    "list_instruments",
    "load_instrument",
]


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
