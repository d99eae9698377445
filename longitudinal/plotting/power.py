"""The power curve of a simulation-based power analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from longitudinal._checks import check_frame, check_unit

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
from longitudinal.plotting._style import (
    SERIES_LINESTYLES,
    SERIES_MARKERS,
    _new_figure,
    _short_title,
    figure_style,
    journal_size,
)


def plot_power_curve(
    table: pd.DataFrame,
    *,
    target: float = 0.8,
    ci_level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Power against the number of participants, with its interval band and a target line.

    Parameters
    ----------
    table : pandas.DataFrame
        :attr:`models.power.PowerResult.table`: ``n_participants``, ``n_sessions``, ``power``,
        ``ci_low``, ``ci_high``; one line per ``n_sessions`` setting.
    target : float, default 0.8
        Power drawn as a dashed horizontal line.
    ci_level : float, default 0.95
        Level of the interval, for the legend.
    title : str, optional
        Figure title (e.g. the effect and the test).

    Returns
    -------
    matplotlib.figure.Figure
        Points and lines of the estimated power, a shaded band for the exact binomial
        (Clopper-Pearson) interval, the target line.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or ``target`` is not in (0, 1).
    """
    func = "plot_power_curve"
    needed = ["n_participants", "n_sessions", "power", "ci_low", "ci_high"]
    check_frame(table, needed, where=func, name="table")
    check_unit(ci_level, name="ci_level", where=func)
    check_unit(target, name="target", where=func)
    with figure_style() as sns:
        palette = sns.color_palette("colorblind")
        fig, (ax,) = _new_figure(1, figsize=journal_size(1))
        settings = list(dict.fromkeys(table["n_sessions"].astype(str)))
        for k, setting in enumerate(settings):
            part = table[table["n_sessions"].astype(str) == setting].sort_values("n_participants")
            color = palette[k % len(palette)]
            label = "power" if len(settings) == 1 else f"{setting} sessions"
            x = part["n_participants"].to_numpy(dtype=float)
            ax.fill_between(
                x,
                part["ci_low"].to_numpy(dtype=float),
                part["ci_high"].to_numpy(dtype=float),
                color=color,
                alpha=0.2,
                linewidth=0,
                label=f"{100 * ci_level:g}% interval" if k == 0 else None,
            )
            ax.plot(
                x,
                part["power"].to_numpy(dtype=float),
                marker=SERIES_MARKERS[k % len(SERIES_MARKERS)],
                linestyle=SERIES_LINESTYLES[k % len(SERIES_LINESTYLES)],
                color=color,
                label=label,
            )
        ax.axhline(target, color="0.3", linestyle="--", linewidth=1, label=f"{target:.0%} target")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("participants")
        ax.set_ylabel("power")
        ax.set_xticks(sorted(table["n_participants"].unique()))
        if title:
            ax.set_title(_short_title(title, width=45))
        ax.legend(loc="lower right", frameon=False)
    return fig
