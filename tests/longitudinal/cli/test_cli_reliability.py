"""Tests of `longitudinal reliability` (longitudinal/cli/reliability.py).

The export tests/data/raw/mood3_long.csv and its key mood3.toml are written by hand (not by the
simulator): 7 participants x 3 waves; `calm` is complete (ANOVA), `tension` misses one answer
(REML), `energy` is answered at one wave only (a note, no multilevel rows). Reference values
are psych::mlr's (tests/longitudinal/reference/cli_reliability.R, psych 2.2.9).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from numpy.testing import assert_allclose

from longitudinal.cli import main

DATA = Path(__file__).resolve().parents[2] / "data" / "raw"
EXPORT = DATA / "mood3_long.csv"
KEY = DATA / "mood3.toml"
REFERENCE = json.loads(
    (Path(__file__).resolve().parents[1] / "reference" / "cli_reliability.json").read_text()
)
COEFFICIENTS = ["RkF", "R1R", "RkR", "Rc", "RkRn", "Rcn"]
CROSSED = [
    "person",
    "occasion",
    "item",
    "person_x_occasion",
    "person_x_item",
    "occasion_x_item",
    "residual",
]
NESTED = ["person", "occasion_in_person", "residual"]


def run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def command(raw, out, *extra):
    return [
        "reliability",
        raw,
        "--instrument",
        KEY,
        "--id-col",
        "pid",
        "--wave-col",
        "wave",
        "--out",
        out,
        *extra,
    ]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("rel") / "reliability"
    code = main([str(a) for a in command(EXPORT, out)])
    assert code == 0
    return out


def test_writes_the_three_tables_and_nothing_else(written):
    names = sorted(p.name for p in written.iterdir() if not p.name.startswith("."))
    assert names == ["components.csv", "internal.csv", "multilevel.csv"]
    multilevel = pd.read_csv(written / "multilevel.csv")
    assert list(multilevel.columns) == [
        "instrument",
        "scale",
        "n_persons",
        "n_occasions",
        "n_items",
        "method",
        *COEFFICIENTS,
    ]
    assert multilevel["scale"].tolist() == ["calm", "tension"]  # energy: one wave only
    components = pd.read_csv(written / "components.csv")
    assert list(components.columns) == ["instrument", "scale", "design", "component", "variance"]


@pytest.mark.parametrize("reference", REFERENCE["results"], ids=lambda r: r["scale"])
def test_multilevel_table_matches_psych(written, reference):
    row = pd.read_csv(written / "multilevel.csv").set_index("scale").loc[reference["scale"]]
    assert row["instrument"] == "mood3"
    assert (row["n_persons"], row["n_occasions"], row["n_items"]) == (7, 3, 3)
    assert row["method"] == reference["method"]
    # ANOVA coefficients exactly as psych's (R wrote 15 digits); REML (lme4's default stopping
    # rule in psych) and the nested coefficients (nlme, printed to 7 digits) to 1e-3
    exact = reference["method"] == "anova"
    for name in COEFFICIENTS:
        rtol = 1e-9 if exact and name not in ("RkRn", "Rcn") else 1e-3
        assert_allclose(row[name], reference[name], rtol=rtol)


@pytest.mark.parametrize("reference", REFERENCE["results"], ids=lambda r: r["scale"])
def test_components_match_psych(written, reference):
    table = pd.read_csv(written / "components.csv")
    mine = table.loc[table["scale"] == reference["scale"]]
    crossed = mine.loc[mine["design"] == "crossed"].set_index("component")["variance"]
    nested = mine.loc[mine["design"] == "nested"].set_index("component")["variance"]
    assert crossed.index.tolist() == CROSSED and nested.index.tolist() == NESTED
    if reference["method"] == "anova":
        assert_allclose(crossed.to_numpy(), reference["crossed"], rtol=1e-9, atol=1e-14)
        assert (crossed < 0).sum() == 3  # kept negative, as psych keeps them
    else:
        assert_allclose(crossed.to_numpy(), reference["crossed"], rtol=1e-3, atol=1e-6)
    assert_allclose(nested.to_numpy(), reference["nested"], rtol=1e-3)


def test_internal_table_is_what_score_reliability_writes(written, tmp_path, capsys):
    alpha = tmp_path / "alpha.csv"
    code, _, stderr = run(
        capsys,
        "score",
        EXPORT,
        "--instrument",
        KEY,
        "--id-col",
        "pid",
        "--wave-col",
        "wave",
        "--out",
        tmp_path / "scores.csv",
        "--reliability",
        alpha,
    )
    assert code == 0, stderr
    pd.testing.assert_frame_equal(pd.read_csv(written / "internal.csv"), pd.read_csv(alpha))


def test_notes_and_warnings_are_printed(tmp_path, capsys):
    code, stdout, stderr = run(capsys, *command(EXPORT, tmp_path / "rel"))
    assert code == 0, stderr
    assert "note: mood3.energy: measured at one occasion ('pre')" in stderr
    assert "mood3.tension: 1 missing answer(s) left out" in stderr
    assert "warning: mood3.calm: negative ANOVA variance estimate(s): occasion" in stderr
    assert "calm" in stdout and "anova" in stdout and "reml" in stdout


def test_method_reml_is_applied_to_complete_scales(tmp_path, capsys):
    code, _, stderr = run(capsys, *command(EXPORT, tmp_path / "rel", "--method", "reml"))
    assert code == 0, stderr
    table = pd.read_csv(tmp_path / "rel" / "multilevel.csv")
    assert table["method"].tolist() == ["reml", "reml"]
    calm = table.set_index("scale").loc["calm"]
    anova = next(r for r in REFERENCE["results"] if r["scale"] == "calm")
    assert abs(calm["RkF"] - anova["RkF"]) > 1e-4  # REML bounds the negative components at 0


def _bad(tmp_path, row, column, value):
    data = pd.read_csv(EXPORT, dtype=str, keep_default_na=False)
    data.loc[row, column] = value
    path = tmp_path / "export.csv"
    data.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("row", "column", "value", "phrases"),
    [
        (3, "c2", "7", ["row 5", "column 'c2'", "outside the declared range 1-5", "(value 7)"]),
        (8, "t1", "n/a", ["row 10", "column 't1'", "text in a numeric item"]),
        (1, "pid", "A01", ["row 3", "column 'pid'", "duplicate id 'A01' at wave 'pre'"]),
    ],
)
def test_bad_input_is_refused_with_file_row_and_column(
    tmp_path, capsys, row, column, value, phrases
):
    out = tmp_path / "rel"
    code, stdout, stderr = run(capsys, *command(_bad(tmp_path, row, column, value), out))
    assert code == 2
    assert "export.csv" in stderr and "Traceback" not in stderr
    for phrase in phrases:
        assert phrase in stderr
    assert not out.exists() and stdout == ""


def test_unknown_instrument_and_missing_wave_column_are_refused(tmp_path, capsys):
    out = tmp_path / "rel"
    code, _, stderr = run(
        capsys,
        "reliability",
        EXPORT,
        "--instrument",
        "no_such_scale",
        "--id-col",
        "pid",
        "--wave-col",
        "wave",
        "--out",
        out,
    )
    assert code == 2 and "no_such_scale" in stderr
    code, _, stderr = run(
        capsys,
        "reliability",
        EXPORT,
        "--instrument",
        KEY,
        "--id-col",
        "pid",
        "--wave-col",
        "visit",
        "--out",
        out,
    )
    assert code == 2 and "visit" in stderr
    assert not out.exists()


def test_anova_is_refused_for_missing_answers(tmp_path, capsys):
    out = tmp_path / "rel"
    code, _, stderr = run(capsys, *command(EXPORT, out, "--method", "anova"))
    assert code == 2
    assert "ANOVA components need every person to answer every item" in stderr
    assert not out.exists()


def test_output_folder_rules(tmp_path, capsys):
    out = tmp_path / "rel"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    code, _, stderr = run(capsys, *command(EXPORT, out))
    assert code == 2 and "not empty" in stderr
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    code, _, stderr = run(capsys, *command(EXPORT, out, "--overwrite"))
    assert code == 2 and "was not written by `longitudinal reliability`" in stderr
    fresh = tmp_path / "fresh"
    assert run(capsys, *command(EXPORT, fresh))[0] == 0
    first = (fresh / "multilevel.csv").read_bytes()
    assert run(capsys, *command(EXPORT, fresh, "--overwrite"))[0] == 0
    assert (fresh / "multilevel.csv").read_bytes() == first
    before = EXPORT.read_bytes()
    code, _, stderr = run(capsys, *command(EXPORT, EXPORT))
    assert code == 2 and "never writes over its inputs" in stderr
    assert EXPORT.read_bytes() == before
