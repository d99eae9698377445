"""Formulas of the site as MathML, written into the page when it is built: nothing to load.

Sphinx's default math renderer puts the TeX source in the page and loads MathJax from a
content delivery network to typeset it, so the formulas of the API pages (the docstrings'
``:math:`` roles) needed the network. This renderer converts each formula once, at build
time, with docutils' own LaTeX-to-MathML converter (``docutils.utils.math.latex2mathml``,
part of the docutils the lock pins), and writes the MathML into the HTML, which every current
browser typesets natively. A formula the converter cannot read is a build warning, so
``make docs`` (warnings as errors) fails on it and names the page.

``conf.py`` selects it with ``html_math_renderer = "mathml"``.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.utils.math import MathError, latex2mathml
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)


def _mathml(translator: Any, node: nodes.Element, *, block: bool) -> str:
    """Convert one formula to MathML; if unreadable, warn and give its TeX source, escaped."""
    tex = node.astext()
    try:
        return latex2mathml.tex2mathml(tex, as_block=block)
    except MathError as err:
        logger.warning("formula %r cannot be written as MathML: %s", tex, err, location=node)
        return translator.encode(tex)


def visit_math(translator: Any, node: nodes.math) -> None:
    """Write an inline formula (``:math:`...```) as MathML."""
    translator.body.append(translator.starttag(node, "span", "", CLASS="math"))
    translator.body.append(_mathml(translator, node, block=False))
    translator.body.append("</span>")
    raise nodes.SkipNode


def visit_math_block(translator: Any, node: nodes.math_block) -> None:
    """Write a displayed formula (``.. math::``) as MathML, with its equation number."""
    translator.body.append(translator.starttag(node, "div", CLASS="math"))
    if node.get("number"):
        number = get_node_equation_number(translator, node)
        translator.body.append(f'<span class="eqno">({number})')
        translator.add_permalink_ref(node, "Link to this equation")
        translator.body.append("</span>")
    # equations separated by a blank line are displayed one below the other
    for part in (p for p in node.astext().split("\n\n") if p.strip()):
        shown = nodes.math_block(part, part)
        shown.source, shown.line = node.source, node.line
        translator.body.append(_mathml(translator, shown, block=True))
    translator.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app: Any) -> dict[str, Any]:  # noqa: D103
    app.add_html_math_renderer(
        "mathml",
        inline_renderers=(visit_math, None),
        block_renderers=(visit_math_block, None),
    )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
