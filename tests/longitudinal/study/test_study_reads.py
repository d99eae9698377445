"""A report reads each file of its study directory once.

The loader keeps what the analyses need (the keyed item answers, the frames), so reliability,
invariance and every section take it from the :class:`~longitudinal.Study` instead of reading
the exports again. Every ``open`` of a file inside the study directory during a report build
is counted (Python's ``open`` audit event, which every reader here goes through), leaving out
the checksums of ``provenance.json``, which hash each input on purpose.
"""

from __future__ import annotations

import os
import shutil
import sys
import warnings
from collections import Counter
from pathlib import Path

import pytest

from longitudinal.report import build_report

STUDIES = Path(__file__).parents[2] / "data" / "studies"

_COUNTING: dict[str, object] = {"root": None, "reads": None}


def _count_open(event: str, args: tuple) -> None:
    root = _COUNTING["root"]
    if root is None or event != "open":
        return
    path, mode, flags = args
    if isinstance(path, int):
        return  # an open file descriptor: counted where the file was opened
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return
    if mode is None and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR):
        return
    name = os.fsdecode(path)
    full = os.path.realpath(name)
    if not full.startswith(str(root) + os.sep):
        return
    frame = sys._getframe(1)
    while frame is not None:  # the checksums of provenance.json read every input on purpose
        if frame.f_code.co_filename.endswith(os.path.join("report", "provenance.py")):
            return
        frame = frame.f_back
    _COUNTING["reads"][os.path.relpath(full, root)] += 1


sys.addaudithook(_count_open)


@pytest.fixture
def counted_reads():
    """Count the opens for reading of files under a folder: ``start(root)`` gives the Counter."""

    def start(root: Path) -> Counter:
        _COUNTING["root"] = os.path.realpath(root)
        _COUNTING["reads"] = Counter()
        return _COUNTING["reads"]

    yield start
    _COUNTING["root"] = None
    _COUNTING["reads"] = None


def test_a_report_reads_each_input_file_once(tmp_path, counted_reads):
    study_dir = Path(shutil.copytree(STUDIES / "tiny", tmp_path / "tiny"))
    key = tmp_path / "report.key"
    key.write_text("7f3a9c2e81d44b6fa0c3e5d7b9f1a2c48e6d0b3f5a7c9e1d2b4f6a8c0e3d5b7f\n")
    reads = counted_reads(study_dir)
    with warnings.catch_warnings():  # four participants: the analyses warn, as is right
        warnings.simplefilter("ignore")
        build_report(study_dir, tmp_path / "report", bayes=False, formats="html", pseudonym_key=key)
    inputs = sorted(str(p.relative_to(study_dir)) for p in study_dir.rglob("*") if p.is_file())
    assert dict(reads) == {name: 1 for name in inputs}
