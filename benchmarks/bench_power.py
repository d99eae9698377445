"""Benchmark: simulate_power serial, on local processes and on a Dask LocalCluster, in one run.

Cases
  study    the study-sized pilot of benchmarks/bench_lmm.py (benchmarks/data/study_sized.csv:
           804 ratings, 41 participants, 120 stories), empathy ~ trait + week +
           (1 + week | participant) + (1 | story), REML; trait set to 0.2, 41 participants,
           Satterthwaite t test (what `longitudinal power --pilot` runs)
  ordinal  the same data with empathy rounded to a rating 1..5 and the cumulative link mixed
           model rating ~ trait + week + (1 + week | participant) + (1 | story) as the pilot;
           trait set to 0.3 (log odds ratio), Wald z test (`longitudinal power --engine clmm`),
           against an ordinal::clmm simulate/refit loop in R (benchmarks/power_clmm.R,
           committed in benchmarks/data/power_clmm_timings.csv), not re-run here
  demo     the demo study (`longitudinal demo`, seed 2024) as the pilot, as in docs/guide/power.md's
           `longitudinal power --pilot` example: its empathy model with four traits, a random
           week slope by participant and a story intercept, agreeableness set to 0.2, 40
           participants, serial, Satterthwaite t and likelihood-ratio tests (a quarter of the
           refits end at the boundary, where Newton's method reaches a zero variance as an
           ordinary minimum; 435 stories make this design's dense part the largest here)
  design   y ~ x + trait + (1 + x | pid), 40 participants x 27 ratings, from a design (x per
           rating, trait per participant, both standard normal; effects 0.2 and 0.2; random
           intercept variance 0.3 / 0.7 and slope variance 0.05 against a residual variance
           of 1), Satterthwaite t test; beside mcpower on the same design (given
           --mcpower-python: an interpreter of a separate environment holding mcpower, which is
           GPL and never a dependency of this package), with mcpower's rejection rate at zero
           effects

Back ends
  serial      scheduler=None: every refit in this process
  processes   scheduler="processes:N": N processes (forked on Linux), BLAS pinned to one thread
              each
  dask        scheduler="local:N": a Dask LocalCluster of N single-threaded workers on 127.0.0.1
              (on Linux a forked helper simulates while it starts, and its workers are forked)
  lme4        a plain simulate/refit/lmerTest loop in R (benchmarks/power_lme4.R, committed in
              benchmarks/data/power_lme4_timings.csv with its date), not re-run here

Each back end runs the same simulations with the same seed; the script prints simulations per
second (wall time of the whole call, start-up of the workers included), the ratio to serial, and
checks that the three tables are identical, and the start-up of one process worker (a new
interpreter unpickling the jobs and running one simulation). In the study case every run is a
fresh interpreter (Dask is imported inside the timed call, as on a user's first call) and the
back ends alternate over --rounds rounds; each ratio is taken within its round and the median
over rounds is printed with its range, because a shared host's speed drifts within minutes.
The targets: at least 250 simulations/s serially on 2 cores for the study-sized pilot, 100/s
for the demo pilot, and 1.7x serial on 2 workers at 2,000 simulations.

Run:  .venv/bin/python benchmarks/bench_power.py [--sims 400] [--workers 2] [--ordinal-sims 100]
          [--demo-sims 200] [--cases study,ordinal,demo,design] [--rounds 3]
          [--mcpower-python /path/to/other-env/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import textwrap
import time
from pathlib import Path

# The package and pandas are imported inside the functions: where process workers are spawned
# (not on Linux), each imports this script again before its first task, as a user's script.

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data"
FORMULA = "empathy ~ trait + week + (1 + week | participant) + (1 | story)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400, help="simulations per back end")
    parser.add_argument("--workers", type=int, default=2, help="processes and Dask workers")
    parser.add_argument("--seed", type=int, default=20240501)
    parser.add_argument("--ordinal-sims", type=int, default=100, help="ordinal simulations")
    parser.add_argument("--demo-sims", type=int, default=200, help="demo-pilot simulations")
    parser.add_argument("--cases", default="study,ordinal,demo,design", help="cases to run")
    parser.add_argument("--mcpower-python", help="python of an environment with mcpower")
    parser.add_argument(
        "--rounds", type=int, default=3, help="study case: rounds of alternated back ends"
    )
    parser.add_argument("--once", help=argparse.SUPPRESS)  # one study run, in a child
    args = parser.parse_args()
    if args.once:
        study_once(args)
        return
    cases = {"study": study_case, "ordinal": ordinal_case, "demo": demo_case, "design": design_case}
    for name in args.cases.split(","):
        cases[name](args)


def demo_case(args: argparse.Namespace) -> None:
    """The demo study as the pilot (what the power example of docs/guide/power.md runs), serial."""
    import tempfile
    import warnings

    from longitudinal.power import pilot_empathy_model
    from longitudinal.simulate import simulate_study

    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the pilot's data-quality notes
        pilot = pilot_empathy_model(simulate_study(Path(tmp) / "study", seed=2024))
    options = {
        "effect": {"bfi44_agreeableness_z": 0.2},
        "n_participants": [40],
        "n_sims": args.demo_sims,
        "seed": args.seed,
        "data": pilot.data,
        "id_col": pilot.participant_col,
        "session_col": pilot.session_col,
    }
    print(f"\ndemo study as the pilot, {args.demo_sims} simulations at 40 participants, serial")
    _timed(pilot.model, **{**options, "n_sims": 5})  # warm-up: one-off imports, as the study's
    for test in ("satterthwaite", "lrt"):
        seconds, result = _timed(pilot.model, test=test, **options)
        row = result.table.iloc[0]
        print(
            f"{test:13s} {args.demo_sims / seconds:6.1f} sims/s  power {row['power']:.3f}  "
            f"singular {int(row['n_singular'])}  failed {int(row['n_failed'])}"
        )


def study_pilot(args: argparse.Namespace):
    """The study-sized pilot and the options of every back end's run."""
    import pandas as pd

    from models.lmm import LinearMixedModel

    data = pd.read_csv(DATA / "study_sized.csv")
    pilot = LinearMixedModel(FORMULA).fit(data)
    options = {
        "data": data,
        "effect": {"trait": 0.2},
        "n_participants": [41],
        "n_sims": args.sims,
        "seed": args.seed,
        "progress": False,
    }
    return pilot, options


