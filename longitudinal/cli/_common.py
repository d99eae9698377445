"""What every subcommand shares: exit codes, atomic outputs, failure and warning messages."""

from __future__ import annotations

import argparse
import functools
import re
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from longitudinal._errors import InvalidParameterError

if TYPE_CHECKING:  # pandas, the writers and the data errors are loaded once a command runs
    import pandas as pd

    from surveys import InputValidationError

#: Exit code for bad input or bad arguments (argparse uses 2 for usage errors too).
EXIT_INPUT = 2
#: How many problems of a failure table are printed before "... and N more".
MAX_PROBLEMS_SHOWN = 30

_Formatter = argparse.RawDescriptionHelpFormatter


def _draws_option(text: str) -> int | str:
    """``--draws``: a whole number, or ``auto``."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        expected = f"expected a whole number or 'auto'; got {text!r}"
        raise argparse.ArgumentTypeError(expected) from None


def _scheduler_option(text: str) -> str:
    """Check ``--scheduler`` as it is parsed: ``processes:N``, ``local:N`` or ``tcp://host:port``.

    A malformed address (``tcp://[::1:9``) is refused with the expected forms before any
    work, in the option's words; the text itself is what the commands pass on.
    """
    from models import InvalidParameterError as ModelsInvalidParameterError
    from models.parallel import SCHEDULER_FORMS, parse_scheduler

    try:
        parse_scheduler(text, where="--scheduler")
    except ModelsInvalidParameterError as err:
        detail = str(err).rpartition("; got ")[2]
        raise argparse.ArgumentTypeError(f"expected {SCHEDULER_FORMS}; got {detail}") from None
    return text


def _check_outputs(outputs: dict[str, Path | None]) -> None:
    """Refuse, before any work, outputs whose folder is missing or that name one file twice.

    An existing output must be a regular file: a device, FIFO or socket is refused. Two
    options name the same file when their paths resolve to the same file (links, hard links).
    """
    from longitudinal._output import check_writable, refuse_special

    seen: dict[Path, str] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        folder = path.parent if str(path.parent) else Path(".")
        if not folder.is_dir():
            raise InvalidParameterError(
                f"cannot write {option} {path}: the folder {folder} does not exist; create it first"
            )
        check_writable(path, option=option)
        refuse_special(path, option=option)
        if path.is_dir():
            raise InvalidParameterError(
                f"cannot write {option} {path}: it is a folder; name a file (it may be inside "
                "that folder)"
            )
        resolved = path.resolve()
        if path.exists():
            stat = path.stat()
            for other in seen:
                if other.exists() and other.stat()[1:3] == stat[1:3]:
                    resolved = other
        if resolved in seen:
            raise InvalidParameterError(f"{seen[resolved]} and {option} name the same file")
        seen[resolved] = option


def _csv_writer(frame: pd.DataFrame) -> Callable[[Path], None]:
    from longitudinal._output import write_csv

    return functools.partial(write_csv, frame)


def _scores_writer(frame: pd.DataFrame) -> Callable[[Path], None]:
    """Write a large table column-wise with pyarrow; the pandas writer where that cannot.

    pyarrow writes numbers in their shortest round-trip form (``4`` for 4.0) and empty cells
    for NaN. It is used only when no text cell needs quoting (a delimiter, quote or line
    break) or an apostrophe before a formula (see :func:`~longitudinal._output.write_csv`),
    so the file reads back the same as the pandas writer's.
    """
    from longitudinal._output import csv_is_raw

    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pacsv
    except ModuleNotFoundError:
        return _csv_writer(frame)
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return _csv_writer(frame)
    safe = not csv_is_raw()
    for column in table.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            if pc.any(pc.match_substring_regex(column, r'[,"\r\n]')).as_py():
                return _csv_writer(frame)
            if safe and pc.any(pc.match_substring_regex(column, r"^[=+\-@\t]")).as_py():
                return _csv_writer(frame)  # its apostrophes: see write_csv
        elif not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
            return _csv_writer(frame)
    if any(any(ch in name for ch in ',"\r\n') for name in table.column_names):
        return _csv_writer(frame)

    def write(path: Path) -> None:
        # the header as the pandas writer gives it: pyarrow quotes every column name
        with open(path, "wb") as out:
            out.write((",".join(table.column_names) + "\n").encode("utf-8"))
            options = pacsv.WriteOptions(include_header=False, quoting_style="none")
            pacsv.write_csv(table, out, options)

    return write


def _format_value(value: Any) -> str:
    import pandas as pd

    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return ""
    return f" (value {value!r})"


def _format_failures(err: InputValidationError) -> str:
    """Render a failure table as one readable message."""
    import pandas as pd

    cases = err.failure_cases
    n = len(cases)
    lines = [f"error: {err.summary} ({n} problem{'s' if n != 1 else ''})"]
    for rec in cases.head(MAX_PROBLEMS_SHOWN).itertuples(index=False):
        where = [str(rec.file)] if isinstance(rec.file, str) and rec.file else []
        if pd.notna(rec.row):
            where.append(f"row {int(rec.row)}")
        if isinstance(rec.column, str) and rec.column:
            where.append(f"column {rec.column!r}")
        lines.append(f"  {', '.join(where) or 'input'}: {rec.reason}{_format_value(rec.value)}")
    if n > MAX_PROBLEMS_SHOWN:
        lines.append(f"  ... and {n - MAX_PROBLEMS_SHOWN} more")
    return "\n".join(lines)


def _format_os_error(err: OSError) -> str:
    if err.strerror and err.filename:
        return f"error: {err.strerror}: {err.filename}"
    return f"error: {err}"


_WARNING_WIDTH = 180
_WARNING_SOURCE = re.compile(r"^(?P<source>[^:|]+\.(?:csv|tsv|txt|xlsx|xls|sav)(?:, [\w.-]+)?): ")


_SCALE_FINDING = re.compile(
    r"^(?:score: )?(?P<instrument>[\w-]+)\.(?P<scale>[\w-]+)"
    r"(?: \(wave (?P<wave>'[^']*')\))?: (?P<finding>.+)$"
)


# the leading function name and the generic half of a finding, left out on a short line
_GENERIC = re.compile(r"^(?:[a-z_]+: )?(?:returned NaN where a statistic is undefined: )?")


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _findings(parts: list[str], *, source: str = "", compact: bool = False) -> list[str]:
    """One text per finding: the scales (and waves) of an instrument that share one merged.

    ``tipi.extraversion (wave 'baseline'): X`` and ``tipi.openness (wave 'baseline'): X``
    become ``tipi scales extraversion and openness (wave 'baseline'): X``; the same scales
    with the same finding at several waves become one text naming the waves. Any other text
    is kept as it is, each distinct one once. When ``source`` (``file, instrument``) names
    the instrument already, a merged text starts with ``scales``. ``compact`` (for a terminal
    line of limited width) counts the scales instead of naming them and leaves out the
    finding's function name and generic half, keeping the specific reason.
    """
    merged: dict[tuple[str, str, str], dict[str, list[str]]] = {}
    order: list[tuple[str, ...]] = []
    for part in parts:
        match = _SCALE_FINDING.match(part)
        if match is None:
            key: tuple[str, ...] = ("text", part)
            if key not in order:
                order.append(key)
            continue
        group = (match["instrument"], match["finding"], "")
        waves = merged.setdefault(group, {})
        scales = waves.setdefault(match["wave"] or "", [])
        if match["scale"] not in scales:
            scales.append(match["scale"])
        if ("scales", *group) not in order:
            order.append(("scales", *group))
    out = []
    for key in order:
        if key[0] == "text":
            out.append(key[1])
            continue
        instrument, finding, _ = key[1:]
        by_scales: dict[tuple[str, ...], list[str]] = {}
        for wave, scales in merged[(instrument, finding, "")].items():
            by_scales.setdefault(tuple(scales), []).append(wave)
        for scales, waves in by_scales.items():
            named = [w for w in waves if w]
            where = ""
            if named:
                where = f" (wave{'s' if len(named) > 1 else ''} {_join(named)})"
            reason = _GENERIC.sub("", finding) if compact else finding
            if len(scales) == 1:
                out.append(f"{instrument}.{scales[0]}{where}: {reason}")
            else:
                named_already = source.endswith(f", {instrument}")
                lead = "scales" if named_already else f"{instrument} scales"
                listed = f"{len(scales)} {lead}" if compact else f"{lead} {_join(list(scales))}"
                out.append(f"{listed}{where}: {reason}")
    return out


def _warning_lines(caught: list[warnings.WarningMessage], *, width: int | None) -> list[str]:
    """Warnings as lines: one per finding, grouped by file and instrument, counted.

    A warning that joins several findings with `` | `` is split into them; the scales of an
    instrument with the same finding (a two-item scale's undefined alpha if deleted, at one
    or more waves) are named on one line; a finding repeated word for word is printed once
    with its count; with ``width``, each line is cut to that many characters (used when a
    file, the report's ``notes.csv``, keeps every text in full).
    """
    groups: dict[str, dict[str, int]] = {}
    for message in caught:
        text = " ".join(str(message.message).split())
        match = _WARNING_SOURCE.match(text)
        source = match.group("source") if match else ""
        body = text[match.end() :] if match else text
        counts = groups.setdefault(source, {})
        for part in _findings(body.split(" | "), source=source, compact=bool(width)):
            counts[part] = counts.get(part, 0) + 1
    lines = []
    for source, counts in groups.items():
        indent = "warning: "
        if source and len(counts) > 1:
            lines.append(f"warning: {source}:")
            indent = "  - "
        for part, n in counts.items():
            text = part if not source or indent == "  - " else f"{source}: {part}"
            suffix = f" (×{n})" if n > 1 else ""
            room = (width or 0) - len(indent) - len(suffix)
            if width and len(text) > room:
                text = text[: room - 1].rstrip() + "…"
            lines.append(f"{indent}{text}{suffix}")
    return lines


def _print_warnings(caught: list[warnings.WarningMessage], notes: Path | None = None) -> None:
    """Print the warnings of a command; shortened when ``notes`` holds them in full."""
    lines = _warning_lines(caught, width=_WARNING_WIDTH if notes else None)
    for line in lines:
        print(line, file=sys.stderr)
    if notes and any(line.endswith("…") or "… (×" in line for line in lines):
        print(f"(shortened; every note in full: {notes})", file=sys.stderr)
