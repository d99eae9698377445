"""The smooth course of the mean rating over the study, for the "Empathy ratings" section.

The model is ``rating ~ s(week, k=K) + (1 | participant) [+ (1 | story)]``, fitted as gamm4
fits it (:class:`models.lmm.LinearMixedModel`), beside the straight line ``rating ~ week +
(same random effects)``. ``week`` is the time the section draws (days since the participant's
first session / 7). The rules, stated once here and in the section's text:

* ``K`` is the number of distinct time values, at most :data:`MAX_K` (mgcv's default); with
  fewer than :data:`MIN_TIMES` distinct values no curve is fitted and the section says why;
* the story intercept is in the model when stories repeat (as in the empathy models) and is
  left out, with a note, when its variance is estimated at zero;
* whether the data show a curve is the restricted likelihood-ratio test of the smooth's
  variance (:meth:`~models.lmm.LinearMixedModel.smooth_linearity_test`, simulated with
  :data:`SEED`) at ``1 - ci_level``; a smooth whose variance is estimated at zero is the
  straight line (edf 1), a finding and not a failure;
* a fit that did not converge, or whose participant (or story) variance is at zero, is flagged
  and its course not narrated (:func:`longitudinal.narrate.gates.fit_problem`'s rule on the
  random effects other than the smooth's); up to
  :data:`~longitudinal.narrate.gates.SMALL_SAMPLE` participants the sentence carries the
  small-sample caveat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from longitudinal.narrate.gates import NOT_CONVERGED, small_sample_caveat
from longitudinal.narrate.numbers import num, p_text
from models import ModelsError

MIN_TIMES = 4
"""Fewer distinct time values than this: no smooth is fitted (a thin plate smooth of ``k``
basis functions needs ``k`` distinct values, and ``k = 3`` leaves one curved direction)."""

MAX_K = 10
"""The largest basis dimension of the smooth (mgcv's default ``k``)."""

SEED = 1
"""Seed of the simulated null distribution of the curvature test (a report is reproducible)."""

ZERO_SD = 1e-4
"""A random-effect SD below this fraction of the residual SD is a variance at zero (lme4's
rule for a singular fit)."""

GRID = 101
"""Points of the curve written to ``empathy_smooth_curve.csv`` and drawn."""

TABLE_COLUMNS = (
    "term",
    "k",
    "edf",
    "ref_df",
    "F",
    "p_value",
    "linearity_statistic",
    "linearity_p_value",
    "slope",
    "slope_ci_low",
    "slope_ci_high",
    "n_obs",
    "n_participants",
    "formula",
    "status",
)
"""Columns of ``tables/empathy_smooth.csv`` (one row; ``status`` says why a row is empty)."""


@dataclass
class SmoothCourse:
    """What the section shows of the smooth course: the sentence, the tables, the models."""

    sentence: str
    table: pd.DataFrame
    curve: pd.DataFrame = field(default_factory=pd.DataFrame)
    line: pd.DataFrame = field(default_factory=pd.DataFrame)
    notes: list[str] = field(default_factory=list)
    narrated: bool = False


def _empty(status: str, sentence: str, **values: Any) -> SmoothCourse:
    row = {c: values.get(c) for c in TABLE_COLUMNS}
    row["status"] = status
    return SmoothCourse(sentence=sentence, table=pd.DataFrame([row], columns=list(TABLE_COLUMNS)))


def _problem(model: Any) -> str | None:
    """Why the model's course must not be read: not converged, or a non-smooth variance at 0."""
    if not model.converged_:
        return NOT_CONVERGED
    table = model.random_
    residual_sd = float(table["sd"].iloc[-1])
    groups = table[~table["group"].isin(["smooth", "Residual"])]
    if np.any(groups["sd"].to_numpy(dtype=float) < ZERO_SD * residual_sd):
        return "its fit is singular (a variance estimated at zero)"
    return None


def smooth_course(
    story: pd.DataFrame,
    *,
    rating_col: str,
    id_col: str,
    ci_level: float,
    rating_name: str,
    max_participants: int | None = None,
    seed: int = SEED,
) -> SmoothCourse:
    """Fit the smooth and the straight course of the ratings and say whether they differ.

    ``max_participants`` (the report's ``--lean``): above it, both models are fitted to the
    ratings of a random subsample of that many participants (drawn with ``seed``), said in
    a note.
    """
    frame = story[[rating_col, id_col, "story_id", "week"]].dropna()
    frame = frame.assign(**{id_col: frame[id_col].astype(str)})
    notes: list[str] = []
    people = np.sort(frame[id_col].unique())
    if max_participants is not None and len(people) > max_participants:
        chosen = np.random.default_rng(seed).choice(people, size=max_participants, replace=False)
        kept = frame[frame[id_col].isin(chosen)]
        notes.append(
            f"The smooth course is fitted on a random subsample of {max_participants:,} of the "
            f"{len(people):,} participants with ratings ({len(kept):,} of {len(frame):,} "
            f"ratings; seed {seed}; --lean)."
        )
        frame = kept
    out = _course(
        frame, rating_col=rating_col, id_col=id_col, ci_level=ci_level, rating_name=rating_name
    )
    out.notes = notes + out.notes
    return out


def _course(
    frame: pd.DataFrame, *, rating_col: str, id_col: str, ci_level: float, rating_name: str
) -> SmoothCourse:
    """:func:`smooth_course` on the rows it fits."""
    import warnings

    from models.formula import formula_name
    from models.lmm import LinearMixedModel

    notes: list[str] = []
    n_times = int(frame["week"].nunique())
    n_people = int(frame[id_col].nunique())
    if n_times < MIN_TIMES:
        return _empty(
            f"not fitted: {n_times} distinct days",
            f"No smooth course is fitted: the ratings fall on {n_times} distinct "
            f"day{'s' if n_times != 1 else ''} of the study, and a curve needs at least "
            f"{MIN_TIMES}.",
            n_obs=len(frame),
            n_participants=n_people,
        )
    k = min(MAX_K, n_times)
    y, person = formula_name(rating_col), formula_name(id_col)
    stories = frame["story_id"].nunique() < len(frame)

    def fit(with_story: bool) -> tuple[Any, Any, str]:
        random = f"(1 | {person})" + (" + (1 | story_id)" if with_story else "")
        formula = f"{y} ~ s(week, k={k}) + {random}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a zero variance is read below, not warned about
            smooth = LinearMixedModel(formula, ci_level=ci_level).fit(frame)
            line = LinearMixedModel(f"{y} ~ week + {random}", ci_level=ci_level).fit(frame)
            _ = line.fixed_  # its df are computed on first access, warnings and all
        return smooth, line, formula

    try:
        model, line_model, formula = fit(stories)
        if stories and _problem(model) and _problem(fit(False)[0]) is None:
            model, line_model, formula = fit(False)
            notes.append(
                "The story intercept of the smooth course model was estimated at (or near) "
                "zero; that model leaves it out."
            )
        test = model.smooth_linearity_test(seed=SEED) if model.converged_ else None
    except ModelsError as err:
        return _empty(
            f"failed: {err}",
            f"The smooth course could not be fitted ({err}); it is not described.",
            k=k,
            n_obs=len(frame),
            n_participants=n_people,
        )
    row = model.smooth_table_.iloc[0]
    slope = line_model.fixed_.set_index("term").loc["week"]
    values = {
        "term": row["term"],
        "k": k,
        "edf": row["edf"],
        "ref_df": row["ref_df"],
        "F": row["F"],
        "p_value": row["p_value"],
        "linearity_statistic": None if test is None else test.statistic,
        "linearity_p_value": None if test is None else test.p_value,
        "slope": slope["estimate"],
        "slope_ci_low": slope["ci_low"],
        "slope_ci_high": slope["ci_high"],
        "n_obs": model.n_obs_,
        "n_participants": n_people,
        "formula": formula,
    }
    grid = np.linspace(frame["week"].min(), frame["week"].max(), GRID)
    curve = model.smooth_.curve(grid, level=ci_level).rename(columns={"x": "week"})
    intercept = line_model.beta_["Intercept"]
    line = pd.DataFrame({"week": grid, "fit": intercept + slope["estimate"] * grid})
    why = _problem(model)
    if why is not None:
        out = _empty(
            f"failed: {why}",
            f"The smooth course model ({formula}) failed its checks ({why}): whether the "
            "ratings follow a curve is not read from it.",
            **values,
        )
        out.curve, out.line, out.notes = curve, line, notes
        return out
    alpha = 1.0 - ci_level
    stats = (
        f"edf {num(row['edf'])}; curvature test: restricted likelihood ratio "
        f"{num(test.statistic)}, {p_text(test.p_value)}"
    )
    if test.p_value < alpha:
        sentence = (
            f"The mean {rating_name} rating follows a curve over the study rather than a "
            f"straight line ({stats})."
        )
    else:
        sentence = (
            f"The data show no clear curve in the mean {rating_name} rating over the study: "
            f"a straight line describes its course as well ({stats})."
        )
    sentence += small_sample_caveat(n_people, what="these estimates are")
    table = pd.DataFrame([{**values, "status": "ok"}], columns=list(TABLE_COLUMNS))
    return SmoothCourse(sentence, table, curve, line, notes, narrated=True)
