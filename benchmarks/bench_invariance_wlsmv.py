"""Benchmark: the ordinal (WLSMV) invariance ladder against lavaan + semTools, in the same run.

Cases (tests/data/README.md)
  flat   psychTools sai: 4 anxiety items (1-4) x 3 waves, 167 complete participants
  rim    psychTools sai: 4 calm items (1-4) x 2 waves, 334 complete participants
  help   mosaicData HELPfull: 5 SF-36 general health items (1-5) x 2 waves, 254 patients

In-process
  ours    models.sem.measurement_invariance(..., estimator="WLSMV"): the sample statistics
          once, the five levels (configural, thresholds, metric, scalar, strict), the
          difference tests, and at a rejected step the score tests and the partial search;
          median of --runs calls
  lavaan  benchmarks/wlsmv_timings.R: the five levels written by semTools::measEq.syntax
          (Wu & Estabrook identification) and fitted by lavaan::cfa(estimator = "WLSMV"),
          fitMeasures of each, lavTestLRT of consecutive models and lavTestScore of the first
          rejected step, without any partial search; median of --runs

Through the command, start-up included (one fresh process each, median of --runs; wall clock
and, in brackets, the CPU seconds of the process)
  ours    longitudinal reliability FILE --instrument KEY (tests/data/raw/sai4.toml,
          benchmarks/data/sai_rim.toml, benchmarks/data/help_gh.toml)
          --id-col id --wave-col time --invariance --estimator WLSMV --out DIR, with this
          checkout first on PYTHONPATH; alpha, omega and the multilevel reliability too
  before  the same with --baseline CHECKOUT (an earlier commit's working tree) first on
          PYTHONPATH instead, run alternately with ours in the same loop
  lavaan  Rscript benchmarks/wlsmv_timings.R --command FILE (reads the file, fits the ladder,
          prints its fit table), in the same loop
  The processes run without PYTHONDONTWRITEBYTECODE and after one untimed run of each, so
  that Python reads its compiled modules as an installed package does.

Targets: in-process, lavaan / ours of at least 10; through the command, ours / lavaan of at
most 0.3. Also printed: our scaled chi-square of the strict model minus lavaan's (from
tests/models/reference/wlsmv_ladder.json).

Run:  .venv/bin/python benchmarks/bench_invariance_wlsmv.py [--runs 5] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from models.sem import measurement_invariance

ROOT = Path(__file__).resolve().parents[1]
DATA = {
    "flat": ROOT / "tests" / "data" / "psychTools_sai_flat.csv",
    "rim": ROOT / "tests" / "data" / "psychTools_sai_rim.csv",
    "help": ROOT / "tests" / "data" / "mosaicData_HELPfull_gh.csv",
}
INSTRUMENTS = {
    "flat": ROOT / "tests" / "data" / "raw" / "sai4.toml",
    "rim": ROOT / "benchmarks" / "data" / "sai_rim.toml",
    "help": ROOT / "benchmarks" / "data" / "help_gh.toml",
}
ITEMS = {
    "flat": ["tense", "anxious", "nervous", "jittery"],
    "rim": ["calm", "at.ease", "relaxed", "content"],
    "help": ["B1", "B11A", "B11B", "B11C", "B11D"],
}
SCRIPT = ROOT / "benchmarks" / "wlsmv_timings.R"


def ours(case: str, runs: int) -> tuple[float, float]:
    data = pd.read_csv(DATA[case])
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        res = measurement_invariance(
            data, items=ITEMS[case], id_col="id", wave_col="time", estimator="WLSMV"
        )
        times.append(time.perf_counter() - start)
    strict = res.fits.set_index("model").loc["strict", "chisq_scaled"]
    return float(np.median(times)), float(strict)


def _timed(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run one process; return its wall-clock and CPU (user + system) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, env=env, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def _command(tree: Path, case: str) -> tuple[float, float]:
    """`longitudinal reliability` of one case with `tree` first on the path, once."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryDirectory() as folder:
        args = [
            str(Path(sys.executable).parent / "longitudinal"),
            "reliability",
            str(DATA[case]),
            "--instrument",
            str(INSTRUMENTS[case]),
            "--id-col",
            "id",
            "--wave-col",
            "time",
            "--invariance",
            "--estimator",
            "WLSMV",
            "--out",
            str(Path(folder) / "out"),
        ]
        return _timed(args, env)


def commands(case: str, runs: int, baseline: Path | None, with_r: bool) -> dict[str, list]:
    """Alternate ours, the baseline's and lavaan's command, `runs` times, after a warm-up."""
    trees = {"ours": ROOT, **({"before": baseline} if baseline is not None else {})}
    for tree in trees.values():
        _command(tree, case)  # writes the bytecode caches, warms the file cache
    times: dict[str, list] = {name: [] for name in [*trees, *(["lavaan"] if with_r else [])]}
    for _ in range(runs):
        for name, tree in trees.items():
            times[name].append(_command(tree, case))
        if with_r:
            times["lavaan"].append(_timed(["Rscript", str(SCRIPT), "--command", str(DATA[case])]))
    return times


def lavaan(runs: int) -> pd.DataFrame | None:
    if shutil.which("Rscript") is None:
        return None
    script = str(ROOT / "benchmarks" / "wlsmv_timings.R")
    out = subprocess.run(
        ["Rscript", script, str(runs)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return pd.read_csv(io.StringIO(out.stdout)).set_index("case")


def _median(pairs: list) -> tuple[float, float]:
    return float(np.median([w for w, _ in pairs])), float(np.median([c for _, c in pairs]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a checkout of an earlier commit, timed through the command alternately with this one",
    )
    args = parser.parse_args()
    reference = json.loads(
        (ROOT / "tests" / "models" / "reference" / "wlsmv_ladder.json").read_text("utf-8")
    )
    r_times = lavaan(args.runs)
    header = (
        f"{'case':<5} {'ours s':>7} {'lavaan s':>9} {'lavaan/ours':>11} "
        f"{'cmd ours s (cpu)':>17} {'cmd before s (cpu)':>19} {'cmd lavaan s (cpu)':>19} "
        f"{'ours/lavaan':>11} {'before/lavaan':>13} {'chisq diff':>11}"
    )
    print(header)
    print("-" * len(header))
    for case in ITEMS:
        t, chisq = ours(case, args.runs)
        strict = reference["datasets"][case]["models"]["strict"]["fit"]["chisq.scaled"]
        diff = chisq - float(strict)
        timed = commands(case, args.runs, args.baseline, r_times is not None)
        mine = _median(timed["ours"])
        before = _median(timed["before"]) if "before" in timed else None
        theirs = float(r_times.loc[case, "seconds"]) if r_times is not None else np.nan
        their_cmd = _median(timed["lavaan"]) if "lavaan" in timed else (np.nan, np.nan)
        before_text = f"{before[0]:.2f} ({before[1]:.2f})" if before else "-"
        before_ratio = f"{before[0] / their_cmd[0]:.2f}" if before else "-"
        print(
            f"{case:<5} {t:>7.3f} {theirs:>9.3f} {theirs / t:>11.1f} "
            f"{f'{mine[0]:.2f} ({mine[1]:.2f})':>17} {before_text:>19} "
            f"{f'{their_cmd[0]:.2f} ({their_cmd[1]:.2f})':>19} {mine[0] / their_cmd[0]:>11.2f} "
            f"{before_ratio:>13} {diff:>11.1e}"
        )
    if r_times is None:
        print("Rscript not found: lavaan was not timed")
    else:
        print(f"lavaan {r_times['lavaan'].iloc[0]} timed in the same run")
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
