"""Benchmark: how long the packages and the command line take to start, whole process.

Each figure is the median wall time (and CPU time, user + system, steadier on a loaded machine)
of --runs fresh interpreters (after one warm-up run, so
that the bytecode cache is written: PYTHONDONTWRITEBYTECODE is removed from the children's
environment), printed beside its target and beside `python -c "import pandas"` measured in
the same run, the baseline on a loaded machine (pandas alone is most of `import models`).

  python               python -c pass (the interpreter itself)
  import pandas        the baseline
  import models        target 1.0 s
  import all three     import surveys, models, longitudinal
  longitudinal --help  target 0.3 s: parsed before pandas or SciPy is imported
  score --help         a subcommand's help, same rule
  bad arguments        a usage error (exit 2), same rule
  longitudinal score   a 100-row TAS-20 short form (tas4) export scored to a CSV, with the
                       reliability file: target 1.5 s

The command is run as the console script runs it (`from longitudinal.cli import main`), with
this checkout first on sys.path.

Run:  .venv/bin/python benchmarks/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ALL_THREE = "import surveys, models, longitudinal"
CLI = "import sys; from longitudinal.cli import main; sys.argv[0] = 'longitudinal'; main()"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def timed(
    argv: list[str], *, runs: int, expect: tuple[int, ...] = (0,), before=None
) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds of ``runs`` runs of ``argv``, after a warm-up."""
    walls, cpus = [], []
    for i in range(runs + 1):
        if before is not None:
            before()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=ROOT, env=_env(), capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in expect:
            raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}")
        if i:
            walls.append(elapsed)
            cpus.append(now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def _export(folder: Path) -> Path:
    """A 100-row export of the four tas4 items (seeded, answers 1-5)."""
    import random

    rng = random.Random(35)
    lines = ["id," + ",".join(f"tas4_{k}" for k in range(1, 5))]
    for i in range(100):
        lines.append(f"P{i:03d}," + ",".join(str(rng.randint(1, 5)) for _ in range(4)))
    path = folder / "export.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    py = sys.executable
    cli = [py, "-c", CLI]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        export = _export(folder)
        scores, reliability = folder / "scores.csv", folder / "rel.csv"

        def clean() -> None:
            for path in (scores, reliability):
                path.unlink(missing_ok=True)

        score = [*cli, "score", str(export), "--instrument", "tas4", "--out", str(scores)]
        cases = [
            ("python", [py, "-c", "pass"], None, (0,), None),
            ("import pandas", [py, "-c", "import pandas"], None, (0,), None),
            ("import models", [py, "-c", "import models"], 1.0, (0,), None),
            (
                "import all three",
                [py, "-c", "import surveys, models, longitudinal"],
                None,
                (0,),
                None,
            ),
            ("longitudinal --help", [*cli, "--help"], 0.3, (0,), None),
            ("score --help", [*cli, "score", "--help"], 0.3, (0,), None),
            ("bad arguments", [*cli, "score", "--no-such-flag"], 0.3, (2,), None),
            ("longitudinal score", [*score, "--reliability", str(reliability)], 1.5, (0,), clean),
        ]
        results = {}
        for name, argv, target, expect, before in cases:
            results[name] = (timed(argv, runs=args.runs, expect=expect, before=before), target)
    pandas_s = results["import pandas"][0][0]
    header = (
        f"{'case':<20} {'wall s':>7} {'cpu s':>7} {'target s':>9} {'met':>4} "
        f"{'wall / import pandas':>21}"
    )
    print(header)
    print("-" * len(header))
    for name, ((seconds, cpu), target) in results.items():
        goal = f"{target:>9.2f}" if target else f"{'':>9}"
        met = ("yes" if seconds <= target else "no") if target else ""
        print(f"{name:<20} {seconds:>7.3f} {cpu:>7.3f} {goal} {met:>4} {seconds / pandas_s:>21.2f}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{args.runs} runs each (median, after a warm-up run); {os.cpu_count()} CPUs, "
        f"load average {load:.1f}; Python {sys.version.split()[0]}"
    )


if __name__ == "__main__":
    main()
