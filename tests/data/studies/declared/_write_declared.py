"""Write the hand-written study of this folder (run once; the output is committed).

``slider7``: a study that departs from the template everywhere it may. 18 participants
``sub-001`` ... ``sub-018``; waves ``baseline``, ``week2``, ``month1``; ratings on a 1-7 slider in a
column named ``score``, with the study's own names for every id column; the TIPI as the trait
instrument, WHO-5 and a custom 4-item key file (``instruments/closeness.toml``, named
``closeness``) as the states; session features ``minutes`` and ``turns``. True effects are built
in: TIPI agreeableness (+0.6 rating points per SD) and the within-person part of ``turns`` (+0.5
per SD) predict the ratings; nothing else does. Three participants (``sub-001`` ... ``sub-003``)
skipped one of the two TIPI agreeableness items, so that scale is not scored for them.

Independent of longitudinal.simulate on purpose. Run from the repository root:

    python tests/data/studies/declared/_write_declared.py
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
START = dt.date(2025, 9, 1)
WAVES = ("baseline", "week2", "month1")
SKIPPED = ("sub-001", "sub-002", "sub-003")  # each skipped one TIPI agreeableness item
TIPI_REVERSED = {2, 4, 6, 8, 10}
TIPI_SCALE = {1: "e", 6: "e", 2: "a", 7: "a", 3: "c", 8: "c", 4: "s", 9: "s", 5: "o", 10: "o"}

CLOSENESS = """\
# A custom 4-item instrument of this study: closeness to the robot, 1-5, mean of the items.
[instrument]
name = "closeness"
title = "Closeness to the robot"
items = ["close_1", "close_2", "close_3", "close_4"]
response_min = 1
response_max = 5
scoring = "mean"

[scales.bond]
items = ["close_1", "close_2", "-close_3", "close_4"]
description = "Mean of the four items, close_3 reverse keyed."
"""


def _write(path: Path, header: list[str], rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(header)
        out.writerows(rows)


def slider7(root: Path, *, seed: int = 31) -> Path:
    rng = np.random.default_rng(seed)
    ids = [f"sub-{k:03d}" for k in range(1, 19)]
    traits = {k: rng.normal(size=len(ids)) for k in "ecsoa"}
    bond = rng.normal(size=len(ids))
    mood = rng.normal(size=len(ids))
    person = rng.normal(scale=0.5, size=len(ids))
    _write(root / "participants.csv", ["pid", "age"],
           [[p, int(rng.integers(20, 65))] for p in ids])  # fmt: skip
    sessions, ratings = [], []
    surveys: dict[str, list[list]] = {w: [] for w in WAVES}
    for i, pid in enumerate(ids):
        first = START + dt.timedelta(days=int(rng.integers(0, 4)))
        level = rng.normal(14, 2)  # this person's typical number of turns
        days = sorted(rng.choice(np.arange(1, 29), size=int(rng.integers(6, 11)), replace=False))
        for s, day in enumerate(days, start=1):
            visit = f"{pid}-s{s:02d}"
            when = dt.datetime.combine(first + dt.timedelta(days=int(day)), dt.time(19, 0))
            turns = int(max(2, round(level + rng.normal(0, 4))))
            minutes = round(float(rng.normal(11, 3)), 1)
            sessions.append([pid, visit, when.isoformat(), minutes, turns])
            within = (turns - level) / 4.0
            for slot in (1, 2, 3):
                latent = 4.2 + 0.6 * traits["a"][i] + 0.5 * within + person[i] + rng.normal()
                score = int(np.clip(np.round(latent), 1, 7))
                story = f"st{int(rng.integers(1, 40)):02d}"
                ratings.append([pid, visit, story, slot, score])
        for w, wave in enumerate(WAVES):
            date = first + dt.timedelta(days=14 * w)
            row: list = [pid, date.isoformat()]
            if w == 0:
                for item in range(1, 11):
                    t = traits[TIPI_SCALE[item]][i]
                    value = int(np.clip(np.round(4 + 1.2 * t + rng.normal(0, 0.8)), 1, 7))
                    value = 8 - value if item in TIPI_REVERSED else value
                    row.append("" if pid in SKIPPED and item == 7 else value)
            who = [int(np.clip(np.round(3 + 0.8 * mood[i] + 0.2 * w + rng.normal(0, 0.7)), 0, 5))
                   for _ in range(5)]  # fmt: skip
            close = [
                int(np.clip(np.round(3 + bond[i] + 0.25 * w + rng.normal(0, 0.6)), 1, 5))
                for _ in range(4)
            ]
            close[2] = 6 - close[2]  # close_3 is reverse keyed
            surveys[wave].append(row + who + close)
    _write(root / "sessions.csv", ["pid", "visit", "start_time", "minutes", "turns"], sessions)
    _write(root / "ratings.csv", ["pid", "visit", "story", "slot", "score"], ratings)
    items = [f"who5_{k}" for k in range(1, 6)] + [f"close_{k}" for k in range(1, 5)]
    for w, wave in enumerate(WAVES):
        tipi = [f"tipi_{k}" for k in range(1, 11)] if w == 0 else []
        _write(root / "surveys" / f"{wave}.csv", ["pid", "done_on", *tipi, *items],
               surveys[wave])  # fmt: skip
    (root / "instruments").mkdir(parents=True, exist_ok=True)
    (root / "instruments" / "closeness.toml").write_text(CLOSENESS, encoding="utf-8")
    blocks = []
    for w, wave in enumerate(WAVES):
        listed = ['"tipi", ' if w == 0 else "", '"who5", "instruments/closeness.toml"']
        blocks += [
            "[[surveys]]",
            f'file = "surveys/{wave}.csv"',
            'format = "csv"',
            f'wave = "{wave}"',
            'date_col = "done_on"',
            "instruments = [" + "".join(listed) + "]",
            "",
        ]
    lines = [
        "# A hand-written study: a 1-7 slider, its own column names, a custom instrument.",
        "[study]",
        'name = "slider7"',
        'waves = ["baseline", "week2", "month1"]',
        "",
        "[ratings]",
        'file = "ratings.csv"',
        "scale_min = 1",
        "scale_max = 7",
        "",
        *blocks,
        "[roles]",
        'traits = ["tipi"]',
        'states = ["who5", "closeness"]',
        'session_features = ["minutes", "turns"]',
        "",
        "[columns]",
        'person = "pid"',
        'session = "visit"',
        'story = "story"',
        'position = "slot"',
        'rating = "score"',
        'timestamp = "start_time"',
    ]
    (root / "study.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


if __name__ == "__main__":
    slider7(HERE / "slider7")
