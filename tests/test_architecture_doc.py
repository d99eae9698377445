"""``docs/architecture.md`` is true to the code: every module it names exists and is named.

A module is named by its path in backticks (`` `models/formula.py` ``), by a folder followed by
its modules' names in parentheses (`` `models/lmm/` (`model`, `_summary`) ``: a name there is
a module or a subpackage of that folder), or by a folder's pattern
(`` `surveys/instruments/*.toml` ``, `` `longitudinal/report/sections/*.py` ``: every file of that
folder). Package ``__init__`` modules
need no name: their folder's row is theirs.
"""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("_empathic_base", "surveys", "models", "longitudinal")
TICKED = re.compile(r"`([^`]+)`")
FOLDER_LIST = re.compile(r"`((?:" + "|".join(PACKAGES) + r")/[\w/]*/)` \(([^)]*)\)")


def _doc_text() -> str:
    """The doc without its fenced blocks, double backticks read as single text."""
    text = re.sub(r"```.*?```", "", DOC.read_text(encoding="utf-8"), flags=re.S)
    return text.replace("``", "")


def _modules() -> list[str]:
    return sorted(
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.name != "__init__.py"
    )


def _paths_named(text: str) -> tuple[set[str], set[str]]:
    """The package paths the doc names in backticks, and the folder patterns (``dir/*.py``)."""
    paths, patterns = set(), set()
    for token in TICKED.findall(text):
        token = token.strip()
        if not token.startswith(tuple(f"{p}/" for p in PACKAGES)) or "<" in token:
            continue
        if " " in token:
            continue
        (patterns if "*" in token else paths).add(token)
    return paths, patterns


def _listed(text: str) -> set[str]:
    """Every ``folder/name`` a folder's parenthesised list names (a module or a subpackage)."""
    listed = set()
    for folder, inside in FOLDER_LIST.findall(text):
        for name in TICKED.findall(inside):
            if re.fullmatch(r"[\w/]+", name):
                listed.add(folder + name.strip("/"))
    return listed


def _exists(path: str) -> bool:
    target = ROOT / path
    return target.exists() or target.with_suffix(".py").exists()


def test_every_module_the_doc_names_exists():
    text = _doc_text()
    paths, patterns = _paths_named(text)
    missing = sorted(p for p in paths | _listed(text) if not _exists(p))
    missing += sorted(p for p in patterns if not list(ROOT.glob(p)))
    assert not missing, f"docs/architecture.md names what does not exist: {missing}"


def test_every_module_is_named_in_the_doc():
    text = _doc_text()
    paths, patterns = _paths_named(text)
    listed = _listed(text)
    unnamed = []
    for module in _modules():
        stem = module.removesuffix(".py")
        parents = {"/".join(stem.split("/")[:i]) for i in range(2, stem.count("/") + 1)}
        if module in paths or stem in listed or parents & listed:
            continue
        if any(fnmatch(module, pattern) for pattern in patterns):
            continue
        unnamed.append(module)
    assert not unnamed, f"modules docs/architecture.md does not name: {unnamed}"