def study_once(args: argparse.Namespace) -> None:
    """One back end's run in this (fresh) interpreter: one JSON line on stdout.

    The pilot is fitted and five simulations run first (one-off imports, as a user's session
    has them); the timed call then pays all that is its own: Dask's import and the cluster's
    start for ``local:N``, the workers' start-up for ``processes:N``.
    """
    import hashlib

    import pandas as pd

    from models.power import simulate_power

    pilot, options = study_pilot(args)
    simulate_power(pilot, **{**options, "n_sims": 5})
    scheduler = None if args.once == "serial" else args.once
    start = time.perf_counter()
    result = simulate_power(pilot, scheduler=scheduler, **options)
    seconds = time.perf_counter() - start
    digest = hashlib.sha256(pd.util.hash_pandas_object(result.simulations).to_numpy().tobytes())
    out = {
        "seconds": seconds,
        "power": float(result.table["power"].iloc[0]),
        "simulations": digest.hexdigest(),
        "start_method": result.meta.get("start_method"),
    }
    print(json.dumps(out))


def study_case(args: argparse.Namespace) -> None:
    """The linear study-sized pilot on every back end, beside the committed lme4 loop.

    Every run is a fresh interpreter, and the back ends alternate over ``--rounds`` rounds
    (serial, processes, Dask, then again): the host's speed drifts by a fifth within minutes
    on shared cores, so each ratio is taken within a round, and the median over rounds is
    printed with its range.
    """
    import statistics
    import sys

    import pandas as pd

    n = args.workers
    backends = (("serial", "serial"), ("processes", f"processes:{n}"), ("dask", f"local:{n}"))
    runs: dict[str, list[dict]] = {name: [] for name, _ in backends}
    for _ in range(args.rounds):
        for name, scheduler in backends:
            argv = [sys.executable, __file__, "--cases", "study", "--once", scheduler]
            argv += ["--sims", str(args.sims), "--seed", str(args.seed)]
            done = subprocess.run(argv, check=True, capture_output=True, text=True)
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))

    serial = [run["seconds"] for run in runs["serial"]]
    print(
        f"study-sized model, {args.sims} simulations, {n} workers, {os.cpu_count()} cores, "
        f"{args.rounds} rounds of fresh interpreters"
    )
    header = (
        f"{'back end':10s} {'sims/s (median, range)':>26s} {'speed-up (median, range)':>27s} "
        f"{'power':>6s}"
    )
    print(header)
    print("-" * len(header))
    for name, _ in backends:
        seconds = [run["seconds"] for run in runs[name]]
        rates = [args.sims / s for s in seconds]
        ups = [base / s for base, s in zip(serial, seconds, strict=True)]
        print(
            f"{name:10s} {statistics.median(rates):9.1f} ({min(rates):6.1f}-{max(rates):6.1f}) "
            f"{statistics.median(ups):12.2f} ({min(ups):5.2f}-{max(ups):5.2f}) "
            f"{runs[name][0]['power']:6.3f}"
        )
    methods = {name: runs[name][0]["start_method"] for name in ("processes", "dask")}
    print(f"worker start method: processes {methods['processes']}, dask {methods['dask']}")
    same = len({run["simulations"] for group in runs.values() for run in group}) == 1
    print(f"identical simulations across back ends and rounds: {same}")
    pilot, options = study_pilot(args)
    spawned, forked = worker_startup(pilot, options)
    print(
        f"worker start-up (unpickle the job, first simulation): spawned (a new interpreter) "
        f"{spawned:.2f} s" + (f", forked (Linux) {forked:.3f} s" if forked is not None else "")
    )
    path = DATA / "power_lme4_timings.csv"
    if path.exists():
        r = pd.read_csv(path).iloc[0]
        rate = float(r["sims_per_second"])
        base = statistics.median(serial)
        print(
            f"lme4 + lmerTest loop (R, one process): {rate:.1f} sims/s, {r['n_sims']} simulations "
            f"({r['lme4']}, lmerTest {r['lmerTest']}, {r['r_version']}, measured {r['date']}); "
            f"serial here / lme4: {args.sims / base / rate:.2f}"
        )


