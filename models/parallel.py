"""Where batches of independent, seeded jobs run: serially, in processes, or on Dask.

The back ends of :func:`models.power.simulate_power` (one job per grid point, see
:mod:`models.power._lmm`) and of ``longitudinal``'s prediction benchmark (one job per batch of
fits). What they use: :func:`parse_scheduler` (with :data:`SCHEDULER_FORMS` for messages and
:func:`max_workers`), :func:`run`, :class:`Progress` and :func:`batches`. A job has ``n_sims``,
``run(start, stop)`` returning one outcome per index, and a ``quick`` flag (an index takes
milliseconds). Every back end receives the same jobs and the same batches ``(job, start,
stop)``; an outcome depends only on its job and index, so the results are identical whatever
runs them. The jobs are sent to each worker once (process-pool initializer; Dask ``scatter``
with ``broadcast``), and each task carries only three integers. BLAS is held to one thread in
every worker: the fits are small, and a threaded BLAS would only make the workers compete.

Quick jobs (simulations of milliseconds) never wait for workers to start. On Linux, from a
process running one thread (:func:`_start_method`), a process pool forks its workers, ready in
milliseconds; a Dask LocalCluster forks a helper at once, which simulates while Dask is
imported and the cluster starts, and the cluster then forks its workers too. Elsewhere the
workers are spawned and this process runs the first simulations itself meanwhile.
"""

from __future__ import annotations

import ipaddress
import os
import pickle
import re
import sys
import time
from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from models._errors import InvalidParameterError
from models._threads import share_cores
from models.limits import MAX_WORKERS_PER_CPU

_BLAS_ENV = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "BLIS_NUM_THREADS")
# a host name: dot-separated labels of letters, digits and inner hyphens (RFC 1123)
_HOST_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\Z")

#: The forms of a scheduler, as messages give them.
SCHEDULER_FORMS = (
    "processes:N (N local processes), local:N (a Dask LocalCluster of N workers on "
    "127.0.0.1) or tcp://host:port (an existing Dask scheduler; host a name, an IPv4 address "
    "or an IPv6 address in brackets such as tcp://[::1]:8786; port 1 to 65535)"
)


@dataclass(frozen=True)
class Scheduler:
    """A parsed ``scheduler`` argument."""

    kind: str  # "serial" | "processes" | "dask-local" | "dask"
    workers: int | None = None
    address: str | None = None

    def describe(self) -> str:
        """Text for provenance."""
        if self.kind == "serial":
            return "serial"
        if self.kind == "processes":
            return f"processes:{self.workers}"
        if self.kind == "dask-local":
            return f"local:{self.workers}"
        return str(self.address)


def max_workers() -> int:
    """Most workers of ``processes:N`` and ``local:N``: :data:`MAX_WORKERS_PER_CPU` per CPU."""
    return MAX_WORKERS_PER_CPU * (os.cpu_count() or 1)


def _tcp_problem(address: str) -> str | None:
    """Say what is wrong with the ``host:port`` after ``tcp://``, or None when it is sound."""
    if address.startswith("["):
        host, closed, rest = address[1:].partition("]")
        if not closed:
            return "the IPv6 address has no closing ']'"
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return f"{host!r} is not an IPv6 address"
        if not rest.startswith(":"):
            return "no ':port' after the address"
        port = rest[1:]
    else:
        host, colon, port = address.rpartition(":")
        if not colon:
            return "no ':port' after the host"
        if ":" in host:
            return "an IPv6 address goes in brackets, e.g. tcp://[::1]:8786"
        labels = host.split(".")
        if not host or len(host) > 253 or not all(_HOST_LABEL.match(part) for part in labels):
            return f"{host!r} is not a host name or IPv4 address"
    if not (port.isascii() and port.isdigit() and len(port) <= 5 and 1 <= int(port) <= 65535):
        return f"the port {port!r} is not a number from 1 to 65535"
    return None


