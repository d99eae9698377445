"""Tests of longitudinal/plotting/_pdf_fonts.py: fonts embedded without their layout tables."""

import io
import re
import zlib

import pytest

from longitudinal.plotting import save_figure
from longitudinal.plotting._pdf_fonts import lean_pdf_fonts

pdf_ps = pytest.importorskip("matplotlib.backends._backend_pdf_ps")


def _glyphs(text):
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    path = font_manager.findfont("DejaVu Sans")
    face = FT2Font(path)
    return font_manager.FontPath(path, 0), {face.get_char_index(ord(c)) for c in text}


def test_the_subset_keeps_the_glyphs_and_drops_the_layout_tables():
    fontfile, glyphs = _glyphs("Trait profile (n = 41; mean ± 1 SD) ΔR²")
    with pdf_ps.get_glyphs_subset(fontfile, glyphs) as full:
        full_tables = set(full.font.keys())
        full_map = dict(full.glyph_index_map)
        full_order = full.font.getGlyphOrder()
    with lean_pdf_fonts(), pdf_ps.get_glyphs_subset(fontfile, glyphs) as lean:
        assert "GPOS" in full_tables and "GPOS" not in lean.font
        assert {"GSUB", "GDEF"}.isdisjoint(lean.font.keys())
        # every glyph drawn is there, the same glyph; only those reachable through the layout
        # tables (ligatures, alternates, which matplotlib never draws) are left out
        lean_map, lean_order = dict(lean.glyph_index_map), lean.font.getGlyphOrder()
        assert glyphs <= set(lean_map) and len(lean_map) < len(full_map)
        for glyph in glyphs:
            assert lean_order[lean_map[glyph]] == full_order[full_map[glyph]]
        assert {"glyf", "hmtx", "cmap"} <= set(lean.font.keys())


def test_matplotlib_s_own_subsetting_is_back_after_the_block():
    original = pdf_ps.get_glyphs_subset
    with lean_pdf_fonts():
        assert pdf_ps.get_glyphs_subset is not original
    assert pdf_ps.get_glyphs_subset is original
    with pytest.raises(RuntimeError), lean_pdf_fonts():
        raise RuntimeError("a failed save")
    assert pdf_ps.get_glyphs_subset is original


def test_a_saved_figure_embeds_truetype_fonts_without_layout_tables(tmp_path):
    from fontTools.ttLib import TTFont
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3, 2), layout="constrained")
    ax = fig.subplots()
    ax.plot([1, 2, 3], [2, 1, 3])
    ax.set_title("Empathy ± SD")
    save_figure(fig, tmp_path / "f.png", vector=True)
    data = (tmp_path / "f.pdf").read_bytes()
    assert b"/FontFile2" in data  # TrueType (Type 42) outlines, as journals ask
    fonts = []
    for match in re.finditer(rb"/Length1 \d+.*?stream\r?\n(.*?)endstream", data, flags=re.S):
        fonts.append(TTFont(io.BytesIO(zlib.decompress(match.group(1)))))
    assert fonts
    for font in fonts:
        assert "glyf" in font and "GPOS" not in font and "GSUB" not in font
