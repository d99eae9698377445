"""Figures of a change report: trajectories, distributions, reliable change, ratings, traits.

Every function takes a DataFrame (one of the analysis frames or a result table), draws on a
new :class:`matplotlib.figure.Figure` and returns it; nothing is shown and no global
matplotlib or seaborn state is changed (figures are created without pyplot and styled
inside :func:`matplotlib.rc_context`). :func:`save_figure` writes a deterministic PNG.

matplotlib and seaborn are imported inside the functions, so ``import longitudinal`` stays
light.

Intervals are computed here, never by seaborn's bootstrap, so figures are deterministic:
group means carry within-subject confidence intervals (Cousineau 2005 with the Morey 2008
correction) on the complete cases, or t intervals across participants.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from longitudinal._checks import check_frame, check_unit
from longitudinal._errors import InvalidParameterError

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "plot_big_five_radar",
    "plot_demographics",
    "plot_empathy_course",
    "plot_power_curve",
    "plot_rating_distribution",
    "plot_reliable_change",
    "plot_state_course",
    "plot_trajectories",
    "plot_wave_distributions",
    "empathy_course_table",
    "figure_style",
    "save_figure",
    "within_subject_ci",
]

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
                    (diff >= t, palette[2], "reliably higher"),
                    (diff <= -t, palette[3], "reliably lower"),
                    ((diff > -t) & (diff < t), "0.35", "no reliable change"),
                ]
            else:
                groups = [(pd.Series(True, index=sub.index), "0.35", "participants")]
            counts = []
            for mask, color, name in groups:
                pts = sub.loc[mask]
                ax.scatter(
                    pts[pre_col],
                    pts[post_col],
                    s=18,
                    color=color,
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
            ax.set_xlabel(f"{pre_label}\n({', '.join(counts)}{band})", fontsize=8)
            ax.set_ylabel(post_label)
        handles, names = axes[0].get_legend_handles_labels()
        names = [n.split(" (|")[0] for n in names]
        fig.legend(handles, names, loc="outside lower center", ncols=len(names), frameon=False)
    return fig


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
        Declared scale; whole-number scales are drawn as bars per value, others as a
        histogram.

    Returns
    -------
    matplotlib.figure.Figure
        Bars with the share of ratings per value (counts printed on the bars), and the
        mean and SD in the title.

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
        fig, (ax,) = _new_figure(1, figsize=(5.0, 3.4))
        whole = float(scale_min).is_integer() and float(scale_max).is_integer()
        if whole and values.map(float.is_integer).all():
            levels = np.arange(int(scale_min), int(scale_max) + 1)
            counts = values.value_counts().reindex(levels.astype(float), fill_value=0)
            share = counts / max(len(values), 1)
            bars = ax.bar(levels, share.to_numpy(), color=color, width=0.7)
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
            ax.set_xticks(levels)
            ax.set_ylim(0, max(float(share.max()), 0.01) * 1.15)
            ax.set_ylabel("share of ratings")
        else:
            sns.histplot(
                x=values, ax=ax, color=color, stat="proportion", binrange=(scale_min, scale_max)
            )
        mean = values.mean() if len(values) else float("nan")
        sd = values.std(ddof=1) if len(values) > 1 else float("nan")
        ax.set_title(f"{rating_col} ratings (n = {len(values)}, M = {mean:.2f}, SD = {sd:.2f})")
        ax.set_xlabel(f"{rating_col} ({scale_min:g}-{scale_max:g})")
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
        fig, (ax,) = _new_figure(1, polar=True, figsize=(5.6, 5.0))
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
        ax.set_title(f"Trait profile (n = {len(sub)}; mean ± 1 SD)", pad=18)
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
    """Plot the month-long course of the states on the study calendar.

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


