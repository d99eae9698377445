"""Benchmark: what nutpie's compilations cost `evaluate` and a test file, before and after a change.

Each run is a fresh interpreter (imports, worker start-up and every compilation paid, as by
the command), timed for wall and CPU seconds (its own and its workers'), with every nutpie
compilation of every process logged (process id, seconds, the levels of each random block in
the compiled structure) by a start-up hook that wraps ``CachedModel.nutpie_model``. Source
trees given with ``--trees`` (a checkout before the change, one after) are alternated run by
run, so each pair meets the same state of a shared machine.

  evaluate   `evaluate_predictions` on the demo study (41 participants, seed 2024) with the
             Bayesian model in every holdout and fold (`bayes_kfold`), --seeds x --kfold,
             --draws draws and tuning steps, 2 chains, no bootstrap, serially and on
             `processes:2`; the metrics table of each run is compared with the serial run's
  --tests    also a test file under pytest (e.g. tests/longitudinal/predict/test_effects.py)

Run:  .venv/bin/python benchmarks/bench_evaluate_compile.py --trees BEFORE AFTER [--reps 2]
      [--draws 300] [--tests tests/longitudinal/predict/test_effects.py]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

HOOK = """
import importlib.abc, importlib.util, os, sys

LOG = os.environ.get("BENCH_COMPILE_LOG")


class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "models._backends.samplers":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            original = module.CachedModel.nutpie_model

            def nutpie_model(self):
                compiled, seconds = original(self)
                if seconds:
                    levels = [block[2] for block in self.key[5]] if len(self.key) > 5 else []
                    with open(LOG, "a") as fh:
                        fh.write(f"{os.getpid()} {seconds:.2f} {levels}\\n")
                return compiled, seconds

            module.CachedModel.nutpie_model = nutpie_model

        spec.loader.exec_module = exec_module
        return spec


if LOG:
    sys.meta_path.insert(0, _Hook())
"""


def evaluate_once(study_dir: str, scheduler: str, args: argparse.Namespace) -> None:
    """The child: one `evaluate_predictions` run; prints its seconds and the metrics' digest."""
    from longitudinal.predict import evaluate_predictions
    from longitudinal.study.loaded import load_study

    study = load_study(study_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = evaluate_predictions(
            study,
            seeds=args.seeds,
            k=args.kfold,
            n_boot=0,
            bayes=True,
            bayes_kfold=True,
            draws=args.draws,
            tune=args.draws,
            chains=2,
            scheduler=None if scheduler == "serial" else scheduler,
        )
    text = result.metrics.to_csv(index=False, float_format="%.17g")
    print("DIGEST", hashlib.sha256(text.encode()).hexdigest()[:12])


def timed(command: list[str], tree: Path, log: Path) -> tuple[float, float, str]:
    """Run ``command`` with ``tree`` first on the path; wall, CPU (with children), stdout."""
    env = dict(os.environ, BENCH_COMPILE_LOG=str(log))
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(log.parent / "hook")])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=tree, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{command} failed in {tree}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return wall, cpu, done.stdout


def compilations(log: Path) -> str:
    """Compilations per process, e.g. ``2+2`` (two processes), with their level counts."""
    if not log.exists():
        return "0"
    per_pid: dict[str, list[str]] = {}
    for line in log.read_text().splitlines():
        pid, _, levels = line.split(" ", 2)
        per_pid.setdefault(pid, []).append(levels.replace(" ", ""))
    return (
        "+".join(str(len(v)) for v in per_pid.values())
        + " "
        + " ".join("/".join(v) for v in per_pid.values())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="+", type=Path, default=[Path.cwd()])
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--kfold", type=int, default=5)
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--tests", default=None, help="a test file to time under pytest too")
    parser.add_argument(
        "--schedulers",
        nargs="+",
        default=["serial", "processes:2"],
        help="serial, processes:2, local:2",
    )
    parser.add_argument("--one", nargs=2, metavar=("STUDY", "SCHEDULER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        evaluate_once(*args.one, args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "hook").mkdir()
        (root / "hook" / "sitecustomize.py").write_text(HOOK)
        from longitudinal.simulate import simulate_study

        study = simulate_study(root / "study", seed=2024)
        script = str(Path(__file__).resolve())
        common = ["--seeds", str(args.seeds), "--kfold", str(args.kfold)]
        common += ["--draws", str(args.draws)]
        print(f"{'run':<24} {'tree':<28} {'wall s':>7} {'CPU s':>7}  same  compilations")
        serial: dict[tuple[int, Path], str] = {}  # each tree's serial digest, per repetition
        for rep in range(1, args.reps + 1):
            for scheduler in args.schedulers:
                for tree in args.trees:
                    log = root / f"log-{rep}-{scheduler}-{tree.name}"
                    command = [sys.executable, script, *common, "--one", str(study), scheduler]
                    wall, cpu, out = timed(command, tree.resolve(), log)
                    digest = out.split("DIGEST ")[-1].strip()
                    serial.setdefault((rep, tree), digest)
                    same = "yes" if digest == serial[(rep, tree)] else "NO"
                    print(
                        f"{'evaluate ' + scheduler:<24} {tree.name:<28} {wall:>7.1f} {cpu:>7.1f}"
                        f"  {same:<4}  {compilations(log)}  (load {os.getloadavg()[0]:.1f})"
                    )
            for tree in args.trees if args.tests else []:
                log = root / f"log-{rep}-tests-{tree.name}"
                command = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p"]
                command += ["no:cacheprovider", args.tests]
                wall, cpu, _ = timed(command, tree.resolve(), log)
                print(
                    f"{Path(args.tests).name:<24} {tree.name:<28} {wall:>7.1f} {cpu:>7.1f}"
                    f"  {'':<4}  {compilations(log)}  (load {os.getloadavg()[0]:.1f})"
                )


if __name__ == "__main__":
    main()
