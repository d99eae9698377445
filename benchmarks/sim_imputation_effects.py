"""A trait's pooled effect on the ratings, imputed with and without the ratings, in many studies.

The suite's test (tests/longitudinal/study/test_score_imputation.py) runs four studies so
that it stays cheap; this script runs the same design (read from the test's file) at the size
the claim needs. Each study: ``--people`` participants, each rating 18 to 36 stories
(``empathy = 3 + 0.3 trait + 0.1 other + u + e``, ``u ~ N(0, 0.5^2)``, ``e ~ N(0, 1)``, the two
traits correlated 0.5); the trait is missing for about 35% of the participants, at random
given their mean rating (the lower it is, the more often). The trait and the other trait are
imputed ``--m`` times by ``models.impute_chained`` (Bayesian linear regression, the report's
default) with each participant's mean rating and number of ratings in the imputation model
(``longitudinal.study.score_imputation.rating_means``, what the report's effects section
adds) and without them; ``empathy ~ trait + other + (1 | participant_id)`` is fitted by
``models.lmm.LinearMixedModel`` to each completed table and the trait's effect pooled by
``models.pool_imputations`` (each imputation's Satterthwaite df averaged as the complete-data
df, as the report pools); the complete cases are the participants with the trait observed.

Prints, for the three, the mean estimate against the true 0.3 (bias with its Monte Carlo SE),
the coverage of the 95% interval with its Monte Carlo SE, and the mean paired difference
between imputing with and without the ratings with its SD (for the test's margin); then the
CPU time.

    python benchmarks/sim_imputation_effects.py [--studies 500] [--people 60] [--m 10]
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

TEST = (
    Path(__file__).resolve().parents[1]
    / "tests"
    / "longitudinal"
    / "study"
    / "test_score_imputation.py"
)


def _design() -> Any:
    """The test's design (``TRAIT_EFFECT``, ``_rated_people``, ``_trait_effect``,
    ``_imputed_effects``), read from the test file."""
    spec = importlib.util.spec_from_file_location("effects_design", TEST)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=500)
    parser.add_argument("--people", type=int, default=60)
    parser.add_argument("--m", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    design = _design()
    truth = design.TRAIT_EFFECT
    rng = np.random.default_rng(args.seed)
    start = time.process_time()
    rows: dict[str, list[pd.Series]] = {"with the ratings": [], "without": [], "complete": []}
    missing = []
    warnings.simplefilter("ignore")
    for i in range(args.studies):
        scores, ratings = design._rated_people(rng, args.people)
        missing.append(scores["trait"].isna().mean())
        with_ratings, without = design._imputed_effects(scores, ratings, m=args.m, seed=i)
        rows["with the ratings"].append(with_ratings)
        rows["without"].append(without)
        rows["complete"].append(design._trait_effect([scores], ratings))
    k = args.studies
    print(
        f"{k} studies of {args.people} participants, m = {args.m}, the trait missing for "
        f"{100 * np.mean(missing):.1f}% on average; true effect {truth}"
    )
    for name, found in rows.items():
        frame = pd.DataFrame(found)
        est = frame["estimate"]
        cover = ((frame["ci_low"] <= truth) & (truth <= frame["ci_high"])).mean()
        print(
            f"{name}: mean {est.mean():.4f} (bias {est.mean() - truth:+.4f}, Monte Carlo SE "
            f"{est.std(ddof=1) / math.sqrt(k):.4f}), coverage {100 * cover:.1f}% (Monte Carlo "
            f"SE {100 * math.sqrt(cover * (1 - cover) / k):.1f} points), mean interval width "
            f"{(frame['ci_high'] - frame['ci_low']).mean():.4f}"
        )
    gap = (
        pd.DataFrame(rows["with the ratings"])["estimate"].to_numpy()
        - pd.DataFrame(rows["without"])["estimate"].to_numpy()
    )
    print(
        f"with minus without, paired: mean {gap.mean():+.4f}, SD {gap.std(ddof=1):.4f} "
        f"(SD of a mean of four {gap.std(ddof=1) / 2:.4f}); positive in "
        f"{100 * (gap > 0).mean():.1f}% of the studies"
    )
    print(f"CPU: {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
