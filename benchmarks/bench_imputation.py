"""Time multiple imputation of a study-sized score table, the per-imputation fits and pooling.

The data: the demo study (``longitudinal.simulate_study(dir, seed=2024)``: 41 participants,
waves pre, mid and post, three state instruments and three trait instruments) with the post
survey of eight participants and the mid survey of six removed (``--dropouts``, ``--skips``),
so that the wide participant x (scale, wave) table has 16 columns, 6 of them incomplete, and
the word count of every seventh session blanked in sessions.csv (``--blank-every``).

What is timed, each step on its own and all of it in a fresh process as a user runs it
(``python -c`` with the imports, the loading and the steps):

  load         ``load_study`` (reading, checking and scoring the surveys)
  impute       ``impute_scores(study, m=M, seed=1)``: M chained-equation chains (PMM)
  change       per state scale, ``imputed_change`` (the paired pre-post change in each
               imputation, pooled by Rubin's rules) and ``tipping_point`` (21 deltas, each
               re-pooled): what the report's change section runs
  growth       per state scale, the growth model ``score ~ time + (1 | id)`` fitted by
               ``LinearMixedModel`` to each of the M person-wave frames and pooled with
               ``pool_imputations`` (M x 3 mixed-model fits)
  sessions     ``impute_sessions(study, m=M, seed=1)``: M chains of the two-level method
               (sessions within participants, every session feature and each session's mean
               rating in the imputation model), then ``empathy ~ words + (1 | id)`` fitted to
               the ratings with each completed word count and pooled (M mixed-model fits)

Run:  .venv/bin/python benchmarks/bench_imputation.py [--m 20] [--runs 3]

The issue's target: 20 imputations, their fits and the pooling within 10 s on two cores.
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_study(folder: Path, *, dropouts: int, skips: int, blank_every: int) -> Path:
    """Write the demo study into ``folder`` with post and mid surveys and word counts removed."""
    from longitudinal import simulate_study

    study = folder / "study"
    simulate_study(study, seed=2024)
    gone_post = {f"P{i:02d}" for i in range(1, dropouts + 1)}
    gone_mid = {f"P{i:02d}" for i in range(dropouts - skips // 2 + 1, dropouts + 1)} | {
        f"P{i:02d}" for i in range(20, 20 + skips - skips // 2)
    }
    for name, ids in (("post_qualtrics.csv", gone_post), ("mid.csv", gone_mid)):
        path = study / "surveys" / name
        with path.open(newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
        column = rows[0].index("participant_id")
        kept = [r for r in rows if r[column] not in ids]
        with path.open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows(kept)
    path = study / "sessions.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    words = rows[0].index("words")
    for row in rows[1::blank_every]:
        row[words] = ""
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return study


def steps(study_dir: Path, m: int) -> dict[str, float]:
    """Run every step once and return its seconds."""
    from longitudinal import impute_scores, impute_sessions, load_study
    from longitudinal.change import imputed_change, tipping_point
    from models import LinearMixedModel, pool_imputations

    out = {}
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the demo's scoring notes
        study = load_study(study_dir)
    out["load"] = time.perf_counter() - t
    t = time.perf_counter()
    imputed = impute_scores(study, m=m, seed=1)
    out["impute"] = time.perf_counter() - t
    states = imputed.columns[imputed.columns["role"] == "state"]
    scales = list(dict.fromkeys(states["scale"]))
    t = time.perf_counter()
    for scale in scales:
        args = {"observed": imputed.wide, "first": f"{scale}@pre", "last": f"{scale}@post"}
        imputed_change(imputed.datasets, **args)
        tipping_point(imputed.datasets, **args)
    out["change"] = time.perf_counter() - t
    t = time.perf_counter()
    frames = [imputed.long(i) for i in range(m)]
    time_of = {"pre": 0.0, "mid": 2.0, "post": 4.0}
    for scale in scales:
        fits = []
        for frame in frames:
            data = frame.assign(time=frame["wave"].astype(str).map(time_of))
            data = data.rename(columns={scale: "score", imputed.id_col: "id"})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a singular fit of one imputation
                fits.append(LinearMixedModel("score ~ time + (1 | id)").fit(data))
        pool_imputations(fits)
    out["growth"] = time.perf_counter() - t
    t = time.perf_counter()
    sessions = impute_sessions(study, m=m, seed=1)
    story = study.story_frame().drop(columns="words")
    fits = []
    for table in sessions.datasets:
        data = story.merge(table[["session_id", "words"]], on="session_id")
        data = data.assign(words=data["words"] / 1000, id=data[imputed.id_col])
        fits.append(LinearMixedModel("empathy ~ words + (1 | id)").fit(data))
    pool_imputations(fits)
    out["sessions"] = time.perf_counter() - t
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=20, help="imputations (default 20)")
    parser.add_argument("--runs", type=int, default=3, help="repetitions (median; default 3)")
    parser.add_argument("--dropouts", type=int, default=8, help="post surveys removed")
    parser.add_argument("--skips", type=int, default=6, help="mid surveys removed")
    parser.add_argument("--blank-every", type=int, default=7, help="word counts blanked")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        study = make_study(
            Path(tmp), dropouts=args.dropouts, skips=args.skips, blank_every=args.blank_every
        )
        runs = [steps(study, args.m) for _ in range(args.runs)]
        print(f"demo study (seed 2024), {args.dropouts} post and {args.skips} mid surveys "
              f"removed, every {args.blank_every}th word count blanked; m = {args.m}; "
              f"median of {args.runs} runs, seconds")  # fmt: skip
        for key in runs[0]:
            values = sorted(r[key] for r in runs)
            print(f"  {key:<8} {values[len(values) // 2]:8.3f}")
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from bench_imputation import steps; from pathlib import Path; "
            "steps(Path(sys.argv[2]), int(sys.argv[3]))"
        )
        walls = []
        for _ in range(args.runs):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", code, str(ROOT / "benchmarks"), str(study), str(args.m)],
                check=True,
            )
            walls.append(time.perf_counter() - t)
        walls.sort()
        print(
            f"  fresh process, as a user runs it (imports, load, impute, change, growth, "
            f"sessions): "
            f"{walls[len(walls) // 2]:.2f} s (median of {args.runs})"
        )


if __name__ == "__main__":
    main()
