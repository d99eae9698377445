"""Which predictors the empathy models test: the study's choice, within a person-level budget.

The rule
--------
A mixed model of the ratings estimates a person-level effect from as many independent units as
there are participants, so the models take at most one person-level predictor per
:data:`PEOPLE_PER_PREDICTOR` participants (the budget). The candidates are taken in priority
order: the ``[roles] predictors`` list of study.toml or the ``--predictors`` option when given,
otherwise the study's traits, then its states, then its session features, each in study.toml
order. Spending:

* a trait scale costs one unit of the budget;
* a state scale enters with its between-person part (the person's mean over the waves) and its
  within-person part (the wave's deviation from that mean), and costs one unit: the between part
  is person-level, and a state measured at a few waves has few within-person observations;
* a session feature enters its within-person part (the session's deviation from the person's
  mean) at no cost, since it is estimated from the sessions within each person; its
  between-person part (the person's mean) costs one unit, and is left out when none is left.

The budget counts the participants the models are actually fitted on: those with at least one
rating whose predictors are all present (listwise deletion), not everyone with ratings. A
candidate enters only if, with it, the budget of the participants who remain still holds; a
candidate missing for many people can thus be left out because it would shrink the sample below
what the predictors already chosen need (its reason names the count). A candidate that finds no
budget left is listed as left out with the reason; nothing is skipped without a line in
:attr:`PredictorPlan.left_out`.

Written here because no library states such a rule; the one-per-10 figure is the usual
events-per-variable heuristic applied to participants.

The out-of-person benchmark takes the named predictors without a budget; its ratings are built
here too (``_benchmark_data``), for ``evaluate`` (:mod:`longitudinal.predict.benchmark`) and
``splits`` (:func:`participant_splits`, drawn by :mod:`longitudinal.predict.splits`) alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from _empathic_base.words import caller
from longitudinal._errors import InvalidParameterError
from longitudinal.predict.common import check_study
from longitudinal.predict.left_out import left_out_summary
from longitudinal.predict.predictors import (
    EmpathyData,
    _dedupe_scales,
    _Raw,
    _raw_predictors,
    _standardize,
)
from longitudinal.predict.splits import SPLIT_SIZES, draw_splits, seed_list, splits_table
from longitudinal.study.frames import scale_column

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.study.loaded import Study

__all__ = [
    "PEOPLE_PER_PREDICTOR",
    "PredictorPlan",
    "parse_predictor_list",
    "participant_splits",
    "plan_left_out",
    "plan_predictors",
    "resolve_predictors",
]

PEOPLE_PER_PREDICTOR = 10
"""One person-level predictor per this many participants with ratings."""


@dataclass(frozen=True)
class PredictorPlan:
    """The predictors of the empathy models and how the person-level budget was spent.

    Attributes
    ----------
    n_participants : int
        Participants the models are fitted on: with at least one rating whose chosen
        predictors are all present (listwise deletion).
    budget : int
        ``n_participants // PEOPLE_PER_PREDICTOR`` person-level predictors.
    source : str
        Where the priority order came from: ``"default"`` (traits, states, session features in
        study.toml order), ``"study.toml"`` (``[roles] predictors``) or ``"--predictors"``.
    requested : tuple of str
        The names as given (empty for the default rule).
    traits, states : tuple of str
        Score columns that enter (a state with both parts).
    session_features : tuple of str
        Session features whose within-person part enters.
    session_between : tuple of str
        Session features whose between-person part enters too.
    spent : tuple of str
        What used the budget, in order (a feature as ``"turns (between-person part)"``).
    left_out : tuple of (str, str)
        ``(name, reason)`` for every candidate or part that does not enter.
    n_rated : int or None
        Participants with ratings (before listwise deletion); ``n_participants`` when None.
    """

    n_participants: int
    budget: int
    source: str
    requested: tuple[str, ...]
    traits: tuple[str, ...]
    states: tuple[str, ...]
    session_features: tuple[str, ...]
    session_between: tuple[str, ...]
    spent: tuple[str, ...]
    left_out: tuple[tuple[str, str], ...]
    n_rated: int | None = None

    @property
    def empty(self) -> bool:
        """Whether no predictor enters at all."""
        return not (self.traits or self.states or self.session_features)

    def data_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :func:`longitudinal.predict.empathy_data` for this plan."""
        return {
            "traits": list(self.traits),
            "states": list(self.states),
            "session_features": list(self.session_features),
            "session_between": list(self.session_between),
        }

    @property
    def order_text(self) -> str:
        """Where the order came from, in words."""
        return {
            "default": "in study.toml order (traits, then states, then session features)",
            "study.toml": "in the priority order of study.toml's [roles] predictors",
            "--predictors": "in the priority order given by --predictors",
        }[self.source]

    def sentence(self) -> str:
        """Say how the budget was spent and what was left out, for the methods text."""
        text = (
            f"The empathy models took at most one person-level predictor per "
            f"{PEOPLE_PER_PREDICTOR} participants ({self.people_text}, so "
            f"{self.budget}), {self.order_text}; a trait or a state (with its between- and "
            "within-person parts) used one, and a session feature entered its within-person "
            "part without using one and its between-person part only when one was left. "
        )
        text += (
            "Used: " + ", ".join(self.spent) + "."
            if self.spent
            else "No person-level predictor was used."
        )
        free = [f for f in self.session_features if f not in self.session_between]
        if free:
            text += " Within-person part only: " + ", ".join(free) + "."
        if self.left_out:
            text += " Left out: " + self.left_out_text() + "."
        return text

    @property
    def people_text(self) -> str:
        """The fitted participants in words, with those lost to missing predictors."""
        text = f"{self.n_participants} with complete data on the chosen predictors"
        lost = (self.n_rated or self.n_participants) - self.n_participants
        if lost:
            text += f" of {self.n_rated} with ratings"
        return text

    @property
    def fitted_text(self) -> str:
        """The fitted participants in words, with those lost to missing predictors."""
        noun = "participant" if self.n_participants == 1 else "participants"
        text = f"{self.n_participants} {noun} with complete data on the chosen predictors"
        lost = (self.n_rated or self.n_participants) - self.n_participants
        return text + (f" (of {self.n_rated} with ratings)" if lost else "")

    def left_out_text(self) -> str:
        """Return the left-out candidates grouped by reason: ``"a, b (why); c (why)"``."""
        groups: dict[str, list[str]] = {}
        for name, why in self.left_out:
            groups.setdefault(why, []).append(name)
        return "; ".join(f"{', '.join(names)} ({why})" for why, names in groups.items())


