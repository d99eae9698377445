"""Attrition in plain view: who was observed when, who left, and how the leavers differed.

Who is observed at each wave and session, when each person left, and how those who left
differed at baseline from those who stayed.

A participant *completed* the study when they have a survey at the last wave (the exit
survey); everyone else listed in ``participants.csv`` *dropped out*, whatever waves they
missed on the way (a participant who skipped the middle wave but came back is a completer).
Baseline differences are Hedges' g on the first wave's trait and state scores: the mean of
the dropouts minus the mean of the completers over the pooled standard deviation
``sqrt(((n_d - 1) s_d^2 + (n_c - 1) s_c^2) / (n_d + n_c - 2))``, times the small-sample
correction ``J = 1 - 3 / (4 (n_d + n_c) - 9)``; its standard error is
``J sqrt((n_d + n_c) / (n_d n_c) + d^2 / (2 (n_d + n_c)))`` (Borenstein, Hedges, Higgins &
Rothstein 2009, eqs. 4.18-4.24, ``d`` the uncorrected difference) and the interval
``g +- z se`` (normal approximation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import special

from _empathic_base.results import Result, json_ready
from longitudinal._checks import check_unit
from longitudinal.study.frames import scale_column

if TYPE_CHECKING:
    from longitudinal.study.loaded import Study

__all__ = [
    "BASELINE_COLUMNS",
    "SESSION_COLUMNS",
    "WAVE_COLUMNS",
    "Attrition",
    "attrition",
]

WAVE_COLUMNS = ["wave", "n_participants", "n_missing", "n_last_seen"]
"""Columns of :attr:`Attrition.waves`."""

SESSION_COLUMNS = ["session_index", "n_participants"]
"""Columns of :attr:`Attrition.sessions`."""

BASELINE_COLUMNS = [
    "measure",
    "n_completers",
    "n_dropouts",
    "mean_completers",
    "mean_dropouts",
    "sd_completers",
    "sd_dropouts",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
]
"""Columns of :attr:`Attrition.baseline` (``estimate`` is Hedges' g, dropouts minus
completers)."""


@dataclass(frozen=True, repr=False)
class Attrition(Result):
    """Who was observed when, who left, and how the leavers differed at baseline.

    Attributes
    ----------
    waves : pandas.DataFrame
        ``wave, n_participants, n_missing, n_last_seen``: per wave in study order, the
        participants with a survey, those listed without one, and those whose last survey it
        is (``n_last_seen`` of the last wave counts the completers).
    sessions : pandas.DataFrame
        ``session_index, n_participants``: participants with at least that many sessions
        (session 1 is each person's first).
    people : pandas.DataFrame
        One row per listed participant: the id column, ``n_waves`` (surveys), ``last_wave``
        (the last wave with a survey; missing for none), ``n_sessions``, ``last_session_day``
        (days from the first session to the last; missing without sessions), ``completer``.
    baseline : pandas.DataFrame
        :data:`BASELINE_COLUMNS`, one row per trait and state scale at the first wave:
        Hedges' g of dropouts against completers with its ``ci_level`` interval (NaN when a
        group has fewer than two scores).
    n_participants, n_completers, n_dropouts : int
        Listed participants and the two groups.
    last_wave : str
        The wave that defines a completer.
    ci_level : float
        Level of the intervals.
    """

    waves: pd.DataFrame
    sessions: pd.DataFrame
    people: pd.DataFrame
    baseline: pd.DataFrame
    n_participants: int
    n_completers: int
    n_dropouts: int
    last_wave: str
    ci_level: float

    def _title(self) -> str:
        return (
            f"Attrition({self.n_completers} of {self.n_participants} participants completed "
            f"the {self.last_wave} survey)"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        return [
            ("Participants observed per wave", self.waves),
            ("Participants observed per session", self.sessions),
            ("Completers and dropouts at baseline (Hedges' g)", self.baseline),
        ]

    def to_dict(self) -> dict[str, Any]:
        """Return the tables and counts as JSON-ready data (the per-person table included)."""
        return json_ready(
            {
                "n_participants": self.n_participants,
                "n_completers": self.n_completers,
                "n_dropouts": self.n_dropouts,
                "last_wave": self.last_wave,
                "ci_level": self.ci_level,
                "effect_size": "Hedges' g, dropouts minus completers, pooled SD",
                "waves": self.waves.to_dict(orient="records"),
                "sessions": self.sessions.to_dict(orient="records"),
                "people": self.people.to_dict(orient="records"),
                "baseline": self.baseline.to_dict(orient="records"),
            }
        )


def attrition(study: Study, *, ci_level: float = 0.95) -> Attrition:
    """Describe who stayed and who left a loaded study.

    Parameters
    ----------
    study : longitudinal.Study
        A loaded study (:func:`longitudinal.load_study`).
    ci_level : float, default 0.95
        Level of the intervals of Hedges' g.

    Returns
    -------
    Attrition
        Counts per wave and session, each person's last wave and session, and completers
        against dropouts on the first wave's trait and state scores (see the module
        docstring for the effect size).

    Examples
    --------
    >>> import longitudinal
    >>> result = longitudinal.attrition(longitudinal.load_study("my-study"))  # doctest: +SKIP
    >>> result.waves  # doctest: +SKIP
       wave  n_participants  n_missing  n_last_seen
    0   pre               6          0            0
    1   mid               5          1            0
    2  post               4          2            4
    """
    level = check_unit(ci_level, name="ci_level", where="attrition")
    cfg = study.config
    id_col, waves = cfg.id_col, [str(w) for w in cfg.waves]
    ids = pd.Index(study.participants[id_col].astype(str).unique(), name=id_col)
    dates = study.survey_dates
    seen = pd.crosstab(dates[id_col].astype(str), dates["wave"].astype(str)) > 0
    seen = seen.reindex(index=ids, columns=waves, fill_value=False).astype(bool)
    rank = pd.Series(range(len(waves)), index=waves)
    last = seen.mul(rank + 1, axis=1).max(axis=1)  # 0: no survey
    last_wave = last.map(lambda k: waves[k - 1] if k else None)
    completer = seen[waves[-1]]

    table = pd.DataFrame(
        {
            "wave": waves,
            "n_participants": [int(seen[w].sum()) for w in waves],
            "n_missing": [int((~seen[w]).sum()) for w in waves],
            "n_last_seen": [int((last == k + 1).sum()) for k in range(len(waves))],
        },
        columns=WAVE_COLUMNS,
    )
    sessions, people_sessions = _sessions(study, ids)
    people = pd.DataFrame(
        {
            id_col: ids,
            "n_waves": seen.sum(axis=1).astype("int64").to_numpy(),
            "last_wave": last_wave.to_numpy(),
            "n_sessions": people_sessions["n_sessions"].to_numpy(),
            "last_session_day": people_sessions["last_session_day"].to_numpy(),
            "completer": completer.to_numpy(),
        }
    )
    baseline = _baseline(study, completer, level)
    return Attrition(
        waves=table,
        sessions=sessions,
        people=people,
        baseline=baseline,
        n_participants=len(ids),
        n_completers=int(completer.sum()),
        n_dropouts=int((~completer).sum()),
        last_wave=waves[-1],
        ci_level=level,
    )


def _sessions(study: Study, ids: pd.Index) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Participants per session index, and each person's session count and last day."""
    id_col = study.config.id_col
    frame = study.session_frame()
    frame = frame.assign(**{id_col: frame[id_col].astype(str)})
    per = frame.groupby(id_col).agg(
        n_sessions=("session_index", "max"), last_session_day=("day", "max")
    )
    per = per.reindex(ids)
    per["n_sessions"] = per["n_sessions"].fillna(0).astype("int64")
    most = int(per["n_sessions"].max()) if len(per) else 0
    counts = [(k, int((per["n_sessions"] >= k).sum())) for k in range(1, most + 1)]
    return pd.DataFrame(counts, columns=SESSION_COLUMNS), per


