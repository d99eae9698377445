"""The house style of every figure, and writing a figure to disk byte for byte."""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal.plotting._pdf_fonts import lean_pdf_fonts

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


_PERSON_COLOR = "0.55"


_PERSON_ALPHA = 0.35


ONE_COLUMN_WIDTH = 3.5
"""Width in inches of a one-column journal figure (89 mm)."""

TWO_COLUMN_WIDTH = 7.2
"""Width in inches of a two-column (full page width) journal figure (183 mm)."""

JOURNAL_DPI = 600
"""Resolution of the PNG files the report and the commands write for papers."""

MIN_FONT_SIZE = 7.0
"""The smallest font size (points, at print size) of any text in a figure."""

_PANEL_ASPECT = 0.85  # height over width of one panel


_SAVE_RC = {
    "svg.hashsalt": "longitudinal",
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
    "pdf.compression": 6,
}


def journal_size(columns: int = 1, height: float | None = None) -> tuple[float, float]:
    """Return ``(width, height)`` in inches of a figure one or two journal columns wide.

    Parameters
    ----------
    columns : {1, 2}, default 1
        One column (3.5 in, 89 mm) or two columns (7.2 in, 183 mm, the page width).
    height : float, optional
        Height in inches; by default three quarters of the width for one column and
        a little under half the width for two.

    Returns
    -------
    tuple of float
        The figure size, to pass as ``figsize``.

    Examples
    --------
    >>> journal_size(1)
    (3.5, 2.625)
    >>> journal_size(2, height=3.0)
    (7.2, 3.0)
    """
    if columns not in (1, 2):
        raise InvalidParameterError(
            f"the `columns` parameter of journal_size must be 1 or 2, got {columns!r}"
        )
    width = ONE_COLUMN_WIDTH if columns == 1 else TWO_COLUMN_WIDTH
    if height is None:
        height = width * (0.75 if columns == 1 else 0.45)
    return (width, float(height))


@contextmanager
def figure_style():
    """Style every figure of the package alike (seaborn's whitegrid theme, journal font sizes).

    Fonts are sized for print at the journal widths of :func:`journal_size` (no text under
    7 pt); colours come from seaborn's colour-blind-safe palette (Okabe-Ito hues); plots of
    several series give each its own marker and line style (``SERIES_MARKERS``,
    ``SERIES_LINESTYLES``), so series stay apart in greyscale.

    A context manager that yields :mod:`seaborn`; it changes matplotlib's settings only
    inside the ``with`` block. Figures drawn elsewhere in the package (the effects plot of
    the prediction section, posterior predictive checks) use it too.

    Examples
    --------
    >>> from longitudinal.plotting import figure_style
    >>> with figure_style() as sns:
    ...     palette = sns.color_palette("colorblind")
    """
    import matplotlib as mpl
    import seaborn as sns

    rc = {**sns.axes_style("whitegrid"), **sns.plotting_context("paper")}
    rc.update(
        {
            # sizes at print size (journal widths): no text under 7 pt
            "font.size": 8,
            "axes.labelsize": 8,
            "axes.titlesize": 8.5,
            "axes.titleweight": "bold",
            "figure.titlesize": 9,
            "xtick.labelsize": MIN_FONT_SIZE,
            "ytick.labelsize": MIN_FONT_SIZE,
            "legend.fontsize": MIN_FONT_SIZE,
            "legend.title_fontsize": 8,
            "lines.linewidth": 1.2,
            "lines.markersize": 4,
            "axes.prop_cycle": _cycler(sns),
            "figure.dpi": 100,
        }
    )
    rc.update(_SAVE_RC)
    with mpl.rc_context(rc):
        yield sns


def _cycler(sns: Any) -> Any:
    from cycler import cycler

    return cycler(color=sns.color_palette("colorblind"))


SERIES_MARKERS = ("o", "s", "^", "D", "v", "P")
"""Markers of successive series in one plot, so they differ without colour."""

SERIES_LINESTYLES = ("-", "-.", ":", (0, (5, 1)), (0, (1, 1)), (0, (3, 1, 1, 1, 1, 1)))
"""Line styles of successive series in one plot (dashed is kept for reference lines)."""


def _new_figure(n_panels: int, *, ncols: int | None = None, polar: bool = False, **kw):
    from matplotlib.figure import Figure

    ncols = ncols or min(n_panels, 3)
    nrows = math.ceil(n_panels / ncols)
    if "figsize" in kw:
        figsize = kw["figsize"]
    else:  # one panel: one column; several side by side: the page width
        width = ONE_COLUMN_WIDTH if ncols == 1 else TWO_COLUMN_WIDTH
        figsize = (width, width / ncols * _PANEL_ASPECT * nrows + 0.3)
    fig = Figure(figsize=figsize, layout="constrained")
    axes = []
    for k in range(n_panels):
        axes.append(fig.add_subplot(nrows, ncols, k + 1, projection="polar" if polar else None))
    return fig, axes


