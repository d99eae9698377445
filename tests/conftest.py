"""Shared test helpers.

Warnings policy: the package's own warnings (the ``SurveysWarning``, ``ModelsWarning`` and
``LongitudinalWarning`` trees) are behaviour and are asserted exactly; pytest turns any other
warning into an error, except the deprecation family (``DeprecationWarning``,
``PendingDeprecationWarning``, ``FutureWarning``), which the package never issues and which a
release of another package may start to issue at any time: those are shown, never fatal
(``filterwarnings`` in pyproject.toml).

Determinism: every random test is seeded; hypothesis runs derandomized (below).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import settings

from longitudinal._errors import LongitudinalWarning
from models import ModelsWarning
from surveys import SurveysWarning

# Property tests draw the same examples on every machine and every run: no example database
# carried between runs, no deadline (machine speed must not decide a test).
settings.register_profile("deterministic", derandomize=True, database=None, deadline=None)
settings.load_profile("deterministic")

PACKAGE_WARNINGS = (SurveysWarning, ModelsWarning, LongitudinalWarning)
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
