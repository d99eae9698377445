"""The measurement-invariance ladder of a study's scales: ``surveys`` keys, ``models`` estimates.

:func:`invariance_ladders` tests the ladder (:func:`models.measurement_invariance`) of every
scale of some instruments in a long export (``longitudinal reliability --invariance``), and
:func:`study_invariance` of a loaded study's state scales (the report); a scale without a
ladder gets one row per model with the reason, never numbers.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from _empathic_base.results import Result
from longitudinal._errors import InvalidParameterError
from longitudinal.psychometrics._answers import study_answers
from models.sem import INVARIANCE_CSV_COLUMNS

__all__ = [
    "INVARIANCE_COLUMNS",
    "INVARIANCE_MODELS",
    "INVARIANCE_PARAMS_COLUMNS",
    "ORDINAL_INVARIANCE_MODELS",
    "ORDINAL_RULE_CATEGORIES",
    "InvarianceTables",
    "estimator_for",
    "estimator_rule",
    "invariance_ladders",
    "study_invariance",
]

INVARIANCE_COLUMNS = [*INVARIANCE_CSV_COLUMNS, "sample_flag", "note"]
"""Columns of :attr:`InvarianceTables.invariance` (``invariance.csv``).

Those of :func:`models.invariance_tables`, then ``sample_flag`` (a fitted scale with fewer
complete participants than the rule of thumb, :func:`models.invariance_sample_note`: the
rule's line; empty otherwise) and ``note`` (a model that was not fitted: why, its numbers
empty).
"""

INVARIANCE_MODELS = ("configural", "metric", "scalar", "strict")
"""The models of the ML and MLR ladder, one row each in ``invariance.csv`` (a partial model may
follow)."""

ORDINAL_INVARIANCE_MODELS = ("configural", "thresholds", "metric", "scalar", "strict")
"""The models of the WLSMV ladder, one row each in ``invariance.csv`` (partial models may
follow)."""

ORDINAL_RULE_CATEGORIES = 5
"""The most answer categories for which the ladder of a scale is fitted as ordinal (WLSMV).

