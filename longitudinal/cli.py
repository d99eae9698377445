"""The ``longitudinal`` command line.

Each subcommand is two functions: one that registers its parser on the subparsers object
(arguments, help, an example in the epilog) and one that runs it and returns the exit code.
:data:`COMMANDS` maps the subcommand name to both; adding a subcommand means writing the
two functions and adding one entry to the table.

Exit codes: 0 on success, 2 on bad input or bad arguments. Data problems are printed as one
message listing every failure (file, row, column, value, reason), never as a traceback, and
outputs are written only after everything succeeded (through a temporary file and a
rename), so a failed run leaves no partial output behind.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError, LongitudinalError
from longitudinal._output import (
    check_writable,
    refuse_overlap,
    remove_stale_staging,
    write_csv,
    write_json,
)
from longitudinal.report.context import NOTES_FILE
from models import ModelsError
from surveys import InputValidationError, SurveysError

__all__ = ["COMMANDS", "build_parser", "main"]

#: Exit code for bad input or bad arguments (argparse uses 2 for usage errors too).
EXIT_INPUT = 2
#: How many problems of a failure table are printed before "... and N more".
MAX_PROBLEMS_SHOWN = 30

_Formatter = argparse.RawDescriptionHelpFormatter
_Handler = Callable[[argparse.Namespace], int]
_Register = Callable[[Any], argparse.ArgumentParser]


# --------------------------------------------------------------------------- helpers


def _write_atomically(outputs: dict[Path, Callable[[Path], None]]) -> None:
    """Write every output to a temporary file beside its target, then rename them all.

    ``outputs`` maps each target path to a function that writes the content to the path it
    is given. If any writer fails, the temporary files are removed and no target changes.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for target, write in outputs.items():
            folder = target.parent if str(target.parent) else Path(".")
            remove_stale_staging(folder, target.name)
            handle, name = tempfile.mkstemp(
                prefix=f".{target.name}.partial-{os.getpid()}-", suffix=".tmp", dir=folder
            )
            os.close(handle)
            staged.append((Path(name), target))
            write(Path(name))
        for temporary, target in staged:
            os.replace(temporary, target)
    except BaseException:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        raise


def _check_outputs(outputs: dict[str, Path | None]) -> None:
    """Refuse, before any work, outputs whose folder is missing or that name one file twice."""
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
        if path.is_dir():
            raise InvalidParameterError(
                f"cannot write {option} {path}: it is a folder; name a file (it may be inside "
                "that folder)"
            )
        resolved = path.resolve()
        if resolved in seen:
            raise InvalidParameterError(f"{seen[resolved]} and {option} name the same file")
        seen[resolved] = option


def _csv_writer(frame: pd.DataFrame) -> Callable[[Path], None]:
    return functools.partial(write_csv, frame)


def _scores_writer(frame: pd.DataFrame) -> Callable[[Path], None]:
    """Write a large table column-wise with pyarrow; the pandas writer where that cannot.

    pyarrow writes numbers in their shortest round-trip form (``4`` for 4.0) and empty cells
    for NaN. It is used only when no text cell needs quoting (a delimiter, quote or line
    break), so the file reads back the same as the pandas writer's.
    """
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
    for column in table.columns:
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            if pc.any(pc.match_substring_regex(column, r'[,"\r\n]')).as_py():
                return _csv_writer(frame)
        elif not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
            return _csv_writer(frame)
    if any(any(ch in name for ch in ',"\r\n') for name in table.column_names):
        return _csv_writer(frame)

    def write(path: Path) -> None:
        pacsv.write_csv(table, str(path), pacsv.WriteOptions(quoting_style="none"))

    return write


def _format_value(value: Any) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return ""
    return f" (value {value!r})"


def _format_failures(err: InputValidationError) -> str:
    """Render a failure table as one readable message."""
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


_WARNING_WIDTH = 120
_WARNING_SOURCE = re.compile(r"^(?P<source>[^:|]+\.(?:csv|tsv|txt|xlsx|xls|sav)(?:, [\w.-]+)?): ")


def _warning_lines(caught: list[warnings.WarningMessage], *, width: int | None) -> list[str]:
    """Warnings as lines: one per finding, grouped by file and instrument, counted.

    A warning that joins several findings with `` | `` is split into them; a finding repeated
    is printed once with its count; with ``width``, each line is cut to that many characters
    (used when a file, the report's ``notes.csv``, keeps every text in full).
    """
    groups: dict[str, dict[str, int]] = {}
    for message in caught:
        text = " ".join(str(message.message).split())
        match = _WARNING_SOURCE.match(text)
        source = match.group("source") if match else ""
        body = text[match.end() :] if match else text
        for part in body.split(" | "):
            counts = groups.setdefault(source, {})
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


# --------------------------------------------------------------------------- score


def _fraction_or_count(text: str) -> float | int:
    """Parse ``--min-valid``: ``"3"`` is a count of items, ``"0.75"`` or ``"1.0"`` a fraction."""
    try:
        return int(text) if text.strip().lstrip("+").isdigit() else float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"expected a fraction such as 0.75 or a count such as 3; got {text!r}"
        ) from err


