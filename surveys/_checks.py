"""Parameter checks of the surveys package: one wording for every function.

The same words as ``models._checks`` and ``longitudinal._checks`` (surveys is a leaf package
and imports neither): the parameter, the function, what was expected and what was given.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from surveys._errors import InvalidParameterError


def check_bool(value: Any, *, name: str, where: str) -> bool:
    """Return ``value`` if it is True or False (NumPy booleans included)."""
    if not isinstance(value, bool | np.bool_):
        raise InvalidParameterError(
            f"the `{name}` parameter of {where} must be True or False; got {value!r}"
        )
    return bool(value)


def check_unit(value: Any, *, name: str, where: str) -> float:
    """Return ``value`` as a float if it lies strictly between 0 and 1 (a level, a share)."""
    ok = not isinstance(value, bool | np.bool_) and isinstance(value, numbers.Real)
    if not ok or not 0 < value < 1:
        raise InvalidParameterError(
            f"the `{name}` parameter of {where} must be a float in (0, 1); got {value!r}"
        )
    return float(value)
