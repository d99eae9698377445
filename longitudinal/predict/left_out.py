"""Who and what the prediction benchmark leaves out, and why, in words.

A rating enters the benchmark only with every predictor of its models present
(:func:`longitudinal.predict.empathy_data`). ``longitudinal evaluate`` and ``longitudinal
splits`` name every participant with a rating left out, count the ratings, and give the
reason: a scale not scored for lack of answered items (from the study's scores, with the
items answered), a survey not taken, a session feature or a rating missing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from longitudinal.study.frames import scale_column

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.predict.predictors import EmpathyData, _Raw
    from longitudinal.study.loaded import Study

__all__ = ["left_out_summary"]


def _scale_of(study: Study, column: str) -> tuple[str, str] | None:
    """(instrument, scale) of a score column, as named in ``study.scores``."""
    for name, inst in study.instruments.items():
        for scale in inst.scales:
            if scale_column(name, scale.name) == column:
                return name, scale.name
    return None


def _score_reasons(
    study: Study,
    pid: str,
    column: str,
    kind: str,
    first_wave: str,
    unscored: dict[str, dict[tuple[int, int], set[str]]] | None = None,
) -> list[str]:
    """Why a participant's score column is missing, from the study's scores.

    Each wave where the scale was not scored adds the participant to ``unscored[column]``
    under ``(items answered, items)``, for :func:`_advice`.
    """
    found = _scale_of(study, column)
    if found is None:
        return []
    instrument, scale = found
    scores = study.scores
    id_col = study.config.id_col
    mine = scores[
        (scores[id_col].astype(str) == pid)
        & (scores["instrument"] == instrument)
        & (scores["scale"] == scale)
    ]
    waves = [first_wave] if kind == "trait" else list(study.config.waves)
    out = []
    for wave in waves:
        rows = mine[mine["wave"].astype(str) == wave]
        at = "" if kind == "trait" else f" at {wave}"
        if rows.empty:
            if kind == "trait":
                out.append(f"{column} not measured (no {wave} survey)")
            continue
        rec = rows.iloc[0]
        if pd.isna(rec["score"]):
            answered, k = int(rec["n_answered"]), int(rec["n_items"])
            out.append(f"{column} not scored{at} ({answered} of {k} items answered)")
            if unscored is not None:
                unscored.setdefault(column, {}).setdefault((answered, k), set()).add(pid)
    return out


def _at_most(answered: int, k: int) -> float:
    """Return the largest ``min_valid`` (two or more decimals) that ``answered`` of ``k`` meet."""
    from surveys.scoring import required_answers

    decimals = 2
    while True:
        step = 10.0**decimals
        value = math.floor(answered / k * step) / step
        while value > 0 and required_answers(value, k) > answered:
            value = round(value - 1 / step, decimals)
        if value > 0:
            return value
        decimals += 1


def _remedy(key: Any, answered: int, k: int, *, min_valid: float, prorate: bool) -> str | None:
    """Say what in study.toml's ``[scoring]`` would score ``answered`` of ``k`` items.

    The rules of :func:`surveys.scoring.score`: a scale is scored when at least
    ``ceil(min_valid x k)`` items are answered; a sum or count scale, in addition, only when
    every item is, unless ``prorate`` (then the mean of the answered items times ``k``). So
    ``prorate`` rescues a sum scale that meets ``min_valid`` with items missing, never a mean
    scale, nor anyone below ``min_valid``. None when the rules would have scored the person
    (the score is missing for another reason).
    """
    from surveys.scoring import required_answers

    needed = required_answers(min_valid, k)
    summed = key.scoring in ("sum", "count")
    if answered == 0:
        return f"answered none of the {k} items: no scoring rule can score them"
    if answered >= needed:
        if not summed or prorate:
            return None
        return (
            f"answered {answered} of {k} items, enough for `min_valid` {min_valid:g} "
            f"({needed} needed), but a {key.scoring} scale is scored only when complete: "
            "`[scoring] prorate = true` in study.toml would score them"
        )
    lower = f"a `min_valid` of {_at_most(answered, k):g} or lower"
    text = (
        f"answered {answered} of {k} items, fewer than `min_valid` {min_valid:g} needs ({needed}): "
    )
    if summed and not prorate:
        return text + (
            "`prorate = true` alone would not score them; "
            f"{lower} with `prorate = true` in study.toml's [scoring] would"
        )
    why = "prorate is on already" if summed else f"prorate does nothing for a {key.scoring} scale"
    return text + f"{lower} in study.toml's [scoring] would score them ({why})"


def _advice(study: Study, unscored: dict[str, dict[tuple[int, int], set[str]]]) -> str | None:
    """Say, per unscored scale, what would score its people, or that nothing would."""
    cfg = study.config
    parts = []
    for column, groups in unscored.items():
        found = _scale_of(study, column)
        if found is None:
            continue
        instrument, scale = found
        key = next(k for k in study.instruments[instrument].scales if k.name == scale)
        people = set().union(*groups.values())
        lines = []
        for (answered, k), who in sorted(groups.items(), reverse=True):
            remedy = _remedy(key, answered, k, min_valid=cfg.min_valid, prorate=cfg.prorate)
            if remedy is not None:
                lines.append((len(who), remedy))
        head = f"{column} is not scored for {_people(len(people))}"
        if len(lines) == 1 and lines[0][0] == len(people):
            parts.append(f"{head}, who {lines[0][1]}")
        elif lines:
            parts.append(f"{head}: " + "; ".join(f"{_people(n)} {text}" for n, text in lines))
    if not parts:
        return None
    return (
        ". ".join(parts)
        + ". Or leave that predictor out (`[roles] predictors` in study.toml, or `--predictors`)."
    )


def _people(n: int) -> str:
    return f"{n} participant" + ("" if n == 1 else "s")


def _ratings(n: int) -> str:
    return f"{int(n)} rating" + ("" if int(n) == 1 else "s")


def left_out_summary(study: Study, raw: _Raw, full: EmpathyData) -> dict[str, Any]:
    """Describe every participant and rating the benchmark leaves out, with the reason.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        The study (its scores say why a scale is missing).
    raw, full : the benchmark's raw predictors and its frame standardized over everyone
        (:func:`longitudinal.predict.selection._benchmark_data`).

    Returns
    -------
    dict
        ``ratings`` (left out), ``of`` (ratings with a rating row), ``participants``: one
        entry per participant with a rating left out, or with no rating at all
        (``participant, ratings, of, excluded`` (every rating left out), ``reasons``,
        ``text``), and ``advice`` (None when no scale is unscored). The advice says, per
        unscored scale and count of items answered, what in study.toml's ``[scoring]`` would
        score those people under the rules of :func:`surveys.scoring.score`: ``prorate =
        true`` only for a sum or count scale whose people meet ``min_valid`` with items
        missing; otherwise the ``min_valid`` their answered items meet (with ``prorate =
        true`` for a sum scale when it is off), naming the counts; or that no rule scores a
        scale with no item answered. The entries name raw participant ids: they are for the
        researcher (the report pseudonymizes them).
    """
    by_person = full.meta.get("dropped_by_participant", {})
    kinds = {s.column: s.kind for s in raw.sources}
    entries: list[dict[str, Any]] = []
    unscored: dict[str, dict[tuple[int, int], set[str]]] = {}
    for pid, info in by_person.items():
        reasons: list[str] = []
        for column, n in info["columns"].items():
            kind = kinds.get(column)
            why: list[str] = []
            if column == raw.response_col:
                why = [f"no rating in {n} row(s)"]
            elif kind in ("trait", "state"):
                why = _score_reasons(study, pid, column, kind, raw.first_wave, unscored)
                if not why:
                    why = [f"{column} missing (no survey at or before the session)"]
            elif kind == "session":
                why = [f"{column} missing in the session"]
            else:
                why = [f"{column} missing"]
            if n < info["ratings"] or len(info["columns"]) > 1:
                why = [f"{w} ({_ratings(n)})" for w in why]
            reasons += why
        n, of = int(info["ratings"]), int(info["of"])
        count = f"{_ratings(n)} left out" if n == of else f"{n} of {of} ratings left out"
        entries.append(
            {
                "participant": pid,
                "ratings": n,
                "of": of,
                "excluded": n == of,
                "reasons": reasons,
                "text": f"{pid}: {'; '.join(reasons)}; {count}",
            }
        )
    rated = set(raw.rows[raw.id_col].astype(str))
    for pid in raw.persons.index.astype(str):
        if pid not in rated:
            reason = "no rating to predict (none in the ratings file, or all of them excluded)"
            entries.append(
                {
                    "participant": pid,
                    "ratings": 0,
                    "of": 0,
                    "excluded": True,
                    "reasons": [reason],
                    "text": f"{pid}: {reason}",
                }
            )
    return {
        "ratings": int(full.n_dropped),
        "of": int(len(full.data) + full.n_dropped),
        "participants": entries,
        "advice": _advice(study, unscored),
    }
