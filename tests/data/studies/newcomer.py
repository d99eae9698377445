"""Hand-written studies of a newcomer, written with pandas and numpy only (not the simulator).

``two_wave_slider(root)``: 60 participants ``p01`` ... ``p60``; an ``intake`` survey two days
before the first session and an ``exit`` survey a day after the last; 5-9 sessions over five
weeks; three stories per session rated for empathy on a 0-100 slider. The study's own column
names: ``pid``, ``visit_id``, ``tale``, ``slot``, ``empathy``, ``start_time``. Instruments:
Mini-IPIP (sum scores, a trait), the UBC-SSCS (a state) and a custom 5-item scale ``rapport``
(a state, sum of the items). One true effect: Mini-IPIP agreeableness, +8 rating points per SD
of the latent trait. The states change from intake to exit but predict nothing. 20 people
(``p41`` ... ``p60``) skipped one agreeableness item (the 4-item sum scale is not scored for
them); 3 people (``p01`` ... ``p03``) never took the exit survey.

``three_wave_likert(root)``: 24 participants, waves ``pre``, ``mid``, ``post``: ``pre`` before
the first session, ``mid`` at day 14 (between sessions), ``post`` after the last session;
ratings on a 1-7 scale; TIPI (trait) and WHO-5 (state). Used to check that the state's
within-person part exists (pre and mid precede ratings) and ignores ``post``.

Both functions return ``root``; both are deterministic for a seed.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd

START = dt.date(2025, 3, 3)

RAPPORT = """\
# A custom 5-item instrument: rapport with the robot, 1-5, sum of the items.
[instrument]
name = "rapport"
title = "Rapport with the robot"
items = ["rap_1", "rap_2", "rap_3", "rap_4", "rap_5"]
response_min = 1
response_max = 5
scoring = "sum"

[scales.rapport]
items = ["rap_1", "rap_2", "rap_3", "rap_4", "rap_5"]
reverse = ["rap_4"]
description = "Sum of the five items, rap_4 reverse keyed."
"""

# Mini-IPIP: item -> (trait, reverse keyed); traits cycle E, A, C, N, I over items 1-20.
_IPIP_TRAITS = "eacni"
_IPIP_REVERSE = {6, 7, 8, 9, 10, 15, 16, 17, 18, 19, 20}
_UBC_REVERSE = {1, 2, 3, 5}


def _likert(rng, latent, lo, hi, reverse=False):
    value = int(np.clip(np.round(latent + rng.normal(0, 0.7)), lo, hi))
    return lo + hi - value if reverse else value


def two_wave_slider(root: Path, *, seed: int = 46) -> Path:
    """Write the two-wave 0-100 study described in the module docstring into ``root``."""
    root = Path(root)
    rng = np.random.default_rng(seed)
    ids = [f"p{k:02d}" for k in range(1, 61)]
    trait = {t: rng.normal(size=len(ids)) for t in _IPIP_TRAITS}
    social = rng.normal(size=len(ids))
    rapport = rng.normal(size=len(ids))
    person = rng.normal(scale=8.0, size=len(ids))
    skipped_agree = set(ids[40:])
    no_exit = set(ids[:3])
    sessions, ratings, intake, exit_ = [], [], [], []
    for i, pid in enumerate(ids):
        first = START + dt.timedelta(days=int(rng.integers(0, 5)))
        n = int(rng.integers(5, 10))
        days = sorted(rng.choice(np.arange(0, 35), size=n, replace=False).tolist())
        for s, day in enumerate(days, start=1):
            visit = f"{pid}-v{s}"
            when = dt.datetime.combine(first + dt.timedelta(days=int(day)), dt.time(18, 30))
            sessions.append({"pid": pid, "visit_id": visit, "start_time": when.isoformat(),
                             "minutes": round(float(rng.normal(12, 3)), 1)})  # fmt: skip
            for slot in (1, 2, 3):
                value = 55 + 8 * trait["a"][i] + person[i] + rng.normal(0, 15)
                ratings.append({"pid": pid, "visit_id": visit,
                                "tale": f"tale{int(rng.integers(1, 50)):02d}", "slot": slot,
                                "empathy": int(np.clip(np.round(value), 0, 100))})  # fmt: skip
        for wave, rows, shift, when in (
            ("intake", intake, 0.0, first - dt.timedelta(days=2)),
            ("exit", exit_, 0.8, first + dt.timedelta(days=int(days[-1]) + 1)),
        ):
            if wave == "exit" and pid in no_exit:
                continue
            row: dict = {"pid": pid, "completed_at": when.isoformat()}
            if wave == "intake":
                for k in range(1, 21):
                    t = _IPIP_TRAITS[(k - 1) % 5]
                    row[f"mini_ipip_{k}"] = _likert(rng, 3 + trait[t][i], 1, 5, k in _IPIP_REVERSE)
                if pid in skipped_agree:
                    row["mini_ipip_7"] = np.nan
            for k in range(1, 11):
                latent = 4 + social[i] + shift + rng.normal(0, 0.8)
                row[f"ubc_sscs10_{k}"] = _likert(rng, latent, 1, 7, k in _UBC_REVERSE)
            for k in range(1, 6):
                row[f"rap_{k}"] = _likert(rng, 3 + rapport[i] + shift / 2, 1, 5, k == 4)
            rows.append(row)
    root.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"pid": ids, "age": rng.integers(19, 70, size=len(ids))}).to_csv(
        root / "participants.csv", index=False
    )
    pd.DataFrame(sessions).to_csv(root / "sessions.csv", index=False)
    pd.DataFrame(ratings).to_csv(root / "ratings.csv", index=False)
    (root / "surveys").mkdir(exist_ok=True)
    pd.DataFrame(intake).to_csv(root / "surveys" / "intake.csv", index=False)
    pd.DataFrame(exit_).to_csv(root / "surveys" / "exit.csv", index=False)
    (root / "instruments").mkdir(exist_ok=True)
    (root / "instruments" / "rapport.toml").write_text(RAPPORT, encoding="utf-8")
    (root / "study.toml").write_text(
        """\
