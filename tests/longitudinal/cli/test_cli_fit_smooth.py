"""`longitudinal fit --engine lmm` with smooth terms: the record's smooths and the printed table.

Values from gamm4 0.2-6 (tests/models/reference/gamm4_smooth.R, case two_airquality: a thin
plate and a cubic regression spline on R's airquality, months as groups), to the tolerances
of tests/models/lmm/test_smooth.py; the test of each smooth against its straight line from
tests/models/reference/gamm4_linearity.R (RLRsim 3.1-8), to the tolerances of
tests/models/lmm/test_smooth_linearity.py.
"""

import json
import re
from pathlib import Path

import pytest

from longitudinal.cli import main

ROOT = Path(__file__).resolve().parents[3]
REF = json.loads((ROOT / "tests/models/reference/gamm4_smooth.json").read_text())
CASE = next(c for c in REF["cases"] if c["name"] == "two_airquality")
LINEAR = json.loads((ROOT / "tests/models/reference/gamm4_linearity.json").read_text())
CURVE = next(c for c in LINEAR["cases"] if c["name"] == "two_airquality")["tests"]


def test_fit_with_two_smooths_records_and_prints_gams_table(tmp_path, capsys):
    out = tmp_path / "fit.json"
    args = ["fit", str(ROOT / "tests/data" / CASE["data"]), "--formula", CASE["formula"]]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    fit = json.loads(out.read_text())
    assert fit["engine"] == "lmm" and fit["n_obs"] == CASE["n"]
    assert fit["reml_criterion"] == pytest.approx(CASE["reml_criterion"], rel=1e-6)
    assert list(fit)[-1] == "smooths"
    table = CASE["s_table"]
    assert [row["term"] for row in fit["smooths"]] == table["term"] == ["s(Temp)", "s(Wind)"]
    for i, row in enumerate(fit["smooths"]):
        assert list(row) == [
            "term",
            "edf",
            "ref_df",
            "F",
            "p_value",
            "linearity_statistic",
            "linearity_p_value",
        ]
        assert row["linearity_statistic"] == pytest.approx(CURVE[i]["statistic"], rel=1e-8)
        p_ref = max(CURVE[i]["p_value_big"], 1e-4)
        assert abs(row["linearity_p_value"] - p_ref) <= 4 * (p_ref * (1 - p_ref) * 1.1e-4) ** 0.5
        assert row["edf"] == pytest.approx(table["edf"][i], rel=1e-3)
        assert row["ref_df"] == pytest.approx(table["ref_df"][i], rel=1e-3)
        assert row["F"] == pytest.approx(table["F"][i], rel=1e-3)
        assert row["p_value"] == pytest.approx(table["p_value"][i], abs=2e-5)
    assert [row["term"] for row in fit["fixed"]] == ["Intercept"]
    assert fit["fixed"][0]["estimate"] == pytest.approx(CASE["p_table"]["estimate"][0], rel=1e-4)
    smooth_rows = [r for r in fit["random"] if r["group"] == "smooth"]
    assert [r["term"] for r in smooth_rows] == ["s(Temp)", "s(Wind)"]
    # summary(gam)'s layout: a header line, then one line per smooth named by its label
    lines = printed.splitlines()
    at = lines.index("Approximate significance of smooth terms:")
    assert lines[at + 1].split() == ["edf", "Ref.df", "F", "p-value"]
    for i, term in enumerate(table["term"]):
        cells = lines[at + 2 + i].split()
        assert cells[0] == term
        assert float(cells[1]) == pytest.approx(table["edf"][i], abs=1e-4)
        assert float(cells[3]) == pytest.approx(table["F"][i], abs=1e-3 * table["F"][i])
        assert re.fullmatch(r"<2e-16|[0-9.e-]+", cells[4])
    at = next(j for j, line in enumerate(lines) if line.startswith("Curved or straight"))
    assert lines[at - 1] == ""
    assert lines[at + 2].split() == ["RLRT", "p-value"]
    for i, term in enumerate(table["term"]):
        cells = lines[at + 3 + i].split()
        assert cells[0] == term
        assert float(cells[1]) == pytest.approx(CURVE[i]["statistic"], abs=1e-4)


def test_fit_without_smooths_writes_no_smooths_key(tmp_path):
    out = tmp_path / "fit.json"
    args = ["fit", str(ROOT / "tests/data/lme4_sleepstudy.csv"), "--formula"]
    assert main([*args, "Reaction ~ Days + (1 | Subject)", "--out", str(out)]) == 0
    assert "smooths" not in json.loads(out.read_text())


def test_fit_with_a_bad_smooth_exits_2(tmp_path, capsys):
    out = tmp_path / "fit.json"
    args = ["fit", str(ROOT / "tests/data/lme4_sleepstudy.csv"), "--formula"]
    code = main([*args, 'Reaction ~ s(Days, bs="ps") + (1 | Subject)', "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and 'bs="tp"' in err and "Traceback" not in err
    assert not out.exists()


def test_fit_with_a_factor_smooth_records_its_row(tmp_path, capsys):
    # gamm4 0.2-6 on the simulated study of tests/models/reference/gamm4_fs.R, to the
    # tolerances of tests/models/lmm/test_smooth_fs.py
    ref = json.loads((ROOT / "tests/models/reference/gamm4_fs.json").read_text())
    case = next(c for c in ref["cases"] if c["name"] == "fs_simulated")
    out = tmp_path / "fit.json"
    args = ["fit", str(ROOT / "tests/data" / case["data"]), "--formula", case["formula"]]
    assert main([*args, "--engine", "lmm", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    fit = json.loads(out.read_text())
    assert fit["reml_criterion"] == pytest.approx(case["reml_criterion"], rel=1e-6)
    table = case["s_table"]
    assert [row["term"] for row in fit["smooths"]] == table["term"] == ["s(time)", "s(time,id)"]
    for i, row in enumerate(fit["smooths"]):
        assert row["edf"] == pytest.approx(table["edf"][i], rel=1e-3)
        assert row["ref_df"] == pytest.approx(table["ref_df"][i], rel=1e-3)
        assert row["F"] == pytest.approx(table["F"][i], rel=1e-3)
        assert row["p_value"] == pytest.approx(table["p_value"][i], abs=2e-5)
    # the factor smooth is not tested against a straight line; the population smooth is
    assert fit["smooths"][1]["linearity_statistic"] is None
    assert fit["smooths"][1]["linearity_p_value"] is None
    assert fit["smooths"][0]["linearity_statistic"] is not None
    smooth_rows = [r for r in fit["random"] if r["group"] == "smooth"]
    assert [r["term"] for r in smooth_rows] == ["s(time)"] + [f"s(time,id){i}" for i in (1, 2, 3)]
    variances = [case["fs"]["variance_wiggly"], *case["fs"]["variance_null"]]
    for r, v in zip(smooth_rows[1:], variances, strict=True):
        assert r["sd"] == pytest.approx(v**0.5, rel=1e-4)
    lines = printed.splitlines()
    at = lines.index("Approximate significance of smooth terms:")
    assert lines[at + 3].split()[0] == "s(time,id)"
