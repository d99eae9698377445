"""How reliable is a participant's mean empathy rating? The G and D study of a study's ratings.

:func:`ratings_g_study` takes a loaded study (:func:`longitudinal.load_study`) and runs
:func:`models.generalizability.g_study` on its kept ratings: participant, session within
participant, story (crossed with participant when some story is rated by two or more
participants, else nested and so part of the residual) and residual, by REML; the G
coefficient of a participant's mean rating for the study's numbers of sessions and stories
per session; and the D study over 1 to 10 stories per session and the study's session counts
(smallest, median, largest) with 5, 10 and 20 sessions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from longitudinal._errors import InvalidParameterError
from models.generalizability import D_STORIES, GStudy, g_study

if TYPE_CHECKING:  # pragma: no cover - imported for annotations only
    from longitudinal.study.loaded import Study

__all__ = ["ratings_g_study"]


def ratings_g_study(
    study: Study,
    *,
    d_sessions: Sequence[int | float] | None = None,
    d_stories: Sequence[int | float] = D_STORIES,
) -> GStudy:
    """G and D study of a study's empathy ratings.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study
        A loaded study; its kept ratings (:attr:`Study.ratings`) are used.
    d_sessions : sequence of numbers, optional
        Sessions per participant of the D study; default the smallest, median and largest
        observed number of rated sessions per participant and 5, 10 and 20.
    d_stories : sequence of numbers, default 1 to 10
        Stories per session of the D study.

    Returns
    -------
    models.generalizability.GStudy
        Components ``participant``, ``session:participant``, ``story`` (crossed designs),
        ``residual``; G as observed (``n_participants, n_sessions, n_stories, n_ratings,
        error_variance, g, flag``: harmonic mean sessions per participant and stories per
        session); the D study (``n_sessions, n_stories, error_variance, g, flag``).

    Raises
    ------
    InvalidParameterError
        When the ratings cannot identify the components (fewer than three participants,
        nobody with two rated sessions); the message says why.

    Notes
    -----
    Every session is taken to bring new stories (as the robot retrieves them), so the
    story variance counts as error of a participant's mean. Validated against
    ``lme4::lmer`` 1.1-31 (``tests/longitudinal/reference/generalizability.R``).

    Examples
    --------
    >>> from longitudinal import load_study
    >>> from longitudinal.psychometrics.generalizability import ratings_g_study
    >>> res = ratings_g_study(load_study("study/"))  # doctest: +SKIP
    >>> res.d_study.query("n_sessions == 10")  # doctest: +SKIP
    """
    if not hasattr(study, "ratings") or not hasattr(study, "config"):
        raise InvalidParameterError(
            "the `study` parameter of ratings_g_study must be a loaded study "
            f"(longitudinal.load_study); got {type(study).__name__}"
        )
    cfg = study.config
    return g_study(
        study.ratings,
        id_col=cfg.id_col,
        session_col="session_id",
        story_col="story_id",
        rating_col=cfg.rating_col,
        d_sessions=d_sessions,
        d_stories=d_stories,
    )
