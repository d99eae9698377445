"""Benchmark: LinearMixedModel with a smooth term against gamm4, in the same run.

Cases (REML, k = 10, mgcv's default)
  study    empathy ~ s(week) + (1 | participant) + (1 | story), 804 ratings (41 participants;
           simulated, seeded: benchmarks/data/study_sized.csv, the study of bench_lmm.py)
  esm100k  y ~ s(day, bs="cr") + (1 | person), 100,000 prompts (100,000 distinct times: a thin
           plate smooth would need mgcv's random knot subsample, which is not offered, so the
           cubic regression spline): 500 people x 200 experience-sampling
           prompts at random times over 28 days, a daily rhythm on a slow decline (simulated,
           seeded; written by --write-data to benchmarks/data/esm100k.csv, not committed)

Engines
  ours   LinearMixedModel(formula).fit(data) and its smooth_table_ (edf, F, p-value, as
         summary(gam)); "rlrt" is smooth_linearity_test() (the straight-line model refitted and
         10,000 simulated values)
  gamm4  benchmarks/gamm4_timings.R, run by this script (Rscript on the PATH): gamm4 followed by
         summary(fit$gam); "rlrt" the null model refitted by lmer with the same X and
         RLRsim's RLRTSim (10,000 values)

Every fit is timed --runs times (median), ours first, then R's. The script prints seconds, the
ratios gamm4 / ours (above 1: ours is faster), our REML criterion minus gamm4's and our edf
minus gamm4's.

Run:  .venv/bin/python benchmarks/bench_smooth.py --write-data   # once, for esm100k
      .venv/bin/python benchmarks/bench_smooth.py [--runs 3] [--cases study esm100k]
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from models.lmm import LinearMixedModel

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
CASES = {
    "study": ("study_sized.csv", "empathy ~ s(week) + (1 | participant) + (1 | story)"),
    "esm100k": ("esm100k.csv", 'y ~ s(day, bs="cr") + (1 | person)'),
}


def write_esm(path: Path, *, people: int = 500, prompts: int = 200, seed: int = 20261128) -> None:
    """Simulate the experience-sampling data: a daily rhythm on a slow decline, people differ."""
    rng = np.random.default_rng(seed)
    person = np.repeat(np.arange(people), prompts)
    day = np.sort(rng.uniform(0.0, 28.0, (people, prompts)), axis=1).ravel()
    level = rng.normal(0.0, 0.8, people)[person]
    truth = 4.0 - 0.02 * day + 0.3 * np.sin(2 * np.pi * day / 7.0)
    y = truth + level + rng.normal(0.0, 1.0, person.size)
    frame = pd.DataFrame({"person": [f"q{p:03d}" for p in person], "day": day, "y": y})
    frame.to_csv(path, index=False)


def ours(case: str, runs: int) -> dict[str, float]:
    file, formula = CASES[case]
    data = pd.read_csv(DATA / file)
    fits, tests = [], []
    for _ in range(runs):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LinearMixedModel(formula).fit(data)
            table = model.smooth_table_
        fits.append(time.perf_counter() - start)
        start = time.perf_counter()
        model.smooth_linearity_test(seed=1)
        tests.append(time.perf_counter() - start)
    return {
        "seconds": float(np.median(fits)),
        "rlrt_seconds": float(np.median(tests)),
        "reml_criterion": model.reml_criterion_,
        "edf": float(table["edf"].iloc[0]),
        "n": model.n_obs_,
    }


def gamm4(runs: int, cases: list[str]) -> pd.DataFrame | None:
    if shutil.which("Rscript") is None:
        return None
    out = subprocess.run(
        ["Rscript", str(ROOT / "benchmarks" / "gamm4_timings.R"), str(runs), *cases],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return pd.read_csv(io.StringIO(out.stdout)).set_index("case")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--write-data", action="store_true")
    args = parser.parse_args()
    if args.write_data:
        write_esm(DATA / "esm100k.csv")
        print(f"wrote {DATA / 'esm100k.csv'}")
        return
    mine = {case: ours(case, args.runs) for case in args.cases}
    r_times = gamm4(args.runs, args.cases)
    header = (
        f"{'case':<8} {'n':>7} {'ours s':>8} {'gamm4 s':>8} {'(fit)':>7} {'gamm4/ours':>10} "
        f"{'rlrt ours':>9} {'rlrt R':>7} {'R/ours':>7} {'REML - R':>10} {'edf - R':>9}"
    )
    print(header)
    print("-" * len(header))
    for case in args.cases:
        m = mine[case]
        if r_times is None:
            print(f"{case:<8} {m['n']:>7} {m['seconds']:>8.3f} {m['rlrt_seconds']:>9.3f}")
            continue
        r = r_times.loc[case]
        print(
            f"{case:<8} {m['n']:>7} {m['seconds']:>8.3f} {r['seconds']:>8.3f} "
            f"{r['fit_seconds']:>7.3f} {r['seconds'] / m['seconds']:>10.2f} "
            f"{m['rlrt_seconds']:>9.3f} {r['rlrt_seconds']:>7.3f} "
            f"{r['rlrt_seconds'] / m['rlrt_seconds']:>7.2f} "
            f"{m['reml_criterion'] - r['reml_criterion']:>10.2e} {m['edf'] - r['edf']:>9.2e}"
        )
    if r_times is None:
        print("Rscript not found: gamm4 was not timed")
    else:
        print(f"timed in the same run: {r_times['versions'].iloc[0]}")


if __name__ == "__main__":
    main()
