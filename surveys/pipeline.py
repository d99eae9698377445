"""Read, check and score one survey export: the one chain behind ``longitudinal score`` and a study.

:func:`check_export` reads the export, optionally shifts its answers to the instrument's range
and validates it against every instrument; :func:`score_export` scores what was checked. The
two steps are apart because a study checks every file before it scores any (participants,
survey dates and duplicates across files are compared in between).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd

from _empathic_base.checks import check_bool
from _empathic_base.results import Result
from surveys._columns import participant_column
from surveys._errors import (
    FAILURE_COLUMNS,
    InputValidationError,
    InvalidParameterError,
    UndefinedStatisticWarning,
)
from surveys.instruments import Instrument
from surveys.readers import Responses, read_responses
from surveys.scoring import ScaleScores, score
from surveys.validation import FailureCollector, _load, validate_responses

_TABLES = ("scores", "reliability", "item_stats", "missing")


@dataclass(frozen=True)
class CheckedExport:
    """A survey export read and checked against its instruments.

    Attributes
    ----------
    responses : Responses
        What :func:`surveys.read_responses` read (answers shifted when `recode` was given).
    instruments : tuple of Instrument
        The instruments that could be loaded, in the order asked.
    id_col, wave_col : str, str or None
        The export's id and wave columns.
    wave : str or None
        The wave of every row when the export has no wave column.
    failures : pandas.DataFrame
        Every problem found, with the columns of :data:`surveys.FAILURE_COLUMNS`; empty when
        the export can be scored.
    """

    responses: Responses
    instruments: tuple[Instrument, ...]
    id_col: str
    wave_col: str | None
    wave: str | None = None
    failures: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=FAILURE_COLUMNS))

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return self.failures.empty

    def __repr__(self) -> str:
        names = ", ".join(i.name for i in self.instruments) or "no instrument"
        state = "usable" if self.ok else f"{len(self.failures)} problem(s)"
        return (
            f"CheckedExport({self.responses.source}: {len(self.responses.data)} row(s), "
            f"{len(self.responses.excluded)} left out; {names}; {state})"
        )


@dataclass(frozen=True, repr=False)
class ScoreExportResult(Result):
    """The scores of one checked export, per instrument and pooled.

    Follows the result protocol (:mod:`_empathic_base.results`): ``summary()``, ``to_frame()``
    (the stacked scores) and ``to_dict()``.

    Attributes
    ----------
    export : CheckedExport
        What was scored.
    results : dict of str to ScaleScores
        One result per instrument scored, by instrument name.
    scores, reliability, item_stats, missing : pandas.DataFrame
        The tables of every result, stacked in instrument order.
    notes : tuple of str
        Every warning raised while scoring, as ``"<file>, <instrument>: <message>"``.
    """

    export: CheckedExport
    results: dict[str, ScaleScores]
    scores: pd.DataFrame
    reliability: pd.DataFrame
    item_stats: pd.DataFrame
    missing: pd.DataFrame
    notes: tuple[str, ...] = ()

    def _title(self) -> str:
        unscored = int(self.scores["score"].isna().sum()) if "score" in self.scores else 0
        return (
            f"ScoreExportResult({self.export.responses.source}: {len(self.scores)} scale score(s) "
            f"from {len(self.results)} instrument(s), {unscored} not computed)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        shown = self.reliability.drop(columns=["instrument"], errors="ignore")
        return [("Scores", self.scores), ("Reliability", shown)]


def check_export(
    source: str | os.PathLike,
    instruments: str | os.PathLike | Instrument | Sequence[str | os.PathLike | Instrument],
    *,
    id_col: str | None = None,
    wave_col: str | None = None,
    wave: str | None = None,
    recode: tuple[float, float, float, float] | None = None,
    errors: Literal["raise", "collect"] = "raise",
    **read_options: Any,
) -> CheckedExport:
    """Read a survey export and check it against its instruments.

    Parameters
    ----------
    source : path
        The export (CSV, Excel, Qualtrics or SPSS; see :func:`surveys.read_responses`).
    instruments : str, path, Instrument, or a sequence of them
        Library names, key files or loaded instruments. An unknown name is listed among the
        data problems rather than raised on its own.
    id_col, wave_col : str, str or None
        The id and wave columns as the export names them. ``id_col=None`` (default):
        ``participant_id``, or ``id`` when the export has no ``participant_id`` column.
    wave : str, optional
        The wave of every row of an export without a wave column (used when scoring).
    recode : tuple (a, b, c, d), optional
        Shift every item answer from the range ``a-b`` to ``c-d`` (same width) before the
        check, for exports coded ``1-6`` where the key says ``0-5``. Answers outside ``a-b``
        are problems, not shifted.
    errors : {"raise", "collect"}, default "raise"
        ``"raise"`` raises one :class:`surveys.InputValidationError` listing every problem;
        ``"collect"`` returns them in ``failures``. A file that cannot be read at all raises
        in both modes.
    **read_options
        Passed to :func:`surveys.read_responses` (``format``, ``item_map``,
        ``missing_codes``, ``flagged``, ``encoding``, ``delimiter``, ``decimal``, ``sheet``).

    Returns
    -------
    CheckedExport
    """
    where = "surveys.check_export"
    if errors not in ("raise", "collect"):
        raise InvalidParameterError(
            f"the `errors` parameter of {where} must be 'raise' or 'collect'; got {errors!r}"
        )
    specs = _as_list(instruments)
    responses = read_responses(source, id_col=id_col, wave_col=wave_col, **read_options)
    id_col = participant_column(responses.data.columns, id_col)
    # instruments that cannot be loaded are listed again by the validation below
    unknown = FailureCollector()
    loaded: list[Instrument] = _load(specs, unknown)
    if recode is not None:
        try:
            responses = _recoded(responses, [i for inst in loaded for i in inst.items], recode)
        except InputValidationError as err:  # with the instrument problems, in one report
            unknown.extend(err.failure_cases)
            raise InputValidationError(unknown.to_frame(), err.summary) from None
    failures = pd.DataFrame(columns=FAILURE_COLUMNS)
    try:
        validate_responses(responses, specs, id_col=id_col, wave_col=wave_col)
    except InputValidationError as err:
        if errors == "raise":
            raise
        failures = err.failure_cases
    return CheckedExport(responses, tuple(loaded), id_col, wave_col, wave, failures)


def score_export(
    export: CheckedExport,
    *,
    min_valid: float | int = 0.8,
    prorate: bool = False,
    only_waves: Mapping[str, Collection[str]] | None = None,
    name: str | None = None,
) -> ScoreExportResult:
    """Score a checked export on each of its instruments.

    Parameters
    ----------
    export : CheckedExport
        From :func:`check_export`; refused when it holds problems.
    min_valid, prorate
        As in :func:`surveys.score`.
    only_waves : mapping of instrument name to waves, optional
        Score these instruments only on rows of the listed waves (a trait measured once at
        baseline); an instrument with no such row is left out of ``results``.
    name : str, optional
        The file as messages and notes name it (default: the path that was read).

    Returns
    -------
    ScoreExportResult
        Warnings raised while scoring are re-raised with the file and instrument named, and
        kept in ``notes``; the undefined alpha of a one-item scale is only kept in ``notes``.
    """
    where = "surveys.score_export"
    if not isinstance(export, CheckedExport):
        raise InvalidParameterError(
            f"the `export` parameter of {where} must be a CheckedExport from "
            f"surveys.check_export; got {type(export).__name__}"
        )
    if not export.ok:
        raise InputValidationError(
            export.failures, f"cannot score {export.responses.source}: it did not pass the check"
        )
    prorate = check_bool(prorate, name="prorate", where=where)
    responses = export.responses
    data, rows = responses.data, responses.row_numbers
    source = responses.source if name is None else name
    wave_col = export.wave_col
    if wave_col is None and export.wave is not None:
        wave_col = "wave"
        data = data.assign(wave=export.wave)
    results: dict[str, ScaleScores] = {}
    notes: list[str] = []
    for instrument in export.instruments:
        subset, subset_rows = data, rows
        if only_waves is not None and instrument.name in only_waves:
            if wave_col is None:
                raise InvalidParameterError(
                    f"the `only_waves` parameter of {where} needs a wave: "
                    f"{responses.source} has no wave column and no `wave` was given"
                )
            keep = data[wave_col].isin(list(only_waves[instrument.name]))
            subset, subset_rows = data.loc[keep], rows.loc[keep]
            if subset.empty:
                continue
        one_item = all(len(k.items) == 1 for k in instrument.scales)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = score(
                subset,
                instrument,
                id_col=export.id_col,
                wave_col=wave_col,
                min_valid=min_valid,
                prorate=prorate,
                row_numbers=subset_rows,
                source_file=source,
            )
        for w in caught:
            text = f"{source}, {instrument.name}: {w.message}"
            notes.append(text)
            silent = one_item and issubclass(w.category, UndefinedStatisticWarning)
            if not silent:
                warnings.warn(text, w.category, stacklevel=2)
        results[instrument.name] = result
    tables = {}
    for key in _TABLES:
        parts = [getattr(r, key) for r in results.values()]
        filled = [t for t in parts if not t.empty] or parts
        tables[key] = pd.concat(filled, ignore_index=True) if filled else pd.DataFrame()
    return ScoreExportResult(export, results, notes=tuple(notes), **tables)


def _as_list(instruments: Any) -> list[Any]:
    if isinstance(instruments, str | os.PathLike | Instrument):
        return [instruments]
    if isinstance(instruments, Iterable):
        return list(instruments)
    raise InvalidParameterError(
        "the `instruments` parameter of surveys.check_export must be a name, a path, an "
        f"Instrument or a list of them; got {type(instruments).__name__}"
    )


def _recoded(
    responses: Responses, items: list[str], spec: tuple[float, float, float, float]
) -> Responses:
    """Shift item answers from ``a-b`` to ``c-d``; answers outside ``a-b`` are refused."""
    a, b, c, d = (float(v) for v in spec)
    if b - a != d - c or b <= a:
        raise InvalidParameterError(
            "the `recode` parameter of surveys.check_export must be two ranges of the same "
            f"width (a, b, c, d) with a < b; got {spec!r}"
        )
    data = responses.data.copy()
    export = {item: column for column, item in responses.meta.get("item_map", {}).items()}
    problems = []
    for item in items:
        if item not in data.columns:
            continue
        numbers = pd.to_numeric(data[item], errors="coerce").to_numpy(dtype=float)
        outside = np.isfinite(numbers) & ((numbers < a) | (numbers > b))
        for pos in np.flatnonzero(outside):
            problems.append(
                {
                    "file": responses.source,
                    "row": int(responses.row_numbers.iloc[pos]),
                    "column": f"{export[item]} ({item})" if item in export else item,
                    "value": numbers[pos],
                    "reason": f"value outside the recode range {a:g}-{b:g}",
                }
            )
        text = data[item].to_numpy(dtype=object)
        shifted = np.where(np.isfinite(numbers), numbers - a + c, np.nan)
        keep_text = ~np.isfinite(numbers) & pd.notna(data[item]).to_numpy()
        data[item] = np.where(keep_text, text, shifted) if keep_text.any() else shifted
    if problems:
        raise InputValidationError(
            pd.DataFrame(problems),
            f"cannot recode {responses.source} from {a:g}-{b:g} to {c:g}-{d:g}",
        )
    return replace(responses, data=data)
