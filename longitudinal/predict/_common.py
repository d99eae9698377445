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


def sampling_settings(
    draws: int | None, tune: int | None, chains: int | None, *, where: str
) -> tuple[int, int, int]:
    """Draws, tuning steps and chains of the Bayesian model; None takes the model's default."""
    from longitudinal._checks import check_int
    from models.bayes import DEFAULT_SAMPLING

    given = {"draws": draws, "tune": tune, "chains": chains}
    minimum = {"draws": 1, "tune": 0, "chains": 1}
    out = []
    for name, value in given.items():
        value = int(DEFAULT_SAMPLING[name]) if value is None else value
        out.append(check_int(value, name=name, where=where, minimum=minimum[name]))
    return out[0], out[1], out[2]
