"""The tutorial notebooks are executed documentation: every cell must run, top to bottom.

Each notebook is executed with nbclient in a fresh kernel whose working directory is a
temporary folder, so the files a notebook writes (``output/...``) never land in the
repository. A cell that raises fails the test with the cell and its traceback.
"""

import re
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = [
    "01_scoring_questionnaires.ipynb",
    "02_participant_models.ipynb",
    "03_change_report.ipynb",
    "04_prediction_benchmark.ipynb",
]
CELL_TIMEOUT_S = 600

# an import of a private module of the project's packages, e.g. `from models._backends import ...`
PRIVATE_IMPORT = re.compile(
    r"^\s*(?:from|import)\s+(?:surveys|models|longitudinal)(?:\.\w+)*\._\w*", re.MULTILINE
)


def _read(name):
    return nbformat.read(NOTEBOOK_DIR / name, as_version=4)


def test_every_notebook_is_tested():
    assert sorted(p.name for p in NOTEBOOK_DIR.glob("*.ipynb")) == NOTEBOOKS


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stored_clean(name):
    nb = _read(name)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, f"{name} has no code cell"
    for cell in code:
        assert cell.outputs == [], f"{name}: stored with outputs (cell {cell.get('id')})"
        assert cell.execution_count is None, f"{name}: stored with execution counts"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_uses_public_api_only(name):
    nb = _read(name)
    source = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert not PRIVATE_IMPORT.findall(source), f"{name} imports private modules"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_top_to_bottom(name, tmp_path):
    nb = _read(name)
    # one extra cell, in memory only: the kernel must be this environment's Python
    nb.cells.append(nbformat.v4.new_code_cell("import sys\nprint(sys.executable)"))
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails

    kernel_python = nb.cells[-1].outputs[0]["text"].strip()
    assert Path(kernel_python).resolve() == Path(sys.executable).resolve()
    for cell in nb.cells:
        if cell.cell_type == "code":
            errors = [out for out in cell.outputs if out.output_type == "error"]
            assert not errors, f"{name}: cell {cell.get('id')} raised {errors[0]['ename']}"
    # outputs went to the temporary working directory, not next to the notebook
    assert (tmp_path / "output").is_dir()