def _score_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "score",
        help="score a raw questionnaire export",
        description=(
            "Read a raw questionnaire export (CSV, Excel, Qualtrics CSV or SPSS), check every "
            "item against the instrument's declared range, and write tidy scale scores "
            "(id, [wave], instrument, scale, score, n_items, n_answered) and, optionally, "
            "reliability per scale (and wave)."
        ),
        epilog=(
            "examples:\n"
            "  longitudinal score surveys/pre.csv --instrument tas4 who5 "
            "--id-col participant_id --out scores.csv\n"
            "  longitudinal score export.csv --instrument my_key.toml --item-map map.csv "
            "--missing-code -99 --exclude-flagged --out scores.csv --reliability alpha.csv\n"
            "\n"
            "exit status: 0 on success, 2 when the input is not valid (every problem is "
            "listed; no output is written)."
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("raw", metavar="RAW", help="raw export (.csv, .xlsx, .sav)")
    parser.add_argument(
        "--instrument",
        dest="instruments",
        metavar="NAME|FILE.toml",
        action="extend",
        nargs="+",
        required=True,
        help="library instrument name (see `longitudinal instruments`) or a key TOML; repeatable",
    )
    parser.add_argument("--id-col", default="id", metavar="C", help="id column (default: id)")
    parser.add_argument("--wave-col", default=None, metavar="C", help="wave column of a long file")
    parser.add_argument(
        "--item-map", default=None, metavar="MAP.csv", help="CSV 'column,item' renaming columns"
    )
    parser.add_argument(
        "--missing-code",
        dest="missing_codes",
        action="extend",
        nargs="+",
        default=[],
        metavar="V",
        help="value meaning 'no answer', e.g. -99 (repeatable)",
    )
    parser.add_argument(
        "--format",
        choices=["csv", "xlsx", "qualtrics", "sav"],
        default=None,
        help="file format (default: from the extension; Qualtrics CSV is recognised)",
    )
    parser.add_argument(
        "--exclude-flagged",
        action="store_true",
        help="leave out Qualtrics previews, tests, spam and unfinished responses",
    )
    parser.add_argument(
        "--encoding",
        default="utf-8",
        help="CSV text encoding (default: utf-8; a byte-order mark selects UTF-8 or UTF-16)",
    )
    parser.add_argument(
        "--delimiter",
        default=None,
        help="CSV field delimiter (default: from the header line: comma, tab or semicolon)",
    )
    parser.add_argument(
        "--decimal",
        default=".",
        choices=[".", ","],
        help="decimal mark of numbers in a CSV file (default: .)",
    )
    parser.add_argument(
        "--sheet", default=None, metavar="NAME", help="worksheet of an Excel workbook to read"
    )
    parser.add_argument(
        "--recode",
        type=_recode_spec,
        default=None,
        metavar="A-B:C-D",
        help="shift every item answer from the coding A-B to C-D before checking, e.g. 1-6:0-5 "
        "for Qualtrics' default 1-6 on a 0-5 scale",
    )
    parser.add_argument(
        "--prorate",
        action="store_true",
        help="sum scales: scale a respondent's sum of the answered items up to all items",
    )
    parser.add_argument(
        "--min-valid",
        type=_fraction_or_count,
        default=None,
        metavar="P|K",
        help="items a respondent must answer for a scale to be scored: a fraction such as "
        "0.75 or a count such as 3 (default: 0.8)",
    )
    parser.add_argument("--out", required=True, metavar="SCORES.csv", help="scores to write")
    parser.add_argument(
        "--reliability", default=None, metavar="REL.csv", help="reliability table to write"
    )
    parser.add_argument(
        "--exclusions",
        default=None,
        metavar="EXCL.csv",
        help="log of the rows left out (file, row, rule, reason); written even when empty",
    )
    return parser


def _recode_spec(text: str) -> tuple[float, float, float, float]:
    """Parse ``--recode A-B:C-D`` (two ranges of the same width)."""
    match = re.fullmatch(r"\s*(-?\d+)-(-?\d+):(-?\d+)-(-?\d+)\s*", text)
    if not match:
        raise argparse.ArgumentTypeError(f"expected two ranges such as 1-6:0-5; got {text!r}")
    a, b, c, d = (float(g) for g in match.groups())
    if b - a != d - c or b <= a:
        raise argparse.ArgumentTypeError(
            f"the two ranges of --recode must have the same width, e.g. 1-6:0-5; got {text!r}"
        )
    return a, b, c, d


def _recoded(responses: Any, items: list[str], spec: tuple[float, float, float, float]) -> Any:
    """Shift item answers from ``A-B`` to ``C-D``; answers outside ``A-B`` are refused."""
    from dataclasses import replace

    a, b, c, _ = spec
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
                    "reason": f"value outside the --recode range {a:g}-{b:g}",
                }
            )
        text = data[item].to_numpy(dtype=object)
        shifted = np.where(np.isfinite(numbers), numbers - a + c, np.nan)
        keep_text = ~np.isfinite(numbers) & pd.notna(data[item]).to_numpy()
        data[item] = np.where(keep_text, text, shifted) if keep_text.any() else shifted
    if problems:
        raise InputValidationError(
            pd.DataFrame(problems), f"cannot recode {responses.source} with --recode"
        )
    return replace(responses, data=data)


