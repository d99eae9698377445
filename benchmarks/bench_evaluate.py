"""Benchmark: `longitudinal evaluate` serially and on two workers, with and without Bayes.

The prediction benchmark of a simulated 41-person study (the demo's size), its split seeds x
grouped K-fold folds x models fitted here one after another, then on two local processes
(`--scheduler processes:2`) and on a Dask LocalCluster of two workers on 127.0.0.1
(`--scheduler local:2`). Every run's metrics table must equal the serial run's (checked here
too); the figures are wall seconds of `evaluate_predictions` (what the command runs, without
writing the folder), including the workers' start-up.

  without Bayes   the default models (majority vote, grand mean, three LMMs, the clmm),
                  --seeds seeds x (1 holdout + --kfold folds) fits each
  with Bayes      the same, plus the Bayesian ordinal model on every holdout and every fold
                  (bayes_kfold), kept small: --draws draws and tuning steps, 2 chains (the
                  command's own default is 10,000 draws; compiled once per process)

Both back ends are those of `longitudinal power`. On two shared cores the speed-up is bounded
by what the other processes leave; the target is about 2x on two free cores.

Run:  .venv/bin/python benchmarks/bench_evaluate.py [--seeds 2] [--kfold 5] [--draws 300]
      [--no-bayes]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

from longitudinal.predict import evaluate_predictions
from longitudinal.simulate import simulate_study
from longitudinal.study.loaded import load_study

SCHEDULERS = (None, "processes:2", "local:2")


def timed(study, scheduler: str | None, **options) -> tuple[float, pd.DataFrame]:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate_predictions(study, scheduler=scheduler, **options)
    return time.perf_counter() - start, result.metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--kfold", type=int, default=5)
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--no-bayes", action="store_true", help="skip the Bayesian rows")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        study = load_study(simulate_study(Path(tmp) / "study", seed=2024))
    base = {"seeds": args.seeds, "k": args.kfold, "n_boot": 0}
    variants = [("without Bayes", {**base, "bayes": False})]
    if not args.no_bayes:
        small = {"draws": args.draws, "tune": args.draws, "chains": 2, "bayes_kfold": True}
        variants.append(("with Bayes", {**base, "bayes": True, **small}))
    header = f"{'models':<14} {'scheduler':<12} {'seconds':>8} {'speed-up':>9} {'same':>5}"
    print(header)
    print("-" * len(header))
    for label, options in variants:
        serial = None
        for scheduler in SCHEDULERS:
            seconds, metrics = timed(study, scheduler, **options)
            if serial is None:
                serial = (seconds, metrics)
            same = metrics.equals(serial[1])
            name = scheduler or "serial"
            print(
                f"{label:<14} {name:<12} {seconds:>8.1f} "
                f"{serial[0] / seconds:>8.2f}x {'yes' if same else 'NO':>5}"
            )
    print(
        f"41 participants, {args.seeds} seeds, {args.kfold}-fold; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
