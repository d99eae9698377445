"""The gallery of the demo report: its figures and its manuscript's tables on the gallery page.

When the site is built, the demo report is built with it: the report that ``make demo`` writes
(``longitudinal demo``, :func:`longitudinal.report.run_demo`, the default seed), into
``demo-report/`` beside the HTML output folder (``docs/_build/demo-report`` for ``make docs``),
so that a fresh clone needs nothing else. The ``demo_gallery_report`` setting (``conf.py``
reads it from the ``EMPATHIC_DOCS_REPORT`` environment variable; ``-D demo_gallery_report=DIR``
on the command line) points the gallery at a report folder built already instead; it must hold
``report.html`` and ``manuscript/tables.docx``.

The gallery page (``gallery.md``) holds the line :data:`MARKER`; while Sphinx reads that page,
the line is replaced by Markdown written here from the report folder, so nothing generated is
ever written into ``docs/``:

* every figure of ``figures/`` (its SVG, or its PNG where there is no SVG), under the heading of
  the report section that shows it, with the caption the report gives it (read from
  ``report.html``); Sphinx copies the files into the site's ``_images/``;
* every table of ``manuscript/tables.docx``, in order, as "Table N: Title" above it and the
  table's note below it, the cells with their italics and subscripts (read back with
  python-docx, as a reader opens the Word file).

Quotes on the gallery page stay as written (no smart quotes), as in the report.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from sphinx.errors import ExtensionError
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

logger = logging.getLogger(__name__)

MARKER = "<!-- the demo report's figures and manuscript tables are written here -->"
"""The line of the gallery page that the generated Markdown replaces."""


@dataclass
class Figure:
    """One figure of the report: its file, its caption and the section that shows it."""

    stem: str
    caption: str = ""
    section: str = ""


@dataclass
class Table:
    """One manuscript table as Markdown pieces: number, title, rows (head first), note."""

    number: str
    title: str = ""
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""


class _ReportFigures(HTMLParser):
    """Collect the figures of ``report.html`` in page order: caption and section heading."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.figures: list[Figure] = []
        self._section = ""
        self._heading: list[str] | None = None
        self._caption: list[str] | None = None
        self._links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "h2":
            self._heading = []
        elif tag == "figcaption":
            self._caption, self._links = [], []
        elif tag == "a" and self._caption is not None:
            self._links.append(dict(attrs).get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2" and self._heading is not None:
            self._section = " ".join("".join(self._heading).split())
            self._heading = None
        elif tag == "figcaption" and self._caption is not None:
            files = [link for link in self._links if link.startswith("figures/")]
            if files:
                caption = " ".join("".join(self._caption).split())
                self.figures.append(Figure(Path(files[0]).stem, caption, self._section))
            self._caption = None

    def handle_data(self, data: str) -> None:
        if self._heading is not None:
            self._heading.append(data)
        elif self._caption is not None and not self._links:  # the caption ends at its links
            self._caption.append(data)


def report_figures(folder: Path) -> list[Figure]:
    """Every figure file of ``folder/figures``: those on the page in page order, then the rest."""
    parser = _ReportFigures()
    parser.feed((folder / "report.html").read_text(encoding="utf-8"))
    stems = {p.stem for p in (folder / "figures").iterdir() if p.suffix in (".svg", ".png")}
    shown = [f for f in parser.figures if f.stem in stems]
    seen = {f.stem for f in shown}
    return shown + [Figure(stem) for stem in sorted(stems - seen)]


def _escape(text: str) -> str:
    from longitudinal.narrate.markup import escape_markdown

    return escape_markdown(text)


def _run_markdown(text: str, *, italic: bool, subscript: bool) -> str:
    """One run of a Word paragraph as Markdown: escaped, in italics or a subscript."""
    if not text.strip():
        return text
    if subscript:
        return "{sub}`" + text.replace("`", "'") + "`"
    if not italic:
        return _escape(text)
    # emphasis must not start or end with a space: the spaces stay outside the stars
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    return f"{lead}*{_escape(text.strip())}*{trail}"


def _paragraph_markdown(paragraph: Any) -> str:
    return "".join(
        _run_markdown(run.text, italic=bool(run.italic), subscript=bool(run.font.subscript))
        for run in paragraph.runs
    ).strip()


def _cell_markdown(cell: Any) -> str:
    return " ".join(filter(None, (_paragraph_markdown(p) for p in cell.paragraphs)))


def manuscript_tables(docx_path: Path) -> list[Table]:
    """Read the APA tables of a manuscript's ``tables.docx``, in order.

    Each table is written as "Table N" (bold), its title (italics), the table and a paragraph
    starting with *Note.*; a row whose cells are one merged cell is a group label.
    """
    import docx
    from docx.table import Table as WordTable

    tables: list[Table] = []
    for block in docx.Document(str(docx_path)).iter_inner_content():
        if isinstance(block, WordTable):
            if not tables or tables[-1].rows:
                raise ExtensionError(f"{docx_path}: a table without its 'Table N' line before it")
            for row in block.rows:
                cells = row.cells
                if len(cells) > 1 and all(c._tc is cells[0]._tc for c in cells):
                    tables[-1].rows.append([_cell_markdown(cells[0])] + [""] * (len(cells) - 1))
                else:
                    tables[-1].rows.append([_cell_markdown(c) for c in cells])
            continue
        text = block.text.strip()
        number = re.fullmatch(r"Table (\d+)", text)
        if number:
            tables.append(Table(number.group(1)))
        elif tables and text and not tables[-1].title:
            tables[-1].title = _paragraph_markdown(block)
        elif tables and tables[-1].rows and text.startswith("Note."):
            tables[-1].note = _paragraph_markdown(block)
    return tables


def _figure_markdown(folder: Path, figure: Figure, docdir: Path) -> list[str]:
    suffix = ".svg" if (folder / "figures" / f"{figure.stem}.svg").is_file() else ".png"
    path = os.path.relpath(folder / "figures" / f"{figure.stem}{suffix}", docdir)
    caption = figure.caption or f"figures/{figure.stem}{suffix}"
    return [
        f"```{{figure}} {Path(path).as_posix()}",
        f":alt: {' '.join(caption.split())}",
        "",
        _escape(caption),
        "```",
        "",
    ]


def _table_markdown(table: Table) -> list[str]:
    lines = [f"```{{list-table}} Table {table.number}: {table.title}", ":header-rows: 1", ""]
    for row in table.rows:
        lines += [f"* - {row[0]}".rstrip()] + [f"  - {cell}".rstrip() for cell in row[1:]]
    lines += ["```", ""]
    if table.note:
        lines += [table.note, ""]
    return lines


def gallery_markdown(folder: Path, docdir: Path) -> str:
    """Write the gallery's Markdown for the report in ``folder``, paths relative to ``docdir``."""
    provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    seed = provenance.get("seed")
    study = "" if seed is None else f", the simulated study of seed {seed}"
    lines = [
        "## The demo report's figures",
        "",
        "The figures of the change report that `make demo` writes (`longitudinal demo --out "
        f"demo-report`{study}), as SVG, under the heading of the "
        "report section that shows each, with the caption the report gives it. The report "
        "itself (`demo-report/report.html`) shows them beside its tables and text; "
        "`demo-report/figures/` holds each also as a 600-dpi PNG and a PDF.",
        "",
    ]
    section = None
    for figure in report_figures(folder):
        heading = figure.section or "Other figures"
        if heading != section:
            lines += [f"### {_escape(heading)}", ""]
            section = heading
        lines += _figure_markdown(folder, figure, docdir)
    lines += [
        "## The manuscript's tables",
        "",
        "The APA tables of the same report, as `demo-report/manuscript/tables.docx` holds them "
        "(the LaTeX files `table1.tex`, `table2.tex`, ... hold the same tables): the title "
        "above each, its note below.",
        "",
    ]
    for table in manuscript_tables(folder / "manuscript" / "tables.docx"):
        lines += _table_markdown(table)
    return "\n".join(lines)


def _choose_report(app: Any, config: Any) -> None:
    """Settle the report folder: the one given, or the demo built now beside the output."""
    given = config.demo_gallery_report
    if given:
        folder = Path(given).resolve()
        missing = [
            name
            for name in ("report.html", "provenance.json", "figures", "manuscript/tables.docx")
            if not (folder / name).exists()
        ]
        if missing:
            raise ExtensionError(
                f"demo_gallery_report (EMPATHIC_DOCS_REPORT) must name a report folder with "
                f"its manuscript; {folder} lacks {', '.join(missing)}"
            )
    else:
        from longitudinal.report import run_demo

        folder = Path(app.outdir).resolve().parent / "demo-report"
        logger.info("building the demo report for the gallery into %s", folder)
        run_demo(folder, overwrite=True)
    config.demo_gallery_report = str(folder)


def _fill(app: Any, docname: str, source: list[str]) -> None:
    """Replace the marker line of the gallery page by the report's figures and tables."""
    if MARKER not in source[0]:
        return
    docdir = (Path(app.srcdir) / docname).parent
    folder = Path(app.config.demo_gallery_report)
    source[0] = source[0].replace(MARKER, gallery_markdown(folder, docdir))


class _QuotesAsWritten(SphinxTransform):
    """Keep the gallery's quotes as the report wrote them (no smart quotes on this page)."""

    default_priority = 700  # before Sphinx's smart quotes (750)

    def apply(self, **kwargs: Any) -> None:
        if self.env.docname == "gallery":
            self.document["support_smartquotes"] = False


def _always_read_gallery(app: Any, env: Any, added: Any, changed: Any, removed: Any) -> list:
    """Read the gallery page on every build: the report it shows is rebuilt each time."""
    return ["gallery"] if "gallery" in env.found_docs else []


def setup(app: Any) -> dict[str, Any]:  # noqa: D103
    app.add_config_value("demo_gallery_report", None, "env", types=frozenset({str, type(None)}))
    app.connect("config-inited", _choose_report)
    app.connect("source-read", _fill)
    app.connect("env-get-outdated", _always_read_gallery)
    app.add_transform(_QuotesAsWritten)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
