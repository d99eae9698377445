"""The "Notes" section: every warning raised while the report was computed, once."""

from __future__ import annotations

from markupsafe import Markup

from longitudinal.report.context import (
    ReportContext,
)
from longitudinal.report.html import render
from longitudinal.report.sections.base import Section


class NotesSection(Section):
    """Every warning raised while the report was computed, once."""

    anchor = "notes"
    heading = "Notes"

    def _body(self, ctx: ReportContext) -> Markup:
        return render("notes.html.j2", notes=ctx.notes)
