"""One error tree and one warning tree for the three packages (_empathic_base/errors.py).

``InvalidParameterError`` and ``DataQualityWarning`` are one class each, whichever package a
caller imports them from; one filter on ``DataQualityWarning`` silences the data-quality
warnings of surveys, models and longitudinal alike; each package's own classes sit under its
base and under ``EmpathicError`` / ``EmpathicWarning`` (docs/architecture.md).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import longitudinal
import models
import surveys
from _empathic_base import checks as shared_checks
from longitudinal import _checks as longitudinal_checks
from longitudinal._errors import LongitudinalWarning
from longitudinal.change import pairwise_changes
from models import _checks as models_checks
from models.evaluation import pearson_r
from surveys import scale_reliability

PACKAGES = (surveys, models, longitudinal)
SHARED = (
    "InvalidParameterError",
    "DataQualityWarning",
    "EmpathicError",
    "EmpathicWarning",
)


@pytest.mark.parametrize("name", SHARED)
def test_shared_names_are_one_object_in_every_package(name):
    first, *rest = (getattr(package, name) for package in PACKAGES)
    assert all(other is first for other in rest)
    assert first.__module__ == "_empathic_base.errors"


def test_package_classes_sit_under_the_shared_bases():
    errors = [
        surveys.SurveysError,
        surveys.UnknownInstrumentError,
        surveys.InputValidationError,
        models.ModelsError,
        models.FormulaError,
        models.NotFittedError,
        models.ConvergenceError,
        longitudinal.LongitudinalError,
    ]
    assert all(issubclass(cls, longitudinal.EmpathicError) for cls in errors)
    warns = [
        surveys.SurveysWarning,
        surveys.UndefinedStatisticWarning,
        models.ModelsWarning,
        models.ConvergenceWarning,
        models.SingularFitWarning,
        models.SamplingWarning,
        LongitudinalWarning,
    ]
    assert all(issubclass(cls, longitudinal.EmpathicWarning) for cls in warns)
    for package in (surveys, models, longitudinal):  # 0.x has no deprecation cycle
        assert not [n for n in package.__all__ if "Deprecation" in n], package.__name__
    # a package's own classes stay out of the other packages' trees
    assert not issubclass(models.FormulaError, surveys.SurveysError)
    assert not issubclass(surveys.UndefinedStatisticWarning, models.ModelsWarning)


def test_invalid_parameter_error_is_caught_by_every_base_and_the_builtins():
    err = surveys.InvalidParameterError("bad")
    bases = (surveys.SurveysError, models.ModelsError, longitudinal.LongitudinalError)
    builtins = (longitudinal.EmpathicError, ValueError, TypeError)
    assert all(isinstance(err, cls) for cls in bases + builtins)
    assert issubclass(models.DataQualityWarning, surveys.SurveysWarning)
    assert issubclass(surveys.DataQualityWarning, LongitudinalWarning)


def _surveys_heywood():
    # r_ab r_ac / r_bc = 1.28 > 1: the one-factor solution behind omega is a Heywood case
    r = np.array([[1.0, 0.8, 0.8], [0.8, 1.0, 0.5], [0.8, 0.5, 1.0]])
    x = np.random.default_rng(7).multivariate_normal(np.zeros(3), r, size=300)
    scale_reliability(x, item_names=list("abc"))


def _models_constant_prediction():
    pearson_r([1.0, 2.0, 3.0, 4.0], [3.3, 3.3, 3.3, 3.3])


def _longitudinal_no_variance_in_change():
    data = pd.DataFrame(
        {"pid": [1, 1, 2, 2, 3, 3], "wave": ["a", "b"] * 3, "y": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}
    )
    pairwise_changes(data, id_col="pid", wave_col="wave", outcome_col="y", waves=["a", "b"])


TRIGGERS = {
    "surveys": _surveys_heywood,
    "models": _models_constant_prediction,
    "longitudinal": _longitudinal_no_variance_in_change,
}


@pytest.mark.parametrize("package", list(TRIGGERS))
def test_each_package_issues_the_shared_data_quality_warning(package):
    with pytest.warns(longitudinal.DataQualityWarning) as record:
        TRIGGERS[package]()
    assert {w.category for w in record} == {longitudinal.DataQualityWarning}


@pytest.mark.parametrize("imported_from", PACKAGES, ids=lambda p: p.__name__)
def test_one_filter_silences_data_quality_warnings_of_every_package(imported_from):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", category=imported_from.DataQualityWarning)
        for trigger in TRIGGERS.values():
            trigger()
    assert caught == []


def test_check_bool_and_check_unit_exist_once():
    for module in (models_checks, longitudinal_checks):
        assert module.check_bool is shared_checks.check_bool
        assert module.check_unit is shared_checks.check_unit
    for bad in (1, "yes", None):
        with pytest.raises(surveys.InvalidParameterError, match="must be True or False"):
            shared_checks.check_bool(bad, name="flag", where="f")
    assert shared_checks.check_bool(np.bool_(False), name="flag", where="f") is False
    for bad in (0, 1, True, np.bool_(True), "0.5", 1.5):
        with pytest.raises(models.InvalidParameterError, match=r"must be a float in \(0, 1\)"):
            shared_checks.check_unit(bad, name="level", where="f")
    assert shared_checks.check_unit(0.9, name="level", where="f") == 0.9
