"""Benchmark: the measurement-invariance ladder against lavaan + semTools, in the same run.

Cases (psychTools ``sai``; tests/data/README.md)
  flat      4 anxiety items x 3 waves, 167 complete participants
  rim       4 calm items x 2 waves, 334 complete participants
  flat_all  flat with its 3 incomplete participants, full-information ML (170)
  rim_all   rim with its 8 incomplete participants, full-information ML (342)

Engines
  ours    models.sem.measurement_invariance(...) with the default cut-offs: the four levels,
          the comparisons, and (when a step is rejected) the score tests and partial model;
          median of --runs calls
  lavaan  benchmarks/invariance_timings.R, run by this script (Rscript on the PATH): the four
          levels written by semTools::measEq.syntax, fitted by lavaan::cfa, fitMeasures of
          each and lavTestLRT; median of --runs; also its cfa calls alone

The script prints seconds and the ratios lavaan / ours (target: at least 1, i.e. no slower
than lavaan for the full ladder), and our chi-square of the strict model minus lavaan's
(from tests/models/reference/invariance_fits.csv).

Run:  .venv/bin/python benchmarks/bench_invariance.py [--runs 3]
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

from models.sem import measurement_invariance

ROOT = Path(__file__).resolve().parents[1]
ITEMS = {
    "flat": ["tense", "anxious", "nervous", "jittery"],
    "rim": ["calm", "at.ease", "relaxed", "content"],
}
CASES = ["flat", "rim", "flat_all", "rim_all"]


def ours(case: str, estimator: str, runs: int) -> tuple[float, float]:
    data = pd.read_csv(ROOT / "tests" / "data" / f"psychTools_sai_{case}.csv")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        res = measurement_invariance(
            data,
            items=ITEMS[case.removesuffix("_all")],
            id_col="id",
            wave_col="time",
            estimator=estimator,
            nan_policy="fiml" if case.endswith("_all") else "raise",
        )
        times.append(time.perf_counter() - start)
    strict = res.fits.set_index("model").loc["strict", "chisq_ml"]
    return float(np.median(times)), float(strict)


def lavaan(runs: int) -> pd.DataFrame | None:
    if shutil.which("Rscript") is None:
        return None
    out = subprocess.run(
        ["Rscript", str(ROOT / "benchmarks" / "invariance_timings.R"), str(runs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return pd.read_csv(io.StringIO(out.stdout)).set_index(["case", "estimator"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    ref = pd.read_csv(ROOT / "tests" / "models" / "reference" / "invariance_fits.csv")
    r_times = lavaan(args.runs)
    header = (
        f"{'case':<9} {'est':<4} {'ours s':>8} {'lavaan s':>9} {'cfa only s':>10} "
        f"{'lavaan/ours':>11} {'chisq - lavaan':>15}"
    )
    print(header)
    print("-" * len(header))
    for case in CASES:
        for est in ("ML", "MLR"):
            t, chisq = ours(case, est, args.runs)
            label = est if not case.endswith("_all") else {"ML": "FIML", "MLR": "FIML-MLR"}[est]
            theirs = ref[
                (ref["dataset"] == case) & (ref["estimator"] == label) & (ref["level"] == "strict")
            ]
            diff = chisq - float(theirs["chisq"].iloc[0])
            if r_times is None:
                print(f"{case:<9} {est:<4} {t:>8.3f} {'-':>9} {'-':>10} {'-':>11} {diff:>15.2e}")
                continue
            row = r_times.loc[(case, est)]
            print(
                f"{case:<9} {est:<4} {t:>8.3f} {row['seconds']:>9.3f} "
                f"{row['seconds_fits']:>10.3f} {row['seconds'] / t:>11.1f} {diff:>15.2e}"
            )
    if r_times is None:
        print("Rscript not found: lavaan was not timed")
    else:
        print(f"lavaan {r_times['lavaan'].iloc[0]} timed in the same run")


if __name__ == "__main__":
    main()
