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
