"""TOML nesting, measured before :mod:`tomllib` parses a file.

``tomllib`` parses arrays and inline tables recursively, so a file nesting them thousands deep
ends in a ``RecursionError`` instead of a message. :func:`toml_nesting` scans the text once
(strings and comments skipped) and every reader of TOML refuses a file deeper than
:data:`MAX_TOML_NESTING` before parsing it.
"""

from __future__ import annotations

MAX_TOML_NESTING = 64
"""Deepest nesting of arrays and inline tables a TOML file may have (real files use 2-3)."""


def toml_nesting(text: str) -> int:
    """Return the deepest nesting of ``[`` and ``{`` in TOML text, strings and comments skipped.

    Examples
    --------
    >>> toml_nesting('a = [[1, 2], {b = "[[["}]  # ]]]')
    2
    """
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif ch in "\"'":
            quote = text[i : i + 3] if text[i : i + 3] in ('"""', "'''") else ch
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                i += 2 if quote[0] == '"' and text[i] == "\\" else 1
                if len(quote) == 1 and i < n and text[i] == "\n":
                    break  # an unclosed one-line string: tomllib says so
            i += len(quote)
            continue
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return deepest


def too_deep(text: str) -> str | None:
    """Return why ``text`` is refused when it nests deeper than :data:`MAX_TOML_NESTING`."""
    depth = toml_nesting(text)
    if depth <= MAX_TOML_NESTING:
        return None
    return (
        f"arrays or inline tables are nested {depth} deep; at most {MAX_TOML_NESTING} "
        "levels are read"
    )
