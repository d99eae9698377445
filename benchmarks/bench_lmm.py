"""Benchmark: LinearMixedModel (our adapter) against mixedlm called directly, in the same run.

Cases (all REML)
  sleepstudy  Reaction ~ Days + (Days | Subject), 180 rows
  study       empathy ~ trait + week + (1 + week | participant) + (1 | story), 804 ratings
              (41 participants, 268 sessions, 3 stories each; simulated, seeded:
              benchmarks/data/study_sized.csv)
  insteval2   y ~ service + (1 | s) + (1 | d), lme4::InstEval, 73,421 rows
  insteval3   y ~ service + (1 | s) + (1 | d) + (1 | dept)
  insteval2_5k, insteval3_5k   the same two models on the first 5,000 rows of InstEval
  slope10k    y ~ x + (1 + x | person) + (1 | item), 10,000 rows (200 people x 50, 100 items;
              simulated, seeded: benchmarks/data/slope10k.csv)
  slope1m     the same design at 1,000,000 rows (5,000 people x 200, 1,000 items; written by
              --write-data, not committed); only with --large

Engines
  adapter      models.lmm.LinearMixedModel(formula).fit(data): our formula check and design,
               mixedlm's fit (estimates, log-likelihood, covariance parameters); "+table" also
               reads ``fixed_``, whose standard errors and lmerTest's Satterthwaite df are
               computed on first access
  mixedlm      mixedlm.lmer(formula, data): the library alone (no df), with one BLAS thread
               as the adapter runs it (OpenBLAS's worker threads cost 10-60 ms a fit on a
               loaded two-core machine); "+df" followed by its own ``satterthwaite_df``
  statsmodels  statsmodels MixedLM (sleepstudy; InstEval with two factors on a 1,000-row subset,
               as variance components), in a child process stopped at --cap seconds
  lme4         figures from benchmarks/lme4_timings.R (committed in
               benchmarks/data/lme4_timings.csv with their date), not re-run here: lme4's fit,
               and lmerTest's fit followed by ``summary()`` (Satterthwaite df)

Every fit is timed a few times, the engines in turn (median). The script prints seconds; the
ratios adapter fit / mixedlm and adapter with its table / mixedlm with its df (like for like);
the adapter's fit against lme4's and its fit with the table against lmerTest's fit with its
summary; the deviance evaluations of our optimizer beside lme4's (``optinfo$feval``); our REML
criterion minus lme4's; and the largest relative difference of the fixed effects from mixedlm's.
Then refits per second of the study model with responses simulated from the fit (adapter
``refit`` against mixedlm's ``refit``, without and with its df).

Run:  .venv/bin/python benchmarks/bench_lmm.py [--runs 5] [--cap 60] [--no-insteval] [--large]
      .venv/bin/python benchmarks/bench_lmm.py --cases slope10k insteval3_5k
      .venv/bin/python benchmarks/bench_lmm.py --write-data   # the simulated data for the R script
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from models._errors import SingularFitWarning
from models.lmm import LinearMixedModel
from models.lmm.engine import one_blas_thread

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"

FORMULAS = {
    "sleepstudy": "Reaction ~ Days + (Days | Subject)",
    "study": "empathy ~ trait + week + (1 + week | participant) + (1 | story)",
    "insteval2": "y ~ service + (1 | s) + (1 | d)",
    "insteval3": "y ~ service + (1 | s) + (1 | d) + (1 | dept)",
    "insteval2_5k": "y ~ service + (1 | s) + (1 | d)",
    "insteval3_5k": "y ~ service + (1 | s) + (1 | d) + (1 | dept)",
    "slope10k": "y ~ x + (1 + x | person) + (1 | item)",
    "slope1m": "y ~ x + (1 + x | person) + (1 | item)",
}
SLOPE_SIZES = {"slope10k": (200, 50, 100), "slope1m": (5_000, 200, 1_000)}


# ---------------------------------------------------------------------------------------------
# data


def study_sized(seed: int = 2024) -> pd.DataFrame:
    """804 ratings: 41 participants, 268 sessions over a month, 3 of 120 stories per session."""
    rng = np.random.default_rng(seed)
    sessions = np.array_split(np.arange(268), 41)
    rows = []
    trait = rng.normal(0.0, 1.0, 41)
    b = rng.multivariate_normal([0.0, 0.0], [[0.36, -0.012], [-0.012, 0.01]], size=41)
    story_effect = rng.normal(0.0, 0.3, 120)
    for p, sess in enumerate(sessions):
        days = np.sort(rng.uniform(0, 30, len(sess)))
        for day in days:
            for story in rng.choice(120, 3, replace=False):
                week = day / 7.0
                y = (
                    3.3
                    + 0.2 * trait[p]
                    + 0.05 * week
                    + b[p, 0]
                    + b[p, 1] * week
                    + story_effect[story]
                    + rng.normal(0.0, 0.9)
                )
                rows.append((f"p{p:02d}", f"s{story:03d}", trait[p], week, y))
    return pd.DataFrame(rows, columns=["participant", "story", "trait", "week", "empathy"])


def random_slopes(n_person: int, per: int, n_item: int, seed: int = 7) -> pd.DataFrame:
    """``y ~ x + (1 + x | person) + (1 | item)``: ``per`` rows per person, items at random."""
    rng = np.random.default_rng(seed)
    n = n_person * per
    person = np.repeat(np.arange(n_person), per)
    item = rng.integers(0, n_item, n)
    x = rng.normal(size=n)
    u = rng.multivariate_normal([0.0, 0.0], [[0.5, 0.1], [0.1, 0.2]], size=n_person)
    y = 1.0 + 0.4 * x + u[person, 0] + u[person, 1] * x + rng.normal(0, 0.4, n_item)[item]
    y = y + rng.normal(0.0, 1.0, n)
    return pd.DataFrame(
        {
            "person": [f"p{i}" for i in person],
            "item": [f"i{i}" for i in item],
            "x": np.round(x, 6),
            "y": np.round(y, 6),
        }
    )


def load(case: str) -> pd.DataFrame:
    if case == "sleepstudy":
        return pd.read_csv(ROOT / "tests" / "data" / "lme4_sleepstudy.csv")
    if case == "study":
        return pd.read_csv(DATA / "study_sized.csv")
    if case in SLOPE_SIZES:
        path = DATA / f"{case}.csv"
        if not path.exists():
            random_slopes(*SLOPE_SIZES[case]).to_csv(path, index=False)
        return pd.read_csv(path, dtype={"person": str, "item": str})
    inst = pd.read_csv(DATA / "insteval.csv", dtype={"s": str, "d": str, "dept": str})
    inst["service"] = inst["service"].astype(str)
    return inst.head(5_000) if case.endswith("_5k") else inst


# ---------------------------------------------------------------------------------------------
# engines


def timed_round(calls: list[Callable[[], object]], runs: int) -> list[tuple[float, object]]:
    """Median seconds and last output of each call, run in turn so all see the same load."""
    times: list[list[float]] = [[] for _ in calls]
    outs: list[object] = [None for _ in calls]
    for _ in range(runs):
        for i, call in enumerate(calls):
            start = time.perf_counter()
            outs[i] = call()
            times[i].append(time.perf_counter() - start)
    return [(float(np.median(t)), out) for t, out in zip(times, outs, strict=True)]


def mixedlm_with_df(data: pd.DataFrame, formula: str):
    """``mixedlm.lmer`` and mixedlm's own Satterthwaite df: the same output as the adapter."""
    from mixedlm.inference.ddf import clear_vcov_grad_cache, satterthwaite_df

    result = mixedlm_direct(data, formula)
    clear_vcov_grad_cache()
    with one_blas_thread():
        satterthwaite_df(result)
    return result


