"""Pseudonyms that the report folder alone cannot link back to participants.

The pseudonym of a participant is its rank under a keyed hash (HMAC-SHA-256) of its raw id, so
the numbering is a random permutation for anyone without the key, and the same key gives the
same pseudonyms on every rerun. The key lives in a file *beside* the report folder (never in
it) and must hold at least 128 bits of randomness (:func:`key_problem` states the test);
``provenance.json`` records only its fingerprint, a slow derivation of it (:func:`fingerprint`).

Pseudonyms are put where ids are, never searched for in text: the id column of every frame
(:func:`longitudinal.report.context.rename_ids`), the lists of participants the package writes
itself (:func:`pseudonymize_left_out`), and, in messages of other code, an id written as a
quoted token where the message says it is a participant (:func:`pseudonymize_message`; a
message quoting a raw id otherwise is withheld), so a number or a word of a sentence is
never taken for an id.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from longitudinal._errors import InvalidParameterError
from longitudinal.study.loaded import pseudonym_map

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
    return pseudonym_map(ids, key=key, prefix=prefix)


_QUOTED = re.compile(r"""(?<!\w)(?:'[^'\n]+'|"[^"\n]+"|‘[^’\n]+’|“[^”\n]+”)(?!\w)""")
"""A quoted token: text between matching quotes, the opening one not inside a word."""

_PEOPLE = r"\b(?:participants?|persons?|people|subjects?|groups?|levels?|ids?)\b"
"""Words after which a quoted token names a participant (``group 'P01'``)."""


def pseudonymize_message(
    text: str, id_map: Mapping[str, str], *, keep: Collection[str] = (), id_col: str | None = None
) -> str | None:
    """Put pseudonyms in a message of other code where it quotes a participant; else nothing.

    For messages of code that saw raw ids (a library's warning, an error): nothing in them is
    searched for ids, so a number or a word of a sentence (``3 waves``, ``1–5 scale``,
    ``70/20/10``, ``mid``) is never taken for one. Only a whole quoted token (``'P01'``,
    ``"P01"``, ``‘P01’``, ``“P01”``, the opening quote not inside a word) can be an id:

    * a quoted token that is one of ``keep`` (the names of the study: waves, instruments,
      scales, items, columns) names that and is left as it is;
    * a quoted raw id that the message says is a participant gets the pseudonym: the whole
      message (``'P01'``, as a ``KeyError`` reads), or right after ``participant``,
      ``person``, ``subject``, ``group``, ``level``, ``id`` (or their plurals) or ``id_col``,
      with ``:``, ``=`` or an opening bracket between (``group 'P01'``, ``participants:
      ['P01', 'P02']``; the later items of such a list too);
    * any other quoted raw id could be a participant or a word of the message: the message
      is withheld (None), never rewritten.

    Parameters
    ----------
    text : str
        The message.
    id_map : mapping
        ``{raw id: pseudonym}``.
    keep : collection of str, optional
        Names that a quoted token stands for rather than an id.
    id_col : str, optional
        The study's participant column, a word that says a participant follows.

    Returns
    -------
    str or None
        ``text`` with pseudonyms in those places, quotes kept; None when it is withheld.

    Examples
    --------
    >>> ids = {"1": "S07", "3": "S02", "mid": "S05", "week": "S11"}
    >>> pseudonymize_message("group '1' singular; 3 waves of 1-5", ids)
    "group 'S07' singular; 3 waves of 1-5"
    >>> print(pseudonymize_message('no answer at "mid" from participants ["3", "1"]', ids,
    ...                            keep={"mid"}))
    no answer at "mid" from participants ["S02", "S07"]
    >>> pseudonymize_message("'week' is perfectly correlated", ids) is None
    True
    """
    if not id_map:
        return text
    people = re.compile(
        "(?:" + _PEOPLE + (f"|{re.escape(id_col)}" if id_col else "") + r")\s*[:=]?\s*[\[({]?\s*$"
    )
    out, end, listed = [], 0, False
    for match in _QUOTED.finditer(text):
        whole = match.group(0)
        token = whole[1:-1]
        between = text[end : match.start()]
        listed = listed and re.fullmatch(r"\s*,\s*", between) is not None
        if token not in id_map or token in keep:
            listed = False
            continue
        said = whole == text.strip() or listed or people.search(text[: match.start()]) is not None
        if not said:
            return None
        out += [text[end : match.start()], whole[0], id_map[token], whole[-1]]
        end, listed = match.end(), True
    return "".join(out) + text[end:]


