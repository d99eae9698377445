r"""Write APA tables as LaTeX text (no TeX installation is needed to produce them).

Each table is an ``\input``-able fragment: a ``table`` float holding a ``threeparttable``
with the caption above (APA: "Table N" in bold, the title in italics on its own line, set by
the wrapper's ``caption`` options), ``booktabs`` rules and the note in ``tablenotes``. Numeric
columns are aligned on the decimal point with ``r@{}l`` column pairs (the integer part
right-aligned, the point and decimals left-aligned), which needs no package.

The wrapper (:func:`latex_wrapper`) compiles alone with ``pdflatex`` and uses the packages
``inputenc``, ``fontenc``, ``textcomp``, ``geometry``, ``booktabs``, ``threeparttable`` and
``caption``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from longitudinal.manuscript.markup import GroupRow, runs

__all__ = ["PACKAGES", "latex_table", "latex_wrapper"]

PACKAGES = ("inputenc", "fontenc", "textcomp", "geometry", "booktabs", "threeparttable", "caption")
"""The LaTeX packages the wrapper loads (all in every TeX Live and MiKTeX installation)."""

_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\u2212": r"\textminus{}",
    "\u2013": "--",
    "\u2014": "---",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "²": r"\textsuperscript{2}",
    "±": r"$\pm$",
    "→": r"$\rightarrow$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "×": r"$\times$",
    "η": r"$\eta$",
    "α": r"$\alpha$",
    "ω": r"$\omega$",
    "χ": r"$\chi$",
    "ε": r"$\varepsilon$",
    "Δ": r"$\Delta$",
    "σ": r"$\sigma$",
    "τ": r"$\tau$",
    "ρ": r"$\rho$",
    "π": r"$\pi$",
    "μ": r"$\mu$",
    "…": r"\ldots{}",
    "≈": r"$\approx$",
    "\u2018": "`",
    "\u2019": "'",
    "\u201c": "``",
    "\u201d": "''",
    "\u00a0": "~",
}


def escape(text: str) -> str:
    r"""Escape plain text for LaTeX (special characters, minus signs, Greek letters).

    Examples
    --------
    >>> from longitudinal.manuscript.latex import escape
    >>> print(escape("−0.22 & 5% of η²"))
    \textminus{}0.22 \& 5\% of $\eta$\textsuperscript{2}
    """
    return "".join(_SPECIAL.get(ch, ch) for ch in text)


def _cell(text: str) -> str:
    out = []
    for piece, style in runs(text):
        body = escape(piece)
        if style == "i":
            body = rf"\textit{{{body}}}"
        elif style == "sub":
            body = rf"\textsubscript{{{body}}}"
        out.append(body)
    return "".join(out)


def _split(text: str) -> tuple[str, str] | None:
    """Integer and decimal parts of a numeric cell, or None when it is not one number."""
    if not text or text[0] == "[" or " " in text.strip().replace("< ", "<").replace("> ", ">"):
        return None
    if "." in text:
        left, right = text.split(".", 1)
        return left, "." + right
    return text, ""


def latex_table(table: Any) -> str:
    r"""Return an ``\input``-able LaTeX fragment of one :class:`ApaTable`.

    Parameters
    ----------
    table : ApaTable
        The table.

    Returns
    -------
    str
        ``\begin{table}`` ... ``\end{table}``, labelled ``tab:<name>``.
    """
    spec, head = [], []
    for j, column in enumerate(table.columns):
        if table.numeric[j]:
            spec.append("r@{}l")
            head.append(rf"\multicolumn{{2}}{{c}}{{{_cell(column)}}}")
        else:
            spec.append("l")
            head.append(_cell(column))
    width = sum(2 if n else 1 for n in table.numeric)
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        r"\begin{threeparttable}",
        rf"\caption{{{_cell(table.title)}}}",
        rf"\label{{tab:{table.name}}}",
        rf"\begin{{tabular}}{{{''.join(spec)}}}",
        r"\toprule",
        " & ".join(head) + r" \\",
        r"\midrule",
    ]
    for row in table.rows:
        if isinstance(row, GroupRow):
            lines.append(rf"\multicolumn{{{width}}}{{l}}{{{_cell(row.label)}}} \\")
            continue
        cells = []
        for j, text in enumerate(row):
            parts = _split(text) if table.numeric[j] else None
            if not table.numeric[j]:
                cells.append(_cell(text))
            elif parts is None:
                cells.append(rf"\multicolumn{{2}}{{c}}{{{_cell(text)}}}")
            else:
                # a trailing space of the integer part ("< ") is kept as a tie: TeX drops
                # plain spaces at the end of a cell
                left = _cell(parts[0].rstrip()) + ("~" if parts[0].endswith(" ") else "")
                cells.append(f"{left} & {_cell(parts[1])}")
        lines.append(" & ".join(cells) + r" \\")
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        r"\begin{tablenotes}[flushleft]",
        r"\footnotesize",
        rf"\item \textit{{Note.}} {_cell(table.note)}",
        r"\end{tablenotes}",
        r"\end{threeparttable}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def latex_wrapper(files: Sequence[str], *, title: str) -> str:
    r"""Return a document that ``\input``\ s the table files and compiles alone with pdflatex.

    Parameters
    ----------
    files : sequence of str
        Names of the table files (``table1.tex``), relative to the wrapper.
    title : str
        Shown at the top of the first page.
    """
    inputs = "\n\\clearpage\n".join(rf"\input{{{name}}}" for name in files)
    return (
        "\\documentclass[11pt]{article}\n"
        "\\usepackage[utf8]{inputenc}\n"
        "\\usepackage[T1]{fontenc}\n"
        "\\usepackage{textcomp}\n"
        "\\usepackage[letterpaper,landscape,margin=1in]{geometry}\n"
        "\\usepackage{booktabs}\n"
        "\\usepackage{threeparttable}\n"
        "\\usepackage[labelfont=bf,textfont=it,labelsep=newline,singlelinecheck=false,"
        "justification=raggedright,skip=4pt]{caption}\n"
        "\\setlength{\\tabcolsep}{4pt}\n"
        "\\begin{document}\n"
        f"\\noindent {escape(title)}\n"
        "\\bigskip\n\n"
        f"{inputs}\n"
        "\\end{document}\n"
    )
