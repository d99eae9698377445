"""`longitudinal agreement`: the CSV it writes, its determinism, and the input it refuses.

The published values are those of tests/models/test_agreement.py (Krippendorff 2011: his
4 coders x 12 units give alpha nominal .743, ordinal .815, interval .849, ratio .797).
"""

from __future__ import annotations

import pandas as pd
import pytest

from longitudinal.cli import main

KRIPPENDORFF = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
COLUMNS = ["--unit-col", "story", "--rater-col", "coder", "--value-col", "score"]


@pytest.fixture
def ratings(tmp_path):
    """Krippendorff's data in long form, a blank cell for each missing value."""
    lines = ["story,coder,score"]
    for r, coder in enumerate("ABCD"):
        for u in range(12):
            value = KRIPPENDORFF[r][u]
            lines.append(f"s{u + 1},{coder},{'' if value is None else value}")
    path = tmp_path / "ratings.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_writes_the_published_alphas(ratings, tmp_path, capsys, level, published):
    out = tmp_path / "agreement.csv"
    code = main(["agreement", str(ratings), *COLUMNS, "--level", level, "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    table = pd.read_csv(out)
    assert list(table.columns) == [
        "term", "level", "estimate", "se", "ci_low", "ci_high",
        "n_units", "n_raters", "n_pairable", "note",
    ]  # fmt: skip
    ac = "gwet_ac1" if level == "nominal" else "gwet_ac2"
    assert table["term"].tolist() == ["krippendorff_alpha", "fleiss_kappa", ac, "percent_agreement"]
    alpha = table.iloc[0]
    assert alpha["estimate"] == pytest.approx(published, abs=5e-4)
    assert alpha["ci_low"] < alpha["estimate"] < alpha["ci_high"]
    assert (alpha["n_units"], alpha["n_raters"], alpha["n_pairable"]) == (11, 4, 40)
    # the blank cells and the unit with one rating are counted and said
    assert "left out 7 row(s): no value" in captured.err
    assert "left out 1 row(s), 1 unit(s): the unit has fewer than two ratings" in captured.err
    assert "1 unit(s) with one rating left out" in alpha["note"]


def test_same_seed_same_bytes_other_seed_other_interval(ratings, tmp_path):
    outs = [tmp_path / f"a{i}.csv" for i in range(3)]
    for out, seed in zip(outs, ["4", "4", "5"], strict=True):
        args = ["agreement", str(ratings), *COLUMNS, "--level", "ordinal", "--n-boot", "300"]
        assert main([*args, "--seed", seed, "--out", str(out)]) == 0
    assert outs[0].read_bytes() == outs[1].read_bytes()
    assert outs[0].read_bytes() != outs[2].read_bytes()


def test_text_levels_in_their_order(tmp_path):
    """Ordinal text with --levels equals the same ratings coded 1-3."""
    words = {1: "low", 2: "mid", 3: "high"}
    rows = [(u, r, (u + r) % 3 + 1 if r < 2 else (u % 3) + 1) for u in range(12) for r in range(3)]
    coded = tmp_path / "coded.csv"
    named = tmp_path / "named.csv"
    pd.DataFrame(rows, columns=["story", "coder", "score"]).to_csv(coded, index=False)
    frame = pd.DataFrame(rows, columns=["story", "coder", "score"])
    frame.assign(score=frame["score"].map(words)).to_csv(named, index=False)
    outs = []
    for path, extra in ((coded, []), (named, ["--levels", "low", "mid", "high"])):
        out = tmp_path / f"out_{path.stem}.csv"
        assert main(["agreement", str(path), *COLUMNS, "--level", "ordinal", *extra,
                     "--out", str(out)]) == 0  # fmt: skip
        outs.append(pd.read_csv(out))
    pd.testing.assert_frame_equal(outs[0].drop(columns="note"), outs[1].drop(columns="note"))


def test_bad_rows_refused_with_file_rows_and_nothing_written(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text(
        "story,coder,score\ns1,A,1\ns1,A,2\ns1,B,high\ns2,A,3\n,B,2\ns2,C,-1\n", encoding="utf-8"
    )
    out = tmp_path / "agreement.csv"
    code = main(["agreement", str(path), *COLUMNS, "--level", "ratio", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "Traceback" not in err and "(5 problems)" in err
    assert f"{path}, row 2, column 'coder': rater A rated unit s1 more than once" in err
    assert f"{path}, row 3, column 'coder'" in err
    assert f"{path}, row 4, column 'score': a ratio value must be a finite number; got text" in err
    assert f"{path}, row 6, column 'story': no unit id" in err
    # the value as the file writes it
    assert f"{path}, row 7, column 'score': a ratio value must be 0 or more" in err
    assert "(value '-1')" in err


def test_value_outside_declared_levels(ratings, tmp_path, capsys):
    out = tmp_path / "agreement.csv"
    args = ["agreement", str(ratings), *COLUMNS, "--level", "nominal", "--levels", "1", "2", "3"]
    assert main([*args, "--out", str(out)]) == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "not one of the declared levels (1, 2, 3) (value '4')" in err
    # coder A, unit 7 is data row 7 (line 8); coder B, unit 7 is line 8 + 12
    assert "row 8, column 'score'" in err and "row 20, column 'score'" in err
    assert "(8 problems)" in err  # five 4s and three 5s


def test_text_in_an_interval_column(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("story,coder,score\ns1,A,2.5\ns1,B,n/a\n", encoding="utf-8")
    out = tmp_path / "agreement.csv"
    args = ["agreement", str(path), *COLUMNS, "--level", "interval", "--out", str(out)]
    assert main(args) == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "row 3, column 'score': an interval value must be a finite number; got text" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--level", "interval", "--levels", "1", "2"], "--levels applies to --level nominal"),
        (["--level", "nominal", "--levels", "1", "1"], "--levels lists a value twice"),
        (["--level", "nominal", "--n-boot", "-1"], "--n-boot must be a whole number from 0"),
        (
            ["--level", "nominal", "--n-boot", "1000000000000"],
            "--n-boot must be a whole number from 0 to 100,000; got 1000000000000",
        ),
        (["--level", "nominal", "--ci-level", "95"], "--ci-level must lie between 0 and 1"),
    ],
)
def test_bad_options(ratings, tmp_path, capsys, extra, message):
    out = tmp_path / "agreement.csv"
    assert main(["agreement", str(ratings), *COLUMNS, *extra, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err and not out.exists()


def test_missing_column_and_output_over_input(ratings, tmp_path, capsys):
    out = tmp_path / "agreement.csv"
    args = ["agreement", str(ratings), "--unit-col", "unit", "--rater-col", "coder"]
    assert main([*args, "--value-col", "score", "--level", "nominal", "--out", str(out)]) == 2
    assert "--unit-col names a column the file does not have" in capsys.readouterr().err
    before = ratings.read_bytes()
    args = ["agreement", str(ratings), *COLUMNS, "--level", "nominal", "--out", str(ratings)]
    assert main(args) == 2
    assert "never writes over its inputs" in capsys.readouterr().err
    assert ratings.read_bytes() == before


def test_formula_like_labels_are_labels_and_raw_csv_is_accepted(tmp_path):
    """A nominal label such as =1+1 is a category like any other; --raw-csv after the command."""
    path = tmp_path / "r.csv"
    path.write_text("story,coder,score\ns1,A,=1+1\ns1,B,=1+1\ns2,A,b\ns2,B,=1+1\n")
    out = tmp_path / "raw.csv"
    base = ["agreement", str(path), *COLUMNS, "--level", "nominal", "--n-boot", "0"]
    assert main([*base, "--raw-csv", "--out", str(out)]) == 0
    table = pd.read_csv(out).set_index("term")
    # s1 agrees, s2 does not: half the pairs agree
    assert table.loc["percent_agreement", "estimate"] == pytest.approx(0.5)
    assert table.loc["krippendorff_alpha", "n_pairable"] == 4
