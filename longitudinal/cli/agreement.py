"""``longitudinal agreement``: agreement between raters of the same units, from a CSV file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from longitudinal._errors import InvalidParameterError
from longitudinal.cli._common import _check_outputs, _csv_writer, _Formatter
from models._limits import AGREEMENT_LIMIT_SECONDS, AGREEMENT_MAX_N_BOOT, AGREEMENT_MAX_PAIRS

if TYPE_CHECKING:
    import pandas as pd

#: The first data row of a CSV file is its line 2 (the header is line 1).
_FIRST_LINE = 2


def _agreement_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "agreement",
        help="agreement between raters: Krippendorff's alpha, Fleiss' kappa, Gwet's AC1/AC2",
        description=(
            "Read ratings in long form (one row per unit x rater: the unit rated, the rater, "
            "the value given) and write one row per coefficient: Krippendorff's alpha with a "
            "bootstrap interval over units (--n-boot resamples of whole units, --seed), "
            "Fleiss' kappa on the units rated by every rater, Gwet's AC1 (nominal) or AC2 "
            "(Gwet's ordinal, quadratic or ratio weights for ordinal, interval or ratio) and "
            "the percent agreement. Columns: term, level, estimate, se, ci_low, ci_high, "
            "n_units, n_raters, n_pairable, note.\n\n"
            "A row with an empty value is a unit the rater did not rate; units with fewer "
            "than two ratings cannot show agreement. Both are counted, left out and reported. "
            "Nominal values are compared as written (3 and 3.0 are two categories); ordinal "
            "values are numbers, or text listed in --levels in its order; interval and ratio "
            "values are numbers (ratio: 0 or more).\n\n"
            "Refused with exit code 2, every problem in one report naming the file, row (the "
            "header is row 1) and column, nothing written: a unit rated twice by the same "
            "rater, a value outside --levels, text in an interval or ratio column, a missing "
            "unit or rater id, an id or text value holding an invisible character (zero-width, "
            "direction or line separator characters such as U+200B, U+202E, U+2028), a "
            "missing column.\n\n"
            f"Limits, checked before any work: --n-boot at most {AGREEMENT_MAX_N_BOOT:,}; at "
            f"most {AGREEMENT_MAX_PAIRS:,} within-unit pairs of distinct values (each unit "
            "gives the square of its number of distinct values); work estimated at more than "
            f"{AGREEMENT_LIMIT_SECONDS / 60:.0f} min (resamples x units; at the ratio level "
            "also x the squared number of distinct values) is refused with the --n-boot that "
            "fits."
        ),
        epilog=(
            "examples:\n"
            "  longitudinal agreement labels.csv --unit-col story --rater-col annotator "
            "--value-col label --level nominal --out agreement.csv\n"
            "  longitudinal agreement ratings.csv --unit-col story --rater-col annotator "
            "--value-col empathy --level ordinal --levels 1 2 3 4 5 --seed 1 "
            "--out agreement.csv"
        ),
        formatter_class=_Formatter,
    )
    parser.add_argument("ratings", type=Path, metavar="RATINGS.csv", help="ratings, long form")
    parser.add_argument("--unit-col", required=True, metavar="C", help="column of the unit rated")
    parser.add_argument("--rater-col", required=True, metavar="C", help="column of the rater")
    parser.add_argument("--value-col", required=True, metavar="C", help="column of the value")
    parser.add_argument(
        "--level",
        required=True,
        choices=["nominal", "ordinal", "interval", "ratio"],
        help="level of measurement of the values",
    )
    parser.add_argument(
        "--levels",
        nargs="+",
        metavar="V",
        default=None,
        help="nominal or ordinal: the values a rating may take (ordinal: in their order), "
        "as written in the file; also Gwet's categories",
    )
    parser.add_argument(
        "--n-boot",
        type=int,
        default=2000,
        metavar="B",
        help=(
            "bootstrap resamples of units for alpha's interval (2000; 0: none; at most "
            f"{AGREEMENT_MAX_N_BOOT:,})"
        ),
    )
    parser.add_argument("--seed", type=int, default=0, metavar="N", help="bootstrap seed (0)")
    parser.add_argument(
        "--ci-level", type=float, default=0.95, metavar="P", help="interval level (0.95)"
    )
    parser.add_argument(
        "--out", required=True, type=Path, metavar="AGREEMENT.csv", help="file to write"
    )
    return parser


def _read_ratings(path: Path) -> pd.DataFrame:
    """Read every cell as text, exactly as written (no NA guessing, no number parsing)."""
    import pandas as pd

    try:
        table = pd.read_csv(
            path, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8-sig"
        )
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InvalidParameterError(f"cannot read {path} as a CSV table: {err}") from err
    if table.empty:
        raise InvalidParameterError(f"{path} has no data rows")
    return table


def _failures(path: Path, cases: list[dict[str, Any]], summary: str) -> Exception:
    import pandas as pd

    from surveys import InputValidationError

    return InputValidationError(pd.DataFrame(cases), summary=summary)


def _prepare(
    args: argparse.Namespace, table: pd.DataFrame
) -> tuple[pd.DataFrame, list[Any] | None]:
    """Check the columns, turn number values into numbers and refuse every bad row at once."""
    import numpy as np
    import pandas as pd

    from models.agreement import rating_problems

    name = str(args.ratings)
    missing = [
        (option, column)
        for option, column in (
            ("--unit-col", args.unit_col),
            ("--rater-col", args.rater_col),
            ("--value-col", args.value_col),
        )
        if column not in table.columns
    ]
    if missing:
        present = ", ".join(table.columns)
        cases = [
            {
                "file": name,
                "row": None,
                "column": column,
                "value": None,
                "reason": f"{option} names a column the file does not have (it has: {present})",
            }
            for option, column in missing
        ]
        raise _failures(args.ratings, cases, f"{name}: columns missing")
    if len({args.unit_col, args.rater_col, args.value_col}) < 3:
        raise InvalidParameterError(
            "--unit-col, --rater-col and --value-col must name three different columns"
        )
    if args.levels is not None and args.level not in ("nominal", "ordinal"):
        raise InvalidParameterError(
            f"--levels applies to --level nominal or ordinal; --level {args.level} values are "
            "numbers"
        )
    if args.levels is not None and len(set(args.levels)) != len(args.levels):
        raise InvalidParameterError(f"--levels lists a value twice: {' '.join(args.levels)}")
    frame = table[[args.unit_col, args.rater_col, args.value_col]].copy()
    text = frame[args.value_col]
    blank = text.str.strip() == ""
    values: pd.Series = text.where(~blank, None).astype(object)
    numeric = args.levels is None and args.level in ("ordinal", "interval", "ratio")
    if numeric:
        parsed = pd.to_numeric(text.where(~blank), errors="coerce")
        # a cell that reads as a number becomes that number; text stays text and is refused
        values = pd.Series(
            np.where(parsed.notna() | blank, parsed, text), index=text.index, dtype=object
        )
        values[blank] = None
    frame[args.value_col] = values
    for column in (args.unit_col, args.rater_col):
        frame[column] = frame[column].where(frame[column].str.strip() != "", None)
    problems = rating_problems(
        frame,
        unit_col=args.unit_col,
        rater_col=args.rater_col,
        value_col=args.value_col,
        level=args.level,
        levels=args.levels,
    )
    if len(problems):
        cases = []
        for rec in problems.itertuples(index=False):
            # the value as the file writes it (a number is shown as its text)
            shown = table[rec.column].iloc[int(rec.position)] if rec.value is not None else None
            cases.append(
                {
                    "file": name,
                    "row": int(rec.position) + _FIRST_LINE,
                    "column": rec.column,
                    "value": shown,
                    "reason": rec.reason,
                }
            )
        raise _failures(args.ratings, cases, f"{name}: ratings that cannot be used")
    if numeric:
        frame[args.value_col] = pd.to_numeric(frame[args.value_col])
    return frame, args.levels


def _agreement(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from longitudinal._output import atomic_write_files, refuse_overlap
    from models.agreement import agreement

    if not 0 <= args.n_boot <= AGREEMENT_MAX_N_BOOT:
        raise InvalidParameterError(
            f"--n-boot must be a whole number from 0 to {AGREEMENT_MAX_N_BOOT:,}; got {args.n_boot}"
        )
    if args.seed < 0:
        raise InvalidParameterError(f"--seed must be a non-negative number; got {args.seed}")
    if not 0 < args.ci_level < 1:
        raise InvalidParameterError(f"--ci-level must lie between 0 and 1; got {args.ci_level}")
    out = Path(args.out)
    _check_outputs({"--out": out})
    refuse_overlap(out, [Path(args.ratings)], option="--out")
    table = _read_ratings(args.ratings)
    frame, levels = _prepare(args, table)
    result = agreement(
        frame,
        unit_col=args.unit_col,
        rater_col=args.rater_col,
        value_col=args.value_col,
        level=args.level,
        levels=levels,
        ci_level=args.ci_level,
        n_boot=args.n_boot,
        seed=args.seed,
    )
    coefficients = result.coefficients
    atomic_write_files({out: _csv_writer(coefficients)})
    for rec in result.left_out.itertuples(index=False):
        units = "" if pd.isna(rec.n_units) else f", {int(rec.n_units)} unit(s)"
        print(f"note: left out {rec.n_rows} row(s){units}: {rec.reason}", file=sys.stderr)
    shown = coefficients[["term", "estimate", "ci_low", "ci_high", "n_units", "n_raters"]]
    print(shown.round(4).to_string(index=False))
    for rec in coefficients.itertuples(index=False):
        if not np.isfinite(rec.estimate):
            print(f"note: {rec.term} {rec.note}", file=sys.stderr)
    print(f"wrote {len(coefficients)} coefficients ({args.level}) -> {out}")
    return 0
