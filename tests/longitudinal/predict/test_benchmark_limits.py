"""The counts of the prediction benchmark have ceilings, checked before any work.

``seeds``, ``k``, ``n_boot`` and the Bayesian model's ``draws``, ``tune`` and ``chains`` of
:func:`evaluate_predictions` (``longitudinal evaluate --seeds --kfold --n-boot --draws``) are
refused before the study's data are built; the bootstrap's weights, which grow with the
ratings, before the splits are drawn. The command line's words are tested in the corpus
(``limits_evaluate_*``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import longitudinal.predict.benchmark as benchmark
from longitudinal._errors import InvalidParameterError
from longitudinal.predict import evaluate_predictions
from longitudinal.study.loaded import load_study

TINY = Path(__file__).parents[2] / "data" / "studies" / "tiny"


@pytest.fixture(scope="module")
def tiny():
    with warnings.catch_warnings():  # its reliability warnings are the loader's tests' matter
        warnings.simplefilter("ignore")
        return load_study(TINY)


@pytest.fixture
def no_data(monkeypatch):
    """Fail the test if the benchmark gets as far as building its data."""

    def reached(*args, **kwargs):
        raise AssertionError("the benchmark built its data before refusing the counts")

    monkeypatch.setattr(benchmark, "_benchmark_data", reached)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seeds": 10**9}, "`seeds` parameter .* from 1 to 1,000 seeds; got 1000000000"),
        ({"seeds": list(range(1001))}, "from 1 to 1,000 seeds; got 1001"),
        ({"k": 5000}, "`k` parameter .* from 2 to 1,000; got 5000"),
        ({"seeds": 500, "k": 20}, "500 x 21 = 10,500 fitted splits per model"),
        ({"n_boot": 10**6}, "`n_boot` parameter .* from 0 to 100,000; got 1000000"),
        ({"n_boot": -1}, "`n_boot` parameter .* from 0 to 100,000; got -1"),
        ({"n_boot": 2.5}, "`n_boot` parameter .* whole number"),
        ({"draws": 10**9}, "`draws` parameter .* from 1 to 1,000,000; got 1000000000"),
        ({"tune": 10**7}, "`tune` parameter .* from 0 to 1,000,000"),
        ({"chains": 65}, "`chains` parameter .* from 1 to 64; got 65"),
        ({"chains": 0}, "`chains` parameter .* from 1 to 64; got 0"),
    ],
)
def test_counts_past_their_ceiling_are_refused_before_the_data(tiny, no_data, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        evaluate_predictions(tiny, **kwargs)


def test_the_bootstrap_weights_are_refused_before_the_splits(tiny, monkeypatch):
    import models.limits

    def drawn(*args, **kwargs):
        raise AssertionError("the splits were drawn before the bootstrap was refused")

    monkeypatch.setattr(models.limits, "EVALUATE_MAX_BOOT_CELLS", 1_000)
    monkeypatch.setattr(benchmark, "draw_splits", drawn)
    with pytest.raises(InvalidParameterError, match=r"at most \d+ replicates fit this study"):
        evaluate_predictions(tiny, seeds=1, k=2, n_boot=2000, bayes=False)


def test_counts_within_their_ceilings_pass():
    benchmark.check_benchmark_counts(1000, 9, 100_000, func="f")
    benchmark.check_benchmark_counts(1, 1000, 0, func="f")
    benchmark.check_bootstrap_size(0, 10**9, func="f")  # no bootstrap, no weights
