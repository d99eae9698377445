"""Write the hand-made study directories of this folder (run once; the output is committed).

Independent of longitudinal.simulate on purpose: other column names, other features, other wave
names and sizes, plain integer answers. Run from the repository root:

    python tests/data/studies/handmade/_write.py
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
START = dt.date(2025, 2, 3)


def _write(path: Path, header: list[str], rows: list[list]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(header)
        out.writerows(rows)


def study(
    name: str,
    *,
    people: int,
    waves: list[str],
    traits: bool = True,
    features: tuple[str, ...] = ("duration_min", "gaze_on_robot"),
    columns: dict[str, str] | None = None,
    same_rating: bool = False,
    seed: int = 1,
    missed: int = 0,
    unrated: int = 0,
    root: Path | None = None,
) -> Path:
    """Write one study; ``missed`` people skip the middle wave, ``unrated`` sessions have no
    ratings, ``root`` is the folder to write (default: this folder / name)."""
    rng = np.random.default_rng(seed)
    col = {"person": "participant_id", "session": "session_id", "story": "story_id",
           "position": "position", "rating": "empathy", "timestamp": "started_at",
           **(columns or {})}  # fmt: skip
    root = HERE / name if root is None else root
    ids = [f"H{k:03d}" for k in rng.permutation(np.arange(10, 10 + people))]
    span = 7 * (len(waves) - 1) * 2  # two weeks between waves
    _write(
        root / "participants.csv",
        [col["person"], "age"],
        [[p, int(rng.integers(19, 70))] for p in ids],
    )
    session_rows, rating_rows, survey_rows = [], [], []
    wave_day = {w: 14 * i for i, w in enumerate(waves)}
    for i, pid in enumerate(ids):
        first = START + dt.timedelta(days=int(rng.integers(0, 5)))
        level = rng.normal()
        n_sessions = int(rng.integers(4, 9))
        days = sorted(rng.choice(np.arange(1, span + 1), size=n_sessions, replace=False))
        for s, day in enumerate(days, start=1):
            sid = f"{pid}-v{s}"
            when = dt.datetime.combine(first + dt.timedelta(days=int(day)), dt.time(18, 30))
            values = [round(float(rng.normal(12, 4)), 1), round(float(rng.uniform(0, 1)), 3)]
            values += [round(float(rng.normal()), 3) for _ in features[2:]]
            session_rows.append([pid, sid, when.isoformat(), *values[: len(features)]])
            if i * 100 + s <= unrated:  # the first sessions of the first people: no ratings
                continue
            for pos in (1, 2, 3):
                draw = 3 if same_rating else np.round(3 + level + rng.normal())
                rating = int(np.clip(draw, 1, 5))
                rating_rows.append([pid, sid, f"story{int(rng.integers(1, 60)):02d}", pos, rating])
        for w, wave in enumerate(waves):
            if missed and w == len(waves) // 2 and i < missed:
                continue
            when = first + dt.timedelta(days=wave_day[wave])
            tas = [int(np.clip(np.round(3 + level + rng.normal()), 1, 5)) for _ in range(4)]
            who = [int(np.clip(np.round(3 + 0.5 * level + rng.normal()), 0, 5)) for _ in range(5)]
            survey_rows.append([pid, wave, when.isoformat(), *(tas if traits else []), *who])
    _write(
        root / "sessions.csv",
        [col["person"], col["session"], col["timestamp"], *features],
        session_rows,
    )
    _write(
        root / "ratings.csv",
        [col["person"], col["session"], col["story"], col["position"], col["rating"]],
        rating_rows,
    )
    items = ([f"tas4_{k}" for k in range(1, 5)] if traits else []) + [
        f"who5_{k}" for k in range(1, 6)
    ]
    _write(root / "surveys" / "all.csv", [col["person"], "wave", "completed_at", *items],
           survey_rows)  # fmt: skip
    mapped = {k: v for k, v in (columns or {}).items()}
    lines = [
        f"# Hand-made study {name!r}: {people} people, waves {', '.join(waves)}.",
        "[study]",
        f'name = "{name}"',
        "waves = [" + ", ".join(f'"{w}"' for w in waves) + "]",
        "",
        "[ratings]",
        'file = "ratings.csv"',
        "scale_min = 1",
        "scale_max = 5",
        "",
        "[[surveys]]",
        'file = "surveys/all.csv"',
        'format = "csv"',
        'wave_col = "wave"',
        'date_col = "completed_at"',
        "instruments = [" + ('"tas4", ' if traits else "") + '"who5"]',
        "",
        "[roles]",
        "traits = [" + ('"tas4"' if traits else "") + "]",
        'states = ["who5"]',
    ]
    if mapped:
        lines += ["", "[columns]", *(f'{k} = "{v}"' for k, v in mapped.items())]
    (root / "study.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def main() -> None:
    study("two_waves", people=14, waves=["baseline", "followup"], seed=2)
    study("four_waves", people=16, waves=["w0", "w2", "w4", "w6"], seed=3, missed=3)
    study("six_people", people=6, waves=["pre", "mid", "post"], seed=4)
    study("twelve_people", people=12, waves=["pre", "mid", "post"], seed=5)
    study("no_traits", people=10, waves=["pre", "post"], traits=False, seed=6)
    study("no_features", people=10, waves=["pre", "post"], features=(), seed=7)
    study(
        "own_columns",
        people=11,
        waves=["t1", "t2", "t3"],
        columns={
            "person": "pid",
            "session": "visit",
            "story": "item",
            "position": "slot",
            "rating": "score",
            "timestamp": "start_time",
        },  # fmt: skip
        seed=8,
    )
    study("one_person", people=1, waves=["pre", "post"], seed=9)
    study("same_rating", people=8, waves=["pre", "post"], same_rating=True, seed=10)


if __name__ == "__main__":
    main()
