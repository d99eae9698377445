"""Characters that cannot be seen, found in column names and ids.

In a column name or an id they make two equal-looking names differ (``tipi_1`` and ``tipi_1``
followed by a zero-width space). Shared by the three packages: the readers of :mod:`surveys`
and the study loader check files with it, and the public functions that take a DataFrame
(:func:`surveys.score`, :func:`surveys.validate_responses`, the formula designs of
:mod:`models`) check its column names and ids with :func:`invisible_problems`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

#: NUL, soft hyphen, zero-width and joiner characters, direction marks, the line and paragraph
#: separators (U+2028, U+2029), the bidirectional embeddings and overrides (U+202A-U+202E) and
#: isolates (U+2066-U+2069), and the byte order mark.
INVISIBLE = re.compile(
    "[\x00\u00ad\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)

_NAMES = {"\x00": "NULL"}


def describe_invisible(text: str) -> str | None:
    r"""Name the invisible characters in ``text``, or None when it holds none.

    >>> describe_invisible("tipi_1\u200b")
    'an invisible character (U+200B ZERO WIDTH SPACE)'
    >>> describe_invisible("P\x001\ufeff")
    'invisible characters (U+0000 NULL, U+FEFF ZERO WIDTH NO-BREAK SPACE)'
    >>> describe_invisible("P1\u2028")
    'an invisible character (U+2028 LINE SEPARATOR)'
    >>> describe_invisible("tipi_1") is None
    True
    """
    found = list(dict.fromkeys(INVISIBLE.findall(text)))
    if not found:
        return None
    names = ", ".join(
        f"U+{ord(ch):04X} {_NAMES.get(ch) or unicodedata.name(ch, 'UNNAMED')}" for ch in found
    )
    return ("an invisible character" if len(found) == 1 else "invisible characters") + f" ({names})"


def invisible_problems(
    data: Any,
    *,
    id_cols: Iterable[str | None] = (),
    file: str | None = None,
    rows: Sequence[Any] | None = None,
) -> list[dict[str, Any]]:
    """List the column names and ids of a DataFrame that hold an invisible character.

    Files are checked as they are read; this is the same check for a DataFrame handed to a
    public function. Every column name is checked, and every text value of the ``id_cols``
    (participant ids, waves, grouping factors) that are columns of ``data``.

    Parameters
    ----------
    data : pandas.DataFrame
        The caller's data (anything else gives no problem: the caller checks its type).
    id_cols : iterable of str or None
        Columns whose values are labels; None entries are skipped.
    file : str, optional
        The ``file`` of each problem (default ``"data"``).
    rows : sequence, optional
        File line of each row, in order; default none, and the DataFrame's index label is
        written in the reason as ``(index 3)``.

    Returns
    -------
    list of dict
        One ``{file, row, column, value, reason}`` per column name and per id value that
        holds one, the reason naming the characters (U+200B ZERO WIDTH SPACE, ...).
    """
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        return []
    file = file or "data"
    problems: list[dict[str, Any]] = []
    for name in data.columns:
        found = describe_invisible(name) if isinstance(name, str) else None
        if found:
            reason = f"the column name holds {found}; rename the column without it"
            problems.append(
                {"file": file, "row": None, "column": name, "value": None, "reason": reason}
            )
    names = [c for c in dict.fromkeys(id_cols) if c is not None and c in data.columns]
    for column in names:
        values = data[column]
        if values.dtype != object and not isinstance(values.dtype, pd.StringDtype):
            continue
        cells = values.to_numpy()
        if not INVISIBLE.search("\n".join(v for v in cells if isinstance(v, str))):
            continue  # one search over the column: no label holds one
        for k, value in enumerate(cells):
            found = describe_invisible(value) if isinstance(value, str) else None
            if found:
                at = f" (index {values.index[k]})" if rows is None else ""
                problems.append(
                    {
                        "file": file,
                        "row": None if rows is None else rows[k],
                        "column": column,
                        "value": value,
                        "reason": f"the value holds {found}; delete it{at}",
                    }
                )
    return problems
