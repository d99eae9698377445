"""Benchmark: models.lmm.LinearMixedModel against statsmodels MixedLM, in the same run.

Cases
  (a) sleepstudy, Reaction ~ Days + (Days | Subject), REML
  (b) simulated random intercept + slope, y ~ x + (x | g), 10 rows per group,
      100 / 1,000 / 10,000 groups
  (c) simulated crossed random intercepts, y ~ x + (1 | rater) + (1 | target),
      5,000 rows (300 raters x 100 targets) and 70,000 rows (3,000 raters x 1,000 targets),
      plus 1,000 rows (60 x 20) where statsmodels finishes, so the estimates can be compared

For each case both engines fit the same data; the script prints seconds, the ratio
statsmodels / ours and the largest absolute difference of the fixed effects and of the variance
components (random-effect variances and the residual variance). statsmodels runs in a child
process stopped at ``--cap`` seconds; crossed designs above ``--sm-crossed-max`` rows are not
attempted (statsmodels builds dense matrices over all crossed levels: it took 204 s for 5,000
rows when the issue was written; lme4 fits 73,421 rows in 17.6 s).

Run:  .venv/bin/python benchmarks/bench_lmm.py [--cap 120] [--sm-crossed-max 2000] [--quick]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from models.lmm import LinearMixedModel

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------------------------------
# data


def sleepstudy() -> pd.DataFrame:
    return pd.read_csv(ROOT / "tests" / "data" / "lme4_sleepstudy.csv")


def random_slopes(n_groups: int, rng: np.random.Generator) -> pd.DataFrame:
    per = 10
    g = np.repeat(np.arange(n_groups), per)
    x = np.tile(np.arange(per, dtype=float), n_groups)
    cov = np.array([[1.0, 0.3 * 1.0 * 0.3], [0.3 * 1.0 * 0.3, 0.09]])
    b = rng.multivariate_normal([0.0, 0.0], cov, size=n_groups)
    y = 2.0 + 0.5 * x + b[g, 0] + b[g, 1] * x + rng.normal(0.0, 1.0, g.size)
    return pd.DataFrame({"y": y, "x": x, "g": g})


def crossed(n: int, n_r: int, n_t: int, rng: np.random.Generator) -> pd.DataFrame:
    rater = rng.integers(0, n_r, n)
    target = rng.integers(0, n_t, n)
    x = rng.normal(size=n)
    y = (
        3.0
        + 0.5 * x
        + rng.normal(0.0, 0.8, n_r)[rater]
        + rng.normal(0.0, 0.5, n_t)[target]
        + rng.normal(0.0, 1.0, n)
    )
    return pd.DataFrame({"y": y, "x": x, "rater": rater, "target": target, "one": 1})


# ---------------------------------------------------------------------------------------------
# engines


def ours(data: pd.DataFrame, formula: str) -> tuple[float, dict[str, float], dict[str, float]]:
    start = time.perf_counter()
    m = LinearMixedModel(formula).fit(data)
    seconds = time.perf_counter() - start
    fixed = dict(zip(m.fixed_["term"], m.fixed_["estimate"], strict=True))
    var = {f"{g}|{t}": v for g, t, v in m.random_[["group", "term", "variance"]].itertuples(False)}
    return seconds, fixed, var


def _statsmodels_fit(kind: str, data: pd.DataFrame, queue: mp.Queue) -> None:
    import statsmodels.formula.api as smf

    warnings.simplefilter("ignore")
    start = time.perf_counter()
    if kind == "slope":
        group = "Subject" if "Subject" in data else "g"
        formula = "Reaction ~ Days" if "Subject" in data else "y ~ x"
        re = "~Days" if "Subject" in data else "~x"
        res = smf.mixedlm(formula, data, groups=data[group], re_formula=re).fit(reml=True)
        names = ["Intercept", re[1:]]
        cov = np.asarray(res.cov_re)
        var = {"group|Intercept": cov[0, 0], f"group|{names[1]}": cov[1, 1]}
    else:
        vc = {"rater": "0 + C(rater)", "target": "0 + C(target)"}
        res = smf.mixedlm("y ~ x", data, groups=data["one"], re_formula="0", vc_formula=vc).fit(
            reml=True
        )
        var = dict(zip(["rater|Intercept", "target|Intercept"], np.asarray(res.vcomp), strict=True))
    var["Residual|None"] = float(res.scale)
    seconds = time.perf_counter() - start
    fixed = {str(k): float(v) for k, v in res.fe_params.items()}
    queue.put((seconds, fixed, {k: float(v) for k, v in var.items()}))


def statsmodels_fit(kind: str, data: pd.DataFrame, cap: float):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_statsmodels_fit, args=(kind, data, queue))
    proc.start()
    proc.join(cap)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None
    return queue.get() if not queue.empty() else None


# ---------------------------------------------------------------------------------------------


def compare(ours_res, sm_res, group_names: dict[str, str]) -> tuple[float, float]:
    _, f1, v1 = ours_res
    _, f2, v2 = sm_res
    dfix = max(abs(f1[k] - f2[k]) for k in f1)
    dvar = 0.0
    for k, v in v1.items():
        group, term = k.split("|")
        key = f"{group_names.get(group, group)}|{term}"
        if key in v2:
            dvar = max(dvar, abs(v - v2[key]))
    return dfix, dvar


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=120.0, help="statsmodels time cap (s)")
    parser.add_argument(
        "--sm-crossed-max",
        type=int,
        default=2000,
        help="largest crossed data set given to statsmodels (rows)",
    )
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke test)")
    parser.add_argument("--seed", type=int, default=20240501)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    cases = [("(a) sleepstudy", "slope", sleepstudy(), "Reaction ~ Days + (Days | Subject)")]
    slope_sizes = [100, 1000] if args.quick else [100, 1000, 10000]
    for k in slope_sizes:
        cases.append((f"(b) slopes, {k} groups", "slope", random_slopes(k, rng), "y ~ x + (x | g)"))
    crossed_sizes = [(1000, 60, 20), (5000, 300, 100)]
    if not args.quick:
        crossed_sizes.append((70000, 3000, 1000))
    for n, n_r, n_t in crossed_sizes:
        cases.append(
            (
                f"(c) crossed, {n} rows",
                "crossed",
                crossed(n, n_r, n_t, rng),
                "y ~ x + (1 | rater) + (1 | target)",
            )
        )

    # warm-up: the first fit in a process pays one-off imports (formulaic, scipy's COBYQA)
    LinearMixedModel("Reaction ~ Days + (Days | Subject)").fit(sleepstudy())

    header = (
        f"{'case':28s} {'rows':>7s} {'ours s':>8s} {'statsmodels s':>22s} {'ratio':>7s} "
        f"{'max|dfixed|':>12s} {'max|dvar|':>10s}"
    )
    print(header)
    print("-" * len(header))
    for label, kind, data, formula in cases:
        mine = ours(data, formula)
        n = len(data)
        if kind == "crossed" and n > args.sm_crossed_max:
            expected = 204.0 * n / 5000  # at least linear in the rows
            print(
                f"{label:28s} {n:7d} {mine[0]:8.2f} "
                f"{f'skipped (>{expected:.0f} s expected)':>22s} {'':>7s} {'':>12s} {'':>10s}"
            )
            continue
        sm = statsmodels_fit(kind, data, args.cap)
        if sm is None:
            print(
                f"{label:28s} {n:7d} {mine[0]:8.2f} {f'stopped at {args.cap:.0f} s cap':>22s} "
                f"{f'>{args.cap / mine[0]:.0f}':>7s} {'':>12s} {'':>10s}"
            )
            continue
        dfix, dvar = compare(mine, sm, {"Subject": "group", "g": "group"})
        print(
            f"{label:28s} {n:7d} {mine[0]:8.2f} {sm[0]:22.2f} {sm[0] / mine[0]:7.1f} "
            f"{dfix:12.2e} {dvar:10.2e}"
        )


if __name__ == "__main__":
    main()
