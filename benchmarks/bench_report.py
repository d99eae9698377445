"""Time `longitudinal report --no-bayes` as a user runs it, on simulated studies of two sizes.

Usage:
    .venv/bin/python benchmarks/bench_report.py                     # 41 and 2,000 participants
    .venv/bin/python benchmarks/bench_report.py --sizes 41 500 --runs 3

Each run is a fresh process (`python -m longitudinal.cli report STUDY --out DIR --no-bayes`), so
the time includes imports, loading and scoring the study, the change analyses, the empathy
models, the figures and writing the folder; peak memory is the child's maximum resident set.
The baseline, measured in the same run, is the same process running only `load_study` on the
study: the ratio says how much the report costs beyond reading and scoring its inputs.
Targets (issue: a report that scales): 41 people <= 10 s; 2,000 people <= 60 s and <= 1 GB.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOAD_ONLY = "import sys; from longitudinal.study.loaded import load_study; load_study(sys.argv[1])"


def _child(args: list[str]) -> tuple[float, float]:
    """Wall time (s) and peak memory (MB) of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[41, 2000])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from longitudinal.simulate import simulate_study

    print(f"{'people':>7} {'report s':>9} {'load s':>7} {'ratio':>6} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            study = simulate_study(Path(tmp) / f"study{n}", seed=args.seed, n_participants=n)
            report_times, load_times, peaks = [], [], []
            for run in range(args.runs):
                out = Path(tmp) / f"report{n}_{run}"
                seconds, peak = _child(
                    [sys.executable, "-m", "longitudinal.cli", "report", str(study),
                     "--out", str(out), "--no-bayes"]
                )  # fmt: skip
                report_times.append(seconds)
                peaks.append(peak)
                load_times.append(_child([sys.executable, "-c", LOAD_ONLY, str(study)])[0])
            report, load = statistics.median(report_times), statistics.median(load_times)
            print(f"{n:>7} {report:>9.1f} {load:>7.1f} {report / load:>6.1f} {max(peaks):>8.0f}")


if __name__ == "__main__":
    main()
