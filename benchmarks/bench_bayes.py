"""Benchmark: the study-sized ordinal model, BayesianMixedModel vs a straightforward PyMC model.

Data (simulated here, seeded): about 1,100 ratings on 1-5 from 41 participants (27 each:
9 sessions x 3 stories) of 600 stories, with a person-level trait, a week slope, random
intercept and week slope per participant and story intercepts:

    empathy ~ trait + week + (1 + week | participant) + (1 | story)

Baseline, run in the same script: the same model written directly in PyMC the obvious way
(non-centred effects, LKJ Cholesky prior, ``pm.OrderedLogistic``, raw predictors, default
``pm.sample``: NUTS, target_accept 0.8, no tuning of the parameterisation).

Each run of ``BayesianMixedModel`` (class defaults unless --draws/--tune/--chains/
--target-accept are given) reports its compilation and sampling seconds, the minimum bulk ESS
over the population-level parameters (fixed effects, cutpoints, group sds, correlation) and
also over every group effect, min bulk ESS per second with and without compilation,
divergences, the largest R-hat and whether the diagnostics gate passed. Then, in the same
run: refits of the same structure on newly simulated data (the compiled model is reused:
seconds per refit, compilation seconds, which must be 0), and a crossed 10,000-row ordinal
model (400 students x 25 of 40 lecturers, simulated here, seeded) with its wall time and
diagnostics, fitted in a child process that also reports its memory: the peak resident size
after the fit and PSIS-LOO (``loo()``, computed in blocks of rows), then after reading
``idata_`` (which builds the whole draws x rows log-likelihood and predictive draws, as every
fit did before) and ``arviz.loo`` on it, with the relative difference of the two LOO estimates.

    .venv/bin/python benchmarks/bench_bayes.py                 # baseline + every sampler
    .venv/bin/python benchmarks/bench_bayes.py --samplers nutpie --no-baseline
    .venv/bin/python benchmarks/bench_bayes.py --json out.json
    .venv/bin/python benchmarks/bench_bayes.py --crossed-only  # the crossed fit and its memory
    .venv/bin/python benchmarks/bench_bayes.py --insteval [--reference]  # many levels

``--insteval`` takes lme4's InstEval as the many-level crossed case: the 10,489 ratings of its
first 400 students (of 1,037 lecturers), ``y ~ service + (1 | s) + (1 | d)``, ordinal. It fits
with the defaults until the estimate said before sampling (compilation and a 40-iteration
probe; the fit stops there), prints that estimate and the seconds it took to say it, then fits
with ``draws="auto"`` (or --draws) and prints the wall time, the draws kept and the gate; with
``--reference`` also the default fit (2 x 10,000 draws, another seed) and the largest distance
of the auto fit's posterior means (population parameters, and every group effect) from it, in
posterior sds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
from scipy import special

FORMULA = "empathy ~ trait + week + (1 + week | participant) + (1 | story)"


CROSSED_FORMULA = "rating ~ prior + (1 | student) + (1 | lecturer)"


def simulate(seed: int = 2024) -> pd.DataFrame:
    """41 participants x 9 sessions x 3 stories, 600 stories, ordinal ratings 1-5."""
    rng = np.random.default_rng(seed)
    n_person, n_session, per_session, n_story = 41, 9, 3, 600
    cut = np.array([-2.2, -0.9, 0.4, 1.7])
    trait = rng.normal(size=n_person)
    cov = np.array([[0.8**2, -0.3 * 0.8 * 0.15], [-0.3 * 0.8 * 0.15, 0.15**2]])
    u = rng.multivariate_normal([0.0, 0.0], cov, size=n_person)
    story_effect = rng.normal(0.0, 0.5, n_story)
    # every story is rated (about twice); no participant rates a story twice
    per_person = n_session * per_session
    pool = np.concatenate([rng.permutation(n_story) for _ in range(2)])
    rows = []
    for p in range(n_person):
        stories = pool[p * per_person : (p + 1) * per_person]
        for s in range(n_session):
            week = s * 4 / n_session
            for k in range(per_session):
                st = stories[s * per_session + k]
                eta = 0.5 * trait[p] + 0.2 * week + u[p, 0] + u[p, 1] * week + story_effect[st]
                pr = np.diff(np.concatenate([[0.0], special.expit(cut - eta), [1.0]]))
                rows.append((f"P{p:02d}", f"S{st:03d}", trait[p], week, rng.choice(5, p=pr) + 1))
    return pd.DataFrame(rows, columns=["participant", "story", "trait", "week", "empathy"])


def simulate_crossed(seed: int = 7, *, n_student: int = 400, n_lecturer: int = 40, per: int = 25):
    """Students rate ``per`` of the lecturers on 1-5: 10,000 crossed ordinal ratings."""
    rng = np.random.default_rng(seed)
    cut = np.array([-2.0, -0.6, 0.6, 2.0])
    prior = rng.normal(size=n_student)
    u_student = rng.normal(0.0, 0.7, n_student)
    u_lecturer = rng.normal(0.0, 0.5, n_lecturer)
    student = np.repeat(np.arange(n_student), per)
    lecturer = np.concatenate(
        [rng.choice(n_lecturer, per, replace=False) for _ in range(n_student)]
    )
    eta = 0.4 * prior[student] + u_student[student] + u_lecturer[lecturer]
    cdf = special.expit(cut[None, :] - eta[:, None])
    probs = np.diff(np.concatenate([np.zeros((len(eta), 1)), cdf, np.ones((len(eta), 1))], 1), 1)
    rating = 1 + (rng.random(len(eta))[:, None] > np.cumsum(probs, axis=1)).sum(axis=1)
    return pd.DataFrame(
        {
            "student": [f"st{i:03d}" for i in student],
            "lecturer": [f"lc{j:02d}" for j in lecturer],
            "prior": prior[student],
            "rating": np.minimum(rating, 5),
        }
    )


def _min_ess(idata, names: list[str]) -> tuple[float, float]:
    import arviz as az

    ess = az.ess(idata, var_names=names, method="bulk")
    rhat = az.rhat(idata, var_names=names)
    ess_values = np.concatenate([np.ravel(ess[n].values) for n in names])
    rhat_values = np.concatenate([np.ravel(rhat[n].values) for n in names])
    return float(np.nanmin(ess_values)), float(np.nanmax(rhat_values))


def baseline(data: pd.DataFrame, *, draws: int, tune: int, chains: int, seed: int) -> dict:
    """The straightforward PyMC model: what one writes first."""
    from models._backends.samplers import import_pymc

    pm = import_pymc()
    person, persons = pd.factorize(data["participant"], sort=True)
    story, stories = pd.factorize(data["story"], sort=True)
    y = data["empathy"].to_numpy() - 1
    X = data[["trait", "week"]].to_numpy(dtype=float)
    week = data["week"].to_numpy(dtype=float)
    start = time.perf_counter()
    with pm.Model() as model:
        b = pm.Normal("b", 0.0, 2.5, shape=2)
        chol, corr, sds = pm.LKJCholeskyCov(
            "chol", n=2, eta=2.0, sd_dist=pm.HalfNormal.dist(2.0, shape=2), compute_corr=True
        )
        z = pm.Normal("z", 0.0, 1.0, shape=(len(persons), 2))
        u = pm.Deterministic("u", z @ chol.T)
        sd_story = pm.HalfNormal("sd_story", 2.0)
        z_story = pm.Normal("z_story", 0.0, 1.0, shape=len(stories))
        v = pm.Deterministic("v", z_story * sd_story)
        eta = X @ b + u[person, 0] + u[person, 1] * week + v[story]
        cut = pm.Normal(
            "cutpoints",
            0.0,
            5.0,
            shape=4,
            transform=pm.distributions.transforms.ordered,
            initval=np.linspace(-2, 2, 4),
        )
        pm.OrderedLogistic("y", eta=eta, cutpoints=cut, observed=y, compute_p=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            idata = pm.sample(
                draws=draws,
                tune=tune,
                chains=chains,
                random_seed=seed,
                progressbar=False,
                compute_convergence_checks=False,
            )
    seconds = time.perf_counter() - start
    del model
    idata.posterior["cor"] = idata.posterior["chol_corr"][:, :, 0, 1]
    pop = ["b", "cutpoints", "chol_stds", "cor", "sd_story"]
    ess_pop, rhat_pop = _min_ess(idata, pop)
    ess_all, rhat_all = _min_ess(idata, [*pop, "u", "v"])
    return {
        "run": "baseline PyMC",
        "seconds": seconds,
        "ess_bulk_min": ess_pop,
        "ess_bulk_min_all": ess_all,
        "r_hat_max": max(rhat_pop, rhat_all),
        "divergences": int(idata.sample_stats["diverging"].sum()),
    }


def ours(data: pd.DataFrame, formula: str = FORMULA, *, label: str = "", **settings) -> dict:
    """One fit with ``BayesianMixedModel``: settings left out take the class defaults."""
    from models.bayes import BayesianMixedModel

    model = BayesianMixedModel(formula, **{k: v for k, v in settings.items() if v is not None})
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the gate's warning: its numbers are reported below
        model.fit(data)
    wall = time.perf_counter() - start
    diag = model.diagnostics_
    effects = model.group_effects()
    sampling = diag["seconds"] - diag["compile_seconds"]
    return {
        "run": f"{label}sampler={diag['sampler']} {diag['chains']}x{diag['draws']}",
        "wall_seconds": wall,
        "seconds": diag["seconds"],
        "compile_seconds": diag["compile_seconds"],
        "sampling_seconds": sampling,
        "ess_bulk_min": diag["ess_bulk_min"],
        "ess_tail_min": diag["ess_tail_min"],
        "ess_per_second": diag["ess_bulk_min"] / diag["seconds"],
        "ess_per_second_sampling": diag["ess_bulk_min"] / sampling,
        "ess_bulk_min_all": float(min(diag["ess_bulk_min"], effects["ess_bulk"].min())),
        "r_hat_max": float(max(diag["r_hat_max"], effects["r_hat"].max())),
        "divergences": int(diag["divergences"]),
        "failures": diag["failures"],
        "passed": bool(diag["passed"]),
    }


def _peak_gb() -> float:
    """Peak resident size of this process so far, in GB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def crossed_memory(settings: dict) -> dict:
    """The crossed fit, its blocked LOO and the peak memory, then the same LOO from ``idata_``."""
    import arviz as az

    from models.bayes import BayesianMixedModel

    wide = simulate_crossed()
    model = BayesianMixedModel(
        CROSSED_FORMULA, **{k: v for k, v in settings.items() if v is not None}
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(wide)
        fit_seconds = time.perf_counter() - start
        loo = model.loo()
    loo_seconds = time.perf_counter() - start - fit_seconds
    peak_fit = _peak_gb()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = az.loo(model.idata_)
    diag = model.diagnostics_
    return {
        "rows": len(wide),
        "draws": diag["draws"] * diag["chains"],
        "fit_seconds": fit_seconds,
        "loo_seconds": loo_seconds,
        "peak_gb_fit_and_loo": peak_fit,
        "peak_gb_with_idata": _peak_gb(),
        "elpd_loo": float(loo["elpd_loo"]),
        "elpd_loo_relative_difference": abs(loo["elpd_loo"] / full["elpd_loo"] - 1.0),
        "passed": bool(diag["passed"]),
    }


def insteval(settings: dict, *, reference: bool = False) -> dict:
    """The many-level crossed case: the estimate said before sampling, the draws='auto' fit,
    and with ``reference`` the default fit (10,000 draws per chain, another seed), with the
    largest distance of the auto fit's posterior means from the reference's, in posterior sds."""
    from models.bayes import BayesianMixedModel
    from models.bayes.estimate import LongSamplingWarning

    sys.path.insert(0, os.path.dirname(__file__))
    from bench_ordinal import FORMULAS, load

    data = load("insteval400")
    formula = FORMULAS["insteval400"]
    chosen = {k: v for k, v in settings.items() if v is not None}
    defaults = {k: v for k, v in chosen.items() if k == "seed"}
    start = time.perf_counter()
    note = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", LongSamplingWarning)
        try:
            BayesianMixedModel(formula, family="ordinal", **defaults).fit(data)
        except LongSamplingWarning as said:
            note = str(said)
    said_after = time.perf_counter() - start
    out = {
        "rows": len(data),
        "levels": {"s": int(data["s"].nunique()), "d": int(data["d"].nunique())},
        "estimate_said_after_seconds": said_after,
        "estimate": note,
    }
    print(json.dumps(out), flush=True)
    fits = {"auto": {**chosen, "draws": chosen.get("draws", "auto")}}
    if reference:
        fits["reference"] = {**chosen, "draws": 10_000, "seed": chosen.get("seed", 1) + 1000}
    models = {}
    for name, kw in fits.items():
        model = BayesianMixedModel(formula, family="ordinal", **kw)
        begun = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(data)
        diag = model.diagnostics_
        out[name] = {
            "wall_seconds": time.perf_counter() - begun,
            "compile_seconds": diag["compile_seconds"],
            "draws_kept": diag["draws"],
            **{k: diag[k] for k in ("ess_bulk_min", "ess_tail_min", "r_hat_max", "divergences")},
            "passed": bool(diag["passed"]),
        }
        print(json.dumps({name: out[name]}), flush=True)
        models[name] = model
    if reference:
        keys = ["component", "group", "term"]
        a, b = (models[k].summary_.set_index(keys) for k in ("auto", "reference"))
        out["largest_distance_in_sd"] = float(
            ((a["estimate"] - b["estimate"]).abs() / b["se"]).max()
        )
        ga, gb = (models[k].group_effects().set_index(["group", "level", "term"]) for k in fits)
        out["largest_group_effect_distance_in_sd"] = float(
            ((ga["estimate"] - gb["estimate"]).abs() / gb["se"]).max()
        )
    return out


def _row(r: dict, base: float | None) -> str:
    rate = r["ess_bulk_min"] / r["seconds"]
    ratio = f"{rate / base:7.1f}" if base else "      -"
    compile_s = r.get("compile_seconds", float("nan"))
    return (
        f"{r['run']:44s} {r['seconds']:7.1f} {compile_s:7.1f} {r['ess_bulk_min']:7.0f} "
        f"{rate:7.1f} {r.get('ess_per_second_sampling', float('nan')):8.1f} {ratio} "
        f"{r['ess_bulk_min'] / r.get('wall_seconds', r['seconds']):7.1f} "
        f"{r['ess_bulk_min_all']:8.0f} {r['divergences']:4d} {r['r_hat_max']:6.3f} "
        f"{'pass' if r.get('passed', not r.get('failures')) else 'FAIL'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--samplers", nargs="*", default=None, help="default: the class default ('auto')"
    )
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--draws", type=int, default=None, help="default: the class default")
    parser.add_argument("--tune", type=int, default=None, help="default: the class default")
    parser.add_argument("--chains", type=int, default=None, help="default: the class default")
    parser.add_argument("--target-accept", type=float, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--refits", type=int, default=2, help="refits on new data; 0: skip")
    parser.add_argument("--no-crossed", action="store_true", help="skip the 10,000-row model")
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--crossed-only", action="store_true", help="only the crossed fit's time and memory"
    )
    parser.add_argument(
        "--insteval", action="store_true", help="only the many-level crossed case (InstEval)"
    )
    parser.add_argument(
        "--reference", action="store_true", help="--insteval: also the 10,000-draw reference fit"
    )
    args = parser.parse_args()
    settings = {
        "draws": args.draws,
        "tune": args.tune,
        "chains": args.chains,
        "target_accept": args.target_accept,
        "seed": args.seed,
    }
    if args.crossed_only:
        print(json.dumps(crossed_memory(settings)), flush=True)
        return
    if args.insteval:
        print(json.dumps(insteval(settings, reference=args.reference), default=str), flush=True)
        return
    samplers = args.samplers or ["auto"]
    data = simulate()
    print(
        f"data: {len(data)} ratings, {data['participant'].nunique()} participants, "
        f"{data['story'].nunique()} stories; {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    results = []
    if not args.no_baseline:
        kw = {"draws": 1000, "tune": 1000, "chains": 2, "seed": args.seed}
        kw.update({k: v for k, v in settings.items() if k in kw and v is not None})
        results.append(baseline(data, **kw))
        print(results[-1], flush=True)
    for sampler in samplers:
        results.append(ours(data, sampler=sampler, label="study ", **settings))
        print(results[-1], flush=True)
    refits = []
    for k in range(args.refits):
        # same structure (41 participants, 600 stories), new ratings: the compiled model is reused
        refits.append(
            ours(simulate(seed=3000 + k), sampler=samplers[-1], label="refit ", **settings)
        )
        print(refits[-1], flush=True)
    crossed = None
    if not args.no_crossed:
        wide = simulate_crossed()
        crossed = ours(
            wide, CROSSED_FORMULA, sampler=samplers[-1], label="crossed 10k ", **settings
        )
        print(crossed, flush=True)
        child = [sys.executable, __file__, "--crossed-only", "--seed", str(args.seed)]
        for name in ("draws", "tune", "chains", "target_accept"):
            if settings[name] is not None:
                child += [f"--{name.replace('_', '-')}", str(settings[name])]
        out = subprocess.run(child, capture_output=True, text=True, check=True).stdout
        crossed["memory"] = json.loads(out.strip().splitlines()[-1])
    base = results[0]["ess_bulk_min"] / results[0]["seconds"] if not args.no_baseline else None
    print(
        f"\n{'run':44s} {'seconds':>7s} {'compile':>7s} {'minESS':>7s} {'ESS/s':>7s} "
        f"{'ESS/s*':>8s} {'x base':>7s} {'ESS/s+':>7s} {'minESS(all)':>8s} {'div':>4s} "
        f"{'R-hat':>6s} gate"
    )
    for r in [*results, *refits, *([crossed] if crossed else [])]:
        print(_row(r, base))
    print(
        "ESS/s: with compilation; ESS/s*: sampling only; ESS/s+: the whole fit call "
        "(compilation, sampling, log-likelihood, predictive draws, diagnostics)"
    )
    if refits:
        per_refit = sum(r["wall_seconds"] for r in refits) / len(refits)
        compiled = sum(r["compile_seconds"] for r in refits)
        print(
            f"refit on new data, same structure: {per_refit:.1f} s per refit (wall, "
            f"{compiled:.1f} s compiling), gate passed {sum(r['passed'] for r in refits)}"
            f"/{len(refits)}"
        )
    if crossed:
        print(
            f"crossed ordinal model, {len(wide):,} ratings: {crossed['wall_seconds']:.1f} s wall "
            f"({crossed['compile_seconds']:.1f} s compiling), diagnostics "
            f"{'passed' if crossed['passed'] else 'FAILED ' + ', '.join(crossed['failures'])}"
        )
        mem = crossed["memory"]
        print(
            f"crossed model's memory (child process): peak {mem['peak_gb_fit_and_loo']:.2f} GB "
            f"after fit() and loo() (target <= 1.5 GB); {mem['peak_gb_with_idata']:.2f} GB once "
            f"idata_ holds the {mem['draws']:,} x {mem['rows']:,} pointwise draws; LOO in blocks "
            f"vs arviz.loo(idata_): relative difference {mem['elpd_loo_relative_difference']:.1e} "
            "(target <= 1e-8)"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(
                {"study": results, "refits": refits, "crossed": crossed}, fh, indent=2, default=str
            )


if __name__ == "__main__":
    main()
