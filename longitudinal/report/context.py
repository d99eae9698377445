"""What every section of one report shares: the study, the options, pseudonyms, results.

The sections fill :class:`ReportContext` as they compute (tables, figures, notes) and read it
when they render, so a later section (the methods paragraph, the files list) can describe what
the earlier ones did.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._wording import instrument_title, own_names, span_text
from longitudinal.report.options import ReportOptions
from longitudinal.report.pseudonyms import pseudonymize_message
from longitudinal.study.frames import scale_column
from longitudinal.study.loaded import pseudonymised_frame as renamed

REPORT_FILE = "report.html"
EXCLUSIONS_FILE = "exclusions.csv"
PROVENANCE_FILE = "provenance.json"
NOTES_FILE = "notes.csv"
WITHHELD = "a message quoting a participant id, left out (the report without pseudonyms shows it)"
"""What stands in the report for a message withheld by :meth:`ReportContext.scrub`."""
EVALUATION_FILE = Path("evaluate") / "metrics.csv"


@dataclass
class ReportContext:
    """Everything computed for one report.

    ``study`` is the study the report shows: pseudonymised (:meth:`Study.pseudonymised
    <longitudinal.Study.pseudonymised>`) unless the report keeps the raw ids. ``loaded``
    is the study as loaded, for the analyses whose sums run over the participants in the order
    of their ids (multilevel reliability, invariance, the G study, the empathy models), so that
    their numbers are those of the study as read to the last digit; their messages go through
    :meth:`scrub`. Without ``loaded`` (a report that keeps the raw ids), it is ``study``.
    """

    study: Any
    options: ReportOptions
    id_map: dict[str, str]
    out: Path
    loaded: Any = None
    demo: bool = False
    previous_evaluate: Path | None = None
    key_fingerprint: str | None = None
    states: list[tuple[str, str, str]] = field(default_factory=list)  # (column, instrument, scale)
    labels: dict[str, str] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (file, caption)
    notes: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    growth_time: dict[str, float] = field(default_factory=dict)
    growth_time_unit: str = "weeks"
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)  # person_wave, story, sessions
    withheld: int = 0  # messages quoting a raw id not as a participant (see scrub)
    _names: frozenset[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.loaded is None:
            self.loaded = self.study

    @property
    def config(self) -> Any:
        """The study's configuration (``study.toml``)."""
        return self.study.config

    def note(self, *texts: str) -> None:
        """Record warnings for the Notes section and provenance.json, each text once.

        A formula or message that names the package's internal session or story column
        (``session_id``, ``story_id``) is recorded with the study's own name for it.
        """
        for text in texts:
            text = self.own_names(text)
            if text not in self.notes:
                self.notes.append(text)

    def own_names(self, text: str) -> str:
        """Name the session, story and time columns as the study does (``[columns]``)."""
        return own_names(text, self.config.column_names)

    def scrub(self, text: str) -> str:
        """Pass on a message of code that saw raw ids, with pseudonyms where it quotes one.

        For warnings and errors of the analyses run on the study's raw ids: nothing in them
        is searched for ids, so the numbers and words of a sentence (``3 waves``, ``1–5
        scale``, ``70/20/10``) are never taken for one. A quoted raw id that the message says
        is a participant (``group 'P01'``) gets the pseudonym; a message quoting a raw id in
        any other place is withheld: :data:`WITHHELD` stands in its place and
        :attr:`withheld` counts it (:func:`longitudinal.report.pseudonyms.pseudonymize_message`;
        a quoted name of the study, :meth:`study_names`, is left as it is). Text the package
        writes about participants is built from pseudonyms in the first place (the report's
        frames, :func:`~longitudinal.report.pseudonyms.pseudonymize_left_out`).
        """
        if not self.options.pseudonymize or not self.id_map:
            return text
        shown = pseudonymize_message(
            text, self.id_map, keep=self.study_names(), id_col=self.config.id_col
        )
        if shown is None:
            self.withheld += 1
            return WITHHELD
        return shown

    def study_names(self) -> frozenset[str]:
        """Return the names the study uses besides ids: waves, instruments, scales, columns.

        The columns of the report's frames are among them (``week``, ``day``: the model
        terms a message may quote).
        """
        if self._names is None:
            study, cfg = self.study, self.config
            names = {*map(str, cfg.waves), cfg.id_col, *cfg.column_names.values()}
            for entry, instrument in study.instruments.items():
                names.update((entry, instrument.name, *instrument.items))
                for key in instrument.scales:
                    names.update((key.name, scale_column(instrument.name, key.name), *key.items))
            frames = [study.participants, study.sessions, study.ratings, *self.frames.values()]
            for frame in frames:
                names.update(map(str, frame.columns))
            self._names = frozenset(names)
        return self._names


