"""Parameter checks used by every package, in one wording.

Each check names the parameter and the function (on the command line, the option:
:mod:`_empathic_base.words`), says what was expected and what was given,
and raises the shared :class:`~_empathic_base.errors.InvalidParameterError`. The checks that
only one package needs stay in its ``_checks`` module.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from _empathic_base.errors import InvalidParameterError
from _empathic_base.words import parameter


def check_bool(value: Any, *, name: str, where: str) -> bool:
    """Return ``value`` if it is True or False (NumPy booleans included).

    Examples
    --------
    >>> check_bool(True, name="flag", where="f")
    True
    >>> try:
    ...     check_bool(1, name="flag", where="f")
    ... except InvalidParameterError as err:
    ...     print(err)
    the `flag` parameter of f must be True or False; got 1
    """
    if not isinstance(value, bool | np.bool_):
        raise InvalidParameterError(
            f"{parameter(name, where)} must be True or False; got {value!r}"
        )
    return bool(value)


def check_unit(value: Any, *, name: str, where: str) -> float:
    """Return ``value`` as a float if it lies strictly between 0 and 1 (a level, a share).

    Booleans are refused (``True`` is not a level).

    Examples
    --------
    >>> check_unit(0.95, name="ci_level", where="f")
    0.95
    """
    ok = not isinstance(value, bool | np.bool_) and isinstance(value, numbers.Real)
    if not ok or not 0 < value < 1:
        raise InvalidParameterError(
            f"{parameter(name, where)} must be a float in (0, 1); got {value!r}"
        )
    return float(value)
