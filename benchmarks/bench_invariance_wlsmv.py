"""Benchmark: the ordinal (WLSMV) invariance ladder against lavaan + semTools, in the same run.

Cases (psychTools ``sai``, answers 1-4; tests/data/README.md)
  flat   4 anxiety items x 3 waves, 167 complete participants
  rim    4 calm items x 2 waves, 334 complete participants

In-process
  ours    models.sem.measurement_invariance(..., estimator="WLSMV"): the sample statistics
          once, the five levels (configural, thresholds, metric, scalar, strict), the
          difference tests, and at a rejected step the score tests and the partial search;
          median of --runs calls
  lavaan  benchmarks/wlsmv_timings.R: the five levels written by semTools::measEq.syntax
          (Wu & Estabrook identification) and fitted by lavaan::cfa(estimator = "WLSMV"),
          fitMeasures of each, lavTestLRT of consecutive models and lavTestScore of the first
          rejected step, without any partial search; median of --runs

Through the command, start-up included (one fresh process each, median of --runs)
  ours    longitudinal reliability FILE --instrument KEY (tests/data/raw/sai4.toml,
          benchmarks/data/sai_rim.toml)
          --id-col id --wave-col time --invariance --estimator WLSMV --out DIR
  lavaan  Rscript benchmarks/wlsmv_timings.R --command FILE (reads the file, fits the ladder,
          prints its fit table)

Targets: in-process, lavaan / ours of at least 10; through the command, ours / lavaan of at
most 0.3. Also printed: our scaled chi-square of the strict model minus lavaan's (from
tests/models/reference/wlsmv_ladder.json).

Run:  .venv/bin/python benchmarks/bench_invariance_wlsmv.py [--runs 3]
"""

from __future__ import annotations

import argparse
import io
import json
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
INSTRUMENTS = {
    "flat": ROOT / "tests" / "data" / "raw" / "sai4.toml",
    "rim": ROOT / "benchmarks" / "data" / "sai_rim.toml",
}
ITEMS = {
    "flat": ["tense", "anxious", "nervous", "jittery"],
    "rim": ["calm", "at.ease", "relaxed", "content"],
}


def _data(case: str) -> Path:
    return ROOT / "tests" / "data" / f"psychTools_sai_{case}.csv"


def ours(case: str, runs: int) -> tuple[float, float]:
    data = pd.read_csv(_data(case))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        res = measurement_invariance(
            data, items=ITEMS[case], id_col="id", wave_col="time", estimator="WLSMV"
        )
        times.append(time.perf_counter() - start)
    strict = res.fits.set_index("model").loc["strict", "chisq_scaled"]
    return float(np.median(times)), float(strict)


def ours_command(case: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            args = [
                str(Path(sys.executable).parent / "longitudinal"),
                "reliability",
                str(_data(case)),
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
            start = time.perf_counter()
            subprocess.run(args, check=True, capture_output=True)
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def lavaan(runs: int) -> pd.DataFrame | None:
    if shutil.which("Rscript") is None:
        return None
    script = str(ROOT / "benchmarks" / "wlsmv_timings.R")
    out = subprocess.run(
        ["Rscript", script, str(runs)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return pd.read_csv(io.StringIO(out.stdout)).set_index("case")


def lavaan_command(case: str, runs: int) -> float:
    script = str(ROOT / "benchmarks" / "wlsmv_timings.R")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            ["Rscript", script, "--command", str(_data(case))],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    reference = json.loads(
        (ROOT / "tests" / "models" / "reference" / "wlsmv_ladder.json").read_text("utf-8")
    )
    r_times = lavaan(args.runs)
    header = (
        f"{'case':<5} {'ours s':>7} {'lavaan s':>9} {'lavaan/ours':>11} "
        f"{'cmd ours s':>10} {'cmd lavaan s':>12} {'ours/lavaan':>11} {'chisq diff':>11}"
    )
    print(header)
    print("-" * len(header))
    for case in ITEMS:
        t, chisq = ours(case, args.runs)
        command = ours_command(case, args.runs)
        strict = reference["datasets"][case]["models"]["strict"]["fit"]["chisq.scaled"]
        diff = chisq - float(strict)
        if r_times is None:
            print(f"{case:<5} {t:>7.3f} {'-':>9} {'-':>11} {command:>10.2f} {'-':>12} {'-':>11} ")
            continue
        theirs = float(r_times.loc[case, "seconds"])
        their_command = lavaan_command(case, args.runs)
        print(
            f"{case:<5} {t:>7.3f} {theirs:>9.3f} {theirs / t:>11.1f} {command:>10.2f} "
            f"{their_command:>12.2f} {command / their_command:>11.2f} {diff:>11.1e}"
        )
    if r_times is None:
        print("Rscript not found: lavaan was not timed")
    else:
        print(f"lavaan {r_times['lavaan'].iloc[0]} timed in the same run")


if __name__ == "__main__":
    main()
