"""The table model and its two writers (longitudinal/manuscript/table.py, word.py, latex.py)."""

import pytest

from longitudinal.manuscript import ApaTable, GroupRow

TABLE = ApaTable(
    number=2,
    name="demo",
    title="A Small Table",
    columns=("Scale", "*M*", "*p*", "95% CI"),
    rows=(GroupRow("Well-being"), ("pre", "\u22120.22", "< .001", "[\u22120.50, 0.44]")),
    note="*M* = mean; 5% & more.",
)


def test_rows_must_fill_every_column():
    with pytest.raises(ValueError, match="a row has 2 cells for 4 columns"):
        ApaTable(number=1, name="x", title="T", columns=("a", "b", "c", "d"), rows=(("1", "2"),),
                 note="")  # fmt: skip


def test_latex_fragment_uses_booktabs_threeparttable_and_aligned_decimals():
    tex = TABLE.to_latex()
    assert r"\begin{threeparttable}" in tex and r"\toprule" in tex and r"\bottomrule" in tex
    assert r"\label{tab:demo}" in tex and r"\caption{A Small Table}" in tex
    assert r"\begin{tabular}{lr@{}lr@{}lr@{}l}" in tex
    # the minus sign, the p below .001 split at the point (its space kept as a tie), the CI whole
    assert r"\textminus{}0 & .22" in tex
    assert r"\textless{}~ & .001" in tex
    assert r"\multicolumn{2}{c}{[\textminus{}0.50, 0.44]}" in tex
    assert r"\multicolumn{7}{l}{Well-being} \\" in tex
    assert r"\item \textit{Note.} \textit{M} = mean; 5\% \& more." in tex


def test_word_table_reads_back(tmp_path):
    import docx

    TABLE.to_docx(tmp_path / "t.docx")
    document = docx.Document(str(tmp_path / "t.docx"))
    texts = [p.text for p in document.paragraphs]
    assert texts[:2] == ["Table 2", "A Small Table"]
    assert texts[-1] == "Note. M = mean; 5% & more."
    cells = [[c.text for c in row.cells] for row in document.tables[0].rows]
    assert cells[0] == ["Scale", "M", "p", "95% CI"]
    assert cells[2] == ["pre", "\u22120.22", "< .001", "[\u22120.50, 0.44]"]
    head = document.tables[0].rows[0].cells[1].paragraphs[0].runs
    assert head[0].italic  # statistics in italics


def test_the_table_follows_the_result_protocol():
    assert repr(TABLE) == "Table 2: A Small Table (2 rows)"
    assert "Well-being" in str(TABLE.summary())
    assert list(TABLE.to_frame().columns) == ["Scale", "M", "p", "95% CI"]
