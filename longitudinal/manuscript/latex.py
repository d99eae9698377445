r"""Write APA tables as LaTeX text (no TeX installation is needed to produce them).

Each table is an ``\input``-able fragment: a ``table`` float holding a ``threeparttable``
with the caption above (APA: "Table N" in bold, the title in italics on its own line, set by
the wrapper's ``caption`` options), ``booktabs`` rules and the note in ``tablenotes``. Numeric
columns are aligned on the decimal point with ``r@{}l`` column pairs (the integer part
right-aligned, the point and decimals left-aligned), which needs no package.

The wrapper (:func:`latex_wrapper`) compiles alone and names its engine in a comment on its
first line. When every character of the text is one that ``pdflatex`` sets (ASCII, Latin-1
and Latin Extended-A, and the symbols :func:`escape` turns into commands) it is written for
``pdflatex`` with the packages ``inputenc``, ``fontenc``, ``textcomp``, ``geometry``,
``booktabs``, ``threeparttable`` and ``caption``. Text in another script (Cyrillic, Greek
words, CJK, emoji) needs a Unicode engine: the wrapper is then written for ``xelatex`` (or
``lualatex``) and loads ``fontspec`` in place of ``inputenc`` and ``fontenc``, with Noto Serif
or DejaVu Serif as the main font where installed. The table fragments are the same for
either engine. Line breaks, tabs and other control characters in the text become spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from longitudinal.narrate.markup import GroupRow, runs

__all__ = ["PACKAGES", "UNICODE_PACKAGES", "latex_engine", "latex_table", "latex_wrapper"]

PACKAGES = ("inputenc", "fontenc", "textcomp", "geometry", "booktabs", "threeparttable", "caption")
"""The LaTeX packages the pdflatex wrapper loads (all in every TeX Live and MiKTeX installation)."""

UNICODE_PACKAGES = ("fontspec", "geometry", "booktabs", "threeparttable", "caption")
"""The LaTeX packages the xelatex wrapper loads, for text outside what pdflatex sets."""

PDFLATEX_LAST = 0x17F
"""The last code point pdflatex sets with ``inputenc`` and T1 ``fontenc`` (Latin Extended-A)."""

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
#: Line breaks, tabs and other control characters, and the line and paragraph separators.
_BREAKS = {
    ch: " " for ch in [*map(chr, range(0x20)), *map(chr, range(0x7F, 0xA0)), "\u2028", "\u2029"]
}
_SPECIAL.update(_BREAKS)


def escape(text: str) -> str:
    r"""Escape plain text for LaTeX (special characters, minus signs, Greek letters).

    Line breaks, tabs and other control characters become spaces.

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


def _first(cell: str) -> str:
    r"""Guard a row's first cell that begins with ``[`` or ``*`` by ``{}``.

    The cell follows ``\toprule``, ``\midrule`` or ``\\``, which would read a ``[`` as their
    optional argument (a study's label ``[x](...)`` stopped pdflatex) and ``\\`` a ``*`` as
    its star.
    """
    return "{}" + cell if cell.startswith(("[", "*")) else cell


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
        " & ".join([_first(head[0]), *head[1:]]) + r" \\",
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
        lines.append(" & ".join([_first(cells[0]), *cells[1:]]) + r" \\")
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


def latex_engine(text: str) -> tuple[str, str | None]:
    r"""Return the engine that sets LaTeX ``text``, and the first character that decided it.

    ``("pdflatex", None)`` when every character is ASCII, Latin-1 or Latin Extended-A (what
    ``inputenc`` and T1 ``fontenc`` set), else ``("xelatex", ch)`` with the first other
    character.

    Examples
    --------
    >>> from longitudinal.manuscript.latex import escape, latex_engine
    >>> latex_engine(escape("Café study, η² = .01"))
    ('pdflatex', None)
    >>> latex_engine(escape("Исследование"))
    ('xelatex', 'И')
    """
    for ch in text:
        if ord(ch) > PDFLATEX_LAST:
            return "xelatex", ch
    return "pdflatex", None


def _preamble(engine: str, found: str | None) -> str:
    if engine == "pdflatex":
        return (
            "% Compile with pdflatex.\n"
            "\\documentclass[11pt]{article}\n"
            "\\usepackage[utf8]{inputenc}\n"
            "\\usepackage[T1]{fontenc}\n"
            "\\usepackage{textcomp}\n"
        )
    import unicodedata

    assert found is not None  # internal invariant: the character that needs this engine
    name = unicodedata.name(found, "UNNAMED")
    return (
        "% Compile with xelatex (or lualatex), not pdflatex: the text holds characters outside\n"
        f"% what pdflatex sets (the first is U+{ord(found):04X} {name}). A character the main\n"
        "% font lacks is left out with a warning; name a font that has it in \\setmainfont.\n"
        "\\documentclass[11pt]{article}\n"
        "\\usepackage{fontspec}\n"
        "\\IfFontExistsTF{Noto Serif}{\\setmainfont{Noto Serif}}{%\n"
        "  \\IfFontExistsTF{DejaVu Serif}{\\setmainfont{DejaVu Serif}}{}}\n"
    )


def latex_wrapper(files: Sequence[str], *, title: str, tables: Sequence[str] = ()) -> str:
    r"""Return a document that ``\input``\ s the table files and compiles alone.

    Its first line is a comment naming the engine: ``pdflatex``, or ``xelatex`` (or
    ``lualatex``) when the title or a table holds a character outside what pdflatex sets
    (:func:`latex_engine`); the preamble is written for that engine.

    Parameters
    ----------
    files : sequence of str
        Names of the table files (``table1.tex``), relative to the wrapper.
    title : str
        Shown at the top of the first page (plain text).
    tables : sequence of str, optional
        The LaTeX of the table files (:func:`latex_table`), read for the engine they need.

    Returns
    -------
    str
        The document.

    Examples
    --------
    >>> from longitudinal.manuscript.latex import latex_wrapper
    >>> latex_wrapper(["table1.tex"], title="Tables").splitlines()[0]
    '% Compile with pdflatex.'
    >>> latex_wrapper(["table1.tex"], title="Исследование").splitlines()[0][:30]
    '% Compile with xelatex (or lua'
    """
    heading = escape(title)
    engine, found = latex_engine("\n".join([heading, *tables]))
    inputs = "\n\\clearpage\n".join(rf"\input{{{name}}}" for name in files)
    body = (
        "\\usepackage[letterpaper,landscape,margin=1in]{geometry}\n"
        "\\usepackage{booktabs}\n"
        "\\usepackage{threeparttable}\n"
        "\\usepackage[labelfont=bf,textfont=it,labelsep=newline,singlelinecheck=false,"
        "justification=raggedright,skip=4pt]{caption}\n"
        "\\setlength{\\tabcolsep}{4pt}\n"
        "\\begin{document}\n"
        f"\\noindent {heading}\n"
        "\\bigskip\n\n"
        f"{inputs}\n"
        "\\end{document}\n"
    )
    return _preamble(engine, found) + body