def study_days(sessions: pd.DataFrame, id_col: str) -> int:
    """Count the calendar days the study lasted, from its sessions.

    The longest span from a participant's first session to their last, both days counted
    (0 without sessions).

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.report.context import study_days
    >>> s = pd.DataFrame({"id": ["a", "a", "b", "b"], "started_at": pd.to_datetime(
    ...     ["2025-03-03 18:00", "2025-04-06 09:00", "2025-03-05 10:00", "2025-03-20 10:00"])})
    >>> study_days(s, "id")
    35
    """
    if sessions.empty:
        return 0
    days = sessions["started_at"].dt.normalize().groupby(sessions[id_col].astype(str))
    return int((days.max() - days.min()).dt.days.max()) + 1


def study_span(ctx: ReportContext) -> str:
    """Say the study's length in words, from its sessions: ``five weeks``, ``12 days``."""
    return span_text(study_days(ctx.study.sessions, ctx.config.id_col))


def rename_ids(frame: pd.DataFrame, id_col: str, id_map: dict[str, str]) -> pd.DataFrame:
    """Pseudonymize the person column and drop session ids (they often hold raw ids).

    The rows are put in pseudonym order (stable, so each person's rows keep their order): a
    table listed in the raw ids' order would let a reader who knows the ids map every
    pseudonym back (the rule of :meth:`longitudinal.study.loaded.Study.pseudonymised`).
    """
    return report_frame(renamed(frame, id_col, id_map))


def report_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Drop the session ids of a frame of the shown study, as the report's tables have it."""
    return frame.drop(columns=[c for c in ("session_id",) if c in frame.columns])


def label(instrument: Any, scale: str) -> str:
    """Readable name of a scale: the instrument's title, with the scale when it has several."""
    title = instrument_title(instrument)
    if len(instrument.scales) == 1:
        return title
    return f"{title} ({scale.replace('_', ' ')})"


def reported_scales(instrument: Any) -> list[str]:
    """Scale names, dropping a scale when a later one is a rescaling of it."""
    keys = list(instrument.scales)
    out = []
    for k, key in enumerate(keys):
        signature = (tuple(key.items), tuple(key.reverse), key.scoring)
        later = [
            other
            for other in keys[k + 1 :]
            if (tuple(other.items), tuple(other.reverse), other.scoring) == signature
        ]
        if not later:
            out.append(key.name)
    return out


def choose_states(ctx: ReportContext) -> None:
    """Pick the state scales the change sections analyse, and label every scale."""
    study = ctx.study
    for name in study.state_instruments:
        instrument = study.instruments[name]
        for scale in reported_scales(instrument):
            col = scale_column(name, scale)
            ctx.states.append((col, name, scale))
            ctx.labels[col] = label(instrument, scale)
    for name in study.trait_instruments:
        instrument = study.instruments[name]
        for key in instrument.scales:
            col = scale_column(name, key.name)
            ctx.labels[col] = label(instrument, key.name)


ORDER_STATISTICS = ("min", "median", "max")
"""Columns of :func:`describe` that are values of the data (whole numbers for counts)."""


def describe(values: pd.Series, *, whole: bool | None = None) -> dict[str, float | int]:
    """n, mean, SD, min, median and max of the non-missing values.

    Counts (``whole=True``; by default, the values of an integer column: sessions per
    participant, ratings per session, days) give whole-number min, median and max as
    ints, so a report prints ``8``, not ``8.00``; a median halfway between two counts stays
    a float (``9.5``). The mean and SD are always floats.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.report.context import describe
    >>> d = describe(pd.Series([6, 10, 9, 10]))
    >>> [d["min"], float(d["median"]), d["max"]]
    [6, 9.5, 10]
    """
    counts = whole
    if counts is None:
        counts = pd.api.types.is_integer_dtype(values) and not pd.api.types.is_bool_dtype(values)
    values = values.dropna().astype(float)
    out: dict[str, float | int] = {
        "n": len(values),
        "mean": values.mean() if len(values) else np.nan,
        "sd": values.std(ddof=1) if len(values) > 1 else np.nan,
        "min": values.min() if len(values) else np.nan,
        "median": values.median() if len(values) else np.nan,
        "max": values.max() if len(values) else np.nan,
    }
    if counts:
        for key in ORDER_STATISTICS:
            value = float(out[key])
            if value.is_integer():
                out[key] = int(value)
    return out


def summary_frame(rows: list[dict[str, Any]], columns: list[str] | None = None) -> pd.DataFrame:
    """Rows of :func:`describe` as a table that keeps the whole-number counts whole.

    A column of min, median or max that holds an int (a count) is kept as Python objects,
    so the ints and the real values of other rows are each written as they are.
    """
    frame = pd.DataFrame(rows, columns=columns)
    for key in ORDER_STATISTICS:
        if key in frame.columns and any(isinstance(r.get(key), int) for r in rows):
            cells = [r.get(key, np.nan) for r in rows]
            frame[key] = pd.Series(cells, index=frame.index, dtype=object)
    return frame


def join_words(items: list[str]) -> str:
    """Join words as ``a``, ``a and b``, ``a, b and c``, leaving out empty ones."""
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
