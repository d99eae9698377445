"""What the package writes: folders whole or not at all, and one way to write a CSV or JSON file."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from _empathic_base.words import parameter, setting
from longitudinal._errors import InvalidParameterError

MARKER = ".empathic-longitudinal"
"""File in every output folder, naming the command that wrote it (``--overwrite`` checks it)."""


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _identity(path: Path) -> tuple[int, int] | None:
    """Return the identity (device, inode) of a file, links resolved; None when it is absent."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino


def _identities(path: Path) -> list[tuple[int, int]]:
    """Return the identities of ``path`` (when it exists) and of each existing folder above."""
    found = []
    for folder in (_real(path), *_real(path).parents):
        identity = _identity(folder)
        if identity is not None:
            found.append(identity)
    return found


def refuse_overlap(out: Path, inputs: Iterable[Path], *, option: str) -> None:
    """Refuse an output that is, contains or lies inside one of the inputs.

    The message names the output (``option``, as the caller's user knows it) and the input,
    not the function: the same refusal reads alike from the command line and from Python.

    Paths are compared by file identity (device and inode, links resolved), not by name: a
    hard link to an input, the same file under another case of its name (a case-insensitive
    disk) or a link to it is the input.
    """
    target = _real(out)
    target_id = _identity(target)
    target_chain = _identities(target)
    for given in inputs:
        source = _real(given)
        source_id = _identity(source)
        if target == source or (target_id is not None and target_id == source_id):
            relation = "is"
        elif source in target.parents or (
            source_id is not None and source_id in target_chain[1 if target_id else 0 :]
        ):
            relation = "lies inside"
        elif target in source.parents or (
            target_id is not None and target_id in _identities(source)[1 if source_id else 0 :]
        ):
            relation = "contains"
        else:
            continue
        raise InvalidParameterError(
            f"{option} {str(out)!r} {relation} the input {str(given)!r}; the package never "
            "writes over its inputs. Choose an output path outside them"
        )