Rhemtulla, Brosseau-Liard & Savalei (2012) found categorical least squares (WLSMV) better than
robust ML on items with fewer than five categories and no worse with five; with six and more
robust ML (MLR) treating the answers as continuous is as good, and it keeps full-information
ML for participants who missed a wave, which WLSMV has not.
"""


def estimator_for(instrument: Any) -> str:
    """Return the ladder's estimator for a scale of ``instrument`` by its answer categories.

    ``"WLSMV"`` when the answers are whole numbers with at most
    :data:`ORDINAL_RULE_CATEGORIES` categories (``response_min`` to ``response_max``), else
    ``"MLR"`` (more categories, or a continuous scale such as a slider).
    """
    low, high = float(instrument.response_min), float(instrument.response_max)
    whole = low.is_integer() and high.is_integer()
    return "WLSMV" if whole and high - low + 1 <= ORDINAL_RULE_CATEGORIES else "MLR"


def estimator_rule(chosen: str) -> str:
    """Say, for a methods section, how the ladders' estimator was chosen.

    ``chosen`` is the ``estimator`` given to :func:`study_invariance`.
    """
    if chosen == "auto":
        return (
            f"WLSMV for scales answered on at most {ORDINAL_RULE_CATEGORIES} categories and MLR "
            "for more (Rhemtulla, Brosseau-Liard & Savalei 2012)"
        )
    return f"{chosen} for every scale, as asked (--estimator)"


INVARIANCE_PARAMS_COLUMNS = [
    "instrument",
    "scale",
    "model",
    "estimator",
    "lhs",
    "op",
    "rhs",
    "kind",
    "item",
    "wave",
    "free",
    "estimate",
    "se",
    "statistic",
    "p_value",
    "ci_low",
    "ci_high",
]
"""Columns of :attr:`InvarianceTables.params` (``invariance_params.csv``)."""


@dataclass(frozen=True, repr=False)
class InvarianceTables(Result):
    """The measurement-invariance ladder of several scales, and why others have none.

    Attributes
    ----------
    invariance : pandas.DataFrame
        One row per scale and model (``invariance.csv``; :data:`INVARIANCE_COLUMNS`: the
        columns of :func:`models.invariance_tables`, ``sample_flag`` and ``note``). A scale
        without a ladder has one row per model with the reason in ``note`` and no numbers.
    params : pandas.DataFrame
        The estimates of every fitted model (``invariance_params.csv``).
    notes : tuple of str
        One line per scale without a ladder (fewer than three items, one wave, answers
        without variance, no more participants than observed variables, a configural model
        that could not be estimated or did not converge, or, when such scales are skipped,
        too few complete participants for the rule of thumb), and per finding of a ladder
        (the level that holds, a sample below the rule of thumb, participants left out),
        each starting with ``instrument.scale:``.
    """

    invariance: pd.DataFrame
    params: pd.DataFrame
    notes: tuple[str, ...] = ()

    def _title(self) -> str:
        n = 0
        if not self.invariance.empty:
            fitted = self.invariance[self.invariance["note"].isna()]
            n = len(fitted[["instrument", "scale"]].drop_duplicates())
        return f"InvarianceTables({n} scale(s) with a ladder, {len(self.notes)} note(s))"

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [("invariance", self.invariance), ("params", self.params)]


def invariance_ladders(
    data: pd.DataFrame,
    instruments: Sequence[Any],
    *,
    id_col: str,
    wave_col: str,
    waves: Sequence[Any] | None = None,
    estimator: Literal["ML", "MLR", "WLSMV"] = "MLR",
    nan_policy: Literal["fiml", "omit", "pairwise"] | None = None,
    small_sample: Literal["fit", "skip"] = "fit",
) -> InvarianceTables:
    """Test the invariance ladder (configural to strict) of every scale of some instruments.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per person and wave, one column per item (raw, not reverse keyed). Not
        modified.
    instruments : sequence of surveys.Instrument
        The instruments whose scales are tested.
    id_col, wave_col : str
        The participant and wave columns.
    waves : sequence, optional
        The waves in time order (default: in order of first appearance in `data`).
    estimator : {"ML", "MLR", "WLSMV"}, default "MLR"
        As in :func:`models.measurement_invariance`; MLR (robust to non-normal Likert
        answers) by default; WLSMV treats the answers as ordered categories (with a
        thresholds model between configural and metric).
    nan_policy : {"fiml", "omit", "pairwise"}, optional
        Incomplete participants: by full-information ML (``"fiml"``, the default with ML and
        MLR); left out (``"omit"``: listwise deletion, the default with WLSMV, as lavaan);
        or, with WLSMV only, every pair of answers (``"pairwise"``). Full-information ML
        does not exist for WLSMV.
    small_sample : {"fit", "skip"}, default "fit"
        A scale with fewer complete participants than the rule of thumb
        (:func:`models.invariance_sample_note`: 5 per free parameter of the configural
        model, Bentler & Chou 1987): ``"fit"`` fits its ladder all the same, flags its rows
        (``sample_flag``) and says so in a note (``longitudinal reliability --invariance``);
        ``"skip"`` gives it a note and no ladder (the report, which narrates the ladder).

    Returns
    -------
    InvarianceTables
        A scale gets a ladder when it has three or more items, is measured at two or more
        waves, its answers vary at every wave, it has more participants than observed
        variables (items x waves; fewer make the sample covariance matrix singular, and the
        model cannot be estimated) and its configural model converges. Otherwise it gets one
        row per model of :data:`INVARIANCE_MODELS` (WLSMV: :data:`ORDINAL_INVARIANCE_MODELS`)
        with the reason in ``note`` and no numbers,
        and a note saying which. A ladder below the rule of thumb carries the rule's line in
        ``sample_flag`` (with ``small_sample="fit"``).
    """
    from surveys import keyed_item_answers

    if small_sample not in ("fit", "skip"):
        raise InvalidParameterError(
            "the `small_sample` parameter of invariance_ladders must be 'fit' or 'skip'; "
            f"got {small_sample!r}"
        )
    if waves is None and wave_col in data.columns:  # else keyed_item_answers names it
        waves = list(pd.unique(data[wave_col]))

    def answers(_instrument: Any, key: Any) -> pd.DataFrame:
        return keyed_item_answers(data, key, id_col=id_col, wave_col=wave_col)

    return _ladders(
        instruments,
        answers,
        id_col=id_col,
        wave_col=wave_col,
        waves=waves,
        estimator=estimator,
        nan_policy=_nan_policy(estimator, nan_policy, "invariance_ladders"),
        small_sample=small_sample,
    )


def _nan_policy(estimator: str, nan_policy: str | None, where: str) -> str:
    """Return the missing-data rule of ``estimator`` (its default when None); refuse others."""
    if estimator not in ("ML", "MLR", "WLSMV"):
        raise InvalidParameterError(
            f"the `estimator` parameter of {where} must be 'ML', 'MLR' or 'WLSMV'; "
            f"got {estimator!r}"
        )
    allowed = ("omit", "pairwise") if estimator == "WLSMV" else ("fiml", "omit")
    if nan_policy is None:
        return allowed[0]
    if nan_policy not in allowed:
        raise InvalidParameterError(
            f"the `nan_policy` parameter of {where} must be one of {list(allowed)} with "
            f"estimator={estimator!r}; got {nan_policy!r}"
            + (
                " (full-information ML does not exist for WLSMV)"
                if estimator == "WLSMV" and nan_policy == "fiml"
                else ""
            )
        )
    return nan_policy


def _ladders(
    instruments: Sequence[Any],
    answers: Any,
    *,
    id_col: str,
    wave_col: str,
    waves: Sequence[Any] | None,
    estimator: str,
    nan_policy: str,
    small_sample: str,
) -> InvarianceTables:
    """Test the ladder of every scale; ``answers(instrument, key)`` gives its keyed answers."""
    from models import ModelsError, invariance_tables, measurement_invariance
    from models.sem import invariance_sample_note

    fits: list[pd.DataFrame] = []
    params: list[pd.DataFrame] = []
    notes: list[str] = []
    models = ORDINAL_INVARIANCE_MODELS if estimator == "WLSMV" else INVARIANCE_MODELS
    done: list[tuple[Any, pd.DataFrame, Any]] = []  # items, wide answers, (ladder, warnings)

    def unfitted(instrument: Any, scale: str, reason: str) -> None:
        notes.append(f"{instrument.name}.{scale}: {reason}; no invariance ladder")
        rows = pd.DataFrame(
            {
                "instrument": instrument.name,
                "scale": scale,
                "model": list(models),
                "estimator": estimator,
                "decision": "not fitted",
                "note": reason,
            }
        )
        fits.append(rows.reindex(columns=INVARIANCE_COLUMNS))

    for instrument in instruments:
        for key in instrument.scales:
            label = f"{instrument.name}.{key.name}"
            if len(key.items) < 3:
                unfitted(instrument, key.name, "fewer than three items")
                continue
            long = answers(instrument, key)
            wide = long.pivot_table(
                index=[id_col, wave_col], columns="item", values="value", dropna=False, sort=False
            ).reset_index()
            wide = wide.dropna(subset=list(key.items), how="all")
            order = [w for w in waves or () if w in set(wide[wave_col])]
            if len(order) < 2:
                unfitted(instrument, key.name, "measured at one wave")
                continue
            by_person = wide.set_index([id_col, wave_col])[list(key.items)].notna().all(axis=1)
            complete = by_person.groupby(level=0).sum() == len(order)
            categories = None
            if estimator == "WLSMV":  # thresholds in place of intercepts and variances
                categories = [max(int(wide[item].nunique()), 2) for item in key.items]
            small = invariance_sample_note(
                int(complete.sum()),
                n_items=len(key.items),
                n_waves=len(order),
                n_categories=categories,
            )
            if small and small_sample == "skip":
                unfitted(instrument, key.name, small)
                continue
            spread = wide.groupby(wave_col)[list(key.items)].std().reindex(order)
            flat = [
                f"{item} at {wave}"
                for wave, row in spread.iterrows()
                for item, value in row.items()
                if not value > 0
            ]
            if flat:
                unfitted(
                    instrument,
                    key.name,
                    f"answers without variance ({', '.join(map(str, flat[:3]))})",
                )
                continue
            n_people = int(wide[id_col].nunique())
            n_observed = len(key.items) * len(order)
            if n_people <= n_observed:
                unfitted(
                    instrument,
                    key.name,
                    f"{n_people} participants for {n_observed} observed variables "
                    f"({len(key.items)} items x {len(order)} waves): the sample covariance "
                    "matrix is singular, so the model cannot be estimated",
                )
                continue
            # two scores of the same keyed items (a raw sum and its percentage) share one ladder
            same = next((f for k, w, f in done if k == key.items and w.equals(wide)), None)
            if same is not None:
                result, caught = same
            else:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    try:
                        result = measurement_invariance(
                            wide,
                            items=list(key.items),
                            id_col=id_col,
                            wave_col=wave_col,
                            waves=order,
                            estimator=estimator,
                            nan_policy=nan_policy,
                        )
                    except (ModelsError, np.linalg.LinAlgError) as err:
                        unfitted(instrument, key.name, f"could not be estimated ({err})")
                        continue
                done.append((key.items, wide, (result, caught)))
            configural = result.fits.iloc[0]
            if not bool(configural["converged"]):
                unfitted(instrument, key.name, "the configural model did not converge")
                continue
            for message in caught:
                notes.append(f"{label}: {message.message}")
            if small:
                notes.append(
                    f"{label}: fitted below the rule of thumb ({small}); the ladder's tests "
                    "and fit indices are less trustworthy in so small a sample"
                )
            notes.append(f"{label}: invariance holds up to the {result.level_held} level")
            notes.extend(f"{label}: {line}" for line in _ordinal_notes(result))
            table, estimates = invariance_tables(result, instrument=instrument.name, scale=key.name)
            table = table.reindex(columns=INVARIANCE_COLUMNS)
            if small:
                table["sample_flag"] = f"below the rule of thumb: {small}"
            fits.append(table)
            params.append(estimates)
    invariance = pd.concat(fits, ignore_index=True) if fits else pd.DataFrame()
    estimates = pd.concat(params, ignore_index=True) if params else pd.DataFrame()
    return InvarianceTables(
        invariance.reindex(columns=INVARIANCE_COLUMNS),
        estimates.reindex(columns=INVARIANCE_PARAMS_COLUMNS),
        tuple(notes),
    )


def _ordinal_notes(result: Any) -> list[str]:
    """Return the WLSMV ladder's own lines: the partial search, the participants left out."""
    meta = result.meta
    if meta["estimator"] != "WLSMV":
        return []
    lines = [note for note in meta["notes"] if "the search stopped because" in note]
    if meta["n_excluded"]:
        kept = "with no answer at all" if meta["missing"] == "pairwise" else "incomplete"
        lines.append(
            f"{meta['n_excluded']} {kept} participant(s) left out ({meta['missing']}; "
            "full-information ML does not exist for WLSMV)"
        )
    return lines


