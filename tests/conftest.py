"""Shared test helpers.

Warnings policy: the package's own warnings (the ``EmpathicWarning`` tree: ``SurveysWarning``,
``ModelsWarning``, ``LongitudinalWarning`` and the shared ``DataQualityWarning``) are behaviour
and are asserted exactly; pytest turns any other warning into an error, except the deprecation
family (``DeprecationWarning``, ``PendingDeprecationWarning``, ``FutureWarning``), which the
a release of another package may start to issue at any time:
those are shown, never fatal (``filterwarnings`` in pyproject.toml). The package's own
deprecations are ``EmpathicDeprecationWarning`` (an ``EmpathicWarning``), asserted like its
other warnings.

Determinism: every random test is seeded; hypothesis runs derandomized (below).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import settings

from longitudinal import EmpathicWarning

# Property tests draw the same examples on every machine and every run: no example database
# carried between runs, no deadline (machine speed must not decide a test).
settings.register_profile("deterministic", derandomize=True, database=None, deadline=None)
settings.load_profile("deterministic")

PACKAGE_WARNINGS = EmpathicWarning
_DEPRECATIONS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


@contextmanager
def package_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record the package's own warnings; hand every other warning back to the test's filters.

    On exit the yielded list holds only the package's warnings. Other warnings are re-issued
    where they were raised, so the configured filters decide: a deprecation notice of another
    package is shown, anything else (a numpy ``RuntimeWarning``, say) still fails the test.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    foreign = [w for w in caught if not issubclass(w.category, PACKAGE_WARNINGS)]
    caught[:] = [w for w in caught if issubclass(w.category, PACKAGE_WARNINGS)]
    for w in foreign:
        if issubclass(w.category, _DEPRECATIONS):
            continue  # another package's deprecation notice: never a failure here
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


# --------------------------------------------------------------------------------------------
# the simulated demo study, shared by the tests of longitudinal/predict and the report

# simulator truth key -> predictor column of empathy_data
TRUTH_TERMS = {
    "agreeableness_z": "bfi44_agreeableness_z",
    "openness_z": "bfi44_openness_z",
    "absorption_z": "tas4_absorption_z",
    "sites_z": "sites_empathy_z",
    "cls9_humanity_between_z": "cls9_humanity_compassionate_love_between_z",
    "cls9_humanity_within_z": "cls9_humanity_compassionate_love_within_z",
    "who5_between_z": "who5_percentage_between_z",
    "who5_within_z": "who5_percentage_within_z",
    "week": "week",
}


def study_of(tmp_path_factory, seed, name):
    """Simulate and load a study (longitudinal/simulate/) under a fresh folder."""
    from longitudinal.simulate import simulate_study
    from longitudinal.study import load_study

    path = simulate_study(tmp_path_factory.mktemp(name) / "study", seed=seed)
    return load_study(path)


@pytest.fixture(scope="session")
def demo_study(tmp_path_factory):
    return study_of(tmp_path_factory, 2024, "demo")


@pytest.fixture(scope="session")
def demo_data(demo_study):
    from longitudinal.predict import empathy_data

    return empathy_data(demo_study)


def true_effects(seed):
    """Truth of every predictor (0 where the simulator has none): logit and rating scale."""
    import numpy as np
    from scipy.special import expit

    from longitudinal.simulate import simulate_frames

    sim = simulate_frames(seed=seed)
    emp = sim.truth["empathy"]
    logit = {col: 0.0 for col in TRUTH_TERMS.values()}
    for key, col in TRUTH_TERMS.items():
        logit[col] = emp["fixed"][key]
    # words enter as words_z = between + within parts, so both parts carry the coefficient
    logit["words_between_z"] = logit["words_within_z"] = emp["fixed"]["words_z"]
    # average slope of E[rating] in the linear predictor, at the true parameters
    eta = sim.design["linear_predictor"].to_numpy()
    cut = np.asarray(emp["cutpoints"])
    p = expit(cut[None, :] - eta[:, None])
    slope = float((p * (1 - p)).sum(axis=1).mean())
    return logit, slope, sim
