"""Synthetic EmpathicStories++ study with known truth.

A twin of the EmpathicStories++ deployment (Shen et al., ACL Findings 2024): 41 participants
living with a social robot for a month, 6-12 sessions each (269 in total), three stories rated
for empathy (1-5) per session, and pre/mid/post questionnaires. Every number is generated from
parameters written to ``truth.json``, so analyses of the simulated study can be checked against
the truth.

:func:`simulate_frames` returns the simulated tables in memory (:class:`SimulatedStudy`);
:func:`simulate_study` writes them as a study directory in the layout of
``docs/architecture.md``::

    study.toml                  waves pre/mid/post, surveys blocks, roles
    participants.csv            participant_id, age, gender
    sessions.csv                participant_id, session_id, started_at, duration_min, words,
                                n_utterances and 11 audio/face/text aggregates
    ratings.csv                 participant_id, session_id, story_id, position, empathy
    surveys/pre.csv             plain CSV: participant_id, completed_at, all 83 items
    surveys/mid.csv             plain CSV: participant_id, completed_at, the 24 state items
    surveys/post_qualtrics.csv  Qualtrics export (3 header lines) of the 24 state items
    surveys/post_map.csv        column,item: Qualtrics column -> item id
    truth.json                  every generating parameter (keys below)

Generating model
----------------
*Latent person variables.* Ten standard-normal latent variables per participant, correlated
as in ``truth["latent"]``: the Big Five (extraversion, agreeableness, conscientiousness,
neuroticism, openness), absorption, trait empathy, and the stable person level of three
states (compassion, social connection, well-being).

*Item responses* (every instrument). For item *j* with loading ``l`` and thresholds
``t_1 < ... < t_{K-1}``, the keyed response of a person with latent value ``eta`` is
``response_min + #{k : y > t_k}`` with ``y = l * eta + sqrt(1 - l**2) * e`` and
``e ~ N(0, 1)``. Reverse-keyed items are written reversed,
``raw = response_min + response_max - keyed``. Traits are answered at *pre* only. A state
scale's latent value at wave *w* is
``eta = wave_mean_latent[w] + sd_person * u + sd_change * c * t_w + sd_occasion * o``
with ``u`` the person's latent state level, ``c, o ~ N(0, 1)`` independent and
``t_w = 0, 0.5, 1`` for pre, mid, post (months since pre), so the latent variance at pre
is 1 and states move over the month with person-level variation in change.

*Observed scores* (what the effects below are defined on). Items, reverse keys, response
ranges and scoring rules are read from the instrument files (:func:`surveys.load_instrument`),
and every scale is scored from the simulated item responses by :func:`surveys.score`, so the
generator and the library cannot disagree: reverse keyed items are reflected with
``response_min + response_max - x``; BFI-44 scales, tas4, cls9_humanity and ubc_sscs10 are
the mean of the answered items, sites is its single item and who5 is the sum of its 5 items
times 4 (percentage, 0-100).

*Empathy ratings* follow a cumulative-logit (ordinal) model. For rating *r* of story *s* by
person *p* in session *i*::

    latent_r = intercept + sum_k fixed[k] * x_k + b0_p + b1_p * week_i + v_s + e_r
    empathy  = 1 + #{k : latent_r > cutpoints[k]},      e_r ~ standard logistic

with ``(b0_p, b1_p)`` bivariate normal (``sd_person_intercept``, ``sd_person_slope_week``,
``corr_person``) and ``v_s ~ N(0, sd_story**2)`` for each story of the pool. The
predictors ``x_k`` are all computable from the written files:

``agreeableness_z``, ``openness_z``
    BFI-44 scale score at pre, standardized across participants (sample mean, SD with
    ``ddof=1``): effects are per SD of the person's observed scale score.
``absorption_z``, ``sites_z``
    the same for the tas4 mean and the sites item.
``cls9_humanity_between_z``, ``who5_between_z``
    the person's mean state score over the waves that precede their ratings (pre, and mid
    for a person with a session after the mid survey; post follows the last session and
    never enters) minus the mean of these person means, divided by the SD of the scale
    score at pre across participants (``ddof=1``).
``cls9_humanity_within_z``, ``who5_within_z``
    the state score of the most recent wave completed before the session (pre, or mid when
    the session is after the mid survey date and the mid survey was answered) minus the
    person's mean over the waves that precede their ratings, divided by the same SD at pre.
``words_z``
    the session's spoken words standardized over all sessions in ``sessions.csv``
    (``ddof=1``).
``week``
    ``(session date - date of the person's first session).days / 7`` (calendar days).

No other session feature affects empathy. The intercept is 0; the cutpoints carry the
location. They were chosen so that ratings have mean about 3.3 and SD about 1.2.

Sessions
--------
Participant *p* answers the pre survey on their enrolment day (``day 0``), the mid survey on
day 13-16 and the post survey on day 30-33. Sessions happen on distinct days 1-29 (never on
the mid survey day), at 08:00-22:00. The number of sessions per person is 6 plus a share of
``round(n_participants * 269 / 41) - 6 * n_participants`` extra sessions (at most 12 in all),
so the default study has exactly 269. Duration and words are drawn from skewed distributions
driven by a person-level and session-level engagement factor, then affinely rescaled so that
their sample mean and SD equal the paper's (12 min, SD 4.5; 1,258 words, SD 531) and clipped to
the paper's ranges (2-29 min; 40-3,418 words); the session features are correlated with them.

Defects
-------
With ``defects=True`` (default): one participant skipped the mid survey, one BFI-44 item at pre
is blank, one session has no ratings, and the Qualtrics export holds one "Survey Preview" row
(``DistributionChannel`` ``preview``, empty ``participant_id``) as its first data row (line 4).

truth.json
----------
``seed``, ``n_participants``, ``n_sessions``, ``n_ratings``, ``n_stories_pool``
    the call and the realized sizes.
``generator``
    ``{"module": "longitudinal.simulate", "version": ...}``.
``calendar``
    ``study_start`` (ISO date of the earliest enrolment day), ``enrolment_days`` (range of the
    enrolment offset), ``mid_day``, ``post_day`` (ranges of the survey days after pre),
    ``session_days``, ``session_hours`` and ``wave_time`` (``t_w`` in months).
``participants``
    how age and gender were drawn.
``latent``
    ``names`` and ``correlation`` (matrix) of the ten latent person variables.
``items``
    per item id: ``instrument``, ``scale`` (truth key), ``loading``, ``thresholds`` (latent
    scale), ``reverse`` (written reversed).
``traits``
    per trait key (``extraversion``, ``agreeableness``, ``conscientiousness``, ``neuroticism``,
    ``openness``, ``absorption`` (tas4), ``sites``): ``instrument``, ``latent``, ``items``,
    ``reverse``, ``response_min``, ``response_max``, ``scoring``, ``multiplier``,
    ``expected_score`` (population mean of the observed score) and ``sample`` (mean and SD of
    the observed score in this study, used for the ``*_z`` predictors).
``states``
    per instrument (``cls9_humanity``, ``ubc_sscs10``, ``who5``): the same scale fields plus
    ``wave_means`` (population mean of the observed score at pre, mid, post, on the scoring
    above: item mean for cls9_humanity and ubc_sscs10, percentage for who5),
    ``change`` (``mid - pre``, ``post - pre`` of ``wave_means``), ``wave_means_latent``
    (``wave_mean_latent[w]``), ``sd_person``, ``sd_change`` and ``sd_occasion`` (latent units)
    and ``sample`` (observed mean/SD at each wave, and the pre SD that scales the predictors).
``empathy``
    ``family`` ("ordinal-logit"), ``link``, ``scale_min``, ``scale_max``, ``intercept``,
    ``cutpoints`` (4 values), ``fixed`` (the coefficients named above, logit units per unit of
    the predictor), ``sd_person_intercept``, ``sd_person_slope_week``, ``corr_person``,
    ``sd_story``, ``residual`` (the logistic error), ``predictors`` (one-line definition of
    each), ``standardization`` (mean and SD used for ``words_z``), ``target_mean``,
    ``target_sd`` and ``realized`` (mean and SD of the written ratings).
``random_effects``
    the realized ``person`` effects (``intercept``, ``slope_week`` per participant id) and
    ``story`` effects (per story id of the pool).
``sessions``
    targets of duration and words, the session-count rule and a description of every feature.
``defects``
    ``missed_mid`` (ids), ``skipped_item`` (``participant_id``, ``wave``, ``item``, ``file``,
    ``row``) or ``null``, ``session_without_ratings`` (session ids),
    ``qualtrics_preview_rows`` (count) and ``qualtrics_preview_lines`` (file lines).

Floats in truth.json are rounded to 12 significant digits and CSV floats are written with a
fixed number of decimals per column, so the same seed gives byte-identical files.
"""

from longitudinal.simulate.files import simulate_study
from longitudinal.simulate.frames import SimulatedStudy, simulate_frames
from longitudinal.simulate.parameters import WAVES

__all__ = ["WAVES", "SimulatedStudy", "simulate_frames", "simulate_study"]
