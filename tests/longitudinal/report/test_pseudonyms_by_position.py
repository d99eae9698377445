"""Pseudonyms go where ids are: no number or word of a report is ever taken for an id.

One simulated study of 41 participants is numbered four ways: ``1`` to ``41``, ``001`` to
``041``, ``P1`` to ``P41``, and words the report writes itself (``mid``, ``post``, ``pre``,
``test``, ``r``, ``n``, ...). Three participants answered too little of the Big Five to be
scored, so the empathy models and ``longitudinal evaluate`` (whose results the study holds)
name them as left out. The pseudonymized report of each numbering must read as the report,
not pseudonymized, of a *control* study: the same data with each participant's pseudonym as
their id, and the report's copies of evaluate/ in place. So no number or word of a sentence
changed ("3 waves", "1–5 scale", "70/20/10", "9 items x 3 waves"), and every place that
names a participant (id columns, the left-out lines, the copies of evaluate's files) holds
the pseudonym. The HTML, the notes, the exclusion log, the manuscript (Markdown, LaTeX and
the XML parts of the Word files) and every table are compared.
"""

from __future__ import annotations

import csv
import html
import json
import math
import re
import shutil
import warnings
import zipfile
from pathlib import Path

import pytest
from conftest import draft_figures

from longitudinal.cli import main
from longitudinal.report import pseudonyms
from longitudinal.report.pseudonyms import pseudonymize_left_out, pseudonymize_message

slow = pytest.mark.slow  # four numberings, two reports each

KEY = "9c1f4e7a2b8d0653e1f7a9c4b2d6e80f13a5c7e9b0d2f4a6c8e1b3d5f7a9c0e2"
WORDS = (
    "mid post pre test model scale items waves seed mean train the and of a in on at for with "
    "per sd n r x week day story session rating ratings empathy left out not scored answered "
    "complete random fixed growth"
).split()
NUMBERINGS = {
    "1..41": [str(k) for k in range(1, 42)],
    "001..041": [f"{k:03d}" for k in range(1, 42)],
    "P1..P41": [f"P{k}" for k in range(1, 42)],
    "words": WORDS,
}
UNSCORED = ("P05", "P17", "P30")  # no Big Five score: left out of the trait models


def _relabel(source: Path, target: Path, ids: dict[str, str]) -> Path:
    """Copy a study, replacing each participant id (and the session ids made from it)."""
    shutil.copytree(source, target)
    for path in [target / "participants.csv", target / "sessions.csv", target / "ratings.csv"]:
        _rewrite(path, ids)
    for path in sorted((target / "surveys").glob("*.csv")):
        _rewrite(path, ids)
    return target


def _rewrite(path: Path, ids: dict[str, str]) -> None:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    columns = [i for i, h in enumerate(rows[0]) if h == "participant_id"]
    sessions = [i for i, h in enumerate(rows[0]) if h == "session_id"]
    for row in rows[1:]:
        for i in columns:
            if i < len(row) and row[i] in ids:
                row[i] = ids[row[i]]
        for i in sessions:
            person, _, k = row[i].rpartition("-")
            row[i] = f"{ids.get(person, person)}-{k}"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """The simulated study (ids P01 ... P41), three people without a Big Five score."""
    from longitudinal.simulate import simulate_study

    study = simulate_study(tmp_path_factory.mktemp("base") / "study", seed=3)
    (study / "truth.json").unlink()
    path = study / "surveys" / "pre.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    items = [i for i, h in enumerate(rows[0]) if h.startswith("bfi44_")]
    for row in rows[1:]:
        if row[0] in UNSCORED:
            for i in items[:: 1 if row[0] != "P30" else 2]:  # P30 answered half
                row[i] = ""
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh, lineterminator="\n").writerows(rows)
    return study