def pseudonymize_left_out(
    info: Mapping[str, Any], id_map: Mapping[str, str]
) -> tuple[dict[str, Any], int]:
    """Put pseudonyms in the participants a left-out summary names, by position.

    ``info`` is :func:`longitudinal.predict.left_out.left_out_summary` (``evaluation.json``
    ``left_out``): each entry's ``participant`` is mapped, and its ``text``, which begins
    with the raw id and ``:``, gets the pseudonym in that place; the rest of the text (the
    reasons, the counts) is left exactly as it was. Entries are put in the order of their
    pseudonyms, so their order says nothing of the raw ids. An entry whose id has no
    pseudonym (not in ``participants.csv``), or whose text does not begin with its id, is
    left out and counted.

    Returns
    -------
    dict
        A copy of ``info`` naming pseudonyms only.
    int
        Entries left out.

    Examples
    --------
    >>> info = {"ratings": 4, "of": 30, "advice": None, "participants": [
    ...     {"participant": "12", "ratings": 4, "of": 4, "excluded": True,
    ...      "text": "12: x not scored (1 of 2 items answered); 4 ratings left out"}]}
    >>> shown, withheld = pseudonymize_left_out(info, {"12": "S03"})
    >>> shown["participants"][0]["text"], withheld
    ('S03: x not scored (1 of 2 items answered); 4 ratings left out', 0)
    """
    entries, withheld = [], 0
    for entry in info.get("participants") or []:
        raw = str(entry.get("participant")) if isinstance(entry, Mapping) else None
        text = entry.get("text") if isinstance(entry, Mapping) else None
        if raw not in id_map or not isinstance(text, str) or not text.startswith(f"{raw}:"):
            withheld += 1
            continue
        shown = id_map[raw]
        entries.append({**entry, "participant": shown, "text": shown + text[len(raw) :]})
    entries.sort(key=lambda e: e["participant"])
    return {**info, "participants": entries}, withheld


KEY_BITS = 128
"""A key must hold at least this many bits of randomness (:func:`key_problem`)."""

MIN_KEY_BYTES = 16
"""The fewest bytes a key of random bytes can have: 16 (128 bits)."""

MAX_KEY_BYTES = 64 << 10
"""A key file larger than 64 KiB is not a key (``/dev/zero`` and the like are refused)."""

MAKE_KEY = 'python -c "import secrets; print(secrets.token_hex(32))" > KEY'
"""How to make a key file by hand."""

KEY_TEST_SYMBOLS = 256
"""The randomness test of :func:`key_problem` looks at the first 256 symbols of a key."""

KEY_TEST_LEVEL = 1e-9
"""A key made at random fails each count of :func:`key_problem` with less than this chance."""

_BASE64_DIGITS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_BASE64_VALUES = {
    **{c: k for k, c in enumerate(_BASE64_DIGITS)},
    **{c: 62 for c in b"+-"},
    **{c: 63 for c in b"/_"},
}
_HEX_KEY = re.compile(rb"[0-9a-fA-F]+")
_BASE64_KEY = re.compile(rb"[A-Za-z0-9+/_\-\r\n]+={0,2}")
_TEXT_KEY = re.compile(rb"[\x20-\x7e]+")


def key_symbols(key: bytes) -> tuple[str, list[int], int]:
    """Read a key as the symbols it is written in: hex digits, base64, typed text or bytes.

    Returns the form's name, the key's symbols as numbers ``0 ... size - 1`` and ``size``,
    the number of symbols of the form: 16 (only ``0-9a-fA-F``: ``secrets.token_hex``, what
    the package writes), 64 (only ``A-Za-z0-9+/-_``, line breaks and ``=`` padding:
    ``secrets.token_urlsafe``, ``openssl rand -base64``), 95 (printable ASCII text) or 256
    (any other bytes: ``head -c 32 /dev/urandom``).

    Examples
    --------
    >>> key_symbols(b"0aF")
    ('hex digits', [0, 10, 15], 16)
    >>> key_symbols(b"Az_=")[0::2]
    ('base64 characters', 64)
    """
    if _HEX_KEY.fullmatch(key):
        return "hex digits", [int(chr(c), 16) for c in key], 16
    if _BASE64_KEY.fullmatch(key):
        return "base64 characters", [_BASE64_VALUES[c] for c in key if c in _BASE64_VALUES], 64
    if _TEXT_KEY.fullmatch(key):
        return "text characters", [c - 0x20 for c in key], 95
    return "bytes", list(key), 256


@lru_cache(maxsize=64)
def _distinct_cdf(draws: int, size: int) -> tuple[float, ...]:
    """``P(D <= d)``, ``d = 0 ... draws``: D distinct values in ``draws`` draws of ``size``."""
    import numpy as np

    p = np.zeros(draws + 1)
    p[0] = 1.0
    k = np.arange(draws + 1, dtype=float)
    for _ in range(draws):
        moved = np.zeros_like(p)
        moved[1:] = p[:-1] * (size - k[:-1]) / size
        p = p * k / size + moved
    return tuple(np.cumsum(p).tolist())


