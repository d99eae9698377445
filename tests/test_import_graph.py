"""The packages import one another in one direction: no import cycle, not even inside a function.

The graph is built from the source with :mod:`ast`, so an import that runs late (inside a
function, to keep a package's import light) counts as much as one at the top of a module. Only
imports under ``if TYPE_CHECKING:`` are left out (they never run). ``import a.b.c`` is an import
of ``a.b.c``; ``from a.b import c`` is an import of ``a.b.c`` when that is a module, else of
``a.b``; relative imports are resolved.

Importing ``a.b.c`` first runs ``a/__init__.py`` and ``a/b/__init__.py``, so a module that
imports ``a.b.c`` also depends on the packages ``a`` and ``a.b``: those parent-package edges
count. A module's own ancestors are left out: Python has started them before the module runs
(a package ``__init__`` importing its own submodules is how packages work), so an import of
``a.b.d`` from ``a.b.c`` adds no edge to ``a`` or ``a.b``. A package ``__init__`` may import its
own submodules, as long as none of them imports the ``__init__`` back through another package
(that would be a cycle here too).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from _source_imports import imports as _imports
from _source_imports import resolve as _resolve

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("_empathic_base", "surveys", "models", "longitudinal")


def _module_files() -> dict[str, Path]:
    """Map every module of the packages to its file (``pkg/__init__.py`` is ``pkg``)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def import_graph() -> dict[str, set[str]]:
    """Map every module of the packages to the modules of the packages it imports."""
    files = _module_files()
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            source = _resolve(node, module, is_package)
            for alias in node.names:
                name = f"{source}.{alias.name}"
                targets.add(name if name in files else source)
        targets.update(_parents(targets))
        own = set(_parents({module})) | {module}
        graph[module] = {t for t in targets if t in files and t not in own}
    return graph


def _parents(names: set[str]) -> list[str]:
    """The packages Python runs before each of ``names`` (``a`` and ``a.b`` before ``a.b.c``)."""
    out = []
    for name in names:
        parts = name.split(".")
        out += [".".join(parts[:i]) for i in range(1, len(parts))]
    return out


def import_cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[tuple[str, ...]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    cycles.append(tuple(sorted(component)))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(cycles)


def _shortest_loop(start: str, graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """The shortest path from ``start`` back to itself inside one cycle (breadth first)."""
    before = {start: ""}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(graph[node] & members):
            if child == start:
                path = [node]
                while before[path[-1]]:
                    path.append(before[path[-1]])
                return [*reversed(path), start]
            if child not in before:
                before[child] = node
                queue.append(child)
    return [start]


def _describe(cycle: tuple[str, ...], graph: dict[str, set[str]]) -> str:
    """The modules of a cycle and the shortest loop through each of them, one per line."""
    members = set(cycle)
    loops = dict.fromkeys(
        " -> ".join(_shortest_loop(module, graph, members))
        for module in sorted(cycle, key=lambda m: len(_shortest_loop(m, graph, members)))
    )
    return f"{len(cycle)} modules: " + ", ".join(cycle) + "\n  " + "\n  ".join(loops)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_graph_sees_every_package(graph):
    for package in PACKAGES:
        assert package in graph
    assert "longitudinal.report.build" in graph["longitudinal.report"]
    # an import inside a function counts
    assert any(graph[m] for m in graph if m.startswith("longitudinal.cli."))


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(graph, package):
    cycles = [c for c in import_cycles(graph) if c[0].split(".")[0] == package]
    assert not cycles, "import cycles:\n" + "\n".join(_describe(c, graph) for c in cycles)


NARRATION_FLOOR = "longitudinal.narrate"
"""The floor every room that writes about a result stands on (docs/architecture.md)."""

FLOOR_MAY_IMPORT = {"numpy", "pandas", "_empathic_base"}
"""Besides the standard library, itself and longitudinal's ground floor."""


def _ground_floor(graph: dict[str, set[str]]) -> set[str]:
    """The private modules at the root of longitudinal that import nothing else of it."""
    return {
        module
        for module in graph
        if module.count(".") == 1
        and module.startswith("longitudinal._")
        and not any(t.split(".")[0] == "longitudinal" for t in graph[module])
    }


def _imported_names(module: str, path: Path) -> set[str]:
    """Every module name that a module imports, outside the packages too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in _imports(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        else:
            names.add(_resolve(node, module, path.name == "__init__.py"))
    return names


def test_the_narration_floor_imports_only_numpy_pandas_and_the_ground_floor(graph):
    ground = _ground_floor(graph)
    assert {"longitudinal._errors", "longitudinal._wording"} <= ground
    floor = {
        m: p for m, p in _module_files().items() if m.split(".")[:2] == ["longitudinal", "narrate"]
    }
    assert {f"{NARRATION_FLOOR}.{name}" for name in ("numbers", "gates", "sentences")} <= set(floor)
    wrong = []
    for module, path in floor.items():
        for name in sorted(_imported_names(module, path)):
            top = name.split(".")[0]
            allowed = (
                top in sys.stdlib_module_names
                or top in FLOOR_MAY_IMPORT
                or name == NARRATION_FLOOR
                or name.startswith(f"{NARRATION_FLOOR}.")
                or name in ground
            )
            if not allowed:
                wrong.append(f"{module} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_the_narration_floor_loads_no_room_above_it():
    modules = ", ".join(f"{NARRATION_FLOOR}.{name}" for name in ("gates", "sentences", "numbers"))
    code = (
        f"import sys, {modules}\n"
        "print('\\n'.join(m for m in sys.modules if m.split('.')[0] in "
        "('longitudinal', 'models', 'surveys', 'scipy')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    above = {
        m
        for m in loaded
        if m != "longitudinal" and not m.startswith((f"{NARRATION_FLOOR}", "longitudinal._"))
    }
    assert not above, f"the narration floor loads {sorted(above)}"
