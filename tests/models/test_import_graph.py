"""The modules of models/ import each other without cycles, imports inside functions included.

Every ``import`` and ``from ... import`` anywhere in a module counts (inside functions and
``if TYPE_CHECKING:`` blocks too); relative imports are resolved; an import of a package counts as
an import of its ``__init__``, and ``from package import name`` also as an import of the submodule
``package.name`` when there is one. A package ``__init__`` importing its own submodules is no cycle
unless a submodule imports the package back.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "models"


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def _resolve(name: str, modules) -> str | None:
    """The module (or package) ``name`` is, or the one that defines it."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def import_graph() -> dict[str, set[str]]:
    """Map each module of models/ to the modules of models/ it imports."""
    modules = _modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    if node.level > 1:
                        base = base[: -(node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [source] + [f"{source}.{alias.name}" for alias in node.names]
                targets = [source] + [t for t in targets[1:] if t in modules]
            else:
                continue
            for target in targets:
                if target.split(".")[0] != PACKAGE:
                    continue
                resolved = _resolve(target, modules)
                if resolved is not None and resolved != name:
                    deps.add(resolved)
        graph[name] = deps
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_models_has_no_import_cycles():
    graph = import_graph()
    cycles = find_cycles(graph)
    described = [
        "; ".join(f"{m} -> {sorted(d for d in graph[m] if d in cycle)}" for m in cycle)
        for cycle in cycles
    ]
    assert not cycles, "import cycles in models/: " + " | ".join(described)


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ],
)
def test_find_cycles(graph, expected):
    assert find_cycles(graph) == expected


def test_graph_counts_imports_inside_functions():
    graph = import_graph()
    # models.power.simulate imports the model classes only inside functions
    assert "models.lmm.model" in graph["models.power.simulate"]
    assert "models._design" in graph["models.formula"]
