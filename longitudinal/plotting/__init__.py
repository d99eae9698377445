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

from longitudinal.plotting._style import (
    JOURNAL_DPI,
    ONE_COLUMN_WIDTH,
    TWO_COLUMN_WIDTH,
    figure_style,
    journal_size,
    save_figure,
)
from longitudinal.plotting.change import (
    plot_reliable_change,
    plot_state_course,
    plot_trajectories,
    plot_wave_distributions,
    within_subject_ci,
)
from longitudinal.plotting.power import plot_power_curve
from longitudinal.plotting.study import (
    empathy_course_table,
    plot_big_five_radar,
    plot_demographics,
    plot_empathy_course,
    plot_rating_distribution,
    plot_smooth_course,
)

__all__ = [
    "JOURNAL_DPI",
    "ONE_COLUMN_WIDTH",
    "TWO_COLUMN_WIDTH",
    "empathy_course_table",
    "figure_style",
    "journal_size",
    "plot_big_five_radar",
    "plot_demographics",
    "plot_empathy_course",
    "plot_power_curve",
    "plot_rating_distribution",
    "plot_reliable_change",
    "plot_smooth_course",
    "plot_state_course",
    "plot_trajectories",
    "plot_wave_distributions",
    "save_figure",
    "within_subject_ci",
]
