"""Every number of the manuscript tables (Word and LaTeX) equals the report's CSV.

The report is built once per study (the simulated demo-sized study and the hand-written 1-7
study ``slider7``); each test reads ``manuscript/tables.docx`` back with python-docx and the
table's ``.tex`` file, checks that both show the same cells, and compares each printed number
with the CSV in ``tables/`` at the precision it is printed with.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from _manuscript_readers import readers

from longitudinal.cli import main
from longitudinal.narrate.sentences import choose_correction

# the tests read the reports' text, tables and figure labels, not figure pixels
pytestmark = pytest.mark.usefixtures("figures_as_drafts")


@pytest.fixture(scope="module")
def reader():
    """Read the Word and LaTeX tables back (``_manuscript_readers``)."""
    return readers()


SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"
TITLES = {
    "sample": "Sample Characteristics",
    "descriptives": "Means, Standard Deviations and Internal Consistency per Wave",
    "rm_anova": "Repeated-Measures Analyses of Variance and Friedman Tests Across the Waves",
    "pairwise": "Pairwise Changes Between Waves",
    "change_wave_means": "Observed and Model-Based Means of the State Scales per Wave",
    "change_wave_contrasts": "Model-Based Changes Between Waves",
    "growth": "Linear Growth Models of the State Scales",
    "empathy_effects": "Predictors of the Empathy Ratings: Linear and Ordinal Mixed Models",
    "empathy_variance": "Variance Components of the Empathy Ratings",
    "reliability": "Internal Consistency of Each Scale at Each Wave",
    "multilevel_reliability": "Reliability Within and Across People for the State Scales",
}


@pytest.fixture(scope="module", params=["simulated", "slider7"])
def built(request, tmp_path_factory):
    """One report per study, with the manuscript in all formats (the default)."""
    root = tmp_path_factory.mktemp(request.param)
    if request.param == "slider7":
        study, scale = SLIDER7, "1–7"
    else:
        from longitudinal.simulate import simulate_study

        study, scale = simulate_study(root / "study", seed=7, n_participants=16), "1–5"
    out = root / "report"
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", str(study), "--out", str(out), "--no-bayes", "--seed", "7"]) == 0
    tables = {p.stem: pd.read_csv(p) for p in (out / "tables").glob("*.csv")}
    return out, tables, scale


def _table(built, reader, name):
    """The Word grid of a table (found by its title), checked equal to its LaTeX grid."""
    out, _, _ = built
    import docx

    document = docx.Document(str(out / "manuscript" / "tables.docx"))
    titles = [p.text for p in document.paragraphs if p.text in TITLES.values()]
    assert TITLES[name] in titles, titles
    k = titles.index(TITLES[name])
    word = reader.docx(out / "manuscript" / "tables.docx")[k]
    latex = reader.latex(out / "manuscript" / f"table{k + 1}.tex")
    assert word == latex
    tex = (out / "manuscript" / f"table{k + 1}.tex").read_text(encoding="utf-8")
    assert rf"\label{{tab:{name}}}" in tex
    return word


def _number(out, name):
    """The number of a table, found by the label of its LaTeX file."""
    label = rf"\label{{tab:{name}}}"
    found = [
        int(p.stem[5:])
        for p in (out / "manuscript").glob("table*.tex")
        if p.stem[5:].isdigit() and label in p.read_text(encoding="utf-8")
    ]
    assert len(found) == 1, name
    return found[0]


def _tex(out, name):
    """The LaTeX file of a table, found by its label."""
    return (out / "manuscript" / f"table{_number(out, name)}.tex").read_text(encoding="utf-8")


def _groups(grid):
    """Split a body into (group label, rows) blocks."""
    blocks = []
    for row in grid[1:]:
        if len(row) == 1:
            blocks.append((row[0], []))
        else:
            blocks[-1][1].append(row)
    return blocks


def test_the_folder_holds_every_file(built):
    out, _, _ = built
    names = {p.name for p in (out / "manuscript").iterdir()}
    assert {"tables.docx", "tables.tex", "results.md", "results.docx"} <= names
    assert {f"table{k}.tex" for k in range(1, 12)} <= names


def test_sample_table(built, reader):
    _, tables, scale = built
    grid = _table(built, reader, "sample")
    assert grid[0] == ["Characteristic", "n", "M", "SD", "%"]
    rows = {r[0]: r for r in grid[1:] if len(r) > 1}
    sample = tables["sample"].set_index("quantity")["n"]
    assert rows["Listed"][1] == str(sample["participants listed"])
    assert rows["Sessions"][1] == str(sample["sessions kept"])
    ratings = tables["ratings_summary"].set_index("group")
    row = rows[f"Empathy ratings ({scale})"]
    assert row[1] == str(ratings.loc["all", "n"])
    assert reader.agrees(row[2], ratings.loc["all", "mean"])
    assert reader.agrees(row[3], ratings.loc["all", "sd"])
    for rec in tables["demographics"].itertuples(index=False):
        if isinstance(rec.level, str):
            cells = rows[f"{rec.variable}: {rec.level}"]
            assert cells[1] == str(rec.n)
            assert reader.agrees(cells[4], 100 * rec.n / sample["participants listed"])
        else:
            cells = rows[rec.variable]
            assert reader.agrees(cells[2], rec.mean) and reader.agrees(cells[3], rec.sd)


def test_descriptives_table(built, reader):
    _, tables, _ = built
    grid = _table(built, reader, "descriptives")
    desc, rel = tables["descriptives"], tables["reliability"]
    blocks = _groups(grid)
    for (_, rows), scale in zip(blocks, dict.fromkeys(desc["scale"]), strict=False):
        part = desc[desc["scale"] == scale]
        assert [r[0] for r in rows] == part["wave"].tolist()
        for row, rec in zip(rows, part.itertuples(index=False), strict=True):
            assert row[1] == str(rec.n)
            assert reader.agrees(row[2], rec.mean) and reader.agrees(row[3], rec.sd)
            alpha = rel[
                (rel["instrument"] + "_" + rel["scale"] == scale) & (rel["wave"] == rec.wave)
            ]["alpha"]
            assert reader.agrees(row[4], alpha.iloc[0] if len(alpha) else float("nan"))
    traits = blocks[-1][1]
    assert [r[1] for r in traits] == [str(n) for n in tables["traits"]["n"]]
    for row, rec in zip(traits, tables["traits"].itertuples(index=False), strict=True):
        assert reader.agrees(row[2], rec.mean) and reader.agrees(row[3], rec.sd)


def test_rm_anova_table(built, reader):
    _, tables, _ = built
    grid = _table(built, reader, "rm_anova")
    anova, friedman = tables["rm_anova"], tables["friedman"].set_index("scale")
    short = {"none": "none", "greenhouse-geisser": "GG", "huynh-feldt": "HF"}
    scales = list(dict.fromkeys(anova["scale"]))
    assert len(grid) == 1 + len(scales)
    for row, scale in zip(grid[1:], scales, strict=True):
        rec = choose_correction(anova[anova["scale"] == scale])
        assert row[1] == short[rec["correction"]]
        for cell, column in zip(row[2:8], ["epsilon", "df1", "df2", "statistic", "p_value",
                                           "eta_sq_generalized"], strict=True):  # fmt: skip
            assert reader.agrees(cell, rec[column]), (cell, column, rec[column])
        f = friedman.loc[scale]
        for cell, column in zip(row[8:12], ["statistic", "df", "p_value", "kendall_w"],
                                strict=True):  # fmt: skip
            assert reader.agrees(cell, f[column]), (cell, column)
        assert row[12] == str(rec["n"])


def test_pairwise_table(built, reader):
    _, tables, _ = built
    grid = _table(built, reader, "pairwise")
    pairs, eff = tables["pairwise"], tables["effect_sizes"]
    rows = [r for _, block in _groups(grid) for r in block]
    assert len(rows) == len(pairs)
    for row, rec in zip(rows, pairs.itertuples(index=False), strict=True):
        assert row[0] == f"{rec.wave_from} → {rec.wave_to}"
        assert reader.agrees(row[1], rec.estimate)
        assert reader.agrees_ci(row[2], rec.ci_low, rec.ci_high)
        assert reader.agrees(row[3], rec.statistic)
        assert reader.agrees(row[4], rec.df)
        assert reader.agrees(row[5], rec.p_value) and reader.agrees(row[6], rec.p_holm)
        for at, measure in ((7, "d_z"), (9, "g_av")):
            e = eff[(eff["scale"] == rec.scale) & (eff["term"] == rec.term)
                    & (eff["measure"] == measure)].iloc[0]  # fmt: skip
            assert reader.agrees(row[at], e["estimate"])
            assert reader.agrees_ci(row[at + 1], e["ci_low"], e["ci_high"])
        assert row[11] == str(rec.n)


def test_wave_means_table(built, reader):
    out, tables, _ = built
    grid = _table(built, reader, "change_wave_means")
    means = tables["change_wave_means"]
    rows = [r for _, block in _groups(grid) for r in block]
    assert len(rows) == len(means)
    for row, rec in zip(rows, means.itertuples(index=False), strict=True):
        assert row[0] == rec.wave and row[1] == str(rec.n)
        assert reader.agrees(row[2], rec.observed_mean)
        if rec.status.startswith("failed"):  # a model that failed its checks has no number
            assert row[3:] == ["failed", "", "", ""]
            continue
        for cell, value in zip(row[3:6], [rec.emmean, rec.se, rec.df], strict=True):
            assert reader.agrees(cell, value), (cell, value)
        assert reader.agrees_ci(row[6], rec.ci_low, rec.ci_high)
    # the results text carries the R-squared sentence of the empathy model
    results = (out / "manuscript" / "results.md").read_text(encoding="utf-8")
    assert "Variance explained by the linear mixed model" in results


def test_wave_contrasts_table(built, reader):
    """The model-based contrasts are a table of their own, each number the CSV's."""
    out, tables, _ = built
    grid = _table(built, reader, "change_wave_contrasts")
    assert grid[0] == ["Scale and contrast", "Mdiff", "SE", "df", "t", "pHolm", "95% CI"]
    contrasts = tables["change_wave_contrasts"]
    rows = [r for _, block in _groups(grid) for r in block]
    assert len(rows) == len(contrasts)
    for row, rec in zip(rows, contrasts.itertuples(index=False), strict=True):
        assert row[0] == f"{rec.wave_from} → {rec.wave_to}"
        if rec.status.startswith("failed"):  # a model that failed its checks has no number
            assert row[1:] == ["failed", "", "", "", "", ""]
            continue
        for cell, value in zip(row[1:5], [rec.estimate, rec.se, rec.df, rec.statistic],
                               strict=True):  # fmt: skip
            assert reader.agrees(cell, value), (cell, value)
        assert reader.agrees(row[5], rec.p_value), (row[5], rec.p_value)
        assert reader.agrees_ci(row[6], rec.ci_low, rec.ci_high)
    # the wave means' note points to this table by its number
    k = _number(out, "change_wave_contrasts")
    assert k == _number(out, "change_wave_means") + 1
    assert f"contrasts between waves are in Table {k}." in _tex(out, "change_wave_means")


