"""Tests of longitudinal/report (build_report, run_demo): contents, determinism, atomicity, ids."""

import hashlib
import json
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import build_sections
from numpy.testing import assert_allclose

import longitudinal
from longitudinal._errors import InvalidParameterError
from longitudinal.report import build_report, pseudonyms, run_demo
from surveys._errors import DataQualityWarning, InputValidationError

STUDIES = Path(__file__).parents[2] / "data" / "studies"
TEXT_SUFFIXES = {".csv", ".json", ".html"}


@pytest.fixture(scope="module")
def study_dir(small_study_dir):
    return small_study_dir  # tests/conftest.py: 16 simulated people, seed 7; never written to


@pytest.fixture(scope="module")
def key_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("key") / "study.pseudonym-key"
    path.write_bytes(b"3f9a0c6e1d84b27f5ac3e90d1b6f4a28c7e05d93b1fa6c4e82d0b7a5f3c19e64\n")
    return path


@pytest.fixture(scope="module")
def report(study_dir, key_file, tmp_path_factory):
    # the Bayesian section is checked in tests/longitudinal/test_predict.py
    out = tmp_path_factory.mktemp("out") / "report"
    return build_report(study_dir, out, seed=7, bayes=False, pseudonym_key=key_file)


def _text_files(folder):
    """Every text file of a report, with embedded images removed from the HTML."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            text = path.read_text(encoding="utf-8")
            out[path.relative_to(folder).as_posix()] = re.sub(
                r"data:image/png;base64,[A-Za-z0-9+/=]+", "", text
            )
    return out


def _bytes(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# -- contents -----------------------------------------------------------------------------------


def test_report_layout(report):
    names = {p.relative_to(report).as_posix() for p in report.rglob("*") if p.is_file()}
    assert {"report.html", "exclusions.csv", "provenance.json"} <= names
    for table in (
        "sample",
        "descriptives",
        "rm_anova",
        "pairwise",
        "effect_sizes",
        "friedman",
        "growth_fixed",
        "reliable_change_counts",
        "reliability",
        "ratings_g_components",
        "ratings_g_coefficient",
        "ratings_d_study",
        "multilevel_reliability",
        "multilevel_components",
        "exclusion_counts",
        "ratings_distribution",
        "sessions_summary",
        "empathy_course",
        "empathy_smooth",
        "empathy_smooth_curve",
    ):
        assert f"tables/{table}.csv" in names
    for figure in (
        "trajectories",
        "wave_distributions",
        "state_course",
        "reliable_change",
        "empathy_ratings",
        "empathy_course",
        "empathy_smooth",
        "trait_radar",
        "demographics",
    ):
        assert f"figures/{figure}.png" in names
    assert not list(report.parent.glob(".report.*"))  # no staging folder left behind


def test_html_is_self_contained_with_methods(report):
    page = (report / "report.html").read_text(encoding="utf-8")
    assert page.count('<img alt="') == 10  # nine report figures and the empathy forest plot
    assert 'src="figures/' not in page  # images are embedded, not linked
    methods = re.search(r'<p class="methods">(.*?)</p>', page, re.S).group(1)
    assert "Scale scores were computed" in methods
    assert "α at pre = " in methods
    assert "repeated-measures ANOVA" in methods and "Holm" in methods
    assert "Jacobson-Truax" in methods


def test_report_counts_the_exclusion_log(report, study_dir):
    log = pd.read_csv(report / "exclusions.csv")
    truth = json.loads((study_dir / "truth.json").read_text())
    assert len(log) == 1 + len(truth["defects"]["session_without_ratings"])
    sample = pd.read_csv(report / "tables" / "sample.csv").set_index("quantity")["n"]
    assert sample["rows in the exclusion log"] == len(log)
    assert sample["survey rows excluded: surveys/post_qualtrics.csv"] == 1
    assert sample["sessions without ratings (kept; not in the story frame)"] == 1
    assert sample["ratings kept"] == truth["n_ratings"]
    counts = pd.read_csv(report / "tables" / "exclusion_counts.csv")
    assert counts["n"].sum() == len(log)
    page = (report / "report.html").read_text(encoding="utf-8")
    assert "1 row of the input files was excluded: 1 in surveys/post_qualtrics.csv" in page


def test_change_tables_cover_every_state_scale(report):
    descriptives = pd.read_csv(report / "tables" / "descriptives.csv")
    assert set(descriptives["scale"]) == {
        "cls9_humanity_compassionate_love",
        "ubc_sscs10_social_connection",
        "who5_percentage",  # WHO-5 raw is a rescaling of the percentage: analysed once
    }
    pairwise = pd.read_csv(report / "tables" / "pairwise.csv")
    assert len(pairwise) == 3 * 3
    assert (pairwise["p_holm"] >= pairwise["p_value"] - 1e-15).all()
    effects = pd.read_csv(report / "tables" / "effect_sizes.csv")
    assert set(effects["measure"]) == {"d_z", "g_av"}


def test_rci_uses_alpha_at_pre(report):
    models = pd.read_csv(report / "tables" / "change_models.csv").set_index("scale")
    rel = pd.read_csv(report / "tables" / "reliability.csv")
    alpha = rel[(rel["wave"] == "pre") & (rel["instrument"] == "who5")]["alpha"].iloc[0]
    assert models.loc["who5_percentage", "rci_reliability"] == pytest.approx(alpha, rel=1e-12)
    sd = models.loc["who5_percentage", "rci_sd_baseline"]
    # Jacobson & Truax: S_diff = SD_pre * sqrt(2) * sqrt(1 - r)
    assert models.loc["who5_percentage", "rci_s_diff"] == pytest.approx(
        sd * np.sqrt(2) * np.sqrt(1 - alpha), rel=1e-12
    )


@pytest.mark.usefixtures("figures_drafted")  # reads no figure
def test_retest_option_changes_the_rci(study_dir, tmp_path):
    out = build_sections(
        study_dir, tmp_path / "r", ["sample", "methods", "change"], retest={"who5": 0.5}
    )
    models = pd.read_csv(out / "tables" / "change_models.csv").set_index("scale")
    assert models.loc["who5_percentage", "rci_reliability"] == 0.5
    sd = models.loc["who5_percentage", "rci_sd_baseline"]
    assert models.loc["who5_percentage", "rci_s_diff"] == pytest.approx(sd, rel=1e-12)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "test-retest reliability given (.50 for WHO-5" in page


@pytest.mark.usefixtures("figures_drafted")  # reads no figure
def test_a_growth_model_with_a_problem_says_so_beside_its_table(study_dir, tmp_path, monkeypatch):
    """When the random-intercept model kept is singular too, the report says so in place."""
    from longitudinal.change import growth

    monkeypatch.setattr(growth, "_is_singular", lambda fit: True)
    out = build_sections(study_dir, tmp_path / "r", ["change"])
    models = pd.read_csv(out / "tables" / "change_models.csv")
    assert (models["random_effects"] == "intercept").all()
    singular = "singular fit (a variance at zero or a correlation at +/-1)"
    assert (models["problems"] == singular).all()
    page = (out / "report.html").read_text(encoding="utf-8")
    shown = "The model shown has a problem too: singular fit (a variance at zero or a correlation"
    assert page.count(shown) == len(models)


def test_provenance(report, study_dir):
    prov = json.loads((report / "provenance.json").read_text())
    assert prov["version"] == longitudinal.__version__
    assert prov["seed"] == 7
    assert prov["options"]["pseudonymize"] is True
    for rel, digest in prov["inputs_sha256"].items():
        assert hashlib.sha256((study_dir / rel).read_bytes()).hexdigest() == digest
    assert set(prov["inputs_sha256"]) >= {
        "study.toml",
        "sessions.csv",
        "ratings.csv",
        "participants.csv",
        "surveys/post_qualtrics.csv",
        "surveys/post_map.csv",
    }
    assert str(study_dir.parent) not in json.dumps(prov)  # no absolute paths


# -- determinism ------------------------------------------------------------------------------


def test_same_study_gives_byte_identical_report(report, study_dir, key_file, tmp_path):
    (tmp_path / "again").mkdir()  # an existing empty folder is used
    again = build_report(study_dir, tmp_path / "again", seed=7, bayes=False, pseudonym_key=key_file)
    assert _bytes(again) == _bytes(report)


@pytest.mark.slow
@pytest.mark.usefixtures("figures_drafted")  # full figures: the byte-identity test above
def test_demo_same_seed_identical_tables_and_truth(tmp_path):
    first = run_demo(tmp_path / "a", seed=2024)
    second = run_demo(tmp_path / "b", seed=2024)
    a, b = _bytes(first), _bytes(second)
    tables = [k for k in a if k.startswith("tables/")]
    assert tables and all(a[k] == b[k] for k in tables)
    assert a["study/truth.json"] == b["study/truth.json"]
    assert a == b
    page = (first / "report.html").read_text(encoding="utf-8")
    assert 'href="study/truth.json"' in page


# -- atomicity and the output folder -----------------------------------------------------------


@pytest.mark.usefixtures("figures_drafted")  # reads no figure
def test_failure_mid_report_leaves_nothing(study_dir, tmp_path, monkeypatch):
    import longitudinal.plotting as plotting

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(plotting, "plot_demographics", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        build_report(study_dir, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_rejected_study_writes_nothing(tmp_path):
    with pytest.raises(InputValidationError):
        build_report(STUDIES / "defects", tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_refuses_non_empty_out_dir_unless_overwrite(study_dir, tmp_path, sections_only):
    out = tmp_path / "out"
    (out / "evaluate").mkdir(parents=True)
    (out / "keep.txt").write_text("mine")
    (out / "evaluate" / "metrics.csv").write_text("model,mse\nlstm,1.1\n")
    with pytest.raises(InvalidParameterError, match="not empty"):
        build_report(study_dir, out, bayes=False)
    # a folder the report command did not write is never replaced, --overwrite or not
    with pytest.raises(InvalidParameterError, match="was not written by `longitudinal report`"):
        build_report(study_dir, out, overwrite=True, bayes=False)
    assert (out / "keep.txt").read_text() == "mine"
    (out / ".empathic-longitudinal").write_text("report\n")  # as a previous report leaves
    sections_only("evaluation", "notes", "files")  # the folder's fate, and the evaluation link
    build_report(study_dir, out, overwrite=True, bayes=False)
    assert not (out / "keep.txt").exists() and (out / "report.html").is_file()
    # beside the report: its pseudonym key, and no staging folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "out.pseudonym-key"]
    # evaluation results of an earlier run in the report folder are carried over
    assert (out / "evaluate" / "metrics.csv").read_text() == "model,mse\nlstm,1.1\n"
    assert 'href="evaluate/metrics.csv"' in (out / "report.html").read_text(encoding="utf-8")


def test_out_dir_must_not_be_contain_or_lie_inside_an_input(study_dir):
    before = sorted(p.name for p in study_dir.rglob("*"))
    for out, relation in (
        (study_dir, "contains"),
        (study_dir.parent, "contains"),
        (study_dir / "surveys", "contains"),
        (study_dir / "ratings.csv", "is"),
        (study_dir / "surveys" / "pre.csv" / "x", "lies inside"),
    ):
        with pytest.raises(InvalidParameterError, match=f"{relation} the input"):
            build_report(study_dir, out, overwrite=True, bayes=False)
    assert sorted(p.name for p in study_dir.rglob("*")) == before


def test_bad_parameters(study_dir, tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(InvalidParameterError, match="is a file"):
        build_report(study_dir, tmp_path / "file")
    with pytest.raises(InvalidParameterError, match="retest"):
        build_report(study_dir, tmp_path / "x", retest={"who5": 1.2})
    with pytest.raises(InvalidParameterError, match="ci_level"):
        build_report(study_dir, tmp_path / "x", ci_level=95)
    with pytest.raises(InvalidParameterError, match="pseudonymize"):
        build_report(study_dir, tmp_path / "x", pseudonymize="yes")


# -- privacy -------------------------------------------------------------------------------------


def test_pseudonyms_are_a_keyed_permutation():
    ids = [f"x{i:03d}" for i in range(120)]
    first = pseudonyms(ids, key=b"key one")
    assert first == pseudonyms(list(reversed(ids)), key=b"key one")  # order of input: no matter
    assert sorted(first.values()) == [f"S{k:03d}" for k in range(1, 121)]
    # sorted raw ids do not get sorted pseudonyms, and another key gives another permutation
    assert [first[i] for i in ids] != sorted(first.values())
    assert pseudonyms(ids, key=b"key two") != first
    with pytest.raises(InvalidParameterError, match="key"):
        pseudonyms(ids, key=b"")


@pytest.mark.usefixtures("figures_drafted")  # reads no figure
def test_key_is_made_beside_the_report_and_reused(study_dir, tmp_path, sections_only):
    out = build_report(study_dir, tmp_path / "rep", bayes=False)
    key = tmp_path / "rep.pseudonym-key"
    assert key.is_file() and not any(p.name.endswith("pseudonym-key") for p in out.rglob("*"))
    assert key.stat().st_mode & 0o077 == 0  # owner only
    secret = key.read_bytes().strip()
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert len(provenance["pseudonym_key_fingerprint"]) == 16
    for path in out.rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes()
    # the rerun reads the key back: one section that names people is enough to show it
    sections_only("change")
    again = build_report(study_dir, tmp_path / "rep", bayes=False, overwrite=True)
    assert key.read_bytes().strip() == secret
    table = "tables/reliable_change_people.csv"
    assert (again / table).read_bytes() == (out / table).read_bytes()


def test_key_inside_the_report_is_refused(study_dir, tmp_path):
    with pytest.raises(InvalidParameterError, match="inside the report folder"):
        build_report(study_dir, tmp_path / "rep", pseudonym_key=tmp_path / "rep" / "k")
    assert list(tmp_path.iterdir()) == []


def test_no_raw_id_in_any_report_file(report, study_dir, key_file):
    raw = pd.read_csv(study_dir / "participants.csv", dtype=str)["participant_id"]
    sessions = pd.read_csv(study_dir / "sessions.csv", dtype=str)["session_id"]
    for name, text in _text_files(report).items():
        for value in [*raw, *sessions]:
            assert value not in text, f"{value} in {name}"
    people = pd.read_csv(report / "tables" / "reliable_change_people.csv")
    assert set(people["id"]) <= set(pseudonyms(raw, key=key_file.read_bytes().strip()).values())


def test_no_pseudonymize_keeps_raw_ids(study_dir, tmp_path):
    out = build_sections(study_dir, tmp_path / "raw", ["change"], pseudonymize=False)
    people = pd.read_csv(out / "tables" / "reliable_change_people.csv")
    raw = set(pd.read_csv(study_dir / "participants.csv", dtype=str)["participant_id"])
    assert set(people["id"]) <= raw and len(set(people["id"])) > 1


@pytest.mark.usefixtures("figures_drafted")  # reads no figure
def test_free_text_never_copied(tmp_path):
    with warnings.catch_warnings():  # four respondents: omega is a Heywood case
        warnings.simplefilter("ignore", DataQualityWarning)
        out = build_report(STUDIES / "tiny", tmp_path / "tiny", bayes=False)
    texts = _text_files(out)
    for phrase in (
        "sister",
        "slider not moved",
        "open day",
        "evening",
        "living room",
        "P1",
        "P2",
        "P3",
        "P4",
        "s01",
    ):
        assert not any(phrase in t for t in texts.values()), phrase
    log = pd.read_csv(out / "exclusions.csv")
    assert len(log) == 10 and set(log.columns) == {"file", "row", "reason", "scope"}


# -- evaluation results -------------------------------------------------------------------------


def test_evaluation_metrics_are_copied_and_linked(study_dir, tmp_path):
    study = Path(shutil.copytree(study_dir, tmp_path / "study"))
    (study / "evaluate").mkdir()
    (study / "evaluate" / "metrics.csv").write_text("model,pearson_r\nbaseline,0.232\n")
    out = build_sections(study, tmp_path / "out", ["evaluation", "notes", "files"])
    assert (out / "evaluate" / "metrics.csv").read_text().startswith("model,pearson_r")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'href="evaluate/metrics.csv"' in page and "0.232" in page


def test_evaluation_section_shows_the_models_with_their_intervals(study_dir, tmp_path):
    """With `longitudinal evaluate` output in STUDY_DIR/evaluate, the report shows every model
    with its K-fold interval, the differences from the baselines to beat, the holdout mean ±
    SD with its caveat, and what each model is; the numbers are those of metrics_ci.csv."""
    from longitudinal.predict import run_evaluation

    study = Path(shutil.copytree(study_dir, tmp_path / "study"))
    run_evaluation(
        study,
        study / "evaluate",
        seeds=2,
        k=3,
        models=["majority_vote", "grand_mean", "lmm_traits"],
        bayes=False,
        n_boot=200,
    )
    out = build_sections(study, tmp_path / "out", ["evaluation", "notes", "files"])
    page = (out / "report.html").read_text(encoding="utf-8")
    section = page[page.index('id="evaluation"') :]
    section = section[: section.index("</section>")]
    assert "Grouped 3-fold: estimate [95% interval]" in section
    assert "participant-cluster bootstrap, B = 200 replicates" in section
    assert "Differences from the baselines to beat" in section
    assert "70/20/10 test participants: mean ± SD over split seeds" in section
    assert "a test set of fewer than 10 people supports no inference" in section
    assert "the paper does not state its threshold" in section
    assert "<code>majority_vote</code>: the most frequent rating" in section
    assert "data:image/png;base64," in section  # the metrics figure, embedded
    ci = pd.read_csv(study / "evaluate" / "metrics_ci.csv").set_index(["model", "metric"])
    rec = ci.loc[("lmm_traits", "r")]
    cell = f"{rec['estimate']:.1f} [{rec['ci_low']:.1f}, {rec['ci_high']:.1f}]"
    assert cell in section, cell
    assert "Evaluation metrics" not in section  # the raw table only for other metrics files


def test_evaluation_files_of_another_layout_fall_back_to_the_metrics_table(study_dir, tmp_path):
    study = Path(shutil.copytree(study_dir, tmp_path / "study"))
    folder = study / "evaluate"
    folder.mkdir()
    (folder / "metrics.csv").write_text("model,split,seed,r\nmine,test,0,0.3\n")
    (folder / "evaluation.json").write_text('{"k": 5, "bootstrap": {"ci_level": 0.95}}')
    (folder / "metrics_ci.csv").write_text("name,value\nmine,0.3\n")
    out = build_sections(study, tmp_path / "out", ["evaluation", "notes", "files"])
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "could not be read as this version writes them" in page
    assert "Evaluation metrics" in page and "0.300" in page


def test_evaluation_naming_participants_is_not_copied(study_dir, tmp_path):
    study = Path(shutil.copytree(study_dir, tmp_path / "study"))
    (study / "evaluate").mkdir()
    (study / "evaluate" / "metrics.csv").write_text("participant,r\nP01,0.5\n")
    out = build_sections(study, tmp_path / "out", ["evaluation", "notes", "files"])
    assert not (out / "evaluate").exists()
    assert "names participants" in (out / "report.html").read_text(encoding="utf-8")


def test_growth_time_is_weeks_since_pre(report):
    models = pd.read_csv(report / "tables" / "change_models.csv")
    assert (models["time_unit"] == "weeks").all()
    assert (models["time_pre"] == 0).all()
    # the simulated mid survey falls 13-16 days and post 30-33 days after pre
    assert models["time_mid"].between(13 / 7, 16 / 7).all()
    assert models["time_post"].between(30 / 7, 33 / 7).all()
    assert_allclose(models["time_mid"], models["time_mid"].iloc[0])
