"""Time models.agreement on an annotation set: 10,000 ratings by 400 raters of 1,000 units.

Usage:
    .venv/bin/python benchmarks/bench_agreement.py                    # the default set
    .venv/bin/python benchmarks/bench_agreement.py --units 10000      # ten times larger

The data (seeded): each unit has a true value on a 1-5 scale; each of its raters (drawn without
replacement from the pool) reports it shifted by -1, 0 or +1 and clipped to the scale, so the
raters agree well but not perfectly. A continuous variant adds normal noise (sd 0.3, three
decimals) to every rating, which makes almost every value distinct (the hardest case for a
coincidence matrix: thousands of categories).

Timed, per level of measurement: the whole call ``agreement(...)`` with its default bootstrap
(2,000 resamples of units) and the command ``longitudinal agreement`` from the CSV file to the
CSV written. The baseline is the textbook algorithm in plain Python (a loop over units and
over the pairs of values in each, then over pairs of values for the expected disagreement),
for the point estimate of alpha alone; the ratio is baseline / ours without the bootstrap
(``n_boot=0``), both measured in this run. A bootstrap by the textbook loop would cost the
baseline's time once per resample.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd

from longitudinal.cli import main as cli_main
from models.agreement import agreement


def simulate(units: int, raters: int, per_unit: int, *, seed: int) -> pd.DataFrame:
    """Seeded ratings in long form: ``per_unit`` distinct raters per unit, values 1-5."""
    rng = np.random.default_rng(seed)
    unit = np.repeat(np.arange(units), per_unit)
    rater = np.concatenate([rng.choice(raters, per_unit, replace=False) for _ in range(units)])
    truth = rng.integers(1, 6, units)
    value = np.clip(truth[unit] + rng.integers(-1, 2, units * per_unit), 1, 5)
    return pd.DataFrame({"unit": unit, "rater": rater, "value": value.astype(float)})


def textbook_alpha(data: pd.DataFrame, level: str) -> float:
    """Krippendorff's alpha by loops (interval or nominal differences), the baseline."""

    def delta(c: float, k: float) -> float:
        return (c - k) ** 2 if level == "interval" else float(c != k)

    observed = 0.0
    values: list[float] = []
    for _, group in data.groupby("unit"):
        v = group["value"].tolist()
        if len(v) < 2:
            continue
        values += v
        observed += sum(delta(a, b) for i, a in enumerate(v) for j, b in enumerate(v) if i != j) / (
            len(v) - 1
        )
    counts = pd.Series(values).value_counts()
    expected = sum(nc * nk * delta(c, k) for c, nc in counts.items() for k, nk in counts.items())
    return 1.0 - (len(values) - 1) * observed / expected


def best_of(repeats: int, func) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--units", type=int, default=1000)
    parser.add_argument("--raters", type=int, default=400)
    parser.add_argument("--per-unit", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = simulate(args.units, args.raters, args.per_unit, seed=2026)
    noisy = data.assign(
        value=(data["value"] + np.random.default_rng(7).normal(0, 0.3, len(data))).round(3)
    )
    cols = {"unit_col": "unit", "rater_col": "rater", "value_col": "value"}
    print(
        f"{len(data):,} ratings by {data['rater'].nunique()} raters of {args.units:,} units; "
        f"best of {args.repeats}; 2,000 bootstrap resamples in every call"
    )
    agreement(data, **cols)  # imports and first-call costs out of the timings
    rows = []
    for name, frame, level in (
        ("1-5 ratings", data, "nominal"),
        ("1-5 ratings", data, "ordinal"),
        ("1-5 ratings", data, "interval"),
        ("1-5 ratings", data, "ratio"),
        ("continuous", noisy, "interval"),
    ):
        seconds, result = best_of(
            args.repeats, lambda f=frame, lv=level: agreement(f, **cols, level=lv)
        )
        alpha = result.coefficients["estimate"].iloc[0]  # type: ignore[union-attr]
        with tempfile.TemporaryDirectory() as tmp:
            source, out = Path(tmp) / "ratings.csv", Path(tmp) / "agreement.csv"
            frame.to_csv(source, index=False)
            argv = ["agreement", str(source), "--unit-col", "unit", "--rater-col", "rater",
                    "--value-col", "value", "--level", level, "--out", str(out)]  # fmt: skip
            with redirect_stdout(StringIO()), redirect_stderr(StringIO()):
                cli_seconds, code = best_of(args.repeats, lambda a=argv: cli_main(a))
            assert code == 0
        point, _ = best_of(
            args.repeats, lambda f=frame, lv=level: agreement(f, **cols, level=lv, n_boot=0)
        )
        baseline = float("nan")
        if level in ("nominal", "interval"):
            baseline, check = best_of(1, lambda f=frame, lv=level: textbook_alpha(f, lv))
            assert abs(check - alpha) < 1e-9, (check, alpha)
        rows.append(
            {
                "data": name,
                "level": level,
                "alpha": round(float(alpha), 4),
                "agreement() s": round(seconds, 3),
                "command s": round(cli_seconds, 3),
                "n_boot=0 s": round(point, 4),
                "textbook alpha s": round(baseline, 3),
                "ratio": round(baseline / point, 1) if baseline == baseline else float("nan"),
            }
        )
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
