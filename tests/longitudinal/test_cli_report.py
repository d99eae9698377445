"""Tests of the `longitudinal report` command (longitudinal/cli.py): the pseudonym key."""

import json

import pytest

from longitudinal.cli import main


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    from longitudinal.simulate import simulate_study

    return simulate_study(tmp_path_factory.mktemp("sim") / "study", seed=7, n_participants=16)


def test_report_creates_the_key_once_and_says_where(study_dir, tmp_path, capsys):
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


def test_report_with_a_given_key_and_one_inside_the_output(study_dir, tmp_path, capsys):
    key = tmp_path / "secret.key"
    key.write_text("my own secret\n")
    out = tmp_path / "rep"
    assert main(["report", str(study_dir), "--out", str(out), "--no-bayes",
                 "--pseudonym-key", str(key)]) == 0  # fmt: skip
    assert "created the pseudonym key" not in capsys.readouterr().out
    assert not (tmp_path / "rep.pseudonym-key").exists()
    inside = ["--pseudonym-key", str(tmp_path / "new" / "k")]
    assert main(["report", str(study_dir), "--out", str(tmp_path / "new"), *inside]) == 2
    assert "inside the report folder" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()
