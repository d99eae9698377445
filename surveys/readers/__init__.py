"""Read raw questionnaire exports (CSV, Excel, Qualtrics, SPSS) into an item table.

The readers turn a file as a survey platform wrote it into a :class:`Responses` object: a
DataFrame with one row per response, plus the file line of every row so that later checks
(:func:`surveys.validation.validate_responses`) can point at the exact cell to fix.

The readers never guess silently. What the file declares is used (a byte-order mark selects
UTF-8 or UTF-16; the header line shows the delimiter); they refuse files that are not UTF-8
(unless an ``encoding`` is given), that are empty, that repeat a column name, whose rows do
not line up with the header, workbooks with data on several sheets when no sheet is named,
formulas without a saved value, and Qualtrics ``Status``/``Finished`` values outside the
known table; every such problem is raised as :class:`surveys.InputValidationError` naming the
file, row and column. Text found in an item column is kept as it is (validation reports it);
it is never converted to a number or to a missing value. Ids are labels, read as text.
"""

from surveys.readers._common import FORMATS, QUALTRICS_METADATA_COLUMNS, Responses
from surveys.readers.read import read_responses

__all__ = ["FORMATS", "QUALTRICS_METADATA_COLUMNS", "Responses", "read_responses"]
