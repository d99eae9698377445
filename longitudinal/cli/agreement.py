"""``longitudinal agreement``: agreement between raters of the same units, from a CSV file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from longitudinal.cli._common import _check_outputs, _csv_writer, _Formatter
from models.limits import AGREEMENT_LIMIT_SECONDS, AGREEMENT_MAX_N_BOOT, AGREEMENT_MAX_PAIRS


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


def _agreement(args: argparse.Namespace) -> int:
    import numpy as np
    import pandas as pd

    from longitudinal._output import atomic_write_files, refuse_overlap
    from longitudinal.psychometrics.agreement import agreement_from_file, check_settings

    options = {
        "unit_col": args.unit_col,
        "rater_col": args.rater_col,
        "value_col": args.value_col,
        "level": args.level,
        "levels": args.levels,
        "ci_level": args.ci_level,
        "n_boot": args.n_boot,
        "seed": args.seed,
    }
    check_settings(**{k: options[k] for k in ("level", "levels", "n_boot", "seed", "ci_level")})
    out = Path(args.out)
    _check_outputs({"--out": out})
    refuse_overlap(out, [Path(args.ratings)], option="--out")
    result = agreement_from_file(args.ratings, **options)
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
