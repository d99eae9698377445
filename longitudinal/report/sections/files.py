"""The "Files and provenance" section: the files of the report folder and the provenance."""

from __future__ import annotations

from markupsafe import Markup

from longitudinal.report.context import (
    PROVENANCE_FILE,
    REPORT_FILE,
    ReportContext,
)
from longitudinal.report.html import render
from longitudinal.report.sections.base import Section


class FilesSection(Section):
    """The files of the report folder and where the provenance is."""

    anchor = "files"
    heading = "Files and provenance"

    def _body(self, ctx: ReportContext) -> Markup:
        provenance = ctx.results["provenance"]
        return render(
            "files.html.j2",
            demo=ctx.demo,
            version=provenance["version"],
            provenance_file=PROVENANCE_FILE,
            files=[f for f in provenance["files"] if f != REPORT_FILE],
        )
