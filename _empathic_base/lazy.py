"""Public names imported on first use: the one lazy-export mechanism of the three packages.

A package ``__init__`` keeps a table of its public names, each mapped to the module that
defines it, and hands it to :func:`lazy_exports`::

    _LAZY = {"score": "surveys.scoring", "scale_reliability": "surveys.reliability"}
    __getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())

Importing the package then runs nothing but its own ``__init__``; the attribute
``surveys.score`` (also reached by a from-import of ``score``) imports the module
``surveys.scoring`` the first time it is asked for and keeps the object in the package's
namespace, so the second access costs a dictionary look-up. A submodule (``surveys.readers``)
is imported when asked for as an attribute, as it is after an eager import. Adding a public
name is one line in the table (and one in ``__all__``). Heavy libraries (SciPy's statistics,
PyMC, Matplotlib, Dask) are then loaded only by the functions that need them.

Only the standard library is imported here, so that the packages' import stays light.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Build a package's module ``__getattr__`` and ``__dir__`` from a name -> module table.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    table : mapping of str to str
        Public name -> absolute name of the module that defines it.
    namespace : dict
        The package's ``globals()``; an imported name is stored there, so that
        ``__getattr__`` runs once per name.

    Returns
    -------
    tuple of callable
        ``(__getattr__, __dir__)`` for the package module.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            if not name.startswith("__") and _has_submodule(package, name):
                return importlib.import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    _keep_names_over_submodules(package, table)
    return __getattr__, __dir__


def _keep_names_over_submodules(package: str, table: Mapping[str, str]) -> None:
    """Keep a public name that is also its module's name (``models.agreement``) the object.

    Importing a submodule sets it as an attribute of its package, which would hide the
    function of the same name once the submodule is imported; as with the eager import this
    replaces, the package attribute stays the function (the module is in ``sys.modules``).
    """
    clashes = {name for name, module in table.items() if module == f"{package}.{name}"}
    if not clashes:
        return

    class _Package(types.ModuleType):
        def __setattr__(self, name: str, value: Any) -> None:
            if (
                name in clashes
                and isinstance(value, types.ModuleType)
                and value.__name__ == f"{package}.{name}"
            ):
                value = getattr(value, name)
            super().__setattr__(name, value)

    sys.modules[package].__class__ = _Package


def _has_submodule(package: str, name: str) -> bool:
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except (ImportError, ValueError):
        return False