def parse_scheduler(value: Any, *, where: str) -> Scheduler:
    """Read ``None``/``"serial"``, ``"processes[:N]"``, ``"local:N"`` or ``"tcp://host:port"``.

    The address of ``tcp://`` is checked here (a host name, an IPv4 address or an IPv6
    address in brackets, and a port from 1 to 65535), so that a malformed one is refused
    before any work rather than by Dask; ``N`` is at most :func:`max_workers`.
    """
    expected = f"the `scheduler` parameter of {where} must be None (serial), {SCHEDULER_FORMS}"
    if value is None or value == "serial":
        return Scheduler("serial")
    if not isinstance(value, str):
        raise InvalidParameterError(f"{expected}; got {value!r}")
    if value == "processes":
        return Scheduler("processes", workers=os.cpu_count() or 1)
    for prefix, kind in (("processes:", "processes"), ("local:", "dask-local")):
        if value.startswith(prefix):
            n = value[len(prefix) :]
            top = max_workers()
            if not (n.isascii() and n.isdigit() and len(n) <= 9) or not 1 <= int(n) <= top:
                raise InvalidParameterError(
                    f"{expected}; got {value!r} (N must be a whole number from 1 to {top}, "
                    f"{MAX_WORKERS_PER_CPU} per CPU of this machine)"
                )
            return Scheduler(kind, workers=int(n))
    if value.startswith("tcp://"):
        problem = _tcp_problem(value[len("tcp://") :])
        if problem is None:
            return Scheduler("dask", address=value)
        raise InvalidParameterError(f"{expected}; got {value!r} ({problem})")
    raise InvalidParameterError(f"{expected}; got {value!r}")


# ---------------------------------------------------------------------------------------------
# progress


class Progress:
    """A one-line progress bar with rate and ETA on stderr, only when stderr is a terminal."""

    def __init__(self, total: int, *, enabled: bool, label: str = "power") -> None:
        stream = sys.stderr
        self.enabled = bool(enabled) and hasattr(stream, "isatty") and stream.isatty()
        self.total = total
        self.done = 0
        self.label = label
        self.start = time.perf_counter()
        self._last = 0.0

    def update(self, n: int) -> None:
        """Count ``n`` more simulations done."""
        self.done += n
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < 0.1 and self.done < self.total:
            return
        self._last = now
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        eta = "--:--" if left == float("inf") else time.strftime("%M:%S", time.gmtime(left))
        if left >= 3600 and left != float("inf"):
            eta = time.strftime("%H:%M:%S", time.gmtime(left))
        sys.stderr.write(
            f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} "
            f"simulations, {rate:.1f}/s, ETA {eta} "
        )
        sys.stderr.flush()

    def close(self) -> None:
        """End the line."""
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()


# ---------------------------------------------------------------------------------------------
# batches


