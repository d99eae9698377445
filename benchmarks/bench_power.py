"""Benchmark: simulate_power serial, on local processes and on a Dask LocalCluster, in one run.

Case
  study  the study-sized pilot of benchmarks/bench_lmm.py (benchmarks/data/study_sized.csv:
         804 ratings, 41 participants, 120 stories), empathy ~ trait + week +
         (1 + week | participant) + (1 | story), REML; trait set to 0.2, 41 participants,
         Satterthwaite t test (what `longitudinal power --pilot` runs)

Back ends
  serial      scheduler=None: every refit in this process
  processes   scheduler="processes:N": N spawned processes, BLAS pinned to one thread each
  dask        scheduler="local:N": a Dask LocalCluster of N single-threaded workers on 127.0.0.1
  lme4        a plain simulate/refit/lmerTest loop in R (benchmarks/power_lme4.R, committed in
              benchmarks/data/power_lme4_timings.csv with its date), not re-run here

Each back end runs the same simulations with the same seed; the script prints simulations per
second (wall time of the whole call, start-up of the workers included), the ratio to serial, and
checks that the three tables are identical. The target: at least 250 simulations/s on 2 cores.

Run:  .venv/bin/python benchmarks/bench_power.py [--sims 400] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pandas as pd

from models.lmm import LinearMixedModel
from models.power import simulate_power

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
FORMULA = "empathy ~ trait + week + (1 + week | participant) + (1 | story)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400, help="simulations per back end")
    parser.add_argument("--workers", type=int, default=2, help="processes and Dask workers")
    parser.add_argument("--seed", type=int, default=20240501)
    args = parser.parse_args()

    data = pd.read_csv(DATA / "study_sized.csv")
    pilot = LinearMixedModel(FORMULA).fit(data)
    options = {
        "data": data,
        "effect": {"trait": 0.2},
        "n_participants": [41],
        "n_sims": args.sims,
        "seed": args.seed,
        "progress": False,
    }
    simulate_power(pilot, **{**options, "n_sims": 5})  # warm-up: one-off imports

    n = args.workers
    runs = {}
    backends = (("serial", None), ("processes", f"processes:{n}"), ("dask", f"local:{n}"))
    for name, scheduler in backends:
        start = time.perf_counter()
        result = simulate_power(pilot, scheduler=scheduler, **options)
        runs[name] = (time.perf_counter() - start, result)

    base = runs["serial"][0]
    print(f"study-sized model, {args.sims} simulations, {n} workers, {os.cpu_count()} cores")
    header = f"{'back end':10s} {'seconds':>8s} {'sims/s':>8s} {'speed-up':>9s} {'power':>6s}"
    print(header)
    print("-" * len(header))
    for name, (seconds, result) in runs.items():
        print(
            f"{name:10s} {seconds:8.2f} {args.sims / seconds:8.1f} {base / seconds:9.2f} "
            f"{result.table['power'].iloc[0]:6.3f}"
        )
    same = all(
        runs["serial"][1].simulations.equals(runs[k][1].simulations) for k in ("processes", "dask")
    )
    print(f"identical simulations across back ends: {same}")
    path = DATA / "power_lme4_timings.csv"
    if path.exists():
        r = pd.read_csv(path).iloc[0]
        rate = float(r["sims_per_second"])
        print(
            f"lme4 + lmerTest loop (R, one process): {rate:.1f} sims/s, {r['n_sims']} simulations "
            f"({r['lme4']}, lmerTest {r['lmerTest']}, {r['r_version']}, measured {r['date']}); "
            f"serial here / lme4: {args.sims / base / rate:.2f}"
        )


if __name__ == "__main__":
    main()
