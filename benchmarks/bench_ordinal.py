"""Benchmark: OrdinalMixedModel against ordinal::clmm, with statsmodels' OrderedModel for scale.

Cases (logit link, flexible thresholds, Laplace)
  insteval400  y ~ service + (1 | s) + (1 | d) on the 10,489 ratings of lme4::InstEval's first
               400 students (400 students crossed with 1,037 lecturers)
  wine         rating ~ temp + contact + (1 | judge), ordinal's wine data (72 ratings)
  study        empathy ~ trait + week + (1 + week | participant) + (1 | story) on the
               study-sized data of bench_lmm.py, empathy cut at its 10/30/60/85% quantiles into
               5 categories (804 ratings)

Engines
  ours         models.OrdinalMixedModel(formula).fit(data), median of --runs fits
  statsmodels  statsmodels OrderedModel on the fixed effects only (it has no random effects:
               a different, smaller model, shown for scale), median of --runs fits
  clmm         ordinal::clmm with its default controls: figures from benchmarks/clmm_timings.R
               (committed in benchmarks/data/clmm_timings.csv with their date), not re-run here

The script prints seconds, the ratio clmm / ours (target: at least 10 on insteval400) and our
log-likelihood minus clmm's (positive: a higher maximum).

Then the command line, whole process (interpreter start, imports, reading the CSV, the checks,
the fit, the JSON record and the summary), median of --runs runs after a warm-up run, wall
and CPU (user + system) time:
  fit --engine clmm   on insteval400, against clmm's time (target: at most 0.1x); with --r,
                      clmm is timed again in this run (benchmarks/clmm_anchor.R, one fit,
                      wall and CPU), else the committed figure is used
  fit --engine lmm    Reaction ~ Days + (Days | Subject) on sleepstudy (target: at most 1.0 s)
  import pandas       the baseline of a loaded machine, measured in the same run

Run:  .venv/bin/python benchmarks/bench_ordinal.py [--runs 3] [--r] [--cli-only]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from models.ordinal import OrdinalMixedModel

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"

FORMULAS = {
    "insteval400": "y ~ service + (1 | s) + (1 | d)",
    "wine": "rating ~ temp + contact + (1 | judge)",
    "study": "empathy ~ trait + week + (1 + week | participant) + (1 | story)",
}


def load(case: str) -> pd.DataFrame:
    if case == "insteval400":
        inst = pd.read_csv(DATA / "insteval.csv")
        first = np.sort(inst["s"].unique())[:400]
        inst = inst[inst["s"].isin(first)].copy()
        inst["service"] = inst["service"].astype(str)
        return inst
    if case == "wine":
        return pd.read_csv(ROOT / "tests" / "data" / "ordinal_wine.csv")
    study = pd.read_csv(DATA / "study_sized.csv")
    cuts = np.quantile(study["empathy"], [0.1, 0.3, 0.6, 0.85])
    study["empathy"] = np.searchsorted(cuts, study["empathy"], side="left") + 1
    return study


def ours(data: pd.DataFrame, formula: str) -> tuple[float, float]:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = OrdinalMixedModel(formula).fit(data)
    return time.perf_counter() - start, m.loglik_


def statsmodels_fixed(data: pd.DataFrame, formula: str) -> float:
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    fixed = formula.split("(")[0].rstrip(" +")
    response, rhs = (part.strip() for part in fixed.split("~"))
    X = pd.get_dummies(data[[t.strip() for t in rhs.split("+")]], drop_first=True, dtype=float)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        OrderedModel(data[response].to_numpy(), X, distr="logit").fit(method="bfgs", disp=False)
    return time.perf_counter() - start


CLI = "import sys; from longitudinal.cli import main; sys.argv[0] = 'longitudinal'; main()"


def whole_process(argv: list[str], *, runs: int, out: Path | None = None) -> tuple[float, float]:
    """Median wall and CPU seconds of ``runs`` runs of ``argv`` (after one warm-up run)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the bytecode cache, as an install writes it
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    walls, cpus = [], []
    for i in range(runs + 1):
        if out is not None:
            out.unlink(missing_ok=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
        if i:
            walls.append(wall)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def clmm_now(runs: int) -> tuple[float, float]:
    """ordinal::clmm on insteval400 timed in this run: wall and CPU seconds of the fit."""
    done = subprocess.run(
        ["Rscript", str(ROOT / "benchmarks" / "clmm_anchor.R"), str(runs)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"clmm_anchor.R failed:\n{done.stderr}")
    wall, cpu, _ = done.stdout.strip().splitlines()[-1].split(",")
    return float(wall), float(cpu)


def command_line(runs: int, *, rerun_r: bool, committed: pd.DataFrame) -> None:
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        data = folder / "insteval400.csv"
        load("insteval400").to_csv(data, index=False)
        fit_json = folder / "fit.json"
        clmm_cmd = [*[py, "-c", CLI], "fit", str(data), "--engine", "clmm"]
        clmm_cmd += ["--formula", FORMULAS["insteval400"], "--out", str(fit_json)]
        sleep = ROOT / "tests" / "data" / "lme4_sleepstudy.csv"
        lmm_cmd = [*[py, "-c", CLI], "fit", str(sleep), "--engine", "lmm"]
        lmm_cmd += ["--formula", "Reaction ~ Days + (Days | Subject)", "--out", str(fit_json)]
        pandas_s = whole_process([py, "-c", "import pandas"], runs=runs)
        clmm_cli = whole_process(clmm_cmd, runs=runs, out=fit_json)
        lmm_cli = whole_process(lmm_cmd, runs=runs, out=fit_json)
    if rerun_r:
        anchor, source = clmm_now(1), "ordinal::clmm timed in this run (one fit)"
    else:
        seconds = float(committed.loc["insteval400", "seconds"])
        anchor = (seconds, float("nan"))
        source = f"ordinal::clmm, committed figure of {committed.loc['insteval400', 'date']}"
    print()
    print("the command line, whole process (median of runs after a warm-up):")
    header = f"{'command':<34} {'wall s':>7} {'cpu s':>7} {'target':>16} {'met':>4}"
    print(header)
    print("-" * len(header))
    ratio_wall = clmm_cli[0] / anchor[0]
    ratio_cpu = clmm_cli[1] / anchor[1] if anchor[1] == anchor[1] else float("nan")
    lmm_met = "yes" if lmm_cli[0] <= 1.0 else "no"
    clmm_met = "yes" if ratio_wall <= 0.1 else "no"
    rows = [
        ("import pandas (baseline)", pandas_s, "", ""),
        ("fit --engine clmm (insteval400)", clmm_cli, "<= 0.1x clmm", clmm_met),
        ("fit --engine lmm (sleepstudy)", lmm_cli, "<= 1.0 s", lmm_met),
    ]
    for name, (wall, cpu), target, met in rows:
        print(f"{name:<34} {wall:>7.3f} {cpu:>7.3f} {target:>16} {met:>4}")
    print(f"clmm: {anchor[0]:.2f} s wall, {anchor[1]:.2f} s CPU ({source})")
    print(
        f"fit --engine clmm / clmm: {ratio_wall:.3f}x wall, {ratio_cpu:.3f}x CPU "
        f"(target <= 0.1x: {'met' if ratio_wall <= 0.1 else 'not met'} on wall time)"
    )
    print(
        f"fit --engine lmm / import pandas: {lmm_cli[0] / pandas_s[0]:.2f}x wall; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--r", action="store_true", help="time ordinal::clmm in this run too")
    parser.add_argument("--cli-only", action="store_true", help="only the command line timings")
    args = parser.parse_args()
    clmm = pd.read_csv(DATA / "clmm_timings.csv").set_index("case")
    if args.cli_only:
        command_line(args.runs, rerun_r=args.r, committed=clmm)
        return
    header = (
        f"{'case':<12} {'n':>6} {'ours s':>8} {'statsm. s':>9} {'clmm s':>8} "
        f"{'clmm/ours':>9} {'loglik - clmm':>14}"
    )
    print(header)
    print("-" * len(header))
    for case, formula in FORMULAS.items():
        data = load(case)
        times, logliks = zip(*(ours(data, formula) for _ in range(args.runs)), strict=True)
        sm = float(np.median([statsmodels_fixed(data, formula) for _ in range(args.runs)]))
        t = float(np.median(times))
        ref = clmm.loc[case]
        print(
            f"{case:<12} {len(data):>6} {t:>8.3f} {sm:>9.3f} {ref['seconds']:>8.2f} "
            f"{ref['seconds'] / t:>9.1f} {logliks[0] - float(ref['loglik']):>14.2e}"
        )
    row = clmm.iloc[0]
    print(f"clmm figures: ordinal {row['ordinal']} on {row['r_version']}, measured {row['date']}")
    command_line(args.runs, rerun_r=args.r, committed=clmm)


if __name__ == "__main__":
    main()
