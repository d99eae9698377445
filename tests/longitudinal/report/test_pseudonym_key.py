"""The pseudonym key: at least 128 bits of randomness by a stated test, a slow fingerprint.

A key that a guess list holds (a letter repeated, a counting run, a word) would give the
pseudonyms back from the fingerprint in ``provenance.json``; such keys are refused before any
work, saying how to make a good one. Keys made at random, in every form a tool writes them,
and the key the report makes itself are accepted.
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
from pathlib import Path

import pytest

from longitudinal._errors import InvalidParameterError
from longitudinal.cli import main
from longitudinal.report.pseudonyms import (
    _distinct_cdf,
    fingerprint,
    key_problem,
    key_symbols,
    new_key,
    read_or_new_key,
    write_key,
)

TRIVIAL = {
    "one letter, 16 bytes": b"a" * 16,
    "one letter, 64 bytes": b"q" * 64,
    "one digit as hex": b"0" * 64,
    "counting run in hex": b"0123456789abcdef" * 2,
    "the alphabet": b"abcdefghijklmnopqrstuvwxyz",
    "two letters repeated": b"ab" * 20,
    "a word repeated": b"deadbeef" * 4,
    "password and digits repeated": b"password1234567890" * 2,
    "base64 of zero bytes": base64.b64encode(bytes(16)),
    "base64 of a repeated letter": base64.b64encode(b"a" * 24),
    "a short phrase": b"a key for the tests",
    "a pass phrase": b"correct horse battery staple",
    "digits counting": b"1234567890" * 4,
    "a pattern with symbols": b"Aa1!" * 8,
    "too short": b"hunter2",
    "random but 15 bytes": bytes.fromhex("8f3a01c2d4e5f60718293a4b5c6d7e"),
}


@pytest.mark.parametrize("name", sorted(TRIVIAL))
def test_a_guessable_key_is_refused(name):
    assert key_problem(TRIVIAL[name]) is not None, name


def _printable(n: int) -> bytes:
    return "".join(secrets.choice([chr(c) for c in range(33, 127)]) for _ in range(n)).encode()


RANDOM = {
    "token_hex(16)": lambda: secrets.token_hex(16).encode(),
    "token_hex(32)": lambda: secrets.token_hex(32).encode(),
    "token_hex(16), upper case": lambda: secrets.token_hex(16).upper().encode(),
    "token_urlsafe(16)": lambda: secrets.token_urlsafe(16).encode(),
    "base64 of 16 bytes": lambda: base64.b64encode(os.urandom(16)),
    "base64 of 96 bytes, wrapped": lambda: base64.encodebytes(os.urandom(96)).strip(),
    "32 raw bytes": lambda: os.urandom(32).strip(),
    "300 raw bytes": lambda: os.urandom(300).strip(),
    "24 printable characters": lambda: _printable(24),
}


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_keys_made_at_random_are_accepted_in_every_form(name):
    # each fails with a chance of a few in a billion: 300 draws never should
    problems = {key_problem(RANDOM[name]()) for _ in range(300)} - {None}
    assert not problems, (name, problems)


def test_the_forms_and_their_bits():
    assert key_symbols(b"0aF9")[0::2] == ("hex digits", 16)
    assert key_symbols(b"Az09+/_-==")[0::2] == ("base64 characters", 64)
    assert key_symbols(b"a b!")[0::2] == ("text characters", 95)
    assert key_symbols(bytes([0, 200, 13]))[0::2] == ("bytes", 256)
    # the shortest key of each form: 128 bits
    assert key_problem(secrets.token_hex(15).encode()) == (
        "its 30 hex digits of 4 bits each hold 120 bits at most"
    )
    assert "21 base64 characters" in key_problem(base64.b64encode(os.urandom(18))[:21])


def test_the_distinct_count_distribution_is_that_of_uniform_draws():
    # 3 draws of 2 values: 1 distinct value with probability 2/8
    assert _distinct_cdf(3, 2) == pytest.approx((0.0, 0.25, 1.0, 1.0))
    # 16 draws of 256 values: the cdf ends at 1 and rises
    cdf = _distinct_cdf(16, 256)
    assert cdf[-1] == pytest.approx(1.0) and list(cdf) == sorted(cdf)


def test_the_key_the_report_makes_is_accepted_when_read_again(tmp_path):
    out = tmp_path / "rep"
    key, made = read_or_new_key(tmp_path / "k", out, func="build_report")
    assert made and len(key) == 64 and key_problem(key) is None
    write_key(tmp_path / "k", key)
    again, made = read_or_new_key(tmp_path / "k", out, func="build_report")
    assert (again, made) == (key, False)
    assert all(key_problem(new_key()) is None for _ in range(50))


def test_a_key_of_token_hex_16_is_accepted(tmp_path):
    secret = secrets.token_hex(16)
    (tmp_path / "k").write_text(secret + "\n", encoding="utf-8")
    key, made = read_or_new_key(tmp_path / "k", tmp_path / "rep", func="build_report")
    assert (key, made) == (secret.encode(), False)


def test_a_repeated_letter_key_is_refused_with_how_to_make_one(tmp_path):
    (tmp_path / "k").write_bytes(b"a" * 16 + b"\n")
    with pytest.raises(InvalidParameterError) as err:
        read_or_new_key(tmp_path / "k", tmp_path / "rep", func="build_report")
    text = str(err.value)
    assert "holds 16 bytes: its 16 hex digits of 4 bits each hold 64 bits at most" in text
    assert "at least 128 bits of randomness" in text
    assert 'python -c "import secrets; print(secrets.token_hex(32))"' in text


def test_the_command_refuses_a_weak_key_before_any_work(tmp_path, capsys):
    study = Path(__file__).parents[2] / "data" / "studies" / "tiny"
    key = tmp_path / "weak.key"
    key.write_text("q" * 40 + "\n", encoding="utf-8")
    code = main(["report", str(study), "--out", str(tmp_path / "rep"), "--pseudonym-key", str(key)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "weak.key" in err and "1 distinct symbol" in err and "secrets.token_hex(32)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["weak.key"]


def test_the_fingerprint_is_stable_differs_between_keys_and_is_slow_to_check():
    one, two = secrets.token_hex(32).encode(), secrets.token_hex(32).encode()
    assert fingerprint(one) == fingerprint(one) and len(fingerprint(one)) == 16
    assert fingerprint(one) != fingerprint(two)
    # the documented derivation: PBKDF2-HMAC-SHA-256, 100,000 rounds, a fixed salt
    salt = b"empathic-longitudinal pseudonym key fingerprint"
    assert fingerprint(one) == hashlib.pbkdf2_hmac("sha256", one, salt, 100_000)[:8].hex()
    assert fingerprint(one) != hashlib.sha256(one).hexdigest()[:16]
