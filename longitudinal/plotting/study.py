"""Figures of the sample and the ratings: demographics, Big Five, ratings, empathy course."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from longitudinal._checks import check_frame, check_unit
from longitudinal._errors import InvalidParameterError
from longitudinal.study.rating_scale import DISTRIBUTION_BINS, bin_edges, binned_counts, scale_kind

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
from longitudinal.plotting._style import (
    _PERSON_COLOR,
    _as_list,
    _new_figure,
    _person_lines,
    _short_title,
    figure_style,
    journal_size,
)


def plot_rating_distribution(
    data: pd.DataFrame,
    *,
    rating_col: str = "empathy",
    scale_min: float = 1,
    scale_max: float = 5,
) -> Figure:
    """Distribution of the empathy ratings over the declared scale.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per rating (story frame or ratings table).
    rating_col : str, default "empathy"
        Rating column.
    scale_min, scale_max : float
        Declared scale. An ordinal scale (at most 11 points, 1-5 or 1-7:
        :mod:`longitudinal.study.rating_scale`) with whole-number ratings is drawn as one bar per
        value; a continuous scale (a 0-100 slider) as a histogram of
        :data:`~longitudinal.study.rating_scale.DISTRIBUTION_BINS` (10) bins of equal width over the
        scale, the last one closed at its top; other ratings as a histogram over the scale.

    Returns
    -------
    matplotlib.figure.Figure
        Bars with the share of ratings per value or bin (counts printed on the bars), and
        the mean and SD in the title.

    Raises
    ------
    longitudinal.InvalidParameterError
        If the column is missing.
    """
    func = "plot_rating_distribution"
    check_frame(data, [rating_col], where=func)
    values = data[rating_col].dropna().astype(float)
    with figure_style() as sns:
        color = sns.color_palette("colorblind")[0]
        fig, (ax,) = _new_figure(1, figsize=journal_size(1))
        whole = float(scale_min).is_integer() and float(scale_max).is_integer()
        continuous = scale_kind(scale_min, scale_max) == "continuous"
        if continuous or (whole and values.map(float.is_integer).all()):
            if continuous:
                table = binned_counts(values, scale_min, scale_max, DISTRIBUTION_BINS)
                levels = table["midpoint"].to_numpy()
                counts = table["n"]
                width = 0.9 * float(table["high"].iloc[0] - table["low"].iloc[0])
            else:
                levels = np.arange(int(scale_min), int(scale_max) + 1)
                counts = values.value_counts().reindex(levels.astype(float), fill_value=0)
                width = 0.7
            share = counts / max(len(values), 1)
            bars = ax.bar(levels, share.to_numpy(), color=color, width=width)
            for bar, count in zip(bars, counts.to_numpy(), strict=True):
                ax.annotate(
                    f"{int(count)}",
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                    ha="center",
                    va="bottom",
                    fontsize=8,
                    xytext=(0, 2),
                    textcoords="offset points",
                )
            if continuous:
                ax.set_xticks(bin_edges(scale_min, scale_max, DISTRIBUTION_BINS))
            else:
                ax.set_xticks(levels)
            ax.set_ylim(0, max(float(share.max()), 0.01) * 1.15)
            ax.set_ylabel("share of ratings")
        else:
            sns.histplot(
                x=values, ax=ax, color=color, stat="proportion", binrange=(scale_min, scale_max)
            )
        mean = values.mean() if len(values) else float("nan")
        sd = values.std(ddof=1) if len(values) > 1 else float("nan")
        ax.set_title(
            _short_title(
                f"{rating_col} ratings (n = {len(values)}, M = {mean:.2f}, SD = {sd:.2f})", 46
            )
        )
        ax.set_xlabel(f"{rating_col} ({scale_min:g}–{scale_max:g})")
    return fig


def plot_big_five_radar(
    data: pd.DataFrame,
    *,
    columns: Sequence[str],
    labels: Mapping[str, str] | None = None,
    scale_min: float = 1,
    scale_max: float = 5,
) -> Figure:
    """Radar chart of the Big Five (or any set of trait scales): each person faint, the mean bold.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per participant with the trait columns.
    columns : sequence of str
        Trait columns, one spoke each (at least 3).
    labels : mapping, optional
        Spoke labels by column.
    scale_min, scale_max : float
        Radial range (the scales' score range).

    Returns
    -------
    matplotlib.figure.Figure
        A polar chart; the group mean is drawn with a +-1 SD band.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or fewer than 3 columns are given.
    """
    func = "plot_big_five_radar"
    columns = _as_list(columns, func=func, param="columns")
    check_frame(data, columns, where=func)
    if len(columns) < 3:
        raise InvalidParameterError(
            f"the `columns` parameter of {func} needs at least 3 columns; got {len(columns)}"
        )
    labels = dict(labels or {})
    sub = data[columns].dropna().astype(float)
    angles = np.linspace(0, 2 * np.pi, len(columns), endpoint=False)
    closed = np.append(angles, angles[0])
    with figure_style() as sns:
        color = sns.color_palette("colorblind")[0]
        fig, (ax,) = _new_figure(1, polar=True, figsize=journal_size(1, height=3.6))
        from matplotlib.collections import LineCollection

        rings = [np.column_stack([closed, np.append(row, row[0])]) for row in sub.to_numpy()]
        ax.add_collection(LineCollection(rings, colors=_PERSON_COLOR, alpha=0.25, linewidths=0.6))
        mean = sub.mean().to_numpy()
        sd = sub.std(ddof=1).to_numpy() if len(sub) > 1 else np.zeros(len(columns))
        ax.fill_between(
            closed,
            np.append(mean - sd, mean[0] - sd[0]),
            np.append(mean + sd, mean[0] + sd[0]),
            color=color,
            alpha=0.2,
        )
        ax.plot(closed, np.append(mean, mean[0]), color=color, lw=2.2, marker="o")
        ax.set_xticks(angles, [labels.get(c, c) for c in columns])
        ax.tick_params(axis="x", pad=10)
        ax.set_ylim(scale_min, scale_max)
        ticks = np.linspace(scale_min, scale_max, 5)
        ax.set_yticks(ticks, [""] * len(ticks))
        between = np.pi / len(columns)  # halfway between the first two spokes
        for t in ticks[1:]:  # drawn above the band and the person lines, on a white box
            ax.text(
                between,
                t,
                f"{t:g}",
                fontsize=7.5,
                color="0.25",
                ha="center",
                va="center",
                zorder=10,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.85, "pad": 0.8},
            )
        ax.set_title(_short_title(f"Trait profile (n = {len(sub)}; mean ± 1 SD)", 46), pad=18)
    return fig


def plot_demographics(data: pd.DataFrame, *, columns: Sequence[str]) -> Figure:
    """Sample description: a histogram per numeric column, counts per category otherwise.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per participant.
    columns : sequence of str
        Demographic columns (e.g. ``age``, ``gender``).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per column.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or none is given.
    """
    from matplotlib.ticker import MaxNLocator

    func = "plot_demographics"
    columns = _as_list(columns, func=func, param="columns")
    check_frame(data, columns, where=func)
    with figure_style() as sns:
        color = sns.color_palette("colorblind")[0]
        fig, axes = _new_figure(len(columns))
        for ax, col in zip(axes, columns, strict=True):
            values = data[col].dropna()
            if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
                sns.histplot(x=values.astype(float), ax=ax, color=color, bins="auto")
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
                ax.set_title(
                    f"{col} (n = {len(values)}, M = {values.mean():.1f}, "
                    f"SD = {values.std(ddof=1):.1f})"
                    if len(values) > 1
                    else col
                )
                ax.set_ylabel("participants")
            else:
                counts = values.astype(str).value_counts().sort_index()
                ax.barh(counts.index[::-1], counts.to_numpy()[::-1], color=color)
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
                ax.set_xlabel("participants")
                ax.set_title(f"{col} (n = {len(values)})")
            missing = int(data[col].isna().sum())
            if missing:
                ax.text(
                    0.98,
                    0.98,
                    f"missing: {missing}",
                    transform=ax.transAxes,
                    ha="right",
                    va="top",
                    fontsize=7,
                    color="0.3",
                )
    return fig


def plot_empathy_course(
    data: pd.DataFrame,
    *,
    rating_col: str = "empathy",
    id_col: str = "participant_id",
    time_col: str = "week",
    scale_min: float | None = None,
    scale_max: float | None = None,
    min_participants: int = 5,
    ci_level: float = 0.95,
) -> Figure:
    """Empathy ratings over the study: participants' means per period and the group mean.

    Parameters
    ----------
    data : pandas.DataFrame
        Story frame (one row per rating) with ``time_col``.
    rating_col, id_col, time_col : str
        Column names (``time_col``: a whole-number period such as the study week, the day
        or ``session_index``).
    scale_min, scale_max : float, optional
        Declared rating scale: sets the y axis (labelled with the scale, e.g. "mean score
        (1–7)"), and the intervals are clipped to it (:func:`empathy_course_table`).
    min_participants : int, default 5
        Periods with fewer participants are drawn as open markers without an interval.
    ci_level : float, default 0.95
        Coverage of the t interval of the group mean across participants.

    Returns
    -------
    matplotlib.figure.Figure
        Faint lines: each participant's mean rating per period; bold: the mean of those
        participant means with its interval across participants (clipped to the declared
        scale); the number of participants per period is printed along the bottom.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or ``min_participants`` is not a positive int.
    """
    func = "plot_empathy_course"
    check_frame(data, [rating_col, id_col, time_col], where=func)
    check_unit(ci_level, name="ci_level", where=func)
    _check_min_participants(min_participants, func=func)
    summary = empathy_course_table(
        data,
        rating_col=rating_col,
        id_col=id_col,
        time_col=time_col,
        ci_level=ci_level,
        scale_min=scale_min,
        scale_max=scale_max,
        min_participants=min_participants,
    )
    sub = data[[id_col, time_col, rating_col]].dropna()
    person = sub.groupby([id_col, time_col], sort=True)[rating_col].mean().reset_index()
    with figure_style() as sns:
        color = sns.color_palette("colorblind")[0]
        fig, (ax,) = _new_figure(1, figsize=journal_size(2, height=3.0))
        _person_lines(ax, person, x=time_col, y=rating_col, id_col=id_col, lw=0.7, alpha=0.3)
        enough = ~summary["too_few"]
        ax.fill_between(
            summary[time_col].where(enough),
            summary["ci_low"].where(enough),
            summary["ci_high"].where(enough),
            color=color,
            alpha=0.25,
            lw=0,
        )
        ax.plot(
            summary.loc[enough, time_col],
            summary.loc[enough, "estimate"],
            color=color,
            lw=2.2,
            marker="o",
        )
        ax.plot(
            summary.loc[~enough, time_col],
            summary.loc[~enough, "estimate"],
            ls="none",
            marker="o",
            mfc="white",
            mec=color,
        )
        for rec in summary.itertuples(index=False):
            ax.annotate(
                f"n={rec.n}",
                (getattr(rec, time_col), 0.01),
                xycoords=("data", "axes fraction"),
                ha="center",
                va="bottom",
                fontsize=7,
                color="0.3",
            )
        if scale_min is not None and scale_max is not None:
            pad = 0.12 * (scale_max - scale_min)
            ax.set_ylim(scale_min - pad, scale_max + 0.04 * (scale_max - scale_min))
        ax.set_xlabel(time_col.replace("_", " "))
        scale = "" if scale_min is None or scale_max is None else f" ({scale_min:g}–{scale_max:g})"
        ax.set_ylabel(f"mean {rating_col}{scale}")
        ax.set_title(f"{rating_col} over the study ({ci_level:.0%} CI across participants)")
        if pd.api.types.is_integer_dtype(summary[time_col]):
            ax.set_xticks(summary[time_col].to_numpy())
    return fig


def plot_smooth_course(
    curve: pd.DataFrame,
    *,
    line: pd.DataFrame,
    rating_col: str = "empathy",
    time_col: str = "week",
    scale_min: float | None = None,
    scale_max: float | None = None,
    ci_level: float = 0.95,
) -> Figure:
    """Draw the smooth course of the mean rating, its pointwise interval and the straight line.

    Parameters
    ----------
    curve : pandas.DataFrame
        ``time_col, fit, lower, upper`` on a grid (``SmoothFit.curve`` of a mixed model).
    line : pandas.DataFrame
        ``time_col, fit``: the straight-line model's course on the same grid.
    rating_col, time_col : str
        Names for the axes.
    scale_min, scale_max : float, optional
        Declared rating scale: sets the y axis.
    ci_level : float, default 0.95
        Coverage of the pointwise interval (for the title).

    Returns
    -------
    matplotlib.figure.Figure
        The smooth (solid) within its shaded interval, the straight line dashed.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing.
    """
    func = "plot_smooth_course"
    check_frame(curve, [time_col, "fit", "lower", "upper"], where=func, name="curve")
    check_frame(line, [time_col, "fit"], where=func, name="line")
    check_unit(ci_level, name="ci_level", where=func)
    with figure_style() as sns:
        color = sns.color_palette("colorblind")[0]
        fig, (ax,) = _new_figure(1, figsize=journal_size(2, height=3.0))
        ax.fill_between(
            curve[time_col], curve["lower"], curve["upper"], color=color, alpha=0.25, lw=0
        )
        ax.plot(curve[time_col], curve["fit"], color=color, lw=2.2, label="smooth")
        ax.plot(line[time_col], line["fit"], color="0.25", lw=1.2, ls="--", label="straight line")
        if scale_min is not None and scale_max is not None:
            pad = 0.04 * (scale_max - scale_min)
            ax.set_ylim(scale_min - pad, scale_max + pad)
        ax.set_xlabel(time_col.replace("_", " "))
        scale = "" if scale_min is None or scale_max is None else f" ({scale_min:g}–{scale_max:g})"
        ax.set_ylabel(f"mean {rating_col}{scale}")
        ax.set_title(f"{rating_col}: smooth course ({ci_level:.0%} pointwise interval)")
        ax.legend(frameon=False, fontsize=8)
    return fig


def empathy_course_table(
    data: pd.DataFrame,
    *,
    rating_col: str = "empathy",
    id_col: str = "participant_id",
    time_col: str = "week",
    ci_level: float = 0.95,
    scale_min: float | None = None,
    scale_max: float | None = None,
    min_participants: int = 2,
) -> pd.DataFrame:
    """Mean rating per period: the mean of the participants' means, with a t interval.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per rating.
    rating_col, id_col, time_col : str
        Column names.
    ci_level : float, default 0.95
        Coverage of the interval.
    scale_min, scale_max : float, optional
        Declared rating scale: an interval reaching past an end of it is clipped to that end
        (a mean rating cannot leave the scale; with few participants the t interval does).
    min_participants : int, default 2
        Periods with fewer participants get no interval (``too_few``); a t interval of two
        or three people spans most of a scale.

    Returns
    -------
    pandas.DataFrame
        One row per period: ``time_col``, ``n`` (participants), ``n_ratings``, ``estimate``
        (mean of the participants' mean ratings), ``sd`` (across participants), ``ci_low``,
        ``ci_high`` (``estimate +- t(n - 1) sd / sqrt(n)``, clipped to the declared scale;
        missing when ``n < min_participants``), ``too_few`` (``n < min_participants``) and
        ``clipped`` (the interval was cut at an end of the scale).

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.plotting import empathy_course_table
    >>> d = pd.DataFrame({"pid": ["a", "a", "b", "b"], "week": [0, 1, 0, 1],
    ...                   "empathy": [3.0, 4.0, 5.0, 4.0]})
    >>> empathy_course_table(d, id_col="pid")[["week", "n", "estimate"]]
       week  n  estimate
    0     0  2       4.0
    1     1  2       4.0
    >>> table = empathy_course_table(d, id_col="pid", scale_min=1, scale_max=5)
    >>> table[["ci_low", "ci_high", "clipped"]].round(2)
       ci_low  ci_high  clipped
    0     1.0      5.0     True
    1     4.0      4.0    False
    """
    func = "empathy_course_table"
    check_frame(data, [rating_col, id_col, time_col], where=func)
    check_unit(ci_level, name="ci_level", where=func)
    _check_min_participants(min_participants, func=func)
    sub = data[[id_col, time_col, rating_col]].dropna()
    person = sub.groupby([id_col, time_col], sort=True)[rating_col].agg(["mean", "size"])
    person = person.reset_index()
    rows = []
    for t, group in person.groupby(time_col, sort=True):
        vals = group["mean"].to_numpy(dtype=float)
        n = len(vals)
        mean = float(vals.mean())
        sd = float(vals.std(ddof=1)) if n > 1 else float("nan")
        few = n < min_participants
        half = stats.t.ppf(0.5 + ci_level / 2, n - 1) * sd / math.sqrt(n) if n > 1 else np.nan
        low, high = (np.nan, np.nan) if few else (mean - half, mean + half)
        clipped = False
        if scale_min is not None and low < scale_min:
            low, clipped = float(scale_min), True
        if scale_max is not None and high > scale_max:
            high, clipped = float(scale_max), True
        rows.append((t, n, int(group["size"].sum()), mean, sd, low, high, few, clipped))
    columns = [time_col, "n", "n_ratings", "estimate", "sd", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=[*columns, "too_few", "clipped"])


def _check_min_participants(value: Any, *, func: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 2:
        raise InvalidParameterError(
            f"the `min_participants` parameter of {func} must be an int >= 2; got {value!r}"
        )
