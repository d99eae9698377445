"""Run the test suite and say what it cost: CPU seconds (user + system) of every process.

``make test`` runs ``python benchmarks/suite_cpu.py [pytest arguments]``: pytest in a child
process, then one line with the wall time and the CPU time of the child and of every process it
started and waited for (the test workers, the command-line runs, the notebook kernels), read
from ``getrusage(RUSAGE_CHILDREN)``, beside the budget the README states. The exit status is
pytest's. The budget is printed, never enforced here: machine speed must not fail a test run.

``--profile FILE.csv`` (before the pytest arguments) also writes the CPU seconds of each test
file, summed over the processes that ran its tests (the ``cpu_profile`` plugin of
tests/conftest.py), sorted by cost: the table of benchmarks/README.md comes from it.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

BUDGET_CPU_SECONDS = 1200
"""What a fresh clone's ``make test`` may use on two cores, user + system, all processes."""


def main(argv: list[str]) -> int:
    """Run pytest with ``argv`` and print its wall and CPU time; return its exit status."""
    env = dict(os.environ)
    if argv[:1] == ["--profile"] and len(argv) > 1:
        env["EMPATHIC_TEST_CPU_PROFILE"] = os.path.abspath(argv[1])
        argv = argv[2:]
    start = time.perf_counter()
    code = subprocess.call([sys.executable, "-m", "pytest", *argv], env=env)
    wall = time.perf_counter() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = used.ru_utime + used.ru_stime
    print(
        f"test suite: {wall:.0f} s wall, {cpu:.0f} s CPU (user {used.ru_utime:.0f} + system "
        f"{used.ru_stime:.0f}, every process); the budget is {BUDGET_CPU_SECONDS} s CPU",
        flush=True,
    )
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
