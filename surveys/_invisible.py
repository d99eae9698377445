"""Characters that cannot be seen, in column names and ids: the refusal of a DataFrame.

The characters and their description are in :mod:`_empathic_base.invisible`, shared with
:mod:`models`.
"""

from __future__ import annotations

from typing import Any

from _empathic_base.invisible import INVISIBLE, describe_invisible, invisible_problems

__all__ = ["INVISIBLE", "describe_invisible", "invisible_problems", "refuse_invisible"]


def refuse_invisible(data: Any, *, where: str, **options: Any) -> None:
    """Raise :class:`surveys.InputValidationError` listing :func:`invisible_problems`.

    ``options`` are those of :func:`invisible_problems`; ``where`` names the function in
    the summary line.
    """
    problems = invisible_problems(data, **options)
    if problems:
        import pandas as pd

        from surveys._errors import InputValidationError

        cases = pd.DataFrame(problems, columns=["file", "row", "column", "value", "reason"])
        cases["row"] = cases["row"].astype("Int64")
        raise InputValidationError(cases, f"{where}: column names or ids hold invisible characters")
