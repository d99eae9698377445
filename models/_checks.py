"""Parameter checks of the models package: one wording for every function."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from models._errors import InvalidParameterError


def check_choice(value: Any, allowed: Sequence[str], *, name: str, where: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise InvalidParameterError(
            f"the `{name}` parameter of {where} must be one of {list(allowed)}; got {value!r}"
        )
    return value


def check_int(value: Any, *, name: str, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InvalidParameterError(
            f"the `{name}` parameter of {where} must be an integer >= {minimum}; got {value!r}"
        )
    return int(value)


def check_unit(value: Any, *, name: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        raise InvalidParameterError(
            f"the `{name}` parameter of {where} must be a float in (0, 1); got {value!r}"
        )
    return float(value)


def check_seed(value: Any, *, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise InvalidParameterError(
            f"the `seed` parameter of {where} must be a non-negative integer or None; got {value!r}"
        )
    return int(value)
