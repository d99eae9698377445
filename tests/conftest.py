"""Shared test helpers.

Warnings policy: the package's own warnings (the ``EmpathicWarning`` tree: ``SurveysWarning``,
``ModelsWarning``, ``LongitudinalWarning`` and the shared ``DataQualityWarning``) are behaviour
and are asserted exactly; pytest turns any other warning into an error, except the deprecation
family (``DeprecationWarning``, ``PendingDeprecationWarning``, ``FutureWarning``), which the
a release of another package may start to issue at any time:
those are shown, never fatal (``filterwarnings`` in pyproject.toml). The 0.x API has no
deprecation cycle of its own (docs/validation.md, "Stability").

Determinism: every random test is seeded; hypothesis runs derandomized (below).
"""

from __future__ import annotations

import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Parallel test workers share the machine's cores: each runs its BLAS, OpenMP and numba
    # work on one thread, and so do the processes it starts (commands, kernels), so that two
    # workers never fight over the cores. Set before numpy or numba is imported.
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "VECLIB_MAXIMUM_THREADS", "NUMBA_NUM_THREADS"):  # fmt: skip
        os.environ.setdefault(_var, "1")

import io
import resource
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from longitudinal import EmpathicWarning

if os.environ.get("PYTEST_XDIST_WORKER"):
    from threadpoolctl import threadpool_limits

    _LIMITS = threadpool_limits(limits=1)  # for a BLAS loaded before the variables were read

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
    from longitudinal.study.loaded import load_study

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


# --------------------------------------------------------------------------------------------
# studies and reports read by several test files: built once per test process, never written to

STUDIES = Path(__file__).parent / "data" / "studies"


@dataclass(frozen=True)
class CommandRun:
    """What one run of the ``longitudinal`` command returned and printed."""

    code: int
    out: str
    err: str


def run_command(args: Sequence[str]) -> CommandRun:
    """Run the ``longitudinal`` command line in this process, keeping what it printed."""
    from longitudinal.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return CommandRun(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def small_study_dir(tmp_path_factory):
    """The simulated study of 16 people (seed 7) of the report tests; copy it to change it."""
    from longitudinal.simulate import simulate_study

    return simulate_study(tmp_path_factory.mktemp("sim7") / "study", seed=7, n_participants=16)


def build_sections(study_dir, out, anchors: Sequence[str], **settings) -> Path:
    """Write the report of ``study_dir`` into ``out`` with only the sections ``anchors``.

    The same loading, options and pseudonyms as ``build_report`` (``settings`` are its
    keywords; the key is fixed), without the sections a test does not read and without the
    manuscript: a section checked alone costs what it computes, not a whole report. A
    section that reads what an earlier one computed needs that one named too (``methods``
    reads ``sample``'s exclusion counts).
    """
    from longitudinal.report.build import _load, _study_config, write_report
    from longitudinal.report.options import check_options

    defaults = {
        "seed": None,
        "pseudonymize": True,
        "retest": None,
        "random_slope": True,
        "ci_level": 0.95,
        "bayes": False,
        "overwrite": False,
    }
    options = check_options(func="build_report", **{**defaults, **settings})
    config, _ = _study_config(Path(study_dir))
    out = Path(out)
    out.mkdir(parents=True)
    write_report(
        _load(Path(study_dir), config),
        out,
        options=options,
        previous_evaluate=None,
        key=b"a fixed key for the tests of one section",
        only=set(anchors),
    )
    return out


def restrict_sections(monkeypatch, anchors: Sequence[str]) -> None:
    """Make ``build_report`` and ``longitudinal report`` compute only the sections ``anchors``
    (in page order) while ``monkeypatch`` holds: the same loading, options, key and files
    around them as a whole report, for a test that reads none of the other sections."""
    import functools

    from longitudinal.report import build
    from longitudinal.report.sections import report_sections

    assert set(anchors) <= {s.anchor for s in report_sections()}, anchors
    # the report's own way of building some sections (write_report's `only`), as build_sections
    monkeypatch.setattr(
        build, "write_report", functools.partial(build.write_report, only=set(anchors))
    )


@pytest.fixture
def sections_only(monkeypatch):
    """Call with anchors: the reports of this test compute only those sections
    (:func:`restrict_sections`), for a test of what happens around the sections (the key, the
    output folder, the options recorded) or of one section."""

    def restrict(*anchors: str) -> None:
        restrict_sections(monkeypatch, anchors)

    return restrict


@contextmanager
def draft_figures() -> Iterator[None]:
    """While held, every figure is drawn and laid out as in a report, its SVG (the figure's
    text) written as in a report, but its PNG at 40 dpi and no PDF.

    For tests that read a report's text, tables, notes and figure labels, never its pixels
    (studies of random shape, renumbered ids): the sections still build every figure, so a
    figure that fails on odd data still fails the test, but the 600-dpi PNG and the PDF with
    its embedded fonts, which tests/longitudinal/plotting/ and the byte-identity tests of
    tests/longitudinal/report/test_report.py check, are not paid for again.
    """
    from longitudinal.plotting import _style

    write = _style._write_formats

    def draft(fig, path, *, dpi, vector, pdf):
        write(fig, path, dpi=min(dpi, 40), vector=vector, pdf=False)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_style, "_write_formats", draft)
        yield


