"""``longitudinal power``: how many participants and sessions, by simulation."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from _empathic_base.words import command_line
from longitudinal._errors import InvalidParameterError
from longitudinal.cli._common import (
    _Formatter,
    _scheduler_option,
)
from models.limits import (
    MAX_WORKERS_PER_CPU,
    POWER_MAX_GRID,
    POWER_MAX_PARTICIPANTS,
    POWER_MAX_ROWS,
    POWER_MAX_SESSIONS,
    POWER_MAX_SIMS,
    POWER_MAX_SIMULATED_ROWS,
    POWER_ROWS_PER_SIMULATION,
)


def _effect_value(text: str) -> tuple[str, float]:
    """Parse ``--effect TERM=VALUE``."""
    name, sep, value = text.rpartition("=")
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not sep or not name.strip() or not math.isfinite(number):
        raise argparse.ArgumentTypeError(
            f"expected TERM=VALUE with a number, e.g. bfi44_agreeableness_z=0.2; got {text!r}"
        )
    return name.strip(), number


def _shown(text: str) -> str:
    """Show the option's text in a message, cut when it is long (a grid of many values)."""
    return repr(text) if len(text) <= 80 else repr(text[:60]) + f" ... ({len(text):,} characters)"


def _participant_list(text: str) -> list[int]:
    """Parse ``--participants 20,40,60``: at most POWER_MAX_GRID values of 2 to the ceiling."""
    pieces = [v for v in text.split(",") if v.strip()]
    if len(pieces) > POWER_MAX_GRID:
        raise argparse.ArgumentTypeError(
            f"at most {POWER_MAX_GRID} participant counts (grid points); got {len(pieces):,}"
        )
    try:
        values = [int(v) for v in pieces if len(v.strip()) <= 18]
    except ValueError:
        values = []
    if (
        len(values) != len(pieces)
        or not values
        or any(not 2 <= v <= POWER_MAX_PARTICIPANTS for v in values)
        or len(set(values)) != len(values)
    ):
        raise argparse.ArgumentTypeError(
            f"expected distinct whole numbers from 2 to {POWER_MAX_PARTICIPANTS:,} separated by "
            f"commas, e.g. 20,40,60; got {_shown(text)}"
        )
    return values


def _sessions_value(text: str) -> str:
    """Check ``--sessions 8`` or ``--sessions 6-12``: counts from 1 to the ceiling."""
    lo, sep, hi = text.partition("-")
    parts = [lo, hi] if sep else [lo]
    if all(p.strip().isascii() and p.strip().isdigit() and len(p.strip()) <= 18 for p in parts):
        counts = [int(p) for p in parts]
        if counts != sorted(counts):
            raise argparse.ArgumentTypeError(f"a range A-B must have min <= max; got {text!r}")
        if all(1 <= c <= POWER_MAX_SESSIONS for c in counts):
            return text
    raise argparse.ArgumentTypeError(
        f"expected a count from 1 to {POWER_MAX_SESSIONS:,} such as 8, or a range such as 6-12; "
        f"got {_shown(text)}"
    )


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
            "power.png, power.svg and power.pdf, and provenance.json. The same --seed gives the "
            "same result whatever --scheduler."
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
            "(an existing Dask cluster; an IPv6 address in brackets, tcp://[::1]:8786); "
            f"default: this process. N is at most {MAX_WORKERS_PER_CPU} per CPU.\n"
            "\n"
            "Limits, checked before any simulation: --sims at most "
            f"{POWER_MAX_SIMS:,}; --participants at most {POWER_MAX_GRID} values, each at most "
            f"{POWER_MAX_PARTICIPANTS:,}; --sessions at most {POWER_MAX_SESSIONS:,}; a "
            f"simulated study at most {POWER_MAX_ROWS:,} rows; and at most "
            f"{POWER_MAX_SIMULATED_ROWS:,} rows simulated and refitted in all (grid points x "
            f"--sims x rows per study, each simulation counted {POWER_ROWS_PER_SIMULATION:,} "
            "rows more for its fixed cost)."
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
        help=(
            f"participants at each grid point, e.g. 20,40,60,80 (at most {POWER_MAX_GRID} "
            f"values, each 2 to {POWER_MAX_PARTICIPANTS:,})"
        ),
    )
    parser.add_argument(
        "--sessions",
        type=_sessions_value,
        metavar="N|A-B",
        help=(
            "sessions per participant, e.g. 8 or 6-12 (default: the pilot's or the design's; "
            f"at most {POWER_MAX_SESSIONS:,})"
        ),
    )
    parser.add_argument(
        "--sims",
        type=int,
        default=1000,
        help=f"simulations per grid point (1000; at most {POWER_MAX_SIMS:,})",
    )
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
        "--scheduler",
        type=_scheduler_option,
        metavar="ADDR|local:N|processes:N",
        help="where the simulations run",
    )
    parser.add_argument(
        "--predictors",
        nargs="+",
        metavar="NAME",
        help=(
            "with --pilot: what the pilot's empathy model tests, in priority order (scale "
            "score columns, instruments or session features, as report --predictors); default "
            "study.toml's [roles] predictors, else the report's rule"
        ),
    )
    parser.add_argument("--seed", type=int, help="random seed (default: fresh, recorded)")
    parser.add_argument("--out", required=True, type=Path, help="folder to write")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier power run")
    return parser


def _power(args: argparse.Namespace) -> int:
    from longitudinal.power import effect_text, run_power
    from longitudinal.predict.selection import parse_predictor_list

    if not 1 <= args.sims <= POWER_MAX_SIMS:
        raise InvalidParameterError(
            f"--sims must be a whole number from 1 to {POWER_MAX_SIMS:,}; got {args.sims}"
        )
    if not 0 < args.alpha < 1:
        raise InvalidParameterError(f"--alpha must be in (0, 1); got {args.alpha}")
    if args.seed is not None and args.seed < 0:
        raise InvalidParameterError(f"--seed must be a non-negative number; got {args.seed}")
    term, value = args.effect
    # the function's parameters named by their options in its refusals (grid size, rows)
    words = {**getattr(args, "_option_words", {}), "n_sims": "--sims", "n_sessions": "--sessions"}
    with command_line("longitudinal power", words):
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
            predictors=parse_predictor_list(args.predictors),
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
        f"wrote {path} (power.csv, failures.csv, power.png, power.svg, power.pdf, provenance.json; "
        f"{meta['simulations_per_second']:.0f} simulations/s)"
    )
    return 0