def _score(args: argparse.Namespace) -> int:
    from surveys.instruments import load_instrument
    from surveys.readers import read_responses
    from surveys.validation import validate_responses

    out = Path(args.out)
    rel_out = Path(args.reliability) if args.reliability else None
    excl_out = Path(args.exclusions) if args.exclusions else None
    for option, path in (("--out", out), ("--reliability", rel_out), ("--exclusions", excl_out)):
        if path is not None and path.is_dir():
            raise InvalidParameterError(
                f"cannot write {option} {path}: it is a folder; name a file, e.g. "
                f"{path / (option.lstrip('-') + '.csv')}"
            )
    _check_outputs({"--out": out, "--reliability": rel_out, "--exclusions": excl_out})

    responses = read_responses(
        args.raw,
        format=args.format,
        id_col=args.id_col,
        wave_col=args.wave_col,
        item_map=args.item_map,
        missing_codes=args.missing_codes,
        flagged="exclude" if args.exclude_flagged else "raise",
        encoding=args.encoding,
        delimiter=args.delimiter,
        decimal=args.decimal,
        sheet=args.sheet,
    )
    if args.recode is not None:
        items = []
        for spec in args.instruments:
            try:
                items += list(load_instrument(spec).items)
            except SurveysError:  # listed by the validation below
                continue
        responses = _recoded(responses, items, args.recode)
    inputs = [Path(args.raw), *(Path(i) for i in args.instruments if i.endswith(".toml"))]
    inputs += [Path(args.item_map)] if args.item_map else []
    for option, path in (("--out", out), ("--reliability", rel_out), ("--exclusions", excl_out)):
        if path is not None:
            refuse_overlap(path, inputs, option=option, func="longitudinal score")
    # Validation resolves the instrument names too, so an unknown name is listed together
    # with the data problems; after it passes every name is known.
    validate_responses(responses, args.instruments, id_col=args.id_col, wave_col=args.wave_col)
    instruments = [load_instrument(spec) for spec in args.instruments]

    from surveys.scoring import score

    options: dict[str, Any] = {
        "id_col": args.id_col,
        "wave_col": args.wave_col,
        "row_numbers": responses.row_numbers,
        "source_file": responses.source,
    }
    if args.min_valid is not None:
        options["min_valid"] = args.min_valid
    if args.prorate:
        options["prorate"] = True
    results = [score(responses.data, instrument, **options) for instrument in instruments]
    scores = pd.concat([r.scores for r in results], ignore_index=True)
    outputs: dict[Path, Callable[[Path], None]] = {out: _scores_writer(scores)}
    if rel_out is not None:
        reliability = pd.concat([r.reliability for r in results], ignore_index=True)
        wave = [c for c in ("wave", args.wave_col) if c and c in reliability.columns][:1]
        columns = ["instrument", "scale", *wave, "n", "alpha", "alpha_ci_low", "alpha_ci_high"]
        columns.append("omega_total")
        outputs[rel_out] = _csv_writer(reliability.loc[:, columns])
    if excl_out is not None:
        outputs[excl_out] = _csv_writer(responses.excluded)
    _write_atomically(outputs)

    if len(responses.excluded):
        print(
            f"note: left out {len(responses.excluded)} flagged row(s) of {responses.source}:",
            file=sys.stderr,
        )
        for rec in responses.excluded.itertuples(index=False):
            print(f"  row {rec.row}: {rec.reason}", file=sys.stderr)
    unscored = int(scores["score"].isna().sum()) if "score" in scores.columns else 0
    names = ", ".join(i.name for i in instruments)
    print(
        f"scored {len(responses.data)} response row(s) on {names}: {len(scores)} scale scores"
        + (f" ({unscored} not computed: too few items answered)" if unscored else "")
        + f" -> {out}"
        + (f"; reliability -> {rel_out}" if rel_out is not None else "")
    )
    return 0


# --------------------------------------------------------------------------- instruments


def _instruments_parser(subparsers: Any) -> argparse.ArgumentParser:
    return subparsers.add_parser(
        "instruments",
        help="list the instrument library",
        description=(
            "List the instruments the library can score: name (use it with --instrument), "
            "number of items, scoring rule, response range and verification grade "
            "(V2 verified in two sources, V1 one source, S secondary, U unverified)."
        ),
        epilog="example:\n  longitudinal instruments",
        formatter_class=_Formatter,
    )


def _instruments(args: argparse.Namespace) -> int:
    from surveys.instruments import list_instruments

    library = list_instruments()

    def bound(value: float) -> str:
        return str(int(value)) if float(value).is_integer() else str(value)

    table = pd.DataFrame(
        {
            "name": library["name"],
            "items": library["n_items"],
            "scoring": library["scoring"],
            "range": [
                f"{bound(lo)}-{bound(hi)}"
                for lo, hi in zip(library["response_min"], library["response_max"], strict=True)
            ],
            "grade": library["grade"],
        }
    )
    print(table.to_string(index=False))
    return 0


def _simulate_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "simulate",
        help="write a synthetic study directory with known truth",
        description=(
            "Write a complete synthetic study directory calibrated to EmpathicStories++ "
            "(41 participants, 6-12 sessions each over a month, three empathy ratings per "
            "session, questionnaires at pre, mid and post, one wave exported in Qualtrics "
            "format) and the generating parameters in truth.json."
        ),
        epilog="example:\n  longitudinal simulate --out my-study --seed 7 --participants 60",
        formatter_class=_Formatter,
    )
    parser.add_argument("--out", required=True, type=Path, help="study directory to write")
    parser.add_argument("--seed", type=int, default=2024, help="random seed (default 2024)")
    parser.add_argument(
        "--participants", type=int, default=41, help="number of participants (default 41)"
    )
    parser.add_argument(
        "--no-defects",
        action="store_true",
        help="leave out the realistic defects (missed wave, skipped item, preview row, ...)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace the study files in a non-empty --out"
    )
    return parser


def _simulate(args: argparse.Namespace) -> int:
    from longitudinal.simulate import simulate_study

    path = simulate_study(
        args.out,
        seed=args.seed,
        n_participants=args.participants,
        defects=not args.no_defects,
        overwrite=args.overwrite,
    )
    print(f"wrote a synthetic study to {path} (generating parameters in {path / 'truth.json'})")
    return 0


def _retest_value(text: str) -> tuple[str, float]:
    """Parse ``--retest SCALE=R`` into a (scale, r) pair."""
    name, sep, value = text.partition("=")
    try:
        r = float(value)
    except ValueError:
        r = float("nan")
    if not sep or not name or not 0.0 < r < 1.0:
        raise argparse.ArgumentTypeError(
            f"expected SCALE=R with R a test-retest correlation in (0, 1), e.g. "
            f"ubc_sscs10_total=0.8; got {text!r}"
        )
    return name, r


