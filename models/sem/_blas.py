"""One BLAS thread for the invariance ladders, with the process's thread pools looked up once.

The fits and the ordinal sample statistics are many small dense products (a few dozen
parameters, a few dozen variables); with a threaded BLAS each product can wake worker threads,
which costs far more than the arithmetic on a busy machine (a 20 x 20 product: 0.06 ms on one
thread, 40 ms with OpenBLAS's default on two loaded cores). Looking the pools up reads every
loaded library (about 5 ms), so the ML ladder, the WLSMV ladder and the sample statistics share
one lookup.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from models._threads import controller
from models._threads import one_blas_thread as _one_thread

__all__ = ["controller", "one_blas_thread"]


def one_blas_thread(func: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``func`` with one BLAS thread."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _one_thread():
            return func(*args, **kwargs)

    return wrapper