def refuse_special(path: Path, *, option: str, folder: bool = False) -> None:
    """Refuse an existing ``path`` that is not a regular file (or, with ``folder``, a folder).

    A device, FIFO or socket is never written to (nor read to check it): ``/dev/null`` or a
    named pipe given as an output is refused before any work.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if stat.S_ISREG(mode) or (folder and stat.S_ISDIR(mode)):
        return
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a folder"
        if stat.S_ISDIR(mode)
        else "not a regular file"
    )
    expected = "a folder or a new path" if folder else "a regular file or a new path"
    raise InvalidParameterError(
        f"cannot write {option} {str(path)!r}: it is {kind}; expected {expected}"
    )


def check_writable(path: Path, *, option: str) -> None:
    """Refuse, before any work, a path whose nearest existing folder cannot be written."""
    folder = Path(os.path.abspath(path)).parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise InvalidParameterError(
            f"cannot write {option} {str(path)!r}: the folder {str(folder)!r} is not writable"
        )


def _written_by(out: Path, command: str) -> bool:
    """Whether ``out`` holds this package's marker naming ``command`` (a regular, small file).

    Only the marker counts: a folder is never recognised by file names a user's folder could
    have too (a ``provenance.json`` is not enough).
    """
    marker = out / MARKER
    try:
        if marker.is_symlink() or not marker.is_file() or marker.stat().st_size > 1024:
            return False
        return marker.read_text(encoding="utf-8").strip() == command
    except (OSError, UnicodeDecodeError):
        return False


def check_out_dir(
    out_dir: Any,
    *,
    overwrite: bool,
    func: str,
    command: str | None = None,
    inputs: Iterable[Path] = (),
) -> Path:
    """Check, before any work, that ``out_dir`` may be written.

    A new or empty folder may always be written. A non-empty one only with ``overwrite``,
    and then only when it holds this command's marker (:data:`MARKER`): ``--overwrite``
    replaces a previous output of the same command, never another folder. The folder must not
    be, contain or lie inside any of ``inputs`` (compared by file identity), nor be a symbolic
    link, a device, FIFO or socket, the working folder or a folder above it.

    The messages name ``out_dir`` and ``overwrite`` as ``func``'s parameters
    (``overwrite=True``), or as the options ``--out`` and ``--overwrite`` when a command of
    the command line runs (:mod:`_empathic_base.words`).
    """
    named = parameter("out_dir", func)
    if not isinstance(out_dir, str | os.PathLike):
        raise InvalidParameterError(f"{named} must be a path; got {type(out_dir).__name__}")
    out = Path(out_dir)
    if out.is_symlink():
        raise InvalidParameterError(
            f"{named} must not be a symbolic link; {str(out)!r} links to "
            f"{os.readlink(out)!r}. Name the folder itself"
        )
    if out.name in ("", ".", "..") or _real(out) in (_real(Path.cwd()), *_real(Path.cwd()).parents):
        raise InvalidParameterError(
            f"{named} must name a folder to create or replace, not the working folder or one "
            f"above it; got {str(out)!r}"
        )
    refuse_overlap(out, inputs, option="the output folder")
    check_writable(out, option="the output folder")
    refuse_special(out, option="the output folder", folder=True)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"{named} must be a directory; {str(out)!r} is a file")
    if out.is_dir() and any(out.iterdir()):
        if not overwrite:
            raise InvalidParameterError(
                f"{named} must be a new or empty directory; {str(out)!r} is not empty (pass "
                f"{setting('overwrite')} to replace a previous output)"
            )
        if command is not None and not _written_by(out, command):
            raise InvalidParameterError(
                f"{str(out)!r} is not empty and was not written by `longitudinal {command}` "
                f"(it has no {MARKER} marker of that command); {setting('overwrite')} "
                "replaces only a previous output of the same command, so nothing was replaced"
            )
    return out


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a process of another user
        return True
    return True


def remove_stale_staging(parent: Path, name: str) -> None:
    """Remove staging folders and files of ``name`` left by a killed run (its process is gone).

    Staging names carry the writer's process id (``.NAME.partial-PID-...`` for folders,
    ``.NAME.partial-PID-....tmp`` for files), so a run still in progress is never disturbed.
    """
    prefix = f".{name}.partial-"
    for path in parent.glob(prefix + "*"):
        pid = path.name.removeprefix(prefix).split("-", 1)[0]
        if pid.isdigit() and _running(int(pid)):
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def atomic_write(
    out: Path,
    write: Callable[[Path], None],
    *,
    overwrite: bool,
    what: str = "the output",
    command: str | None = None,
) -> None:
    """Run ``write`` into a temporary sibling of ``out``, then move it into place.

    A failure leaves no trace: the staging folder is removed and ``out`` is untouched. An
    existing non-empty ``out`` is replaced only with ``overwrite`` (``what`` names the job in
    the message when the folder filled up while it ran).
    """
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(parent, out.name)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-{os.getpid()}-", dir=parent))
    try:
        write(staging)
        if command is not None:
            (staging / MARKER).write_text(command + "\n", encoding="utf-8")
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


def atomic_write_files(outputs: dict[Path, Callable[[Path], None]]) -> None:
    """Write files all or none: each to a temporary file beside its target, then rename them.

    ``outputs`` maps each target path to a function that writes the content to the path it
    is given. If any writer fails, the temporary files are removed and no target changes.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for target, write in outputs.items():
            folder = target.parent if str(target.parent) else Path(".")
            remove_stale_staging(folder, target.name)
            handle, name = tempfile.mkstemp(
                prefix=f".{target.name}.partial-{os.getpid()}-", suffix=".tmp", dir=folder
            )
            os.close(handle)
            staged.append((Path(name), target))
            write(Path(name))
        for temporary, target in staged:
            os.replace(temporary, target)
    except BaseException:
        for temporary, _ in staged:
            temporary.unlink(missing_ok=True)
        raise


def sha256(path: Path) -> str:
    """Return the SHA-256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


FORMULA_START = "=+-@\t\r"
"""First characters that make a spreadsheet read a text cell as a formula."""

_NUMBER = r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)"
_NUMBER_RE = re.compile(_NUMBER, re.IGNORECASE)
_RAW_CSV: contextvars.ContextVar[bool] = contextvars.ContextVar("raw_csv", default=False)


@contextlib.contextmanager
def raw_csv(enabled: bool = True):
    """Within the block, :func:`write_csv` writes text cells as they are (``--raw-csv``)."""
    token = _RAW_CSV.set(enabled)
    try:
        yield
    finally:
        _RAW_CSV.reset(token)


def csv_is_raw() -> bool:
    """Return whether CSV text cells are written as they are (inside :func:`raw_csv`)."""
    return _RAW_CSV.get()


SEM_OPERATORS = frozenset({"=~", "~~", "~1", "~", "|", "~*~", "<~", "==", ":=", "<", ">"})
"""lavaan's operators (the ``op`` column of a parameter table, e.g. ``invariance_params.csv``).

