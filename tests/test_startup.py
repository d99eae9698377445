"""Start-up stays light: the packages and the command line's parser load nothing heavy.

Each check runs a fresh interpreter (a module imported by an earlier test would hide a
regression) and lists what ended up in ``sys.modules``. The timings themselves are measured
by ``benchmarks/bench_startup.py``, never here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Loaded by the functions that need them, never by ``import surveys, models, longitudinal``.
DEFERRED = ("scipy.stats", "pymc", "pytensor", "arviz", "matplotlib", "seaborn", "dask", "nutpie")
#: Not loaded before a command's arguments are parsed.
NOT_FOR_PARSING = ("pandas", "numpy", "scipy", *DEFERRED)

_PROBE = """
import json, sys
{body}
print(json.dumps(sorted(m for m in {names!r} if m in sys.modules)))
"""


def _loaded(body: str, names: tuple[str, ...]) -> list[str]:
    code = _PROBE.format(body=body, names=names)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_three_packages_defers_the_heavy_libraries():
    assert _loaded("import surveys, models, longitudinal", DEFERRED) == []


def test_a_public_name_is_still_importable_from_its_package():
    body = (
        "import surveys, models, longitudinal\n"
        "from surveys import score, scale_reliability\n"
        "from models import LinearMixedModel, OrdinalMixedModel\n"
        "assert models.lmm.LinearMixedModel is LinearMixedModel\n"
        "assert 'score' in dir(surveys) and 'BayesianMixedModel' in dir(models)\n"
    )
    # the linear and ordinal models and the scoring need no scipy.stats nor a sampler
    assert _loaded(body, DEFERRED) == []


def test_the_invariance_ladders_need_no_scipy_stats():
    """``longitudinal reliability --invariance`` (ML, MLR and WLSMV) starts without scipy.stats
    (half a second of every run); the p-values and quantiles come from scipy.special."""
    body = (
        "import pandas as pd\n"
        "from models.sem import measurement_invariance\n"
        "data = pd.read_csv('tests/data/psychTools_sai_rim.csv')\n"
        "items = ['calm', 'at.ease', 'relaxed', 'content']\n"
        "for estimator in ('MLR', 'WLSMV'):\n"
        "    measurement_invariance(data, items=items, id_col='id', wave_col='time',\n"
        "                           estimator=estimator)\n"
    )
    assert _loaded(body, DEFERRED) == []


def test_the_ordinal_reliability_command_loads_only_what_it_uses(tmp_path):
    """``longitudinal reliability --invariance --estimator WLSMV`` on complete answers needs
    neither SciPy's optimisers (omega's interior fit and the RMSEA intervals are NumPy and
    scipy.special), nor the mixed-model engine (balanced answers have closed-form
    components), nor plotting or a sampler: each of them costs the command a tenth of a
    second or more."""
    args = (
        "reliability",
        str(ROOT / "tests" / "data" / "psychTools_sai_rim.csv"),
        "--instrument",
        str(ROOT / "benchmarks" / "data" / "sai_rim.toml"),
        "--id-col",
        "id",
        "--wave-col",
        "time",
        "--invariance",
        "--estimator",
        "WLSMV",
        "--out",
        str(tmp_path / "out"),
    )
    unused = (*DEFERRED, "scipy.optimize", "formulaic", "mixedlm", "statsmodels", "models.lmm")
    assert _loaded(_cli(*args), unused) == []
    assert (tmp_path / "out" / "invariance.csv").is_file()


def test_an_unknown_name_is_an_attribute_error():
    import models

    with pytest.raises(AttributeError, match="no_such_name"):
        models.no_such_name  # noqa: B018


def _cli(*args: str) -> str:
    return (
        "from longitudinal.cli import main\n"
        "import contextlib, io\n"
        "quiet = io.StringIO()\n"
        "with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):\n"
        f"    code = main({list(args)!r})\n"
        "assert code in (0, 2), code\n"
    )


def _subcommands() -> list[str]:
    from longitudinal.cli import COMMANDS

    return list(COMMANDS)


@pytest.mark.parametrize(
    "args",
    [("--help",), ("--version",), ("no-such-command",), ("score",), ("fit", "--engine", "x")],
    ids=["help", "version", "unknown-command", "missing-arguments", "bad-choice"],
)
def test_the_command_line_answers_before_loading_pandas(args):
    assert _loaded(_cli(*args), NOT_FOR_PARSING) == []


@pytest.mark.parametrize("command", _subcommands())
def test_every_subcommand_help_loads_no_pandas(command):
    """A subcommand module imports pandas and the packages' working modules inside its run
    function (longitudinal/cli/_main.py): its --help must not pay for them."""
    assert _loaded(_cli(command, "--help"), NOT_FOR_PARSING) == []


def test_a_public_name_that_is_also_its_module_stays_the_function():
    """``models.agreement`` is a function and a module: importing the module first keeps it."""
    code = (
        "import models.agreement, models\n"
        "from models.agreement import AgreementResult\n"
        "from models import agreement\n"
        "print(callable(agreement), callable(models.agreement), AgreementResult.__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.split() == ["True", "True", "AgreementResult"]
