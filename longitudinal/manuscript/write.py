"""Write a report's ``manuscript/`` folder: APA tables (Word, LaTeX) and results text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longitudinal.manuscript.latex import latex_table, latex_wrapper
from longitudinal.manuscript.markup import runs
from longitudinal.manuscript.table import ApaTable
from longitudinal.manuscript.tables import apa_tables
from longitudinal.manuscript.word import write_results_docx, write_tables_docx

__all__ = ["FORMATS", "results_paragraphs", "write_manuscript"]

FORMATS = ("html", "docx", "latex")
"""The output formats of ``longitudinal report --formats`` (html: the report page itself)."""


def _gates(fitted: Any) -> list[str]:
    from longitudinal.predict._gates import fit_problem, sampling_problem

    lmm = fit_problem(fitted.lmm)
    clmm = fit_problem(fitted.clmm) if fitted.clmm is not None else None
    bayes = sampling_problem(fitted.bayes)
    return [
        text
        for text in (
            lmm and f"The linear mixed model is not interpreted: {lmm}.",
            clmm and f"The ordinal mixed model is shown, not interpreted: {clmm}.",
            bayes and f"The Bayesian ordinal model is not interpreted: {bayes}.",
        )
        if text
    ]


def manuscript_tables(ctx: Any) -> list[ApaTable]:
    """Return the APA tables of a computed report (its ``ReportContext``)."""
    cfg = ctx.config
    section = ctx.results.get("predictors")
    fitted = getattr(section, "fitted", None)
    meta = fitted.meta if fitted is not None else {}
    return apa_tables(
        ctx.tables,
        labels=ctx.labels,
        waves=list(cfg.waves),
        scale_min=cfg.ratings.scale_min,
        scale_max=cfg.ratings.scale_max,
        ci_level=ctx.options.ci_level,
        time_unit=ctx.growth_time_unit,
        n_obs=meta.get("n_obs"),
        n_people=meta.get("n_participants"),
        gates=_gates(fitted) if fitted is not None else (),
    )


def results_paragraphs(ctx: Any) -> list[tuple[str, str]]:
    """``(heading, text)`` of every analysis the report narrates, in page order."""
    out: list[tuple[str, str]] = []
    for column, _, _ in ctx.states:
        result = ctx.results.get(column)
        if result is None:
            continue
        text = result.to_apa(label=ctx.labels[column], time_unit=ctx.growth_time_unit)
        out.append((f"Change in {ctx.labels[column]}", text))
    section = ctx.results.get("predictors")
    fitted = getattr(section, "fitted", None)
    if fitted is not None:
        out.append(("What predicts empathy", fitted.to_apa()))
    return out


def _markdown(text: str) -> str:
    pieces = []
    for piece, style in runs(text):
        pieces.append(
            f"*{piece}*" if style == "i" else f"<sub>{piece}</sub>" if style == "sub" else piece
        )
    return "".join(pieces)


def write_manuscript(ctx: Any, folder: Path, *, formats: Sequence[str]) -> list[Path]:
    """Write the manuscript files into ``folder`` and return their paths.

    ``tables.docx`` and ``results.docx`` (docx), ``tables.tex`` with ``table<N>.tex``
    (latex) and ``results.md`` (either).
    """
    tables = manuscript_tables(ctx)
    paragraphs = results_paragraphs(ctx)
    title = f"Results: {ctx.config.name}"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    if "docx" in formats:
        write_tables_docx(tables, folder / "tables.docx")
        write_results_docx(paragraphs, folder / "results.docx", title=title)
        written += [folder / "tables.docx", folder / "results.docx"]
    if "latex" in formats:
        names = []
        for table in tables:
            name = f"table{table.number}.tex"
            (folder / name).write_text(latex_table(table), encoding="utf-8", newline="\n")
            names.append(name)
            written.append(folder / name)
        wrapper = latex_wrapper(names, title=f"Tables: {ctx.config.name}")
        (folder / "tables.tex").write_text(wrapper, encoding="utf-8", newline="\n")
        written.append(folder / "tables.tex")
    lines = [f"# {title}", ""]
    heading = None
    for head, text in paragraphs:
        if head and head != heading:
            lines += [f"## {head}", ""]
            heading = head
        lines += [_markdown(text), ""]
    (folder / "results.md").write_text("\n".join(lines), encoding="utf-8", newline="\n")
    written.append(folder / "results.md")
    return written