def with_table(model: LinearMixedModel) -> LinearMixedModel:
    """The fit and its fixed-effect table (Satterthwaite df, p-values: built on first access)."""
    _ = model.fixed_
    return model


def mixedlm_direct(data: pd.DataFrame, formula: str):
    """``mixedlm.lmer`` as a user would call it, but with one BLAS thread as the adapter uses."""
    import mixedlm

    with warnings.catch_warnings(), one_blas_thread():
        warnings.simplefilter("ignore")
        return mixedlm.lmer(formula, data, REML=True)


def _statsmodels_fit(case: str, data: pd.DataFrame, queue: mp.Queue) -> None:
    import statsmodels.formula.api as smf

    warnings.simplefilter("ignore")
    start = time.perf_counter()
    if case == "sleepstudy":
        res = smf.mixedlm("Reaction ~ Days", data, groups=data["Subject"], re_formula="~Days").fit(
            reml=True
        )
    else:
        vc = {"s": "0 + C(s)", "d": "0 + C(d)"}
        res = smf.mixedlm(
            "y ~ service", data.assign(one=1), groups="one", re_formula="0", vc_formula=vc
        ).fit(reml=True)
    queue.put((time.perf_counter() - start, np.asarray(res.fe_params, dtype=float)))


def statsmodels_fit(case: str, data: pd.DataFrame, cap: float):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_statsmodels_fit, args=(case, data, queue))
    proc.start()
    proc.join(cap)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None
    return queue.get() if not queue.empty() else None


