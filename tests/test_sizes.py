"""No function is longer than a reader can hold, no module longer than a reader can scan.

A function or method may have at most :data:`MAX_FUNCTION_LINES` code lines: the lines from
its ``def`` to its last line, less blank lines, lines holding only a comment, and its
docstring (a nested function counts within the function around it). A module may have at most
:data:`MAX_MODULE_LINES` lines in all. A function over the limit is split by question, each
piece answering one question and named for it (the house style).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_FUNCTION_LINES = 150
MAX_MODULE_LINES = 1000


def _docstring_lines(node: ast.AST) -> set[int]:
    body = getattr(node, "body", [])
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return set(range(body[0].lineno, body[0].end_lineno + 1))
    return set()


def _code_lines(text: str) -> set[int]:
    """The lines of a module that hold a token other than a comment or a line break."""
    lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in skip and token.type != tokenize.ENDMARKER:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines


def function_sizes(path: Path) -> list[tuple[str, int, int]]:
    """``(qualified name, first line, code lines)`` of every function of a module."""
    text = path.read_text(encoding="utf-8")
    code = _code_lines(text)
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = set(range(child.lineno, child.end_lineno + 1))
                size = len((lines & code) - _docstring_lines(child))
                out.append((f"{prefix}{child.name}", child.lineno, size))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(text, filename=str(path)), "")
    return out


def oversized(package: str) -> list[str]:
    """Every function and module of a top-level package over its limit, one line each."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        where = path.relative_to(ROOT)
        n_lines = len(path.read_text(encoding="utf-8").splitlines())
        if n_lines > MAX_MODULE_LINES:
            found.append(f"{where}: {n_lines} lines")
        for name, line, size in function_sizes(path):
            if size > MAX_FUNCTION_LINES:
                found.append(f"{where}:{line}: {name} has {size} code lines")
    return found


@pytest.mark.parametrize(
    "package",
    [
        "_empathic_base",
        "surveys",
        "models",
        "longitudinal",
    ],
)
def test_functions_and_modules_stay_short(package):
    found = oversized(package)
    assert not found, "over the size limits:\n" + "\n".join(found)


def test_a_function_counts_its_code_lines_only(tmp_path):
    source = (
        "def f(x):\n"
        '    """Docstring.\n'
        "\n"
        '    More."""\n'
        "    # a comment\n"
        "\n"
        "    y = (x +\n"
        "         1)  # trailing\n"
        "    def g():\n"
        "        return y\n"
        "    return g\n"
    )
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    assert function_sizes(path) == [("f", 1, 6), ("f.g", 9, 2)]
