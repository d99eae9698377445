"""Tests of the `longitudinal report` command (longitudinal/cli/): the pseudonym key."""

import json

import pytest

from longitudinal.cli import main

# the tests read the reports' text, tables and figure labels, not figure pixels
pytestmark = pytest.mark.usefixtures("figures_as_drafts")


@pytest.fixture(scope="module")
def study_dir(small_study_dir):
    return small_study_dir  # tests/conftest.py: 16 simulated people, seed 7


def test_report_creates_the_key_once_and_says_where(study_dir, tmp_path, capsys, sections_only):
    sections_only("sample")  # the key and its fingerprint: the same whatever sections are built
    out = tmp_path / "rep"
    assert main(["report", str(study_dir), "--out", str(out), "--no-bayes"]) == 0
    first = capsys.readouterr().out
    key = tmp_path / "rep.pseudonym-key"
    assert f"created the pseudonym key {key}" in first
    fingerprint = json.loads((out / "provenance.json").read_text())["pseudonym_key_fingerprint"]
    assert main(["report", str(study_dir), "--out", str(out), "--no-bayes", "--overwrite"]) == 0
    assert "pseudonym key" not in capsys.readouterr().out
    again = json.loads((out / "provenance.json").read_text())["pseudonym_key_fingerprint"]
    assert again == fingerprint


def test_report_with_a_given_key_and_one_inside_the_output(
    study_dir, tmp_path, capsys, sections_only
):
    sections_only("sample")  # where the key is read from: the same whatever sections are built
    key = tmp_path / "secret.key"
    key.write_text("my own secret, 128 bits or more\n")
    out = tmp_path / "rep"
    assert main(["report", str(study_dir), "--out", str(out), "--no-bayes",
                 "--pseudonym-key", str(key)]) == 0  # fmt: skip
    assert "created the pseudonym key" not in capsys.readouterr().out
    assert not (tmp_path / "rep.pseudonym-key").exists()
    inside = ["--pseudonym-key", str(tmp_path / "new" / "k")]
    assert main(["report", str(study_dir), "--out", str(tmp_path / "new"), *inside]) == 2
    assert "inside the report folder" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def _caught(*texts):
    import warnings

    return [warnings.WarningMessage(t, UserWarning, "x.py", 1) for t in texts]


def test_warning_lines_split_group_count_and_shorten():
    from longitudinal.cli._common import _warning_lines

    long = "omega_total rests on a boundary solution " + "x" * 200
    caught = _caught(
        f"surveys/pre.csv, bfi44: score: a (wave 'pre'): {long} | score: b: {long}",
        f"surveys/pre.csv, bfi44: score: a (wave 'pre'): {long}",
        "a growth model was reduced to a random intercept",
    )
    lines = _warning_lines(caught, width=120)
    assert lines[0] == "warning: surveys/pre.csv, bfi44:"
    assert lines[1].startswith("  - score: a (wave 'pre'): omega_total") and lines[1].endswith(
        "… (×2)"
    )
    assert lines[2].startswith("  - score: b: omega_total") and lines[2].endswith("…")
    assert lines[3] == "warning: a growth model was reduced to a random intercept"
    assert all(len(line) <= 120 for line in lines)
    full = _warning_lines(caught, width=None)
    assert long in full[1]  # without a notes file nothing is cut


def test_report_writes_every_note_in_full_and_prints_short_lines(tmp_path, capsys):
    import pandas as pd

    from longitudinal.simulate import simulate_study

    study = simulate_study(tmp_path / "study", seed=3, n_participants=12)
    out = tmp_path / "rep"
    assert main(["report", str(study), "--out", str(out), "--no-bayes"]) == 0
    err = capsys.readouterr().err
    notes = pd.read_csv(out / "notes.csv")["note"].tolist()
    assert any("Heywood" in n for n in notes)
    lines = [line for line in err.splitlines() if line]
    assert lines and all(len(line) <= 180 for line in lines if not line.startswith("(short"))
    assert "Heywood" in err


def test_warning_lines_name_the_scales_of_one_finding_on_one_line():
    from longitudinal.cli._common import _warning_lines

    undefined = (
        "scale_reliability: returned NaN where a statistic is undefined: alpha if deleted is "
        "undefined for a two-item scale (one item left)"
    )
    heywood = "scale_reliability: omega_total rests on a boundary solution"
    caught = _caught(
        "surveys/baseline.csv, tipi: score: "
        + " | ".join(
            f"tipi.{s} (wave 'baseline'): {undefined}"
            for s in ("extraversion", "agreeableness", "openness")
        ),
        f"surveys/all.csv, who5: score: who5.raw (wave 'w2'): {heywood} | who5.percentage "
        f"(wave 'w2'): {heywood} | who5.raw (wave 'w3'): {heywood} | who5.percentage "
        f"(wave 'w3'): {heywood} | who5.raw (wave 'w4'): {heywood}",
        "a growth model was reduced to a random intercept",
        "a growth model was reduced to a random intercept",
    )
    assert _warning_lines(caught, width=None) == [
        "warning: surveys/baseline.csv, tipi: scales extraversion, agreeableness and openness "
        f"(wave 'baseline'): {undefined}",
        "warning: surveys/all.csv, who5:",
        f"  - scales raw and percentage (waves 'w2' and 'w3'): {heywood}",
        f"  - who5.raw (wave 'w4'): {heywood}",
        "warning: a growth model was reduced to a random intercept (×2)",
    ]


def test_report_prints_each_finding_once_and_keeps_every_note(slider7_report):
    import pandas as pd

    out, run = slider7_report  # tests/conftest.py: shared with test_declared_study.py
    assert run.code == 0, run.err
    lines = [line for line in run.err.splitlines() if line]
    # on the terminal the scales are counted and the finding kept to its specific reason
    assert lines[0] == (
        "warning: surveys/baseline.csv, tipi: 5 scales (wave 'baseline'): alpha if deleted is "
        "undefined for a two-item scale (one item left); omega is not identified for a two-item "
        "scale"
    )
    assert lines[1].startswith(
        "warning: surveys/month1.csv, who5: 2 scales (wave 'month1'): the one-factor solution "
        "behind omega_total is a Heywood case: "
    )
    assert len(lines) == 3 and lines[2].startswith("(shortened; every note in full")
    notes = "\n".join(pd.read_csv(out / "notes.csv")["note"])
    for scale in ("extraversion", "agreeableness", "conscientiousness", "openness"):
        assert f"tipi.{scale} (wave 'baseline'): scale_reliability: returned NaN" in notes
    assert "who5.raw (wave 'month1')" in notes and "who5.percentage (wave 'month1')" in notes
