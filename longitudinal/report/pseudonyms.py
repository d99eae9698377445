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
from collections.abc import Sequence
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


def fingerprint(key: bytes) -> str:
    """Return a short fingerprint of a key: enough to tell keys apart, useless to recover one."""
    return hashlib.sha256(b"empathic-longitudinal pseudonym key\0" + key).hexdigest()[:16]


def default_key_path(out: Path) -> Path:
    """Return the key file used when none is given: ``<folder>.pseudonym-key`` beside it."""
    out = Path(os.path.abspath(out))
    return out.parent / (out.name + KEY_SUFFIX)


def read_or_new_key(path: Path, out: Path, *, func: str) -> tuple[bytes, bool]:
    """Read the key at ``path``, or make a new one (not yet written); refuse a key in ``out``.

    Returns the key and whether it is new (the caller writes it once the report exists).
    """
    real, folder = Path(os.path.realpath(path)), Path(os.path.realpath(out))
    if real == folder or folder in real.parents:
        raise InvalidParameterError(
            f"the pseudonym key of {func} must not be inside the report folder {str(out)!r} "
            f"(whoever has the folder could re-link the pseudonyms); got {str(path)!r}"
        )
    if path.is_dir():
        raise InvalidParameterError(
            f"the pseudonym key of {func} must be a file; {str(path)!r} is a directory"
        )
    if not path.exists():
        return secrets.token_hex(32).encode("ascii"), True
    key = path.read_bytes().strip()
    if not key:
        raise InvalidParameterError(f"the pseudonym key file {str(path)!r} of {func} is empty")
    return key, False


def write_key(path: Path, key: bytes) -> None:
    """Write a new key file readable by its owner only; never replace an existing one."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key + b"\n")
