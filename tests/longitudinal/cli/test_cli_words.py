"""Options never fail silently, and a refusal speaks the words of whoever is reading it.

On the command line a message names the options (``--out``, ``--overwrite``, ``--ci-level``)
and the command; from Python the same check names the parameters (``the `out_dir` parameter
of build_report``, ``overwrite=True``). Every refusal here is exit 2 with one message, and
nothing is written.
"""

from __future__ import annotations

import re
import shutil
import warnings
from pathlib import Path

import pytest

from longitudinal import InvalidParameterError
from longitudinal.cli import main

STUDIES = Path(__file__).resolve().parents[2] / "data" / "studies"
TINY = STUDIES / "tiny"
PYTHON_WORDS = ("build_report", "run_demo", "simulate_frames", "overwrite=True", "out_dir")


def _run(capsys, *args) -> tuple[int, str]:
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


@pytest.fixture
def study(tmp_path) -> Path:
    copy = tmp_path / "study"
    shutil.copytree(TINY, copy)
    return copy


def _refused(err: str) -> str:
    """The one error line, with the command's own words only."""
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err
    assert not any(word in err for word in PYTHON_WORDS), err
    return lines[0]


# -- 1. report --predictors: unknown names refused up front, as splits refuses them ---------


def test_report_refuses_unknown_predictors_before_any_work(study, tmp_path, capsys, monkeypatch):
    import longitudinal.report.build as build

    def analysed(*args, **kwargs):
        raise AssertionError("the report was computed")

    monkeypatch.setattr(build, "write_report", analysed)
    out = tmp_path / "report"
    code, err = _run(capsys, "report", study, "--out", out, "--predictors", "nosuch,tas4", "zz")
    assert code == 2
    line = _refused(err)
    assert line.startswith("error: longitudinal report: --predictors names 'nosuch', 'zz', ")
    assert not out.exists() and not Path(f"{out}.pseudonym-key").exists()

    # the same words as `splits`, apart from the command's name
    code, splits_err = _run(
        capsys,
        "splits",
        study,
        "--seeds",
        "1",
        "--predictors",
        "nosuch,tas4",
        "zz",
        "--out",
        tmp_path / "s.csv",
    )
    assert code == 2
    splits_line = _refused(splits_err)
    assert splits_line.startswith("error: longitudinal splits: --predictors names ")
    assert splits_line.split(": ", 2)[2] == line.split(": ", 2)[2]
    assert "which is neither a trait or state scale" in line and "available: " in line
    assert "tas4_absorption" in line.split("available: ")[1]


def test_build_report_refuses_unknown_predictors_in_its_own_words(study, tmp_path):
    from longitudinal.report import build_report

    with warnings.catch_warnings(), pytest.raises(InvalidParameterError) as caught:
        warnings.simplefilter("ignore")  # the tiny study's reliability findings
        build_report(study, tmp_path / "report", predictors=["nosuch"], bayes=False)
    assert str(caught.value).startswith("build_report: the `predictors` parameter names 'nosuch'")
    assert not (tmp_path / "report").exists()


def test_evaluate_refuses_unknown_predictors_in_the_commands_words(study, tmp_path, capsys):
    out = tmp_path / "evaluate"
    code, err = _run(
        capsys, "evaluate", study, "--out", out, "--seeds", "1", "--predictors", "nosuch"
    )
    assert code == 2
    assert _refused(err).startswith("error: longitudinal evaluate: --predictors names 'nosuch'")
    assert "evaluate_predictions" not in err and not out.exists()


# -- 6. the command line's words ------------------------------------------------------------


def test_a_non_empty_out_names_out_and_overwrite(study, tmp_path, capsys):
    out = tmp_path / "full"
    out.mkdir()
    (out / "mine.txt").write_text("keep me", encoding="utf-8")
    for command in (["report", study], ["evaluate", study, "--seeds", "1"], ["demo"]):
        code, err = _run(capsys, *command, "--out", out)
        assert code == 2
        assert _refused(err) == (
            f"error: --out must be a new or empty directory; {str(out)!r} is not empty (pass "
            "--overwrite to replace a previous output)"
        )
    code, err = _run(capsys, "report", study, "--out", out, "--overwrite")
    assert code == 2
    assert "--overwrite replaces only a previous output of the same command" in _refused(err)
    assert (out / "mine.txt").read_text(encoding="utf-8") == "keep me"


def test_python_keeps_its_own_words_after_a_command_ran(study, tmp_path, capsys):
    from longitudinal.report import build_report

    out = tmp_path / "full"
    out.mkdir()
    (out / "mine.txt").write_text("keep me", encoding="utf-8")
    assert _run(capsys, "report", study, "--out", out)[0] == 2
    with pytest.raises(InvalidParameterError) as caught:
        build_report(study, out, bayes=False)
    assert str(caught.value) == (
        f"the `out_dir` parameter of build_report must be a new or empty directory; "
        f"{str(out)!r} is not empty (pass overwrite=True to replace a previous output)"
    )
    with pytest.raises(InvalidParameterError, match="overwrite=True replaces only"):
        build_report(study, out, bayes=False, overwrite=True)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--ci-level", "1.5"], "error: --ci-level must be a float in (0, 1); got 1.5"),
        (["--draws", "0"], "error: --draws must be at least 1"),
        (["--target-accept", "2"], "error: --target-accept must be in (0, 1)"),
        (
            ["--formats", "pdf"],
            "error: --formats must name one or more of html, docx, latex; got 'pdf'",
        ),
    ],
)
def test_report_options_are_named_as_options(study, tmp_path, capsys, args, expected):
    code, err = _run(capsys, "report", study, "--out", tmp_path / "r", *args)
    assert code == 2
    assert _refused(err) == expected
    assert not (tmp_path / "r").exists()


def test_other_commands_name_their_options(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err = _run(capsys, "demo", "--out", ".")
    assert code == 2
    assert _refused(err).startswith("error: --out must name a folder to create or replace")

    code, err = _run(capsys, "simulate", "--out", tmp_path / "s", "--participants", "2")
    assert code == 2
    assert _refused(err) == "error: --participants must be an integer in [3, 9999]; got 2"

    export = tmp_path / "export.csv"
    export.write_text("id,tas4_1,tas4_2,tas4_3,tas4_4\nP1,4,5,3,4\nP2,2,1,2,3\n", "utf-8")
    args = ["score", export, "--instrument", "tas4", "--out", tmp_path / "s.csv"]
    code, err = _run(capsys, *args, "--min-valid", "0")
    assert code == 2
    assert _refused(err) == ("error: --min-valid must be an int >= 1 when given as a count; got 0")
    assert "`min_valid` parameter of score" not in err


def test_a_pseudonym_key_refusal_names_the_command(study, tmp_path, capsys):
    key = tmp_path / "no-folder" / "key"
    code, err = _run(capsys, "report", study, "--out", tmp_path / "r", "--pseudonym-key", key)
    assert code == 2
    line = _refused(err)
    assert re.search(r"the pseudonym key '.*key' of longitudinal report: the folder", line), line
