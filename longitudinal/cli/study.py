"""``longitudinal simulate``, ``report`` and ``demo``: a study directory and its report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from _empathic_base.durations import duration_text
from _empathic_base.vocabulary import DEMO_SEED
from longitudinal._errors import InvalidParameterError, LongitudinalError
from longitudinal._sizes import LEAN_MODEL_PARTICIPANTS
from longitudinal.cli._common import (
    _draws_option,
    _Formatter,
)
from models.limits import BAYES_MAX_CHAINS, BAYES_MAX_DRAWS, BAYES_MAX_TUNE
from surveys import SurveysError


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
    parser.add_argument(
        "--seed", type=int, default=DEMO_SEED, help=f"random seed (default {DEMO_SEED})"
    )
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


def _add_sampling_options(parser: argparse.ArgumentParser) -> None:
    """Add the Bayesian empathy model's sampling options of ``longitudinal report``."""
    parser.add_argument(
        "--draws",
        type=_draws_option,
        help=(
            f"Bayesian model: draws per chain (10000), at most {BAYES_MAX_DRAWS:,}; 'auto': "
            "up to 10000, stopping at the first 1000 that pass the gate's R-hat and ESS checks"
        ),
    )
    parser.add_argument(
        "--tune",
        type=int,
        help=f"Bayesian model: tuning steps per chain (500), at most {BAYES_MAX_TUNE:,}",
    )
    parser.add_argument(
        "--chains", type=int, help=f"Bayesian model: chains (2), at most {BAYES_MAX_CHAINS}"
    )
    parser.add_argument(
        "--sampler",
        choices=["nutpie", "pymc", "numpyro"],
        help="Bayesian model: NUTS implementation (default nutpie when installed, else pymc)",
    )
    parser.add_argument(
        "--target-accept", type=float, help="Bayesian model: NUTS target acceptance (0.9)"
    )