@pytest.fixture(scope="module", params=sorted(NUMBERINGS))
def reports(request, base, tmp_path_factory):
    """(study, its pseudonymized report, the control's report, raw id -> pseudonym)."""
    from longitudinal.predict import run_evaluation

    root = tmp_path_factory.mktemp("numbering")
    numbering = NUMBERINGS[request.param]
    raw = {f"P{k:02d}": numbering[k - 1] for k in range(1, 42)}
    study = _relabel(base, root / "study", raw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_evaluation(
            study,
            study / "evaluate",
            seeds=1,
            k=0,
            models=["grand_mean", "lmm_traits"],
            bayes=False,
            n_boot=0,
        )
    key = root / "key"
    key.write_text(KEY + "\n", encoding="utf-8")
    out = root / "pseudonymized"
    args = ["report", str(study), "--out", str(out), "--no-bayes", "--pseudonym-key", str(key)]
    with draft_figures():  # the two reports' text and tables are compared, not their figures
        assert main(args) == 0
    shown = pseudonyms(numbering, key=KEY.encode())
    control = _relabel(base, root / "control", {p: shown[r] for p, r in raw.items()})
    shutil.copytree(out / "evaluate", control / "evaluate")
    expected = root / "expected"
    args = ["report", str(control), "--out", str(expected), "--no-bayes", "--no-pseudonymize"]
    with draft_figures():
        assert main(args) == 0
    return request.param, study, out, expected, shown


HEADER = re.compile(r"Participant ids are (replaced by pseudonyms|shown as recorded)[^\n]*")


def _page_text(path: Path) -> list[str]:
    """The report's lines of text: images, styles and tags removed, the ids sentence masked."""
    page = path.read_text(encoding="utf-8")
    page = re.sub(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+", "", page)
    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    page = HEADER.sub("Participant ids ...", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    return [line.strip() for line in page.splitlines() if line.strip()]


def _docx_parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {n: archive.read(n) for n in archive.namelist() if n.endswith((".xml", ".rels"))}


def _table(path: Path) -> tuple[list[str], dict[tuple, list[tuple]]]:
    """A CSV table's header and its rows: text cells -> the numbers of the rows holding them.

    The models fitted on the study's own ids see the participants in another order than the
    control's, so their estimates may differ in the last digits: numbers are compared with a
    tolerance, text cells (ids, terms, labels) exactly.
    """
    with path.open(newline="", encoding="utf-8") as fh:
        header, *rows = list(csv.reader(fh))
    out: dict[tuple, list[tuple]] = {}
    for row in rows:
        numbers, texts = [], []
        for cell in row:
            try:
                numbers.append(float(cell))
            except ValueError:
                texts.append(cell)
                numbers.append(None)
        out.setdefault(tuple(texts), []).append(tuple(numbers))
    return header, {key: sorted(v, key=repr) for key, v in out.items()}


def _same_numbers(got: list[tuple], want: list[tuple]) -> bool:
    return len(got) == len(want) and all(
        len(g) == len(w)
        and all(
            (a is None and b is None)
            or (
                a is not None
                and b is not None
                and (a == b or math.isclose(a, b, rel_tol=1e-3, abs_tol=1e-6))
            )
            for a, b in zip(g, w, strict=True)
        )
        for g, w in zip(got, want, strict=True)
    )


@slow
def test_the_report_reads_as_that_of_the_study_whose_ids_are_the_pseudonyms(reports):
    name, _, out, expected, _ = reports
    assert _page_text(out / "report.html") == _page_text(expected / "report.html"), name
    for rel in ["notes.csv", "exclusions.csv", "manuscript/results.md", "manuscript/tables.tex"]:
        got = (out / rel).read_text(encoding="utf-8")
        assert got == (expected / rel).read_text(encoding="utf-8"), (name, rel)
    for path in sorted((expected / "manuscript").glob("table*.tex")):
        assert (out / "manuscript" / path.name).read_bytes() == path.read_bytes(), path.name
    for rel in ["manuscript/results.docx", "manuscript/tables.docx"]:
        assert _docx_parts(out / rel) == _docx_parts(expected / rel), (name, rel)


@slow
def test_every_table_holds_the_pseudonyms_where_the_control_holds_its_ids(reports):
    name, _, out, expected, _ = reports
    files = sorted(p.relative_to(expected) for p in expected.rglob("*") if p.is_file())
    assert sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()) == files
    for path in sorted((expected / "tables").glob("*.csv")):
        (header, got), (want_header, want) = _table(out / "tables" / path.name), _table(path)
        assert header == want_header and sorted(got) == sorted(want), (name, path.name)
        for key, numbers in want.items():
            assert _same_numbers(got[key], numbers), (name, path.name, key)


@slow
def test_figures_label_what_the_control_labels(reports):
    _, _, out, expected, _ = reports
    for path in sorted((expected / "figures").glob("*.svg")):
        labels = [re.findall(r"<text\b[^>]*>([^<]*)</text>", p.read_text(encoding="utf-8"))
                  for p in (out / "figures" / path.name, path)]  # fmt: skip
        assert sorted(labels[0]) == sorted(labels[1]), path.name


@slow
def test_provenance_differs_in_the_inputs_and_the_key_only(reports):
    _, _, out, expected, _ = reports
    got, want = (json.loads((f / "provenance.json").read_text("utf-8")) for f in (out, expected))
    for record in (got, want):
        for key in ("inputs_sha256", "pseudonym_key_fingerprint", "study"):
            record.pop(key)
        assert record["options"].pop("pseudonymize") is (record is got)
    assert got == want


@slow
def test_the_left_out_participants_are_named_by_pseudonym_in_their_order(reports):
    name, _, out, _, shown = reports
    gone = sorted(shown[NUMBERINGS[name][int(p[1:]) - 1]] for p in UNSCORED)
    page = " ".join(_page_text(out / "report.html"))
    assert f"3 participants entirely ({', '.join(gone)})" in page
    for pseudonym in gone:
        assert f"{pseudonym}: bfi44_extraversion not scored" in page


@slow
def test_evaluate_files_are_copied_with_pseudonyms_in_the_id_places_only(reports):
    from longitudinal.report.sections.evaluation import (
        EVALUATE_COLUMNS,
        EVALUATE_FIELDS,
        EVALUATION_FILES,
    )

    name, study, out, _, shown = reports
    source, copy = study / "evaluate", out / "evaluate"
    # what evaluate writes is what the report knows holds no participant but in left_out
    assert set(json.loads((source / "evaluation.json").read_text("utf-8"))) <= EVALUATE_FIELDS
    for path in source.glob("*.csv"):
        assert set(path.read_text(encoding="utf-8").splitlines()[0].split(",")) <= EVALUATE_COLUMNS
    files = sorted(p.name for p in source.iterdir() if p.name in EVALUATION_FILES)
    assert sorted(p.name for p in copy.iterdir()) == files
    for path in source.iterdir():
        if path.name in files and path.suffix in (".csv", ".png", ".pdf", ".svg"):
            assert (copy / path.name).read_bytes() == path.read_bytes(), path.name
    raw = json.loads((source / "evaluation.json").read_text(encoding="utf-8"))
    got = json.loads((copy / "evaluation.json").read_text(encoding="utf-8"))
    people = raw["left_out"]["participants"]
    assert len(people) == 3 and {p["participant"] for p in people} <= set(shown)
    want = sorted(
        ({**p, "participant": shown[p["participant"]],
          "text": shown[p["participant"]] + p["text"][len(p["participant"]) :]}
         for p in people),
        key=lambda p: p["participant"],
    )  # fmt: skip
    assert got["left_out"]["participants"] == want
    assert {k: v for k, v in got.items() if k != "left_out"} == {
        k: v for k, v in raw.items() if k != "left_out"
    }
    before = (source / "table.md").read_text(encoding="utf-8").splitlines()
    after = (copy / "table.md").read_text(encoding="utf-8").splitlines()
    assert len(before) == len(after)
    changed = {k for k, (b, a) in enumerate(zip(before, after, strict=True)) if b != a}
    first = next(k for k, line in enumerate(before) if line.startswith("Left out: "))
    listed = [first + 1, first + 2, first + 3]  # the summary line, then one per participant
    assert all(before[k].startswith("- ") for k in listed) and changed <= {first, *listed}
    heads = sorted(
        (shown[before[k][2:].split(":", 1)[0]], before[k].split(":", 1)[1]) for k in listed
    )
    assert [f"- {head}:{rest}" for head, rest in heads] == [after[k] for k in listed]
    gone = ", ".join(head for head, _ in heads)
    assert after[first] == f"Left out: 60 of 804 ratings; 3 participants entirely ({gone})."
    assert "Participants split 70/20/10 (train/val/test)" in after[2]


@slow
def test_distinctive_raw_ids_appear_in_no_file(reports):
    """Ids that no sentence holds (P1, 001) are nowhere in the folder, Word files included."""
    name, _, out, _, _ = reports
    if name not in ("P1..P41", "001..041"):
        pytest.skip("numbers and words are in every report; the control comparison covers them")
    ids = NUMBERINGS[name]
    pattern = re.compile(r"(?<![\w.])(?:" + "|".join(map(re.escape, ids)) + r")(?![\w])")
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.suffix in (".png", ".pdf"):
            continue
        if path.suffix == ".docx":
            text = b"\n".join(_docx_parts(path).values()).decode("utf-8")
        else:
            text = re.sub(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+", "", path.read_text("utf-8"))
        assert not pattern.findall(text), (path.name, sorted(set(pattern.findall(text))))


# -- the rules, one by one -----------------------------------------------------------------------


def test_a_message_gets_pseudonyms_only_where_it_quotes_a_participant():
    ids = {str(k): f"S{k:02d}" for k in range(1, 42)} | {"mid": "S42", "week": "S43"}
    text = "9 items x 3 waves, 1–5 scale, 70/20/10; group '12' singular at 'mid'"
    assert pseudonymize_message(text, ids, keep={"mid"}) == (
        "9 items x 3 waves, 1–5 scale, 70/20/10; group 'S12' singular at 'mid'"
    )
    listed = "participants: ['3', '7'] and participant_id=\"41\"; '3 waves'"
    assert pseudonymize_message(listed, ids, id_col="participant_id") == (
        "participants: ['S03', 'S07'] and participant_id=\"S41\"; '3 waves'"
    )
    assert pseudonymize_message("'12'", ids) == "'S12'"  # a KeyError's message
    # a quote inside a word opens no token; a quoted id that may be a word: withheld
    assert pseudonymize_message("participant's '3' of 5", ids) is None
    assert pseudonymize_message("'week' in 'participant_id' is correlated", ids) is None
    assert pseudonymize_message("'week' in 'participant_id'", ids, keep={"week"}) == (
        "'week' in 'participant_id'"
    )


def test_the_report_withholds_a_message_quoting_an_id_as_a_word(tmp_path):
    from longitudinal.report.context import WITHHELD

    ctx = _tiny_context(tmp_path, {"P1": "S03", "P2": "S01", "P3": "S04", "P4": "S02"})
    assert ctx.scrub("the fit of group 'P2' is singular (1 of 4)") == (
        "the fit of group 'S01' is singular (1 of 4)"
    )
    assert ctx.scrub("wave 'pre': P2 and 'P3'") == WITHHELD and ctx.withheld == 1
    assert ctx.scrub("wave 'pre' of 4 waves") == "wave 'pre' of 4 waves"


def test_left_out_lines_get_the_pseudonym_at_their_head_only():
    info = {
        "ratings": 9,
        "of": 40,
        "advice": "x is not scored for 2 participants",
        "participants": [
            {"participant": "7", "ratings": 5, "of": 5, "excluded": True,
             "text": "7: x not scored (7 of 9 items answered); 5 ratings left out"},
            {"participant": "12", "ratings": 4, "of": 4, "excluded": True,
             "text": "12: x not scored (1 of 7 items answered); 4 ratings left out"},
        ],
    }  # fmt: skip
    shown, withheld = pseudonymize_left_out(info, {"7": "S31", "12": "S04"})
    assert withheld == 0 and shown["advice"] == info["advice"]
    assert [p["text"] for p in shown["participants"]] == [
        "S04: x not scored (1 of 7 items answered); 4 ratings left out",
        "S31: x not scored (7 of 9 items answered); 5 ratings left out",
    ]
    # an id without a pseudonym is not named at all
    assert pseudonymize_left_out(info, {"7": "S31"})[1] == 1


def _tiny_context(tmp_path, ids):
    from longitudinal.report.context import ReportContext
    from longitudinal.report.options import check_options
    from longitudinal.study.loaded import load_study

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tiny study's reliability warnings
        study = load_study(Path(__file__).parents[2] / "data" / "studies" / "tiny")
    settings = dict(retest=None, random_slope=True, ci_level=0.95, bayes=False, overwrite=False)
    options = check_options(seed=None, pseudonymize=True, func="build_report", **settings)
    return ReportContext(study=study, options=options, id_map=ids, out=tmp_path)


def test_the_copies_of_evaluate_files_follow_the_rules(tmp_path):
    from longitudinal.report.sections.evaluation import _pseudonymized

    ctx = _tiny_context(tmp_path, {"P1": "S03", "P2": "S01", "P3": "S04", "P4": "S02"})
    entry = {"participant": "P2", "ratings": 3, "of": 3, "excluded": True,
             "text": "P2: x not scored (1 of 4 items answered); 3 ratings left out"}  # fmt: skip
    left = {"ratings": 3, "of": 30, "advice": None, "participants": [entry]}
    notes = ["lmm test (seed 1): group 'P3' singular", "worst fit: P4", "3 of 4 'P1' x"]
    value = {"k": 5, "left_out": left, "notes": notes}
    data, why = _pseudonymized("evaluation.json", json.dumps(value).encode(), ctx, left)
    copy = json.loads(data)
    assert why is None and copy["left_out"]["participants"][0]["text"].startswith("S01: x not")
    assert copy["notes"] == [
        "lmm test (seed 1): group 'S04' singular",
        "2 note(s) left out of this copy: they may name a participant (the study's "
        "evaluate/evaluation.json holds them)",
    ]
    extra = json.dumps({**value, "worst": "P4"}).encode()
    assert _pseudonymized("evaluation.json", extra, ctx, left) == (None, "names participants")
    table = "# T\n\nLeft out: 3 of 30 ratings; 1 participant entirely (P2).\n- " + entry["text"]
    data, why = _pseudonymized("table.md", table.encode(), ctx, left)
    assert data.decode().endswith("entirely (S01).\n- S01: x not scored (1 of 4 items answered)"
                                  "; 3 ratings left out")  # fmt: skip
    edited = table.replace("3 ratings left out", "3 ratings")
    assert _pseudonymized("table.md", edited.encode(), ctx, left)[0] is None
    grid = b"| Model | r |\n|---|---|\n| lmm | 31.0 |\n| P3 | 2 |\n"
    assert _pseudonymized("table.md", grid, ctx, None) == (None, "names participants")
    assert _pseudonymized("runs.csv", b"model,seed,r\nlmm,1,31.0\n", ctx, None)[1] is None
    assert _pseudonymized("runs.csv", b"model,who\nlmm,P2\n", ctx, None)[0] is None
    assert _pseudonymized("runs.csv", b"model,Participant\nlmm,x\n", ctx, None)[0] is None


def test_a_previous_report_s_copy_is_kept_only_under_the_same_key(tmp_path):
    from longitudinal.report.sections.evaluation import _pseudonymized, _same_key

    ids = {"P1": "S03", "P2": "S01", "P3": "S04", "P4": "S02"}
    ctx = _tiny_context(tmp_path, ids)
    ctx.key_fingerprint = "0123abcd0123abcd"
    entry = {"participant": "S01", "ratings": 3, "of": 3, "excluded": True,
             "text": "S01: x not scored (1 of 4 items answered); 3 ratings left out"}  # fmt: skip
    left = {"ratings": 3, "of": 30, "advice": None, "participants": [entry]}
    data = json.dumps({"k": 5, "left_out": left}).encode()
    same = {**ids, **{shown: shown for shown in ids.values()}}
    assert _pseudonymized("evaluation.json", data, ctx, left, same)[0] is not None
    assert _pseudonymized("evaluation.json", data, ctx, left)[0] is None  # S01: not an id
    made = {"pseudonym_key_fingerprint": "0123abcd0123abcd"}
    (tmp_path / "provenance.json").write_text(json.dumps(made), encoding="utf-8")
    assert _same_key(tmp_path, ctx)
    ctx.key_fingerprint = "ffffffffffffffff"
    assert not _same_key(tmp_path, ctx) and not _same_key(tmp_path / "nowhere", ctx)


def test_a_column_of_counts_is_not_taken_for_numbered_participants():
    import pandas as pd

    from longitudinal.report.build import _names_people

    people = {str(k) for k in range(1, 42)}  # --no-pseudonymize, participants 1 to 41
    counts = pd.DataFrame({"wave": ["pre", "mid", "post"], "n": [41, 40, 39]})
    assert not _names_people(counts, people)
    per_person = pd.DataFrame({"id": ["3", "17", "41"], "change": [0.5, -1.0, 0.0]})
    assert _names_people(per_person, people)


def test_rows_are_listed_in_pseudonym_order_not_in_raw_id_order():
    import pandas as pd

    from longitudinal.report.context import rename_ids

    raw = [str(k) for k in range(1, 13)]  # "1", "10", "11", "12", "2", ... sorted as text
    frame = pd.DataFrame({"pid": sorted(raw * 2), "wave": ["pre", "post"] * 12})
    frame["x"] = range(len(frame))
    order = [7, 3, 12, 1, 9, 5, 11, 2, 8, 4, 10, 6]
    pseudonyms = {r: f"S{k:02d}" for k, r in zip(order, raw, strict=True)}
    out = rename_ids(frame, "pid", pseudonyms)
    assert out["pid"].tolist() == sorted(out["pid"].tolist())  # nothing of the raw order left
    assert out["wave"].tolist() == ["pre", "post"] * 12  # each person's rows keep their order
    back = {v: k for k, v in pseudonyms.items()}
    assert [back[p] for p in out["pid"][::2]] != sorted(raw)
