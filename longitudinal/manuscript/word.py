"""Write APA tables and results text to Word documents (python-docx).

APA 7 tables: "Table N" in bold, the title in italic title case on the next line, horizontal
rules only (above and below the column heads, below the body), the note below starting with
*Note.* in italics. Pages are landscape Letter with 1-inch margins so that the wide tables
(pairwise changes, the empathy models) fit; the text is Times New Roman, 10 pt in tables.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

from longitudinal.narrate.markup import GroupRow, plain, runs

__all__ = ["write_results_docx", "write_tables_docx"]

_FONT = "Times New Roman"


def _require_docx() -> Any:
    try:
        import docx
    except ModuleNotFoundError as err:  # pragma: no cover - python-docx is a dependency
        if err.name != "docx":
            raise
        raise ImportError(
            "the manuscript's Word files need python-docx: pip install python-docx"
        ) from err
    return docx


def _document(landscape: bool) -> Any:
    docx = _require_docx()
    from docx.enum.section import WD_ORIENT
    from docx.shared import Inches, Pt

    document = docx.Document()
    style = document.styles["Normal"]
    style.font.name = _FONT
    style.font.size = Pt(12)
    section = document.sections[0]
    if landscape:
        section.orientation = WD_ORIENT.LANDSCAPE
        section.page_width, section.page_height = Inches(11), Inches(8.5)
    else:
        section.page_width, section.page_height = Inches(8.5), Inches(11)
    for side in ("left_margin", "right_margin", "top_margin", "bottom_margin"):
        setattr(section, side, Inches(1))
    return document


#: Characters a Word document (XML 1.0) cannot hold, and the other control characters: each
#: becomes a space, as in the LaTeX and Markdown files.
_UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def _add_runs(paragraph: Any, text: str, *, size: Any = None, italic: bool = False) -> None:
    for piece, style in runs(text):
        run = paragraph.add_run(_UNWRITABLE.sub(" ", piece))
        run.italic = italic or style == "i"
        run.font.subscript = style == "sub"
        if size is not None:
            run.font.size = size


def _borders(cell: Any, **edges: bool) -> None:
    """Set single rules on the named edges of a cell (``top``, ``bottom``) and none elsewhere."""
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    props = cell._tc.get_or_add_tcPr()
    borders = OxmlElement("w:tcBorders")
    for edge in ("top", "left", "bottom", "right"):
        element = OxmlElement(f"w:{edge}")
        if edges.get(edge):
            element.set(qn("w:val"), "single")
            element.set(qn("w:sz"), "6")
            element.set(qn("w:color"), "000000")
        else:
            element.set(qn("w:val"), "nil")
        borders.append(element)
    props.append(borders)


def _widths(grid: Any, table: Any) -> None:
    """Give the label column room (2.6 in) and share the rest of the 9-in line equally."""
    from docx.shared import Inches

    first = 2.6 if len(table.columns) > 3 else 4.0
    rest = (9.0 - first) / max(len(table.columns) - 1, 1)
    grid.autofit = False
    for j, column in enumerate(grid.columns):
        column.width = Inches(first if j == 0 else rest)
    for row in grid.rows:
        for j, cell in enumerate(row.cells):
            cell.width = Inches(first if j == 0 else rest)
            for paragraph in cell.paragraphs:
                paragraph.paragraph_format.space_after = 0
                paragraph.paragraph_format.space_before = 0


def _add_table(document: Any, table: Any) -> None:
    from docx.enum.table import WD_TABLE_ALIGNMENT
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Pt

    small = Pt(10)
    head = document.add_paragraph()
    head.add_run(f"Table {table.number}").bold = True
    title = document.add_paragraph()
    _add_runs(title, table.title, italic=True)
    n_cols = len(table.columns)
    grid = document.add_table(rows=1 + len(table.rows), cols=n_cols)
    grid.alignment = WD_TABLE_ALIGNMENT.CENTER
    last = len(table.rows)
    for j, text in enumerate(table.columns):
        cell = grid.rows[0].cells[j]
        paragraph = cell.paragraphs[0]
        _add_runs(paragraph, text, size=small)
        paragraph.alignment = WD_ALIGN_PARAGRAPH.CENTER if j else WD_ALIGN_PARAGRAPH.LEFT
        _borders(cell, top=True, bottom=True)
    for i, row in enumerate(table.rows, start=1):
        cells = grid.rows[i].cells
        if isinstance(row, GroupRow):
            merged = cells[0].merge(cells[-1])
            paragraph = merged.paragraphs[0]
            _add_runs(paragraph, row.label, size=small)
            _borders(merged, bottom=i == last)
            continue
        for j, text in enumerate(row):
            paragraph = cells[j].paragraphs[0]
            _add_runs(paragraph, text, size=small)
            if table.numeric[j]:
                paragraph.alignment = WD_ALIGN_PARAGRAPH.RIGHT
            _borders(cells[j], bottom=i == last)
    _widths(grid, table)
    note = document.add_paragraph()
    label = note.add_run("Note.")
    label.italic = True
    label.font.size = small
    _add_runs(note, " " + table.note, size=small)


def _save(document: Any, path: str | os.PathLike[str]) -> None:
    """Save with fixed zip timestamps, so the same content gives byte-identical files."""
    import io
    import zipfile

    buffer = io.BytesIO()
    document.save(buffer)
    buffer.seek(0)
    with (
        zipfile.ZipFile(buffer) as source,
        zipfile.ZipFile(os.fspath(path), "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(fixed, source.read(info.filename))


def write_tables_docx(tables: Sequence[Any], path: str | os.PathLike[str]) -> None:
    """Write APA tables to one Word document, one table per page.

    Parameters
    ----------
    tables : sequence of ApaTable
        The tables, in order.
    path : str or path-like
        The ``.docx`` file to write.
    """
    document = _document(landscape=True)
    for k, table in enumerate(tables):
        if k:
            document.add_page_break()
        _add_table(document, table)
    _save(document, path)


def write_results_docx(
    paragraphs: Sequence[tuple[str, str]], path: str | os.PathLike[str], *, title: str
) -> None:
    """Write the results text to a Word document.

    Parameters
    ----------
    paragraphs : sequence of (str, str)
        ``(heading, text)`` pairs of marked-up text (:mod:`longitudinal.narrate.markup`:
        ``*t*`` italic, escapes read as the characters they stand for); an empty heading
        continues the previous section.
    path : str or path-like
        The ``.docx`` file to write.
    title : str
        The document's first line and its title property (plain text; the property holds
        its first 255 characters).

    Notes
    -----
    A character a Word document cannot hold (a control character other than tab and line
    break, a lone surrogate, U+FFFE, U+FFFF), and the other control characters, become
    spaces, as they do in the LaTeX and Markdown files.
    """
    title = _UNWRITABLE.sub(" ", title)
    document = _document(landscape=False)
    document.core_properties.title = title[:255]  # the property holds at most 255 characters
    document.add_heading(title, level=1)
    for heading, text in paragraphs:
        if heading:
            document.add_heading(_UNWRITABLE.sub(" ", plain(heading)), level=2)
        _add_runs(document.add_paragraph(), text)
    _save(document, path)
