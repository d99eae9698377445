"""Generalizability (G) and decision (D) studies of ratings: stories in sessions of participants.

:func:`g_study` estimates the variance components of a rating design with three facets,
participant ``p``, session within participant ``s:p`` and story ``i``, by REML with
:class:`models.lmm.LinearMixedModel`:

* **crossed** stories (the same story is rated by two or more participants):
  ``y ~ 1 + (1 | participant) + (1 | participant:session) + (1 | story)``; the residual holds
  the participant x story and story x session interactions and error, which one rating per
  cell cannot separate;
* **nested** stories (no story is rated by two participants):
  ``y ~ 1 + (1 | participant) + (1 | participant:session)``; a story's own effect cannot be
  told from error, so the residual holds it.

From the components it gives the G coefficient of a participant's mean rating over ``n_s``
sessions with ``n_i`` stories each, for a design in which every session brings new stories
(as a study that retrieves stories afresh for each session does), so the story variance is
part of the error of a participant's mean (Brennan 2001, *Generalizability Theory*, ch. 4,
design ``(i:s):p``; relative and absolute error coincide in it)::

    error = var(s:p) / n_s + (var(story) + var(residual)) / (n_s n_i)
    G     = var(p) / (var(p) + error)

and the same coefficient over a grid of ``n_s`` x ``n_i`` (the D study).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from _empathic_base.results import Result
from models._checks import check_choice
from models._errors import ConvergenceWarning, InvalidParameterError, SingularFitWarning
from models._version import __version__

__all__ = ["GStudy", "d_study", "g_coefficient", "g_study"]

COMPONENTS = ("participant", "session:participant", "story", "residual")
"""Names of the variance components, in the order of :attr:`GStudy.components`."""

GOOD_ENOUGH = 0.70
"""The conventional lowest acceptable reliability; coefficients below it are flagged."""

FLAG_LOW = "below .70"
"""The flag of a coefficient below :data:`GOOD_ENOUGH`."""

MIN_PARTICIPANTS_PRECISE = 20
"""Below this many participants the variance components (and G) are called imprecise."""

D_STORIES = tuple(range(1, 11))
"""Stories per session of the default D study."""

ROUND_SESSIONS = (5, 10, 20)
"""Round numbers of sessions added to the observed ones in the default D study."""

_FUNC = "g_study"


@dataclass(frozen=True, repr=False)
class GStudy(Result):
    """Result of :func:`g_study`: variance components, G as observed, D study.

    Attributes
    ----------
    components : pandas.DataFrame
        ``component, variance, sd, share, n_levels``: ``participant``,
        ``session:participant``, ``story`` (crossed designs only) and ``residual``;
        ``share`` is the fraction of the total variance, ``n_levels`` the number of
        participants, sessions and stories (ratings for the residual).
    observed : pandas.DataFrame
        One row: ``n_participants, n_sessions, n_stories, n_ratings, error_variance, g,
        flag``, where ``n_sessions`` is the harmonic mean of rated sessions per participant
        and ``n_stories`` the harmonic mean of ratings per session; ``flag`` is
        ``"below .70"`` when ``g`` is below :data:`GOOD_ENOUGH`.
    d_study : pandas.DataFrame
        ``n_sessions, n_stories, error_variance, g, flag``, one row per combination.
    design : str
        ``"crossed"`` or ``"nested"`` (see the module docstring).
    converged : bool
        Whether the REML fit converged.
    singular : bool
        Whether a variance component was estimated at zero (lme4's ``isSingular``).
    notes : tuple of str
        What limits the result: a singular or unconverged fit, few participants, the nested
        design's confounding, rows dropped for a missing rating.
    meta : dict
        Package version, parameters, column names, rows used and dropped.

    Notes
    -----
    Validated against ``lme4::lmer`` 1.1-31 (REML) variance components
    (``tests/longitudinal/reference/generalizability.R``) and against simulations with
    known components.
    """

    components: pd.DataFrame
    observed: pd.DataFrame
    d_study: pd.DataFrame
    design: str
    converged: bool
    singular: bool
    notes: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def g(self) -> float:
        """The G coefficient of a participant's mean rating as observed."""
        return float(self.observed["g"].iloc[0])

    @property
    def n_participants(self) -> int:
        """Participants rated."""
        return int(self.observed["n_participants"].iloc[0])

    @property
    def precise(self) -> bool:
        """Whether the fit is regular and rests on :data:`MIN_PARTICIPANTS_PRECISE` or more."""
        return (
            self.converged and not self.singular and self.n_participants >= MIN_PARTICIPANTS_PRECISE
        )

    def _title(self) -> str:
        row = self.observed.iloc[0]
        return (
            f"GStudy({self.design} stories: G = {self.g:.3f} for {row['n_sessions']:.3g} "
            f"sessions x {row['n_stories']:.3g} stories, {self.n_participants} participants, "
            f"{int(row['n_ratings'])} ratings)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            ("Variance components (REML)", self.components),
            ("G coefficient as observed", self.observed),
            ("D study", self.d_study),
        ]

    def _text(self, decimals: int) -> str | None:
        blocks = [self._title()]
        for caption, table in self._parts():
            shown = table.round(decimals) if len(table) else table
            blocks.append(f"{caption}\n{shown.to_string(index=False)}")
        if self.notes:
            blocks.append("Notes\n" + "\n".join(f"- {n}" for n in self.notes))
        return "\n\n".join(blocks)


def g_coefficient(
    components: pd.DataFrame | dict[str, float], *, n_sessions: float, n_stories: float
) -> tuple[float, float]:
    """G coefficient of a participant's mean over ``n_sessions`` of ``n_stories`` stories.

    Parameters
    ----------
    components : pandas.DataFrame or dict
        Variances by component name (:data:`COMPONENTS`; a missing ``story`` counts as 0),
        as :attr:`GStudy.components` (columns ``component, variance``) or a dict.
    n_sessions, n_stories : float
        Sessions per participant and stories per session (harmonic means for unequal
        counts).

    Returns
    -------
    (float, float)
        The error variance of a participant's mean and the coefficient
        ``var(participant) / (var(participant) + error)``.

    Examples
    --------
    >>> from models.generalizability import g_coefficient
    >>> comps = {"participant": 0.5, "session:participant": 0.2, "story": 0.1,
    ...          "residual": 0.8}
    >>> error, g = g_coefficient(comps, n_sessions=8, n_stories=3)
    >>> round(error, 4), round(g, 4)
    (0.0625, 0.8889)
    """
    if isinstance(components, pd.DataFrame):
        var = dict(zip(components["component"], components["variance"], strict=True))
    else:
        var = dict(components)
    needed = [c for c in COMPONENTS if c != "story" and c not in var]
    if needed:
        raise InvalidParameterError(
            "the `components` parameter of g_coefficient must give the variances of "
            f"{list(COMPONENTS)} ('story' may be left out); missing {needed}"
        )
    for name, value in (("n_sessions", n_sessions), ("n_stories", n_stories)):
        if isinstance(value, bool) or not isinstance(value, int | float | np.number):
            bad = True
        else:
            bad = not np.isfinite(value) or value <= 0
        if bad:
            raise InvalidParameterError(
                f"the `{name}` parameter of g_coefficient must be a positive number; got {value!r}"
            )
    within = var.get("story", 0.0) + var["residual"]
    error = var["session:participant"] / n_sessions + within / (n_sessions * n_stories)
    person = var["participant"]
    total = person + error
    g = person / total if total > 0 else float("nan")
    return float(error), float(g)


def d_study(
    components: pd.DataFrame | dict[str, float],
    *,
    n_sessions: Sequence[int | float],
    n_stories: Sequence[int | float] = D_STORIES,
) -> pd.DataFrame:
    """G coefficients over a grid of sessions per participant x stories per session.

    Parameters
    ----------
    components : pandas.DataFrame or dict
        Variances by component name, as :func:`g_coefficient` takes them.
    n_sessions, n_stories : sequence of numbers
        The grid.

    Returns
    -------
    pandas.DataFrame
        ``n_sessions, n_stories, error_variance, g, flag`` (``flag`` is ``"below .70"`` for
        a coefficient below :data:`GOOD_ENOUGH`), sessions varying slowest.
    """
    rows = []
    for n_s in n_sessions:
        for n_i in n_stories:
            error, g = g_coefficient(components, n_sessions=n_s, n_stories=n_i)
            rows.append(
                {
                    "n_sessions": n_s,
                    "n_stories": n_i,
                    "error_variance": error,
                    "g": g,
                    "flag": flag(g),
                }
            )
    return pd.DataFrame(rows, columns=["n_sessions", "n_stories", "error_variance", "g", "flag"])


def flag(value: float) -> str:
    """``"below .70"`` for a reliability under :data:`GOOD_ENOUGH`, ``"undefined"`` for NaN."""
    if value is None or not np.isfinite(value):
        return "undefined"
    return FLAG_LOW if value < GOOD_ENOUGH else ""


def _check_data(data: Any, columns: dict[str, str]) -> None:
    if not isinstance(data, pd.DataFrame):
        raise InvalidParameterError(
            f"the `data` parameter of {_FUNC} must be a pandas DataFrame; got {type(data).__name__}"
        )
    for param, col in columns.items():
        if not isinstance(col, str):
            raise InvalidParameterError(
                f"the `{param}` parameter of {_FUNC} must be a column name (str); got {col!r}"
            )
    missing = [f"{col!r} (`{p}`)" for p, col in columns.items() if col not in data.columns]
    if missing:
        raise InvalidParameterError(
            f"{_FUNC}: the data lack the column(s) {', '.join(missing)}; "
            f"columns present: {list(data.columns)}"
        )
    rating = columns["rating_col"]
    if not pd.api.types.is_numeric_dtype(data[rating]) or pd.api.types.is_bool_dtype(data[rating]):
        raise InvalidParameterError(
            f"{_FUNC}: the rating column {rating!r} must be numeric; got dtype "
            f"{data[rating].dtype} (convert it explicitly; nothing is coerced)"
        )
    problems = []
    for param in ("id_col", "session_col", "story_col"):
        col = columns[param]
        n_missing = int(data[col].isna().sum())
        if n_missing:
            rows = list(data.index[data[col].isna()][:10])
            problems.append(f"{n_missing} missing value(s) in {col!r} (rows {rows})")
    if problems:
        raise InvalidParameterError(
            f"{_FUNC}: every rating needs a participant, a session and a story: "
            + "; ".join(problems)
        )


def g_study(
    data: pd.DataFrame,
    *,
    id_col: str,
    session_col: str,
    story_col: str,
    rating_col: str,
    d_sessions: Sequence[int | float] | None = None,
    d_stories: Sequence[int | float] = D_STORIES,
    design: Literal["auto", "crossed", "nested"] = "auto",
) -> GStudy:
    """Generalizability study of ratings: stories in sessions of participants.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per rating.
    id_col, session_col, story_col, rating_col : str
        Columns of the participant, the session (its labels need only be unique within a
        participant), the story and the numeric rating.
    d_sessions : sequence of numbers, optional
        Sessions per participant of the D study; default the smallest, median (rounded half
        up) and largest observed number per participant and :data:`ROUND_SESSIONS`.
    d_stories : sequence of numbers, default 1 to 10
        Stories per session of the D study.
    design : {"auto", "crossed", "nested"}, default "auto"
        ``"auto"``: crossed when some story is rated by two or more participants (and
        there are two or more stories), else nested. ``"crossed"`` on data where no story
        repeats across participants is refused (the story variance would not be
        identified).

    Returns
    -------
    GStudy
        Components, G as observed (harmonic mean sessions per participant and ratings per
        session) and the D study.

    Raises
    ------
    InvalidParameterError
        Wrong columns, a non-numeric rating column, missing ids, or data that cannot
        identify the components (fewer than 3 participants, nobody with two sessions, no
        session with two ratings, every rating the same).
    ConvergenceError
        When the mixed model cannot be fitted at all.

    Notes
    -----
    Rows with a missing rating are dropped, counted in ``meta["n_dropped"]`` and noted.
    A singular or unconverged fit is not an error: it is stated in ``notes`` and in the
    summary (the fit's own warnings are not re-raised). Fewer than
    :data:`MIN_PARTICIPANTS_PRECISE` participants are noted as imprecise; no interval is
    computed. Validated against ``lme4::lmer`` 1.1-31.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from models.generalizability import g_study
    >>> rng = np.random.default_rng(1)
    >>> rows = [(p, s, rng.integers(20)) for p in range(30) for s in range(6) for _ in range(3)]
    >>> d = pd.DataFrame(rows, columns=["pid", "session", "story"])
    >>> person = rng.normal(0, 0.8, 30)
    >>> d["y"] = person[d["pid"]] + rng.normal(0, 1, len(d))
    >>> res = g_study(d, id_col="pid", session_col="session", story_col="story",
    ...               rating_col="y")
    >>> res.design, list(res.components["component"])
    ('crossed', ['participant', 'session:participant', 'story', 'residual'])
    """
    cols = {
        "id_col": id_col,
        "session_col": session_col,
        "story_col": story_col,
        "rating_col": rating_col,
    }
    _check_data(data, cols)
    check_choice(design, ("auto", "crossed", "nested"), name="design", where=_FUNC)
    frame = pd.DataFrame(
        {
            "y": data[rating_col].astype(float).to_numpy(),
            "participant": data[id_col].astype(str).to_numpy(),
            "session": data[session_col].astype(str).to_numpy(),
            "story": data[story_col].astype(str).to_numpy(),
        }
    )
    keep = frame["y"].notna().to_numpy()
    n_dropped = int((~keep).sum())
    frame = frame.loc[keep].reset_index(drop=True)
    notes: list[str] = []
    if n_dropped:
        notes.append(f"{n_dropped} rating(s) without a value were left out.")

    per_person = frame.groupby("participant")["session"].nunique()
    per_session = frame.groupby(["participant", "session"]).size()
    persons_per_story = frame.groupby("story")["participant"].nunique()
    chosen = _estimable_design(frame, design, per_person, per_session, persons_per_story)
    n_persons = len(per_person)

    formula = "y ~ 1 + (1 | participant) + (1 | participant:session)"
    if chosen == "crossed":
        formula += " + (1 | story)"
    elif len(persons_per_story) < 2:
        notes.append("Every rating is of the same story: there is no story variance.")
    else:
        notes.append(
            "No story is rated by two participants: a story's own effect cannot be told "
            "from error, so the residual variance includes it."
        )
    model = _fit_quietly(formula, frame)
    var, components = _variance_components(model, len(frame))
    total = sum(var.values())

    n_sessions = float(len(per_person) / (1.0 / per_person).sum())
    n_stories = float(len(per_session) / (1.0 / per_session).sum())
    error, g = g_coefficient(var, n_sessions=n_sessions, n_stories=n_stories)
    observed = pd.DataFrame(
        [
            {
                "n_participants": n_persons,
                "n_sessions": n_sessions,
                "n_stories": n_stories,
                "n_ratings": len(frame),
                "error_variance": error,
                "g": g,
                "flag": flag(g),
            }
        ]
    )
    if d_sessions is None:
        counts = per_person.to_numpy()
        median = int(np.floor(np.median(counts) + 0.5))
        d_sessions = sorted({int(counts.min()), median, int(counts.max()), *ROUND_SESSIONS})
    table = d_study(var, n_sessions=list(d_sessions), n_stories=list(d_stories))

    converged = bool(model.converged_)
    singular = bool(model.singular_)
    if not converged:
        notes.append(
            f"The REML fit did not converge ({model.convergence_message_}); the components "
            "and G are not reliable."
        )
    if singular:
        small = components["variance"] <= 1e-8 * max(total, 1e-300)
        zero = list(components.loc[small, "component"])
        notes.append(
            "Singular fit: "
            + (", ".join(zero) if zero else "a component")
            + " variance estimated at zero; the data cannot separate it from the others, "
            "so G is uncertain."
        )
    if n_persons < MIN_PARTICIPANTS_PRECISE:
        notes.append(
            f"Only {n_persons} participants: the participant variance, and so G, is "
            "imprecise (no interval is computed)."
        )
    meta = {
        "package_version": __version__,
        "function": _FUNC,
        "formula": formula,
        "design": chosen,
        "columns": cols,
        "n_used": len(frame),
        "n_dropped": n_dropped,
        "d_sessions": [float(v) for v in d_sessions],
        "d_stories": [float(v) for v in d_stories],
        "estimation": "REML, models.lmm.LinearMixedModel",
    }
    return GStudy(
        components=components,
        observed=observed,
        d_study=table,
        design=chosen,
        converged=converged,
        singular=singular,
        notes=tuple(notes),
        meta=meta,
    )


def _estimable_design(
    frame: pd.DataFrame,
    design: str,
    per_person: pd.Series,
    per_session: pd.Series,
    persons_per_story: pd.Series,
) -> str:
    """Return the design to fit; raise when the data cannot identify its components."""
    # one story for everybody has no story variance: the nested formula fits it
    repeated = bool((persons_per_story >= 2).any()) and len(persons_per_story) >= 2
    chosen = ("crossed" if repeated else "nested") if design == "auto" else design
    n_persons = len(per_person)
    why = []
    if n_persons < 3:
        why.append(f"{n_persons} participant(s) rated (3 or more needed)")
    if not (per_person >= 2).any():
        why.append("no participant has ratings in two or more sessions")
    if chosen == "crossed" and not repeated:
        why.append("no story is rated by two or more participants (use design='nested')")
    if not (per_session >= 2).any():
        why.append("no session has two or more ratings")
    if len(frame) and frame["y"].nunique() < 2:
        why.append(f"every rating is {frame['y'].iloc[0]:g} (no variance to decompose)")
    if why:
        raise InvalidParameterError(
            f"{_FUNC}: the variance components are not estimable from these data: " + "; ".join(why)
        )
    return chosen


def _fit_quietly(formula: str, frame: pd.DataFrame) -> Any:
    """Fit the REML model; a singular or unconverged fit is stated in the notes, not warned."""
    from models.lmm import LinearMixedModel

    model = LinearMixedModel(formula)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SingularFitWarning)
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(frame)
    for w in caught:  # anything but the two fit warnings stated in `notes` is passed on
        if not issubclass(w.category, SingularFitWarning | ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model


def _variance_components(model: Any, n_ratings: int) -> tuple[dict[str, float], pd.DataFrame]:
    """Return each component's variance, and the components table of :class:`GStudy`."""
    groups = {"participant": "participant", "participant:session": "session:participant"}
    groups |= {"story": "story", "Residual": "residual"}
    var = {
        groups[g]: float(v)
        for g, v in zip(model.random_["group"], model.random_["variance"], strict=True)
    }
    levels = {groups[g]: n for g, n in model.groups_.items()} | {"residual": n_ratings}
    total = sum(var.values())
    rows = [
        {
            "component": name,
            "variance": var[name],
            "sd": float(np.sqrt(max(var[name], 0.0))),
            "share": var[name] / total if total > 0 else float("nan"),
            "n_levels": int(levels[name]),
        }
        for name in COMPONENTS
        if name in var
    ]
    columns = ["component", "variance", "sd", "share", "n_levels"]
    return var, pd.DataFrame(rows, columns=columns)
