"""Two-level imputation ("2l.norm") against single-level imputation, in many simulated studies.

The suite's test (tests/models/test_imputation.py) runs four studies so that it stays cheap;
this script runs the same design (read from the test's file) at the size the claim needs.
Each study: ``--people`` participants with 4 to 12 sessions each; a session's rating
``y = 3 + 0.4 x + u + e`` with ``x`` a session-level behaviour (half between, half within
participants, mean 0), ``u ~ N(0, 0.8^2)`` the participant's level and ``e ~ N(0, 1)``; an
auxiliary ``z = y + N(0, 1)`` (a second measure of the session that the analysis leaves out).
About a third of the ratings are missing at random given ``z`` (a high ``z`` is missed more
often), and a tenth of the behaviour ``x`` completely at random. The analysis is the linear
mixed model ``y ~ x + (1 | participant)`` (the slope, truth 0.4) and ``y ~ 1 + (1 |
participant)`` (the mean, truth 3, and the between-participant variance), by
``models.lmm.LinearMixedModel`` (REML), pooled over ``--m`` imputations by
``models.pool_imputations`` with each term's complete-data df its Satterthwaite df (as the
report pools). Three analyses per study: ``impute_chained(method="2l.norm",
cluster="participant")``; ``impute_chained(method="norm")`` without the clusters; and the
sessions with both ``x`` and ``y`` observed (complete cases), biased because whether a rating
is missing depends on ``z``, which the analysis leaves out.

Prints, per analysis, the bias of the slope and of the mean with their Monte Carlo SE, the
coverage of their 95% intervals (with its Monte Carlo SE), and the between-participant
variance of the completed data over that of the same study before any cell was deleted (mean,
5th and 95th percentiles over the studies, and the SD of a mean over four studies, the test's
size); then the CPU time.

    python benchmarks/sim_two_level_imputation.py [--studies 500] [--people 50] [--m 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from models import pool_imputations
from models.imputation import impute_chained
from models.lmm import LinearMixedModel

TEST = Path(__file__).resolve().parents[1] / "tests" / "models" / "test_imputation.py"
FORMULAS = {"slope": "y ~ x + (1 | participant)", "mean": "y ~ 1 + (1 | participant)"}


def _design() -> Any:
    """The test's design (``SLOPE``, ``MEAN``, ``TAU2``, ``_sessions``), read from the test file."""
    spec = importlib.util.spec_from_file_location("two_level_design", TEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pooled(tables: list[pd.DataFrame]) -> dict[str, float]:
    """The pooled slope and mean (estimate, interval) and the mean between variance."""
    out: dict[str, float] = {}
    for what, formula in FORMULAS.items():
        fits = [LinearMixedModel(formula, reml=True).fit(t) for t in tables]
        term = "x" if what == "slope" else "Intercept"
        if len(fits) == 1:
            row = fits[0].fixed_.set_index("term").loc[term]
        else:
            dfcom = float(np.mean([f.fixed_.set_index("term").loc[term, "df"] for f in fits]))
            row = pool_imputations(fits, dfcom=dfcom).table.set_index("term").loc[term]
        out[what] = float(row["estimate"])
        out[f"{what}_low"], out[f"{what}_high"] = float(row["ci_low"]), float(row["ci_high"])
        if what == "mean":
            out["tau2"] = float(np.mean([f.random_["variance"].iloc[0] for f in fits]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=500)
    parser.add_argument("--people", type=int, default=50)
    parser.add_argument("--m", type=int, default=5)
    parser.add_argument("--burn-in", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    design = _design()
    rng = np.random.default_rng(args.seed)
    start = time.process_time()
    results: dict[str, list[dict[str, float]]] = {"2l.norm": [], "norm": [], "complete": []}
    missing, before, impute_seconds = [], [], 0.0
    warnings.simplefilter("ignore")
    for i in range(args.studies):
        full, data = design._sessions(rng, args.people)
        missing.append(data["y"].isna().mean())
        before.append(design._between_variance(full))
        begin = time.process_time()
        two = impute_chained(
            data, m=args.m, seed=i, burn_in=args.burn_in, method="2l.norm", cluster="participant"
        )
        impute_seconds += time.process_time() - begin
        one = impute_chained(
            data.drop(columns="participant"), m=args.m, seed=i, burn_in=args.burn_in, method="norm"
        )
        results["2l.norm"].append(pooled(two.datasets))
        single = [t.assign(participant=data["participant"]) for t in one.datasets]
        results["norm"].append(pooled(single))
        results["complete"].append(pooled([data.dropna(subset=["y", "x"])]))
    k = args.studies
    print(
        f"{k} studies of {args.people} participants, m = {args.m}, burn-in {args.burn_in}, "
        f"{100 * np.mean(missing):.1f}% of the ratings missing on average"
    )
    for name, rows in results.items():
        frame = pd.DataFrame(rows)
        print(f"{name}:")
        for what, truth in (("slope", design.SLOPE), ("mean", design.MEAN)):
            est = frame[what]
            cover = ((frame[f"{what}_low"] <= truth) & (truth <= frame[f"{what}_high"])).mean()
            print(
                f"  {what}: bias {est.mean() - truth:+.4f} (Monte Carlo SE "
                f"{est.std(ddof=1) / math.sqrt(k):.4f}), coverage {100 * cover:.1f}% "
                f"(Monte Carlo SE {100 * math.sqrt(cover * (1 - cover) / k):.1f} points)"
            )
        ratio = frame["tau2"] / np.array(before)
        print(
            f"  between-participant variance over the study's own before deletion: mean "
            f"{ratio.mean():.3f}, 5th percentile {np.quantile(ratio, 0.05):.3f}, 95th "
            f"{np.quantile(ratio, 0.95):.3f}; SD of a mean of four {ratio.std(ddof=1) / 2:.3f} "
            f"(the truth {design.TAU2:.2f}; before deletion, mean {np.mean(before):.4f})"
        )
    print(f"CPU: {time.process_time() - start:.1f} s ({impute_seconds:.1f} s imputing by 2l.norm)")


if __name__ == "__main__":
    main()
