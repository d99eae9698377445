"""PDF files whose embedded fonts carry no OpenType layout tables.

matplotlib embeds a subset of each TrueType font in a PDF (``pdf.fonttype`` 42) and lets
fontTools subset the font's layout tables (GSUB, GPOS, GDEF) with it. A PDF never reads them:
every glyph is placed by matplotlib, kerning included, from the font file on disk. Subsetting
DejaVu Sans' kerning table is about two thirds of the time of embedding a font, so a report of
nine figures spent seconds on tables no reader opens. :func:`lean_pdf_fonts` subsets without
them. It is the one place the package depends on matplotlib's internals (its function that
subsets a font, private in 3.11): where that function or its result type is missing, the PDF
is written as matplotlib writes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_LAYOUT_TABLES = ["GSUB", "GPOS", "GDEF", "BASE", "JSTF", "MATH"]


@contextmanager
def lean_pdf_fonts() -> Iterator[None]:
    """While open, the PDF backend embeds fonts subset without their layout tables."""
    try:
        from fontTools import subset
        from matplotlib.backends import _backend_pdf_ps as pdf_ps

        original = pdf_ps.get_glyphs_subset
        results = pdf_ps.SubsetResults
    except (ImportError, AttributeError):
        yield
        return

    def subset_without_layout(fontfile: Any, glyphs: Any) -> Any:
        options = subset.Options(glyph_names=True, recommended_glyphs=True)
        # matplotlib's own list of tables a PDF font never needs, then the layout tables
        options.drop_tables += [
            *("FFTM", "PfEd", "BDF", "meta", "MERG", "TSIV", "Zapf", "bdat", "bloc"),
            *("cidg", "fdsc", "feat", "fmtx", "fond", "just", "kerx", "ltag", "morx"),
            *("trak", "xref"),
            *_LAYOUT_TABLES,
        ]
        options.layout_features = []
        options.font_number = getattr(fontfile, "face_index", 0)
        font = subset.load_font(fontfile, options)
        subsetter = subset.Subsetter(options=options)
        subsetter.populate(gids=glyphs)
        subsetter.subset(font)
        return results(font, subsetter.glyph_index_map)._as_cm()

    pdf_ps.get_glyphs_subset = subset_without_layout
    try:
        yield
    finally:
        pdf_ps.get_glyphs_subset = original