def batches(
    n_sims: Sequence[int], size: int | Sequence[int], workers: int = 1
) -> list[tuple[int, int, int]]:
    """``(job, start, stop)`` for every job, ``size`` simulations at most per batch.

    ``size`` may be one per job (a job of long tasks in batches of one, say). With several
    workers the batches shrink towards the end (each at most a quarter of what is left per
    worker, down to a tenth of ``size``), so the workers finish together instead of one
    running a whole last batch alone. Batches never change a simulation's numbers.
    """
    sizes = [size] * len(n_sims) if isinstance(size, int) else list(size)
    left = sum(n_sims)
    out = []
    for job, n in enumerate(n_sims):
        start = 0
        size = sizes[job]
        smallest = max(1, size // 10)
        while start < n:
            step = size
            if workers > 1:
                step = min(size, max(smallest, -(-left // (4 * workers))))
            stop = min(n, start + step)
            out.append((job, start, stop))
            left -= stop - start
            start = stop
    return out


def _blas_one_thread() -> Any:
    """Hold every BLAS to one thread: NumPy's and SciPy's (each wheel ships its own OpenBLAS).

    SciPy's linear algebra is imported first, because a limit reaches only the libraries
    loaded when it is set; a BLAS loaded later would run threaded, and its results can differ
    in the last bits from the single-threaded ones, so a simulation would no longer give the
    same numbers on a worker as in this process.
    """
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS before the limit is set)
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def _run_local(jobs: Sequence[Any], batch: tuple[int, int, int]) -> list[Any]:
    job, start, stop = batch
    with _blas_one_thread():
        return jobs[job].run(start, stop)


# process pool: the jobs are unpickled once per worker by the initializer
_WORKER_JOBS: list[Any] = []


def _init_worker(payload: bytes, workers: int) -> None:
    for name in _BLAS_ENV:
        os.environ[name] = "1"
    _blas_one_thread()  # a process-wide limit, set before anything computes
    share_cores(workers)  # a sampler's chains keep this worker's share of the cores busy
    global _WORKER_JOBS
    _WORKER_JOBS = pickle.loads(payload)


def _process_batch(batch: tuple[int, int, int]) -> tuple[tuple[int, int, int], list[Any]]:
    return batch, _run_local(_WORKER_JOBS, batch)


def _ready() -> None:
    """Return at once: the task ends once its worker has started (its initializer has run)."""


class _AllDone:
    """Done once every one of ``futures`` is (the shape :func:`_simulate_here_until` waits on)."""

    def __init__(self, futures: list[Any]) -> None:
        self.futures = futures

    def done(self) -> bool:
        return all(future.done() for future in self.futures)


def _dask_batch(
    job: Any, batch: tuple[int, int, int], workers: int | None
) -> tuple[tuple[int, int, int], list[Any]]:
    _, start, stop = batch
    if workers is not None:  # a LocalCluster's worker: its share of this machine's cores
        share_cores(workers)
    with _blas_one_thread():
        return batch, job.run(start, stop)


def run(
    jobs: Sequence[Any],
    *,
    scheduler: Scheduler,
    batch_size: int | Sequence[int],
    progress: Progress,
) -> tuple[list[list[Any]], dict[str, Any]]:
    """Run every simulation of every job; outcomes per job in simulation order, and run info."""
    todo = batches([job.n_sims for job in jobs], batch_size, int(scheduler.workers or 1))
    results: list[dict[int, list[Any]]] = [{} for _ in jobs]
    info: dict[str, Any] = {"scheduler": scheduler.describe(), "batches": len(todo)}
    for batch, outcomes in _execute(jobs, todo, scheduler, info):
        results[batch[0]][batch[1]] = outcomes
        progress.update(batch[2] - batch[1])
    ordered = [[o for start in sorted(parts) for o in parts[start]] for parts in results]
    return ordered, info


def _execute(
    jobs: Sequence[Any],
    todo: list[tuple[int, int, int]],
    scheduler: Scheduler,
    info: dict[str, Any],
) -> Iterator[tuple[tuple[int, int, int], list[Any]]]:
    if scheduler.kind == "serial":
        info["workers"] = 1
        for batch in todo:
            yield batch, _run_local(jobs, batch)
        return
    if scheduler.kind == "processes":
        yield from _execute_processes(jobs, todo, scheduler, info)
        return
    yield from _execute_dask(jobs, todo, scheduler, info)


def _execute_processes(
    jobs: Sequence[Any],
    todo: list[tuple[int, int, int]],
    scheduler: Scheduler,
    info: dict[str, Any],
) -> Iterator[tuple[tuple[int, int, int], list[Any]]]:
    from concurrent.futures import FIRST_COMPLETED, wait

    workers = int(scheduler.workers or 1)
    info["workers"] = workers
    quick = _all_quick(jobs)
    method = _start_method(quick)
    info["start_method"] = method
    with _pool(jobs, workers, method) as pool:
        if quick:
            # a spawned worker starts a new interpreter and unpickles the jobs (about half a
            # second), a forked one far less: this process simulates meanwhile
            ready = _AllDone([pool.submit(_ready) for _ in range(workers)])
            todo = yield from _simulate_here_until(jobs, todo, ready)
        pending = {pool.submit(_process_batch, batch) for batch in todo}
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
        finally:
            for future in pending:
                future.cancel()


def _all_quick(jobs: Sequence[Any]) -> bool:
    """Whether every job is quick (a simulation in milliseconds, short beside a start)."""
    return all(getattr(job, "quick", False) for job in jobs)


def _pool(jobs: Sequence[Any], workers: int, method: str) -> Any:
    """Return a process pool of ``workers`` started by ``method``, each holding the jobs."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    if method == "fork":  # a child would write out again what these buffers still hold
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    payload = pickle.dumps(list(jobs), protocol=pickle.HIGHEST_PROTOCOL)
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=mp.get_context(method),
        initializer=_init_worker,
        initargs=(payload, workers),
    )


def _start_method(quick: bool) -> str:
    """How workers start (a pool's, a LocalCluster's): ``fork`` for quick jobs where safe.

    A forked worker begins with this process's imports and memory, so it is ready in
    milliseconds; a spawned one first imports NumPy and SciPy (about 0.3 s), as long as
    hundreds of quick simulations. A fork copies only the calling thread, though: a lock
    another thread holds stays held in the child for ever, and macOS's system libraries are not
    fork-safe. So ``fork`` only on Linux, from a process running one Python thread, and only
    for quick jobs (NumPy and SciPy alone); jobs of seconds (the Bayesian fits of
    ``evaluate``) gain nothing from it and are spawned. Either way a simulation's numbers are
    the same.

    A LocalCluster's workers are forked later, once Dask's own threads run here; the threads
    this process then has are all waiting (this one, the starting one, Dask's event loop and
    the helper's manager), none inside NumPy or BLAS, so no lock a computation holds is copied.
    """
    import multiprocessing as mp
    import threading

    if (
        quick
        and sys.platform.startswith("linux")
        and threading.active_count() == 1
        and "fork" in mp.get_all_start_methods()
    ):
        return "fork"
    return "spawn"


_LOCAL_CONFIG = {
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
}


def local_cluster(distributed: Any, workers: int, method: str | None = None) -> Any:
    """Start a Dask LocalCluster of ``workers`` single-threaded processes on 127.0.0.1.

    ``method``, where given, is how the nannies start their workers (Dask's
    ``distributed.worker.multiprocessing-method``, otherwise as Dask is configured: spawned
    by default): ``fork`` for quick jobs where :func:`_start_method` allows it, so a worker
    begins with this process's imports (about a second less to start two workers on 2 cores).

    Two of the nannies' defaults are undone. They start every worker with
    ``MALLOC_TRIM_THRESHOLD_=65536``, which makes glibc map and unmap each array above
    128 KiB instead of reusing the memory: the refits allocate many such temporaries and ran
    at half their speed in a worker. And they write their pre-spawn variables into this
    process's own environment, where every process started later would inherit them; the
    environment is put back as it was. The workers' statistical profiler (which samples the
    computing thread every 10 ms for a dashboard this cluster does not have) is off, and their
    event loops check themselves every second instead of every 20 ms: together about 9 % of
    a simulation's time.
    """
    import logging

    import dask

    saved = dict(os.environ)
    try:
        config = dict(_LOCAL_CONFIG)
        if method is not None:
            config["distributed.worker.multiprocessing-method"] = method
        with dask.config.set(config):
            return distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                silence_logs=logging.ERROR,
                env={name: "1" for name in _BLAS_ENV},
            )
    finally:
        for name in set(os.environ) - set(saved):
            del os.environ[name]
        os.environ.update(saved)


def _execute_dask(
    jobs: Sequence[Any],
    todo: list[tuple[int, int, int]],
    scheduler: Scheduler,
    info: dict[str, Any],
) -> Iterator[tuple[tuple[int, int, int], list[Any]]]:
    from _empathic_base.optional import require

    feature = f"simulate_power(scheduler={scheduler.describe()!r})"
    if scheduler.kind == "dask-local":
        from concurrent.futures import ThreadPoolExecutor

        for module in ("dask", "distributed"):  # said at once; imported while simulating
            if not _importable(module):
                require(module, feature=feature, extra="dask")
        quick = _all_quick(jobs)
        helper = _fork_helper(jobs) if _start_method(quick) == "fork" else None
        method = "fork" if helper is not None else None  # else as Dask is configured
        meanwhile: Iterable[Any] = ()
        try:
            with ThreadPoolExecutor(max_workers=1) as starter:
                started = starter.submit(
                    _start_local, feature, int(scheduler.workers or 1), list(jobs), method
                )
                try:
                    if helper is not None:
                        todo, flight = yield from _helper_until(helper, todo, started)
                        meanwhile = _drain(helper, flight)
                    elif quick:
                        todo = yield from _simulate_here_until(jobs, todo, started)
                    distributed, cluster, client, remote = started.result()
                except BaseException:
                    _close_started(started)
                    raise
            info["start_method"] = method or _dask_start_method()
            yield from _on_cluster(distributed, client, cluster, remote, todo, info, meanwhile)
        finally:
            if helper is not None:
                helper.shutdown(wait=True, cancel_futures=True)
        return
    require("dask", feature=feature, extra="dask")
    distributed = require("distributed", feature=feature, extra="dask")
    try:
        client = distributed.Client(scheduler.address, set_as_default=False, timeout=10)
    except OSError as err:
        raise InvalidParameterError(
            f"cannot reach the Dask scheduler {scheduler.address}: {err}"
        ) from err
    try:
        remote = client.scatter(list(jobs), broadcast=True)
    except BaseException:
        client.close()
        raise
    yield from _on_cluster(distributed, client, None, remote, todo, info)


def _dask_start_method() -> str:
    """How Dask's nannies start their workers where this module does not say."""
    import dask

    return str(dask.config.get("distributed.worker.multiprocessing-method"))


def _importable(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it."""
    import importlib.util

    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def _start_local(
    feature: str, workers: int, jobs: list[Any], method: str | None = None
) -> tuple[Any, Any, Any, Any]:
    """Import Dask, start a LocalCluster, connect to it and send it the jobs.

    Runs on a thread of its own, so the import (about half a second) and the start overlap
    the simulations run meanwhile.
    """
    from _empathic_base.optional import require

    require("dask", feature=feature, extra="dask")
    distributed = require("distributed", feature=feature, extra="dask")
    cluster = local_cluster(distributed, workers, method)
    try:
        client = distributed.Client(cluster, set_as_default=False)
        try:
            return distributed, cluster, client, client.scatter(jobs, broadcast=True)
        except BaseException:
            client.close()
            raise
    except BaseException:
        cluster.close()
        raise


def _close_started(started: Any) -> None:
    """Close a LocalCluster once its start (on another thread) has ended, if it started."""
    try:
        _, cluster, client, _ = started.result()
    except Exception:  # it failed to start: nothing to close
        return
    client.close()
    cluster.close()


def _simulate_here_until(
    jobs: Sequence[Any], todo: list[tuple[int, int, int]], started: Any
) -> Generator[tuple[tuple[int, int, int], list[Any]], None, list[tuple[int, int, int]]]:
    """Simulate in this process, one simulation at a time, while the workers start.

    Spawned workers take a second or so to start (a LocalCluster's) or half a second (a
    pool's); the simulations run here meanwhile would otherwise wait. Only
    jobs marked ``quick`` (a simulation in milliseconds) are run so, so the workers never wait
    for this process. Returns the batches left for the workers (the first one shortened by
    what was done here).
    """
    left = list(todo)
    with _blas_one_thread():
        while left and not started.done():
            job, start, stop = _take(left, 1)
            yield (job, start, stop), jobs[job].run(start, stop)
    return left


def _take(left: list[tuple[int, int, int]], n: int) -> tuple[int, int, int]:
    """Remove the first ``n`` simulations (at most the first batch) from ``left``; the batch."""
    job, start, stop = left[0]
    end = min(stop, start + n)
    if end < stop:
        left[0] = (job, end, stop)
    else:
        left.pop(0)
    return job, start, end


def _fork_helper(jobs: Sequence[Any]) -> Any:
    """Fork a pool of one process, to simulate while a LocalCluster starts.

    Importing Dask and starting the scheduler hold this process's interpreter lock for about
    half a second, during which one core would otherwise idle. The helper is forked at once,
    while this process still runs one thread (:func:`_start_method`), and holds the jobs.
    """
    pool = _pool(jobs, 1, "fork")
    pool.submit(_ready).result()  # forked now, before the starting thread exists
    return pool


def _helper_until(
    helper: Any, todo: list[tuple[int, int, int]], started: Any, chunk: int = 25
) -> Generator[
    tuple[tuple[int, int, int], list[Any]], None, tuple[list[tuple[int, int, int]], list[Any]]
]:
    """Keep the helper busy with ``chunk`` simulations at a time until the cluster has started.

    Two chunks are in flight, so the helper never waits for this thread; this thread only hands
    them out, and computes nothing while the cluster forks its workers. Returns the batches
    left for the cluster and the helper's chunks still in flight.
    """
    from concurrent.futures import FIRST_COMPLETED, wait

    left = list(todo)
    flight: list[Any] = []
    while not started.done():
        while left and len(flight) < 2:
            flight.append(helper.submit(_process_batch, _take(left, chunk)))
        if not flight:
            break
        wait([*flight, started], return_when=FIRST_COMPLETED)
        while flight and flight[0].done():
            yield flight.pop(0).result()
    return left, flight


def _drain(helper: Any, flight: list[Any]) -> Iterator[tuple[tuple[int, int, int], list[Any]]]:
    """Yield the helper's last chunks, then close the helper (while the cluster computes)."""
    try:
        for future in flight:
            yield future.result()
    finally:
        helper.shutdown(wait=True, cancel_futures=True)


def _on_cluster(
    distributed: Any,
    client: Any,
    cluster: Any,
    remote: list[Any],
    todo: list[tuple[int, int, int]],
    info: dict[str, Any],
    meanwhile: Iterable[Any] = (),
) -> Iterator[tuple[tuple[int, int, int], list[Any]]]:
    """Run the batches on a connected cluster holding the jobs; close it at the end.

    ``meanwhile`` yields results from elsewhere (the helper's last chunks) once the batches
    are submitted, so the cluster computes while they come in.
    """
    try:
        info["workers"] = len(client.scheduler_info().get("workers", {}))
        local = info["workers"] if cluster is not None else None
        futures = [
            client.submit(_dask_batch, remote[batch[0]], batch, local, pure=False) for batch in todo
        ]
        try:
            yield from meanwhile
            for future in distributed.as_completed(futures, loop=client.loop):
                yield future.result()
        finally:
            client.cancel(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
