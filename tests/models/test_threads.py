"""Threads of one task (models/_threads.py)."""

import pytest

from models import _threads


def test_a_pool_worker_gets_its_share_of_the_cores(monkeypatch):
    monkeypatch.setattr(_threads.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(_threads, "_TASK_CORES", [])
    assert _threads.task_cores() == 4
    _threads.share_cores(2)
    assert _threads.task_cores() == 2
    _threads.share_cores(8)  # more workers than cores: each still runs
    assert _threads.task_cores() == 1


def test_one_blas_thread_holds_every_blas_to_one_thread():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    import numpy  # noqa: F401  (loads a BLAS)

    with _threads.one_blas_thread():
        inside = [
            p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"
        ]
    assert inside and set(inside) == {1}
