"""How the package's result objects show themselves: a one-line repr, summary(), notebook HTML.

A result class names itself in ``_title`` and lists its main tables in ``_parts``; the mixin
prints them compactly (``summary()``), as one line (``repr``) and as HTML tables in a notebook.
Dataclasses using it are declared with ``repr=False`` so that the mixin's repr is kept.
"""

from __future__ import annotations

import html

import pandas as pd

__all__ = ["Displayed", "Shown"]


class Displayed:
    """One-line repr and notebook tables of a result from its main tables (see ``_parts``).

    For results that already have a field named ``summary``; others use :class:`Shown`.
    """

    def _title(self) -> str:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:  # pragma: no cover
        raise NotImplementedError

    def _text(self) -> str:
        blocks = [self._title()]
        for caption, table in self._parts():
            text = table.to_string(index=False) if not table.empty else "(none)"
            blocks.append(f"{caption}\n{text}")
        return "\n\n".join(blocks)

    def __repr__(self) -> str:
        return self._title()

    def _repr_html_(self) -> str:
        pieces = [f"<p><strong>{html.escape(self._title())}</strong></p>"]
        for caption, table in self._parts():
            if table.empty:
                continue
            markup = table.to_html(index=False, border=0)
            head = markup.index(">") + 1  # after the opening <table ...>
            pieces.append(
                f"{markup[:head]}<caption>{html.escape(caption)}</caption>{markup[head:]}"
            )
        return "".join(pieces)


class Shown(Displayed):
    """:class:`Displayed`, plus ``summary()``: the title and each main table as text."""

    def summary(self) -> str:
        """Return a compact text summary: the title and each main table.

        The full-precision tables are the result's fields.
        """
        return self._text()
