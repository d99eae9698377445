"""Time and peak memory of `longitudinal report` on big simulated studies, with and without --lean.

Usage:
    .venv/bin/python benchmarks/bench_report_size.py --ratings 500000 1000000
    .venv/bin/python benchmarks/bench_report_size.py --ratings 5000000 --modes lean
    .venv/bin/python benchmarks/bench_report_size.py --ratings 500000 --keep /tmp/studies

The simulator writes at most 9,999 participants (about 197,000 ratings), so a bigger study is
written as blocks of simulated participants, block k simulated with seed SEED + k and its ids
(participants, sessions, Qualtrics response ids) prefixed with ``Bk-`` so that no two blocks
share one; the files keep the simulator's layout (three waves, one of them a Qualtrics export).

Each report is a fresh process that calls `build_report` directly (the command line ends with
`os._exit`, before any timing code after it could run), under `/usr/bin/time -v` when it
exists, which gives the wall and CPU time and the maximum resident set size; the child also
prints the wall and CPU seconds of loading the study and of each section, the figures the
estimate of `longitudinal report` is scaled from (`_PARTS` in `longitudinal/cli/study.py`).
The baseline (`--modes load`) is the same process loading the study alone.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
BLOCK_PARTICIPANTS = 9999

#: The child: load the study, run every section with a timer, write the report, print JSON.
CHILD = r"""
import json, sys, time
from longitudinal.report.sections.base import Section
from longitudinal.report import build_report
from longitudinal.study import loaded as study_module

parts = {}
run = Section.run

def timed(self, ctx):
    start, cpu = time.perf_counter(), time.process_time()
    try:
        run(self, ctx)
    finally:
        parts[self.anchor] = round(time.perf_counter() - start, 2)
        parts[self.anchor + "_cpu"] = round(time.process_time() - cpu, 2)

Section.run = timed
load = study_module.load_study

def timed_load(*args, **kwargs):
    start, cpu = time.perf_counter(), time.process_time()
    try:
        return load(*args, **kwargs)
    finally:
        parts["load"] = round(time.perf_counter() - start, 2)
        parts["load_cpu"] = round(time.process_time() - cpu, 2)

study_module.load_study = timed_load
mode = sys.argv[3]
start, cpu = time.perf_counter(), time.process_time()
if mode == "load":
    study_module.load_study(sys.argv[1])
else:
    build_report(sys.argv[1], sys.argv[2], bayes=False, pseudonymize=False, lean=mode == "lean")
parts["total"] = round(time.perf_counter() - start, 2)
parts["total_cpu"] = round(time.process_time() - cpu, 2)
print("PARTS " + json.dumps(parts))
"""


def _block_ids(frame: pd.DataFrame, prefix: str, columns: list[str]) -> pd.DataFrame:
    for column in columns:
        if column in frame.columns:
            present = frame[column] != ""
            frame.loc[present, column] = prefix + frame.loc[present, column]
    return frame


def write_study(out: Path, n_ratings: int, *, seed: int) -> int:
    """Write a simulated study of about ``n_ratings`` ratings into ``out``; return the count."""
    from longitudinal.simulate import simulate_study

    out.mkdir(parents=True)
    (out / "surveys").mkdir()
    written = 0
    block = 0
    per_person = None
    while written < n_ratings:
        people = BLOCK_PARTICIPANTS
        if per_person is not None:
            people = min(people, max(3, math.ceil((n_ratings - written) / per_person)))
        with tempfile.TemporaryDirectory() as tmp:
            src = simulate_study(
                Path(tmp) / "s", seed=seed + block, n_participants=people, defects=False
            )
            prefix = f"B{block}-"
            first = block == 0
            if first:
                shutil.copy(src / "study.toml", out / "study.toml")
                shutil.copy(src / "truth.json", out / "truth.json")
                shutil.copy(src / "surveys" / "post_map.csv", out / "surveys" / "post_map.csv")
            for rel in ("participants.csv", "sessions.csv", "ratings.csv", "surveys/pre.csv",
                        "surveys/mid.csv"):  # fmt: skip
                frame = pd.read_csv(src / rel, dtype=str, keep_default_na=False)
                frame = _block_ids(frame, prefix, ["participant_id", "session_id"])
                frame.to_csv(out / rel, mode="w" if first else "a", header=first, index=False,
                             lineterminator="\n")  # fmt: skip
                if rel == "ratings.csv":
                    written += len(frame)
                    per_person = len(frame) / people
            lines = (src / "surveys" / "post_qualtrics.csv").read_text("utf-8").splitlines(True)
            header, rows = lines[:3], "".join(lines[3:])
            frame = pd.read_csv(pd.io.common.StringIO(rows), header=None, dtype=str,
                                keep_default_na=False)  # fmt: skip
            names = pd.read_csv(pd.io.common.StringIO(header[0]), nrows=0).columns.tolist()
            frame.columns = names
            frame = _block_ids(frame, prefix, ["participant_id", "ResponseId"])
            with (out / "surveys" / "post_qualtrics.csv").open("a", encoding="utf-8") as fh:
                if first:
                    fh.write("".join(header))
                frame.to_csv(fh, header=False, index=False, lineterminator="\n")
        block += 1
    return written


def _measure(study: Path, out: Path, mode: str) -> dict[str, float]:
    """Run one child; return its wall time, peak RSS and per-part seconds."""
    timer = ["/usr/bin/time", "-v"] if Path("/usr/bin/time").exists() else []
    args = [*timer, sys.executable, "-c", CHILD, str(study), str(out), mode]
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the {mode} run failed:\n{done.stderr[-4000:]}")
    parts = json.loads(re.search(r"^PARTS (.*)$", done.stdout, re.M).group(1))
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    cpu = [float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", done.stderr)]
    return {
        "wall_s": round(seconds, 1),
        "cpu_s": round(sum(cpu), 1) if cpu else float("nan"),
        "peak_mb": round(int(peak.group(1)) / 1024) if peak else float("nan"),
        **parts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ratings", type=int, nargs="+", default=[500_000, 1_000_000])
    parser.add_argument("--modes", nargs="+", default=["load", "full", "lean"],
                        choices=["load", "full", "lean"])  # fmt: skip
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="folder to keep (and reuse) the studies in")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        for n in args.ratings:
            study = where / f"study_{n}"
            if not (study / "study.toml").is_file():
                start = time.perf_counter()
                count = write_study(study, n, seed=args.seed)
                print(f"wrote {study} ({count:,} ratings) in {time.perf_counter() - start:.0f} s",
                      flush=True)  # fmt: skip
            for mode in args.modes:
                out = Path(tmp) / f"report_{n}_{mode}"
                result = _measure(study, out, mode)
                print(json.dumps({"n_ratings": n, "mode": mode, **result}), flush=True)
                shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
