"""Replay the bad-input corpus (tests/data/corpus/) through the ``longitudinal`` command line.

Each case is a folder holding ``case.toml`` and the input files the command reads; see
tests/data/corpus/README.md for the format. For every case the test asserts:

* the exit code (2 for a refused input, 0 for a readable one);
* no traceback anywhere in the output;
* the message fragments of the case appear in the output (file, row, column, value, rule);
* nothing the case marks as secret (files under ``_outside/``) is echoed;
* on refusal, nothing is written: the output folder stays empty and no file appears or
  disappears anywhere in the case's folders (hidden staging folders included);
* every input file is byte-identical afterwards (also when the command succeeds);
* where the case declares it, rows in = rows scored + rows in the exclusion log;
* where the case declares it, cells that a column of an output CSV must (or must not) hold;
* where the case declares it, what an output text file starts with, holds and must not hold.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from longitudinal.cli import main

CORPUS = Path(__file__).resolve().parent / "data" / "corpus"
CASES = sorted(p.parent.name for p in CORPUS.glob("*/case.toml"))


def _tree(root: Path) -> dict[str, str]:
    """Relative path -> content hash of every file (and symlink target) under ``root``."""
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "link:" + os.readlink(path)
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            found[rel] = "dir"
    return found


def _fill(text: str, places: dict[str, Path]) -> str:
    for key, value in places.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def _data_rows(path: Path, header_rows: int) -> int:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, header=None, skiprows=header_rows)
    return len(frame)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.usefixtures("figures_drafted")  # no case reads a figure's pixels or its PDF
def test_corpus_case(name, tmp_path, capsys, monkeypatch):
    source = CORPUS / name
    case = tomllib.loads((source / "case.toml").read_text(encoding="utf-8"))
    places = {"in": tmp_path / "in", "out": tmp_path / "out", "outside": tmp_path / "outside"}
    shutil.copytree(source, places["in"], symlinks=True, ignore=shutil.ignore_patterns("_outside"))
    (places["in"] / "case.toml").unlink()
    if (source / "_outside").is_dir():
        shutil.copytree(source / "_outside", places["outside"])
    for link, target in case.get("symlinks", {}).items():
        (places["in"] / link).parent.mkdir(parents=True, exist_ok=True)
        (places["in"] / link).symlink_to(_fill(target, places))
    places["out"].mkdir()
    monkeypatch.chdir(places["out"])
    inputs = _tree(places["in"])
    outside = _tree(places["outside"]) if places["outside"].exists() else {}

    args = [_fill(a, places) for a in case["args"]]
    code = main(args)
    captured = capsys.readouterr()
    output = captured.out + captured.err

    assert code == case["exit"], f"{name}: exit {code}, expected {case['exit']}\n{output}"
    assert "Traceback" not in output, output
    for fragment in case.get("message", []):
        assert _fill(fragment, places) in output, f"{name}: {fragment!r} not in\n{output}"
    for fragment in case.get("absent", []):
        assert _fill(fragment, places) not in output, f"{name}: {fragment!r} in\n{output}"
    if places["outside"].exists():
        for path in places["outside"].rglob("*"):
            if path.is_file():
                for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                    if "SECRET" in line:
                        assert line not in output, f"{name}: echoed {line!r}"
    if case["exit"] != 0:
        assert _tree(places["out"]) == {}, f"{name}: wrote {sorted(_tree(places['out']))}"
    assert _tree(places["in"]) == inputs, f"{name}: an input changed or a file appeared"
    if outside:
        assert _tree(places["outside"]) == outside, f"{name}: a file outside changed"
    for path in case.get("expect_files", []):
        assert Path(_fill(path, places)).is_file(), f"{name}: {path} not written"

    for path, cells in case.get("cells", {}).items():
        table = pd.read_csv(Path(_fill(path, places)), dtype=str, keep_default_na=False)
        found = set(table[cells["column"]])
        missing = [v for v in cells["values"] if v not in found]
        assert not missing, f"{name}: {missing} not in column {cells['column']!r} of {path}"
        wrong = [v for v in cells.get("absent", []) if v in found]
        assert not wrong, f"{name}: {wrong} in column {cells['column']!r} of {path}"

    for path, rule in case.get("texts", {}).items():
        text = Path(_fill(path, places)).read_text(encoding="utf-8")
        starts = rule.get("starts")
        assert starts is None or text.startswith(starts), f"{name}: {path} starts {text[:200]!r}"
        for fragment in rule.get("contains", []):
            assert fragment in text, f"{name}: {fragment!r} not in {path}"
        for fragment in rule.get("absent", []):
            assert fragment not in text, f"{name}: {fragment!r} in {path}"

    rows = case.get("rows")
    if rows:
        scored = _data_rows(Path(_fill(rows["scored"], places)), 1)
        per_row = rows.get("scores_per_row", 1)
        assert scored % per_row == 0, f"{name}: {scored} scores, {per_row} per row"
        scored //= per_row
        excluded_path = Path(_fill(rows["excluded"], places))
        excluded = _data_rows(excluded_path, 1) if excluded_path.exists() else 0
        assert rows["input"] == scored + excluded, (
            f"{name}: {rows['input']} rows in, {scored} scored + {excluded} excluded"
        )
        if "excluded_rows" in rows:
            assert excluded == rows["excluded_rows"], f"{name}: {excluded} rows excluded"


def test_corpus_is_not_empty():
    assert len(CASES) >= 1
