"""Figures of change across waves: trajectories, distributions, reliable change, states."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from longitudinal._checks import check_frame, check_unit
from longitudinal._errors import InvalidParameterError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure
from longitudinal.plotting._style import (
    _as_list,
    _new_figure,
    _person_lines,
    _short_title,
    _wave_order,
    figure_style,
)


def within_subject_ci(
    data: pd.DataFrame,
    *,
    value_col: str,
    id_col: str,
    wave_col: str,
    waves: Sequence[str] | None = None,
    ci_level: float = 0.95,
) -> pd.DataFrame:
    """Wave means with within-subject confidence intervals on the complete cases.

    Parameters
    ----------
    data : pandas.DataFrame
        Long data: one row per participant x wave.
    value_col, id_col, wave_col : str
        Columns of the outcome, the participant and the wave.
    waves : sequence of str, optional
        Waves in order (default: categories of ``wave_col`` or order of appearance).
    ci_level : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    pandas.DataFrame
        One row per wave: ``wave, n, estimate`` (mean over complete cases), ``se``
        (Cousineau-Morey), ``ci_low, ci_high``.

    Notes
    -----
    Complete cases are the participants with a value at every wave. Each value is
    normalised as ``y_ij - mean_i + grand mean``; the standard error of wave ``j`` is the SD
    of the normalised values over ``sqrt(n)``, times ``sqrt(J / (J - 1))`` (Morey 2008);
    the interval is ``estimate +- t(n - 1) * se``.

    Examples
    --------
    >>> import pandas as pd
    >>> from longitudinal.plotting import within_subject_ci
    >>> d = pd.DataFrame({"pid": list("aabbcc"), "wave": ["pre", "post"] * 3,
    ...                   "y": [1.0, 2.0, 2.0, 3.5, 3.0, 3.5]})
    >>> within_subject_ci(d, value_col="y", id_col="pid", wave_col="wave")[["wave", "n",
    ...                                                                    "estimate"]]
       wave  n  estimate
    0   pre  3       2.0
    1  post  3       3.0
    """
    func = "within_subject_ci"
    check_frame(data, [value_col, id_col, wave_col], where=func)
    check_unit(ci_level, name="ci_level", where=func)
    order = _wave_order(data, wave_col, waves)
    sub = data[[id_col, wave_col, value_col]].dropna()
    sub = sub.assign(**{wave_col: sub[wave_col].astype(str)})
    if sub.duplicated([id_col, wave_col]).any():
        raise InvalidParameterError(
            f"the `data` parameter of {func} must have one row per {id_col} x {wave_col}"
        )
    wide = sub.pivot(index=id_col, columns=wave_col, values=value_col).reindex(columns=order)
    wide = wide.dropna()
    n, k = wide.shape
    means = wide.mean(axis=0) if n else pd.Series(np.nan, index=order)
    if n >= 2 and k >= 2:
        norm = wide.sub(wide.mean(axis=1), axis=0) + wide.to_numpy().mean()
        se = norm.std(axis=0, ddof=1) / math.sqrt(n) * math.sqrt(k / (k - 1))
        half = stats.t.ppf(0.5 + ci_level / 2, n - 1) * se
    else:
        se = pd.Series(np.nan, index=order)
        half = se
    return pd.DataFrame(
        {
            "wave": order,
            "n": n,
            "estimate": means.to_numpy(dtype=float),
            "se": se.to_numpy(dtype=float),
            "ci_low": (means - half).to_numpy(dtype=float),
            "ci_high": (means + half).to_numpy(dtype=float),
        }
    )


def plot_trajectories(
    data: pd.DataFrame,
    *,
    scales: str | Sequence[str],
    id_col: str = "participant_id",
    wave_col: str = "wave",
    waves: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    ci_level: float = 0.95,
) -> Figure:
    """Per-scale trajectories: each participant faint, the group mean with within-subject CIs.

    Parameters
    ----------
    data : pandas.DataFrame
        Person x wave frame (one row per participant x wave, one column per scale).
    scales : str or sequence of str
        Score columns, one panel each.
    id_col, wave_col : str
        Participant and wave columns.
    waves : sequence of str, optional
        Wave order (default: the categories of ``wave_col``).
    labels : mapping, optional
        Panel titles by column.
    ci_level : float, default 0.95
        Coverage of the within-subject intervals (see :func:`within_subject_ci`).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per scale.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or ``ci_level`` is not in (0, 1).
    """
    func = "plot_trajectories"
    scales = _as_list(scales, func=func, param="scales")
    check_frame(data, [id_col, wave_col, *scales], where=func)
    check_unit(ci_level, name="ci_level", where=func)
    order = _wave_order(data, wave_col, waves)
    pos = {w: i for i, w in enumerate(order)}
    labels = dict(labels or {})
    with figure_style() as sns:
        fig, axes = _new_figure(len(scales))
        palette = sns.color_palette("colorblind")
        for ax, scale in zip(axes, scales, strict=True):
            sub = data[[id_col, wave_col, scale]].dropna()
            x_all = sub[wave_col].astype(str).map(pos)
            _person_lines(
                ax, sub.assign(_x=x_all), x="_x", y=scale, id_col=id_col, lw=0.8, marker_size=2.5
            )
            ci = within_subject_ci(
                data,
                value_col=scale,
                id_col=id_col,
                wave_col=wave_col,
                waves=order,
                ci_level=ci_level,
            )
            x = np.arange(len(order))
            ax.errorbar(
                x,
                ci["estimate"],
                yerr=[ci["estimate"] - ci["ci_low"], ci["ci_high"] - ci["estimate"]],
                color=palette[0],
                lw=2.2,
                marker="o",
                ms=6,
                capsize=4,
                zorder=5,
            )
            ax.set_xticks(x, order)
            ax.set_xlim(-0.3, len(order) - 0.7)
            ax.set_title(labels.get(scale, scale))
            ax.set_xlabel(f"wave (mean of {int(ci['n'].iloc[0])} complete cases)")
            ax.set_ylabel("score")
    return fig


def plot_wave_distributions(
    data: pd.DataFrame,
    *,
    scales: str | Sequence[str],
    wave_col: str = "wave",
    waves: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Figure:
    """Distribution of each scale at each wave (violin with box and quartiles).

    Parameters
    ----------
    data : pandas.DataFrame
        Person x wave frame.
    scales : str or sequence of str
        Score columns, one panel each.
    wave_col : str, default "wave"
        Wave column.
    waves : sequence of str, optional
        Wave order.
    labels : mapping, optional
        Panel titles by column.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per scale; the x tick labels give ``n`` per wave.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing.
    """
    func = "plot_wave_distributions"
    scales = _as_list(scales, func=func, param="scales")
    check_frame(data, [wave_col, *scales], where=func)
    order = _wave_order(data, wave_col, waves)
    labels = dict(labels or {})
    with figure_style() as sns:
        fig, axes = _new_figure(len(scales))
        for ax, scale in zip(axes, scales, strict=True):
            sub = data[[wave_col, scale]].dropna()
            sub = sub.assign(**{wave_col: sub[wave_col].astype(str)})
            sns.violinplot(
                data=sub,
                x=wave_col,
                y=scale,
                order=order,
                ax=ax,
                inner="quart",
                color=sns.color_palette("colorblind")[0],
                cut=0,
                linewidth=0.8,
                density_norm="width",
            )
            for coll in ax.collections:
                coll.set_alpha(0.55)
            counts = sub[wave_col].value_counts()
            ax.set_xticks(range(len(order)), [f"{w}\n(n = {int(counts.get(w, 0))})" for w in order])
            ax.set_title(labels.get(scale, scale))
            ax.set_xlabel("")
            ax.set_ylabel("score")
    return fig


def plot_reliable_change(
    data: pd.DataFrame,
    *,
    pre_col: str = "pre",
    post_col: str = "post",
    threshold_col: str = "threshold",
    scale_col: str = "scale",
    labels: Mapping[str, str] | None = None,
    pre_label: str = "pre",
    post_label: str = "post",
) -> Figure:
    """Pre vs post score per participant with the band of no reliable change.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per participant x scale with the pre and post score and the smallest
        reliable change (``threshold``, e.g. ``1.96 * S_diff``; constant within a scale).
    pre_col, post_col, threshold_col, scale_col : str
        Column names.
    labels : mapping, optional
        Panel titles by scale.
    pre_label, post_label : str, default "pre", "post"
        Axis labels: the names of the two waves compared.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per scale: the identity line, the band ``|post - pre| < threshold``
        shaded, and the participants coloured as reliably improved (above the band),
        reliably declined (below) or unchanged.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or a scale has more than one threshold.
    """
    func = "plot_reliable_change"
    check_frame(data, [pre_col, post_col, threshold_col, scale_col], where=func)
    scales = list(pd.unique(data[scale_col]))
    labels = dict(labels or {})
    with figure_style() as sns:
        palette = sns.color_palette("colorblind")
        fig, axes = _new_figure(max(len(scales), 1))
        for ax, scale in zip(axes, scales, strict=False):
            sub = data.loc[data[scale_col] == scale, [pre_col, post_col, threshold_col]]
            thresholds = sub[threshold_col].dropna().unique()
            if len(thresholds) > 1:
                raise InvalidParameterError(
                    f"the `{threshold_col}` column passed to {func} must be constant within a "
                    f"scale; {scale!r} has {len(thresholds)} values"
                )
            sub = sub.dropna(subset=[pre_col, post_col])
            values = sub[[pre_col, post_col]].to_numpy(dtype=float)
            lo = float(np.nanmin(values)) if values.size else 0.0
            hi = float(np.nanmax(values)) if values.size else 1.0
            pad = 0.08 * (hi - lo or 1.0)
            lo, hi = lo - pad, hi + pad
            line = np.array([lo, hi])
            ax.plot(line, line, color="0.3", lw=1, ls="--")
            if len(thresholds) == 1 and np.isfinite(thresholds[0]):
                t = float(thresholds[0])
                ax.fill_between(
                    line,
                    line - t,
                    line + t,
                    color="0.85",
                    zorder=0,
                    label="band of no reliable change",
                )
                diff = sub[post_col] - sub[pre_col]
                groups = [
                    (diff >= t, palette[2], "^", "reliably higher"),
                    (diff <= -t, palette[3], "v", "reliably lower"),
                    ((diff > -t) & (diff < t), "0.35", "o", "no reliable change"),
                ]
            else:
                groups = [(pd.Series(True, index=sub.index), "0.35", "o", "participants")]
            counts = []
            for mask, color, marker, name in groups:
                pts = sub.loc[mask]
                ax.scatter(
                    pts[pre_col],
                    pts[post_col],
                    s=14,
                    color=color,
                    marker=marker,
                    label=name,
                    zorder=3,
                    edgecolor="white",
                    lw=0.4,
                )
                counts.append(f"{name.removeprefix('reliably ')} {len(pts)}")
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
            ax.set_aspect("equal", adjustable="box")
            ax.set_title(_short_title(labels.get(scale, str(scale))))
            band = f"; band |Δ| < {thresholds[0]:.3g}" if len(thresholds) == 1 else ""
            # wrapped to the panel's width: three panels of two-column width hold ~32 characters
            width = 32 if len(scales) > 1 else 60
            note = textwrap.wrap(f"({', '.join(counts)}{band})", width=width)
            ax.set_xlabel("\n".join([pre_label, *note]), fontsize=8)
            ax.set_ylabel(post_label)
        handles, names = axes[0].get_legend_handles_labels()
        names = [n.split(" (|")[0] for n in names]
        fig.legend(handles, names, loc="outside lower center", ncols=len(names), frameon=False)
    return fig


def plot_state_course(
    data: pd.DataFrame,
    *,
    scales: str | Sequence[str],
    id_col: str = "participant_id",
    day_col: str = "day",
    wave_col: str = "wave",
    waves: Sequence[str] | None = None,
    labels: Mapping[str, str] | None = None,
    ci_level: float = 0.95,
) -> Figure:
    """Plot the course of the states on the study calendar.

    Parameters
    ----------
    data : pandas.DataFrame
        Person x wave frame with ``day`` (days from the participant's first session to the
        survey).
    scales : str or sequence of str
        State score columns, one panel each.
    id_col, day_col, wave_col : str
        Column names.
    waves : sequence of str, optional
        Wave order.
    labels : mapping, optional
        Panel titles by column.
    ci_level : float, default 0.95
        Coverage of the within-subject intervals of the wave means.

    Returns
    -------
    matplotlib.figure.Figure
        Per panel: each participant's scores at the days they answered (faint lines), and the
        wave means (complete cases, within-subject CI) at the median day of each wave.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing.
    """
    func = "plot_state_course"
    scales = _as_list(scales, func=func, param="scales")
    check_frame(data, [id_col, day_col, wave_col, *scales], where=func)
    check_unit(ci_level, name="ci_level", where=func)
    order = _wave_order(data, wave_col, waves)
    labels = dict(labels or {})
    with figure_style() as sns:
        palette = sns.color_palette("colorblind")
        fig, axes = _new_figure(len(scales))
        for ax, scale in zip(axes, scales, strict=True):
            sub = data[[id_col, day_col, wave_col, scale]].dropna()
            sub = sub.assign(**{day_col: sub[day_col].astype(float)})
            _person_lines(ax, sub, x=day_col, y=scale, id_col=id_col, lw=0.7, marker_size=2)
            ci = within_subject_ci(
                data.dropna(subset=[day_col]),
                value_col=scale,
                id_col=id_col,
                wave_col=wave_col,
                waves=order,
                ci_level=ci_level,
            )
            days = sub.assign(_w=sub[wave_col].astype(str)).groupby("_w")[day_col].median()
            x = days.reindex(order).to_numpy(dtype=float)
            ax.errorbar(
                x,
                ci["estimate"],
                yerr=[ci["estimate"] - ci["ci_low"], ci["ci_high"] - ci["estimate"]],
                color=palette[1],
                lw=2.2,
                marker="s",
                ms=6,
                capsize=4,
                zorder=5,
            )
            for xi, w in zip(x, order, strict=True):
                if np.isfinite(xi):
                    ax.annotate(
                        w,
                        (xi, 1.0),
                        xycoords=("data", "axes fraction"),
                        ha="center",
                        va="bottom",
                        fontsize=7,
                        color="0.3",
                    )
            ax.axvline(0, color="0.6", lw=0.8, ls=":")
            ax.set_title(labels.get(scale, scale), pad=12)
            ax.set_xlabel("day of the study (0 = first session)")
            ax.set_ylabel("score")
    return fig