[study]
name = "Two-wave slider study"
waves = ["intake", "exit"]

[ratings]
file = "ratings.csv"
scale_min = 0
scale_max = 100

[sessions]
file = "sessions.csv"

[participants]
file = "participants.csv"

[[surveys]]
file = "surveys/intake.csv"
format = "csv"
wave = "intake"
date_col = "completed_at"
instruments = ["mini_ipip", "ubc_sscs10", "instruments/rapport.toml"]

[[surveys]]
file = "surveys/exit.csv"
format = "csv"
wave = "exit"
date_col = "completed_at"
instruments = ["ubc_sscs10", "instruments/rapport.toml"]

[roles]
traits = ["mini_ipip"]
states = ["ubc_sscs10", "rapport"]
session_features = ["minutes"]

[columns]
person = "pid"
session = "visit_id"
story = "tale"
position = "slot"
rating = "empathy"
timestamp = "start_time"
""",
        encoding="utf-8",
    )
    return root


def three_wave_likert(root: Path, *, seed: int = 47) -> Path:
    """Write the three-wave 1-7 study described in the module docstring into ``root``."""
    root = Path(root)
    rng = np.random.default_rng(seed)
    ids = [f"s{k:02d}" for k in range(1, 25)]
    agree = rng.normal(size=len(ids))
    mood = rng.normal(size=len(ids))
    person = rng.normal(scale=0.5, size=len(ids))
    sessions, ratings = [], []
    waves: dict[str, list[dict]] = {"pre": [], "mid": [], "post": []}
    for i, pid in enumerate(ids):
        first = START + dt.timedelta(days=int(rng.integers(0, 3)))
        days = sorted(rng.choice(np.arange(1, 28), size=int(rng.integers(6, 10)), replace=False))
        for s, day in enumerate(days, start=1):
            sid = f"{pid}_{s}"
            when = dt.datetime.combine(first + dt.timedelta(days=int(day)), dt.time(10, 0))
            sessions.append({"participant_id": pid, "session_id": sid,
                             "started_at": when.isoformat()})  # fmt: skip
            for pos in (1, 2, 3):
                latent = 4.3 + 0.7 * agree[i] + person[i] + rng.normal()
                ratings.append({"participant_id": pid, "session_id": sid,
                                "story_id": f"st{int(rng.integers(1, 30)):02d}",
                                "position": pos,
                                "empathy": int(np.clip(np.round(latent), 1, 7))})  # fmt: skip
        dates = {"pre": first, "mid": first + dt.timedelta(days=14),
                 "post": first + dt.timedelta(days=int(days[-1]) + 1)}  # fmt: skip
        for w, wave in enumerate(("pre", "mid", "post")):
            row: dict = {"participant_id": pid, "completed_at": dates[wave].isoformat()}
            if wave == "pre":
                for k in range(1, 11):
                    latent = 4 + (1.3 * agree[i] if k in (2, 7) else rng.normal())
                    row[f"tipi_{k}"] = _likert(rng, latent, 1, 7, k in (2, 4, 6, 8, 10))
            for k in range(1, 6):
                row[f"who5_{k}"] = _likert(rng, 2.5 + mood[i] + 0.4 * w, 0, 5)
            waves[wave].append(row)
    root.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"participant_id": ids}).to_csv(root / "participants.csv", index=False)
    pd.DataFrame(sessions).to_csv(root / "sessions.csv", index=False)
    pd.DataFrame(ratings).to_csv(root / "ratings.csv", index=False)
    (root / "surveys").mkdir(exist_ok=True)
    blocks = []
    for wave, rows in waves.items():
        pd.DataFrame(rows).to_csv(root / "surveys" / f"{wave}.csv", index=False)
        inst = '"tipi", "who5"' if wave == "pre" else '"who5"'
        blocks.append(
            f'[[surveys]]\nfile = "surveys/{wave}.csv"\nformat = "csv"\nwave = "{wave}"\n'
            f'date_col = "completed_at"\ninstruments = [{inst}]\n'
        )
    (root / "study.toml").write_text(
        '[study]\nname = "Three-wave Likert study"\nwaves = ["pre", "mid", "post"]\n\n'
        '[ratings]\nfile = "ratings.csv"\nscale_min = 1\nscale_max = 7\n\n'
        '[sessions]\nfile = "sessions.csv"\n\n[participants]\nfile = "participants.csv"\n\n'
        + "\n".join(blocks)
        + '\n[roles]\ntraits = ["tipi"]\nstates = ["who5"]\nsession_features = []\n',
        encoding="utf-8",
    )
    return root


if __name__ == "__main__":  # pragma: no cover - writes the studies for a look by hand
    import sys

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "newcomer-studies")
    two_wave_slider(out / "two_wave_slider")
    three_wave_likert(out / "three_wave_likert")