A cell that is exactly one of them is written as it is: ``=~`` and ``==`` begin like a formula
but hold no reference or function a spreadsheet could run, and an apostrophe would change the
operator for every program that reads the file back.
"""


def needs_apostrophe(text: str) -> bool:
    """Return whether a text cell would be read as a formula by a spreadsheet.

    Text that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return does, unless it
    is a number written as text (``-0.5``, ``+1``, ``1e-3``, ``-inf``), which a spreadsheet
    reads as that number, or a whole cell that is a lavaan operator (:data:`SEM_OPERATORS`:
    ``=~``, ``==``), which it cannot run.

    >>> [needs_apostrophe(t) for t in ("=1+1", "-cmd", "@SUM(1)", "-0.5", "+1", "P01")]
    [True, True, True, False, False, False]
    >>> [needs_apostrophe(t) for t in ("=~", "~~", "=~A1", "=HYPERLINK(1)")]
    [False, False, True, True]
    """
    return (
        bool(text)
        and text[0] in FORMULA_START
        and text not in SEM_OPERATORS
        and not _NUMBER_RE.fullmatch(text)
    )


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with an apostrophe before every text cell a spreadsheet would run.

    Only text cells change (object, string and categorical columns): see
    :func:`needs_apostrophe`. Numbers, negative ones included, and cells that are exactly a
    lavaan operator (``=~``) are left as they are. The
    frame itself is not changed; it is returned as is when no cell needs the apostrophe.

    >>> spreadsheet_safe(pd.DataFrame({"id": ["=HYPERLINK(1)", "P2", "-0.5"], "x": [-1, 2, 3]}))
                   id  x
    0  '=HYPERLINK(1)  -1
    1              P2  2
    2            -0.5  3
    """
    out = frame
    for position, name in enumerate(frame.columns):
        column = frame.iloc[:, position]
        if not (
            column.dtype == object or isinstance(column.dtype, pd.StringDtype | pd.CategoricalDtype)
        ):
            continue
        values = column.to_numpy(dtype=object)
        mask = np.fromiter(
            (isinstance(v, str) and needs_apostrophe(v) for v in values), bool, len(values)
        )
        if not mask.any():
            continue
        if out is frame:
            out = frame.copy()
        values = values.copy()
        values[mask] = ["'" + v for v in values[mask]]
        text = pd.Series(values, index=frame.index, name=name, dtype=object)
        out.isetitem(position, text)
    return out


def write_csv(frame: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write a table as UTF-8 CSV with Unix line ends, no index, floats at full precision.

    Categorical columns are written as their labels; floats as the shortest text that reads
    back to the same number. Text cells that a spreadsheet would run as a formula (they
    begin with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return and are not a number)
    are written with a leading apostrophe, unless inside :func:`raw_csv` (``--raw-csv``); a
    cell that is exactly a lavaan operator (:data:`SEM_OPERATORS`, ``=~``) is not.
    """
    out = frame
    categorical = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    if categorical:
        out = frame.copy()
        for col in categorical:
            out[col] = out[col].astype(str).where(out[col].notna(), None)
    if not csv_is_raw():
        out = spreadsheet_safe(out)
    out.to_csv(path, index=False, lineterminator="\n", encoding="utf-8")


def json_safe(value: Any) -> Any:
    """Return ``value`` with NumPy scalars as Python numbers and NaN or infinities as ``None``.

    Dicts, lists and tuples are converted item by item; for JSON written with
    ``allow_nan=False``, where a missing number must be ``null``.
    """
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value) if np.isfinite(value) else None
    return value


def json_default(value: Any) -> Any:
    """Turn NumPy numbers and arrays into JSON values (``json.dumps(default=...)``)."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def json_text(value: Any, *, sort_keys: bool = True, allow_nan: bool = True) -> str:
    """Return ``value`` as indented ASCII JSON ending in a newline (NumPy values converted)."""
    text = json.dumps(
        value,
        indent=2,
        sort_keys=sort_keys,
        ensure_ascii=True,
        allow_nan=allow_nan,
        default=json_default,
    )
    return text + "\n"


def write_json(
    value: Any, path: str | os.PathLike[str], *, sort_keys: bool = True, allow_nan: bool = True
) -> None:
    """Write :func:`json_text` of ``value`` to ``path`` (UTF-8)."""
    text = json_text(value, sort_keys=sort_keys, allow_nan=allow_nan)
    Path(path).write_text(text, encoding="utf-8")
