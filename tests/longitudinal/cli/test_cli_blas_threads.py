"""The command's BLAS runs on one thread unless the environment says otherwise
(longitudinal/cli/__init__.py: main)."""

import os
import subprocess
import sys

from longitudinal.cli import BLAS_THREAD_VARIABLES

CODE = (
    "import os; from longitudinal.cli import _one_blas_thread_by_default as f; f(); "
    "import numpy; from threadpoolctl import threadpool_info; "
    "print(sorted({p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'}), "
    "os.environ['OPENBLAS_NUM_THREADS'])"
)


def _child(**env):
    base = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    done = subprocess.run(
        [sys.executable, "-c", CODE], env={**base, **env}, capture_output=True, text=True,
        check=True,
    )  # fmt: skip
    return done.stdout.strip()


def test_one_blas_thread_by_default():
    assert _child() == "[1] 1"


def test_the_users_setting_is_kept():
    assert _child(OPENBLAS_NUM_THREADS="2").endswith(" 2")
