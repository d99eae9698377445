"""How much of the empathy ratings the linear mixed model explains: its R-squared, gated.

:func:`empathy_r2` tabulates :meth:`models.lmm.LinearMixedModel.r2` of the empathy model
(Nakagawa's marginal and conditional R-squared; Rights & Sterba's measures within and between
persons where every predictor is split into a within-person and a between-person part, else
their total measures, else none) with the reason a decomposition is missing and the model's
status; :func:`describe_r2` says it in one sentence, or says why it is not read.
"""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from longitudinal.narrate.gates import FAILED, fit_problem
from longitudinal.narrate.sentences import describe_r2  # written on the narration floor
from models import CentringWarning

__all__ = ["R2_TABLE_COLUMNS", "describe_r2", "empathy_r2"]

R2_TABLE_COLUMNS = ["engine", "decomposition", "measure", "value", "status", "note"]
"""Columns of :func:`empathy_r2`: ``decomposition`` is ``nakagawa``, ``total``, ``within`` or
``between``; ``measure`` the name (``marginal``, ``conditional``; r2mlm's ``f1, f2, v, m, f,
fv, fvm``); ``status`` ``ok`` or ``failed: <why>``; ``note`` why a decomposition is missing."""


def _reason(result: Any, groups: list[str]) -> str:
    """Say why the within/between split is missing, as a clause ("" when it is given)."""
    if result.rights_sterba["within"]:
        return ""
    if result.cluster is None:
        return (
            f"the model has {len(groups)} grouping factors ({', '.join(groups)}) and the split "
            "is defined for two-level models"
        )
    both = ", ".join(result.both)
    verb = "varies" if len(result.both) == 1 else "vary"
    return (
        f"{both} {verb} both within and between persons (the split needs every predictor "
        "split into a within-person and a between-person part)"
    )


def empathy_r2(lmm: Any, *, engine: str = "lmm") -> pd.DataFrame:
    """Tabulate the R-squared of the fitted empathy LMM, with its status.

    Parameters
    ----------
    lmm : models.lmm.LinearMixedModel
        The fitted effects model.
    engine : str, default "lmm"
        The ``engine`` column's value.

    Returns
    -------
    pandas.DataFrame
        :data:`R2_TABLE_COLUMNS`, at full precision: Nakagawa's two rows, then the Rights &
        Sterba measures that apply. A singular or unconverged fit keeps its numbers with
        ``status`` ``failed: <why>`` (they are not read).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CentringWarning)  # the note says it
        result = lmm.r2()
    problem = fit_problem(lmm)
    status = "ok" if problem is None else f"{FAILED}: {problem}"
    rows = [("nakagawa", name, value) for name, value in result.nakagawa.items()]
    rows += [
        (part, name, value)
        for part in ("total", "within", "between")
        for name, value in result.rights_sterba[part].items()
    ]
    table = pd.DataFrame(rows, columns=["decomposition", "measure", "value"])
    table.insert(0, "engine", engine)
    table["status"] = status
    table["note"] = _reason(result, list(lmm.groups_))
    return table[R2_TABLE_COLUMNS]