def _report_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "report",
        help="write the pre/mid/post change report of a study directory",
        description=(
            "Load and validate a study directory, score every instrument, analyse the change "
            "of each state scale from pre to post, and write report.html (figures embedded), "
            "tables/*.csv, figures/*.png and *.svg, the exclusion log and provenance.json. "
            "Participant ids are replaced by pseudonyms unless --no-pseudonymize is given; "
            "their order comes from a secret key kept beside (never inside) the report folder "
            "(--pseudonym-key, default OUT.pseudonym-key, created on the first run)."
        ),
        epilog=(
            "example:\n  longitudinal report my-study --out my-study-report\n\n"
            "a study directory written by hand (my-study/study.toml):\n"
            '  [study]\n  name = "pilot"\n  waves = ["baseline", "followup"]\n'
            '  [ratings]\n  file = "ratings.csv"\n  scale_min = 1\n  scale_max = 5\n'
            '  [[surveys]]\n  file = "surveys/all.csv"\n  format = "csv"\n'
            '  wave_col = "wave"\n  date_col = "completed_at"\n'
            '  instruments = ["tas4", "who5"]\n'
            '  [roles]\n  traits = ["tas4"]\n  states = ["who5"]\n'
            '  session_features = ["duration_min", "gaze_on_robot"]\n'
            "  [columns]   # only where your files use other names\n"
            '  person = "pid"\n  session = "visit"\n  story = "item"\n'
            '  position = "slot"\n  rating = "score"\n  timestamp = "start_time"\n'
            "with participants.csv, sessions.csv (pid, visit, start_time, features) and\n"
            "ratings.csv (pid, visit, item, slot, score) beside it; see docs/architecture.md."
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("study_dir", type=Path, help="study directory (with study.toml)")
    parser.add_argument("--out", required=True, type=Path, help="report folder to write")
    parser.add_argument(
        "--pseudonymize",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="replace participant ids by pseudonyms (default: on)",
    )
    parser.add_argument(
        "--pseudonym-key",
        type=Path,
        metavar="FILE",
        help="secret key of the pseudonyms (default: OUT.pseudonym-key beside the report; "
        "created on the first run, reused afterwards; keep it private)",
    )
    parser.add_argument(
        "--retest",
        type=_retest_value,
        action="append",
        metavar="SCALE=R",
        help="test-retest r for a scale's reliable change index (default: alpha at pre)",
    )
    parser.add_argument("--ci-level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument(
        "--bayes",
        action=argparse.BooleanOptionalAction,
        default=False,
        help=(
            "also fit the Bayesian ordinal empathy model, a third column beside the linear "
            "and the cumulative link mixed models (default: off; about a minute more)"
        ),
    )
    parser.add_argument("--draws", type=int, help="Bayesian model: draws per chain (500)")
    parser.add_argument("--tune", type=int, help="Bayesian model: tuning steps per chain (500)")
    parser.add_argument("--chains", type=int, help="Bayesian model: chains (2)")
    parser.add_argument(
        "--sampler",
        choices=["nutpie", "pymc", "numpyro"],
        help="Bayesian model: NUTS implementation (default nutpie when installed, else pymc)",
    )
    parser.add_argument(
        "--target-accept", type=float, help="Bayesian model: NUTS target acceptance (0.9)"
    )
    parser.add_argument("--seed", type=int, default=None, help="seed recorded in provenance")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing report")
    return parser


def _report(args: argparse.Namespace) -> int:
    from longitudinal.report import build_report
    from longitudinal.report.pseudonyms import default_key_path

    key = args.pseudonym_key or default_key_path(args.out)
    had_key = key.exists()
    path = build_report(
        args.study_dir,
        args.out,
        seed=args.seed,
        pseudonymize=args.pseudonymize,
        retest=dict(args.retest) if args.retest else None,
        ci_level=args.ci_level,
        bayes=args.bayes,
        overwrite=args.overwrite,
        pseudonym_key=key,
        sampling={
            "draws": args.draws,
            "tune": args.tune,
            "chains": args.chains,
            "sampler": args.sampler,
            "target_accept": args.target_accept,
        },
    )
    print(f"wrote the change report to {path / 'report.html'}")
    provenance = json.loads((path / "provenance.json").read_text(encoding="utf-8"))
    missing = provenance.get("sections_not_computed", [])
    if missing:
        print(
            f"{len(missing)} section(s) not computed, each with the reason in the report: "
            + "; ".join(missing)
        )
    if args.pseudonymize and not had_key:
        print(
            f"created the pseudonym key {key}: keep it private and outside the report; reruns "
            "with it give the same pseudonyms"
        )
    return 0


def _demo_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "demo",
        help="simulate the embedded study and write its change report",
        description=(
            "Simulate the embedded synthetic study (41 participants, a month of sessions) "
            "into OUT/study and write its change report into OUT."
        ),
        epilog="example:\n  longitudinal demo --out demo-report --seed 2024",
        formatter_class=_Formatter,
    )
    parser.add_argument("--out", required=True, type=Path, help="folder to write")
    parser.add_argument("--seed", type=int, default=2024, help="random seed (default 2024)")
    parser.add_argument(
        "--bayes",
        action="store_true",
        help="also fit the Bayesian ordinal empathy model (about a minute more)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing demo")
    return parser


def _demo(args: argparse.Namespace) -> int:
    from longitudinal.report import run_demo

    path = run_demo(args.out, seed=args.seed, bayes=args.bayes, overwrite=args.overwrite)
    print(f"wrote the change report to {path / 'report.html'}")
    print(f"the simulated study and its generating parameters: {path / 'study'}")
    return 0