def _short_title(text: str, width: int = 32) -> str:
    """Wrap a panel title onto lines of at most ``width`` characters (at most two lines)."""
    import textwrap

    lines = textwrap.wrap(text, width)
    if len(lines) > 2:
        lines = [lines[0], textwrap.shorten(" ".join(lines[1:]), width, placeholder="…")]
    return "\n".join(lines)


def _person_lines(
    ax: Any,
    data: pd.DataFrame,
    *,
    x: str,
    y: str,
    id_col: str,
    lw: float,
    alpha: float = _PERSON_ALPHA,
    marker_size: float = 0.0,
) -> None:
    """Draw one faint line per person as a single collection (fast with thousands of people)."""
    from matplotlib.collections import LineCollection

    if data.empty:
        return
    ordered = data.sort_values([id_col, x], kind="mergesort")
    xy = ordered[[x, y]].to_numpy(dtype=float)
    starts = np.flatnonzero(~ordered[id_col].duplicated().to_numpy())
    alpha = min(alpha, max(0.03, 15.0 / len(starts)))  # thousands of people: fainter lines
    lines = [part for part in np.split(xy, starts[1:]) if len(part) > 1]
    ax.add_collection(LineCollection(lines, colors=_PERSON_COLOR, alpha=alpha, linewidths=lw))
    if marker_size:
        ax.scatter(xy[:, 0], xy[:, 1], s=marker_size**2, color=_PERSON_COLOR, alpha=alpha, lw=0)
    ax.autoscale_view()


def _as_list(columns: str | Sequence[str], *, func: str, param: str) -> list[str]:
    out = [columns] if isinstance(columns, str) else list(columns)
    if not out:
        raise InvalidParameterError(f"the `{param}` parameter of {func} must name a column")
    return out


def _wave_order(data: pd.DataFrame, wave_col: str, waves: Sequence[str] | None) -> list[str]:
    if waves is not None:
        return [str(w) for w in waves]
    col = data[wave_col]
    if isinstance(col.dtype, pd.CategoricalDtype):
        return [str(c) for c in col.cat.categories]
    return [str(w) for w in pd.unique(col.dropna())]


def save_figure(
    fig: Figure,
    path: str | Path,
    *,
    dpi: int = 120,
    vector: bool = False,
    pdf: bool | None = None,
) -> Path:
    """Write a figure as a PNG (and optionally SVG and PDF) whose bytes depend only on the figure.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure.
    path : str or path-like
        Target file (``.png``).
    dpi : int, default 120
        Resolution of the PNG.
    vector : bool, default False
        Also write the figure as SVG beside the PNG (same name, ``.svg``), for papers.
    pdf : bool, optional
        Also write the figure as PDF beside the PNG (same name, ``.pdf``) with its
        TrueType fonts embedded, for journals; by default when ``vector`` is true. The
        PDF page is the figure's size (see :func:`journal_size`), so its fonts print at
        their nominal size.

    Returns
    -------
    pathlib.Path
        ``path``.

    Notes
    -----
    The files carry no software name or time stamp, and the SVG's element ids come from a
    fixed salt, so the same figure gives the same bytes. The bounding box of the PNG and
    the SVG is fitted to what is drawn, so labels at the edge (radar spokes, long tick
    labels) are never cut off; the PDF keeps the figure's size, the width a journal asks
    for (every figure of the package is laid out with constrained layout to fit it).
    """
    path = Path(path)
    # lay the figure out once (constrained layout iterates to its fixed point within one
    # draw), then hold that layout for the three files, each of which would lay it out again
    engine = fig.get_layout_engine()
    fig.draw_without_rendering()
    fig.set_layout_engine("none")
    try:
        _write_formats(fig, path, dpi=dpi, vector=vector, pdf=pdf)
    finally:
        fig.set_layout_engine(engine)
    return path


def _write_formats(fig: Any, path: Path, *, dpi: int, vector: bool, pdf: bool | None) -> None:
    """Write ``fig`` as PNG, and as PDF and SVG where asked (see :func:`save_figure`)."""
    import matplotlib as mpl

    # the box of what is drawn, measured once for the PNG and the SVG
    box = fig.get_tightbbox().padded(0.08)
    with mpl.rc_context(_SAVE_RC):
        if vector if pdf is None else pdf:
            with lean_pdf_fonts():
                fig.savefig(
                    path.with_suffix(".pdf"),
                    format="pdf",
                    metadata={
                        "CreationDate": None,
                        "ModDate": None,
                        "Producer": None,
                        "Creator": None,
                    },
                )
        fig.savefig(path, format="png", dpi=dpi, metadata={"Software": None}, bbox_inches=box)
        if vector:
            fig.savefig(
                path.with_suffix(".svg"),
                format="svg",
                metadata={"Date": None, "Creator": None},
                bbox_inches=box,
            )