def _report_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "report",
        help="write the pre/mid/post change report of a study directory",
        description=(
            "Load and validate a study directory, score every instrument, analyse the change "
            "of each state scale from pre to post, and write report.html (figures embedded), "
            "tables/*.csv, figures/*.png, *.svg and *.pdf, the exclusion log and provenance.json. "
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
            "ratings.csv (pid, visit, item, slot, score) beside it; see docs/study.md."
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
        "created before the report on the first run, reused afterwards; keep it private). A "
        "regular file of at most 64 KiB, not a file of the study, holding 128 bits of "
        "randomness (32 hex digits, 22 base64 characters or 16 random bytes; a repeated letter, "
        "a counting run or a word is refused); make one with: "
        'python -c "import secrets; print(secrets.token_hex(32))" > KEY',
    )
    parser.add_argument(
        "--lean",
        action="store_true",
        help="a reduced report for a big study: the empathy models are fitted on a random "
        f"subsample of {LEAN_MODEL_PARTICIPANTS:,} participants (all their ratings; drawn "
        "with --seed) and the figures that draw one mark per participant are left out; every "
        "other table and figure uses every participant, and the report says what was reduced",
    )
    parser.add_argument(
        "--large",
        action="store_true",
        help=f"run a report estimated to need more than {LIMIT_MINUTES} min or {LIMIT_GB} GB, "
        "which is refused otherwise (a study of over "
        f"{ESTIMATE_FROM_RATINGS:,} ratings, or estimated at a minute or more, gets the "
        "estimate, part by part, before any work)",
    )
    parser.add_argument(
        "--person-tables",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="write the tables with one row per participant, e.g. "
        "tables/reliable_change_people.csv (default: on). Pseudonyms do not make them "
        "anonymous: anyone holding the raw data can re-link a row by its scores; "
        "--no-person-tables leaves them out",
    )
    parser.add_argument(
        "--retest",
        type=_retest_value,
        action="append",
        metavar="SCALE=R",
        help=(
            "test-retest r for a state scale's reliable change index (default: alpha at "
            "pre); SCALE is the scale's column (who5_percentage) or its instrument (who5), "
            "and another name is refused with the names it takes"
        ),
    )
    parser.add_argument("--ci-level", type=float, default=0.95, help="interval level (0.95)")
    parser.add_argument(
        "--bayes",
        action=argparse.BooleanOptionalAction,
        default=False,
        help=(
            "also fit the Bayesian empathy model, a third column beside the linear and the "
            "cumulative link mixed models: the ordinal one, or for a continuous scale (more "
            "than 11 points) the Bayesian linear mixed model (default: off; about a minute more)"
        ),
    )
    parser.add_argument(
        "--ordinal-bins",
        type=int,
        metavar="K",
        help=(
            "a continuous rating scale (more than 11 points, e.g. a 0-100 slider) is fitted "
            "with linear mixed models; K (2-11) also fits the ordinal models to the ratings "
            "binned into K ordered categories of equal width over the declared scale "
            "(refused for a 1-5 or 1-7 scale, fitted as ordered categories already)"
        ),
    )
    parser.add_argument(
        "--estimator",
        dest="invariance_estimator",
        choices=("auto", "WLSMV", "MLR", "ML"),
        default="auto",
        help=(
            "estimator of the measurement-invariance ladders of the state scales (default "
            "auto: WLSMV, the ordinal ladder, for items answered on at most 5 categories, MLR "
            "for more; Rhemtulla, Brosseau-Liard & Savalei 2012); a name fits every scale "
            "with that estimator"
        ),
    )
    _add_sampling_options(parser)
    parser.add_argument(
        "--predictors",
        nargs="+",
        metavar="NAME",
        help=(
            "what 'What predicts empathy' tests, in priority order: scale score columns "
            "(tipi_agreeableness), instruments or session features (turns); default study.toml's "
            "[roles] predictors, else traits, states, session features in study.toml order; "
            "one person-level predictor per 10 participants either way"
        ),
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the Bayesian sampler and of the imputations of missing scores (default "
        f"{DEMO_SEED}), recorded in provenance",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing report")
    parser.add_argument(
        "--formats",
        default="html,docx,latex",
        metavar="LIST",
        help="comma-separated outputs (default html,docx,latex): docx and latex add "
        "OUT/manuscript/ with APA tables (tables.docx; tables.tex and one file per table) and "
        "the results text (results.md, results.docx); html alone writes the report only",
    )
    return parser


#: ``report`` prints its estimate of time and memory before any work from this many ratings,
#: or when the report is estimated to take at least this many seconds (many participants).
ESTIMATE_FROM_RATINGS = 100_000
ESTIMATE_FROM_SECONDS = 60
#: A report estimated above these is refused up front unless ``--large``.
LIMIT_MINUTES, LIMIT_GB = 10, 4
#: The report's cost part by part: CPU seconds per rating (r) or per participant (p), and a
#: peak memory of MB fixed + MB per rating, measured with ``benchmarks/bench_report_size.py``
#: on a simulated study of 500,000 ratings of 25,403 participants, without and with ``--lean``
#: (CPU seconds, because the shared machine gave each run a fraction of a core; on two free
#: cores the report, which runs mostly on one, takes about its CPU time). Full report: 346 s
#: of CPU, 2,443 MB; with --lean 147 s, 1,604 MB. Memory per rating is the slope between
#: 500,000 and 1,000,000 ratings with --lean (3,098 MB), plus the full report's extra 839 MB
#: at 500,000; at 1,000,000 the lean estimate is 290 s and 3.3 GB against 236 s and 3.1 GB
#: measured. Reading and checking the files: 14.6 s of CPU at 500,000 ratings once the checks
#: ran over whole columns (47 s before, 2026-11-28). See benchmarks/README.md.
_PARTS = (
    # (what, per rating or participant, seconds each in the full report, with --lean)
    ("reading and checking the study files", "r", 2.9e-5, 2.9e-5),
    ("scores, reliability and change analyses of the surveys", "p", 1.66e-3, 1.66e-3),
    ("figures that draw one mark per participant", "p", 2.3e-3, 0.0),
    ("empathy models (linear and ordinal mixed models)", "r", 3.7e-4, 8.7e-5),
    ("other sections, figures and writing the folder", "p", 5.7e-4, 5.0e-4),
)
#: With --lean the empathy models see at most LEAN_MODEL_PARTICIPANTS participants; their fit
#: is counted with the data they are built from, per rating, above (an upper bound).
_LEAN_MODEL_SECONDS = 0.0
_BASE_SECONDS = 4.0  # imports and start-up
_BASE_MB, _MB_PER_RATING, _LEAN_MB_PER_RATING = 300.0, 4.7e-3, 3.0e-3


def _count_lines(path: Path) -> int:
    """Count the lines of a file in blocks, without parsing it (a rough count of its rows)."""
    lines = 0
    last = b"\n"
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")


def _estimate(n_ratings: int, n_people: int, *, lean: bool) -> tuple[float, float, list]:
    """Estimated seconds, GB and (part, seconds) rows of a report of this size."""
    rows = []
    for what, per, full, reduced in _PARTS:
        seconds = (reduced if lean else full) * (n_ratings if per == "r" else n_people)
        if lean and what.startswith("empathy models"):
            seconds += _LEAN_MODEL_SECONDS
        rows.append((what, seconds))
    rows[-1] = (rows[-1][0], rows[-1][1] + _BASE_SECONDS)  # imports, start-up
    per_mb = _LEAN_MB_PER_RATING if lean else _MB_PER_RATING
    return sum(s for _, s in rows), (_BASE_MB + per_mb * n_ratings) / 1024, rows


def _estimate_text(n_ratings: int, n_people: int, *, lean: bool) -> tuple[str, bool]:
    """Return the estimate, part by part, and whether it is over the limits."""
    seconds, gigabytes, rows = _estimate(n_ratings, n_people, lean=lean)
    over = seconds > LIMIT_MINUTES * 60 or gigabytes > LIMIT_GB
    text = f"{duration_text(seconds)} and {gigabytes:.1f} GB of memory; " + ", ".join(
        f"{what} {duration_text(part)}" for what, part in rows if part >= 0.5
    )
    return text, over


def _check_size(study_dir: Path, *, large: bool, lean: bool = False) -> None:
    """Print the estimated time and memory of the report of a big study.

    It is printed from :data:`ESTIMATE_FROM_RATINGS` ratings, or when the report is
    estimated at :data:`ESTIMATE_FROM_SECONDS` or more (a study of many participants).

    The estimate is given part by part, for the full report and with ``--lean``. A report
    estimated above :data:`LIMIT_MINUTES` or :data:`LIMIT_GB` is refused up front unless
    ``large``; the refusal names ``--lean`` with its own estimate. The ratings and the
    participants are counted as the lines of their files, not parsed. A study whose
    configuration cannot be read is left to the report, which says why.
    """
    from longitudinal.study.config import read_study_config

    try:
        config = read_study_config(study_dir)
        ratings = study_dir / config.ratings.file
        if not ratings.is_file():
            return
        n = max(_count_lines(ratings) - 1, 0)
        people_file = study_dir / config.participants_file
        people = max(_count_lines(people_file) - 1, 1) if people_file.is_file() else 1
    except (LongitudinalError, SurveysError, OSError, ValueError, RecursionError):
        return  # the report says why
    seconds = _estimate(n, people, lean=lean)[0]
    if n < ESTIMATE_FROM_RATINGS and seconds < ESTIMATE_FROM_SECONDS:
        return
    full, full_over = _estimate_text(n, people, lean=False)
    reduced, lean_over = _estimate_text(n, people, lean=True)
    head = (
        f"{ratings.name} holds about {n:,} ratings of {people:,} participants; estimated on "
        "two CPU cores (measured on simulated studies, scaled linearly; the Bayesian model "
        f"of --bayes comes on top): the full report {full}; with --lean {reduced}"
    )
    over = lean_over if lean else full_over
    if over and not large:
        if lean:
            advice = (
                f"Even with --lean the report is estimated over {LIMIT_MINUTES} min or "
                f"{LIMIT_GB} GB, and is refused before any work; pass --large to run it anyway"
            )
        else:
            advice = (
                f"A report estimated over {LIMIT_MINUTES} min or {LIMIT_GB} GB is refused "
                "before any work. --lean reduces it: the empathy models are fitted on a "
                f"random subsample of {LEAN_MODEL_PARTICIPANTS:,} participants (drawn with "
                "--seed) and the figures that draw one mark per participant are left out, "
                "as the report then says"
                + (
                    f" (even so it is estimated over {LIMIT_MINUTES} min or {LIMIT_GB} GB: "
                    "add --large)"
                    if lean_over
                    else ""
                )
                + "; --large runs the full report anyway"
            )
        raise InvalidParameterError(f"{head}. {advice}")
    print(f"note: {head}.", file=sys.stderr, flush=True)


def _check_ordinal_bins(study_dir: Path, k: int | None) -> None:
    """Refuse a bad ``--ordinal-bins`` in the option's own name, before any work.

    The number must be 2 to 11 and the study's scale continuous; a study whose configuration
    cannot be read is left to the report, which says why.
    """
    from longitudinal.study.config import read_study_config
    from longitudinal.study.rating_scale import check_ordinal_bins

    if k is None:
        return
    check_ordinal_bins(k, where="longitudinal report", name="--ordinal-bins")
    try:
        spec = read_study_config(study_dir).ratings
    except (LongitudinalError, SurveysError, OSError, ValueError, RecursionError):
        return  # the report says why
    check_ordinal_bins(
        k, spec.scale_min, spec.scale_max, where="longitudinal report", name="--ordinal-bins"
    )


def _report(args: argparse.Namespace) -> int:
    from longitudinal.report import build_report
    from longitudinal.report.pseudonyms import default_key_path

    _check_size(args.study_dir, large=args.large, lean=args.lean)
    _check_ordinal_bins(args.study_dir, args.ordinal_bins)
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
        person_tables=args.person_tables,
        lean=args.lean,
        sampling={
            "draws": args.draws,
            "tune": args.tune,
            "chains": args.chains,
            "sampler": args.sampler,
            "target_accept": args.target_accept,
        },
        predictors=args.predictors,
        formats=args.formats,
        ordinal_bins=args.ordinal_bins,
        invariance_estimator=args.invariance_estimator,
    )
    print(f"wrote the change report to {path / 'report.html'}")
    provenance = json.loads((path / "provenance.json").read_text(encoding="utf-8"))
    missing = provenance.get("sections_not_computed", [])
    if missing:
        print(
            f"{len(missing)} section(s) not computed, each with the reason in the report: "
            + "; ".join(missing)
        )
    # ratings the empathy models could not use, and what to do about a model that failed
    for note in provenance.get("notes", []):
        if str(note).startswith(("What predicts empathy: Left out", "Advice: ")):
            print(note)
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
            "into OUT/study and write its change report into OUT, with the manuscript "
            "(APA tables in Word and LaTeX, the results text) in OUT/manuscript."
        ),
        epilog="example:\n  longitudinal demo --out demo-report --seed 2024",
        formatter_class=_Formatter,
    )
    parser.add_argument("--out", required=True, type=Path, help="folder to write")
    parser.add_argument(
        "--seed", type=int, default=DEMO_SEED, help=f"random seed (default {DEMO_SEED})"
    )
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
