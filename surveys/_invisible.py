"""Characters that cannot be seen, found in column names and ids.

In a column name or an id they make two equal-looking names differ (``tipi_1`` and ``tipi_1``
followed by a zero-width space).
"""

from __future__ import annotations

import re
import unicodedata

#: NUL, soft hyphen, zero-width and joiner characters, direction marks and the byte order mark.
INVISIBLE = re.compile("[\x00\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")

_NAMES = {"\x00": "NULL"}


def describe_invisible(text: str) -> str | None:
    r"""Name the invisible characters in ``text``, or None when it holds none.

    >>> describe_invisible("tipi_1\u200b")
    'an invisible character (U+200B ZERO WIDTH SPACE)'
    >>> describe_invisible("P\x001\ufeff")
    'invisible characters (U+0000 NULL, U+FEFF ZERO WIDTH NO-BREAK SPACE)'
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
