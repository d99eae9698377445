"""Output folders written whole or not at all (reports, evaluation results)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from longitudinal._errors import InvalidParameterError


def check_out_dir(out_dir: Any, *, overwrite: bool, func: str) -> Path:
    """Check that ``out_dir`` may be written: a new or empty folder, or ``overwrite``."""
    if not isinstance(out_dir, str | os.PathLike):
        raise InvalidParameterError(
            f"the `out_dir` parameter of {func} must be a path; got {type(out_dir).__name__}"
        )
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(
            f"the `out_dir` parameter of {func} must be a directory; {str(out)!r} is a file"
        )
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise InvalidParameterError(
            f"the `out_dir` parameter of {func} must be a new or empty directory; "
            f"{str(out)!r} is not empty (pass overwrite=True, CLI --overwrite, to replace it)"
        )
    return out


def atomic_write(
    out: Path, write: Callable[[Path], None], *, overwrite: bool, what: str = "the output"
) -> None:
    """Run ``write`` into a temporary sibling of ``out``, then move it into place.

    A failure leaves no trace: the staging folder is removed and ``out`` is untouched. An
    existing non-empty ``out`` is replaced only with ``overwrite`` (``what`` names the job in
    the message when the folder filled up while it ran).
    """
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=parent))
    try:
        write(staging)
        if out.exists():
            if any(out.iterdir()):
                if not overwrite:  # appeared while we were working
                    raise InvalidParameterError(
                        f"{str(out)!r} became non-empty while {what} was written; nothing "
                        "was replaced"
                    )
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
                os.replace(out, old / out.name)
                os.replace(staging, out)
                shutil.rmtree(old, ignore_errors=True)
                return
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
