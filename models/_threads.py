"""Threads: one BLAS thread while work that is not BLAS's own runs; the cores of one task.

Small dense products (a mixed model's, an SEM fit's, the gradient of a sampled model) wake a
threaded BLAS's worker threads on every call, which costs far more than their arithmetic; and
where the caller already runs one task per core (two sampling chains, two workers), a second
BLAS thread per task oversubscribes the cores. Looking the pools up reads every loaded library
(a few ms), so it is done once per process.

A worker of a pool of ``N`` on this machine keeps :func:`task_cores` (its share of the cores)
busy at once, so that the workers together do not ask for more threads than there are cores
(a sampler's chains run on that many threads).
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Any

__all__ = ["controller", "one_blas_thread", "share_cores", "task_cores"]

_TASK_CORES: list[int] = []  # set in a worker of a pool: its share of the cores


@functools.cache
def controller() -> Any:
    """Return the process's thread-pool controller (``threadpoolctl``), found once."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """Limit every BLAS library loaded in the process to one thread while the block runs."""
    return controller().limit(limits=1, user_api="blas")


def share_cores(tasks: int) -> None:
    """Declare this process one of ``tasks`` that run side by side on this machine's cores."""
    _TASK_CORES[:] = [max(1, (os.cpu_count() or 1) // max(1, int(tasks)))]


def task_cores() -> int:
    """Return the cores this process may keep busy: all, or its share when one of a pool."""
    return _TASK_CORES[0] if _TASK_CORES else (os.cpu_count() or 1)
