"""What the modules of :mod:`longitudinal.predict` share: the study check, warnings as notes."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pandas as pd

from longitudinal._errors import InvalidParameterError


def _empty(columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


def _check_study(study: Any, *, func: str) -> None:
    from longitudinal.study import Study

    if not isinstance(study, Study):
        raise InvalidParameterError(
            f"the `study` parameter of {func} must be a longitudinal.study.Study (from "
            f"load_study); got {type(study).__name__}"
        )


@contextmanager
def _recording(
    notes: list[str], *, prefix: str, expected: Callable[[Any], bool] | None = None
) -> Iterator[None]:
    """Catch warnings and keep them as notes (reports record warnings, they do not re-issue).

    Warnings for which ``expected(warning)`` is true are dropped.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        if expected is not None and expected(w):
            continue
        text = f"{prefix}: {w.category.__name__}: {_short(str(w.message))}"
        if text not in notes:
            notes.append(text)


def _short(message: str, limit: int = 300) -> str:
    """First line of a warning, with long formulas elided."""
    line = message.splitlines()[0] if message else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
