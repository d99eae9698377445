"""Time surveys.scoring.score on simulated BFI-44 data against a plain pandas baseline.

Usage:
    .venv/bin/python benchmarks/bench_scoring.py            # 1,000,000 respondents
    .venv/bin/python benchmarks/bench_scoring.py --n 50000  # smaller run

The data: a seeded five-factor model (loading 0.6 per item on its own factor), answers cut into
the 1-5 BFI scale, reverse-keyed items flipped, optionally a fraction of answers missing. The
frame is built column by column, as a CSV reader returns it.

The command-line path (``longitudinal score`` from a CSV file to scores + reliability files:
reading, validation, scoring, writing) is timed on the same data written as CSV, and printed
beside the inner path (``score`` on a DataFrame already in memory).

Both timings include reliability. The baseline scores each scale with a row-wise
``DataFrame.apply`` (reverse keying inside the row function) and computes Cronbach's alpha from
``DataFrame.cov``; it runs on a subset (default 100,000 rows) and is scaled up linearly to the
full size. The ratio is baseline / score, both measured in this run.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from longitudinal.cli import main as cli_main
from surveys.instruments import load_instrument
from surveys.scoring import score

# Published elsewhere, not measured in this run: R psych on 1,000,000 respondents x BFI-44 items,
# 2 cores.
R_PUBLISHED = {"psych::scoreItems": 12.9, "psych::scoreFast": 2.9}


def simulate(n: int, *, seed: int, missing: float) -> pd.DataFrame:
    """Simulate BFI-44 answers for `n` respondents (seeded)."""
    ins = load_instrument("bfi44")
    rng = np.random.default_rng(seed)
    factors = rng.standard_normal((len(ins.scales), n))
    columns: dict[str, np.ndarray] = {"id": np.arange(1, n + 1)}
    answers: dict[str, np.ndarray] = {}
    cuts = np.array([-1.2, -0.4, 0.4, 1.2])
    for f, key in enumerate(ins.scales):
        for item in key.items:
            latent = 0.6 * factors[f] + 0.8 * rng.standard_normal(n)
            if item in key.reverse:
                latent = -latent
            values = (np.searchsorted(cuts, latent) + 1).astype(np.float64)
            if missing > 0:
                values[rng.random(n) < missing] = np.nan
            answers[item] = values
    for item in ins.items:  # questionnaire order
        columns[item] = answers[item]
    return pd.DataFrame(columns)


def baseline(data: pd.DataFrame, *, min_valid: float = 0.8) -> pd.DataFrame:
    """Straightforward pandas scoring: row-wise apply per scale, alpha from DataFrame.cov."""
    ins = load_instrument("bfi44")
    lo, hi = ins.response_min, ins.response_max
    scores = {}
    for key in ins.scales:
        items = list(key.items)
        reverse = set(key.reverse)
        required = int(np.ceil(round(min_valid * len(items), 9)))

        def row_score(row: pd.Series, items=items, reverse=reverse, required=required) -> float:
            values = [lo + hi - row[i] if i in reverse else row[i] for i in items]
            answered = [v for v in values if not pd.isna(v)]
            return float(np.mean(answered)) if len(answered) >= required else np.nan

        scores[key.name] = data[items].apply(row_score, axis=1)
        keyed = data[items].apply(
            lambda col, reverse=reverse: lo + hi - col if col.name in reverse else col
        )
        cov = keyed.cov()
        k = len(items)
        scores[f"{key.name}_alpha"] = (
            k / (k - 1) * (1 - np.trace(cov.to_numpy()) / cov.to_numpy().sum())
        )
    return pd.DataFrame(scores)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=1_000_000, help="respondents (default 1,000,000)")
    parser.add_argument(
        "--baseline-n", type=int, default=100_000, help="rows for the baseline (default 100,000)"
    )
    parser.add_argument(
        "--missing", type=float, default=0.0, help="fraction of answers missing (default 0)"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed runs of score; the best is reported"
    )
    parser.add_argument("--seed", type=int, default=20240601)
    args = parser.parse_args()

    t0 = time.perf_counter()
    data = simulate(args.n, seed=args.seed, missing=args.missing)
    elapsed = time.perf_counter() - t0
    print(f"simulated {args.n:,} x 44 BFI items (missing {args.missing:.1%}): {elapsed:.1f} s")
    print(f"cores available: {os.cpu_count()}")

    times = []
    for _ in range(max(1, args.repeats)):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. a Heywood case in one omega: not timed
            result = score(data, "bfi44")
        times.append(time.perf_counter() - start)
    best = min(times)
    runs = ", ".join(f"{t:.3f}" for t in times)
    print(
        "surveys.scoring.score (scores + alpha, omega, item stats per scale): "
        f"best {best:.3f} s of {len(times)} ({runs}); {args.n / best:,.0f} rows/s"
    )
    print(result.reliability[["scale", "n", "alpha", "omega_total"]].to_string(index=False))

    cli = time_cli(data, repeats=max(1, args.repeats))
    print(
        f"longitudinal score CSV -> scores + reliability files: best {cli:.3f} s "
        f"(inner path above: {best:.3f} s; CLI / inner {cli / best:.1f}x)"
    )

    m = min(args.baseline_n, args.n)
    subset = data.iloc[:m]
    start = time.perf_counter()
    reference = baseline(subset)
    base = time.perf_counter() - start
    scaled = base * args.n / m
    print(
        f"baseline (pandas apply per row, alpha from DataFrame.cov) on {m:,} rows: {base:.2f} s "
        f"-> {scaled:.1f} s scaled to {args.n:,} rows"
    )
    ours = result.wide().iloc[:m]
    for key in ("extraversion", "openness"):
        diff = np.nanmax(np.abs(ours[f"bfi44.{key}"].to_numpy() - reference[key].to_numpy()))
        print(f"  check {key}: max |score - baseline| = {diff:.1e}")
    print(f"speed-up over the baseline: {scaled / best:.1f}x")
    print(
        "R, published elsewhere (not measured here), 1,000,000 x BFI-44 on 2 cores: "
        + ", ".join(f"{name} {sec} s" for name, sec in R_PUBLISHED.items())
    )
    if args.n == 1_000_000:
        ratio = R_PUBLISHED["psych::scoreFast"] / best
        print(f"psych::scoreFast (published) / score (this run): {ratio:.1f}x (different machines)")
        ratio = R_PUBLISHED["psych::scoreItems"] / cli
        print(
            f"psych::scoreItems compute alone (published) / longitudinal score CSV to files "
            f"(this run): {ratio:.1f}x (different machines)"
        )


def time_cli(data: pd.DataFrame, *, repeats: int) -> float:
    """Best time of ``longitudinal score`` on ``data`` written as a plain CSV."""
    with tempfile.TemporaryDirectory() as folder:
        raw = Path(folder) / "export.csv"
        frame = data.copy()
        frame["id"] = [f"P{i:07d}" for i in range(1, len(frame) + 1)]
        items = [c for c in frame.columns if c != "id"]
        frame[items] = frame[items].astype("Int8")  # whole numbers, as an export writes them
        frame.to_csv(raw, index=False)
        args = ["score", str(raw), "--instrument", "bfi44", "--out", f"{folder}/scores.csv"]
        args += ["--reliability", f"{folder}/rel.csv"]
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            with redirect_stdout(StringIO()), redirect_stderr(StringIO()):
                code = cli_main(args)
            times.append(time.perf_counter() - start)
            if code != 0:
                raise RuntimeError(f"longitudinal score failed with exit code {code}")
    return min(times)


if __name__ == "__main__":
    main()