def lme4_figures() -> pd.DataFrame | None:
    path = DATA / "lme4_timings.csv"
    return pd.read_csv(path).set_index("case") if path.exists() else None


# ---------------------------------------------------------------------------------------------


def refits_per_second(
    data: pd.DataFrame, formula: str, n: int, seed: int
) -> tuple[float, float, float, float, int]:
    """Refits per second with responses simulated from the fitted model (new random effects)."""
    from mixedlm.inference.ddf import satterthwaite_df

    model = LinearMixedModel(formula).fit(data)
    direct = mixedlm_direct(data, formula)
    responses = np.asarray(direct.simulate(nsim=n, seed=seed)).reshape(len(data), n).T
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        for y in responses:
            model.refit(y)
        ours = n / (time.perf_counter() - start)
        singular = sum("singular" in str(w.message) for w in caught)
        start = time.perf_counter()
        for y in responses:
            with_table(model.refit(y))
        ours_table = n / (time.perf_counter() - start)
    with warnings.catch_warnings(), one_blas_thread():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        for y in responses:
            direct.refit(y)
        lib = n / (time.perf_counter() - start)
        start = time.perf_counter()
        for y in responses:
            satterthwaite_df(direct.refit(y))
        lib_df = n / (time.perf_counter() - start)
    return ours, ours_table, lib, lib_df, singular


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fits per engine and case (median)")
    parser.add_argument("--cap", type=float, default=60.0, help="statsmodels time cap (s)")
    parser.add_argument("--refits", type=int, default=50, help="refits of the study model")
    parser.add_argument("--no-insteval", action="store_true", help="skip the InstEval cases")
    parser.add_argument("--large", action="store_true", help="also the 1,000,000-row case")
    parser.add_argument("--cases", nargs="+", choices=list(FORMULAS), help="only these cases")
    parser.add_argument("--write-data", action="store_true", help="write study_sized.csv")
    parser.add_argument("--seed", type=int, default=20240501)
    args = parser.parse_args()
    if args.write_data:
        DATA.mkdir(exist_ok=True)
        study_sized().to_csv(DATA / "study_sized.csv", index=False)
        for case, sizes in SLOPE_SIZES.items():
            random_slopes(*sizes).to_csv(DATA / f"{case}.csv", index=False)
        print(f"wrote study_sized.csv, {', '.join(SLOPE_SIZES)} (.csv) in {DATA}")
        return

    cases = ["sleepstudy", "study", "slope10k"]
    if not args.no_insteval:
        cases += ["insteval2_5k", "insteval3_5k", "insteval2", "insteval3"]
    if args.large:
        cases.append("slope1m")
    if args.cases:
        cases = args.cases
    lme4 = lme4_figures()

    warnings.filterwarnings("ignore", category=SingularFitWarning)  # flagged in the table
    # warm-up: the first fit in a process pays one-off imports
    mixedlm_direct(load("sleepstudy"), FORMULAS["sleepstudy"])
    LinearMixedModel(FORMULAS["sleepstudy"]).fit(load("sleepstudy"))

    header = (
        f"{'case':12s} {'rows':>7s} {'fit s':>8s} {'+table s':>9s} {'mixedlm s':>10s} "
        f"{'ratio':>6s} {'+df s':>8s} {'ratio':>6s} {'statsmodels s':>18s} "
        f"{'lme4 s (fit/)':>16s} {'lmerTest s (table/)':>20s} {'evals':>9s} {'dREML':>8s} "
        f"{'max rel dfixed':>15s}"
    )
    print(header)
    print("-" * len(header))
    for case in cases:
        data = load(case)
        formula = FORMULAS[case]
        runs = args.runs if len(data) < 10_000 else max(1, min(args.runs, 3))
        runs = 1 if len(data) >= 500_000 else runs
        (t_lib, lib), (t_libdf, _), (t_fit, _), (t_table, ours) = timed_round(
            [
                lambda: mixedlm_direct(data, formula),  # noqa: B023
                lambda: mixedlm_with_df(data, formula),  # noqa: B023
                lambda: LinearMixedModel(formula).fit(data),  # noqa: B023
                lambda: with_table(LinearMixedModel(formula).fit(data)),  # noqa: B023
            ],
            runs,
        )
        dfix = float(np.max(np.abs(ours.beta_.to_numpy() / np.asarray(lib.beta) - 1.0)))
        sm_text = "-"
        if case == "sleepstudy":
            sm = statsmodels_fit(case, data, args.cap)
            sm_text = f"{sm[0]:.4f}" if sm else f"> {args.cap:.0f} cap"
        elif case == "insteval2":
            sub = data.sample(1000, random_state=args.seed)
            sm = statsmodels_fit(case, sub, args.cap)
            sm_text = f"{sm[0]:.2f} (1,000 rows)" if sm else f"> {args.cap:.0f} (1,000 rows)"
        known = lme4 is not None and case in lme4.index
        lme4_text, lmertest_text, evals, dcrit = "-", "-", f"{ours.nfev_}", "-"
        if known:
            ref = lme4.loc[case]
            lme4_text = f"{ref['seconds']:.3f} ({t_fit / ref['seconds']:.2f}x)"
            dcrit = f"{ours.reml_criterion_ - float(ref['reml_criterion']):.0e}"
            if "lmertest_seconds" in ref.index:
                lmertest_text = (
                    f"{ref['lmertest_seconds']:.3f} ({t_table / ref['lmertest_seconds']:.2f}x)"
                )
                evals += f"/{int(ref['evaluations'])}"
        print(
            f"{case:12s} {len(data):7d} {t_fit:8.4f} {t_table:9.4f} {t_lib:10.4f} "
            f"{t_fit / t_lib:6.2f} {t_libdf:8.4f} {t_table / t_libdf:6.2f} {sm_text:>18s} "
            f"{lme4_text:>16s} {lmertest_text:>20s} {evals:>9s} {dcrit:>8s} {dfix:15.1e}"
            + ("  (singular fit)" if ours.singular_ else "")
        )
    if lme4 is not None:
        row = lme4.iloc[0]
        print(f"lme4 figures: {row['lme4']} on {row['r_version']}, measured {row['date']}")

    ours, ours_table, lib, lib_df, singular = refits_per_second(
        load("study"), FORMULAS["study"], args.refits, args.seed
    )
    print(
        f"\nrefits of the study model, {args.refits} simulated responses ({singular} singular): "
        f"adapter {ours:.0f}/s, with its table {ours_table:.0f}/s; mixedlm {lib:.0f}/s (ratio "
        f"of times {lib / ours:.2f}), with its df {lib_df:.0f}/s (ratio {lib_df / ours_table:.2f})"
    )


if __name__ == "__main__":
    main()