def study_invariance(
    study: Any,
    *,
    estimator: Literal["auto", "ML", "MLR", "WLSMV"] = "auto",
    nan_policy: Literal["fiml", "omit", "pairwise"] | None = None,
    small_sample: Literal["fit", "skip"] = "skip",
) -> InvarianceTables:
    """Test the invariance of a loaded study's state scales measured at two or more waves.

    ``estimator="auto"`` (the report's default) picks each instrument's estimator by its
    answer categories (:func:`estimator_for`: WLSMV for at most
    :data:`ORDINAL_RULE_CATEGORIES`, MLR above); a name fits every scale with that one.

    The answers are the study's keyed item answers, as for
    :func:`study_multilevel_reliability`; the waves
    are the study's (``[study] waves``), in order. ``small_sample`` as in
    :func:`invariance_ladders`; ``"skip"`` by default, as the report narrates only a ladder
    whose sample meets the rule of thumb. A scale without a ladder has its rows with the
    reason in ``note``, as there.
    """
    from longitudinal.study.loaded import Study

    if not isinstance(study, Study):
        raise InvalidParameterError(
            "the `study` parameter of longitudinal.study_invariance must be a Study from "
            f"longitudinal.load_study; got {type(study).__name__}"
        )
    if small_sample not in ("fit", "skip"):
        raise InvalidParameterError(
            "the `small_sample` parameter of study_invariance must be 'fit' or 'skip'; "
            f"got {small_sample!r}"
        )
    if estimator not in ("auto", "ML", "MLR", "WLSMV"):
        raise InvalidParameterError(
            "the `estimator` parameter of study_invariance must be 'auto', 'ML', 'MLR' or "
            f"'WLSMV'; got {estimator!r}"
        )
    blocks = []
    notes: list[str] = []
    for name in study.state_instruments:
        instrument = study.instruments[name]
        keyed = study_answers(study, instrument)
        chosen = estimator_for(instrument) if estimator == "auto" else estimator
        block = _ladders(
            [instrument],
            lambda _instrument, key, keyed=keyed: keyed(key),
            id_col="__id",
            wave_col="__wave",
            waves=[str(w) for w in study.config.waves],
            estimator=chosen,
            nan_policy=_nan_policy(chosen, nan_policy, "study_invariance"),
            small_sample=small_sample,
        )
        blocks.append(block)
        notes.extend(block.notes)
    empty = InvarianceTables(
        pd.DataFrame(columns=INVARIANCE_COLUMNS), pd.DataFrame(columns=INVARIANCE_PARAMS_COLUMNS)
    )
    blocks = [b for b in blocks if not b.invariance.empty] or [empty]
    return InvarianceTables(
        pd.concat([b.invariance for b in blocks], ignore_index=True),
        pd.concat([b.params for b in blocks], ignore_index=True),
        tuple(notes),
    )
