"""A researcher's own model in the prediction benchmark: reading and checking its predictions.

A model trained elsewhere on the splits of ``longitudinal splits`` is scored by
``longitudinal evaluate --predictions PRED.csv``. A predictions file has one row per predicted
rating and the columns

``model``
    the model's name (several models may share a file; a model may span several files);
``scheme``
    ``holdout_70_20_10`` or ``kfold_K`` (the ``scheme`` column of the splits file);
``seed``
    the split seed;
the study's participant, session and position columns
    under the study's own names (``study.id_col`` and ``[columns]`` of ``study.toml``): the
    rating predicted, as in the study's ratings file;
``prediction``
    the predicted rating, on the rating scale.

Other columns are ignored. Everything is checked before any model is fitted, and every problem
is reported at once (:class:`surveys.InputValidationError`, one row per problem naming the
file, the row and the rating): for each scheme x seed of the evaluation in which a model
appears, every test rating must be predicted exactly once; validation ratings of the holdout
split may be predicted too (then all of them). Refused: a missing column, a model named like
one of the package's baselines, an unknown scheme or seed, a rating that is not in the ratings
file, a rating of a training participant, a rating predicted twice, a missing test rating, and
a prediction that is not a finite number on the rating scale. A rating of the ratings file that
the benchmark leaves out (an empty rating, an excluded session, or a missing predictor) is not
scored; the evaluation notes how many.

Rows are numbered as in a spreadsheet: the header is row 1, the first data row row 2.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from surveys import FAILURE_COLUMNS, InputValidationError

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from longitudinal.splits import BenchmarkSplit
    from longitudinal.study import Study

__all__ = [
    "PREDICTION_COLUMNS",
    "UserPredictions",
    "check_predictions",
    "prediction_columns",
    "read_predictions",
]

PREDICTION_COLUMNS = ("model", "scheme", "seed", "prediction")
"""Columns of a predictions file besides the study's rating key (participant, session,
position)."""

ROW_CONVENTION = "rows counted as in a spreadsheet: the header is row 1"


@dataclass(frozen=True)
class UserPredictions:
    """Checked predictions of a researcher's models, aligned with the benchmark's ratings.

    Attributes
    ----------
    models : tuple of str
        Model names in order of first appearance.
    files : dict of str to tuple of str
        Model -> the sources (files) holding its predictions.
    schemes : dict of str to tuple of str
        Model -> the schemes it is scored on (those it has predictions for).
    values : dict of (str, str, int) to numpy.ndarray
        ``(model, scheme, seed)`` -> one value per benchmark rating (row of the benchmark's
        frame), NaN where the model gave no prediction (training and, unless given,
        validation ratings).
    n_rows : int
        Prediction rows read.
    n_ignored : dict of str to int
        Model -> predictions of ratings that the benchmark leaves out (not scored).
    """

    models: tuple[str, ...]
    files: dict[str, tuple[str, ...]]
    schemes: dict[str, tuple[str, ...]]
    values: dict[tuple[str, str, int], np.ndarray]
    n_rows: int
    n_ignored: dict[str, int]

    def notes(self) -> list[str]:
        """Plain-language notes: ratings not scored, schemes a model is not scored on."""
        out = []
        for model in self.models:
            if self.n_ignored.get(model):
                out.append(
                    f"{model}: {self.n_ignored[model]} prediction(s) of ratings that the "
                    "benchmark leaves out (empty rating, excluded session or missing "
                    "predictor) were not scored"
                )
        return out


def prediction_columns(study: Study) -> list[str]:
    """List the columns a predictions file for ``study`` must have, in the study's names.

    Parameters
    ----------
    study : longitudinal.study.Study
        A loaded study.

    Returns
    -------
    list of str
        ``model, scheme, seed``, the participant, session and position columns as the
        study's ratings file names them, and ``prediction``.

    Examples
    --------
    >>> from longitudinal.study import load_study
    >>> from longitudinal.user_predictions import prediction_columns
    >>> prediction_columns(load_study("my-study"))  # doctest: +SKIP
    ['model', 'scheme', 'seed', 'participant_id', 'session_id', 'position', 'prediction']
    """
    return ["model", "scheme", "seed", *_key_names(study).values(), "prediction"]


def _key_names(study: Study) -> dict[str, str]:
    """Map internal names to the study's own names of the columns identifying a rating."""
    cfg = study.config
    names = cfg.column_names
    return {
        "participant": cfg.id_col,
        "session_id": names["session_id"],
        "position": names["position"],
    }


