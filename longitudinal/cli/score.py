"""``longitudinal score`` and ``longitudinal instruments``: raw exports to scale scores."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from longitudinal._errors import InvalidParameterError
from longitudinal.cli._common import (
    _check_outputs,
    _csv_writer,
    _Formatter,
    _scores_writer,
)


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
    export_arguments(
        parser, raw_help="raw export (.csv, .xlsx, .sav)", wave_help="wave column of a long file"
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


def _score(args: argparse.Namespace) -> int:
    from longitudinal._output import atomic_write_files, refuse_overlap
    from surveys.pipeline import score_export

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

    # every instrument given as a file is an input, whatever its name or extension
    inputs = export_inputs(args)
    for option, path in (("--out", out), ("--reliability", rel_out), ("--exclusions", excl_out)):
        if path is not None:
            refuse_overlap(path, inputs, option=option)
    export = checked_export(args)
    responses = export.responses
    options: dict[str, Any] = {}
    if args.min_valid is not None:
        options["min_valid"] = args.min_valid
    scored = score_export(export, prorate=args.prorate, **options)
    scores = scored.scores
    outputs: dict[Path, Callable[[Path], None]] = {out: _scores_writer(scores)}
    if rel_out is not None:
        reliability = scored.reliability
        wave = [c for c in ("wave", args.wave_col) if c and c in reliability.columns][:1]
        columns = ["instrument", "scale", *wave, "n", "alpha", "alpha_ci_low", "alpha_ci_high"]
        columns.append("omega_total")
        outputs[rel_out] = _csv_writer(reliability.loc[:, columns])
    if excl_out is not None:
        outputs[excl_out] = _csv_writer(responses.excluded)
    atomic_write_files(outputs)

    if len(responses.excluded):
        print(
            f"note: left out {len(responses.excluded)} flagged row(s) of {responses.source}:",
            file=sys.stderr,
        )
        for rec in responses.excluded.itertuples(index=False):
            print(f"  row {rec.row}: {rec.reason}", file=sys.stderr)
    unscored = int(scores["score"].isna().sum()) if "score" in scores.columns else 0
    names = ", ".join(i.name for i in export.instruments)
    print(
        f"scored {len(responses.data)} response row(s) on {names}: {len(scores)} scale scores"
        + (f" ({unscored} not computed: too few items answered)" if unscored else "")
        + f" -> {out}"
        + (f"; reliability -> {rel_out}" if rel_out is not None else "")
    )
    return 0


def export_arguments(
    parser: argparse.ArgumentParser, *, raw_help: str, wave_help: str, wave_required: bool = False
) -> None:
    """Add the arguments that name and read a raw export (``score`` and ``reliability``)."""
    parser.add_argument("raw", metavar="RAW", help=raw_help)
    parser.add_argument(
        "--instrument",
        dest="instruments",
        metavar="NAME|FILE.toml",
        action="extend",
        nargs="+",
        required=True,
        help="library instrument name (see `longitudinal instruments`) or a key TOML; repeatable",
    )
    parser.add_argument(
        "--id-col",
        default=None,
        metavar="C",
        help="participant column (default: participant_id, or id when the export has none)",
    )
    parser.add_argument("--wave-col", required=wave_required, metavar="C", help=wave_help)
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
        help="leave out Qualtrics previews, tests, spam and unfinished responses, each "
        "printed with its reason (a Qualtrics export, or any file with Qualtrics' Status or "
        "Finished column beside another of its metadata columns); without it they are refused",
    )
    parser.add_argument(
        "--encoding",
        default="utf-8",
        help=(
            "CSV text encoding (default: utf-8; a byte-order mark selects UTF-8 or UTF-16); a "
            "text encoding of files such as latin-1, cp1252, utf-16-le or shift_jis, not "
            "base64, idna, punycode or unicode_escape"
        ),
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


def export_inputs(args: argparse.Namespace) -> list[Path]:
    """Every input the export arguments name: the export, key files, the item map."""
    inputs = [Path(args.raw), *(Path(i) for i in args.instruments if _names_a_file(i))]
    return inputs + ([Path(args.item_map)] if args.item_map else [])


def checked_export(args: argparse.Namespace) -> Any:
    """Read and check the export the arguments of :func:`export_arguments` name."""
    from surveys.pipeline import check_export

    # An unknown instrument name is listed together with the data problems.
    return check_export(
        args.raw,
        args.instruments,
        id_col=args.id_col,
        wave_col=args.wave_col,
        recode=args.recode,
        format=args.format,
        item_map=args.item_map,
        missing_codes=args.missing_codes,
        flagged="exclude" if args.exclude_flagged else "raise",
        encoding=args.encoding,
        delimiter=args.delimiter,
        decimal=args.decimal,
        sheet=args.sheet,
    )


def _names_a_file(instrument: str) -> bool:
    """Whether an --instrument argument names a file (as load_instrument reads it), not a name."""
    return (
        os.path.lexists(instrument)
        or instrument.lower().endswith(".toml")
        or "/" in instrument
        or os.sep in instrument
    )


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
    import pandas as pd

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