def key_problem(key: bytes) -> str | None:
    """Say why ``key`` does not hold 128 bits of randomness, or return None for a good key.

    The stated test, on the key with surrounding white space removed:

    1. **Length.** Read as hex digits (4 bits each), base64 characters (6 bits), printable
       text (log2 95 = 6.57 bits) or bytes (8 bits) (:func:`key_symbols`), the key must hold
       at least :data:`KEY_BITS` = 128 bits: 32 hex digits, 22 base64 characters, 20 text
       characters or 16 bytes.
    2. **Variety.** Among its first :data:`KEY_TEST_SYMBOLS` symbols, the count of distinct
       symbols, of distinct steps between neighbours (the difference modulo the number of
       symbols of the form) and of distinct pairs of neighbours must each be at least what
       a key drawn at random reaches with probability ``1 - 1e-9``
       (:data:`KEY_TEST_LEVEL`; the counts of uniform draws, the pairs taken as independent
       draws of ``size**2`` values). A key made by ``secrets`` or ``os.urandom`` passes but
       for a chance of a few in a billion; a repeated letter (``aaaa...``), a counting run
       (``0123...``, ``abcd...``), a repeated word and typed sentences fail.

    The test cannot prove a key random: make keys with ``secrets.token_hex(32)`` (what the
    report writes when it creates one).

    Examples
    --------
    >>> import secrets
    >>> key_problem(secrets.token_hex(16).encode()) is None
    True
    >>> key_problem(b"a" * 32)
    'its 32 hex digits show 1 distinct symbol, where a random key shows at least 7'
    >>> key_problem(b"hunter2")
    'its 7 base64 characters of 6 bits each hold 42 bits at most'
    """
    form, symbols, size = key_symbols(key)
    bits = len(symbols) * math.log2(size)
    if bits < KEY_BITS - 1e-9:
        each = f"{math.log2(size):.3g} bits"
        return f"its {len(symbols)} {form} of {each} each hold {bits:.0f} bits at most"
    window = symbols[:KEY_TEST_SYMBOLS]
    pairs = list(zip(window, window[1:], strict=False))
    counts = (  # (distinct values found, draws, values possible, what: one, several)
        (len(set(window)), len(window), size, ("distinct symbol", "distinct symbols")),
        (
            len({(b - a) % size for a, b in pairs}),
            len(pairs),
            size,
            ("distinct step between neighbours", "distinct steps between neighbours"),
        ),
        (
            len(set(pairs)),
            len(pairs),
            size * size,
            ("distinct pair of neighbours", "distinct pairs of neighbours"),
        ),
    )
    for found, draws, values, (one, several) in counts:
        cdf = _distinct_cdf(draws, values)
        if cdf[found] < KEY_TEST_LEVEL:
            least = next(d for d in range(draws + 1) if cdf[d] >= KEY_TEST_LEVEL)
            return (
                f"its {len(window)} {form} show {found} {one if found == 1 else several}, "
                f"where a random key shows at least {least}"
            )
    return None


def fingerprint(key: bytes) -> str:
    """Return a short fingerprint of a key: enough to tell keys apart, useless to recover one.

    A slow keyed derivation (PBKDF2-HMAC-SHA-256, 100,000 rounds, salt
    ``b"empathic-longitudinal pseudonym key fingerprint"``), so that testing a guessed key
    against a report's ``provenance.json`` costs tens of milliseconds, on top of the 128 bits
    of randomness a key must hold (:func:`key_problem`): no list of guessable keys comes near
    a key that passes.
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
    without 128 bits of randomness (:func:`key_problem`); a new key whose folder does not
    exist. A new key comes from :func:`new_key`.
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
        return new_key(), True
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
    if key and (problem := key_problem(key)) is None:
        return key, False
    held = f"holds {len(key)} bytes: {problem}" if key else "is empty"
    raise InvalidParameterError(
        f"the pseudonym key file {str(path)!r} of {func} {held}; a key needs at least "
        f"{KEY_BITS} bits of randomness (32 hex digits, 22 base64 characters or 16 random "
        f"bytes, not a word, a pattern or a repeated letter). Make one with: {MAKE_KEY}, "
        "or name a file that does not exist yet and the report creates the key"
    )


def new_key() -> bytes:
    """Return a new key: 32 random bytes as 64 hex digits, one that :func:`key_problem` passes.

    A random key fails the test with a chance of a few in a billion; such a draw is
    replaced, so that a key the report made is never refused when a rerun reads it.
    """
    while True:
        key = secrets.token_hex(32).encode("ascii")
        if key_problem(key) is None:
            return key


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
