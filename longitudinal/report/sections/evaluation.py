"""The "Evaluation" section: the results of ``longitudinal evaluate``, copied into the report."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass

import pandas as pd
from markupsafe import Markup

from longitudinal.report.context import (
    EVALUATION_FILE,
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
            # raw participant ids of evaluation.json, under the report's pseudonyms
            lines = [ctx.scrub(text) for text in left_out_lines(params)]
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
            digits={c: 0 if _is_count(found.metrics[c]) else 3 for c in found.metrics.columns},
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
    link, in the folder or as the folder, is refused with a note). In a pseudonymized report,
    a text file naming a participant by the raw id is not copied and a note says so; when
    that file is metrics.csv, the section is left out.
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
            if ctx.options.pseudonymize and name in ("table.md", "evaluation.json"):
                # the participants left out are named in these two: under their pseudonyms
                data = ctx.scrub(data.decode("utf-8", errors="replace")).encode("utf-8")
            if ctx.options.pseudonymize and _names_participants(name, data, ctx):
                ctx.note(
                    f"{where} names participants; it was not copied into the pseudonymized report"
                )
                continue
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


def _names_participants(name: str, data: bytes, ctx: ReportContext) -> bool:
    """Whether a file of evaluate/ holds a raw participant id.

    A CSV file: any cell equal to a raw id. Other text (JSON, Markdown, SVG): a raw id as a
    whole token (the rule of :meth:`ReportContext.scrub`). A PNG is not text and not read.
    """
    import csv
    import io

    if name.endswith(".png") or not ctx.id_map:
        return False
    text = data.decode("utf-8", errors="replace")
    raw = set(ctx.id_map)
    if name.endswith(".csv"):
        rows = csv.reader(io.StringIO(text, newline=""))
        return any(cell.strip().lstrip("'") in raw for row in rows for cell in row)
    ctx.scrub("")  # builds ctx.id_pattern
    return ctx.id_pattern is not None and ctx.id_pattern.search(text) is not None
