"""Who and what the prediction benchmark leaves out, and why, in words.

A rating enters the benchmark only with every predictor of its models present
(:func:`longitudinal.predict.empathy_data`). ``longitudinal evaluate`` and ``longitudinal
splits`` name every participant with a rating left out, count the ratings, and give the
reason: a scale not scored for lack of answered items (from the study's scores, with the
items answered), a survey not taken, a session feature or a rating missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from longitudinal.frames import scale_column

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.predict.predictors import EmpathyData, _Raw
    from longitudinal.study import Study

__all__ = ["left_out_summary"]


def _scale_of(study: Study, column: str) -> tuple[str, str] | None:
    """(instrument, scale) of a score column, as named in ``study.scores``."""
    for name, inst in study.instruments.items():
        for scale in inst.scales:
            if scale_column(name, scale.name) == column:
                return name, scale.name
    return None


def _score_reasons(study: Study, pid: str, column: str, kind: str, first_wave: str) -> list[str]:
    """Why a participant's score column is missing, from the study's scores."""
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
            out.append(
                f"{column} not scored{at} ({int(rec['n_answered'])} of {int(rec['n_items'])} "
                "items answered)"
            )
    return out


def _ratings(n: int) -> str:
    return f"{int(n)} rating" + ("" if int(n) == 1 else "s")


def left_out_summary(study: Study, raw: _Raw, full: EmpathyData) -> dict[str, Any]:
    """Describe every participant and rating the benchmark leaves out, with the reason.

    Parameters
    ----------
    study : longitudinal.study.Study
        The study (its scores say why a scale is missing).
    raw, full : the benchmark's raw predictors and its frame standardized over everyone
        (:func:`longitudinal.predict.selection._benchmark_data`).

    Returns
    -------
    dict
        ``ratings`` (left out), ``of`` (ratings with a rating row), ``participants``: one
        entry per participant with a rating left out, or with no rating at all
        (``participant, ratings, of, excluded`` (every rating left out), ``reasons``,
        ``text``), and ``advice`` (how to keep people whose scale is unscored; None when
        no scale is unscored). The entries name raw participant ids: they are for the
        researcher (the report pseudonymizes them).
    """
    cfg = study.config
    by_person = full.meta.get("dropped_by_participant", {})
    kinds = {s.column: s.kind for s in raw.sources}
    entries: list[dict[str, Any]] = []
    unscored: list[str] = []
    for pid, info in by_person.items():
        reasons: list[str] = []
        for column, n in info["columns"].items():
            kind = kinds.get(column)
            why: list[str] = []
            if column == raw.response_col:
                why = [f"no rating in {n} row(s)"]
            elif kind in ("trait", "state"):
                why = _score_reasons(study, pid, column, kind, raw.first_wave)
                if any("not scored" in w for w in why) and column not in unscored:
                    unscored.append(column)
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
    advice = None
    if unscored:
        advice = (
            f"{', '.join(unscored)} {'is' if len(unscored) == 1 else 'are'} not scored for some "
            "participants: score with `[scoring] prorate = true` or a lower `min_valid` (now "
            f"{cfg.min_valid:g}) in study.toml, or leave that predictor out "
            "(`[roles] predictors` in study.toml, or `--predictors`)."
        )
    return {
        "ratings": int(full.n_dropped),
        "of": int(len(full.data) + full.n_dropped),
        "participants": entries,
        "advice": advice,
    }
