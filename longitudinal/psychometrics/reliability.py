"""Multilevel reliability of scales over waves: ``surveys`` keys the items, ``models`` estimates.

:func:`scale_multilevel_reliability` is the one-scale entry point: the scale's answers are
reverse keyed from its declared range (:func:`surveys.keyed_item_answers`) and their variance
components and generalizability coefficients estimated (:func:`models.multilevel_reliability`).
:func:`multilevel_tables` does it for every scale of a set of instruments (what ``longitudinal
reliability`` writes), and :func:`study_multilevel_reliability` for the state scales of a loaded
study measured at two or more waves. :func:`invariance_ladders` and :func:`study_invariance`,
the same for longitudinal measurement invariance (:func:`models.measurement_invariance`:
``longitudinal reliability --invariance`` and the report), live in
:mod:`longitudinal.psychometrics.invariance` and are imported here too.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from _empathic_base.results import Result
from longitudinal._errors import InvalidParameterError
from longitudinal.psychometrics._answers import study_answers
from longitudinal.psychometrics.invariance import (
    INVARIANCE_COLUMNS,
    INVARIANCE_MODELS,
    INVARIANCE_PARAMS_COLUMNS,
    InvarianceTables,
    invariance_ladders,
    study_invariance,
)

__all__ = [
    "COMPONENTS_COLUMNS",
    "INVARIANCE_COLUMNS",
    "INVARIANCE_MODELS",
    "INVARIANCE_PARAMS_COLUMNS",
    "InvarianceTables",
    "invariance_ladders",
    "study_invariance",
    "MULTILEVEL_COLUMNS",
    "MultilevelTables",
    "multilevel_tables",
    "scale_multilevel_reliability",
    "study_multilevel_reliability",
]

MULTILEVEL_COLUMNS = [
    "instrument",
    "scale",
    "n_persons",
    "n_occasions",
    "n_items",
    "method",
    "RkF",
    "R1R",
    "RkR",
    "Rc",
    "RkRn",
    "Rcn",
]
"""Columns of :attr:`MultilevelTables.multilevel` (``multilevel.csv``)."""

COMPONENTS_COLUMNS = ["instrument", "scale", "design", "component", "variance"]
"""Columns of :attr:`MultilevelTables.components` (``components.csv``)."""

"""Columns of :attr:`MultilevelTables.components` (``components.csv``)."""


@dataclass(frozen=True, repr=False)
class MultilevelTables(Result):
    """Multilevel reliability of several scales: coefficients, components and notes.

    Attributes
    ----------
    multilevel : pandas.DataFrame
        One row per scale with a result: ``instrument, scale, n_persons, n_occasions,
        n_items, method, RkF, R1R, RkR, Rc, RkRn, Rcn`` (see
        :func:`models.multilevel_reliability`).
    components : pandas.DataFrame
        ``instrument, scale, design, component, variance``: the crossed and nested
        variance components of each scale (negative ANOVA estimates kept as they are).
    notes : tuple of str
        One text per scale without a result (one item, one occasion, too few people, no one
        answering at two occasions, a model that could not be fitted) and
        per finding of a result (method, negative or zero components, few people), each
        starting with ``instrument.scale:``.
    meta : dict
        The options and, per scale, the meta of its result.
    """

    multilevel: pd.DataFrame
    components: pd.DataFrame
    notes: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def _title(self) -> str:
        return (
            f"MultilevelTables({len(self.multilevel)} scale(s) with coefficients, "
            f"{len(self.notes)} note(s))"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        notes = pd.DataFrame({"note": list(self.notes)})
        return [
            ("multilevel reliability", self.multilevel),
            ("variance components", self.components),
            ("notes", notes),
        ]


def scale_multilevel_reliability(
    data: pd.DataFrame,
    key: Any,
    *,
    id_col: str,
    wave_col: str,
    format: Literal["wide", "long"] = "wide",
    item_col: str = "item",
    value_col: str = "value",
    method: Literal["auto", "anova", "reml"] = "auto",
) -> Any:
    """Multilevel reliability of one scale over waves, reverse keyed from its declared range.

    Parameters
    ----------
    data : pandas.DataFrame
        Raw item answers (not reverse keyed). ``format="wide"``: one row per person and wave,
        one column per item; ``format="long"``: one row per person, wave and item. Not
        modified.
    key : surveys.ScaleKey
        The scale (an instrument's ``scales`` entry): items, reverse-keyed items, declared
        range.
    id_col, wave_col : str
        The participant and wave columns.
    format : {"wide", "long"}, default "wide"
        The layout of `data`; never guessed.
    item_col, value_col : str, default "item", "value"
        The item and answer columns of long data.
    method : {"auto", "anova", "reml"}, default "auto"
        As in :func:`models.multilevel_reliability`.

    Returns
    -------
    models.MultilevelReliability
        The coefficients (``n_persons, n_occasions, n_items, method, RkF, R1R, RkR, Rc, RkRn,
        Rcn``), the variance components, notes and meta.

    Raises
    ------
    InvalidParameterError
        As :func:`surveys.keyed_item_answers` and :func:`models.multilevel_reliability`
        raise it (missing or text columns, answers outside the declared range, duplicates,
        fewer than two persons, waves or items).

    See Also
    --------
    models.multilevel_reliability : the estimation and its formulas.
    surveys.keyed_item_answers : the reverse keying.

    Notes
    -----
    Reverse-keyed items are reversed as ``response_min + response_max - x`` from the scale's
    declared range. ``psych::mlr`` reverses them from the minimum and maximum observed over
    the scale's items, so the two agree only when the answers span the declared range.

    Examples
    --------
    >>> import pandas as pd
    >>> from surveys import ScaleKey
    >>> from longitudinal import scale_multilevel_reliability
    >>> key = ScaleKey("daily", ("q1", "q2", "q3"), ("q3",), 1, 9, "mean")
    >>> answers = pd.DataFrame({  # Shrout and Lane's example, its third item reverse coded
    ...     "id": list(range(1, 6)) * 4,
    ...     "day": [t for t in range(1, 5) for _ in range(5)],
    ...     "q1": [2, 3, 6, 3, 7, 3, 5, 6, 3, 8, 4, 4, 7, 5, 6, 1, 5, 8, 8, 6],
    ...     "q2": [3, 4, 6, 4, 8, 3, 7, 7, 5, 8, 2, 6, 8, 6, 7, 3, 9, 9, 7, 8],
    ...     "q3": [4, 6, 5, 7, 3, 6, 3, 2, 1, 1, 5, 3, 1, 3, 2, 6, 3, 1, 1, 4],
    ... })
    >>> result = scale_multilevel_reliability(answers, key, id_col="id", wave_col="day")
    >>> result.coefficients[["n_persons", "n_occasions", "n_items", "method"]]
       n_persons  n_occasions  n_items method
    0          5            4        3  anova
    >>> round(result["RkF"], 4), round(result["Rc"], 4)
    (0.9676, 0.7422)
    """
    from models import multilevel_reliability
    from surveys import keyed_item_answers

    keyed = keyed_item_answers(
        data,
        key,
        id_col=id_col,
        wave_col=wave_col,
        format=format,
        item_col=item_col,
        value_col=value_col,
    )
    return multilevel_reliability(
        keyed,
        id_col=id_col,
        wave_col=wave_col,
        format="long",
        item_col="item",
        value_col="value",
        method=method,
    )


def multilevel_tables(
    data: pd.DataFrame,
    instruments: Sequence[Any],
    *,
    id_col: str,
    wave_col: str,
    method: Literal["auto", "anova", "reml"] = "auto",
) -> MultilevelTables:
    """Multilevel reliability of every scale of some instruments (wide answers).

    Parameters
    ----------
    data : pandas.DataFrame
        One row per person and wave, one column per item (raw, not reverse keyed), e.g.
        ``surveys.check_export(...).responses.data``. Not modified.
    instruments : sequence of surveys.Instrument
        The instruments whose scales are estimated, in the order wanted.
    id_col, wave_col : str
        The participant and wave columns.
    method : {"auto", "anova", "reml"}, default "auto"
        As in :func:`models.multilevel_reliability`.

    Returns
    -------
    MultilevelTables
        ``multilevel`` (:data:`MULTILEVEL_COLUMNS`), ``components``
        (:data:`COMPONENTS_COLUMNS`) and ``notes``. A scale with one item, answered at one
        wave only, or by fewer than two people has a note and no rows.

    Raises
    ------
    InvalidParameterError
        As :func:`scale_multilevel_reliability` raises it.

    Warns
    -----
    DataQualityWarning, SingularFitWarning, ConvergenceWarning
        Those of :func:`models.multilevel_reliability`, each starting with
        ``instrument.scale:``.
    """
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            "the `data` parameter of longitudinal.multilevel_tables must be a pandas "
            f"DataFrame; got {type(data).__name__}"
        )
    absent = [c for c in (id_col, wave_col) if c not in data.columns]
    if absent:
        raise InvalidParameterError(
            f"the `data` parameter of longitudinal.multilevel_tables has no column(s) {absent}"
        )
    from surveys import keyed_item_answers

    def answers(key: Any) -> tuple[str, pd.DataFrame | None]:
        if len(key.items) < 2:
            return _ONE_ITEM, None
        present = [i for i in key.items if i in data.columns]
        if len(present) == len(key.items):  # else keyed_item_answers names the missing columns
            answered = data.loc[data[present].notna().any(axis=1), [id_col, wave_col]]
            reason = _unanswered(answered, id_col, wave_col)
            if reason:
                return reason, None
        return "", keyed_item_answers(data, key, id_col=id_col, wave_col=wave_col)

    return _multilevel(instruments, answers, id_col=id_col, wave_col=wave_col, method=method)


_ONE_ITEM = "one item (the item components need two or more)"


def _multilevel(
    instruments: Sequence[Any], answers: Any, *, id_col: str, wave_col: str, method: str
) -> MultilevelTables:
    """Multilevel reliability of every scale; ``answers(key)`` gives (reason, keyed answers).

    The keyed answers are long (``id_col, wave_col, item, value``); a scale with a reason has
    a note and no rows.
    """
    from models import ConvergenceError, FormulaError, multilevel_reliability

    rows: list[dict[str, Any]] = []
    parts: list[pd.DataFrame] = []
    notes: list[str] = []
    meta: dict[str, Any] = {"options": {"method": method}, "scales": {}}
    done: list[tuple[pd.DataFrame, Any, list[Any]]] = []  # keyed answers, result, warnings
    for instrument in instruments:
        for key in instrument.scales:
            label = f"{instrument.name}.{key.name}"
            reason, keyed = answers(key)
            if reason:
                notes.append(f"{label}: {reason}; no multilevel coefficients")
                continue
            # two scores of the same keyed items (a raw sum and its percentage) share one fit
            same = next(((r, c) for k, r, c in done if k.equals(keyed)), None)
            if same is not None:
                result, caught = same
            else:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        result = multilevel_reliability(
                            keyed,
                            id_col=id_col,
                            wave_col=wave_col,
                            format="long",
                            item_col="item",
                            value_col="value",
                            method=method,
                        )
                    except InvalidParameterError:
                        raise
                    except (FormulaError, ConvergenceError) as err:  # this scale only
                        notes.append(f"{label}: could not be estimated ({err})")
                        continue
                done.append((keyed, result, caught))
            for message in caught:
                text = str(message.message).removeprefix("models.multilevel_reliability: ")
                warnings.warn(f"{label}: {text}", message.category, stacklevel=3)
            names = {"instrument": instrument.name, "scale": key.name}
            rows.append({**names, **result.coefficients.iloc[0].to_dict()})
            parts.append(result.components.assign(**names).loc[:, COMPONENTS_COLUMNS])
            notes.extend(f"{label}: {note}" for note in result.notes)
            meta["scales"][label] = result.meta
    multilevel = pd.DataFrame(rows, columns=MULTILEVEL_COLUMNS)
    for column in ("n_persons", "n_occasions", "n_items"):
        multilevel[column] = multilevel[column].astype("int64")
    components = (
        pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=COMPONENTS_COLUMNS)
    )
    return MultilevelTables(multilevel, components, tuple(notes), meta)


def _unanswered(answered: pd.DataFrame, id_col: str, wave_col: str) -> str:
    """Why a scale has no multilevel result, from its answered person x wave rows (or empty)."""
    waves = pd.unique(answered[wave_col])
    if len(waves) < 2:
        shown = f" ({_plain(waves[0])!r})" if len(waves) else ""
        return f"measured at one occasion{shown}"
    if len(pd.unique(answered[id_col])) < 2:
        return "answered by one person"
    if not (answered.groupby(id_col)[wave_col].nunique() >= 2).any():
        return "no participant answered at two or more occasions"
    return ""


def _plain(value: Any) -> Any:
    """Return a NumPy scalar as the Python value it holds (for messages)."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value


def study_multilevel_reliability(study: Any) -> MultilevelTables:
    """Multilevel reliability of a loaded study's state scales measured at two or more waves.

    The answers are the study's keyed item answers (:attr:`~longitudinal.Study.item_answers`:
    the participant x wave rows scored for each state instrument, ``[roles] states``), as the
    loader read and checked them.

    Parameters
    ----------
    study : Study
        From :func:`longitudinal.load_study`.

    Returns
    -------
    MultilevelTables
        As :func:`multilevel_tables`, one block per state instrument; a state scale answered
        at one wave gets a note.

    Raises
    ------
    InvalidParameterError
        If `study` is not a loaded Study.
    """
    from longitudinal.study.loaded import Study

    if not isinstance(study, Study):
        raise InvalidParameterError(
            "the `study` parameter of longitudinal.study_multilevel_reliability must be a "
            f"Study from longitudinal.load_study; got {type(study).__name__}"
        )
    states = [study.instruments[name] for name in study.state_instruments]
    if not states:
        return MultilevelTables(
            pd.DataFrame(columns=MULTILEVEL_COLUMNS),
            pd.DataFrame(columns=COMPONENTS_COLUMNS),
            ("no state instrument: nothing is measured at two or more waves",),
            {},
        )
    blocks = []
    for instrument in states:
        keyed_of = study_answers(study, instrument)

        def answers(key: Any, keyed_of: Any = keyed_of) -> tuple[str, pd.DataFrame | None]:
            if len(key.items) < 2:
                return _ONE_ITEM, None
            keyed = keyed_of(key)
            reason = _unanswered(keyed.loc[keyed["value"].notna()], "__id", "__wave")
            return (reason, None) if reason else ("", keyed)

        blocks.append(
            _multilevel([instrument], answers, id_col="__id", wave_col="__wave", method="auto")
        )
    return MultilevelTables(
        pd.concat([b.multilevel for b in blocks], ignore_index=True),
        pd.concat([b.components for b in blocks], ignore_index=True),
        tuple(n for b in blocks for n in b.notes),
        {"scales": {k: v for b in blocks for k, v in b.meta["scales"].items()}},
    )
