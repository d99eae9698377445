"""Import optional heavy dependencies lazily, with an actionable error."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, *, feature: str, extra: str | None = None) -> ModuleType:
    """Import ``module`` for ``feature`` or raise an ImportError saying how to install it.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"nutpie"``.
    feature : str
        What needs it, e.g. ``"BayesianMixedModel.fit(sampler='nutpie')"``.
    extra : str, optional
        The package extra that installs it.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    ImportError
        When the module (not one of its own dependencies) is missing.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if err.name is None or not module.startswith(err.name):
            raise
        hint = f"pip install 'empathic-longitudinal[{extra}]'" if extra else f"pip install {module}"
        raise ImportError(f"{feature} needs the optional package {module!r}; {hint}") from err
