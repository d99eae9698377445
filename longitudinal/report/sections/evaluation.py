"""The "Evaluation" section: the results of ``longitudinal evaluate``, copied into the report."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from markupsafe import Markup

from longitudinal.report.context import (
    EVALUATION_FILE,
    PROVENANCE_FILE,
    ReportContext,
)
from longitudinal.report.html import figure, render
from longitudinal.report.sections.base import Section


class EvaluationSection(Section):
    """The prediction results of ``longitudinal evaluate``, when the study holds them."""

    anchor = "evaluation"
    heading = "Evaluation"

    def _compute(self, ctx: ReportContext) -> None:
        ctx.results["evaluation"] = _copy_evaluation(ctx)

    def _body(self, ctx: ReportContext) -> Markup | None:
        found = ctx.results["evaluation"]
        if found is None:
            return None
        from longitudinal.predict import (
            METRIC_HEADERS,
            difference_note,
            difference_table,
            interval_note,
            interval_table,
            spread_table,
        )
        from longitudinal.predict.results import FLOOR_NOTE

        params, tables = found.parameters, found.tables
        kfold = differences = holdout = None
        notes: dict[str, str] = {}
        if params is not None:
            try:
                if "metrics_ci" in tables and params.get("bootstrap"):
                    kfold = interval_table(tables["metrics_ci"])
                    notes["kfold"] = interval_note(params)
                    if "comparisons" in tables:
                        differences = difference_table(tables["comparisons"])
                        notes["differences"] = difference_note(params)
                if "summary" in tables:
                    holdout = spread_table(tables["summary"], "test")
            except (KeyError, TypeError, ValueError) as err:
                ctx.note(
                    f"the evaluate/ files could not be read as this version writes them ({err})"
                )
                kfold = differences = holdout = None
        reading, left, advice = [], [], None
        floored = holdout is not None and bool(holdout.attrs.get("floored"))
        if params is not None:
            from longitudinal.predict.results import clipping_line, left_out_lines

            line = clipping_line(params)
            reading = [line] if line else []
            # the copy of evaluation.json names the participants by their pseudonyms
            lines = left_out_lines(params)
            left = lines[:1] + [text[2:] for text in lines if text.startswith("- ")]
            advice = next((t for t in lines if t.startswith("Advice: ")), None)
        headers = {"model": "Model", "versus": "versus", **METRIC_HEADERS}
        described = (params or {}).get("models") or {}
        shown = [] if kfold is None else list(kfold["model"])
        shown += [] if holdout is None else list(holdout["model"])
        order = list(dict.fromkeys([m for m in shown if m in described] + list(described)))
        figures = {}
        if (ctx.out / "evaluate" / "metrics.png").is_file():
            units = (params or {}).get("metric_units", "x 100")
            figures["metrics"] = (
                "evaluate/metrics.png",
                f"Prediction metrics of each model ({units}) on the 70/20/10 test participants, "
                "mean ± SD over split seeds; error bars stop at the bounds of a metric "
                "(accuracy, F1 and MSE are never negative).",
            )
        return render(
            "evaluation.html.j2",
            file=EVALUATION_FILE.as_posix(),
            metrics=found.metrics,
            show=(kfold is None and holdout is None)
            and not found.metrics.empty
            and len(found.metrics) <= 50,
            decimals={c: 0 if _is_count(found.metrics[c]) else 3 for c in found.metrics.columns},
            params=params or {},
            kfold=None if kfold is None or kfold.empty else kfold,
            differences=None if differences is None or differences.empty else differences,
            holdout=None if holdout is None or holdout.empty else holdout,
            notes=notes,
            reading=reading,
            left=left,
            advice=advice,
            floor_note=FLOOR_NOTE if floored else None,
            models=[(m, described[m]) for m in order],
            headers={
                name: {c: headers[c] for c in frame.columns}
                for name, frame in (
                    ("kfold", kfold),
                    ("differences", differences),
                    ("holdout", holdout),
                )
                if frame is not None
            },
            figure=figure(figures, ctx.out, "metrics"),
        )


@dataclass(frozen=True)
class _EvaluationFiles:
    """What ``longitudinal evaluate`` wrote, as copied into the report folder."""

    metrics: pd.DataFrame
    parameters: dict | None
    tables: dict[str, pd.DataFrame]


EVALUATION_FILES = (
    "metrics.csv",
    "summary.csv",
    "runs.csv",
    "metrics_ci.csv",
    "comparisons.csv",
    "evaluation.json",
    "table.md",
    "metrics.png",
    "metrics.svg",
    "metrics.pdf",
)
"""The files of ``longitudinal evaluate`` that the report copies; nothing else of evaluate/."""

_MAX_EVALUATION_FILE = 64 << 20  # bytes; a larger file is not an output of evaluate


def _copy_evaluation(ctx: ReportContext) -> _EvaluationFiles | None:
    """Copy the known files of ``evaluate/`` into the report, never through a link.

    Only :data:`EVALUATION_FILES` are copied, each only when it is a regular file (a symbolic
    link, in the folder or as the folder, is refused with a note). In a pseudonymized report
    the files are rewritten or checked where ids are (:func:`_pseudonymized`); a file naming
    a participant by the raw id is not copied and a note says so; when that file is
    metrics.csv, the section is left out.
    """
    import os
    import stat

    sources = [ctx.study.root / "evaluate"]
    if ctx.previous_evaluate is not None:
        sources.append(ctx.previous_evaluate)
    for source in sources:
        if source.is_symlink():
            ctx.note(
                f"{source.name}/ of the study is a symbolic link; the evaluation results were "
                "not copied into the report (copy the folder itself into the study)"
            )
            continue
        metrics = source / "metrics.csv"
        if not source.is_dir() or not (metrics.is_file() or metrics.is_symlink()):
            continue
        target = ctx.out / "evaluate"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        copied = []
        left_out: dict | None = None  # evaluation.json's left_out, raw ids: for table.md
        names = dict(ctx.id_map)  # who left_out may name: raw ids, or this key's pseudonyms
        if source == ctx.previous_evaluate and _same_key(source.parent, ctx):
            names.update({shown: shown for shown in ctx.id_map.values()})
        for name in EVALUATION_FILES:
            path = source / name
            try:
                info = os.lstat(path)
            except OSError:
                continue
            where = f"{source.name}/{name}"
            if stat.S_ISLNK(info.st_mode):
                ctx.note(f"{where} is a symbolic link; it was not copied into the report")
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_EVALUATION_FILE:
                ctx.note(f"{where} is not a regular file of evaluate; it was not copied")
                continue
            try:
                fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                with os.fdopen(fd, "rb") as fh:
                    data = fh.read(_MAX_EVALUATION_FILE + 1)
            except OSError as err:
                ctx.note(f"{where} could not be read ({err.strerror}); it was not copied")
                continue
            if ctx.options.pseudonymize:
                if name == "evaluation.json":
                    left_out = _raw_left_out(data)
                shown, why = _pseudonymized(name, data, ctx, left_out, names)
                if shown is None:
                    ctx.note(f"{where} {why}; it was not copied into the pseudonymized report")
                    continue
                data = shown
            (target / name).write_bytes(data)
            copied.append(name)
        if "metrics.csv" not in copied:
            shutil.rmtree(target)
            return None
        try:
            table = pd.read_csv(target / "metrics.csv")
        except (ValueError, pd.errors.ParserError) as err:
            ctx.note(f"evaluate/metrics.csv could not be read as a table ({err})")
            return _EvaluationFiles(pd.DataFrame(), None, {})
        parameters = None
        if (target / "evaluation.json").is_file():
            try:
                parameters = json.loads((target / "evaluation.json").read_text(encoding="utf-8"))
            except (ValueError, UnicodeDecodeError) as err:
                ctx.note(f"evaluate/evaluation.json could not be read ({err})")
        tables = {}
        for name in ("summary", "metrics_ci", "comparisons"):
            path = target / f"{name}.csv"
            if path.is_file():
                try:
                    tables[name] = pd.read_csv(path)
                except (ValueError, pd.errors.ParserError) as err:
                    ctx.note(f"evaluate/{path.name} could not be read as a table ({err})")
        return _EvaluationFiles(table, parameters if isinstance(parameters, dict) else None, tables)
    return None


def _is_count(column: pd.Series) -> bool:
    """Whether a column of an evaluation table holds counts (seeds, folds, sizes)."""
    name = str(column.name)
    countish = name in ("seed", "fold", "k", "n") or name.startswith(("n_", "participants_"))
    values = pd.to_numeric(column, errors="coerce").dropna()
    whole = bool(values.empty or (values == values.round()).all())
    return (countish or name.endswith("_n")) and whole


_PARTICIPANT_HEADERS = frozenset(
    {"participant", "participant_id", "person", "subject", "id", "pid"}
)
"""CSV headers that name a column of participants (besides the study's own id column)."""

EVALUATE_COLUMNS = frozenset(
    {"model", "split", "seed", "fold", "metric", "versus", "verdict", "interval", "n"}
    | {"estimate", "ci_low", "ci_high", "ci_level", "n_boot", "n_groups", "seconds"}
    | {"n_train", "n_test", "participants_train", "participants_test"}
    | {f"{m}{end}" for m in ("r", "rho", "acc", "f1", "mse") for end in ("", "_mean", "_sd", "_n")}
)
"""The columns of the CSV files ``longitudinal evaluate`` writes: none holds a participant."""

EVALUATE_FIELDS = frozenset(
    {"baselines", "bayes", "bootstrap", "clipping", "holdout_caveat", "k", "left_out"}
    | {"holdout_test_participants", "metric_units", "metrics", "models", "n_dropped"}
    | {"n_participants", "n_ratings", "notes", "package_version", "paper", "prediction"}
    | {"predictions", "predictors_source", "random_slope", "raw_csv", "scale", "scheduler"}
    | {"schemes", "seconds", "seeds", "session_features", "sizes", "splits", "states"}
    | {"summary", "threshold", "threshold_rule", "threshold_source", "traits", "undefined"}
    | {"user_models"}
)
"""The fields of the ``evaluation.json`` that ``longitudinal evaluate`` writes: only
``left_out`` names participants (and ``notes``, the fits' warnings, might)."""


def _raw_left_out(data: bytes) -> dict | None:
    """``left_out`` of an ``evaluation.json`` as evaluate wrote it (raw ids), or None."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    found = value.get("left_out") if isinstance(value, dict) else None
    return found if isinstance(found, dict) else None


def _same_key(folder: Path, ctx: ReportContext) -> bool:
    """Whether the report in ``folder`` was made with this report's pseudonym key."""
    try:
        made = json.loads((folder / PROVENANCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    found = made.get("pseudonym_key_fingerprint") if isinstance(made, dict) else None
    return found is not None and found == ctx.key_fingerprint


def _pseudonymized(
    name: str,
    data: bytes,
    ctx: ReportContext,
    left_out: dict | None,
    names: Mapping[str, str] | None = None,
) -> tuple[bytes | None, str | None]:
    """Return a file of evaluate/ as the pseudonymized report copies it, or None and why not.

    Ids are replaced where evaluate writes them, never searched for in sentences, and what
    evaluate does not write is checked for raw ids as whole values:

    * ``evaluation.json``: each participant of ``left_out`` and the id at the head of its
      line (:func:`~longitudinal.report.pseudonyms.pseudonymize_left_out`); its ``notes``
      (the fits' warnings) get pseudonyms where they quote a participant
      (:func:`~longitudinal.report.pseudonyms.pseudonymize_message`), and a note quoting a
      raw id elsewhere or holding one as a word is left out, the copy saying how many; not
      copied when a field evaluate does not write (:data:`EVALUATE_FIELDS`) holds a raw id
      as a key or a string;
    * ``table.md``: its left-out lines, found as evaluate writes them from ``left_out``,
      are replaced by the same lines under pseudonyms; not copied when another line lists a
      raw id (``- id: ...``) or a table cell below a header is one;
    * a CSV file: not copied when a header names participants (the study's id column,
      ``participant``, ``participant_id``, ``person``, ``subject``, ``id``, ``pid``), or a
      text column evaluate does not write (:data:`EVALUATE_COLUMNS`) holds a raw id;
    * ``metrics.svg``: not copied when a text of the figure is a raw id that is not a
      number (a number there is a tick label); the PNG and PDF of the figure are not read.

    A raw id that is also a name the study uses (a wave, a column) is not taken for an id.
    ``names`` maps who ``left_out`` may name to the pseudonym (default the report's ids; the
    copy a previous report made with the same key names its pseudonyms, kept as they are).
    """
    names = ctx.id_map if names is None else names
    if name.endswith((".png", ".pdf")):
        return data, None
    text = data.decode("utf-8", errors="replace")
    raw = {r for r in ctx.id_map if r not in ctx.study_names()}
    if name.endswith(".csv"):
        return (None, "names participants") if _csv_names(text, ctx, raw) else (data, None)
    if name.endswith(".svg"):
        return (None, "names participants") if _svg_names(text, raw) else (data, None)
    if name == "evaluation.json":
        return _pseudonymized_json(data, text, ctx, raw, names)
    if name == "table.md":
        return _pseudonymized_table(text, raw, left_out, names)
    return data, None


def _pseudonymized_json(
    data: bytes, text: str, ctx: ReportContext, raw: set[str], names: Mapping[str, str]
) -> tuple[bytes | None, str | None]:
    """``evaluation.json`` under pseudonyms (see :func:`_pseudonymized`)."""
    from longitudinal._output import json_text
    from longitudinal.report.pseudonyms import pseudonymize_left_out, pseudonymize_message

    try:
        value = json.loads(text)
    except ValueError:
        return None, "is not valid JSON, so it cannot be checked for participant ids"
    if not isinstance(value, dict):
        return (None, "names participants") if _json_names(value, raw) else (data, None)
    changed = False
    info = value.get("left_out")
    if isinstance(info, dict) and info.get("participants"):
        shown, withheld = pseudonymize_left_out(info, names)
        if withheld:
            return None, (
                f"names {withheld} participant(s) left out that have no pseudonym (not in "
                "participants.csv) or not as evaluate writes them"
            )
        value["left_out"], changed = shown, True
    notes = value.get("notes")
    if isinstance(notes, list):
        kept = []
        for note in notes:
            shown = note
            if isinstance(note, str):
                shown = pseudonymize_message(
                    note, ctx.id_map, keep=ctx.study_names(), id_col=ctx.config.id_col
                )
                if shown is None or _holds_word(shown, raw):
                    continue
            kept.append(shown)
        if len(kept) < len(notes):
            kept.append(
                f"{len(notes) - len(kept)} note(s) left out of this copy: they may name a "
                "participant (the study's evaluate/evaluation.json holds them)"
            )
        if kept != notes:
            value["notes"], changed = kept, True
    other = {k: v for k, v in value.items() if k not in EVALUATE_FIELDS}
    if _json_names(other, raw):
        return None, "names participants"
    return (json_text(value).encode("utf-8") if changed else data), None


def _pseudonymized_table(
    text: str, raw: set[str], left_out: dict | None, names: Mapping[str, str]
) -> tuple[bytes | None, str | None]:
    """``table.md`` under pseudonyms (see :func:`_pseudonymized`)."""
    from longitudinal.predict.results import left_out_lines
    from longitudinal.report.pseudonyms import pseudonymize_left_out

    lines = text.split("\n")
    shown: list[str] = []
    if left_out is not None and left_out.get("participants"):
        before = left_out_lines({"left_out": left_out})
        info, withheld = pseudonymize_left_out(left_out, names)
        shown = left_out_lines({"left_out": info})
        starts = [
            k for k in range(len(lines) - len(before) + 1) if lines[k : k + len(before)] == before
        ]
        if withheld or len(starts) != 1:
            return None, "names participants left out, not as evaluation.json says"
        k = starts[0]
        lines[k : k + len(before)] = shown
    body = False  # in the rows of a Markdown table, below its |---| line
    for line in lines:
        if line.startswith("- ") and line not in shown:
            if any(line.startswith(f"- {r}:") for r in raw):
                return None, "names participants"
        if not line.startswith("|"):
            body = False
        elif line.startswith("|---"):
            body = True
        elif body and any(c.strip() in raw for c in line.strip().strip("|").split("|")):
            return None, "names participants"
    return "\n".join(lines).encode("utf-8"), None


def _holds_word(text: str, raw: set[str]) -> bool:
    """Whether ``text`` holds a raw id as a whole word (a number or word of a sentence may)."""
    import re

    words = re.findall(r"[\w.+\-@]+", text)
    return any(w.strip(".") in raw for w in words)


def _json_names(value: object, raw: set[str]) -> bool:
    """Whether a JSON value holds a raw id as a whole key or string."""
    if isinstance(value, dict):
        return any(str(k) in raw or _json_names(v, raw) for k, v in value.items())
    if isinstance(value, list):
        return any(_json_names(v, raw) for v in value)
    return isinstance(value, str) and value in raw


def _csv_names(text: str, ctx: ReportContext, raw: set[str]) -> bool:
    """Whether a CSV file of evaluate/ has a column of participants (see :func:`_pseudonymized`)."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        return False
    header = [h.strip() for h in rows[0]]
    people = {*_PARTICIPANT_HEADERS, ctx.config.id_col.lower()}
    if any(h.lower() in people for h in header):
        return True
    for col, name in enumerate(header):
        if name in EVALUATE_COLUMNS:
            continue
        cells = [r[col].strip().lstrip("'") for r in rows[1:] if col < len(r) and r[col].strip()]
        if any(not _is_number(c) for c in cells) and any(c in raw for c in cells):
            return True
    return False


def _svg_names(text: str, raw: set[str]) -> bool:
    """Whether a text of an SVG figure is a raw id that is not a number (see above)."""
    import html
    import re

    texts = (html.unescape(t).strip() for t in re.findall(r"<text\b[^>]*>([^<]*)</text>", text))
    return any(t in raw and not _is_number(t) for t in texts)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
