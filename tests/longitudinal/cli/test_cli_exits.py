"""Interrupted commands (longitudinal/cli/, longitudinal/_output.py): clean exits, no leftovers.

Each test runs `longitudinal report` in a child process on a small simulated study, waits for
the staging folder to appear (the work has started), then signals the child.
"""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    from longitudinal.simulate import simulate_study

    # 41 people: the report takes seconds after its staging folder appears
    return simulate_study(tmp_path_factory.mktemp("sim") / "study", seed=7)


def _start(study_dir, out):
    args = [sys.executable, "-m", "longitudinal.cli", "report", str(study_dir), "--out", str(out)]
    return subprocess.Popen(
        [*args, "--no-bayes"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a test run started in the background inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _staging(out):
    return sorted(out.parent.glob(f".{out.name}.partial-*"))


def _wait_for_staging(child, out, timeout=60.0):
    start = time.monotonic()
    while not _staging(out):
        if child.poll() is not None or time.monotonic() - start > timeout:
            child.kill()
            pytest.fail("the report never started writing")
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_exits_cleanly_and_leaves_nothing(study_dir, tmp_path, signum):
    out = tmp_path / "rep"
    child = _start(study_dir, out)
    _wait_for_staging(child, out)
    child.send_signal(signum)
    stdout, stderr = child.communicate(timeout=60)
    assert "Traceback" not in stdout + stderr
    assert _staging(out) == []
    assert child.returncode == 130, stderr
    assert "interrupted; nothing was written" in stderr
    assert not out.exists()
    assert not (tmp_path / "rep.pseudonym-key").exists()


def test_a_killed_run_is_cleaned_up_by_the_next(study_dir, tmp_path):
    out = tmp_path / "rep"
    child = _start(study_dir, out)
    _wait_for_staging(child, out)
    child.kill()  # SIGKILL: nothing of the child can run
    child.communicate(timeout=60)
    assert _staging(out)  # what a killed run leaves behind
    again = _start(study_dir, out)
    _, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, stderr
    assert (out / "report.html").is_file() and _staging(out) == []


def test_an_unwritable_output_is_refused_before_any_work(study_dir, tmp_path, monkeypatch, capsys):
    import os

    from longitudinal.cli import main

    monkeypatch.setattr(os, "access", lambda path, mode: False)  # as for a read-only folder
    code = main(["report", str(study_dir), "--out", str(tmp_path / "rep"), "--no-bayes"])
    err = capsys.readouterr().err
    assert code == 2 and "is not writable" in err and ".partial" not in err
    assert list(tmp_path.iterdir()) == []


def _command(*args):
    return subprocess.Popen(
        [sys.executable, "-m", "longitudinal.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_for_library(child, name, timeout=60.0):
    """Wait until the child has loaded a shared library whose path holds ``name``."""
    maps = Path(f"/proc/{child.pid}/maps")
    start = time.monotonic()
    while time.monotonic() - start < timeout and child.poll() is None:
        try:
            if name in maps.read_text(errors="replace"):
                return
        except OSError:
            pass
        time.sleep(0.005)


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps")
@pytest.mark.parametrize("library", ["_multiarray_umath", "pandas/_libs", "scipy"])
def test_ctrl_c_during_the_first_seconds_ends_with_one_line(tmp_path, library):
    """Ctrl-C while the command still imports numpy, pandas, scipy: one line, exit 130."""
    export = tmp_path / "export.csv"
    export.write_text("id,tas4_1,tas4_2,tas4_3,tas4_4\nP1,4,5,3,4\n", encoding="utf-8")
    child = _command("score", str(export), "--instrument", "tas4", "--out", str(tmp_path / "s.csv"))
    _wait_for_library(child, library)
    child.send_signal(signal.SIGINT)
    stdout, stderr = child.communicate(timeout=120)
    if child.returncode == 0:  # the command finished before the signal came
        return
    assert "Traceback" not in stdout + stderr, stderr
    assert child.returncode == 130, stderr
    assert stderr.strip() == "interrupted; nothing was written"
    assert not (tmp_path / "s.csv").exists()


def test_a_refused_header_only_export_exits_2_without_an_abort(tmp_path):
    """The refusal is the last thing printed: no native thread pool aborts the exit (134)."""
    export = tmp_path / "headeronly.csv"
    export.write_text(",".join(["id", *(f"tipi_{k}" for k in range(1, 11))]) + "\n", "utf-8")
    child = _command("score", str(export), "--instrument", "tipi", "--out", str(tmp_path / "x.csv"))
    stdout, stderr = child.communicate(timeout=120)
    assert child.returncode == 2, stderr
    assert "no data rows" in stderr
    assert "terminate called" not in stderr and "Traceback" not in stderr
    assert list(tmp_path.iterdir()) == [export]
