"""The packages import one another in one direction: no import cycle, not even inside a function.

The graph is built from the source with :mod:`ast`, so an import that runs late (inside a
function, to keep a package's import light) counts as much as one at the top of a module. Only
imports under ``if TYPE_CHECKING:`` are left out (they never run). ``import a.b.c`` is an import
of ``a.b.c``; ``from a.b import c`` is an import of ``a.b.c`` when that is a module, else of
``a.b``; relative imports are resolved. A package ``__init__`` may import its own submodules,
as long as none of them imports the ``__init__`` back (that would be a cycle here too).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST):
    """Every Import and ImportFrom node of a module, except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute name of the module that a (possibly relative) ``from`` import names."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


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
        graph[module] = {t for t in targets if t in files and t != module}
    return graph


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


def _describe(cycle: tuple[str, ...], graph: dict[str, set[str]]) -> str:
    members = set(cycle)
    edges = [f"{a} -> {b}" for a in cycle for b in sorted(graph[a] & members)]
    return " <-> ".join(cycle) + " (" + "; ".join(edges) + ")"


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
