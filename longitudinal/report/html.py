"""HTML of the report: one Jinja2 environment, its tables and figures.

Templates live in ``longitudinal/report/templates`` (shipped as package data); every piece of
the page, the tables included, is rendered from them with autoescaping, so text from a study
(labels, notes, file names) can never become markup. Numbers are
written by :mod:`longitudinal.narrate.numbers`, as in the manuscript.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup

from longitudinal.narrate.numbers import apa_p, num, p_text


@cache
def environment() -> Any:
    """Build the report's Jinja2 environment (autoescaping, strict about undefined names)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("longitudinal.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = num
    env.filters["p"] = apa_p
    env.filters["p_text"] = p_text
    env.globals["table"] = table
    return env


def render(template: str, **variables: Any) -> Markup:
    """Render one template of the report."""
    return Markup(environment().get_template(template).render(**variables))


def _is_text(series: pd.Series) -> bool:
    """Tell whether a column is text (left aligned).

    An object column of numbers only (counts as ints among floats) is numeric.
    """
    if series.dtype == object:
        return not all(
            isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
            for v in series
        )
    return not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)


def _cell(column: str, value: Any, decimals: int) -> str:
    if column.startswith("p_") or column == "p_value":
        return apa_p(value)
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    return num(value, decimals)


def table(
    frame: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    decimals: Mapping[str, int] | None = None,
    caption: str | None = None,
) -> Markup:
    """Render a DataFrame as an HTML table; ``columns`` maps column -> header, in order."""
    columns = dict(columns or {c: c for c in frame.columns})
    decimals = dict(decimals or {})
    kinds = {c: "text" if _is_text(frame[c]) else "num" for c in columns}
    rows = [  # by column, so an int column is not upcast by its row
        [(kinds[c], _cell(c, frame[c].iat[i], decimals.get(c, 2))) for c in columns]
        for i in range(len(frame))
    ]
    headers = [(kinds[c], h) for c, h in columns.items()]
    return render("table.html.j2", caption=caption, headers=headers, rows=rows)


def figure(figures: Mapping[str, tuple[str, str]], out: Path, name: str) -> Markup:
    """Embed a PNG figure with its caption and links to its files; empty if not drawn.

    The page embeds a copy of the PNG at screen resolution (at most :data:`_PAGE_DPI`), so
    the page stays small; the PNG in the folder keeps its print resolution, and the SVG
    and the PDF beside it are linked.
    """
    if name not in figures:
        return Markup("")
    file, caption = figures[name]
    png = _page_png((out / file).read_bytes())
    data = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    stem = file.removesuffix(".png")
    svg, pdf = (
        vector if (out / vector).is_file() else None for vector in (stem + ".svg", stem + ".pdf")
    )
    return render("figure.html.j2", file=file, svg=svg, pdf=pdf, caption=caption, data=data)


_PAGE_DPI = 150


def _page_png(png: bytes) -> bytes:
    """Return ``png`` scaled down to :data:`_PAGE_DPI` (unchanged when not above it)."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        dpi = image.info.get("dpi", (_PAGE_DPI, _PAGE_DPI))[0]
        if dpi <= _PAGE_DPI * 1.01:
            return png
        factor = dpi / _PAGE_DPI
        if abs(factor - round(factor)) < 0.01:
            # a whole factor (600 dpi -> 150): the mean of each block of pixels, 4x faster
            small = image.convert("RGBA").reduce(round(factor))
        else:
            size = (max(1, round(image.width / factor)), max(1, round(image.height / factor)))
            small = image.convert("RGBA").resize(size, Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    small.save(buffer, format="PNG", dpi=(_PAGE_DPI, _PAGE_DPI))
    return buffer.getvalue()
