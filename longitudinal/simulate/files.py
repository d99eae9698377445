"""The simulated study written as a study directory (``study.toml``, CSV files, ``truth.json``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from longitudinal._checks import check_bool
from longitudinal._errors import InvalidParameterError
from longitudinal._output import write_csv, write_json
from longitudinal.simulate._questionnaires import (
    _fmt,
    _qualtrics_column,
)
from longitudinal.simulate.frames import (
    simulate_frames,
)
from longitudinal.simulate.parameters import (
    _FEATURES,
    _POST_BLOCKS,
    _POST_LABELS,
    _QUALTRICS_META,
    _STATES,
)


def _study_toml(seed: int) -> str:
    states = '["cls9_humanity", "ubc_sscs10", "who5"]'
    return f"""[study]
name = "EmpathicStories++ synthetic twin (seed {seed})"
waves = ["pre", "mid", "post"]

[ratings]
file = "ratings.csv"
scale_min = 1
scale_max = 5

[sessions]
file = "sessions.csv"

[participants]
file = "participants.csv"

[[surveys]]
file = "surveys/pre.csv"
format = "csv"
wave = "pre"
id_col = "participant_id"
date_col = "completed_at"
instruments = ["bfi44", "tas4", "sites", "cls9_humanity", "ubc_sscs10", "who5"]

[[surveys]]
file = "surveys/mid.csv"
format = "csv"
wave = "mid"
id_col = "participant_id"
date_col = "completed_at"
instruments = {states}

[[surveys]]
file = "surveys/post_qualtrics.csv"
format = "qualtrics"
wave = "post"
id_col = "participant_id"
date_col = "RecordedDate"
instruments = {states}
item_map = "surveys/post_map.csv"

[roles]
traits = ["bfi44", "tas4", "sites"]
states = {states}
session_features = ["words"]
"""


def _item_strings(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in out.columns:
        if col in ("participant_id", "completed_at"):
            continue
        out[col] = ["" if pd.isna(v) else str(int(v)) for v in out[col]]
    return out


def simulate_study(
    out_dir: str | Path,
    *,
    seed: int | None = None,
    n_participants: int = 41,
    defects: bool = True,
    overwrite: bool = False,
) -> Path:
    r"""Write a synthetic EmpathicStories++ study directory with known truth.

    Parameters
    ----------
    out_dir : str or pathlib.Path
        Directory to write; created if missing (parents included).
    seed : int, optional
        Seed of every random step; the same seed writes byte-identical files. By default a
        fresh one, written into ``study.toml``'s name and ``truth.json``
        (``longitudinal simulate`` uses :data:`_empathic_base.vocabulary.DEMO_SEED`).
    n_participants : int, default 41
        Number of participants, 3 to 9999.
    defects : bool, default True
        Add the realistic defects (see the module docstring).
    overwrite : bool, default False
        Write into a directory that is not empty. Files of the study layout are replaced;
        other files are left alone.

    Returns
    -------
    pathlib.Path
        The study directory. It holds ``study.toml``, ``participants.csv``, ``sessions.csv``,
        ``ratings.csv``, ``surveys/pre.csv``, ``surveys/mid.csv``,
        ``surveys/post_qualtrics.csv``, ``surveys/post_map.csv`` and ``truth.json``.

    Raises
    ------
    InvalidParameterError
        If ``out_dir`` is a file or a non-empty directory (without ``overwrite=True``), or a
        parameter has the wrong type or value.

    See Also
    --------
    simulate_frames : the same tables in memory.

    Notes
    -----
    Tables are formatted deterministically: integers as integers, floats with a fixed number
    of decimals per column, ``\n`` line ends, JSON with sorted keys and floats rounded to 12
    significant digits. The Qualtrics export follows the three-line header layout of
    Qualtrics CSV exports (column names, question text, ``ImportId`` JSON) without a byte
    order mark.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from longitudinal.simulate import simulate_study
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     study = simulate_study(Path(tmp) / "study", seed=7)
    ...     sorted(p.name for p in study.iterdir() if not p.name.startswith("."))
    ['participants.csv', 'ratings.csv', 'sessions.csv', 'study.toml', 'surveys', 'truth.json']
    """
    func = "simulate_study"
    if not isinstance(out_dir, str | Path):
        raise InvalidParameterError(
            f"The `out_dir` parameter of `{func}` must be a str or pathlib.Path; "
            f"got {type(out_dir).__name__}."
        )
    overwrite = check_bool(overwrite, name="overwrite", where=func)
    from longitudinal._output import MARKER, check_out_dir

    out = check_out_dir(out_dir, overwrite=overwrite, func=func, command="simulate")
    sim = simulate_frames(seed=seed, n_participants=n_participants, defects=defects)

    (out / "surveys").mkdir(parents=True, exist_ok=True)
    (out / "study.toml").write_text(_study_toml(sim.truth["seed"]), encoding="utf-8")
    write_csv(sim.participants, out / "participants.csv")

    sessions = sim.sessions.copy()
    sessions["duration_min"] = _fmt(sessions["duration_min"].to_numpy(), 2)
    for name, (decimals, _) in _FEATURES.items():
        sessions[name] = _fmt(sessions[name].to_numpy(), decimals)
    write_csv(sessions, out / "sessions.csv")
    write_csv(sim.ratings, out / "ratings.csv")

    write_csv(_item_strings(sim.surveys["pre"]), out / "surveys" / "pre.csv")
    write_csv(_item_strings(sim.surveys["mid"]), out / "surveys" / "mid.csv")
    _write_qualtrics(sim.post_qualtrics, out / "surveys" / "post_qualtrics.csv")
    items = [item for scale in _STATES for item in scale.items]
    item_map = pd.DataFrame({"column": [_qualtrics_column(i) for i in items], "item": items})
    write_csv(item_map, out / "surveys" / "post_map.csv")

    write_json(sim.truth, out / "truth.json")
    (out / MARKER).write_text("simulate\n", encoding="utf-8")
    return out


def _write_qualtrics(rows: pd.DataFrame, path: Path) -> None:
    meta = {name: (text, import_id) for name, text, import_id in _QUALTRICS_META}
    text_row, import_row = {}, {}
    for col in rows.columns:
        if col in meta:
            text_row[col], import_row[col] = meta[col]
        elif col == "participant_id":
            text_row[col], import_row[col] = "participant_id", '{"ImportId":"participant_id"}'
        else:
            block, number = col[1:].split("_")
            instrument = next(k for k, v in _POST_BLOCKS.items() if v == int(block))
            text_row[col] = f"{_POST_LABELS[instrument]} - item {number}"
            import_row[col] = f'{{"ImportId":"QID{block}_{number}"}}'
    header = pd.DataFrame([text_row, import_row], columns=rows.columns)
    write_csv(pd.concat([header, rows], ignore_index=True), path)
