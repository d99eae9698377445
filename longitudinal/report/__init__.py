"""The pre/mid/post change report of a study directory.

:func:`build_report` loads a study (:func:`longitudinal.study.loaded.load_study`), runs the change
analysis of every state scale (:func:`longitudinal.change.change_analysis`), draws the
figures (:mod:`longitudinal.plotting`) and writes one folder::

    report.html        self-contained (figures embedded), with a generated methods paragraph
    tables/*.csv       every table of the report, full precision
    figures/*.png      every figure (and *.svg and *.pdf beside it, for papers)
    exclusions.csv     the exclusion log (file, row, reason, scope)
    notes.csv          every warning and note of the analyses, in full
    provenance.json    package version, SHA-256 of every input file, options, seed
    evaluate/          copied when the study (or a previous report) holds evaluate/metrics.csv;
                       the Evaluation section then shows each model's K-fold estimate with its
                       interval, the differences from the baselines and the holdout mean ± SD

The folder is written atomically: everything goes to a temporary sibling folder that is
renamed at the end, so a failed run leaves no half report. Participant ids are replaced by
pseudonyms (``S01``, ``S02``, ... in an order set by a secret key kept beside, never inside,
the report folder; see :mod:`longitudinal.report.pseudonyms`) unless ``pseudonymize=False``.
The report's header says so: reruns with the same key give the same pseudonyms, a new key new
ones (two reports of a study made with different keys cannot be matched person by person);
session ids (which often contain participant ids) and free-text columns are never written.

:func:`run_demo` simulates a study (:func:`longitudinal.simulate.simulate_study`) and writes
its report, with the simulated study (and its ``truth.json``) in ``study/`` inside the
report folder.
"""

from longitudinal.report.build import build_report, run_demo
from longitudinal.report.context import (
    EVALUATION_FILE,
    EXCLUSIONS_FILE,
    PROVENANCE_FILE,
    REPORT_FILE,
)
from longitudinal.report.pseudonyms import pseudonyms

__all__ = [
    "EVALUATION_FILE",
    "EXCLUSIONS_FILE",
    "PROVENANCE_FILE",
    "REPORT_FILE",
    "build_report",
    "pseudonyms",
    "run_demo",
]
