"""The manuscript output of a report: APA 7 tables in Word and LaTeX, APA results sentences.

One module per concern: :mod:`.table` (the table model, :class:`ApaTable`), :mod:`.tables`
(the tables of a report, :func:`apa_tables`), :mod:`.word` (the Word writer), :mod:`.latex`
(the LaTeX writer) and :mod:`.write` (the ``manuscript/`` folder of ``longitudinal report
--formats docx,latex``). How APA prints numbers, the inline markup, the results sentences and
the honesty gates they keep are the narration floor's (:mod:`longitudinal.narrate`), shared
with the report's page.
"""

from longitudinal.manuscript.latex import latex_table, latex_wrapper
from longitudinal.manuscript.table import ApaTable
from longitudinal.manuscript.tables import apa_tables
from longitudinal.manuscript.word import write_results_docx, write_tables_docx
from longitudinal.narrate.markup import GroupRow
from longitudinal.narrate.numbers import apa_ci, apa_df, apa_num, apa_p, apa_unit

__all__ = [
    "ApaTable",
    "GroupRow",
    "apa_ci",
    "apa_df",
    "apa_num",
    "apa_p",
    "apa_tables",
    "apa_unit",
    "latex_table",
    "latex_wrapper",
    "write_results_docx",
    "write_tables_docx",
]
