"""Pseudonyms that the report folder alone cannot link back to participants.

The pseudonym of a participant is its rank under a keyed hash (HMAC-SHA-256) of its raw id, so
the numbering is a random permutation for anyone without the key, and the same key gives the
same pseudonyms on every rerun. The key lives in a file *beside* the report folder (never in
it); ``provenance.json`` records only its fingerprint.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from longitudinal._errors import InvalidParameterError

KEY_SUFFIX = ".pseudonym-key"


def pseudonyms(ids: Sequence[str], *, key: bytes, prefix: str = "S") -> dict[str, str]:
    """Give participant ids pseudonyms, numbered in an order only the key reveals.

    Parameters
    ----------
    ids : sequence of str
        Raw participant ids (duplicates are ignored).
    key : bytes
        Secret key; the same key always gives the same pseudonyms.
    prefix : str, default "S"
        Letter(s) before the number.

    Returns
    -------
    dict
        ``{raw id: pseudonym}``; numbers are zero-padded to at least two digits.

    Examples
    --------
    >>> from longitudinal.report import pseudonyms
    >>> mapping = pseudonyms(["P10", "P02", "P07"], key=b"a secret")
    >>> sorted(mapping.values())
    ['S01', 'S02', 'S03']
    >>> mapping == pseudonyms(["P07", "P02", "P10"], key=b"a secret")
    True
    """
    if not isinstance(key, bytes) or not key:
        raise InvalidParameterError("the `key` parameter of pseudonyms must be non-empty bytes")
    unique = {str(i) for i in ids}
    order = sorted(unique, key=lambda raw: hmac.new(key, raw.encode(), hashlib.sha256).digest())
    width = max(2, len(str(len(order))))
    return {raw: f"{prefix}{k:0{width}d}" for k, raw in enumerate(order, start=1)}


MIN_KEY_BYTES = 16
"""A key file must hold at least 128 bits: 16 bytes (32 hex digits as the command writes it)."""

MAX_KEY_BYTES = 64 << 10
"""A key file larger than 64 KiB is not a key (``/dev/zero`` and the like are refused)."""

MAKE_KEY = 'python -c "import secrets; print(secrets.token_hex(32))" > KEY'
"""How to make a key file by hand."""


def fingerprint(key: bytes) -> str:
    """Return a short fingerprint of a key: enough to tell keys apart, useless to recover one.

    A slow keyed derivation (PBKDF2-HMAC-SHA-256, 100,000 rounds), so that testing guessed
    keys against a report's ``provenance.json`` costs a tenth of a second each, on top of the
    128 bits a key file must hold.
    """
    salt = b"empathic-longitudinal pseudonym key fingerprint"
    return hashlib.pbkdf2_hmac("sha256", key, salt, 100_000)[:8].hex()


def default_key_path(out: Path) -> Path:
    """Return the key file used when none is given: ``<folder>.pseudonym-key`` beside it."""
    out = Path(os.path.abspath(out))
    return out.parent / (out.name + KEY_SUFFIX)


def read_or_new_key(
    path: Path, out: Path, *, func: str, inputs: Iterable[Path] = ()
) -> tuple[bytes, bool]:
    """Read the key at ``path``, or make a new one (not yet written); refuse a bad key file.

    Refused, before anything is read: a key inside the report folder ``out``; a key that is
    one of ``inputs`` (compared by file identity); a path that is not a regular file
    (folder, FIFO, device), a dangling link, or a file over :data:`MAX_KEY_BYTES`; a key
    shorter than :data:`MIN_KEY_BYTES`; a new key whose folder does not exist.
    Returns the key and whether it is new (the caller writes it with :func:`write_key`).
    The messages name ``func``, or the command when the command line runs it.
    """
    from _empathic_base.words import caller
    from longitudinal._output import refuse_overlap

    func = caller(func)  # the command, when the command line runs it
    real, folder = Path(os.path.realpath(path)), Path(os.path.realpath(out))
    if real == folder or folder in real.parents:
        raise InvalidParameterError(
            f"the pseudonym key of {func} must not be inside the report folder {str(out)!r} "
            f"(whoever has the folder could re-link the pseudonyms); got {str(path)!r}"
        )
    refuse_overlap(path, inputs, option="the pseudonym key")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise InvalidParameterError(
                f"the pseudonym key {str(path)!r} of {func} is a link to a missing file "
                f"({os.readlink(path)!r}); point it at the key or remove the link"
            ) from None
        parent = Path(os.path.abspath(path)).parent
        if not parent.is_dir():
            raise InvalidParameterError(
                f"cannot create the pseudonym key {str(path)!r} of {func}: the folder "
                f"{str(parent)!r} does not exist; create it first"
            ) from None
        return secrets.token_hex(32).encode("ascii"), True
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise InvalidParameterError(
            f"the pseudonym key of {func} must be a regular file; {str(path)!r} is {kind}"
        )
    if info.st_size > MAX_KEY_BYTES:
        raise InvalidParameterError(
            f"the pseudonym key file {str(path)!r} of {func} holds {info.st_size} bytes; a key "
            f"is at most {MAX_KEY_BYTES} bytes. Make one with: {MAKE_KEY}"
        )
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        key = fh.read(MAX_KEY_BYTES + 1).strip()
    if len(key) < MIN_KEY_BYTES:
        held = "is empty" if not key else f"holds {len(key)} bytes"
        raise InvalidParameterError(
            f"the pseudonym key file {str(path)!r} of {func} {held}; a key needs at least "
            f"{MIN_KEY_BYTES} bytes (128 bits) of secret. Make one with: {MAKE_KEY}"
        )
    return key, False


def write_key(path: Path, key: bytes) -> None:
    """Write a new key file readable by its owner only, whole or not at all; never replace one.

    The key goes to a temporary file beside ``path`` first, which is then linked to ``path``
    (failing if a file appeared there meanwhile).
    """
    folder = Path(os.path.abspath(path)).parent
    fd, name = tempfile.mkstemp(prefix=f".{Path(path).name}.partial-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(key + b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.link(name, path)
    finally:
        os.unlink(name)
