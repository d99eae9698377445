"""Every sentence says the true thing, and a failed model has no numbers.

The reports of the two hand-written newcomer studies (``tests/data/studies/newcomer.py``: a
two-wave 0-100 study over five weeks with the study's own column names and Mini-IPIP sums,
and a three-wave 1-7 study) are read back in every output (the page, the tables, the notes,
provenance, the figures' text, the manuscript in Markdown, LaTeX and Word): no sentence names
a month, the package's internal column names or an instrument the study does not use; every
participant left out of the complete cases has the reason; each n stands next to its scale;
the articles and plurals agree with their words. A model that failed its checks shows
"failed" and no number in every table, and no advice reaches the manuscript.
"""

from __future__ import annotations

import html
import importlib.util
import re
import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from longitudinal._wording import article
from longitudinal.narrate.numbers import apa_p, num
from longitudinal.report import build_report

# the tests read the reports' text, tables and figure labels, not figure pixels
pytestmark = pytest.mark.usefixtures("figures_as_drafts")

NEWCOMER = Path(__file__).parents[2] / "data" / "studies" / "newcomer.py"


def _newcomer():
    spec = importlib.util.spec_from_file_location("newcomer_studies", NEWCOMER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# the two-wave study with scales not scored at exit: 3 UBC-SSCS items left blank by two people
# (7 of 10 answered, 8 needed) and one rapport item by six (a sum scale needs every item)
UBC_BLANK = {"p10": ["ubc_sscs10_1", "ubc_sscs10_2", "ubc_sscs10_3"], "p11": ["ubc_sscs10_4",
             "ubc_sscs10_5", "ubc_sscs10_6"]}  # fmt: skip
RAPPORT_BLANK = {f"p{k}": ["rap_2"] for k in range(20, 26)}


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The newcomer studies and their reports: ``two_wave``, ``three_wave``, ``unscored`` (the
    two-wave study with the blanks above, raw ids) and ``clmm_failed`` (the three-wave study
    whose ordinal mixed model is made to fail its convergence check)."""
    newcomer = _newcomer()
    root = tmp_path_factory.mktemp("newcomer")
    studies = {
        "two_wave": newcomer.two_wave_slider(root / "two_wave_slider"),
        "three_wave": newcomer.three_wave_likert(root / "three_wave_likert"),
        "unscored": newcomer.two_wave_slider(root / "unscored"),
    }
    exit_file = studies["unscored"] / "surveys" / "exit.csv"
    exit_ = pd.read_csv(exit_file)
    for pid, items in {**UBC_BLANK, **RAPPORT_BLANK}.items():
        exit_.loc[exit_["pid"] == pid, items] = np.nan
    exit_.to_csv(exit_file, index=False)
    out = {"two_wave": build_report(studies["two_wave"], root / "two_wave_report", bayes=False)}
    with _two_item_scales():  # TIPI's scales have two items: no alpha-if-deleted, no omega
        out["three_wave"] = build_report(
            studies["three_wave"], root / "three_wave_report", bayes=False
        )
    out["unscored"] = build_report(
        studies["unscored"], root / "unscored_report", bayes=False, pseudonymize=False
    )
    import longitudinal.predict.effects as effects_module

    fit_clmm = effects_module._fitted_clmm

    def unconverged(*args, **kwargs):
        model = fit_clmm(*args, **kwargs)
        model.converged_ = False
        return model

    with pytest.MonkeyPatch.context() as patch, _two_item_scales():
        patch.setattr(effects_module, "_fitted_clmm", unconverged)
        out["clmm_failed"] = build_report(
            studies["three_wave"], root / "clmm_failed_report", bayes=False
        )
    return studies, out


def _two_item_scales():
    from surveys import UndefinedStatisticWarning

    return pytest.warns(UndefinedStatisticWarning, match="two-item scale")


def _page_text(out: Path) -> str:
    """The report page as text: tags out, entities decoded, embedded images dropped."""
    page = (out / "report.html").read_text(encoding="utf-8")
    page = re.sub(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+", "", page)
    page = re.sub(r"<(script|style)[^>]*>.*?</\1>", "", page, flags=re.S)
    page = re.sub(r"<(br|/p|/li|/tr|/h\d|/figcaption|/caption|/td|/th)[^>]*>", "\n", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _manuscript_table(out: Path, name: str) -> str:
    """The manuscript's LaTeX table of this name (found by its label, not its number)."""
    texts = [p.read_text(encoding="utf-8") for p in (out / "manuscript").glob("table*.tex")]
    found = [t for t in texts if rf"\label{{tab:{name}}}" in t]
    assert len(found) == 1, name
    return found[0]


def _docx_text(path: Path) -> str:
    xml = zipfile.ZipFile(path).read("word/document.xml").decode("utf-8")
    xml = re.sub(r"</w:p>", "\n", xml)
    return html.unescape(re.sub(r"<[^>]+>", "", xml))


def _figure_texts(out: Path) -> list[str]:
    texts = []
    for svg in (out / "figures").glob("*.svg"):
        found = re.findall(r"<text[^>]*>([^<]*)</text>", svg.read_text(encoding="utf-8"))
        texts += [html.unescape(t) for t in found]
    return texts


def _outputs(out: Path) -> dict[str, str]:
    """Every text the report wrote, by file (Word documents by their XML's text)."""
    texts = {"report.html": _page_text(out)}
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.suffix in (".csv", ".json", ".md", ".tex"):
            texts[rel] = path.read_text(encoding="utf-8")
        elif path.suffix == ".docx":
            texts[rel] = _docx_text(path)
    texts["figures"] = "\n".join(_figure_texts(out))
    return texts


def _prose(out: Path) -> dict[str, str]:
    """The sentences of a report: its page, notes, results and table notes."""
    texts = {"report.html": _page_text(out)}
    texts["notes.csv"] = (out / "notes.csv").read_text(encoding="utf-8")
    manuscript = out / "manuscript"
    texts["results.md"] = (manuscript / "results.md").read_text(encoding="utf-8")
    for name in ("results.docx", "tables.docx"):
        texts[name] = _docx_text(manuscript / name)
    return texts


# -- names: no month, no internal column, no instrument the study does not use ----------------


def test_no_output_names_a_month_an_internal_column_or_an_instrument_not_used(reports):
    from surveys.instruments import list_instruments

    studies, out = reports
    library = list_instruments()
    used = {"mini_ipip", "ubc_sscs10"}
    others = library[~library["name"].isin(used)]
    words = [rf"\b{re.escape(name)}\b" for name in others["name"]]
    words += [
        re.escape(title.split(",")[0].split(" (")[0].strip()) for title in others["title"]
    ]  # "Big Five Inventory", "WHO-5 Well-Being Index", ...
    forbidden = [r"\bmonths?\b", r"month-long", r"\bstory_id\b", r"\bsession_id\b"]
    texts = _outputs(out["two_wave"])
    assert {"manuscript/results.docx", "manuscript/tables.docx", "figures"} <= set(texts)
    for file, text in texts.items():
        hits = [re.search(p, text, flags=re.I) for p in forbidden + words]
        hits.append(re.search(r"\bWHO\b", text))  # the acronym, not the word "who"
        for hit in hits:
            assert hit is None, (file, text[max(0, hit.start() - 80) : hit.end() + 40])


def test_formulas_and_notes_name_the_studys_own_session_and_story_columns(reports):
    studies, out = reports
    toml = (studies["two_wave"] / "study.toml").read_text(encoding="utf-8")
    assert 'session = "visit_id"' in toml and 'story = "tale"' in toml
    notes = pd.read_csv(out["two_wave"] / "notes.csv")["note"]
    # the intercept-only model has a session and a story intercept: named as the study does
    null = [n for n in notes if "empathy ~ 1 +" in n]
    assert null and all("(1 | visit_id)" in n and "(1 | tale)" in n for n in null)
    page = _page_text(out["two_wave"])
    assert re.search(r"Model: empathy ~ .* \+ \(1 \| pid\)", page)


def test_the_study_length_is_said_in_the_studys_own_units(reports):
    studies, out = reports
    spoken = {4: "four", 5: "five"}
    for name in ("two_wave", "three_wave"):
        cfg = {"two_wave": ("pid", "start_time"), "three_wave": ("participant_id", "started_at")}
        id_col, time_col = cfg[name]
        sessions = pd.read_csv(studies[name] / "sessions.csv", parse_dates=[time_col])
        days = sessions[time_col].dt.normalize().groupby(sessions[id_col]).agg(["min", "max"])
        longest = int((days["max"] - days["min"]).dt.days.max()) + 1
        weeks = spoken[round(longest / 7)]
        page = _page_text(out[name])
        assert f"The course of the states over {weeks} weeks on the study calendar" in page
        assert f"Empathy ratings over {weeks} weeks by study week" in page


def test_figures_are_titled_with_labels_not_column_names(reports):
    studies, out = reports
    for name in ("two_wave", "three_wave"):
        texts = _figure_texts(out[name])
        assert texts
        raw = [t for t in texts if "_" in t]
        assert raw == [], (name, raw)
    two = _figure_texts(out["two_wave"])
    assert {"UBC State Social Connection Scale", "Rapport with the robot"} <= set(two)
    assert "Mini-IPIP (agreeableness)" in two  # the forest plot's label
    assert "emotional stability" in _figure_texts(out["three_wave"])  # the radar's spoke


# -- the table notes describe the study's own scoring -------------------------------------------


def test_table_2_note_describes_the_studys_own_instruments(reports):
    _, out = reports
    two = (out["two_wave"] / "manuscript" / "table2.tex").read_text(encoding="utf-8")
    assert (
        "Scores are means of the answered items for UBC State Social Connection Scale (10 "
        "items, range 1--7), and sums of the items for Rapport with the robot (5 items, range "
        "5--25) and Mini-IPIP (4 items per scale, range 4--20)."
    ) in two
    assert "WHO" not in two and "item means" not in two
    three = (out["three_wave"] / "manuscript" / "table2.tex").read_text(encoding="utf-8")
    # WHO-5 percentage: the sum of 5 items (0-5) times 4; TIPI: means of 2 items on 1-7
    assert (
        "Scores are sums of the items times 4 for WHO-5 Well-Being Index (5 items, range "
        "0--100), and means of the answered items for Ten-Item Personality Inventory (TIPI) "
        "(2 items per scale, range 1--7)."
    ) in three


# -- who was left out, and why ------------------------------------------------------------------


def _expected_left_out(study: Path) -> pd.DataFrame:
    """Each participant without an exit score, per scale, with the reason, from the raw files."""
    ids = pd.read_csv(study / "participants.csv")["pid"].astype(str)
    exit_ = pd.read_csv(study / "surveys" / "exit.csv").set_index("pid")
    rows = []
    for scale, items, needed in (
        ("ubc_sscs10_social_connection", [f"ubc_sscs10_{k}" for k in range(1, 11)], 8),
        ("rapport", [f"rap_{k}" for k in range(1, 6)], 5),
    ):
        for pid in ids:
            if pid not in exit_.index:
                rows.append((scale, pid, "did not take the exit survey"))
                continue
            answered = int(exit_.loc[pid, items].notna().sum())
            if answered < needed:
                rows.append(
                    (scale, pid, f"not scored at exit ({answered} of {len(items)} items answered)")
                )
    return pd.DataFrame(rows, columns=["scale", "id", "reason"])


def test_every_participant_left_out_of_the_complete_cases_has_the_reason(reports):
    studies, out = reports
    expected = _expected_left_out(studies["unscored"])
    assert sorted(expected["reason"].unique()) == [
        "did not take the exit survey",
        "not scored at exit (4 of 5 items answered)",
        "not scored at exit (7 of 10 items answered)",
    ]
    table = pd.read_csv(out["unscored"] / "tables" / "complete_case_exclusions.csv", dtype=str)
    got = table[["scale", "id", "reason"]].sort_values(["scale", "id"]).reset_index(drop=True)
    want = expected.sort_values(["scale", "id"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    not_taken = table["reason"] == "did not take the exit survey"
    assert (table.loc[not_taken, "survey_not_taken"] == "exit").all()
    assert table.loc[~not_taken, "not_scored"].eq("exit").all()
    # the two-wave study itself: the three who never took the exit survey, and only them
    plain = pd.read_csv(out["two_wave"] / "tables" / "complete_case_exclusions.csv")
    assert len(plain) == 6 and set(plain["reason"]) == {"did not take the exit survey"}


def _phrase(expected: pd.DataFrame, scale: str) -> tuple[int, str]:
    """Participants left out of a scale's complete cases, and why, as every output says it."""
    sub = expected[expected["scale"] == scale]
    taken = int((sub["reason"] == "did not take the exit survey").sum())
    scored = len(sub) - taken
    reasons = f"{taken} did not take the exit survey"
    if scored:
        reasons += f", {scored} {'was' if scored == 1 else 'were'} not scored at exit (too few "
        reasons += "items answered)"
    return len(sub), reasons


def test_the_reasons_are_in_the_same_words_everywhere_and_each_n_is_its_scales(reports):
    studies, out = reports
    expected = _expected_left_out(studies["unscored"])
    n_people = len(pd.read_csv(studies["unscored"] / "participants.csv"))
    report = out["unscored"]
    page = _page_text(report)
    results = (report / "manuscript" / "results.md").read_text(encoding="utf-8")
    results = re.sub(r"\\(.)", r"\1", results)  # as read: user text is Markdown-escaped
    docx = _docx_text(report / "manuscript" / "results.docx")
    table3 = (report / "manuscript" / "table3.tex").read_text(encoding="utf-8")
    tables_docx = _docx_text(report / "manuscript" / "tables.docx")
    models = pd.read_csv(report / "tables" / "change_models.csv").set_index("scale")
    clauses = []
    for scale, label in (
        ("ubc_sscs10_social_connection", "UBC State Social Connection Scale"),
        ("rapport", "Rapport with the robot"),
    ):
        left, reasons = _phrase(expected, scale)
        complete = n_people - left
        assert models.loc[scale, "rm_n_complete"] == complete
        assert models.loc[scale, "rm_left_out"] == reasons
        assert f"{complete} complete cases; {left} participants left out: {reasons}." in page
        for text in (results, docx):
            assert f"{complete} complete cases, {left} participants left out: {reasons})" in text
        for text in (table3, tables_docx):
            assert f"{label}, {left} participants ({reasons})" in text
        clauses.append(f"n = {complete} for {label}, with {left} participants left out: {reasons}")
    # UBC-SSCS (55 complete cases) comes first and rapport (51) second, as the scales are
    # declared: a sort of the n's would have put 51 first
    assert [int(c.split()[2]) for c in clauses] == [55, 51]
    assert "complete cases (" + "; ".join(clauses) + ")" in page
    assert "missing wave" not in page + results + docx + table3 + tables_docx


def test_methods_give_one_n_per_scale_in_the_scales_order():
    from longitudinal.report.sections.methods import _complete_cases

    models = pd.DataFrame(
        {
            "scale": ["b_scale", "a_scale"],
            "rm_n_complete": [100, 54],
            "rm_n_excluded": [1, 47],
            "rm_left_out": ["1 did not take the post survey", "47 did not take the post survey"],
        }
    )
    ctx = SimpleNamespace(labels={"b_scale": "B", "a_scale": "A"})
    assert _complete_cases(ctx, models) == (
        "n = 100 for B, with 1 participant left out: 1 did not take the post survey; "
        "n = 54 for A, with 47 participants left out: 47 did not take the post survey"
    )
    same = models.assign(rm_n_complete=54, rm_n_excluded=0, rm_left_out="")
    assert _complete_cases(ctx, same) == "n = 54, with no participant left out"


# -- grammar of every generated sentence ---------------------------------------------------------

_COUNTED = (
    "participant|rating|session|item|scale|wave|row|survey|story|observation|case|day|week|"
    "predictor|respondent|person-level predictor"
)


def _grammar_problems(text: str) -> list[str]:
    """Articles that do not fit their word, and counts whose noun has the wrong number."""
    bad = []
    for m in re.finditer(r"(?<![\w'’-])(a|an|A|An) ([\w][\w.%–-]*)", text):
        if article(m.group(2)) != m.group(1).lower():
            bad.append(m.group(0))
    counted = rf"(?<![\w.,–-])(\d+(?:,\d{{3}})*) ({_COUNTED})(s\b|\(s\)|\b)"
    for m in re.finditer(counted, text):
        n, suffix = int(m.group(1).replace(",", "")), m.group(3)
        if suffix == "(s)" or (n == 1) != (suffix == ""):
            bad.append(m.group(0))
    return bad


def test_the_grammar_check_finds_what_it_looks_for():
    text = (
        "participants with a intake survey; a exit survey; 1 participants; 3 participant(s) "
        "left out; 2 scale whose; an 8-item scale; a 1–7 scale; an SD; a UBC scale; 0–100 rating"
    )
    assert _grammar_problems(text) == [
        "a intake",
        "a exit",
        "1 participants",
        "3 participant(s)",
        "2 scale",
    ]


@pytest.mark.parametrize("name", ["two_wave", "three_wave", "unscored", "clmm_failed"])
def test_every_generated_sentence_has_articles_and_plurals_that_agree(reports, name):
    _, out = reports
    texts = _prose(out[name])
    sample = pd.read_csv(out[name] / "tables" / "sample.csv")["quantity"].tolist()
    texts["tables/sample.csv"] = "\n".join(sample)
    for file, text in texts.items():
        assert _grammar_problems(text) == [], (name, file)
    waves = {"two_wave": ("an intake", "an exit"), "three_wave": ("a pre", "a mid", "a post")}
    for wave in waves.get(name, ()):
        assert f"participants with {wave} survey" in sample


# -- a failed model has no numbers ---------------------------------------------------------------


def test_an_ordinal_model_that_failed_has_no_number_in_any_table_or_sentence(reports):
    _, out = reports
    report = out["clmm_failed"]
    effects = pd.read_csv(report / "tables" / "empathy_effects.csv")
    clmm = effects[effects["engine"] == "clmm"]
    assert len(clmm) and (clmm["status"] == "failed: its fit did not converge").all()
    assert (effects.loc[effects["engine"] == "lmm", "status"] == "ok").all()
    # the CSV keeps the numbers, flagged; no reader-facing table or sentence shows them
    page = (report / "report.html").read_text(encoding="utf-8")
    found = re.search(r"<table><caption>Effects on the empathy rating.*?</table>", page, re.S)
    assert found
    heads = [html.unescape(h) for h in re.findall(r"<th(?: [^>]*)?>(.*?)</th>", found.group(0))]
    assert heads[-6:] == ["predictor", "LMM b", "low", "high", "p", "Ordinal"]
    rows = re.findall(r"<tr>(.*?)</tr>", found.group(0).split("<tbody>")[1], re.S)
    lmm = effects[(effects["engine"] == "lmm") & (effects["scale"] == "rating")]
    assert len(rows) == len(lmm)
    for row, rec in zip(rows, lmm.itertuples(index=False), strict=True):
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        assert cells[-5:] == [num(rec.estimate), num(rec.ci_low), num(rec.ci_high),
                              apa_p(rec.p_value), "failed"]  # fmt: skip
    assert "Ordinal AME" not in found.group(0)
    # the forest plot draws the models that passed, and its caption says which is not drawn
    assert "Not drawn: the ordinal mixed model, which failed its checks." in _page_text(report)
    forest = (report / "figures" / "empathy_effects.svg").read_text(encoding="utf-8")
    assert "ordinal mixed model" not in forest and "Cumulative-logit" not in forest
    three = (out["three_wave"] / "figures" / "empathy_effects.svg").read_text(encoding="utf-8")
    assert "Cumulative-logit" in three  # drawn where the ordinal model passed
    effects_tex = _manuscript_table(report, "empathy_effects")
    rows = [r for r in effects_tex.splitlines() if r.endswith(r"\\") and "&" in r][1:]
    assert len(rows) == len(lmm)
    empty = r"\multicolumn{2}{c}{}"
    for row in rows:  # the ordinal columns: "failed", then nothing (its SE, z and p)
        assert row.endswith(f"failed &  & {empty} & {empty} & {empty} \\\\"), row
    assert "failed = the model failed its checks" in effects_tex
    variance_tex = _manuscript_table(report, "empathy_variance")
    ordinal = variance_tex.split("Ordinal mixed model with the predictors")[1].split(
        r"\bottomrule"
    )[0]
    assert "failed" in ordinal and not re.search(r"\d", ordinal.replace("2}{c}", ""))
    results = (report / "manuscript" / "results.md").read_text(encoding="utf-8")
    docx = _docx_text(report / "manuscript" / "results.docx")
    for text in (results, docx):
        assert (
            "The ordinal mixed model failed its checks (its fit did not converge), so none of "
            "its estimates is reported."
        ) in text
        assert "logit was" not in text


def _bayes_fitted(passed: bool):
    """An :class:`EmpathyEffects` built by hand: an LMM that passed, a Bayesian model whose
    sampling diagnostics failed (R-hat) unless ``passed``."""
    from longitudinal.predict.effects import EFFECT_COLUMNS, VARIANCE_COLUMNS, EmpathyEffects
    from models.bayes.diagnostics import REMEDIES

    rows = []
    for engine, scale, estimate, low, high in (
        ("lmm", "rating", 0.31, 0.12, 0.50),
        ("bayes_ordinal", "rating", 0.47, 0.21, 0.73),
        ("bayes_ordinal", "logit", 0.83, 0.37, 1.29),
    ):
        row = dict.fromkeys(EFFECT_COLUMNS, np.nan)
        row.update(engine=engine, scale=scale, quantity="coefficient", term="a_z",
                   label="absorption", kind="trait", part="person", estimate=estimate,
                   se=0.09, df=40.0 if engine == "lmm" else np.nan, p_value=0.003,
                   ci_low=low, ci_high=high, prob_positive=0.99)  # fmt: skip
        rows.append(row)
    variance = pd.DataFrame(
        [
            [
                "lmm",
                "conditional",
                "rating",
                "participant",
                0.41,
                np.nan,
                np.nan,
                0.3,
                np.nan,
                np.nan,
                False,
            ],
            [
                "bayes_ordinal",
                "conditional",
                "logit",
                "participant",
                0.77,
                0.2,
                1.6,
                0.19,
                0.06,
                0.33,
                False,
            ],
        ],  # fmt: skip
        columns=VARIANCE_COLUMNS,
    )
    lmm = SimpleNamespace(converged_=True, singular_=False)
    message = f"R-hat 1.080 > 1.01 ({REMEDIES['r_hat']})"
    bayes = SimpleNamespace(
        draws=100,
        diagnostics_={
            "passed": passed,
            "failures": [] if passed else ["r_hat"],
            "messages": [] if passed else [message],
        },  # fmt: skip
    )
    return EmpathyEffects(
        effects=pd.DataFrame(rows, columns=EFFECT_COLUMNS),
        variance=variance,
        predictors=pd.DataFrame(
            {
                "predictor": ["a_z"],
                "source": ["a"],
                "kind": ["trait"],
                "part": ["person"],
                "label": ["absorption"],
            }
        ),  # fmt: skip
        formula="empathy ~ a_z + (1 | participant_id) + (1 | story_id)",
        lmm=lmm,
        bayes=bayes,
        notes=(),
        meta={"n_obs": 300, "n_participants": 30, "ci_level": 0.95},
    )


def test_a_bayesian_model_that_failed_is_flagged_and_its_numbers_are_not_shown():
    from longitudinal.narrate.gates import (
        gate_sentences,
        model_failures,
        sampling_failure,
        with_status,
    )
    from longitudinal.report.sections.effects import _effects_table, _variance_table

    fitted = _bayes_fitted(passed=False)
    failures = model_failures(fitted)
    assert failures == {"bayes_ordinal": "its sampling diagnostics failed (R-hat 1.080 > 1.01)"}
    assert sampling_failure(_bayes_fitted(passed=True).bayes) is None
    effects = with_status(fitted.effects, failures)
    assert effects["status"].tolist() == [
        "ok",
        "failed: its sampling diagnostics failed (R-hat 1.080 > 1.01)",
        "failed: its sampling diagnostics failed (R-hat 1.080 > 1.01)",
    ]
    shown = str(_effects_table(effects, 0.95))
    assert ">Bayes<" in shown and ">failed<" in shown and ">0.31<" in shown
    for value in ("0.47", "0.21", "0.73", "0.83", "0.37", "1.29"):
        assert f">{value}<" not in shown
    variance = str(_variance_table(with_status(fitted.variance, failures)))
    assert ">failed<" in variance and ">0.41<" in variance and ">0.300<" in variance
    assert ">0.77<" not in variance and ">0.190<" not in variance
    gates = " ".join(gate_sentences(fitted, medium="page"))
    assert "failed its checks (its sampling diagnostics failed (R-hat 1.080 > 1.01))" in gates
    assert "raise" not in gates and "draws=" not in gates


def test_no_advice_and_no_number_of_a_failed_bayesian_model_reach_the_manuscript():
    from longitudinal.manuscript.tables import effects_table, variance_table
    from longitudinal.narrate.gates import gate_sentences, model_failures, with_status

    fitted = _bayes_fitted(passed=False)
    text = fitted.to_apa()
    assert (
        "The Bayesian ordinal model failed its checks (its sampling diagnostics failed (R-hat "
        "1.080 > 1.01)), so none of its estimates is reported."
    ) in text
    for advice in ("raise", "draws=", "tune=", "run longer", "--draws"):
        assert advice not in text
    assert "0.47" not in text and "HDI" not in text and "*b* = 0.31" in text
    gates = gate_sentences(fitted, medium="manuscript")
    assert gates == [
        "The Bayesian ordinal model failed its checks (its sampling diagnostics failed (R-hat "
        "1.080 > 1.01)): its estimates are not reported."
    ]
    failures = model_failures(fitted)
    tables = {"empathy_variance": with_status(fitted.variance, failures)}
    variance = variance_table(tables, number=7)
    assert variance.rows[-1] == ("Participant", "failed", "")
    assert "failed = the model failed its checks" in variance.note
    # a failed ordinal mixed model: its columns of the effects table read "failed" and nothing
    clmm = fitted.effects.iloc[[0, 2]].assign(engine=["lmm", "clmm"], se=[0.09, 0.2])
    table = effects_table(
        {"empathy_effects": with_status(clmm, {"clmm": "its fit did not converge"})},
        ci_level=0.95, scale_min=1, scale_max=7, n_obs=300, n_participants=30,
        gates=["The ordinal mixed model failed its checks (its fit did not converge): its "
               "estimates are not reported."], number=6,
    )  # fmt: skip
    assert table.rows[0][7:] == ("failed", "", "", "")
    assert table.rows[0][1] == "0.31"
    assert "failed = the model failed its checks" in table.note


def test_the_advice_to_sample_longer_goes_to_the_notes_and_the_terminal(
    reports, tmp_path, monkeypatch, capsys
):
    """``longitudinal report`` prints the advice notes of the report it wrote (the report
    itself is stood in for: its folder holds the notes of a failed Bayesian model)."""
    import json

    import longitudinal.report as report
    from longitudinal.cli import main
    from longitudinal.report.sections.effects import ADVICE, _bayes_remedy

    studies, _ = reports
    advice = _bayes_remedy("R-hat 1.080 > 1.01", 100)
    assert advice.startswith(ADVICE) and "--draws 200 --tune 1000" in advice

    def written(study_dir, out_dir, **options):
        out = Path(out_dir)
        out.mkdir()
        notes = ["empathy models: SamplingWarning: R-hat 1.080 > 1.01", advice]
        (out / "provenance.json").write_text(json.dumps({"notes": notes}), encoding="utf-8")
        return out

    monkeypatch.setattr(report, "build_report", written)
    code = main(["report", str(studies["two_wave"]), "--out", str(tmp_path / "r"), "--bayes"])
    printed = capsys.readouterr().out
    assert code == 0 and advice in printed.splitlines()
    assert "SamplingWarning" not in printed


def test_a_power_analysis_on_the_study_names_its_own_columns(reports, tmp_path):
    import json

    from longitudinal.power import run_power

    studies, _ = reports
    out, _ = run_power(
        tmp_path / "power",
        effect={"mini_ipip_agreeableness_z": 2.0},
        n_participants=[20],
        pilot=studies["two_wave"],
        n_sims=4,
        seed=1,
        progress=False,
    )
    text = (out / "provenance.json").read_text(encoding="utf-8")
    assert "story_id" not in text and "session_id" not in text
    power = json.loads(text)["power"]
    assert power["session_col"] == "visit_id"
    assert power["formula"].startswith("empathy ~ ") and power["formula"].endswith("(1 | pid)")
    # the pilot's notes (its singular fits) name the study's story column
    notes = " ".join(json.loads(text)["notes"])
    assert "(1 | tale)" in notes