def plot_empathy_course(
    data: pd.DataFrame,
    *,
    rating_col: str = "empathy",
    id_col: str = "participant_id",
    time_col: str = "week",
    scale_min: float | None = None,
    scale_max: float | None = None,
    min_participants: int = 3,
    ci_level: float = 0.95,
) -> Figure:
    """Empathy ratings over the month: participants' means per period and the group mean.

    Parameters
    ----------
    data : pandas.DataFrame
        Story frame (one row per rating) with ``time_col``.
    rating_col, id_col, time_col : str
        Column names (``time_col``: a whole-number period such as the study week, the day
        or ``session_index``).
    scale_min, scale_max : float, optional
        Declared rating scale; sets the y axis.
    min_participants : int, default 3
        Periods with fewer participants are drawn as open markers without an interval.
    ci_level : float, default 0.95
        Coverage of the t interval of the group mean across participants.

    Returns
    -------
    matplotlib.figure.Figure
        Faint lines: each participant's mean rating per period; bold: the mean of those
        participant means with its interval across participants; the number of
        participants per period is printed along the bottom.

    Raises
    ------
    longitudinal.InvalidParameterError
        If a column is missing or ``min_participants`` is not a positive int.
    """
    func = "plot_empathy_course"
    check_frame(data, [rating_col, id_col, time_col], where=func)
    check_unit(ci_level, name="ci_level", where=func)
    if (
        isinstance(min_participants, bool)
        or not isinstance(min_participants, int)
        or (min_participants < 2)
    ):
        raise InvalidParameterError(
            f"the `min_participants` parameter of {func} must be an int >= 2; "
            f"got {min_participants!r}"
        )
    summary = empathy_course_table(
        data, rating_col=rating_col, id_col=id_col, time_col=time_col, ci_level=ci_level
    )
    sub = data[[id_col, time_col, rating_col]].dropna()
    person = sub.groupby([id_col, time_col], sort=True)[rating_col].mean().reset_index()
    with figure_style() as sns:
        color = sns.color_palette("colorblind")[0]
        fig, (ax,) = _new_figure(1, figsize=(6.4, 3.6))
        _person_lines(ax, person, x=time_col, y=rating_col, id_col=id_col, lw=0.7, alpha=0.3)
        enough = summary["n"] >= min_participants
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
        ax.set_ylabel(f"mean {rating_col}")
        ax.set_title(f"{rating_col} over the study ({ci_level:.0%} CI across participants)")
        if pd.api.types.is_integer_dtype(summary[time_col]):
            ax.set_xticks(summary[time_col].to_numpy())
    return fig


def empathy_course_table(
    data: pd.DataFrame,
    *,
    rating_col: str = "empathy",
    id_col: str = "participant_id",
    time_col: str = "week",
    ci_level: float = 0.95,
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

    Returns
    -------
    pandas.DataFrame
        One row per period: ``time_col``, ``n`` (participants), ``n_ratings``, ``estimate``
        (mean of the participants' mean ratings), ``sd`` (across participants), ``ci_low``,
        ``ci_high`` (``estimate +- t(n - 1) sd / sqrt(n)``; missing when ``n < 2``).

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
    """
    func = "empathy_course_table"
    check_frame(data, [rating_col, id_col, time_col], where=func)
    check_unit(ci_level, name="ci_level", where=func)
    sub = data[[id_col, time_col, rating_col]].dropna()
    person = sub.groupby([id_col, time_col], sort=True)[rating_col].agg(["mean", "size"])
    person = person.reset_index()
    rows = []
    for t, group in person.groupby(time_col, sort=True):
        vals = group["mean"].to_numpy(dtype=float)
        n = len(vals)
        mean = float(vals.mean())
        sd = float(vals.std(ddof=1)) if n > 1 else float("nan")
        half = stats.t.ppf(0.5 + ci_level / 2, n - 1) * sd / math.sqrt(n) if n > 1 else np.nan
        rows.append((t, n, int(group["size"].sum()), mean, sd, mean - half, mean + half))
    return pd.DataFrame(
        rows, columns=[time_col, "n", "n_ratings", "estimate", "sd", "ci_low", "ci_high"]
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
        fig, (ax,) = _new_figure(1, figsize=(5.6, 3.6))
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
            ax.plot(x, part["power"].to_numpy(dtype=float), marker="o", color=color, label=label)
        ax.axhline(target, color="0.3", linestyle="--", linewidth=1, label=f"{target:.0%} target")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("participants")
        ax.set_ylabel("power")
        ax.set_xticks(sorted(table["n_participants"].unique()))
        if title:
            ax.set_title(_short_title(title, width=60))
        ax.legend(loc="lower right", frameon=False, fontsize="small")
    return fig
