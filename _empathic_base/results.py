"""One result protocol for the three packages: ``summary()``, ``to_frame()``, ``to_dict()``.

A result class names itself in ``_title()`` and lists its main tables in ``_parts()``; the
mixin :class:`Result` gives it

* ``repr``: the one-line title;
* ``summary(decimals=DECIMALS)``: a :class:`Summary`, which prints as text (``print``, ``str``)
  and renders as HTML tables in a notebook;
* ``to_frame()``: its main table (the first of ``_parts``) at full precision;
* ``to_dict()``: a JSON-ready dict (title and every table as records; NaN as None);
* ``_repr_html_``: the summary's HTML, so a result shown in a notebook is its summary.

A class with a richer text (the mixed models' lme4-style summaries) overrides ``_text``. Numbers
are rounded only when shown, to :data:`DECIMALS` places unless asked otherwise.

Written here, not taken from a library, because the three packages need one small common
shape and none of them may import another; pandas is imported on first use only.
"""

from __future__ import annotations

import html
import math
from typing import Any

__all__ = ["DECIMALS", "FittedModel", "Result", "Shows", "Summary", "json_ready"]

DECIMALS = 4
"""Decimals of every displayed number unless a call asks for others (results keep full
precision)."""


def json_ready(value: Any) -> Any:
    """Return ``value`` with NumPy scalars as Python numbers, NaN and NA as None, recursively."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "ndim", 1) == 0:
        value = item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
        if isinstance(value, pd.Timestamp):
            return value.isoformat()
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return str(value)


class Shows:
    """The one display mixin: text when printed, HTML in a notebook.

    A class using it has ``text`` (the whole text) and may have ``parts`` (captioned tables)
    and ``title``: in a notebook the title and the tables are shown, or the text as it prints
    when there are no tables. Dataclasses using it are declared with ``repr=False``.
    """

    text: str
    parts: list[tuple[str, Any]] = []
    title: str = ""

    def __repr__(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        tables = [(caption, table) for caption, table in self.parts if len(table)]
        if not tables:
            return f"<pre>{html.escape(self.text)}</pre>"
        pieces = [f"<p><strong>{html.escape(self.title)}</strong></p>"]
        for caption, table in tables:
            markup = table.to_html(index=False, border=0, na_rep="")
            head = markup.index(">") + 1  # after the opening <table ...>
            pieces.append(
                f"{markup[:head]}<caption>{html.escape(caption)}</caption>{markup[head:]}"
            )
        return "".join(pieces)


class Summary(Shows, str):
    """What ``summary()`` returns: text (a ``str``) that renders as HTML tables in a notebook.

    Parameters
    ----------
    title : str
        The first line.
    parts : list of (str, pandas.DataFrame)
        Captioned tables, already rounded for display.
    text : str, optional
        The whole text, when the result writes its own (default: the title and each table).
    """

    title: str
    parts: list[tuple[str, Any]]

    def __new__(cls, title: str, parts: list[tuple[str, Any]], text: str | None = None):
        if text is None:
            blocks = [title]
            for caption, table in parts:
                body = table.to_string(index=False) if len(table) else "(none)"
                blocks.append(f"{caption}\n{body}")
            text = "\n\n".join(blocks)
        self = super().__new__(cls, text)
        self.title = title
        self.parts = parts
        return self

    @property  # type: ignore[override]
    def text(self) -> str:
        """The summary as plain text."""
        return str.__str__(self)


def _rounded(table: Any, decimals: int) -> Any:
    numbers = table.select_dtypes("number").columns
    floats = [c for c in numbers if str(table[c].dtype).startswith("float")]
    return table.round(dict.fromkeys(floats, decimals)) if floats else table


class Result:
    """The mixin of every public result (see the module docstring)."""

    def _title(self) -> str:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _parts(self) -> list[tuple[str, Any]]:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def _text(self, decimals: int) -> str | None:
        """Return the whole text of the summary, or None for the title and each table."""
        return None

    def summary(self, decimals: int = DECIMALS) -> Summary:
        """Return the summary: text when printed, tables in a notebook.

        Parameters
        ----------
        decimals : int, default 4
            Decimals of the numbers shown (the result keeps full precision).

        Returns
        -------
        Summary
        """
        parts = [(caption, _rounded(table, decimals)) for caption, table in self._parts()]
        return Summary(self._title(), parts, self._text(decimals))

    def to_frame(self) -> Any:
        """Return the main table at full precision (a copy)."""
        parts = self._parts()
        if not parts:
            import pandas as pd

            return pd.DataFrame()
        return parts[0][1].copy()

    def to_dict(self) -> dict[str, Any]:
        """Return the result as JSON-ready data: the title and every table as records."""
        return {
            "title": self._title(),
            "tables": {
                caption: json_ready(table.to_dict(orient="records"))
                for caption, table in self._parts()
            },
        }

    def __repr__(self) -> str:
        return self._title()

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()


class FittedModel:
    """The result protocol of a fitted model: ``to_frame()`` is its fixed-effects table.

    The model class gives ``fixed_`` and ``_check_fitted``; ``summary()`` and ``to_dict()``
    are its own (each model family writes its own text and JSON). ``get_params()`` returns
    the constructor's parameters, which the class keeps under their own names.
    """

    def to_frame(self) -> Any:
        """Return the fixed-effects table (``fixed_``) at full precision: the main table."""
        self._check_fitted("to_frame")  # type: ignore[attr-defined]
        return self.fixed_.copy()  # type: ignore[attr-defined]

    def get_params(self) -> dict[str, Any]:
        """Return the constructor parameters as a dict (each is kept as an attribute)."""
        import inspect

        names = list(inspect.signature(type(self).__init__).parameters)[1:]
        return {name: getattr(self, name) for name in names}
