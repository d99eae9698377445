"""``longitudinal evaluate`` and ``longitudinal splits``: the out-of-person benchmark."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from longitudinal._errors import InvalidParameterError
from longitudinal.cli._common import (
    _check_outputs,
    _csv_writer,
    _draws_option,
    _Formatter,
    _scheduler_option,
)
from models.limits import (
    BAYES_MAX_CHAINS,
    BAYES_MAX_DRAWS,
    BAYES_MAX_TUNE,
    EVALUATE_MAX_BOOT_CELLS,
    EVALUATE_MAX_KFOLD,
    EVALUATE_MAX_N_BOOT,
    EVALUATE_MAX_SEEDS,
    EVALUATE_MAX_SPLITS,
)


def _add_kfold(parser: argparse.ArgumentParser) -> None:
    """Add the ``--kfold`` option, the same for ``evaluate`` and ``splits``."""
    parser.add_argument(
        "--kfold",
        type=int,
        default=5,
        metavar="K",
        help=f"folds of the grouped K-fold (5; 0: holdout only; at most {EVALUATE_MAX_KFOLD:,})",
    )


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
            "Accuracy and F1 binarise ratings and predictions at a cut: positive ('empathic') "
            "above it. The cut is --threshold when given, else [ratings] threshold of "
            "study.toml, else the midpoint of the study's declared scale (3 on 1-5, 4 on 1-7); "
            "it must lie within the scale (at least scale_min, below scale_max). The value and "
            "its origin are printed with the metrics and written to table.md and "
            "evaluation.json.\n\n"
            "A continuous scale (more than 11 points, e.g. a 0-100 slider) is predicted as a "
            "continuous rating: the majority vote is the median training rating, the MSE is "
            "in squared rating points (not x100) and the ordinal models are not run.\n\n"
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
            "file, row (the header is row 1) and rating; nothing is written.\n\n"
            f"Limits, checked before the study is read: --seeds at most {EVALUATE_MAX_SEEDS:,} "
            f"and --kfold at most {EVALUATE_MAX_KFOLD:,} (each seed refits every model for its "
            f"holdout and each of its folds), at most {EVALUATE_MAX_SPLITS:,} fitted splits per "
            f"model (--seeds x (--kfold + 1)), --n-boot at most {EVALUATE_MAX_N_BOOT:,} (and "
            f"(--n-boot + 1) x ratings at most {EVALUATE_MAX_BOOT_CELLS:,} bootstrap weights, "
            f"checked once the ratings are counted), --draws and --tune at most "
            f"{BAYES_MAX_DRAWS:,}, --chains at most {BAYES_MAX_CHAINS}."
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
    parser.add_argument(
        "--seeds",
        type=int,
        default=5,
        help=f"number of split seeds (5; at most {EVALUATE_MAX_SEEDS:,})",
    )
    _add_kfold(parser)
    parser.add_argument(
        "--predictions",
        type=Path,
        action="append",
        metavar="PRED.csv",
        help="your model's predictions (repeat for more files)",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="X",
        help=(
            "binarisation cut of accuracy and F1: a rating or prediction above X is "
            "'empathic' (default: [ratings] threshold of study.toml, else the scale's midpoint)"
        ),
    )
    _add_predictors(parser)
    parser.add_argument(
        "--n-boot",
        type=int,
        default=2000,
        metavar="B",
        help=(
            "participant-cluster bootstrap replicates for the K-fold intervals (2000; 0: none; "
            f"at most {EVALUATE_MAX_N_BOOT:,})"
        ),
    )
    parser.add_argument(
        "--bootstrap-seed", type=int, default=0, metavar="N", help="seed of the bootstrap draws (0)"
    )
    parser.add_argument(
        "--bayes",
        action=argparse.BooleanOptionalAction,
        default=False,
        help=(
            "also include the Bayesian ordinal model (default: off; minutes more; not run on "
            "a continuous scale of more than 11 points)"
        ),
    )
    parser.add_argument(
        "--draws",
        type=_draws_option,
        help=(
            f"Bayesian model: draws per chain (10000; at most {BAYES_MAX_DRAWS:,}); 'auto': up "
            "to 10000, stopping at the first 1000 that pass the gate's R-hat and ESS checks"
        ),
    )
    parser.add_argument(
        "--tune",
        type=int,
        help=f"Bayesian model: tuning steps per chain (500; at most {BAYES_MAX_TUNE:,})",
    )
    parser.add_argument(
        "--chains", type=int, help=f"Bayesian model: chains (2; at most {BAYES_MAX_CHAINS})"
    )
    parser.add_argument(
        "--scheduler",
        type=_scheduler_option,
        metavar="ADDR|local:N|processes:N",
        help=(
            "where the fits run (default: here, one after another): processes:N (N local "
            "processes), local:N (a Dask LocalCluster on 127.0.0.1) or tcp://HOST:PORT (an "
            "existing Dask scheduler); the folds x seeds x models go out in batches and the "
            "tables are those of the serial run"
        ),
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing folder")
    return parser


def _add_predictors(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--predictors",
        nargs="+",
        metavar="NAME",
        help=(
            "the traits, states and session features the models use (scale score columns "
            "such as tipi_agreeableness, instruments, or sessions.csv columns); default "
            "study.toml's [roles] predictors, else all of them"
        ),
    )


def _check_seeds_kfold(args: argparse.Namespace, *, n_boot: int = 0, func: str) -> None:
    """Refuse --seeds, --kfold and --n-boot past their ceilings, before the study is read."""
    from longitudinal.predict.benchmark import check_benchmark_counts

    check_benchmark_counts(args.seeds, args.kfold, n_boot, func=func)


def _evaluate(args: argparse.Namespace) -> int:
    from longitudinal.predict import run_evaluation
    from longitudinal.predict.common import sampling_settings

    func = "evaluate_predictions"
    _check_seeds_kfold(args, n_boot=args.n_boot, func=func)
    draws, tune, chains = sampling_settings(args.draws, args.tune, args.chains, where=func)
    if args.bootstrap_seed < 0:
        raise InvalidParameterError(
            f"--bootstrap-seed must be a non-negative number; got {args.bootstrap_seed}"
        )
    from longitudinal.predict.selection import parse_predictor_list

    options: dict[str, Any] = {
        "predictors": parse_predictor_list(args.predictors),
        "draws": draws,
        "tune": tune,
        "chains": chains,
    }
    if args.threshold is not None:
        options.update(threshold=args.threshold, threshold_source="--threshold")
    path = run_evaluation(
        args.study_dir,
        args.out,
        seeds=args.seeds,
        k=args.kfold,
        bayes=args.bayes,
        n_boot=args.n_boot,
        bootstrap_seed=args.bootstrap_seed,
        predictions=args.predictions,
        overwrite=args.overwrite,
        scheduler=args.scheduler,
        progress=True,
        **options,
    )
    from longitudinal.predict.results import terminal_summary

    files = ", ".join(sorted(f.name for f in Path(path).iterdir() if f.is_file()))
    print(f"wrote the prediction benchmark to {path} ({files})")
    for line in terminal_summary(path):
        print(line)
    return 0


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
            "rating the benchmark can use (every predictor of its models present); every "
            "participant and rating left out is printed with the reason. Predict on the "
            "study's declared rating scale ([ratings] scale_min/scale_max of study.toml); "
            "the terminal says which scale and which binarisation cut `evaluate` will use. "
            "The file names participants: keep it with the study."
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
    _add_kfold(parser)
    _add_predictors(parser)
    parser.add_argument(
        "--out", required=True, type=Path, metavar="SPLITS.csv", help="file to write"
    )
    return parser


def _splits(args: argparse.Namespace) -> int:
    from longitudinal._output import atomic_write_files, refuse_overlap
    from longitudinal.predict.selection import participant_splits
    from longitudinal.study.loaded import load_study, study_inputs

    _check_seeds_kfold(args, func="participant_splits")
    out = Path(args.out)
    _check_outputs({"--out": out})
    refuse_overlap(out, study_inputs(args.study_dir), option="--out")
    study = load_study(args.study_dir)
    from longitudinal.predict.selection import parse_predictor_list

    table = participant_splits(
        study, seeds=args.seeds, k=args.kfold, predictors=parse_predictor_list(args.predictors)
    )
    atomic_write_files({out: _csv_writer(table)})
    id_col = study.config.id_col
    people = table[id_col].nunique()
    schemes = ", ".join(dict.fromkeys(table["scheme"]))
    seeds = "seed 0" if args.seeds == 1 else f"seeds 0-{args.seeds - 1}"
    print(f"wrote {len(table)} rows ({schemes}; {seeds}; {people} participants) -> {out}")
    from longitudinal.predict.results import left_out_lines

    for line in left_out_lines({"left_out": table.attrs.get("left_out")}):
        print(line)
    from longitudinal.predict.benchmark import benchmark_threshold, threshold_rule

    scale = study.config.ratings
    cut, source = benchmark_threshold(scale)
    print(
        f"Predict on the study's {scale.label} scale (`evaluate --predictions` refuses values "
        f"outside it); accuracy and F1 will count as {threshold_rule(cut, source, scale.label)} "
        "unless `evaluate --threshold` says otherwise."
    )
    return 0