def worker_startup(pilot, options: dict) -> tuple[float, float | None]:
    """Seconds a worker takes to unpickle the jobs and run one simulation, from a fresh
    interpreter (a spawned worker, the interpreter's start included) and from a fork of this
    process (None where there is no fork): what each worker pays before its first result."""
    import pickle
    import sys
    import tempfile

    import models.parallel as runners
    from models.power import simulate_power

    captured = {}
    real = runners.run

    def capture(jobs, **kw):
        captured["jobs"] = list(jobs)
        return real(jobs, **kw)

    runners.run = capture
    try:
        simulate_power(pilot, **{**options, "n_sims": 1})
    finally:
        runners.run = real
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "jobs.pkl"
        path.write_bytes(pickle.dumps(captured["jobs"], protocol=pickle.HIGHEST_PROTOCOL))
        code = "import pickle, sys; pickle.loads(open(sys.argv[1], 'rb').read())[0].run(0, 1)"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, str(path)], check=True)
        spawned = time.perf_counter() - start
    return spawned, _forked_startup(captured["jobs"])


def _forked_startup(jobs: list) -> float | None:
    import multiprocessing as mp

    import models.parallel as runners

    if "fork" not in mp.get_all_start_methods():
        return None
    start = time.perf_counter()
    with runners._pool(jobs, 1, "fork") as pool:
        pool.submit(runners._process_batch, (0, 0, 1)).result()
        return time.perf_counter() - start


def _timed(model_or_design, **kw) -> tuple[float, object]:
    from models.power import simulate_power

    start = time.perf_counter()
    result = simulate_power(model_or_design, progress=False, **kw)
    return time.perf_counter() - start, result


