"""The "Sessions" section: behaviour features, sessions per participant, ratings per session."""

from __future__ import annotations

import numpy as np
import pandas as pd
from markupsafe import Markup

from longitudinal.report.context import ReportContext, describe, summary_frame
from longitudinal.report.html import render
from longitudinal.report.sections.base import Section


class SessionsSection(Section):
    """Session behaviour features, sessions per participant, ratings per session.

    Counts (sessions, ratings, days, features recorded as whole numbers such as turns) are
    written as whole numbers.
    """

    anchor = "sessions"
    heading = "Sessions"

    def _compute(self, ctx: ReportContext) -> None:
        study = ctx.study
        sessions = ctx.frames["sessions"]
        id_col = ctx.config.id_col
        rows = [
            {"feature": f, **describe(sessions[f], whole=_whole(sessions[f]))}
            for f in study.numeric_session_columns
        ]
        rows.append(
            {"feature": "sessions per participant", **describe(sessions.groupby(id_col).size())}
        )
        rows.append({"feature": "ratings per session", **describe(sessions["n_ratings"])})
        span = sessions.groupby(id_col)["day"].max()
        rows.append({"feature": "days from first to last session", **describe(span)})
        ctx.tables["sessions_summary"] = summary_frame(rows)

    def _body(self, ctx: ReportContext) -> Markup:
        return render("sessions.html.j2", sessions=ctx.tables["sessions_summary"])


def _whole(values: pd.Series) -> bool:
    """Tell whether a session feature holds whole numbers only (turns, words: counts)."""
    v = values.dropna().astype(float)
    return bool(len(v)) and bool(np.all(np.equal(np.round(v), v)))