def _fit_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "fit",
        help="fit a mixed-effects model (linear, ordinal or Bayesian) written in lme4 syntax",
        description=(
            "Fit a mixed model and write its results as JSON. Engines: lmm (linear mixed model, "
            "REML or --ml, Satterthwaite df), clmm (cumulative link mixed model for ordered "
            "ratings, Laplace or --n-agq quadrature, as ordinal::clmm) and bayes (PyMC, "
            "--family ordinal or gaussian). Every engine writes the keys engine, family, "
            "formula, n_obs, groups, converged, fixed (term, estimate, se, df, statistic, "
            "p_value, ci_low, ci_high; bayes adds r_hat, ess_bulk), random (group, term, sd "
            "and correlations), thresholds, loglik, divergences, r_hat_max, ess_bulk_min, "
            "seconds (null where a key does not apply), then its own; a summary is printed."
        ),
        epilog=(
            "examples:\n  longitudinal fit sleepstudy.csv "
            "--formula 'Reaction ~ Days + (Days | Subject)' --out fit.json\n"
            "  longitudinal fit ratings.csv --engine clmm "
            "--formula 'empathy ~ trait + week + (1 + week | pid) + (1 | story)' --out fit.json\n"
            "  longitudinal fit ratings.csv --engine bayes --family ordinal --draws 1000 "
            "--seed 1 --formula 'empathy ~ trait + (1 | pid)' --out fit.json"
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("data", type=Path, help="CSV file with one row per observation")
    parser.add_argument("--formula", required=True, help="lme4 formula, e.g. 'y ~ x + (1 | g)'")
    parser.add_argument(
        "--engine", choices=["lmm", "clmm", "bayes"], default="lmm", help="model engine (lmm)"
    )
    parser.add_argument(
        "--family",
        choices=["gaussian", "ordinal"],
        help="response family (lmm: gaussian; clmm: ordinal; bayes: ordinal or gaussian)",
    )
    parser.add_argument("--link", choices=["logit", "probit"], help="ordinal link (logit)")
    parser.add_argument("--ml", action="store_true", help="lmm: maximum likelihood, not REML")
    parser.add_argument(
        "--threshold", choices=["flexible", "equidistant"], help="clmm: thresholds (flexible)"
    )
    parser.add_argument(
        "--n-agq", type=int, help="clmm: quadrature nodes for one (1 | g) term (1 = Laplace)"
    )
    parser.add_argument("--draws", type=int, help="bayes: draws per chain (1000)")
    parser.add_argument("--tune", type=int, help="bayes: tuning steps per chain (1000)")
    parser.add_argument("--chains", type=int, help="bayes: chains (2)")
    parser.add_argument(
        "--sampler", choices=["pymc", "nutpie", "numpyro"], help="bayes: NUTS implementation"
    )
    parser.add_argument("--seed", type=int, help="bayes: random seed")
    parser.add_argument("--ci-level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument("--out", required=True, type=Path, help="JSON file to write")
    return parser


_ENGINE_OPTIONS = {
    "lmm": {"ml"},
    "clmm": {"link", "threshold", "n_agq"},
    "bayes": {"link", "draws", "tune", "chains", "sampler", "seed"},
}
_ALL_ENGINE_OPTIONS = set().union(*_ENGINE_OPTIONS.values())


def _fit_model(args: argparse.Namespace, data: pd.DataFrame) -> Any:
    """Check that every option given belongs to the engine, then fit."""
    engine = args.engine
    given = {name for name in _ALL_ENGINE_OPTIONS if getattr(args, name) not in (None, False)}
    stray = sorted(given - _ENGINE_OPTIONS[engine])
    if stray:
        flags = ", ".join("--" + s.replace("_", "-") for s in stray)
        raise InvalidParameterError(
            f"{flags} do(es) not apply to --engine {engine}; its options are "
            + (", ".join("--" + s.replace("_", "-") for s in sorted(_ENGINE_OPTIONS[engine])))
        )
    family = args.family or ("gaussian" if engine == "lmm" else "ordinal")
    if engine == "lmm" and family != "gaussian":
        raise InvalidParameterError(
            "--engine lmm fits a gaussian model; for ordinal ratings use --engine clmm "
            "(or --engine bayes --family ordinal)"
        )
    if engine == "clmm" and family != "ordinal":
        raise InvalidParameterError(
            "--engine clmm fits ordinal models; for a gaussian one use --engine lmm"
        )
    if engine == "bayes" and family == "gaussian" and args.link is not None:
        raise InvalidParameterError("--link applies to --family ordinal only")
    if engine == "lmm":
        from models.lmm import LinearMixedModel

        return LinearMixedModel(args.formula, reml=not args.ml, ci_level=args.ci_level).fit(data)
    if engine == "clmm":
        from models.ordinal import OrdinalMixedModel

        return OrdinalMixedModel(
            args.formula,
            link=args.link or "logit",
            threshold=args.threshold or "flexible",
            n_agq=1 if args.n_agq is None else args.n_agq,
            ci_level=args.ci_level,
        ).fit(data)
    from models.bayes import BayesianMixedModel

    options = {
        k: getattr(args, k)
        for k in ("draws", "tune", "chains", "sampler", "seed")
        if getattr(args, k) is not None
    }
    return BayesianMixedModel(
        args.formula,
        family=family,
        link=args.link or "logit",
        ci_level=args.ci_level,
        progressbar=False,
        **options,
    ).fit(data)


def _read_model_data(path: Path) -> pd.DataFrame:
    """Read a model's data table; an unreadable or empty file is bad input."""
    try:
        data = pd.read_csv(path)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InvalidParameterError(f"cannot read {path} as a CSV table: {err}") from err
    if data.empty:
        raise InvalidParameterError(f"{path} has no data rows")
    return data


def _fit(args: argparse.Namespace) -> int:

    from longitudinal.fit_record import fit_record, summary_text

    _check_outputs({"--out": args.out})
    refuse_overlap(Path(args.out), [Path(args.data)], option="--out", func="longitudinal fit")
    data = _read_model_data(args.data)
    model = _fit_model(args, data)
    result = fit_record(model)

    write = functools.partial(write_json, result, sort_keys=False, allow_nan=False)
    _write_atomically({args.out: write})
    print(summary_text(model, result))
    print()
    print(f"wrote {args.out} ({result['n_obs']} observations, converged: {result['converged']})")
    return 0


def _evaluate_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "evaluate",
        help="benchmark empathy prediction for unseen participants (yours beside ours)",
        description=(
            "The prediction task of EmpathicStories++: predict each rating of participants "
            "held out of training (participant-grouped 70/20/10 splits over several seeds, and "
            "grouped K-fold). Writes metrics.csv (model, split, seed, r, rho, acc, f1, mse; "
            "x100 as in the paper), a summary table and a figure. Write it to "
            "STUDY_DIR/evaluate for `longitudinal report` to link it.\n\n"
            "Uncertainty: a seed's 70/20/10 test set holds few people (4 of 41), so its mean "
            "± SD over seeds is the spread of the splits, not an interval, and the table says "
            "that a test set of fewer than 10 people supports no inference. For the grouped "
            "K-fold (every participant predicted once by a model that did not see them), "
            "metrics_ci.csv gives each model's metrics a participant-cluster bootstrap "
            "interval (--n-boot replicates, --bootstrap-seed) and comparisons.csv the paired "
            "differences between models with their intervals; a difference is called better "
            "or worse only when its interval excludes 0.\n\n"
            "Your own model: train it on the splits of `longitudinal splits` (same --seeds "
            "and --kfold), then pass its predictions with --predictions. A predictions file "
            "has the columns model, scheme (holdout_70_20_10 or kfold_K), seed, the "
            "participant, session and position columns of the study's ratings file (under "
            "its own names), and prediction (on the rating scale). Each model is scored by "
            "the same code, threshold and ratings as the package's models and appears beside "
            "them in every output. For each scheme x seed a model appears in, every test "
            "rating must be predicted exactly once (validation ratings of the holdout are "
            "optional, all or none). Missing, repeated, unknown or training-participant "
            "ratings, predictions that are not finite or off the rating scale, unknown "
            "schemes or seeds, missing columns and a model named like one of ours are "
            "refused with exit code 2 before anything is fitted, all in one report naming "
            "file, row (the header is row 1) and rating; nothing is written."
        ),
        epilog=(
            "examples:\n"
            "  longitudinal evaluate my-study --out my-study/evaluate --seeds 5\n"
            "  longitudinal splits my-study --seeds 5 --kfold 5 --out splits.csv\n"
            "  (train your model on the train participants of each scheme x seed, predict the "
            "test ratings)\n"
            "  longitudinal evaluate my-study --seeds 5 --kfold 5 --predictions pred.csv "
            "--out my-study/evaluate"
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("study_dir", type=Path, help="study directory (with study.toml)")
    parser.add_argument("--out", required=True, type=Path, help="folder to write")
    parser.add_argument("--seeds", type=int, default=5, help="number of split seeds (5)")
    parser.add_argument(
        "--kfold",
        type=int,
        default=5,
        metavar="K",
        help="folds of the grouped K-fold (5; 0: holdout only)",
    )
    parser.add_argument(
        "--predictions",
        type=Path,
        action="append",
        metavar="PRED.csv",
        help="your model's predictions (repeat for more files)",
    )
    parser.add_argument(
        "--n-boot",
        type=int,
        default=2000,
        metavar="B",
        help="participant-cluster bootstrap replicates for the K-fold intervals (2000; 0: none)",
    )
    parser.add_argument(
        "--bootstrap-seed", type=int, default=0, metavar="N", help="seed of the bootstrap draws (0)"
    )
    parser.add_argument(
        "--bayes",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="also include the Bayesian ordinal model (default: off; minutes more)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    return parser


def _check_seeds_kfold(args: argparse.Namespace) -> None:
    if args.seeds < 1:
        raise InvalidParameterError(f"--seeds must be a positive number; got {args.seeds}")
    if args.kfold < 0 or args.kfold == 1:
        raise InvalidParameterError(
            f"--kfold must be 0 (no K-fold) or a number of folds >= 2; got {args.kfold}"
        )


def _evaluate(args: argparse.Namespace) -> int:
    from longitudinal.predict import run_evaluation

    _check_seeds_kfold(args)
    if args.n_boot < 0:
        raise InvalidParameterError(f"--n-boot must be 0 or more; got {args.n_boot}")
    if args.bootstrap_seed < 0:
        raise InvalidParameterError(
            f"--bootstrap-seed must be a non-negative number; got {args.bootstrap_seed}"
        )
    path = run_evaluation(
        args.study_dir,
        args.out,
        seeds=args.seeds,
        k=args.kfold,
        include_bayes=args.bayes,
        n_boot=args.n_boot,
        bootstrap_seed=args.bootstrap_seed,
        predictions=args.predictions,
        overwrite=args.overwrite,
    )
    files = ", ".join(sorted(f.name for f in Path(path).iterdir() if f.is_file()))
    print(f"wrote the prediction benchmark to {path} ({files})")
    return 0


# --------------------------------------------------------------------------- splits


def _splits_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "splits",
        help="export the participant splits of `evaluate`, to train a model elsewhere",
        description=(
            "Write the participant-grouped splits that `longitudinal evaluate` uses with the "
            "same --seeds and --kfold: one row per scheme x seed x participant, with the "
            "columns scheme (holdout_70_20_10, or kfold_K), seed, the study's participant "
            "column (under its own name) and split (train, valid or test for the holdout; "
            "the participant's test fold, 0 to K-1, for the K-fold). The same seed always "
            "gives the same splits. Train on the train participants, predict the ratings of "
            "the test participants (and, if you like, the valid ones) and score them with "
            "`longitudinal evaluate --predictions`. The participants split are those with a "
            "rating the benchmark can use (every predictor of its models present). The file "
            "names participants: keep it with the study."
        ),
        epilog=(
            "example:\n"
            "  longitudinal splits my-study --seeds 5 --kfold 5 --out splits.csv\n"
            "  longitudinal evaluate my-study --seeds 5 --kfold 5 --predictions pred.csv "
            "--out my-study/evaluate"
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("study_dir", type=Path, help="study directory (with study.toml)")
    parser.add_argument(
        "--seeds", required=True, type=int, help="number of split seeds (evaluate's default: 5)"
    )
    parser.add_argument(
        "--kfold",
        type=int,
        default=5,
        metavar="K",
        help="folds of the grouped K-fold (5; 0: holdout only)",
    )
    parser.add_argument(
        "--out", required=True, type=Path, metavar="SPLITS.csv", help="file to write"
    )
    return parser


def _splits(args: argparse.Namespace) -> int:
    from longitudinal.splits import participant_splits
    from longitudinal.study import load_study, study_inputs

    _check_seeds_kfold(args)
    out = Path(args.out)
    _check_outputs({"--out": out})
    refuse_overlap(out, study_inputs(args.study_dir), option="--out", func="longitudinal splits")
    study = load_study(args.study_dir)
    table = participant_splits(study, seeds=args.seeds, k=args.kfold)
    _write_atomically({out: _csv_writer(table)})
    id_col = study.config.id_col
    people = table[id_col].nunique()
    schemes = ", ".join(dict.fromkeys(table["scheme"]))
    seeds = "seed 0" if args.seeds == 1 else f"seeds 0-{args.seeds - 1}"
    print(f"wrote {len(table)} rows ({schemes}; {seeds}; {people} participants) -> {out}")
    return 0


# --------------------------------------------------------------------------- power


def _effect_value(text: str) -> tuple[str, float]:
    """Parse ``--effect TERM=VALUE``."""
    name, sep, value = text.rpartition("=")
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not sep or not name.strip() or not np.isfinite(number):
        raise argparse.ArgumentTypeError(
            f"expected TERM=VALUE with a number, e.g. bfi44_agreeableness_z=0.2; got {text!r}"
        )
    return name.strip(), number


def _participant_list(text: str) -> list[int]:
    """Parse ``--participants 20,40,60``."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or any(v < 2 for v in values) or len(set(values)) != len(values):
        raise argparse.ArgumentTypeError(
            f"expected distinct whole numbers >= 2 separated by commas, e.g. 20,40,60; got {text!r}"
        )
    return values


def _power_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "power",
        help="simulation-based power for a future study (from a pilot or a design file)",
        description=(
            "Estimate by simulation the power to detect a fixed effect of a given size for "
            "several numbers of participants. With --pilot the model is the report's empathy "
            "mixed model of that study (TERM as in the term column of the report's "
            "tables/empathy_effects.csv), its participants (and sessions, with --sessions) "
            "resampled to each size; with --design a study is generated from a design TOML "
            "(formula, sessions, stories, predictors, fixed effects, variance components, "
            "residual SD or, for an ordinal design, thresholds). --engine clmm uses the "
            "cumulative link (ordinal) mixed model of the ratings: the effect is then a log "
            "odds ratio. Writes power.csv (n_participants, n_sessions, n_obs, n_sims, "
            "n_failed, n_singular, n_rejected, power, ci_low, ci_high: exact binomial "
            "interval), failures.csv (every failed or singular simulation with its reason), "
            "power.png and power.svg, and provenance.json. The same --seed gives the same "
            "result whatever --scheduler."
        ),
        epilog=(
            "examples:\n"
            "  longitudinal power --pilot demo-report/study --effect "
            "bfi44_agreeableness_z=0.2 --participants 20,40,60,80 --seed 1 --out power\n"
            "  longitudinal power --design design.toml --effect trait=0.2 --participants "
            "40,80 --sessions 6-12 --sims 2000 --scheduler local:4 --out power\n"
            "  longitudinal power --pilot demo-report/study --engine clmm --effect "
            "bfi44_agreeableness_z=0.4 --participants 40,80 --seed 1 --out power-ordinal\n"
            "\n"
            "--scheduler: processes:N (N local processes), local:N (a Dask LocalCluster on "
            "127.0.0.1; needs pip install 'empathic-longitudinal[dask]') or tcp://host:8786 "
            "(an existing Dask cluster); default: this process."
        ),
        formatter_class=_Formatter,
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--pilot", type=Path, metavar="STUDY_DIR", help="pilot study directory")
    source.add_argument("--design", type=Path, metavar="DESIGN.toml", help="design file")
    parser.add_argument(
        "--effect",
        required=True,
        type=_effect_value,
        metavar="TERM=VALUE",
        help="the fixed effect to detect and its true value",
    )
    parser.add_argument(
        "--participants",
        required=True,
        type=_participant_list,
        metavar="LIST",
        help="participants at each grid point, e.g. 20,40,60,80",
    )
    parser.add_argument(
        "--sessions",
        metavar="N|A-B",
        help="sessions per participant, e.g. 8 or 6-12 (default: the pilot's or the design's)",
    )
    parser.add_argument("--sims", type=int, default=1000, help="simulations per grid point (1000)")
    parser.add_argument("--alpha", type=float, default=0.05, help="level of the test (0.05)")
    parser.add_argument(
        "--engine",
        choices=["lmm", "clmm"],
        help=(
            "linear mixed model, or cumulative link (ordinal) mixed model of the ratings "
            "(default: lmm for --pilot, the design file's engine for --design)"
        ),
    )
    parser.add_argument(
        "--test",
        choices=["satterthwaite", "lrt", "wald"],
        help=(
            "t test with Satterthwaite df (lmm default), likelihood-ratio test, or Wald z test "
            "(clmm default; clmm has no satterthwaite)"
        ),
    )
    parser.add_argument(
        "--scheduler", metavar="ADDR|local:N|processes:N", help="where the simulations run"
    )
    parser.add_argument("--seed", type=int, help="random seed (default: fresh, recorded)")
    parser.add_argument("--out", required=True, type=Path, help="folder to write")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier power run")
    return parser


def _power(args: argparse.Namespace) -> int:
    from longitudinal.power import effect_text, run_power

    if args.sims < 1:
        raise InvalidParameterError(f"--sims must be a positive number; got {args.sims}")
    if not 0 < args.alpha < 1:
        raise InvalidParameterError(f"--alpha must be in (0, 1); got {args.alpha}")
    if args.seed is not None and args.seed < 0:
        raise InvalidParameterError(f"--seed must be a non-negative number; got {args.seed}")
    term, value = args.effect
    path, result = run_power(
        args.out,
        effect={term: value},
        n_participants=args.participants,
        pilot=args.pilot,
        design=args.design,
        n_sessions=args.sessions,
        n_sims=args.sims,
        alpha=args.alpha,
        test=args.test,
        engine=args.engine,
        scheduler=args.scheduler,
        seed=args.seed,
        progress=True,
        overwrite=args.overwrite,
    )
    table = result.table
    shown = table[["n_participants", "n_sessions", "n_sims", "n_failed", "power"]].copy()
    shown["95% interval"] = [
        f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(table["ci_low"], table["ci_high"], strict=True)
    ]
    shown["power"] = shown["power"].map(lambda v: f"{v:.3f}")
    meta = result.meta
    seed = meta["seed"] if meta["seed"] is not None else meta["entropy"]
    model = "ordinal mixed model" if meta["engine"] == "clmm" else "linear mixed model"
    print(
        f"power to detect {meta['term']} = {effect_text(meta)} ({model}, {meta['test']} test, "
        f"alpha {meta['alpha']:g}, seed {seed})"
    )
    print(shown.to_string(index=False))
    enough = table[table["power"] >= 0.8]
    if len(enough):
        print(f"80% power reached from {int(enough['n_participants'].min())} participants")
    else:
        print("80% power is not reached in this grid")
    print(
        f"wrote {path} (power.csv, failures.csv, power.png, power.svg, provenance.json; "
        f"{meta['simulations_per_second']:.0f} simulations/s)"
    )
    return 0


# --------------------------------------------------------------------------- dispatch

#: Subcommands, in the order ``--help`` lists them: name -> (register parser, run).
COMMANDS: dict[str, tuple[_Register, _Handler]] = {
    "score": (_score_parser, _score),
    "instruments": (_instruments_parser, _instruments),
    "simulate": (_simulate_parser, _simulate),
    "report": (_report_parser, _report),
    "demo": (_demo_parser, _demo),
    "fit": (_fit_parser, _fit),
    "evaluate": (_evaluate_parser, _evaluate),
    "splits": (_splits_parser, _splits),
    "power": (_power_parser, _power),
}


def build_parser() -> argparse.ArgumentParser:
    """Build the ``longitudinal`` argument parser with every subcommand in :data:`COMMANDS`.

    Returns
    -------
    argparse.ArgumentParser
        The top-level parser; the chosen subcommand is stored in ``args.command``.
    """
    from surveys import __version__

    parser = argparse.ArgumentParser(
        prog="longitudinal",
        description="Statistics for longitudinal empathy studies.",
        epilog="example:\n  longitudinal score surveys/pre.csv --instrument tas4 --out scores.csv",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register, _ in COMMANDS.values():
        register(subparsers)
    return parser


EXIT_INTERRUPTED = 130


def _on_sigterm() -> Any:
    """Treat SIGTERM like Ctrl-C while a command runs, so that every cleanup runs."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, interrupt)


def _restore_sigterm(previous: Any) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``longitudinal`` command line.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns
    -------
    int
        Exit code: 0 on success, 2 on bad arguments or bad input.

    Notes
    -----
    Errors from the packages' trees (:class:`surveys.SurveysError`,
    :class:`longitudinal.LongitudinalError`, ``models.ModelsError``), unreadable files
    (``OSError``) and missing optional packages (``ImportError``) end the command with one
    message on stderr and exit code 2; data problems list every failure. Warnings raised
    while a command runs are printed as ``warning: ...`` lines.

    Examples
    --------
    >>> from longitudinal.cli import main
    >>> main(["score", "no-such-file.csv", "--instrument", "tas4", "--out", "s.csv"])
    2
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version and usage errors
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else EXIT_INPUT)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_INPUT
    _, handler = COMMANDS[args.command]
    caught: list[warnings.WarningMessage] = []
    previous = _on_sigterm()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = handler(args)
    except InputValidationError as err:
        _print_warnings(caught)
        print(_format_failures(err), file=sys.stderr)
        return EXIT_INPUT
    except OSError as err:
        _print_warnings(caught)
        print(_format_os_error(err), file=sys.stderr)
        return EXIT_INPUT
    except (SurveysError, LongitudinalError, ModelsError, ImportError) as err:
        if isinstance(err, ModuleNotFoundError):  # a broken installation, not bad input
            raise
        _print_warnings(caught)
        print(f"error: {err}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        # Ctrl-C or SIGTERM: the staging folders were removed on the way out, nothing written
        print("interrupted; nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        _restore_sigterm(previous)
    written = args.command in ("report", "demo") and code == 0
    _print_warnings(caught, args.out / NOTES_FILE if written else None)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
