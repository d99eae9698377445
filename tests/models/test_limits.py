"""Counts a caller chooses have ceilings, refused before any work (models/limits.py).

Before these ceilings, ``n_sims``, ``n_participants`` and ``n_sessions`` of power, ``n_agq`` of
the ordinal model and ``draws`` of the Bayesian one ran into a MemoryError or a native abort,
a formula repeating ``(1 | id)`` 2,000 times aborted natively, and a malformed Dask address
reached Dask.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from _empathic_base.words import command_line
from models import FormulaError, InvalidParameterError
from models.formula import MAX_RANDOM_TERMS, parse_formula
from models.limits import (
    BAYES_MAX_GB,
    POWER_MAX_GRID,
    POWER_MAX_SIMS,
    check_count,
)
from models.parallel import max_workers, parse_scheduler
from models.power import read_design, simulate_power


def paired_dict(**design) -> dict:
    return {
        "design": {"formula": "y ~ condition + (1 | participant_id)", "sessions": 2, **design},
        "predictors": {
            "condition": {"level": "session", "distribution": "cycle", "values": [0, 1]}
        },
        "fixed": {"Intercept": 0.0},
        "random": {"participant_id": {"sd": {"Intercept": 1.0}}},
        "residual": {"sd": 1.0},
    }


def _power(**kwargs):
    options = {"effect": {"condition": 0.5}, "n_sims": 2, "progress": False, **kwargs}
    return simulate_power(read_design(paired_dict()), **options)


# ------------------------------------------------------------------------------- the check


def test_a_count_is_a_whole_number_within_both_bounds():
    assert check_count(5, name="n", where="f", minimum=1, maximum=5) == 5
    for bad in (0, 6, 2.0, True, "3", 10**30):
        with pytest.raises(InvalidParameterError, match="the `n` parameter of f must be a whole"):
            check_count(bad, name="n", where="f", minimum=1, maximum=5)
    with command_line("longitudinal x", {"n": "--n"}):
        with pytest.raises(InvalidParameterError, match="^--n must be a whole number from 1 to 5"):
            check_count(6, name="n", where="f", minimum=1, maximum=5)


# ------------------------------------------------------------------------------- power


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"n_sims": POWER_MAX_SIMS + 1}, "`n_sims` parameter of simulate_power must be a whole"),
        ({"n_sims": 10**12}, "from 1 to 100,000"),
        ({"n_participants": [10, 10**12]}, "whole number from 2 to 100,000"),
        ({"n_sessions": 10**12}, "must be at most 1,000"),
        ({"n_sessions": "1-1000000000000"}, "must be at most 1,000"),
        ({"n_participants": list(range(2, 2002))}, "2,000 grid points, more than the 100"),
        ({"n_participants": [10, 20], "n_sessions": [2] * 51}, "102 grid points"),
        ({"n_participants": [100_000], "n_sessions": 20}, "up to 2,000,000 rows"),
        ({"n_participants": [50_000], "n_sims": 100_000}, "10,200,000,000 rows in all"),
        # ten million small simulations: each one's fixed cost counts
        (
            {"n_participants": list(range(10, 110)), "n_sims": 100_000},
            "2,000 for its own fixed cost",
        ),
    ],
)
def test_power_counts_are_refused_before_any_study_is_built(kwargs, fragment, monkeypatch):
    import models.power.simulate as simulate

    def never(*args, **kw):
        raise AssertionError("a grid job was built")

    monkeypatch.setattr(simulate, "_grid_job", never)
    with pytest.raises(InvalidParameterError, match=fragment.replace("(", r"\(")):
        _power(**kwargs)


def test_the_grid_ceiling_allows_its_own_size(monkeypatch):
    import models.power.simulate as simulate

    built = []

    def job(setup, g, *args):
        built.append(g)
        raise InvalidParameterError("stop here")

    monkeypatch.setattr(simulate, "_grid_job", job)
    with pytest.raises(InvalidParameterError, match="stop here"):
        _power(n_participants=list(range(2, 2 + POWER_MAX_GRID)))
    assert built == [0]


@pytest.mark.parametrize(
    ("design", "key"),
    [
        ({"participants": 10**12}, "[design] participants must be at most 100,000"),
        ({"sessions": [1, 10**6]}, "[design] sessions must be at most 1,000"),
        ({"stories": 10**12}, "[design] stories must be at most 1,000,000"),
        ({"stories_per_session": 10**9}, "[design] stories_per_session must be at most"),
    ],
)
def test_a_design_file_has_the_same_ceilings(design, key):
    with pytest.raises(InvalidParameterError, match=key.replace("[", r"\[").replace("]", r"\]")):
        read_design(paired_dict(**design))


def test_a_pilot_study_is_sized_by_its_own_rows():
    from models.lmm import LinearMixedModel

    rng = np.random.default_rng(3)
    pid = np.repeat([f"p{i}" for i in range(8)], 6)
    session = np.repeat([f"s{i}" for i in range(24)], 2)
    data = pd.DataFrame({"pid": pid, "session": session, "y": rng.normal(size=48)})
    data["y"] += np.repeat(rng.normal(size=8), 6)
    pilot = LinearMixedModel("y ~ 1 + (1 | pid)").fit(data)
    options = {"data": data, "effect": {"Intercept": 0.1}, "n_sims": 2, "progress": False}
    # 6 rows a participant: 100,000 participants are 600,000 rows, within the ceiling;
    # 1,000 sessions of 2 rows for 1,000 participants are 2,000,000, beyond it
    with pytest.raises(InvalidParameterError, match="1,000 participants and 1000 sessions each"):
        simulate_power(
            pilot, n_participants=[1_000], n_sessions=1000, session_col="session", **options
        )


# ------------------------------------------------------------------------------- scheduler


@pytest.mark.parametrize(
    "address",
    [
        "tcp://127.0.0.1:8786",
        "tcp://[::1]:8786",
        "tcp://scheduler.lab-7.example:1",
        "tcp://h:65535",
    ],
)
def test_well_formed_dask_addresses_are_kept(address):
    found = parse_scheduler(address, where="f")
    assert found.kind == "dask" and found.address == address


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("tcp://[::1:9", "no closing ']'"),
        ("tcp://[::1]9", "no ':port'"),
        ("tcp://[nope]:9", "'nope' is not an IPv6 address"),
        ("tcp://::1:9", "an IPv6 address goes in brackets"),
        ("tcp://host", "no ':port'"),
        ("tcp://host:0", "port '0' is not a number from 1 to 65535"),
        ("tcp://host:65536", "not a number from 1 to 65535"),
        ("tcp://host:1" + "0" * 5000, "not a number from 1 to 65535"),
        ("tcp://-bad-:80", "'-bad-' is not a host name"),
        ("tcp://a..b:80", "is not a host name"),
        ("tcp://:80", "is not a host name"),
        ("processes:0", "N must be a whole number from 1"),
        ("local:1" + "0" * 5000, "N must be a whole number from 1"),
        ("processes:100000", "N must be a whole number from 1"),
        ("threads:2", "tcp://host:port"),
    ],
)
def test_malformed_schedulers_are_refused_with_the_forms_and_why(value, why):
    with pytest.raises(InvalidParameterError) as info:
        parse_scheduler(value, where="simulate_power")
    message = str(info.value)
    assert why in message
    assert "processes:N" in message and "local:N" in message and "tcp://host:port" in message


def test_workers_are_bounded_by_the_cpus():
    top = max_workers()
    assert parse_scheduler(f"processes:{top}", where="f").workers == top
    with pytest.raises(InvalidParameterError, match=f"from 1 to {top}"):
        parse_scheduler(f"local:{top + 1}", where="f")


# ------------------------------------------------------------------------------- formulas


@pytest.mark.parametrize(
    ("formula", "fragment"),
    [
        ("y ~ x + (1 | id) + (1 | id)", "(1 | id) repeats a term of"),
        ("y ~ x + " + " + ".join(["(1 | id)"] * 2000), "(1 | id) repeats a term of"),
        ("y ~ (x | g) + (1 + x || g)", "(1 + x || g) repeats a term of"),
        ("y ~ (1 | a/b) + (1 | a)", "grouping factor 'a' with the same terms"),
        ("y ~ (x:z | a:b) + (z:x | b:a)", "as (x:z | a:b)"),
        ("y ~ (1|g) + (1 |g )", "repeats"),
    ],
)
def test_a_repeated_random_effects_term_is_refused(formula, fragment):
    with pytest.raises(FormulaError, match="repeats") as info:
        parse_formula(formula)
    assert fragment in str(info.value)
    assert "write it once" in str(info.value)


def test_different_terms_of_one_grouping_factor_are_kept():
    spec = parse_formula("y ~ x + (1 | g) + (0 + x | g) + (1 | h) + (1 | g:h)")
    assert [t.group for t in spec.random] == ["g", "g", "h", "g:h"]


def test_random_effects_terms_have_a_ceiling():
    terms = " + ".join(f"(1 | g{k})" for k in range(MAX_RANDOM_TERMS + 1))
    with pytest.raises(
        FormulaError, match=f"101 random-effects terms .* more than {MAX_RANDOM_TERMS}"
    ):
        parse_formula(f"y ~ x + {terms}")
    kept = " + ".join(f"(1 | g{k})" for k in range(MAX_RANDOM_TERMS))
    assert len(parse_formula(f"y ~ x + {kept}").random) == MAX_RANDOM_TERMS


# ------------------------------------------------------------------------------- ordinal


@pytest.mark.parametrize("n_agq", [101, 10**12])
def test_quadrature_nodes_have_a_ceiling(n_agq):
    from models import OrdinalMixedModel

    data = pd.DataFrame({"y": [1, 2, 3, 1, 2, 3, 2, 3], "g": list("aabbccdd")})
    with pytest.raises(InvalidParameterError, match="`n_agq` .* whole number from 1 to 100"):
        OrdinalMixedModel("y ~ 1 + (1 | g)", n_agq=n_agq).fit(data)


# ------------------------------------------------------------------------------- Bayesian


@pytest.fixture(scope="module")
def gaussian_data():
    rng = np.random.default_rng(9)
    g = np.repeat([f"g{k}" for k in range(20)], 10)
    y = rng.normal(size=200) + np.repeat(rng.normal(size=20), 10)
    return pd.DataFrame({"y": y, "x": rng.normal(size=200), "g": g})


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"draws": 10**12}, "`draws` parameter of BayesianMixedModel must be a whole number"),
        ({"tune": 10**7}, "`tune` parameter of BayesianMixedModel must be a whole number"),
        ({"chains": 65}, "`chains` parameter of BayesianMixedModel must be a whole number"),
    ],
)
def test_sampler_counts_have_ceilings(gaussian_data, kwargs, fragment):
    from models import BayesianMixedModel

    model = BayesianMixedModel("y ~ x + (1 | g)", family="gaussian", **kwargs)
    with pytest.raises(InvalidParameterError, match=fragment):
        model.fit(gaussian_data)


def test_draws_whose_storage_exceeds_memory_are_refused_before_sampling(gaussian_data, monkeypatch):
    pytest.importorskip("pymc")
    import models.bayes.model as bayes_model
    from models import BayesianMixedModel

    def never(*args, **kw):
        raise AssertionError("sampled")

    monkeypatch.setattr(bayes_model, "run_nuts", never)
    monkeypatch.setattr(bayes_model, "import_pymc", never)  # refused before PyMC is loaded
    model = BayesianMixedModel("y ~ x + (1 | g)", family="gaussian", draws=1_000_000, chains=64)
    with pytest.raises(InvalidParameterError) as info:
        model.fit(gaussian_data)
    message = str(info.value)
    # slope, intercept, sigma, 20 levels, their sd and 12 statistics: 36 values a draw
    assert "1,000,000 draws (the `draws` parameter" in message
    assert "of 36 values each" in message and f"more than the {BAYES_MAX_GB:g} GB" in message
    assert "draws=" in message and "(command line: --draws " in message


def test_a_run_estimated_over_a_day_is_refused_with_the_draws_that_fit():
    from models.bayes import estimate as est

    found = est.SamplingEstimate(
        seconds_per_iteration=1.0, probe_iterations=40, iterations=200_500, rounds=1,
        seconds=200_500.0,
    )  # fmt: skip
    with pytest.raises(InvalidParameterError) as info:
        est.refuse_too_long(found, draws=200_000, tune=500, where="BayesianMixedModel.fit")
    message = str(info.value)
    assert "expected to take about 55.7 h" in message and "more than the 24.0 h" in message
    assert "draws=85900 (command line: --draws 85900) would take about 24.0 h" in message
    short = est.SamplingEstimate(1.0, 40, 10_500, 1, 10_500.0)
    est.refuse_too_long(short, draws=10_000, tune=500, where="BayesianMixedModel.fit")


def test_the_fit_refuses_the_probes_long_estimate_before_sampling(gaussian_data, monkeypatch):
    pytest.importorskip("nutpie")
    import models.bayes.model as bayes_model
    from models import BayesianMixedModel
    from models.bayes import estimate as est

    def never(*args, **kw):
        raise AssertionError("sampled")

    long = est.SamplingEstimate(2.0, 40, 1_000_500, 1, 2.0 * 1_000_500)
    monkeypatch.setattr(bayes_model, "estimate_sampling", lambda *a, **kw: long)
    monkeypatch.setattr(bayes_model, "run_nuts", never)
    model = BayesianMixedModel(
        "y ~ x + (1 | g)", family="gaussian", draws=1_000_000, sampler="nutpie"
    )
    with pytest.raises(InvalidParameterError, match="more than the 24.0 h"):
        model.fit(gaussian_data)
