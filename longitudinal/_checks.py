"""Parameter checks of the longitudinal package: one wording for every function.

Each check names the parameter and the function (on the command line, the option:
:mod:`_empathic_base.words`) and says what was expected and what was given, in the words of
:mod:`models._checks`. ``check_bool`` and ``check_unit`` are the
distribution's shared checks (``_empathic_base``), re-exported here.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from _empathic_base.checks import check_bool, check_unit
from _empathic_base.words import parameter
from longitudinal._errors import InvalidParameterError

__all__ = ["check_bool", "check_frame", "check_int", "check_unit"]


def check_int(
    value: Any, *, name: str, where: str, minimum: int, maximum: int | None = None
) -> int:
    """Return ``value`` as an int if it is a whole number in ``[minimum, maximum]``."""
    ok = not isinstance(value, bool | np.bool_) and isinstance(value, numbers.Integral)
    if not ok or value < minimum or (maximum is not None and value > maximum):
        wanted = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise InvalidParameterError(
            f"{parameter(name, where)} must be an integer {wanted}; got {value!r}"
        )
    return int(value)


def check_frame(data: Any, columns: Sequence[str], *, where: str, name: str = "data") -> None:
    """Check that ``data`` is a DataFrame holding ``columns``; name the missing ones."""
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `{name}` parameter of {where} must be a pandas DataFrame; "
            f"got {type(data).__name__}"
        )
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise InvalidParameterError(
            f"the `{name}` parameter of {where} lacks the columns {missing}; "
            f"it has {list(data.columns)}"
        )