def test_growth_table(built, reader):
    out, tables, _ = built
    grid = _table(built, reader, "growth")
    fixed = tables["growth_fixed"]
    rows = [r for _, block in _groups(grid) for r in block]
    assert len(rows) == len(fixed)
    for row, rec in zip(rows, fixed.itertuples(index=False), strict=True):
        for cell, value in zip(row[1:6], [rec.estimate, rec.se, rec.df, rec.statistic,
                                          rec.p_value], strict=True):  # fmt: skip
            assert reader.agrees(cell, value), (cell, value)
        assert reader.agrees_ci(row[6], rec.ci_low, rec.ci_high)
    # a growth model whose slope was dropped says so in the note
    models = tables["change_models"]
    tex = "".join(p.read_text(encoding="utf-8") for p in (out / "manuscript").glob("table*.tex"))
    for reason in models["fallback_reason"].dropna():
        assert "random slope dropped" in tex and reason.split(" (")[0] in tex


def test_empathy_effects_table(built, reader):
    out, tables, scale = built
    grid = _table(built, reader, "empathy_effects")
    effects = tables["empathy_effects"]
    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    clmm = effects[(effects["engine"] == "clmm") & (effects["scale"] == "logit")]
    clmm = clmm.set_index("term")
    assert len(grid) == 1 + len(lmm)
    for row, rec in zip(grid[1:], lmm.itertuples(index=False), strict=True):
        values = [rec.estimate, rec.se, rec.df, rec.estimate / rec.se, rec.p_value]
        for cell, value in zip(row[1:6], values, strict=True):
            assert reader.agrees(cell, value), (cell, value)
        assert reader.agrees_ci(row[6], rec.ci_low, rec.ci_high)
        c = clmm.loc[rec.term]
        if c["status"].startswith("failed"):  # a model that failed its checks has no number
            assert row[7:11] == ["failed", "", "", ""]
            continue
        values = [c["estimate"], c["se"], c["estimate"] / c["se"], c["p_value"]]
        for cell, value in zip(row[7:11], values, strict=True):
            assert reader.agrees(cell, value), (cell, value)
    tex = _tex(out, "empathy_effects")
    assert f"on the {scale.replace('–', '--')} scale" in tex


