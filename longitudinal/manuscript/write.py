"""Write a report's ``manuscript/`` folder: APA tables (Word, LaTeX) and results text."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from longitudinal._wording import instrument_title
from longitudinal.manuscript.latex import latex_table, latex_wrapper
from longitudinal.manuscript.table import ApaTable
from longitudinal.manuscript.tables import ScaleScoring, apa_tables
from longitudinal.manuscript.word import write_results_docx, write_tables_docx
from longitudinal.narrate.gates import gate_sentences
from longitudinal.narrate.markup import (
    escape_markdown,
    literal,
    markdown_literals,
    to_markdown,
)

__all__ = ["FORMATS", "results_paragraphs", "write_manuscript"]

FORMATS = ("html", "docx", "latex")
"""The output formats of ``longitudinal report --formats`` (html: the report page itself)."""


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
        n_participants=meta.get("n_participants"),
        gates=gate_sentences(fitted, medium="manuscript") if fitted is not None else (),
        scoring=study_scoring(ctx),
    )


def study_scoring(ctx: Any) -> list[ScaleScoring]:
    """How the study's own instruments were scored, for the note of the descriptives table.

    One entry per instrument whose scales the table shows (states, then traits), or one per
    scale when its scales differ in rule, items or range. Named as the report names them.
    """
    from longitudinal.study.frames import scale_column

    shown = []
    for name in ("descriptives", "traits"):
        table = ctx.tables.get(name)
        if table is not None and not table.empty:
            shown += [str(c) for c in dict.fromkeys(table["scale"])]
    order = {column: i for i, column in enumerate(shown)}
    found: list[tuple[int, ScaleScoring]] = []
    for name, instrument in ctx.study.instruments.items():
        keys = [key for key in instrument.scales if scale_column(name, key.name) in order]
        if not keys:
            continue
        rules = {(k.scoring, k.n_items, *k.score_range, k.multiplier) for k in keys}
        if len(rules) == 1:
            groups = [(instrument_title(instrument), keys)]
        else:
            groups = [(ctx.labels.get(scale_column(name, k.name), k.name), [k]) for k in keys]
        for title, group in groups:
            key = group[0]
            low, high = key.score_range
            entry = ScaleScoring(
                name=title,
                scoring=key.scoring,
                n_items=key.n_items,
                low=low,
                high=high,
                multiplier=key.multiplier,
                n_scales=len(group),
            )
            found.append((min(order[scale_column(name, k.name)] for k in group), entry))
    return [entry for _, entry in sorted(found, key=lambda pair: pair[0])]


def results_paragraphs(ctx: Any) -> list[tuple[str, str]]:
    """``(heading, text)`` of every analysis the report narrates, in page order.

    Both are marked-up text (:mod:`longitudinal.narrate.markup`): the study's labels enter
    through :func:`~longitudinal.narrate.markup.literal`.
    """
    out: list[tuple[str, str]] = []
    for column, _, _ in ctx.states:
        result = ctx.results.get(column)
        if result is None:
            continue
        text = result.to_apa(
            label=ctx.labels[column],
            time_unit=ctx.growth_time_unit,
            left_out=_left_out(ctx, column),
        )
        out.append((f"Change in {literal(ctx.labels[column])}", text))
    section = ctx.results.get("predictors")
    fitted = getattr(section, "fitted", None)
    if fitted is not None:
        out.append(("What predicts empathy", fitted.to_apa()))
        r2 = ctx.tables.get("empathy_r2")
        if r2 is not None and not r2.empty:
            from longitudinal.narrate.sentences import describe_r2

            out.append(("What predicts empathy", literal(ctx.own_names(describe_r2(r2)))))
    return out


def _left_out(ctx: Any, column: str) -> str | None:
    """Why the participants left out of a scale's complete cases have no score, or None."""
    models = ctx.tables.get("change_models")
    if models is None or models.empty or "rm_left_out" not in models.columns:
        return None
    hit = models.loc[models["scale"] == column, "rm_left_out"]
    text = hit.iloc[0] if len(hit) else None
    return text if isinstance(text, str) and text else None


def write_manuscript(ctx: Any, folder: Path, *, formats: Sequence[str]) -> list[Path]:
    """Write the manuscript files into ``folder`` and return their paths.

    ``tables.docx`` and ``results.docx`` (docx), ``tables.tex`` with ``table<N>.tex``
    (latex) and ``results.md`` (either). The results text is built once with the study's
    text escaped for Markdown (:func:`~longitudinal.narrate.markup.markdown_literals`);
    the Word writer reads it back as the study wrote it.
    """
    tables = manuscript_tables(ctx)
    with markdown_literals():
        paragraphs = results_paragraphs(ctx)
    title = f"Results: {ctx.config.name}"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    if "docx" in formats:
        write_tables_docx(tables, folder / "tables.docx")
        write_results_docx(paragraphs, folder / "results.docx", title=title)
        written += [folder / "tables.docx", folder / "results.docx"]
    if "latex" in formats:
        names, texts = [], []
        for table in tables:
            name = f"table{table.number}.tex"
            texts.append(latex_table(table))
            (folder / name).write_text(texts[-1], encoding="utf-8", newline="\n")
            names.append(name)
            written.append(folder / name)
        wrapper = latex_wrapper(names, title=f"Tables: {ctx.config.name}", tables=texts)
        (folder / "tables.tex").write_text(wrapper, encoding="utf-8", newline="\n")
        written.append(folder / "tables.tex")
    lines = [f"# Results: {escape_markdown(ctx.config.name)}", ""]
    heading = None
    for head, text in paragraphs:
        if head and head != heading:
            lines += [f"## {to_markdown(head)}", ""]
            heading = head
        lines += [to_markdown(text), ""]
    (folder / "results.md").write_text("\n".join(lines), encoding="utf-8", newline="\n")
    written.append(folder / "results.md")
    return written