def _read_files(
    paths: Sequence[str | os.PathLike[str]], study: Study, failures: list[dict[str, Any]]
) -> dict[str, pd.DataFrame]:
    """Read predictions files as text; problems go to ``failures``. Index = file row."""
    from longitudinal.study_config import _Failures
    from longitudinal.study_tables import _read_table

    required = prediction_columns(study)
    out: dict[str, pd.DataFrame] = {}
    for path in paths:
        name = str(path)
        if name in out:
            failures.append(_failure(name, None, None, None, "the file is given twice"))
            continue
        found = _Failures()
        table = _read_table(Path("."), name, found, required=required)
        failures.extend(found.rows)
        if table is None:
            continue
        data = table.data.copy()
        data.index = pd.Index(table.rows.to_numpy(), name="row")
        if data.empty:
            failures.append(_failure(name, 1, None, None, "the file has a header but no rows"))
            continue
        out[name] = data
    return out


def read_predictions(path: str | os.PathLike[str], *, study: Study) -> pd.DataFrame:
    """Read a predictions file as text, each row labelled with its row number in the file.

    Parameters
    ----------
    path : str or path-like
        CSV file (UTF-8) with the columns of :func:`prediction_columns`.
    study : longitudinal.study.Study
        The study whose ratings are predicted (it names the key columns).

    Returns
    -------
    pandas.DataFrame
        Every column as text (cells stripped), indexed by the row number in the file (the
        header is row 1), ready for :func:`longitudinal.predict.evaluate_predictions`
        (``predictions={path: table}``).

    Raises
    ------
    surveys.InputValidationError
        When the file is missing, not UTF-8, not a rectangular CSV, lacks a column or has no
        row.

    Examples
    --------
    >>> from longitudinal.user_predictions import read_predictions
    >>> table = read_predictions("pred.csv", study=study)  # doctest: +SKIP
    """
    failures: list[dict[str, Any]] = []
    tables = _read_files([path], study, failures)
    if failures:
        raise InputValidationError(
            pd.DataFrame(failures, columns=FAILURE_COLUMNS), f"cannot read {path}"
        )
    return tables[str(path)]


def _failure(file: str, row: Any, column: str | None, value: Any, reason: str) -> dict[str, Any]:
    return {"file": file, "row": row, "column": column, "value": value, "reason": reason}


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    return str(value).strip()


def _whole(value: Any) -> int | None:
    """Return a whole number from text or a number; None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    try:
        number = float(_text(value))
    except ValueError:
        return None
    return int(number) if math.isfinite(number) and number.is_integer() else None


def _number(value: Any) -> float | None:
    """Return a float from text or a number; None when it is not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | np.number):
        return float(value)
    text = _text(value)
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _ratings_keys(study: Study) -> set[tuple[str, str, int]]:
    """Every (participant, session, position) of the ratings file, kept or excluded."""
    from longitudinal.study_config import _Failures
    from longitudinal.study_tables import _read_table

    cfg = study.config
    table = _read_table(
        study.root,
        cfg.ratings.file,
        _Failures(),
        required=[cfg.id_col, "session_id", "position"],
        names=cfg.column_names,
    )
    keys: set[tuple[str, str, int]] = set()
    if table is not None:
        for pid, sid, pos in zip(
            table.data[cfg.id_col], table.data["session_id"], table.data["position"], strict=True
        ):
            whole = _whole(pos)
            if whole is not None:
                keys.add((pid, sid, whole))
    ratings = study.ratings
    for pid, sid, pos in zip(
        ratings[cfg.id_col].astype(str), ratings["session_id"].astype(str), ratings["position"],
        strict=True,
    ):  # fmt: skip
        keys.add((pid, sid, int(pos)))
    return keys


