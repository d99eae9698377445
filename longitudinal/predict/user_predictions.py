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
    under the study's own names (``[columns]`` of ``study.toml``): the
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
    from longitudinal.predict.splits import BenchmarkSplit
    from longitudinal.study.loaded import Study

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
    study : longitudinal.study.loaded.Study
        A loaded study.

    Returns
    -------
    list of str
        ``model, scheme, seed``, the participant, session and position columns as the
        study's ratings file names them, and ``prediction``.

    Examples
    --------
    >>> from longitudinal.study.loaded import load_study
    >>> from longitudinal.predict.user_predictions import prediction_columns
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
    from longitudinal.study.config import Failures
    from longitudinal.study.tables import read_table

    required = prediction_columns(study)
    out: dict[str, pd.DataFrame] = {}
    for path in paths:
        name = str(path)
        if name in out:
            failures.append(_failure(name, None, None, None, "the file is given twice"))
            continue
        found = Failures()
        table = read_table(Path("."), name, found, required=required)
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
    study : longitudinal.study.loaded.Study
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
    >>> from longitudinal.predict.user_predictions import read_predictions
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
    from longitudinal.study.config import Failures
    from longitudinal.study.tables import read_table

    cfg = study.config
    table = read_table(
        study.root,
        cfg.ratings.file,
        Failures(),
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
    study : longitudinal.study.loaded.Study
        The study (its key column names, rating scale and ratings file).
    frame : pandas.DataFrame
        The benchmark's ratings (:attr:`longitudinal.predict.EmpathyData.data`): the
        participant column, ``session_id`` and ``position``, one row per rating scored.
    splits : sequence of BenchmarkSplit
        :func:`longitudinal.predict.splits.draw_splits` over the participants of ``frame``.
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
    >>> from longitudinal.predict.user_predictions import check_predictions
    >>> checked = check_predictions(table, study=study, frame=frame, splits=plan)  # doctest: +SKIP
    """
    func = "check_predictions"
    problems: list[dict[str, Any]] = []
    names, sources = _sources(predictions, study, problems, func=func)
    check = _Check(study, frame, splits, reserved, problems)
    for file, table in sources.items():
        check.table(file, table)
    check.repeated()
    check.duplicates()
    check.coverage()
    return check.result(names)


def _sources(
    predictions: Any, study: Study, problems: list[dict[str, Any]], *, func: str
) -> tuple[list[str], dict[str, pd.DataFrame]]:
    """Return the source names in order and their tables (files read, problems collected)."""
    if isinstance(predictions, pd.DataFrame):
        return ["predictions"], {"predictions": predictions}
    if isinstance(predictions, Mapping) and all(
        isinstance(v, pd.DataFrame) for v in predictions.values()
    ):
        sources = {str(k): v for k, v in predictions.items()}
        return list(sources), sources
    if isinstance(predictions, str | os.PathLike) or (
        isinstance(predictions, Sequence)
        and predictions
        and all(isinstance(p, str | os.PathLike) for p in predictions)
    ):
        paths = [predictions] if isinstance(predictions, str | os.PathLike) else predictions
        return [str(p) for p in paths], _read_files(paths, study, problems)
    raise InvalidParameterError(
        f"the `predictions` parameter of {func} must be a DataFrame, a mapping of source "
        f"name to DataFrame, or one or more CSV paths; got {type(predictions).__name__}"
    )


class _Check:
    """The checks of :func:`check_predictions`: the benchmark's layout and what was found.

    One object, because every check adds to the same failure list and the row checks fill the
    tables (predicted ratings, models, schemes) the coverage checks then read.
    """

    def __init__(
        self,
        study: Study,
        frame: pd.DataFrame,
        splits: Sequence[BenchmarkSplit],
        reserved: Sequence[str],
        problems: list[dict[str, Any]],
    ) -> None:
        cfg = study.config
        self.study, self.frame, self.reserved, self.problems = study, frame, reserved, problems
        self.key_names = list(_key_names(study).values())
        self.lo, self.hi = float(cfg.ratings.scale_min), float(cfg.ratings.scale_max)
        self.ratings_file = cfg.ratings.file
        self.id_col = cfg.id_col
        # the benchmark: where every rating is, and each participant's part per scheme x seed
        self.position_of = {
            (str(p), str(s), int(q)): i
            for i, (p, s, q) in enumerate(
                zip(frame[self.id_col], frame["session_id"], frame["position"], strict=True)
            )
        }
        pids = frame[self.id_col].astype(str).to_numpy(dtype=object)
        self.roles: dict[tuple[str, int], dict[str, str]] = {}
        self.evaluated: dict[tuple[str, int], dict[str, np.ndarray]] = {}
        for s in splits:
            role = self.roles.setdefault((s.scheme, s.seed), {})
            if s.fold is None:
                for pid in set(pids[s.train].tolist()):
                    role[pid] = "train"
            for part, rows in s.parts.items():
                for pid in set(pids[rows].tolist()):
                    role[pid] = part
                block = self.evaluated.setdefault((s.scheme, s.seed), {})
                block[part] = np.sort(np.concatenate([block.get(part, np.array([], int)), rows]))
        self.schemes = list(dict.fromkeys(s.scheme for s in splits))
        self.seeds = list(dict.fromkeys(s.seed for s in splits))
        self.known = _ratings_keys(study)
        # what the rows say
        self.grouped: dict[tuple[str, str | None, str, str], list[Any]] = {}
        self.seen: dict[tuple[str, str, int, int], list[tuple[str, Any]]] = {}
        self.values: dict[tuple[str, str, int], np.ndarray] = {}
        self.files: dict[str, list[str]] = {}
        self.used_schemes: dict[str, list[str]] = {}
        self.n_ignored: dict[str, int] = {}
        self.n_rows = 0

    def fail(self, file: str, row: Any, column: str | None, value: Any, reason: str) -> None:
        self.problems.append(_failure(file, row, column, value, reason))

    def once(self, file: str, row: Any, column: str, value: str, reason: str) -> None:
        """Collect a problem repeated over rows (wrong scheme, seed or name): reported once."""
        self.grouped.setdefault((file, column, value, reason), []).append(row)

    def key(self, pid: Any, sid: Any, pos: Any) -> str:
        pid_col, sid_col, pos_col = self.key_names
        return f"{pid_col}={pid}, {sid_col}={sid}, {pos_col}={pos}"

    def table(self, file: str, table: pd.DataFrame) -> None:
        wanted = prediction_columns(self.study)
        missing = [c for c in wanted if c not in table.columns]
        if missing:
            reason = f"missing column(s); a predictions file needs {wanted}"
            self.fail(file, None, ", ".join(missing), None, reason)
            return
        columns = [table[c].tolist() for c in wanted]
        for row, *cells in zip(table.index, *columns, strict=True):
            self.row(file, row, *cells)

    def placed(self, file: str, row: Any, model: str, scheme: str, seed: int | None, seed_v: Any):
        """Check the model name, scheme and seed of a row; say whether all three are usable."""
        ok = True
        if not model:
            self.fail(file, row, "model", None, "empty model name")
            ok = False
        elif model in self.reserved:
            reason = "the name of one of the package's baselines; name your model otherwise"
            self.once(file, row, "model", model, reason)
            ok = False
        if scheme not in self.schemes:
            reason = (
                f"unknown scheme; this evaluation has {', '.join(self.schemes)} (splits and "
                "evaluate must use the same --kfold)"
            )
            self.once(file, row, "scheme", scheme, reason)
            ok = False
        if seed is None or seed not in self.seeds:
            reason = (
                f"unknown seed; this evaluation has seeds {', '.join(map(str, self.seeds))} "
                "(splits and evaluate must use the same --seeds)"
            )
            self.once(file, row, "seed", _text(seed_v), reason)
            ok = False
        return ok

    def value(self, file: str, row: Any, pred_v: Any, key: str) -> float | None:
        """Return the prediction if it is a finite number on the rating scale, else report it."""
        number = _number(pred_v)
        if number is None or not math.isfinite(number):
            text = _text(pred_v)
            what = "not a finite number" if text else "empty"
            self.fail(file, row, "prediction", text or None, f"the prediction is {what} ({key})")
            return None
        if not self.lo <= number <= self.hi:
            reason = f"the prediction is off the rating scale {self.lo:g}-{self.hi:g} ({key})"
            self.fail(file, row, "prediction", _text(pred_v), reason)
            return None
        return number

    def row(self, file, row, model_v, scheme_v, seed_v, pid_v, sid_v, pos_v, pred_v) -> None:
        self.n_rows += 1
        model, scheme, seed = _text(model_v), _text(scheme_v), _whole(seed_v)
        pid, sid, pos = _text(pid_v), _text(sid_v), _whole(pos_v)
        key = self.key(pid, sid, _text(pos_v))
        placed = self.placed(file, row, model, scheme, seed, seed_v)
        number = self.value(file, row, pred_v, key)
        if pos is None or (pid, sid, pos) not in self.known:
            self.fail(file, row, None, None, f"no such rating in {self.ratings_file} ({key})")
            return
        if not placed:
            return
        if file not in self.files.setdefault(model, []):
            self.files[model].append(file)
        if scheme not in self.used_schemes.setdefault(model, []):
            self.used_schemes[model].append(scheme)
        role = self.roles[(scheme, seed)].get(pid)
        if role == "train":
            reason = (
                f"a rating of a training participant (model {model!r}, {scheme} seed {seed}; "
                f"{key}): predictions are scored for test and validation participants only"
            )
            self.fail(file, row, self.key_names[0], pid, reason)
            return
        index = self.position_of.get((pid, sid, pos))
        if role is None or index is None:
            self.n_ignored[model] = self.n_ignored.get(model, 0) + 1
            return
        # a bad value is reported above; the rating is then not reported missing too
        self.seen.setdefault((model, scheme, seed, index), []).append((file, row))
        target = self.values.setdefault(
            (model, scheme, seed), np.full(len(self.frame), np.nan, dtype=float)
        )
        if number is not None:
            target[index] = number

    def repeated(self) -> None:
        """Report each problem repeated over rows once, at its first row."""
        for (file, column, value, reason), rows in self.grouped.items():
            more = f"; {len(rows)} rows, the first shown" if len(rows) > 1 else ""
            self.fail(file, rows[0], column, value or None, reason + more)

    def rating_key(self, index: int) -> str:
        frame = self.frame
        return self.key(
            frame[self.id_col].iloc[index],
            frame["session_id"].iloc[index],
            frame["position"].iloc[index],
        )

    def duplicates(self) -> None:
        """Report every rating predicted more than once, at each of its rows."""
        for (model, scheme, seed, index), places in self.seen.items():
            if len(places) < 2:
                continue
            key = self.rating_key(index)
            for file, row in places:
                others = "; ".join(f"{f} row {r}" for f, r in places if (f, r) != (file, row))
                reason = (
                    f"the rating is predicted more than once (model {model!r}, {scheme} seed "
                    f"{seed}; {key}); also at {others}"
                )
                self.fail(file, row, None, None, reason)

    def coverage(self) -> None:
        """Report every seed of a used scheme without predictions and every rating missed."""
        tried_at: dict[tuple[str, str, int], list[int]] = {}
        for model, scheme, seed, index in self.seen:
            tried_at.setdefault((model, scheme, seed), []).append(index)
        for model, used in self.used_schemes.items():
            source = ", ".join(self.files[model])
            for scheme in used:
                for seed in self.seeds:
                    parts = self.evaluated[(scheme, seed)]
                    if (model, scheme, seed) not in self.values:
                        reason = (
                            f"model {model!r} has no predictions for {scheme} seed {seed} "
                            f"({parts['test'].size} test ratings); every seed of a scheme is "
                            "scored"
                        )
                        self.fail(source, None, "seed", str(seed), reason)
                        continue
                    tried = np.zeros(len(self.frame), dtype=bool)
                    tried[tried_at.get((model, scheme, seed), [])] = True
                    for part, rows in parts.items():
                        have = tried[rows]
                        if part == "val" and not have.any():
                            continue  # validation predictions are optional, as a whole
                        what = "test" if part == "test" else "validation"
                        for index in rows[~have]:
                            reason = (
                                f"missing prediction of a {what} rating (model {model!r}, "
                                f"{scheme} seed {seed}; {self.rating_key(index)})"
                            )
                            self.fail(source, None, None, None, reason)

    def result(self, names: list[str]) -> UserPredictions:
        """Raise every problem at once, sorted by file and row; else the aligned predictions."""
        if self.problems:
            order = {f: i for i, f in enumerate(names)}
            cases = pd.DataFrame(self.problems, columns=FAILURE_COLUMNS)
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
        models = tuple(dict.fromkeys(m for m, _, _ in self.values))
        return UserPredictions(
            models=models,
            files={m: tuple(self.files[m]) for m in models},
            schemes={m: tuple(self.used_schemes[m]) for m in models},
            values=self.values,
            n_rows=self.n_rows,
            n_ignored={m: n for m, n in self.n_ignored.items() if m in models},
        )
