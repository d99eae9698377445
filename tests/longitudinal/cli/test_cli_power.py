"""The power command: a pilot study directory or a design file in, a power folder out."""

import json

import pandas as pd
import pytest

from longitudinal.cli import main
from longitudinal.simulate import simulate_study

DESIGN = """
[design]
formula = "y ~ condition + (1 | participant_id)"
sessions = 2

[predictors.condition]
level = "session"
distribution = "cycle"
values = [0, 1]

[fixed]
Intercept = 0.0

[random.participant_id]
sd = { Intercept = 1.0 }

[residual]
sd = 1.0
"""


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    return simulate_study(tmp_path_factory.mktemp("cli") / "study", seed=5, n_participants=20)


@pytest.fixture
def design(tmp_path):
    path = tmp_path / "design.toml"
    path.write_text(DESIGN, encoding="utf-8")
    return path


def test_design_writes_table_figure_and_provenance(design, tmp_path, capsys):
    out = tmp_path / "power"
    args = ["power", "--design", str(design), "--effect", "condition=0.8", "--out", str(out)]
    code = main([*args, "--participants", "10,20", "--sims", "30", "--seed", "3"])
    assert code == 0
    table = pd.read_csv(out / "power.csv")
    assert table.columns[:2].tolist() == ["n_participants", "n_sessions"]
    assert table["n_participants"].tolist() == [10, 20]
    assert {"power", "ci_low", "ci_high", "n_failed", "n_sims"} <= set(table.columns)
    assert (table["ci_low"] <= table["power"]).all() and (table["power"] <= table["ci_high"]).all()
    assert (out / "power.png").is_file() and (out / "power.svg").is_file()
    assert (out / "failures.csv").is_file()
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["power"]["seed"] == 3 and provenance["power"]["term"] == "condition"
    assert provenance["inputs_sha256"].keys() == {"design.toml"}
    assert provenance["raw_csv"] is False
    captured = capsys.readouterr()
    assert "power to detect condition = 0.8" in captured.out
    assert "simulations," not in captured.err  # no progress bar when stderr is not a terminal
    # the same seed gives the same table, through local processes too
    again = tmp_path / "again"
    code = main(
        ["power", "--design", str(design), "--effect", "condition=0.8", "--out", str(again),
         "--participants", "10,20", "--sims", "30", "--seed", "3", "--scheduler", "processes:2",
         "--raw-csv"]
    )  # fmt: skip
    assert code == 0
    pd.testing.assert_frame_equal(table, pd.read_csv(again / "power.csv"), check_exact=True)
    assert json.loads((again / "provenance.json").read_text(encoding="utf-8"))["raw_csv"] is True


def test_pilot_terms_are_the_reports(study, tmp_path, capsys):
    out = tmp_path / "power"
    code = main(
        ["power", "--pilot", str(study), "--effect", "bfi44_extraversion_z=0.3",
         "--participants", "10,20", "--sessions", "4-6", "--sims", "4", "--seed", "1",
         "--out", str(out)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out / "power.csv", dtype={"n_sessions": str})
    assert table["n_sessions"].tolist() == ["4-6", "4-6"]
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert "study.toml" in provenance["inputs_sha256"]
    assert provenance["power"]["source"] == "pilot"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--effect", "nope=0.2"], "not a term of the pilot's empathy model"),
        (["--effect", "nope"], "expected TERM=VALUE"),
        (["--effect", "x=1", "--participants", "1,5"], "whole numbers from 2 to 100,000"),
        (["--effect", "bfi44_extraversion_z=1", "--scheduler", "cloud"], "scheduler"),
        (["--effect", "bfi44_extraversion_z=1", "--sims", "0"], "--sims"),
        (["--effect", "bfi44_extraversion_z=1", "--sessions", "9-3"], "min <= max"),
    ],
)
def test_bad_input_exits_2_with_one_message(study, tmp_path, capsys, extra, message):
    out = tmp_path / "power"
    args = ["power", "--pilot", str(study), "--out", str(out), "--sims", "2"]
    if "--participants" not in extra:
        args += ["--participants", "10"]
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists()


