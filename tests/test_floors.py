"""``longitudinal`` stands on floors (docs/architecture.md, "Floors of longitudinal").

A module imports from its own room and from rooms on lower floors, never sideways to another
room of its floor and never up (the error tree, ``_errors``, is under every room, the ground
floor's too); imports inside functions count, those under
``if TYPE_CHECKING:`` do not (they never run). The floors are written here as the doc states
them, so a move that breaks them fails here until the doc and this table change together.
"""

from __future__ import annotations

import ast
from pathlib import Path

from _source_imports import imports, resolve

ROOT = Path(__file__).resolve().parents[1]

FLOORS = {
    "_errors": 0,
    "_wording": 0,
    "_display": 0,
    "_sizes": 0,
    "_checks": 0,
    "_output": 0,
    "narrate": 1,
    "study": 2,
    "change": 2,
    "simulate": 2,
    "psychometrics": 3,
    "plotting": 3,
    "manuscript": 3,
    "predict": 4,
    "report": 5,
    "power": 5,
    "cli": 6,
    "__init__": 6,
}
"""Room (the first name under ``longitudinal``) -> its floor, ground 0."""

MOST_FLOORS = 8


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(tree: ast.AST, module: str, is_package: bool):
    """(line, absolute name) of every name ``tree`` imports outside TYPE_CHECKING blocks."""
    for node in imports(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        else:
            base = resolve(node, module, is_package)
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def test_every_room_has_a_floor_and_there_are_few_floors():
    rooms = {_room(_module(p)) for p in (ROOT / "longitudinal").rglob("*.py")}
    assert rooms <= set(FLOORS), f"rooms with no floor: {sorted(rooms - set(FLOORS))}"
    assert len(set(FLOORS.values())) <= MOST_FLOORS


def test_imports_go_down():
    wrong = []
    for path in sorted((ROOT / "longitudinal").rglob("*.py")):
        module = _module(path)
        room = _room(module)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in _imported(tree, module, path.name == "__init__.py"):
            if name.split(".")[0] != "longitudinal" or name == "longitudinal":
                continue
            target = _room(name)
            if target in (room, "_errors") or target not in FLOORS:
                continue
            if FLOORS[target] >= FLOORS[room]:
                wrong.append(
                    f"{path.relative_to(ROOT)}:{line}: {room} (floor {FLOORS[room]}) imports "
                    f"{name} ({target}, floor {FLOORS[target]})"
                )
    assert not wrong, "imports that do not go down:\n" + "\n".join(wrong)
