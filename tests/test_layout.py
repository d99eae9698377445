"""The top-level packages must resolve to this project, not to same-named packages.

Three public packages (``surveys``, ``models``, ``longitudinal``) and exactly one private one,
``_empathic_base``: the error and warning trees and the shared parameter checks. The leaf
packages ``surveys`` and ``models`` may not import each other, so what both need lives below
them in ``_empathic_base``, which imports none of the three (docs/architecture.md, "Errors and
warnings").
"""

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = ["models", "surveys", "longitudinal"]
PRIVATE = ["_empathic_base"]


@pytest.mark.parametrize("name", PUBLIC + PRIVATE)
def test_package_resolves_inside_project(name):
    module = importlib.import_module(name)
    assert module.__file__ is not None, f"{name} is a namespace package"
    assert Path(module.__file__).resolve().parent == ROOT / name


def test_top_level_packages_are_the_three_and_the_private_base():
    found = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert found == set(PUBLIC + PRIVATE)
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    assert sorted(include) == sorted(f"{name}*" for name in PUBLIC + PRIVATE)


def _imports(text, name):
    return f"import {name}" in text or f"from {name}" in text


@pytest.mark.parametrize("name", ["models", "surveys"])
def test_leaf_packages_do_not_import_each_other(name):
    other = {"models": "surveys", "surveys": "models"}[name]
    for path in (ROOT / name).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for bad in (other, "longitudinal"):
            assert not _imports(text, bad), f"{path} imports {bad}"


def test_private_base_imports_no_project_package():
    for path in (ROOT / "_empathic_base").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for bad in PUBLIC:
            assert not _imports(text, bad), f"{path} imports {bad}"


def test_private_base_and_package_import_stay_light():
    # longitudinal imports _empathic_base at package import; the command line catches Ctrl-C
    # only after that, so neither may pull in NumPy (the checks module does, on first use)
    code = "import sys, longitudinal, _empathic_base; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


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


def test_tests_mirror_the_packages():
    """Every folder of tests under a package's name is a subpackage of it (data aside)."""
    stray = []
    for package in PUBLIC:
        for folder in sorted((ROOT / "tests" / package).rglob("*")):
            relative = folder.relative_to(ROOT / "tests")
            if not folder.is_dir() or {"reference", "__pycache__"} & set(relative.parts):
                continue
            if not (ROOT / relative / "__init__.py").is_file():
                stray.append(relative.as_posix())
    assert not stray, f"test folders with no package of that name: {stray}"
    unplaced = sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "tests" / "longitudinal").glob("test_cli_*.py")
    )
    assert not unplaced, f"the command line's tests belong in tests/longitudinal/cli/: {unplaced}"
