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

Run:  .venv/bin/python benchmarks/bench_ordinal.py [--runs 3]
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    clmm = pd.read_csv(DATA / "clmm_timings.csv").set_index("case")
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


if __name__ == "__main__":
    main()
