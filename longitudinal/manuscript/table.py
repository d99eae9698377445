"""The table model: an APA table as data, before it is written to Word or LaTeX.

A cell is text with a small inline markup that both writers understand
(:mod:`longitudinal.narrate.markup`): ``*F*`` is italic and ``_{G}`` a subscript (``η²_{G}``);
text from the study enters a cell through :func:`~longitudinal.narrate.markup.literal`, so it
is never read as markup. A row is a tuple of cells, or a
:class:`GroupRow` (a label spanning the table, e.g. the scale the next rows belong to).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from _empathic_base.results import Result
from longitudinal.narrate.markup import GroupRow, plain

__all__ = ["ApaTable", "GroupRow"]


@dataclass(frozen=True, eq=False, repr=False)
class ApaTable(Result):
    """One APA 7 table: number, title, column heads, body rows and a note.

    Attributes
    ----------
    number : int
        The table's number (``Table 1``).
    name : str
        Short name; the LaTeX file is ``table<number>.tex`` and its label ``tab:<name>``.
    title : str
        The title in title case (printed in italics above the table).
    columns : tuple of str
        Column heads (marked-up text: statistics in ``*italics*``).
    rows : tuple
        Each a tuple of cell texts (as many as columns) or a :class:`GroupRow`.
    note : str
        The general note printed below (abbreviations, intervals, corrections, n, exclusions).
    numeric : tuple of bool
        Which columns hold numbers (aligned on the decimal point in LaTeX, right-aligned in
        Word); by default every column but the first.
    sources : tuple of str
        The report tables (``tables/<name>.csv``) the numbers come from.
    """

    number: int
    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...] | GroupRow, ...]
    note: str
    numeric: tuple[bool, ...] = ()
    sources: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for row in self.rows:
            if not isinstance(row, GroupRow) and len(row) != len(self.columns):
                raise ValueError(
                    f"table {self.number} ({self.name}): a row has {len(row)} cells for "
                    f"{len(self.columns)} columns: {row!r}"
                )
        if not self.numeric:
            numeric = (False,) + (True,) * (len(self.columns) - 1)
            object.__setattr__(self, "numeric", numeric)

    def grid(self) -> list[list[str]]:
        """Return the table as plain text, head first; a group row is its label alone."""
        out = [[plain(c) for c in self.columns]]
        for row in self.rows:
            out.append([plain(row.label)] if isinstance(row, GroupRow) else [plain(c) for c in row])
        return out

    def _title(self) -> str:
        return f"Table {self.number}: {self.title} ({len(self.rows)} rows)"

    def _parts(self):
        import pandas as pd

        grid = self.grid()
        body = [r + [""] * (len(grid[0]) - len(r)) for r in grid[1:]]
        return [(plain(self.title), pd.DataFrame(body, columns=grid[0]))]

    def to_docx(self, path) -> None:
        """Write this table alone to a Word document (see :func:`write_docx`)."""
        from longitudinal.manuscript.word import write_tables_docx

        write_tables_docx([self], path)

    def to_latex(self) -> str:
        r"""Return this table as an ``\input``-able LaTeX fragment (see :func:`latex_table`)."""
        from longitudinal.manuscript.latex import latex_table

        return latex_table(self)
