"""The sections of the report, in the order the page shows them.

Each section is one object (:class:`Section`) that computes its tables and figures from the
study and renders itself, or renders a note saying why it could not be computed; the report is
the list that :func:`report_sections` returns. Each section has its own module, named after
its anchor (``sample``, ``methods``, ``reliability``, ``change``, ``ratings``, ``sessions``,
``traits``, ``predictors``, ``evaluation``, ``notes``, ``files``); :mod:`.effects` builds the
parts of "What predicts empathy" from the fitted models.
"""

from longitudinal.report.sections.base import Section, SectionUnavailable
from longitudinal.report.sections.change import ChangeSection
from longitudinal.report.sections.evaluation import EvaluationSection
from longitudinal.report.sections.files import FilesSection
from longitudinal.report.sections.methods import MethodsSection
from longitudinal.report.sections.notes import NotesSection
from longitudinal.report.sections.predictors import PredictorsSection
from longitudinal.report.sections.ratings import RatingsSection
from longitudinal.report.sections.reliability import ReliabilitySection
from longitudinal.report.sections.sample import SampleSection
from longitudinal.report.sections.sessions import SessionsSection
from longitudinal.report.sections.traits import TraitsSection

__all__ = ["Section", "SectionUnavailable", "report_sections"]


def report_sections() -> list[Section]:
    """Return a fresh list of the report's sections, in page order (computed in that order)."""
    return [
        SampleSection(),
        MethodsSection(),
        ReliabilitySection(),
        ChangeSection(),
        RatingsSection(),
        SessionsSection(),
        TraitsSection(),
        PredictorsSection(),
        EvaluationSection(),
        NotesSection(),
        FilesSection(),
    ]