def test_variance_table(built, reader):
    _, tables, _ = built
    grid = _table(built, reader, "empathy_variance")
    variance = tables["empathy_variance"]
    rows = [r for _, block in _groups(grid) for r in block]
    assert len(rows) == len(variance)
    for row, rec in zip(rows, variance.itertuples(index=False), strict=True):
        assert row[0].lower().startswith(rec.component)
        if rec.status.startswith("failed"):  # a model that failed its checks has no number
            assert row[1:] == ["failed", ""]
            continue
        assert ("(at 0)" in row[0]) == bool(rec.at_boundary)
        assert reader.agrees(row[1], rec.variance) and reader.agrees(row[2], rec.icc)


def test_reliability_table(built, reader):
    _, tables, _ = built
    grid = _table(built, reader, "reliability")
    rel = tables["reliability"]
    assert len(grid) == 1 + len(rel)
    for row, rec in zip(grid[1:], rel.itertuples(index=False), strict=True):
        assert row[1] == rec.wave and row[2] == str(rec.n) and row[3] == str(rec.n_items)
        assert reader.agrees(row[4], rec.alpha) and reader.agrees(row[6], rec.omega_total)
        if pd.notna(rec.alpha_ci_low):
            assert reader.agrees_ci(row[5], rec.alpha_ci_low, rec.alpha_ci_high)


