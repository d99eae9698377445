"""No package reaches into another package's private modules or names.

A name is private when a dotted component of it starts with an underscore (dunder names such as
``__version__`` are public). An import of a private module or name is allowed only from inside
the package that holds it: the private thing's parent package must be the importing module's
package or one of its ancestors. ``models.lmm._summary`` may import ``models.lmm._lrt`` and
``models._checks``; ``models.power`` may not import ``models.lmm._mixedlm``. The shared base
``_empathic_base``, below all three public packages, is allowed as a whole.

Private names of other distributions count too: only the modules listed in
:data:`FOREIGN_PRIVATE_ALLOWED` may import them, each the one stated place where the project
depends on that distribution's internals.

The imports are read with :mod:`ast`, so an import inside a function counts as much as one at
the top of a module; only those under ``if TYPE_CHECKING:`` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from _source_imports import imports as _imports

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("_empathic_base", "surveys", "models", "longitudinal")
SHARED_BASE = "_empathic_base"

#: modules allowed to import private names of other distributions, with the distribution
FOREIGN_PRIVATE_ALLOWED = {
    "models.lmm.engine": "mixedlm",
    "longitudinal.plotting._pdf_fonts": "matplotlib",
}


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _modules(package: str):
    """``(module name, its package, path)`` for every module of a top-level package."""
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
            yield ".".join(parts), ".".join(parts), path
        else:
            yield ".".join(parts), ".".join(parts[:-1]), path


def _imported_names(node: ast.Import | ast.ImportFrom, own_package: str) -> list[str]:
    """The absolute dotted names an import statement reaches (relative imports resolved)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = own_package.split(".")
        base = base[: len(base) - (node.level - 1)]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    return [f"{source}.{alias.name}" for alias in node.names if alias.name != "*"]


def _within(package: str, ancestor: str) -> bool:
    return package == ancestor or package.startswith(ancestor + ".")


def _packages() -> set[str]:
    """The dotted names of the project's packages (folders with an ``__init__.py``)."""
    return {
        ".".join(path.parent.relative_to(ROOT).parts)
        for package in PACKAGES
        for path in (ROOT / package).rglob("__init__.py")
    }


def _owner(parts: list[str], i: int, packages: set[str]) -> str:
    """The package that holds the private component ``parts[i]``.

    A private module or a private name of a package ``__init__`` belongs to the package named
    before it; a private name of a module belongs to the package that holds the module.
    """
    parent = ".".join(parts[:i])
    if parent in packages or parts[0] not in PACKAGES:
        return parent
    return ".".join(parts[: i - 1])


def _violations(
    module: str, own_package: str, tree: ast.AST, packages: set[str]
) -> list[tuple[int, str]]:
    """``(line, name)`` of every private import of one module that crosses a package."""
    found = []
    for node in _imports(tree):
        for name in _imported_names(node, own_package):
            parts = name.split(".")
            if parts[0] == SHARED_BASE:
                continue
            if parts[0] not in PACKAGES and FOREIGN_PRIVATE_ALLOWED.get(module) == parts[0]:
                continue
            for i, part in enumerate(parts):
                owner = _owner(parts, i, packages)
                if _is_private(part) and not (owner and _within(own_package, owner)):
                    found.append((node.lineno, name))
                    break
    return found


def private_imports(package: str) -> list[str]:
    """Every import of a private module or name from outside its package, one line each."""
    found = []
    packages = _packages()
    for module, own_package, path in _modules(package):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in _violations(module, own_package, tree, packages):
            found.append(f"{path.relative_to(ROOT)}:{line}: {module} imports {name}")
    return found


@pytest.mark.parametrize(
    "package",
    [
        "_empathic_base",
        "surveys",
        "models",
        "longitudinal",
    ],
)
def test_no_private_import_across_packages(package):
    found = private_imports(package)
    assert not found, "private imports across packages:\n" + "\n".join(found)


def test_the_check_sees_private_imports_across_packages_only():
    source = (
        "from typing import TYPE_CHECKING\n"
        "import models.lmm._mixedlm\n"
        "from ._spec import y\n"
        "from ._lmm import _refit\n"
        "from .. import _checks\n"
        "from models._columns import ESTIMATE\n"
        "from _empathic_base.errors import ModelsError\n"
        "from models import __version__\n"
        "def f():\n"
        "    from mixedlm.estimation import _rounding_tolerance\n"
        "if TYPE_CHECKING:\n"
        "    from models.sem._spec import Spec\n"
    )
    tree = ast.parse(source)
    found = _violations("models.power.simulate", "models.power", tree, _packages())
    assert sorted(found) == [
        (2, "models.lmm._mixedlm"),
        (10, "mixedlm.estimation._rounding_tolerance"),
    ]
