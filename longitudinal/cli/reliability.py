"""``longitudinal reliability``: alpha and omega per wave, multilevel reliability over waves."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from longitudinal._errors import InvalidParameterError
from longitudinal.cli._common import _Formatter
from longitudinal.cli.score import (
    _fraction_or_count,
    checked_export,
    export_arguments,
    export_inputs,
)

#: Files of the output folder.
INTERNAL_FILE = "internal.csv"
MULTILEVEL_FILE = "multilevel.csv"
COMPONENTS_FILE = "components.csv"
INTERNAL_COLUMNS = [
    "instrument",
    "scale",
    "wave",
    "n",
    "alpha",
    "alpha_ci_low",
    "alpha_ci_high",
    "omega_total",
]


def _reliability_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "reliability",
        help="reliability of questionnaire scales per wave and over waves (psych mlr)",
        description=(
            "Read a long raw questionnaire export (one row per participant and wave), check "
            "it as `longitudinal score` does, and write to the folder --out: internal.csv "
            "(per scale and wave: n, Cronbach's alpha with its Feldt interval, omega total), "
            "multilevel.csv (per scale measured at two or more waves: instrument, scale, "
            "n_persons, n_occasions, n_items, method, RkF, R1R, RkR, Rc, RkRn, Rcn, as "
            "psych's mlr) and components.csv (instrument, scale, design, component, "
            "variance: the crossed person x occasion x item components and the nested "
            "person / occasion-within-person ones). Balanced complete answers get ANOVA "
            "components (a negative one is kept and warned about, as psych keeps it); "
            "missing answers get REML components (method column). Reverse-keyed items are "
            "reversed from the instrument's declared range. A scale measured at one wave "
            "gets a note instead of multilevel rows. With --invariance also invariance.csv "
            "(per scale of three or more items at two or more waves: the configural, metric, "
            "scalar and strict models, with --estimator WLSMV the configural, thresholds, "
            "metric, scalar and strict models of the answers as ordered categories, each with "
            "chi-square, CFI, TLI, RMSEA, SRMR, under MLR and WLSMV their explicitly named "
            "scaled versions (chisq_scaled, df_scaled, cfi_scaled, tli_scaled, rmsea_scaled) "
            "and lavaan's robust indices where it gives them, the difference test against the "
            "previous model (delta_chisq, delta_df, delta_p: likelihood ratio, Satorra-Bentler "
            "2001 or, for WLSMV, Satorra 2000), delta CFI, delta RMSEA and the decision, as "
            "lavaan and semTools; at a rejected step the partial models that free its worst "
            "restrictions one at a time) and invariance_params.csv (every estimate). A ladder "
            "is fitted whenever the model "
            "can be estimated and converges; one with fewer complete participants than the "
            "rule of thumb (5 per free parameter of the configural model; Bentler & Chou, "
            "1987) carries that line in the column sample_flag and in a note on the "
            "terminal. A scale without a ladder (fewer than three items, one wave, answers "
            "without variance, no more participants than items x waves, a model that could "
            "not be estimated or did not converge) gets one row per model with the reason "
            "in the column note, and a note."
        ),
        epilog=(
            "examples:\n"
            "  longitudinal reliability surveys/all_waves.csv --instrument who5 ubc_sscs10 "
            "--id-col participant_id --wave-col wave --out reliability\n"
            "  longitudinal reliability export.csv --instrument my_key.toml --id-col pid "
            "--wave-col day --missing-code -99 --method reml --out reliability\n"
            "  longitudinal reliability export.csv --instrument my_key.toml --id-col pid "
            "--wave-col wave --invariance --estimator WLSMV --missing pairwise --out reliability\n"
            "\n"
            "exit status: 0 on success, 2 when the input is not valid (every problem is "
            "listed; nothing is written)."
        ),
        formatter_class=_Formatter,
    )
    export_arguments(
        parser,
        raw_help="raw export (.csv, .xlsx, .sav), long",
        wave_help="wave column",
        wave_required=True,
    )
    parser.add_argument(
        "--min-valid",
        type=_fraction_or_count,
        default=None,
        metavar="P|K",
        help="items a respondent must answer for a scale score, as in `longitudinal score` "
        "(default: 0.8); alpha and omega use the answers given",
    )
    parser.add_argument(
        "--method",
        choices=["auto", "anova", "reml"],
        default="auto",
        help="crossed components: ANOVA (balanced complete answers only), REML, or auto "
        "(ANOVA when every answer is there, else REML; default)",
    )
    parser.add_argument(
        "--invariance",
        action="store_true",
        help="also test longitudinal measurement invariance (invariance.csv, "
        "invariance_params.csv)",
    )
    parser.add_argument(
        "--estimator",
        choices=["ML", "MLR", "WLSMV"],
        default="MLR",
        help="with --invariance: ML, ML with robust (Yuan-Bentler) corrections for Likert "
        "answers (MLR, default; incomplete participants by full-information ML), or WLSMV, "
        "the answers as ordered categories (thresholds and polychoric correlations; a "
        "category nobody chose at some wave is refused: collapse it first)",
    )
    parser.add_argument(
        "--missing",
        choices=["listwise", "pairwise"],
        default=None,
        help="with --estimator WLSMV: leave out participants with a missing answer or wave "
        "(listwise, default, as lavaan) or use every pair of answers (pairwise); "
        "full-information ML does not exist for WLSMV",
    )
    parser.add_argument("--out", required=True, type=Path, metavar="DIR", help="folder to write")
    parser.add_argument(
        "--overwrite", action="store_true", help="replace an earlier `reliability` folder"
    )
    return parser


def _reliability(args: argparse.Namespace) -> int:
    from longitudinal._output import atomic_write, check_out_dir, write_csv
    from longitudinal.psychometrics.reliability import invariance_ladders, multilevel_tables
    from surveys.pipeline import score_export

    func = "longitudinal reliability"
    if args.missing is not None and args.estimator != "WLSMV":
        raise InvalidParameterError(
            f"--missing {args.missing} applies to --estimator WLSMV only; with --estimator "
            f"{args.estimator} incomplete participants enter by full-information ML"
        )
    inputs = export_inputs(args)
    out = check_out_dir(
        args.out, overwrite=args.overwrite, func=func, command="reliability", inputs=inputs
    )
    export = checked_export(args)
    options: dict[str, Any] = {}
    if args.min_valid is not None:
        options["min_valid"] = args.min_valid
    scored = score_export(export, **options)
    internal = scored.reliability.rename(columns={args.wave_col: "wave"})
    internal = internal.loc[:, INTERNAL_COLUMNS]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = multilevel_tables(
            export.responses.data,
            export.instruments,
            id_col=export.id_col,
            wave_col=args.wave_col,
            method=args.method,
        )
        invariance = None
        if args.invariance:
            invariance = invariance_ladders(
                export.responses.data,
                export.instruments,
                id_col=export.id_col,
                wave_col=args.wave_col,
                estimator=args.estimator,
                nan_policy={"listwise": "omit", "pairwise": "pairwise"}.get(args.missing),
            )
    warned = set()
    for message in caught:  # printed as warnings by the dispatcher; not repeated as notes
        warned.add(str(message.message))
        warnings.warn(message.message, message.category, stacklevel=2)

    def write(folder: Path) -> None:
        write_csv(internal, folder / INTERNAL_FILE)
        write_csv(tables.multilevel, folder / MULTILEVEL_FILE)
        write_csv(tables.components, folder / COMPONENTS_FILE)
        if invariance is not None:
            write_csv(invariance.invariance, folder / "invariance.csv")
            write_csv(invariance.params, folder / "invariance_params.csv")

    atomic_write(
        out, write, overwrite=args.overwrite, what="the reliability", command="reliability"
    )

    responses = export.responses
    if len(responses.excluded):
        print(
            f"note: left out {len(responses.excluded)} flagged row(s) of {responses.source}:",
            file=sys.stderr,
        )
        for rec in responses.excluded.itertuples(index=False):
            print(f"  row {rec.row}: {rec.reason}", file=sys.stderr)
    notes = [*tables.notes, *(invariance.notes if invariance is not None else ())]
    for note in notes:
        if note not in warned:
            print(f"note: {note}", file=sys.stderr)
    shown = tables.multilevel.drop(columns=["n_items"]).round(3)
    if len(shown):
        print(shown.to_string(index=False))
    print(
        f"{len(internal)} scale x wave row(s) of alpha and omega, multilevel reliability of "
        f"{len(tables.multilevel)} scale(s) -> {out} ({INTERNAL_FILE}, {MULTILEVEL_FILE}, "
        f"{COMPONENTS_FILE}"
        + (", invariance.csv, invariance_params.csv" if invariance is not None else "")
        + ")"
    )
    return 0
