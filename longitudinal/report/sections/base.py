"""The unit of the report: a section computes its tables and figures, then renders itself."""

from __future__ import annotations

from typing import ClassVar

from markupsafe import Markup

from longitudinal.report.context import ReportContext
from longitudinal.report.html import render


class SectionUnavailable(Exception):  # noqa: N818 (a signal between section and report)
    """Raised by :meth:`Section.compute` when the data do not allow the section.

    The message says why and what would make it possible; the report shows it in place of
    the section, and the other sections are written as usual.
    """


class Section:
    """One section of the report.

    Subclasses set ``anchor`` and ``heading``, fill the context in ``_compute`` (tables
    under ``ctx.tables``, figures under ``ctx.figures``, warnings under ``ctx.notes``) and
    return the section's HTML from ``_body``, or ``None`` when it has nothing to show.
    """

    anchor: ClassVar[str]
    heading: ClassVar[str]

    def __init__(self) -> None:
        self.unavailable: str | None = None

    def _compute(self, ctx: ReportContext) -> None:
        """Compute the section's tables and figures into ``ctx``."""

    def _body(self, ctx: ReportContext) -> Markup | None:
        raise NotImplementedError

    def run(self, ctx: ReportContext) -> None:
        """Compute, or record why the section could not be computed."""
        try:
            self._compute(ctx)
        except SectionUnavailable as why:
            self.unavailable = ctx.scrub(str(why))
            ctx.note(f"{self.heading}: {self.unavailable}")

    def render(self, ctx: ReportContext) -> Markup | None:
        """Return the section's HTML, a note in its place, or ``None`` to leave it out."""
        if self.unavailable is not None:
            return render("unavailable.html.j2", reason=self.unavailable)
        return self._body(ctx)
