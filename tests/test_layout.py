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