def check_predictions(
    predictions: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    study: Study,
    frame: pd.DataFrame,
    splits: Sequence[BenchmarkSplit],
    reserved: Sequence[str] = (),
) -> UserPredictions:
    """Check a researcher's predictions against the benchmark's splits; align them with it.

    Parameters
    ----------
    predictions : DataFrame, mapping of str to DataFrame, path or sequence of paths
        CSV files (read with :func:`read_predictions`), one table, or source name -> table,
        with the columns of :func:`prediction_columns`. A table's index labels are the row
        numbers named in the report (:func:`read_predictions` sets them to the rows of the
        file).
    study : longitudinal.study.Study
        The study (its key column names, rating scale and ratings file).
    frame : pandas.DataFrame
        The benchmark's ratings (:attr:`longitudinal.predict.EmpathyData.data`): the
        participant column, ``session_id`` and ``position``, one row per rating scored.
    splits : sequence of BenchmarkSplit
        :func:`longitudinal.splits.draw_splits` over the participants of ``frame``.
    reserved : sequence of str, default ()
        Model names a user's model may not take (the package's baselines).

    Returns
    -------
    UserPredictions
        The predictions aligned with the rows of ``frame`` per model x scheme x seed.

    Raises
    ------
    surveys.InputValidationError
        Listing every problem (see the module docstring); nothing is scored.

    Examples
    --------
    >>> from longitudinal.user_predictions import check_predictions
    >>> checked = check_predictions(table, study=study, frame=frame, splits=plan)  # doctest: +SKIP
    """
    func = "check_predictions"
    problems: list[dict[str, Any]] = []
    if isinstance(predictions, pd.DataFrame):
        sources: dict[str, pd.DataFrame] = {"predictions": predictions}
        names = list(sources)
    elif isinstance(predictions, Mapping) and all(
        isinstance(v, pd.DataFrame) for v in predictions.values()
    ):
        sources = {str(k): v for k, v in predictions.items()}
        names = list(sources)
    elif isinstance(predictions, str | os.PathLike) or (
        isinstance(predictions, Sequence)
        and predictions
        and all(isinstance(p, str | os.PathLike) for p in predictions)
    ):
        paths = [predictions] if isinstance(predictions, str | os.PathLike) else predictions
        names = [str(p) for p in paths]
        sources = _read_files(paths, study, problems)
    else:
        raise InvalidParameterError(
            f"the `predictions` parameter of {func} must be a DataFrame, a mapping of source "
            f"name to DataFrame, or one or more CSV paths; got {type(predictions).__name__}"
        )
    cfg = study.config
    key_names = _key_names(study)
    pid_col, sid_col, pos_col = key_names.values()
    lo, hi = float(cfg.ratings.scale_min), float(cfg.ratings.scale_max)

    # the benchmark: where every rating is, and each participant's part per scheme x seed
    id_col = cfg.id_col
    position_of = {
        (str(p), str(s), int(q)): i
        for i, (p, s, q) in enumerate(
            zip(frame[id_col], frame["session_id"], frame["position"], strict=True)
        )
    }
    pids = frame[id_col].astype(str).to_numpy(dtype=object)
    roles: dict[tuple[str, int], dict[str, str]] = {}
    evaluated: dict[tuple[str, int], dict[str, np.ndarray]] = {}
    for s in splits:
        role = roles.setdefault((s.scheme, s.seed), {})
        if s.fold is None:
            for pid in set(pids[s.train].tolist()):
                role[pid] = "train"
        for part, rows in s.parts.items():
            for pid in set(pids[rows].tolist()):
                role[pid] = part
            block = evaluated.setdefault((s.scheme, s.seed), {})
            block[part] = np.sort(np.concatenate([block.get(part, np.array([], int)), rows]))
    schemes = list(dict.fromkeys(s.scheme for s in splits))
    seeds = list(dict.fromkeys(s.seed for s in splits))
    known = _ratings_keys(study)

    grouped: dict[tuple[str, str | None, str, str], list[Any]] = {}

    def once(file: str, row: Any, column: str, value: str, reason: str) -> None:
        """Collect a problem repeated over rows (wrong scheme, seed or name): reported once."""
        grouped.setdefault((file, column, value, reason), []).append(row)

    seen: dict[tuple[str, str, int, int], list[tuple[str, Any]]] = {}
    values: dict[tuple[str, str, int], np.ndarray] = {}
    files: dict[str, list[str]] = {}
    used_schemes: dict[str, list[str]] = {}
    n_ignored: dict[str, int] = {}
    n_rows = 0
    scheme_text = ", ".join(schemes)
    seed_text = ", ".join(str(s) for s in seeds)
    for file, table in sources.items():
        missing = [c for c in prediction_columns(study) if c not in table.columns]
        if missing:
            problems.append(
                _failure(
                    file,
                    None,
                    ", ".join(missing),
                    None,
                    f"missing column(s); a predictions file needs {prediction_columns(study)}",
                )
            )
            continue
        columns = [table[c].tolist() for c in prediction_columns(study)]
        for row, model_v, scheme_v, seed_v, pid_v, sid_v, pos_v, pred_v in zip(
            table.index, *columns, strict=True
        ):
            n_rows += 1
            model = _text(model_v)
            scheme = _text(scheme_v)
            seed = _whole(seed_v)
            pid, sid, pos = _text(pid_v), _text(sid_v), _whole(pos_v)
            key = f"{pid_col}={pid}, {sid_col}={sid}, {pos_col}={_text(pos_v)}"
            placed = True  # model, scheme and seed are usable
            if not model:
                problems.append(_failure(file, row, "model", None, "empty model name"))
                placed = False
            elif model in reserved:
                once(
                    file,
                    row,
                    "model",
                    model,
                    "the name of one of the package's baselines; name your model otherwise",
                )
                placed = False
            if scheme not in schemes:
                once(
                    file,
                    row,
                    "scheme",
                    scheme,
                    f"unknown scheme; this evaluation has {scheme_text} (splits and evaluate "
                    "must use the same --kfold)",
                )
                placed = False
            if seed is None or seed not in seeds:
                once(
                    file,
                    row,
                    "seed",
                    _text(seed_v),
                    f"unknown seed; this evaluation has seeds {seed_text} (splits and "
                    "evaluate must use the same --seeds)",
                )
                placed = False
            number = _number(pred_v)
            valued = number is not None and math.isfinite(number) and lo <= number <= hi
            if number is None or not math.isfinite(number):
                text = _text(pred_v)
                problems.append(
                    _failure(
                        file,
                        row,
                        "prediction",
                        text or None,
                        f"the prediction is {'not a finite number' if text else 'empty'} ({key})",
                    )
                )
            elif not valued:
                problems.append(
                    _failure(
                        file,
                        row,
                        "prediction",
                        _text(pred_v),
                        f"the prediction is off the rating scale {lo:g}-{hi:g} ({key})",
                    )
                )
            if pos is None or (pid, sid, pos) not in known:
                problems.append(
                    _failure(file, row, None, None, f"no such rating in {cfg.ratings.file} ({key})")
                )
                continue
            if not placed:
                continue
            if model not in files:
                files[model] = []
            if file not in files[model]:
                files[model].append(file)
            if scheme not in used_schemes.setdefault(model, []):
                used_schemes[model].append(scheme)
            role = roles[(scheme, seed)].get(pid)
            where = f"model {model!r}, {scheme} seed {seed}"
            if role == "train":
                problems.append(
                    _failure(
                        file,
                        row,
                        pid_col,
                        pid,
                        f"a rating of a training participant ({where}; {key}): predictions are "
                        "scored for test and validation participants only",
                    )
                )
                continue
            index = position_of.get((pid, sid, pos))
            if role is None or index is None:
                n_ignored[model] = n_ignored.get(model, 0) + 1
                continue
            # a bad value is reported above; the rating is then not reported missing too
            seen.setdefault((model, scheme, seed, index), []).append((file, row))
            target = values.setdefault(
                (model, scheme, seed), np.full(len(frame), np.nan, dtype=float)
            )
            if valued:
                target[index] = number

    for (file, column, value, reason), rows in grouped.items():
        more = f"; {len(rows)} rows, the first shown" if len(rows) > 1 else ""
        problems.append(_failure(file, rows[0], column, value or None, reason + more))

    for (model, scheme, seed, index), places in seen.items():
        if len(places) < 2:
            continue
        p = frame[id_col].iloc[index]
        s = frame["session_id"].iloc[index]
        q = frame["position"].iloc[index]
        key = f"{pid_col}={p}, {sid_col}={s}, {pos_col}={q}"
        for file, row in places:
            others = "; ".join(f"{f} row {r}" for f, r in places if (f, r) != (file, row))
            problems.append(
                _failure(
                    file,
                    row,
                    None,
                    None,
                    f"the rating is predicted more than once (model {model!r}, {scheme} seed "
                    f"{seed}; {key}); also at {others}",
                )
            )

    tried_at: dict[tuple[str, str, int], list[int]] = {}
    for model, scheme, seed, index in seen:
        tried_at.setdefault((model, scheme, seed), []).append(index)
    for model, used in used_schemes.items():
        source = ", ".join(files[model])
        for scheme in used:
            for seed in seeds:
                got = values.get((model, scheme, seed))
                parts = evaluated[(scheme, seed)]
                if got is None:
                    test = parts["test"]
                    problems.append(
                        _failure(
                            source,
                            None,
                            "seed",
                            str(seed),
                            f"model {model!r} has no predictions for {scheme} seed {seed} "
                            f"({test.size} test ratings); every seed of a scheme is scored",
                        )
                    )
                    continue
                tried = np.zeros(len(frame), dtype=bool)
                tried[tried_at.get((model, scheme, seed), [])] = True
                for part, rows in parts.items():
                    have = tried[rows]
                    if part == "val" and not have.any():
                        continue  # validation predictions are optional, as a whole
                    what = "test" if part == "test" else "validation"
                    for index in rows[~have]:
                        p = frame[id_col].iloc[index]
                        s = frame["session_id"].iloc[index]
                        q = frame["position"].iloc[index]
                        problems.append(
                            _failure(
                                source,
                                None,
                                None,
                                None,
                                f"missing prediction of a {what} rating (model {model!r}, "
                                f"{scheme} seed {seed}; {pid_col}={p}, {sid_col}={s}, "
                                f"{pos_col}={q})",
                            )
                        )

    if problems:
        order = {f: i for i, f in enumerate(names)}
        cases = pd.DataFrame(problems, columns=FAILURE_COLUMNS)
        rank = pd.DataFrame(
            {
                "f": cases["file"].map(lambda f: order.get(f, len(order))),
                "r": pd.to_numeric(cases["row"], errors="coerce").fillna(np.inf),
            }
        )
        cases = cases.loc[rank.sort_values(["f", "r"], kind="mergesort").index]
        raise InputValidationError(
            cases.reset_index(drop=True),
            f"cannot score the predictions ({ROW_CONVENTION})",
        )
    models = tuple(dict.fromkeys(m for m, _, _ in values))
    return UserPredictions(
        models=models,
        files={m: tuple(files[m]) for m in models},
        schemes={m: tuple(used_schemes[m]) for m in models},
        values=values,
        n_rows=n_rows,
        n_ignored={m: n for m, n in n_ignored.items() if m in models},
    )
