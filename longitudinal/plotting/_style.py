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

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure


_PERSON_COLOR = "0.55"


_PERSON_ALPHA = 0.35


_PANEL_WIDTH = 3.6


_PANEL_HEIGHT = 3.2


_SAVE_RC = {"svg.hashsalt": "longitudinal", "svg.fonttype": "none"}


@contextmanager
def figure_style():
    """Style every figure of the package alike (seaborn's whitegrid theme, one font scale).

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

    rc = {**sns.axes_style("whitegrid"), **sns.plotting_context("notebook", font_scale=0.85)}
    rc.update({"axes.titleweight": "bold", "axes.titlesize": 10.5, "figure.dpi": 100})
    rc.update(_SAVE_RC)
    with mpl.rc_context(rc):
        yield sns


def _new_figure(n_panels: int, *, ncols: int | None = None, polar: bool = False, **kw):
    from matplotlib.figure import Figure

    ncols = ncols or min(n_panels, 3)
    nrows = math.ceil(n_panels / ncols)
    fig = Figure(
        figsize=kw.get("figsize", (_PANEL_WIDTH * ncols, _PANEL_HEIGHT * nrows)),
        layout="constrained",
    )
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


def save_figure(fig: Figure, path: str | Path, *, dpi: int = 120, vector: bool = False) -> Path:
    """Write a figure as a PNG (and optionally an SVG) whose bytes depend only on the figure.

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

    Returns
    -------
    pathlib.Path
        ``path``.

    Notes
    -----
    The files carry no software name or time stamp, and the SVG's element ids come from a
    fixed salt, so the same figure gives the same bytes. The bounding box is fitted to what
    is drawn, so labels at the edge (radar spokes, long tick labels) are never cut off.
    """
    import matplotlib as mpl

    path = Path(path)
    tight = {"bbox_inches": "tight", "pad_inches": 0.08}
    with mpl.rc_context(_SAVE_RC):
        fig.savefig(path, format="png", dpi=dpi, metadata={"Software": None}, **tight)
        if vector:
            fig.savefig(
                path.with_suffix(".svg"),
                format="svg",
                metadata={"Date": None, "Creator": None},
                **tight,
            )
    return path
