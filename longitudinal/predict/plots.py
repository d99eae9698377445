"""Figures of :mod:`longitudinal.predict`: the forest plot of the effects, the benchmark bars."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from longitudinal._checks import check_unit
from longitudinal._errors import InvalidParameterError
from longitudinal.narrate.gates import BAYES_ENGINES
from longitudinal.predict.benchmark import MODEL_DESCRIPTIONS, spread_bounds
from longitudinal.predict.effects import check_effects_table
from longitudinal.predict.reading import term_label
from models.evaluation import (
    METRIC_NAMES,
)

if TYPE_CHECKING:  # pragma: no cover - annotations only
    from matplotlib.figure import Figure


def plot_effects(
    effects: pd.DataFrame,
    *,
    ci_level: float = 0.95,
    scale_min: float | None = None,
    scale_max: float | None = None,
) -> Figure:
    """Forest plot of the standardized effects of both engines, side by side.

    Parameters
    ----------
    effects : pandas.DataFrame
        :attr:`EmpathyEffects.effects`.
    ci_level : float, default 0.95
        Level of the intervals (for the axis label).
    scale_min, scale_max : float, optional
        The declared rating scale (``EmpathyData.scale_min``, ``scale_max``), named in the
        left panel's title ("Effects on the 1–7 rating"); without them the title says "the
        rating".

    Returns
    -------
    matplotlib.figure.Figure
        Left panel: rating points per SD (per week for time) — LMM coefficients with their
        confidence intervals and, offset below them, the ordinal models' average marginal
        effects (or the Bayesian linear mixed model's coefficients, for a continuous scale)
        with their intervals. Right panel (with an ordinal fit): the ordinal coefficients on
        the latent logit scale, on their own axis.

    Raises
    ------
    longitudinal.InvalidParameterError
        When ``effects`` lacks the columns of :data:`EFFECT_COLUMNS`.

    Examples
    --------
    >>> from longitudinal.predict import plot_effects
    >>> fig = plot_effects(fitted.effects)  # doctest: +SKIP
    """
    func = "plot_effects"
    check_effects_table(effects, func=func)
    check_unit(ci_level, name="ci_level", where=func)
    rating = "rating"
    if scale_min is not None and scale_max is not None:
        rating = f"{float(scale_min):g}–{float(scale_max):g} rating"
    from matplotlib.figure import Figure

    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    bayesian = effects["engine"].isin(list(BAYES_ENGINES))
    gaussian = bool((effects["engine"] == "bayes_gaussian").any())
    bayes_r = effects[bayesian & (effects["scale"] == "rating")]
    bayes_l = effects[(effects["engine"] == "bayes_ordinal") & (effects["scale"] == "logit")]
    clmm_r = effects[(effects["engine"] == "clmm") & (effects["scale"] == "rating")]
    clmm_l = effects[(effects["engine"] == "clmm") & (effects["scale"] == "logit")]
    order = list(dict.fromkeys(effects["term"]))
    labels = {rec.term: term_label(rec) for rec in effects.drop_duplicates("term").itertuples()}
    n = len(order)
    two = not (bayes_l.empty and clmm_l.empty)
    from longitudinal.plotting import figure_style

    with figure_style() as sns:
        palette = sns.color_palette("colorblind")
        from longitudinal.plotting import TWO_COLUMN_WIDTH

        # a forest of long term labels: the page width (two journal columns)
        fig = Figure(figsize=(TWO_COLUMN_WIDTH, 0.3 * n + 1.8), layout="constrained")
        grid = fig.add_gridspec(1, 2, width_ratios=[1.3, 1.0]) if two else fig.add_gridspec(1, 1)
        axes = [fig.add_subplot(grid[0, k]) for k in range(2 if two else 1)]
        y = {t: n - 1 - i for i, t in enumerate(order)}
        pct = f"{100 * ci_level:g}%"

        def draw(ax, table, offset, color, marker, label):
            if table.empty:
                return
            ys = np.array([y[t] + offset for t in table["term"]])
            est = table["estimate"].to_numpy(dtype=float)
            lo = est - table["ci_low"].to_numpy(dtype=float)
            hi = table["ci_high"].to_numpy(dtype=float) - est
            ax.errorbar(
                est,
                ys,
                xerr=[lo, hi],
                fmt=marker,
                color=color,
                ecolor=color,
                capsize=2.5,
                markersize=4,
                linewidth=1.2,
                label=label,
            )

        ax = axes[0]
        draw(ax, lmm, 0.2, palette[0], "o", f"LMM coefficient ({pct} CI)")
        draw(
            ax,
            clmm_r,
            0.0,
            palette[2],
            "^",
            f"ordinal mixed model: average marginal effect ({pct} CI)",
        )
        draw(
            ax,
            bayes_r,
            -0.2,
            palette[1],
            "s",
            f"Bayesian LMM: coefficient ({pct} HDI)"
            if gaussian
            else f"Bayesian ordinal: average marginal effect ({pct} HDI)",
        )
        ax.axvline(0.0, color="0.4", linewidth=0.8, linestyle="--")
        ax.set_yticks([y[t] for t in order], [labels[t] for t in order])
        ax.set_xlabel("rating points per SD of the predictor\n(weeks: per week)")
        ax.set_title(f"Effects on the {rating}")
        ax.grid(axis="x", color="0.9")
        ax.set_ylim(-0.7, n - 0.3)
        if two:
            ax2 = axes[1]
            draw(ax2, clmm_l, 0.1, palette[2], "v", f"ordinal mixed model: coefficient ({pct} CI)")
            draw(ax2, bayes_l, -0.1, palette[1], "D", f"Bayesian ordinal: coefficient ({pct} HDI)")
            ax2.axvline(0.0, color="0.4", linewidth=0.8, linestyle="--")
            ax2.set_yticks([y[t] for t in order], [""] * n)
            ax2.set_xlabel("latent logit units per SD (weeks: per week)\nnot the rating scale")
            ax2.set_title("Cumulative-logit coefficients")
            ax2.grid(axis="x", color="0.9")
            ax2.set_ylim(ax.get_ylim())
        fig.legend(loc="outside lower center", ncols=2, frameon=False)
    return fig


def plot_metrics(
    summary: pd.DataFrame, *, split: str = "test", mse_in_points: bool = False
) -> Figure:
    """Bar chart of the benchmark metrics per model (mean ± SD over seeds).

    Parameters
    ----------
    summary : pandas.DataFrame
        :attr:`EvaluationResult.summary_table`.
    split : {"test", "val", "kfold"}, default "test"
        Which split to draw.
    mse_in_points : bool, default False
        The MSE is in squared rating points, not x 100 (a continuous scale:
        :func:`longitudinal.predict.benchmark.mse_factor`); its panel says so.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per metric (r, rho, Acc, F1, MSE; all x 100, or the MSE in squared rating
        points with ``mse_in_points``), one bar per model with the
        SD over seeds as an error bar, cut at the metric's range (accuracy, F1 and MSE are
        never negative, accuracy and F1 never above 100; the title says so when a bar is
        cut); the bars of models that are not the package's (a
        researcher's predictions) are hatched. Drawn in the report's style
        (:func:`longitudinal.plotting.figure_style`).

    Raises
    ------
    longitudinal.InvalidParameterError
        When ``summary`` lacks the columns or has no row for ``split``.

    Examples
    --------
    >>> from longitudinal.predict import plot_metrics
    >>> fig = plot_metrics(result.summary_table)  # doctest: +SKIP
    """
    func = "plot_metrics"
    need = ["model", "split"] + [f"{m}_{s}" for m in METRIC_NAMES for s in ("mean", "sd")]
    if not isinstance(summary, pd.DataFrame) or any(c not in summary.columns for c in need):
        raise InvalidParameterError(
            f"the `summary` parameter of {func} must be EvaluationResult.summary_table "
            f"(columns {need})"
        )
    block = summary[summary["split"] == split]
    if block.empty:
        raise InvalidParameterError(
            f"the `split` parameter of {func}: no row for split {split!r}; "
            f"have {sorted(set(summary['split']))}"
        )
    from matplotlib.figure import Figure

    from longitudinal.plotting import figure_style

    titles = {"r": "Pearson r", "rho": "Spearman ρ", "acc": "Accuracy", "f1": "F1", "mse": "MSE"}
    x = np.arange(len(block))
    theirs = [m not in MODEL_DESCRIPTIONS for m in block["model"]]
    floored = False
    with figure_style() as sns:
        ours = sns.color_palette("Blues_d", max(1, len(block) - sum(theirs)))
        own_colors = sns.color_palette("colorblind")[1:5]
        n_ours = 0
        palette = []
        for i in range(len(block)):
            if theirs[i]:
                palette.append(own_colors[sum(theirs[:i]) % len(own_colors)])
            else:
                palette.append(ours[n_ours])
                n_ours += 1
        from longitudinal.plotting import TWO_COLUMN_WIDTH

        # five panels side by side: the page width (two journal columns)
        fig = Figure(figsize=(TWO_COLUMN_WIDTH, 3.2), layout="constrained")
        for j, m in enumerate(METRIC_NAMES):
            ax = fig.add_subplot(1, len(METRIC_NAMES), j + 1)
            mean = block[f"{m}_mean"].to_numpy(dtype=float)
            sd = np.nan_to_num(block[f"{m}_sd"].to_numpy(dtype=float))
            # a metric cannot leave its range: the error bar stops at 0 (and at 100)
            below, above = spread_bounds(m, np.nan_to_num(mean), sd)
            floored = floored or bool(np.any(below < sd) or np.any(above < sd))
            bars = ax.bar(
                x,
                np.nan_to_num(mean),
                yerr=[below, above],
                color=palette,
                capsize=3,
                width=0.7,
            )
            for bar, own in zip(bars, theirs, strict=True):
                if own:  # a researcher's model, beside the package's
                    bar.set_hatch("///")
                    bar.set_edgecolor("white")
            for i, v in enumerate(mean):
                if not np.isfinite(v):
                    ax.text(i, 0, "n/a", ha="center", va="bottom", fontsize=7)
            ax.set_xticks(x, block["model"].tolist(), rotation=45, ha="right", fontsize=7)
            unit = "points²" if m == "mse" and mse_in_points else "x100"
            ax.set_title(f"{titles[m]} ({unit})")
            ax.axhline(0, color="0.4", linewidth=0.6)
            ax.grid(axis="x", visible=False)
        title = f"Out-of-person prediction, {split} participants (mean ± SD over seeds)"
        if any(theirs):
            title += "; hatched: your models"
        if floored:
            title += "; error bars stop at the metric's range (r, ρ: ±100; Acc, F1: 0–100; MSE: 0)"
        import textwrap

        fig.suptitle("\n".join(textwrap.wrap(title, 100)))
    return fig
