"""Coverage of a change pooled over multiple imputations, in many simulated studies.

The suite's test (tests/models/test_imputation.py) runs 40 panels so that it stays cheap; this
script runs the same design (read from the test's file) at the size the claim needs:
``--studies`` panels (500 by default) of ``--people`` people measured pre, mid and post, a true
mean pre-post change of 0.4, and dropout at random given the pre score (those higher at pre
leave more often, and their change is smaller, so the complete cases overstate the change).
Each panel is imputed ``--m`` times by ``models.impute_chained`` (``--method``: predictive mean
matching or Bayesian linear regression, seeded by the panel's number) and the paired mean
change is pooled by ``models.pool_imputations`` (Barnard & Rubin's df with the complete-data df
``n - 1``). It prints the coverage of the 95% interval with its Monte Carlo standard error, the
bias of the pooled change and of the complete cases, and the CPU time.

    python benchmarks/sim_imputation_coverage.py [--studies 500] [--people 80] [--m 5]
        [--method pmm|norm]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from models import pool_imputations
from models.imputation import impute_chained

TEST = Path(__file__).resolve().parents[1] / "tests" / "models" / "test_imputation.py"


def _design() -> Any:
    """The test's design (``DELTA``, ``_panel``, ``_change``), read from the test file."""
    spec = importlib.util.spec_from_file_location("imputation_design", TEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=500)
    parser.add_argument("--people", type=int, default=80)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--method", choices=["pmm", "norm"], default="pmm")
    args = parser.parse_args()
    design = _design()
    rng = np.random.default_rng(args.seed)
    start = time.process_time()
    covered, estimates, complete, dropped = 0, [], [], []
    for i in range(args.studies):
        data = design._panel(rng, n=args.people)
        imputed = impute_chained(data, m=args.m, seed=i, burn_in=5, method=args.method)
        row = (
            pool_imputations([design._change(t) for t in imputed.datasets], dfcom=len(data) - 1)
            .to_frame()
            .iloc[0]
        )
        covered += bool(row["ci_low"] <= design.DELTA <= row["ci_high"])
        estimates.append(row["estimate"])
        complete.append((data["post"] - data["pre"]).mean())
        dropped.append(data["post"].isna().mean())
    k = args.studies
    rate = covered / k
    mean = float(np.mean(estimates))
    print(
        f"{k} studies of {args.people} people, m = {args.m}, method {args.method}, "
        f"{100 * np.mean(dropped):.0f}% missing the post wave on average"
    )
    print(
        f"coverage of the 95% interval: {100 * rate:.1f}% "
        f"(Monte Carlo SE {100 * math.sqrt(rate * (1 - rate) / k):.1f} points)"
    )
    truth = design.DELTA
    print(
        f"pooled change: mean {mean:.4f} against the true {truth} (bias {mean - truth:+.4f}, "
        f"Monte Carlo SE {np.std(estimates, ddof=1) / math.sqrt(k):.4f})"
    )
    print(f"complete cases: mean {np.mean(complete):.4f} (bias {np.mean(complete) - truth:+.4f})")
    print(f"CPU: {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
