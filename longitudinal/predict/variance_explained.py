"""How much of the empathy ratings the linear mixed model explains: its R-squared, gated.

:func:`empathy_r2` tabulates the R-squared of the empathy model (model ``reported``):
Nakagawa's marginal and conditional R-squared, and the share of the variance each grouping
factor other than the participant holds (the story intercept). Rights & Sterba's (2019)
measures within and between persons are defined for two-level models whose every predictor is
either within-person (person means 0) or between-person (constant within each person); the
report's model crosses participants with stories, and its time and session predictors vary
both within and between persons. The split is therefore computed in a second model (model
``two-level``): the same predictors on the same ratings with the participant's random effects
only (the story intercept left out), every predictor that varies both within and between
persons replaced by its deviation from the person's mean over these ratings (within) and that
mean (between); a random slope goes on the within part. Where the reported model is already
such a model its own measures are given. :func:`describe_r2` says it in one sentence, or says
why it is not read.

No published R-squared decomposition splits the variance within and between persons in a
cross-classified model, so the split is labelled as that of the two-level model, beside the
share the story intercept held in the crossed one.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal.narrate.gates import FAILED, fit_problem
from longitudinal.narrate.sentences import describe_r2  # written on the narration floor
from longitudinal.predict.predictors import EmpathyData
from models import CentringWarning, ModelsError

__all__ = ["R2_TABLE_COLUMNS", "describe_r2", "empathy_r2"]

R2_TABLE_COLUMNS = [
    "engine",
    "model",
    "decomposition",
    "measure",
    "value",
    "n_participants",
    "n_ratings",
    "split",
    "formula",
    "status",
    "note",
]
"""Columns of :func:`empathy_r2`: ``model`` is ``reported`` (the report's model) or
``two-level`` (the model of the split); ``decomposition`` is ``nakagawa``, ``share`` (a
grouping factor's share of the variance, ``measure`` its column), ``total``, ``within`` or
``between``; ``measure`` the name (``marginal``, ``conditional``; r2mlm's ``f1, f2, v, m, f, fv,
fvm``); ``split`` the predictors split into a within-person and a between-person part (their
labels, ``; `` between them); ``formula`` the model's; ``status`` ``ok`` or ``failed: <why>``;
``note`` why a decomposition is missing."""

WITHIN_SUFFIX = "_within_person"
"""Suffix of a split predictor's within part (the deviation from the person's mean)."""

MEAN_SUFFIX = "_person_mean"
"""Suffix of a split predictor's between part (the person's mean over the ratings)."""


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


def _status(model: Any) -> str:
    problem = fit_problem(model)
    return "ok" if problem is None else f"{FAILED}: {problem}"


def _r2(model: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CentringWarning)  # the note says it
        return model.r2()


def _measures(result: Any) -> list[tuple[str, str, float]]:
    return [
        (part, name, value)
        for part in ("total", "within", "between")
        for name, value in result.rights_sterba[part].items()
    ]


def empathy_r2(data: EmpathyData, *, lmm: Any, engine: str = "lmm") -> pd.DataFrame:
    """Tabulate the R-squared of the fitted empathy LMM and its split within and between persons.

    Parameters
    ----------
    data : EmpathyData
        The ratings the model was fitted on (:func:`longitudinal.predict.empathy_data`); its
        ``predictors`` labels name the split predictors.
    lmm : models.lmm.LinearMixedModel
        The fitted effects model.
    engine : str, default "lmm"
        The ``engine`` column's value.

    Returns
    -------
    pandas.DataFrame
        :data:`R2_TABLE_COLUMNS`, at full precision: the reported model's Nakagawa rows and
        grouping-factor shares, then the Rights & Sterba measures (of the reported model when
        it is a two-level model of within-person and between-person predictors, else of the
        two-level model described in the module). A singular or unconverged fit keeps its
        numbers with ``status`` ``failed: <why>`` (they are not read).

    Raises
    ------
    longitudinal.InvalidParameterError
        When ``data`` is not an EmpathyData.
    """
    if not isinstance(data, EmpathyData):
        raise InvalidParameterError(
            "the `data` parameter of empathy_r2 must be an EmpathyData (from empathy_data); "
            f"got {type(data).__name__}"
        )
    result = _r2(lmm)
    status = _status(lmm)
    parts = result.variances
    total = parts["fixed"] + sum(parts["random"].values()) + parts["residual"]
    rows = [("reported", "nakagawa", name, value) for name, value in result.nakagawa.items()]
    rows += [
        ("reported", "share", group, value / total)
        for group, value in parts["random"].items()
        if group != data.id_col
    ]
    frame = pd.DataFrame(rows, columns=["model", "decomposition", "measure", "value"])
    frame = frame.assign(split="", formula=lmm.formula, status=status, note="")
    if result.rights_sterba["within"]:
        own = pd.DataFrame(_measures(result), columns=["decomposition", "measure", "value"])
        own = own.assign(model="reported", split="", formula=lmm.formula, status=status, note="")
        frame = pd.concat([frame, own], ignore_index=True)
    else:
        frame = pd.concat([frame, _two_level(data, lmm, status)], ignore_index=True)
    frame.insert(0, "engine", engine)
    frame["n_participants"] = int(lmm.groups_.get(data.id_col, data.data[data.id_col].nunique()))
    frame["n_ratings"] = int(lmm.n_obs_)
    return frame[R2_TABLE_COLUMNS]


def _two_level(data: EmpathyData, lmm: Any, status: str) -> pd.DataFrame:
    """Return the Rights & Sterba rows of the two-level model (or one row saying why not)."""
    columns = ["model", "decomposition", "measure", "value", "split", "formula", "status", "note"]
    fixed = [c for c in lmm.design_.X.columns if c != "Intercept"]
    missing = [c for c in fixed if c not in data.data.columns]
    person = [b for b in lmm.design_.random if b.group == data.id_col]
    if missing or not person:
        why = (
            f"the fixed effects {missing} are not columns of the ratings"
            if missing
            else "the model has no random effect per participant"
        )
        return pd.DataFrame([("two-level", "", "", np.nan, "", "", status, why)], columns=columns)
    frame, terms, split = _split_frame(data, fixed)
    labels = _labels(data, split)
    try:
        model, formula = _fit_two_level(data, frame, terms, split, person)
    except ModelsError as err:  # e.g. the person means of the split predictors are collinear
        why = f"the two-level model could not be fitted ({str(err).rstrip('.')})"
        return pd.DataFrame(
            [("two-level", "", "", np.nan, labels, "", status, why)], columns=columns
        )
    result = _r2(model)
    problem = fit_problem(model)
    if status == "ok" and problem is not None:
        status = f"{FAILED}: {problem}"
    note = _reason(result, [data.id_col])
    rows = [
        ("two-level", part, name, value, labels, formula, status, note)
        for part, name, value in _measures(result)
    ]
    if not rows:
        rows = [("two-level", "", "", np.nan, labels, formula, status, note)]
    return pd.DataFrame(rows, columns=columns)


def _split_frame(data: EmpathyData, fixed: list[str]) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Split each predictor that varies both within and between persons into two.

    Returns the frame, the fixed terms of the two-level model and the predictors split.
    """
    from models.lmm import cluster_levels

    frame = data.data.copy()
    kinds = cluster_levels(frame, columns=fixed, cluster=data.id_col)
    terms: list[str] = []
    split: list[str] = []
    for column in fixed:
        if kinds[column] != "both":
            terms.append(column)
            continue
        mean = frame.groupby(data.id_col, sort=False)[column].transform("mean")
        frame[column + WITHIN_SUFFIX] = frame[column] - mean
        terms.append(column + WITHIN_SUFFIX)
        scale = float(np.max(np.abs(frame[column])))
        if float(np.ptp(mean)) > 1e-9 * scale:  # a constant person mean repeats the intercept
            frame[column + MEAN_SUFFIX] = mean
            terms.append(column + MEAN_SUFFIX)
        split.append(column)
    return frame, terms, split