def test_multilevel_reliability_table(built, reader):
    _, tables, _ = built
    grid = _table(built, reader, "multilevel_reliability")
    ml = tables["multilevel_reliability"]
    assert len(grid) == 1 + len(ml)
    assert grid[0][5:] == ["RkF", "R1R", "RkR", "Rc", "RkRn", "Rcn"]
    for row, rec in zip(grid[1:], ml.itertuples(index=False), strict=True):
        assert row[1] == str(rec.n_persons) and row[2] == str(rec.n_occasions)
        assert row[3] == str(rec.n_items) and row[4] == rec.method.upper()
        for cell, column in zip(row[5:], ("RkF", "R1R", "RkR", "Rc", "RkRn", "Rcn"), strict=True):
            assert reader.agrees(cell, getattr(rec, column))


def test_tables_are_apa_styled(built):
    """Numbered, italic title, rules only above/below the head and below the body, a note."""
    import docx
    from docx.oxml.ns import qn

    out, _, _ = built
    document = docx.Document(str(out / "manuscript" / "tables.docx"))
    texts = [p.text for p in document.paragraphs]
    for k, title in enumerate(t for t in texts if t in TITLES.values()):
        at = texts.index(title)
        assert texts[at - 1] == f"Table {k + 1}"
        paragraph = document.paragraphs[at]
        assert all(run.italic for run in paragraph.runs if run.text.strip())
    notes = [p for p in document.paragraphs if p.text.startswith("Note.")]
    assert len(notes) == len(document.tables)
    assert all(note.runs[0].italic for note in notes)
    for table in document.tables:
        head, last = table.rows[0], table.rows[-1]
        for row in table.rows:
            for cell in row.cells:
                borders = cell._tc.tcPr.find(qn("w:tcBorders"))
                kinds = {e.tag.split("}")[1]: e.get(qn("w:val")) for e in borders}
                assert kinds["left"] == kinds["right"] == "nil"  # horizontal rules only
                assert (kinds["top"] == "single") == (row._tr is head._tr)
                assert (kinds["bottom"] == "single") == (row._tr in (head._tr, last._tr))
    results = (out / "manuscript" / "results.md").read_text(encoding="utf-8")
    assert "*F*(" in results and "*p* " in results and "-0." not in results