@pytest.fixture(scope="module")
def figures_as_drafts():
    """:func:`draft_figures` for every report a test module builds: a module that reads no
    figure's pixels says ``pytestmark = pytest.mark.usefixtures("figures_as_drafts")``."""
    with draft_figures():
        yield


@pytest.fixture
def figures_drafted():
    """:func:`draft_figures` for the reports of one test (``@pytest.mark.usefixtures``)."""
    with draft_figures():
        yield


@pytest.fixture(scope="session")
def slider7_report(tmp_path_factory):
    """``longitudinal report`` of the declared 1-7 study, without the Bayesian model:
    the report folder and what the command printed."""
    out = tmp_path_factory.mktemp("slider7") / "report"
    study = STUDIES / "declared" / "slider7"
    return out, run_command(["report", str(study), "--out", str(out), "--no-bayes"])


# -- what each test file costs: CPU seconds of this process and the processes it waited for ----

_CPU_PROFILE = os.environ.get("EMPATHIC_TEST_CPU_PROFILE")
_cpu_by_file: dict[str, list[float]] = {}


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


if _CPU_PROFILE:

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):
        """Add the CPU seconds of a test (setup, call, teardown) to its file's total."""
        start = _cpu_now()
        yield
        entry = _cpu_by_file.setdefault(item.nodeid.split("::")[0], [0.0, 0])
        entry[0] += _cpu_now() - start
        entry[1] += 1

    def pytest_sessionfinish(session):
        """Write this process's totals; the controlling process merges every worker's."""
        target = Path(_CPU_PROFILE)
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        part = target.with_name(f"{target.name}.{worker or 'main'}")
        lines = [f"{name},{tests},{cpu:.3f}" for name, (cpu, tests) in _cpu_by_file.items()]
        part.write_text("\n".join(lines) + "\n", encoding="utf-8")
        if worker:
            return
        totals: dict[str, list[float]] = {}
        for piece in sorted(target.parent.glob(f"{target.name}.*")):
            for line in piece.read_text(encoding="utf-8").splitlines():
                if line:
                    name, tests, cpu = line.rsplit(",", 2)
                    entry = totals.setdefault(name, [0.0, 0])
                    entry[0] += float(cpu)
                    entry[1] += int(tests)
            piece.unlink()
        rows = sorted(totals.items(), key=lambda kv: -kv[1][0])
        body = "".join(f"{name},{int(tests)},{cpu:.1f}\n" for name, (cpu, tests) in rows)
        target.write_text("file,tests,cpu_seconds\n" + body, encoding="utf-8")


def load_newcomer():
    """The hand-written studies of ``tests/data/studies/newcomer.py``, loaded by path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "newcomer", Path(__file__).parent / "data" / "studies" / "newcomer.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