def _fit_two_level(
    data: EmpathyData, frame: pd.DataFrame, terms: list[str], split: list[str], person: list[Any]
) -> tuple[Any, str]:
    """Fit the two-level model; a singular or unconverged one with slopes loses its slopes.

    The participant's random effects are the reported model's, a slope on a split predictor
    moved to its within part; when that fit fails its checks and has slopes, the model with a
    random intercept per participant is fitted instead (as the reported model is stepped down).
    """
    from models.formula import formula_name
    from models.lmm import LinearMixedModel

    group = formula_name(data.id_col)
    fixed = " + ".join([formula_name(t) for t in terms] or ["1"])

    def random(block: Any) -> str:
        slopes = [formula_name(t + WITHIN_SUFFIX if t in split else t) for t in block.terms[1:]]
        first = "1" if block.terms[0] == "Intercept" else f"0 + {formula_name(block.terms[0])}"
        return f"({' + '.join([first, *slopes])} | {group})"

    formula = f"{formula_name(data.response_col)} ~ {fixed} + " + " + ".join(map(random, person))
    simpler = f"{formula_name(data.response_col)} ~ {fixed} + (1 | {group})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its checks are read from the fit: the status says
        model = LinearMixedModel(formula, reml=True).fit(frame)
        if fit_problem(model) is not None and formula != simpler:
            formula = simpler
            model = LinearMixedModel(formula, reml=True).fit(frame)
    return model, formula


def _labels(data: EmpathyData, split: list[str]) -> str:
    """Name the split predictors by their labels (a part named where the predictor has one)."""
    table = data.predictors.set_index("predictor") if "predictor" in data.predictors else None
    out = []
    for column in split:
        if table is None or column not in table.index:
            out.append(column)
            continue
        label = str(table.at[column, "label"]) if "label" in table else column
        part = str(table.at[column, "part"]) if "part" in table else ""
        out.append(f"the {part}-person part of {label}" if part in ("within", "between") else label)
    return "; ".join(out)