def parse_predictor_list(text: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """Split ``--predictors`` values (comma- or space-separated, repeatable) into names."""
    if text is None:
        return None
    items = [text] if isinstance(text, str) else list(text)
    names = [n.strip() for item in items for n in str(item).replace(",", " ").split()]
    names = [n for n in names if n]
    return tuple(dict.fromkeys(names)) or None


def _candidates(study: Study) -> dict[str, Any]:
    """Every name a predictor list may use, mapped to what it stands for."""
    trait_scales = _dedupe_scales(study, study.trait_instruments)
    state_scales = _dedupe_scales(study, study.state_instruments)
    role_of: dict[str, tuple[str, list[str]]] = {}  # name -> (kind, score columns)
    for kind, names in (("trait", study.trait_instruments), ("state", study.state_instruments)):
        for entry, name in zip(
            study.config.traits if kind == "trait" else study.config.states, names, strict=True
        ):
            inst = study.instruments[name]
            kept = [
                c for c, i, _ in (trait_scales if kind == "trait" else state_scales) if i == name
            ]
            for key in (name, entry):
                role_of.setdefault(key, (kind, kept))
            for scale in inst.scales:
                role_of.setdefault(
                    scale_column(name, scale.name), (kind, [scale_column(name, scale.name)])
                )
    return {
        "traits": [c for c, _, _ in trait_scales],
        "states": [c for c, _, _ in state_scales],
        "features": list(study.session_features),
        "numeric": list(study.numeric_session_columns or study.session_features),
        "role_of": role_of,
    }


def _where(source: str | None) -> str:
    return "study.toml [roles] predictors" if source == "study.toml" else (source or "--predictors")


def _resolve(
    found: dict[str, Any], names: Sequence[str], *, where: str, func: str
) -> list[tuple[str, str]]:
    """``(kind, column)`` for each name, in order; an unknown name is refused."""
    order: list[tuple[str, str]] = []
    unknown = []
    for name in names:
        if name in found["role_of"]:
            kind, columns = found["role_of"][name]
            order.extend((kind, c) for c in columns)
        elif name in found["numeric"]:
            order.append(("session", name))
        else:
            unknown.append(name)
    if unknown:
        available = list(found["traits"]) + list(found["states"]) + list(found["numeric"])
        raise InvalidParameterError(
            f"{func}: {where} names {', '.join(repr(u) for u in unknown)}, which is neither "
            "a trait or state scale (or instrument) of the study nor a numeric column of "
            f"sessions.csv; available: {', '.join(available)}"
        )
    return list(dict.fromkeys(order))


def resolve_predictors(
    study: Study,
    predictors: Sequence[str] | None = None,
    *,
    source: str | None = None,
    func: str = "resolve_predictors",
) -> dict[str, list[str]] | None:
    """Turn a predictor list into score columns and features, with no budget applied.

    For the prediction benchmark, which tests prediction rather than effects: every named
    predictor enters (a state and a session feature with both parts). ``predictors`` default:
    ``[roles] predictors`` of study.toml; returns None when neither is given (the benchmark
    then uses every trait, state and session feature).

    Returns
    -------
    dict or None
        ``{"traits": [...], "states": [...], "session_features": [...]}``, keyword arguments
        of :func:`longitudinal.predict.empathy_data`.
    """
    if predictors is None and study.config.predictors is not None:
        predictors, source = study.config.predictors, "study.toml"
    if predictors is None:
        return None
    order = _resolve(_candidates(study), predictors, where=_where(source), func=func)
    return {
        "traits": [c for k, c in order if k == "trait"],
        "states": [c for k, c in order if k == "state"],
        "session_features": [c for k, c in order if k == "session"],
    }


def plan_predictors(
    study: Study,
    predictors: Sequence[str] | None = None,
    *,
    source: str | None = None,
    n_participants: int | None = None,
    func: str = "plan_predictors",
) -> PredictorPlan:
    """Choose the empathy models' predictors within the person-level budget.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study.
    predictors : sequence of str, optional
        Names in priority order: a scale's score column (``tipi_agreeableness``), an
        instrument (every scale of it, a rescaled duplicate left out; a custom instrument by
        its ``[instrument] name`` or its key file's entry) or a session feature (a numeric
        column of sessions.csv). Default: ``[roles] predictors`` of study.toml, else the
        default rule (traits, states, session features in study.toml order).
    source : str, optional
        ``"--predictors"`` when ``predictors`` came from the command line (for the text).
    n_participants : int, optional
        Participants with ratings; default counted from the story frame.
    func : str
        Name used in error messages.

    Returns
    -------
    PredictorPlan

    Raises
    ------
    longitudinal.InvalidParameterError
        For a name that is neither a trait or state scale or instrument of the study nor a
        numeric column of sessions.csv (the message lists what is available).
    """
    found = _candidates(study)
    if n_participants is None:
        story = study.story_frame()
        n_participants = int(story[study.config.id_col].nunique())
    n_rated = n_participants
    if predictors is None and study.config.predictors is not None:
        predictors, source = study.config.predictors, "study.toml"
    if predictors is None:
        source = "default"
        order = (
            [("trait", c) for c in found["traits"]]
            + [("state", c) for c in found["states"]]
            + [("session", f) for f in found["features"]]
        )
        requested: tuple[str, ...] = ()
    else:
        source = source or "--predictors"
        requested = tuple(predictors)
        order = _resolve(found, requested, where=_where(source), func=func)
    traits: list[str] = []
    states: list[str] = []
    features: list[str] = []
    between: list[str] = []
    spent: list[str] = []
    left_out: list[tuple[str, str]] = []
    complete = _Complete(study, order, n_rated=n_rated, func=func)
    # Session features enter their within-person part whatever the budget: their missing
    # sessions are deleted first, and the budget counts who remains.
    chosen = [("session", f) for kind, f in order if kind == "session"]
    n_fit = complete.people(chosen)
    for kind, name in order:
        parts = [] if kind == "session" else [(kind, name)]
        n_with = complete.people(chosen + parts)
        fits = len(spent) + 1 <= n_with // PEOPLE_PER_PREDICTOR
        label = f"{name} (between-person part)" if kind == "session" else name
        if kind == "session":
            features.append(name)
        if fits:
            if kind == "session":
                between.append(name)
            else:
                (traits if kind == "trait" else states).append(name)
            chosen += parts
            spent.append(label)
            n_fit = n_with
        elif len(spent) + 1 <= n_fit // PEOPLE_PER_PREDICTOR:
            left_out.append(
                (
                    label,
                    f"with it {n_with} participants have complete data, which allow "
                    f"{n_with // PEOPLE_PER_PREDICTOR} person-level predictor(s), fewer than "
                    f"the {len(spent) + 1} it would make",
                )
            )
        else:
            left_out.append((label, f"no person-level predictor left for {n_fit} participants"))
    if source != "default":
        chosen = {c for _, c in order}
        for name in found["traits"] + found["states"] + found["features"]:
            if name not in chosen:
                left_out.append((name, "not among the chosen predictors"))
    return PredictorPlan(
        n_participants=n_fit,
        budget=n_fit // PEOPLE_PER_PREDICTOR,
        source=source,
        requested=requested,
        traits=tuple(traits),
        states=tuple(states),
        session_features=tuple(features),
        session_between=tuple(between),
        spent=tuple(spent),
        left_out=tuple(left_out),
        n_rated=n_rated,
    )


class _Complete:
    """Count the participants with a complete rating for a set of candidate predictors.

    A rating is complete when the rating, the week and every named predictor are present (a
    trait score at the first wave, a state at the wave before the rating with its person mean,
    a session feature of the session). ``n_rated`` (participants with ratings, possibly given
    by the caller) minus the participants lost to missing predictors is the count.
    """

    def __init__(self, study: Study, order: Sequence[tuple[str, str]], *, n_rated: int, func: str):
        self.n_rated = n_rated
        self.present: dict[tuple[str, str], Any] = {}
        if not order:
            self.rows = None
            return
        raw = _raw_predictors(
            study,
            traits=[n for k, n in order if k == "trait"],
            states=[n for k, n in order if k == "state"],
            session_features=[n for k, n in order if k == "session"],
            func=func,
        )
        rows = raw.rows
        self.ids = rows[raw.id_col]
        self.rows = rows[raw.response_col].notna() & rows["week"].notna()
        self.rated = int(self.ids.nunique())
        for kind, name in order:
            ok = rows[name].notna()
            if kind == "state":
                ok &= self.ids.map(raw.persons[f"{name}__mean"]).notna()
            self.present[(kind, name)] = ok

    def people(self, parts: Sequence[tuple[str, str]]) -> int:
        """Participants with at least one complete rating for these candidates."""
        if self.rows is None:
            return self.n_rated
        keep = self.rows.copy()
        for part in parts:
            keep &= self.present[part]
        lost = self.rated - int(self.ids[keep].nunique())
        return max(self.n_rated - lost, 0)


def _benchmark_data(
    study: Study,
    *,
    session_features: Sequence[str] | None,
    func: str,
    predictors: Sequence[str] | None = None,
) -> tuple[_Raw, EmpathyData]:
    """Build the benchmark's ratings: raw predictors, and the frame standardized over all.

    Its rows are the ratings the benchmark scores and its participants the ones that
    :func:`longitudinal.predict.splits.draw_splits` splits (for ``evaluate`` and ``splits`` alike).
    ``predictors`` (default: study.toml's ``[roles] predictors``) restricts the traits, states
    and session features to those named (:func:`resolve_predictors`); no budget applies to a
    benchmark of prediction.
    """
    chosen = resolve_predictors(
        study,
        predictors,
        source=None if predictors is None else "--predictors",
        func=func,
    )
    traits = states = None
    if chosen is not None:
        traits, states = chosen["traits"], chosen["states"]
        if session_features is None:
            session_features = chosen["session_features"]
    raw = _raw_predictors(
        study, traits=traits, states=states, session_features=session_features, func=func
    )
    return raw, _standardize(raw, None, func=func)


def participant_splits(
    study: Study,
    *,
    seeds: int | Sequence[int] = 5,
    k: int = 5,
    sizes: tuple[float, float, float] = SPLIT_SIZES,
    session_features: Sequence[str] | None = None,
    predictors: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Export the benchmark's participant splits of a study, to train a model elsewhere.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study (:func:`longitudinal.study.loaded.load_study`).
    seeds : int or sequence of int, default 5
        Split seeds; an int ``n`` means ``0, ..., n - 1`` (as ``longitudinal evaluate
        --seeds n``).
    k : int, default 5
        Folds of the grouped K-fold (0: none), as ``evaluate``'s ``k``.
    sizes : tuple of 3 floats, default (0.7, 0.2, 0.1)
        Train, validation and test shares of the holdout split.
    session_features : sequence of str, optional
        As in :func:`longitudinal.predict.evaluate_predictions`: they decide which ratings
        are complete, hence which participants take part.
    predictors : sequence of str, optional
        As in :func:`longitudinal.predict.evaluate_predictions` (default study.toml's
        ``[roles] predictors``): a participant whose named predictor is missing is left out.

    Returns
    -------
    pandas.DataFrame
        ``scheme, seed, {participant column}, split``
        (see :func:`longitudinal.predict.splits.splits_table`), the
        participant column under the study's own name. ``attrs["n_ratings"]`` counts the
        ratings split and ``attrs["left_out"]`` names every participant and counts every
        rating left out, with the reason
        (:func:`longitudinal.predict.left_out.left_out_summary`).

    Raises
    ------
    longitudinal.InvalidParameterError
        For bad options or too few participants.

    Notes
    -----
    The splits are those of :func:`longitudinal.predict.evaluate_predictions` with the same
    ``seeds``, ``k``, ``sizes`` and ``session_features``: both draw them with
    :func:`longitudinal.predict.splits.draw_splits` over the participant ids of the
    benchmark's ratings.

    Examples
    --------
    >>> from longitudinal.predict.selection import participant_splits
    >>> from longitudinal.study.loaded import load_study
    >>> table = participant_splits(load_study("my-study"), seeds=2)  # doctest: +SKIP
    """
    func = "participant_splits"
    check_study(study, func=func)
    raw, data = _benchmark_data(  # a refusal names the command on the command line
        study, session_features=session_features, predictors=predictors, func=caller(func)
    )
    groups = data.data[data.id_col].to_numpy(dtype=object)
    plan = draw_splits(groups, seeds=seed_list(seeds, func=func), k=k, sizes=sizes)
    table = splits_table(groups, plan, id_col=study.config.id_col)
    table.attrs["n_ratings"] = int(len(groups))
    table.attrs["left_out"] = left_out_summary(study, raw, data)
    return table


def plan_left_out(study: Study, plan: PredictorPlan, *, func: str) -> dict[str, Any]:
    """Name every participant and count every rating that the plan's models leave out.

    The ratings are those of the empathy models with the plan's traits, states and session
    features; the result is :func:`longitudinal.predict.left_out.left_out_summary` of them
    (written out in lines by :func:`longitudinal.predict.results.left_out_lines`). ``func``
    names the caller in an error message.
    """
    raw = _raw_predictors(
        study,
        traits=list(plan.traits),
        states=list(plan.states),
        session_features=list(plan.session_features),
        func=func,
    )
    return left_out_summary(study, raw, _standardize(raw, None, func=func))