def ordinal_case(args: argparse.Namespace) -> None:
    """The ordinal pilot, serial and on local processes, beside the committed clmm loop."""
    import pandas as pd

    from models.ordinal import OrdinalMixedModel

    data = pd.read_csv(DATA / "study_sized.csv")
    data["rating"] = data["empathy"].round().clip(1, 5)
    pilot = OrdinalMixedModel("rating ~ trait + week + (1 + week | participant) + (1 | story)").fit(
        data
    )
    options = {
        "data": data,
        "effect": {"trait": 0.3},
        "n_participants": [41],
        "n_sims": args.ordinal_sims,
        "seed": args.seed,
    }
    serial, result = _timed(pilot, **options)
    procs, other = _timed(pilot, scheduler=f"processes:{args.workers}", **options)
    print()
    print(f"ordinal study-sized model, {args.ordinal_sims} simulations (Wald z test of trait)")
    for name, seconds, res in (("serial", serial, result), ("processes", procs, other)):
        print(
            f"{name:10s} {seconds:8.2f} s {args.ordinal_sims / seconds:8.1f} sims/s "
            f"power {res.table['power'].iloc[0]:.3f} failed {res.table['n_failed'].iloc[0]}"
        )
    print(f"identical simulations: {result.simulations.equals(other.simulations)}")
    path = DATA / "power_clmm_timings.csv"
    if path.exists():
        r = pd.read_csv(path).iloc[0]
        rate = float(r["sims_per_second"])
        print(
            f"ordinal::clmm loop (R, one process): {rate:.3f} sims/s, {r['n_sims']} simulations "
            f"(ordinal {r['ordinal']}, {r['r_version']}, measured {r['date']}); serial here / "
            f"clmm: {args.ordinal_sims / serial / rate:.1f}, processes here / clmm: "
            f"{args.ordinal_sims / procs / rate:.1f} (target >= 10)"
        )


DESIGN = {
    "design": {
        "formula": "y ~ x + trait + (1 + x | participant_id)",
        "participants": 40,
        "sessions": 9,
        "stories_per_session": 3,
        "stories": 27,
    },
    "predictors": {"x": {"level": "rating"}, "trait": {"level": "participant"}},
    "fixed": {"Intercept": 0.0, "x": 0.2, "trait": 0.2},
    "random": {"participant_id": {"sd": {"Intercept": (0.3 / 0.7) ** 0.5, "x": 0.05**0.5}}},
    "residual": {"sd": 1.0},
}

MCPOWER = textwrap.dedent(
    """
    import json, sys, time
    import mcpower

    def model(effect):
        m = mcpower.MCPower("y ~ x + trait + (1 + x | pid)", family="lme")
        m.set_cluster("pid", ICC=0.3, cluster_size=27, random_slopes=["x"],
                      slope_variance=0.05, cluster_level_vars=["trait"])
        m.set_effects({"x": effect, "trait": effect})
        return m

    n_sims, n_null = int(sys.argv[1]), int(sys.argv[2])
    start = time.perf_counter()
    power = model(0.2).find_power(1080, n_sims=n_sims, seed=1, progress_callback=False,
                                  verbose=False)
    seconds = time.perf_counter() - start
    null = model(0.0).find_power(1080, n_sims=n_null, seed=2, progress_callback=False,
                                 verbose=False)
    print(json.dumps({"version": mcpower.__version__, "seconds": seconds,
                      "power": str(power), "null": str(null)}, default=str))
    """
)


def design_case(args: argparse.Namespace) -> None:
    """A gaussian design, ours (serial, processes) beside mcpower when it is given."""
    from models.power import read_design

    design = read_design(DESIGN)
    options = {"effect": {"trait": 0.2}, "n_sims": args.sims, "seed": args.seed}
    serial, result = _timed(design, **options)
    procs, _ = _timed(design, scheduler=f"processes:{args.workers}", **options)
    print()
    print(f"design y ~ x + trait + (1 + x | participant), 40 x 27, {args.sims} simulations")
    print(
        f"ours serial    {args.sims / serial:8.1f} sims/s  power(trait) "
        f"{result.table['power'].iloc[0]:.3f}"
    )
    print(f"ours processes {args.sims / procs:8.1f} sims/s")
    if not args.mcpower_python:
        print("mcpower: not run (give --mcpower-python, an interpreter with mcpower installed)")
        return
    n_null = 4000
    out = subprocess.run(
        [args.mcpower_python, "-c", MCPOWER, str(args.sims), str(n_null)],
        check=True,
        capture_output=True,
        text=True,
    )
    info = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"mcpower {info['version']:8s} {args.sims / info['seconds']:8.1f} sims/s (its own "
        "threads; design only, no pilot, no ordinal)"
    )
    print(textwrap.indent(info["power"], "    "))
    print(f"mcpower with both effects 0 ({n_null} simulations): rejection rates")
    print(textwrap.indent(info["null"], "    "))


if __name__ == "__main__":
    main()