def test_the_latex_wrapper_compiles_with_pdflatex(built, tmp_path):
    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex is not installed (TeX Live gives it)")
    out, _, _ = built
    folder = tmp_path / "tex"
    shutil.copytree(out / "manuscript", folder)
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "tables.tex"],
        cwd=folder, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:]
    assert (folder / "tables.pdf").stat().st_size > 1000


def test_libreoffice_opens_the_word_files(built, tmp_path):
    office = shutil.which("soffice") or shutil.which("libreoffice")
    if office is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    out, _, _ = built
    for name in ("tables.docx", "results.docx"):
        run = subprocess.run(
            [office, f"-env:UserInstallation=file://{tmp_path}/profile", "--headless",
             "--convert-to", "pdf", "--outdir", str(tmp_path), str(out / "manuscript" / name)],
            capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert (tmp_path / name.replace(".docx", ".pdf")).stat().st_size > 1000


def _p(sign, text):
    return sign.strip() + " " + text if sign.strip() != "=" else text


def test_results_text_numbers_equal_the_csv(built, reader):
    out, tables, _ = built
    text = (out / "manuscript" / "results.md").read_text(encoding="utf-8")
    pairs = re.findall(
        r"From (\S+) to (\S+), .*? by (\S+) points, 95% CI \[(\S+), (\S+)\], \*t\*\((\S+)\) = "
        r"(\S+), \*p\* (=|<|>) (\.\d{3}), Holm-adjusted \*p\* (=|<|>) (\.\d{3})",
        text,
    )
    csv = tables["pairwise"]
    assert len(pairs) == len(csv)
    for found, rec in zip(pairs, csv.itertuples(index=False), strict=True):
        assert (found[0], found[1]) == (rec.wave_from, rec.wave_to)
        # a stated direction prints the size of the change, otherwise its signed value
        assert reader.agrees(found[2], abs(rec.estimate)) or reader.agrees(found[2], rec.estimate)
        assert reader.agrees_ci(f"[{found[3]}, {found[4]}]", rec.ci_low, rec.ci_high)
        assert reader.agrees(found[5], rec.df) and reader.agrees(found[6], rec.statistic)
        assert reader.agrees(_p(found[7], found[8]), rec.p_value)
        assert reader.agrees(_p(found[9], found[10]), rec.p_holm)
    anovas = re.findall(r"\*F\*\((\S+), (\S+)\) = (\S+), \*p\* (=|<|>) (\.\d{3}), η²", text)
    scales = list(dict.fromkeys(tables["rm_anova"]["scale"]))
    assert len(anovas) == len(scales)
    for found, scale in zip(anovas, scales, strict=True):
        rec = choose_correction(tables["rm_anova"][tables["rm_anova"]["scale"] == scale])
        assert reader.agrees(found[0], rec["df1"]) and reader.agrees(found[1], rec["df2"])
        assert reader.agrees(found[2], rec["statistic"])
        assert reader.agrees(_p(found[3], found[4]), rec["p_value"])
    lmm = tables["empathy_effects"].query("engine == 'lmm' and scale == 'rating'")
    slopes = re.findall(r"\*b\* = (\S+), 95% CI \[(\S+), (\S+)\], \*t\*\((\S+)\) = (\S+),", text)
    for found, rec in zip(slopes[-len(lmm) :], lmm.itertuples(index=False), strict=True):
        assert reader.agrees(found[0], rec.estimate)
        assert reader.agrees_ci(f"[{found[1]}, {found[2]}]", rec.ci_low, rec.ci_high)
        assert reader.agrees(found[3], rec.df)
    if tables["descriptives"]["n"].max() < 20:
        assert "imprecise and may not replicate" in text