def test_pilot_and_design_are_exclusive(study, design, tmp_path, capsys):
    args = ["power", "--pilot", str(study), "--design", str(design), "--effect", "x=1"]
    assert main([*args, "--participants", "10", "--out", str(tmp_path / "o")]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_output_over_the_study_is_refused(study, capsys):
    before = sorted(p.name for p in study.iterdir())
    args = ["power", "--pilot", str(study), "--effect", "bfi44_extraversion_z=1"]
    assert main([*args, "--participants", "10", "--sims", "2", "--out", str(study)]) == 2
    assert "never writes over its inputs" in capsys.readouterr().err
    assert sorted(p.name for p in study.iterdir()) == before


def test_bad_design_key_is_named(tmp_path, capsys):
    path = tmp_path / "design.toml"
    path.write_text(DESIGN.replace("sd = 1.0\n", "sd = 1.0\nshape = 2\n"), encoding="utf-8")
    args = ["power", "--design", str(path), "--effect", "condition=1", "--participants", "10"]
    assert main([*args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "[residual]" in err and "'shape'" in err


def test_non_empty_output_needs_overwrite_of_the_same_command(design, tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    args = ["power", "--design", str(design), "--effect", "condition=1", "--participants", "10"]
    assert main([*args, "--sims", "2", "--out", str(out)]) == 2
    assert main([*args, "--sims", "2", "--out", str(out), "--overwrite"]) == 2
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"


ORDINAL_DESIGN = """
[design]
formula = "rating ~ trait + (1 | participant_id)"
engine = "clmm"
sessions = 3
stories_per_session = 3
stories = 30

[predictors.trait]
level = "participant"

[fixed]
trait = 0.0

[random.participant_id]
sd = { Intercept = 1.0 }

[thresholds]
values = [-2.2, -0.9, 0.4, 1.9]
"""


def test_ordinal_pilot_uses_the_reports_ordinal_model(study, tmp_path, capsys):
    out = tmp_path / "power"
    code = main(
        ["power", "--pilot", str(study), "--engine", "clmm", "--effect",
         "bfi44_extraversion_z=0.5", "--participants", "10,20", "--sims", "4", "--seed", "2",
         "--out", str(out)]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "0.5 (log odds ratio) (ordinal mixed model, wald test" in captured.out
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    power = provenance["power"]
    assert power["engine"] == "clmm" and power["test"] == "wald"
    assert power["truth"]["fixed"]["bfi44_extraversion_z"] == 0.5
    assert "Intercept" not in power["truth"]["fixed"] and len(power["truth"]["thresholds"]) >= 1
    assert pd.read_csv(out / "power.csv")["n_sims"].tolist() == [4, 4]


def test_ordinal_design_file_and_engine_checks(tmp_path, capsys):
    path = tmp_path / "ordinal.toml"
    path.write_text(ORDINAL_DESIGN, encoding="utf-8")
    out = tmp_path / "power"
    args = ["power", "--design", str(path), "--effect", "trait=0.8", "--participants", "10"]
    assert main([*args, "--sims", "6", "--seed", "1", "--test", "lrt", "--out", str(out)]) == 0
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    assert provenance["power"]["engine"] == "clmm" and provenance["power"]["test"] == "lrt"
    capsys.readouterr()
    # a linear engine for an ordinal design, and a linear-only test, are refused
    bad = tmp_path / "bad"
    assert main([*args, "--engine", "lmm", "--out", str(bad)]) == 2
    assert "the design file decides the model" in capsys.readouterr().err
    assert main([*args, "--test", "satterthwaite", "--out", str(bad)]) == 2
    assert "for an ordinal model" in capsys.readouterr().err
    assert not bad.exists()


def test_an_ordinal_pilot_model_of_a_slider_is_refused(tmp_path, capsys):
    from conftest import load_newcomer

    slider = load_newcomer().two_wave_slider(tmp_path / "slider")
    out = tmp_path / "power"
    code = main(
        ["power", "--pilot", str(slider), "--engine", "clmm", "--effect", "x=0.3",
         "--participants", "20", "--sims", "2", "--out", str(out)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2, err
    assert "0-100 scale, more than 11 points" in err and "--engine lmm" in err
    assert not out.exists()
