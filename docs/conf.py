"""Sphinx configuration of the documentation site (``make docs``; checked by tests/test_docs.py).

The site is built offline and loads nothing from the network: no intersphinx, no notebook
execution (tests/test_notebooks.py runs the notebooks), formulas written as MathML, and the API
pages import the packages from this checkout. The gallery builds the demo report
(docs/_ext/demo_gallery.py).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "_ext"))  # the site's own extensions

project = "empathic-longitudinal"
author = "empathic-longitudinal contributors"
copyright = "the empathic-longitudinal contributors, MIT licence"
release = "0.1.0"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "offline_math",
    "demo_gallery",
]

# Formulas as MathML written into the pages (docs/_ext/offline_math.py): no MathJax, nothing
# loaded from the network.
html_math_renderer = "mathml"

# The gallery's demo report (docs/_ext/demo_gallery.py): a report folder built already, or
# None to build the demo beside the output folder (docs/_build/demo-report for `make docs`).
demo_gallery_report = os.environ.get("EMPATHIC_DOCS_REPORT") or None

# Markdown pages (MyST) and the notebooks of notebooks/ (docs/notebooks is a link to it),
# rendered as they are stored: never executed here.
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
exclude_patterns = [
    "_build",
    "notebooks/README.md",
    "notebooks/output",
    "notebooks/.ipynb_checkpoints",
]

# The API reference: every name of each package's __all__, documented where the package
# exports it (automodule follows __all__), with numpy-style docstrings.
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "none"
autodoc_class_signature = "separated"
autosummary_generate = False
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True

# The sidebar lists pages and headings; the API tables list the objects (one sidebar entry per
# object would be rendered into every page).
toc_object_entries = False

html_theme = "sphinx_rtd_theme"
html_title = "empathic-longitudinal"
html_show_sourcelink = False
html_theme_options = {"navigation_depth": 3, "collapse_navigation": False}


class _SharedErrorTree(logging.Filter):
    """Drop the duplicate notice of the error tree that all three packages re-export.

    ``surveys``, ``models`` and ``longitudinal`` export the same classes of
    ``_empathic_base.errors``; each API page documents them under its package, and autodoc
    records their one canonical name once per page.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return "duplicate object description of _empathic_base." not in record.getMessage()


def setup(app):  # noqa: D103
    logging.getLogger("sphinx.sphinx.domains.python").addFilter(_SharedErrorTree())
