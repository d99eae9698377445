"""Readers of the manuscript files for the tests (not a conftest: ``tests/conftest.py`` holds
that module name): Word tables, LaTeX tables, printed numbers.

Each reader turns a table back into a grid of plain text (head first, a spanning group row
as its label alone), so a test can compare the Word and the LaTeX table cell by cell and
check each printed number against the report's CSV.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

_LATEX = [
    (r"\textminus{}", "\u2212"),
    (r"\textless{}", "<"),
    (r"\textgreater{}", ">"),
    (r"\textsuperscript{2}", "²"),
    (r"\&", "&"),
    ("~", " "),
    (r"\%", "%"),
    (r"\_", "_"),
    ("---", "\u2014"),
    ("--", "\u2013"),
    (r"$\eta$", "η"),
    (r"$\alpha$", "α"),
    (r"$\omega$", "ω"),
    (r"$\chi$", "χ"),
    (r"$\varepsilon$", "ε"),
    (r"$\rightarrow$", "→"),
    (r"$\pi$", "π"),
]


def latex_text(cell: str) -> str:
    """Plain text of one LaTeX cell (the inverse of the writer's escaping)."""
    cell = cell.strip()
    cell = re.sub(r"\\multicolumn\{\d+\}\{[lcr]\}\{(.*)\}$", r"\1", cell)
    cell = cell.removeprefix("{}")  # the guard of a cell that begins with [ or *
    for source, target in _LATEX:
        cell = cell.replace(source, target)
    cell = re.sub(r"\\text(?:it|subscript)\{([^{}]*)\}", r"\1", cell)
    return cell


def _columns(spec: str) -> list[int]:
    """Cells per column of a tabular spec: 2 for an ``r@{}l`` pair, 1 for ``l``."""
    out = []
    for token in re.findall(r"r@\{\}l|[lcr]", spec):
        out.append(2 if token.startswith("r@") else 1)
    return out


def read_latex(path: Path) -> list[list[str]]:
    """Grid of a ``table<N>.tex`` file: head, then body rows, decimal pairs joined."""
    text = path.read_text(encoding="utf-8")
    spec = re.search(r"\\begin\{tabular\}\{(.*)\}\n", text).group(1)
    widths = _columns(spec)
    body = text.split("\\toprule\n", 1)[1].split("\\bottomrule", 1)[0]
    grid = []
    for line in body.splitlines():
        if not line.endswith(r"\\"):
            continue
        line = line[: -len(r"\\")].strip()
        if line.startswith(r"\multicolumn{" + str(sum(widths)) + "}"):
            grid.append([latex_text(line)])
            continue
        cells = re.split(r"(?<!\\)&", line)
        row, at = [], 0
        for width in widths:
            piece = cells[at].strip()
            if width == 2 and piece.startswith(r"\multicolumn{2}"):
                row.append(latex_text(piece))
                at += 1
            elif width == 2:
                row.append(latex_text(piece + cells[at + 1].strip()))
                at += 2
            else:
                row.append(latex_text(piece))
                at += 1
        assert at == len(cells), (line, widths)
        grid.append(row)
    return grid


def read_docx(path: Path) -> list[list[list[str]]]:
    """Grids of every table of a Word file (merged group rows as their label alone)."""
    import docx

    document = docx.Document(str(path))
    grids = []
    for table in document.tables:
        grid = []
        for row in table.rows:
            texts = [cell.text for cell in row.cells]
            grid.append(texts[:1] if len(set(texts)) == 1 and len(texts) > 1 else texts)
        grids.append(grid)
    return grids


def agrees(text: str, value: float) -> bool:
    """Whether a printed number is ``value`` at the precision it is printed with.

    ``< .001`` and ``> .999`` hold for values beyond them; ``–`` for a missing value. A
    printed number must use the minus sign U+2212, never a hyphen.
    """
    text = text.strip()
    if text == "\u2013":
        return value is None or not math.isfinite(value)
    if "-" in text:
        return False
    if text.startswith("<"):
        return value < float(text[1:].strip())
    if text.startswith(">"):
        return value > float(text[1:].strip())
    number = text.replace("\u2212", "-")
    decimals = len(number.split(".", 1)[1]) if "." in number else 0
    return abs(float(number) - value) <= 0.5 * 10**-decimals + 1e-9


def agrees_ci(text: str, low: float, high: float) -> bool:
    """Whether ``[a, b]`` prints ``low`` and ``high`` at its precision."""
    match = re.fullmatch(r"\[(.+), (.+)\]", text.strip())
    return bool(match) and agrees(match.group(1), low) and agrees(match.group(2), high)


def readers() -> SimpleNamespace:
    """The readers above, as one object (the ``reader`` fixture of the tests)."""
    return SimpleNamespace(
        latex=read_latex, docx=read_docx, agrees=agrees, agrees_ci=agrees_ci, text=latex_text
    )
