"""The sections of the report, in the order the page shows them.

Each section is one object (:class:`Section`) that computes its tables and figures from the
study and renders itself, or renders a note saying why it could not be computed; the report is
the list that :func:`report_sections` returns.
"""

from longitudinal.report.sections.base import Section, SectionUnavailable
from longitudinal.report.sections.change import ChangeSection
from longitudinal.report.sections.closing import (
    EvaluationSection,
    FilesSection,
    NotesSection,
    PredictorsSection,
)
from longitudinal.report.sections.descriptive import RatingsSection, SessionsSection, TraitsSection
from longitudinal.report.sections.methods import MethodsSection
from longitudinal.report.sections.sample import ReliabilitySection, SampleSection

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
