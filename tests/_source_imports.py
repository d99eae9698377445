"""What a module of the packages imports, read from its source with :mod:`ast`.

Shared by the tests of the import graph, of private imports and of the floors: an import inside
a function counts as much as one at the top of a module; one under ``if TYPE_CHECKING:`` does
not (it never runs).
"""

from __future__ import annotations

import ast


def is_type_checking(test: ast.expr) -> bool:
    """Say whether an ``if`` test is ``TYPE_CHECKING`` (or ``typing.TYPE_CHECKING``)."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(tree: ast.AST):
    """Every Import and ImportFrom node of a module, except those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute name of the module that a (possibly relative) ``from`` import names."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))
