"""The three top-level packages must resolve to this project, not to same-named packages."""

import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["models", "surveys", "longitudinal"])
def test_package_resolves_inside_project(name):
    module = importlib.import_module(name)
    assert module.__file__ is not None, f"{name} is a namespace package"
    assert Path(module.__file__).resolve().parent == ROOT / name


@pytest.mark.parametrize("name", ["models", "surveys"])
def test_leaf_packages_do_not_import_each_other(name):
    other = {"models": "surveys", "surveys": "models"}[name]
    for path in (ROOT / name).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for bad in (f"import {other}", f"from {other}", "import longitudinal", "from longitudinal"):
            assert bad not in text, f"{path} imports {bad.split()[-1]}"


def test_packages_import_from_inside_a_study_directory(tmp_path):
    """A study directory has a surveys/ folder (and may have models/): Python started in it
    still imports the packages, not the folders."""
    import subprocess
    import sys

    (tmp_path / "surveys").mkdir()
    (tmp_path / "surveys" / "pre.csv").write_text("participant_id\nP01\n", encoding="utf-8")
    (tmp_path / "models").mkdir()
    code = "import longitudinal, surveys, models; print(surveys.__file__); print(models.__file__)"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        str(ROOT / "surveys" / "__init__.py"),
        str(ROOT / "models" / "__init__.py"),
    ]


def test_a_shadowing_folder_is_named_in_a_clear_error(tmp_path):
    """Where an install lets a plain folder win, importing longitudinal says so (no bare
    ImportError from deep inside)."""
    import subprocess
    import sys

    (tmp_path / "surveys").mkdir()
    code = (
        "import sys; sys.path.insert(0, ''); sys.modules.pop('surveys', None)\n"
        "import importlib.machinery, importlib.util\n"
        "spec = importlib.machinery.ModuleSpec('surveys', None, is_package=True)\n"
        f"spec.submodule_search_locations = [{str(tmp_path / 'surveys')!r}]\n"
        "sys.modules['surveys'] = importlib.util.module_from_spec(spec)\n"
        "import longitudinal"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0
    assert "shadows the package 'surveys'" in done.stderr