def _baseline(study: Study, completer: pd.Series, level: float) -> pd.DataFrame:
    """Hedges' g of dropouts against completers on every first-wave trait and state scale."""
    id_col = study.config.id_col
    first = str(study.config.waves[0])
    instruments = [*study.trait_instruments, *study.state_instruments]
    scores = study.scores
    sub = scores[(scores["wave"].astype(str) == first) & scores["instrument"].isin(instruments)]
    z = float(special.ndtri(0.5 + level / 2))
    rows = []
    for inst in dict.fromkeys(instruments):
        for scale in dict.fromkeys(sub.loc[sub["instrument"] == inst, "scale"]):
            one = sub[(sub["instrument"] == inst) & (sub["scale"] == scale)]
            values = pd.Series(one["score"].to_numpy(dtype=float), index=one[id_col].astype(str))
            values = values.reindex(completer.index)
            rows.append([scale_column(inst, scale), *_hedges_g(values, completer, z)])
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def _hedges_g(values: pd.Series, completer: pd.Series, z: float) -> list[float]:
    """Group sizes, means, SDs, Hedges' g (dropouts minus completers), its se and interval."""
    # sorted: the same sums, to the last digit, whatever the order of the participants
    stay = np.sort(values[completer.to_numpy()].dropna().to_numpy())
    left = np.sort(values[~completer.to_numpy()].dropna().to_numpy())
    n_c, n_d = len(stay), len(left)
    mean_c = float(stay.mean()) if n_c else np.nan
    mean_d = float(left.mean()) if n_d else np.nan
    sd_c = float(stay.std(ddof=1)) if n_c > 1 else np.nan
    sd_d = float(left.std(ddof=1)) if n_d > 1 else np.nan
    g = se = np.nan
    if n_c > 1 and n_d > 1:
        pooled = np.sqrt(((n_c - 1) * sd_c**2 + (n_d - 1) * sd_d**2) / (n_c + n_d - 2))
        if pooled > 0:
            d = (mean_d - mean_c) / pooled
            j = 1 - 3 / (4 * (n_c + n_d) - 9)
            g = j * d
            se = j * np.sqrt((n_c + n_d) / (n_c * n_d) + d**2 / (2 * (n_c + n_d)))
    return [n_c, n_d, mean_c, mean_d, sd_c, sd_d, g, se, g - z * se, g + z * se]
