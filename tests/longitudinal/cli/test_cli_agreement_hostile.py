"""`longitudinal agreement` on hostile files: invisible ids, extreme values, absurd counts.

Every refusal exits with code 2, names the option or the file, row, column and value, and
writes nothing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from longitudinal.cli import main

COLUMNS = ["--unit-col", "unit", "--rater-col", "rater", "--value-col", "value"]
KRIPPENDORFF = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _write(path, rows) -> None:
    lines = ["unit,rater,value", *(",".join(map(str, row)) for row in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _krippendorff(scale: float = 1.0) -> list[tuple]:
    return [
        (f"u{u + 1}", coder, "" if v is None else repr(float(v) * scale))
        for r, coder in enumerate("ABCD")
        for u, v in enumerate(KRIPPENDORFF[r])
    ]


def _run(path, out, *extra) -> int:
    return main(["agreement", str(path), *COLUMNS, *extra, "--out", str(out)])


@pytest.mark.parametrize(
    ("char", "name"),
    [
        ("\u200b", "U+200B ZERO WIDTH SPACE"),
        ("\u2028", "U+2028 LINE SEPARATOR"),
        ("\u2029", "U+2029 PARAGRAPH SEPARATOR"),
        ("\u202a", "U+202A LEFT-TO-RIGHT EMBEDDING"),
        ("\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("\u2069", "U+2069 POP DIRECTIONAL ISOLATE"),
    ],
)
def test_an_invisible_character_in_a_rater_id_is_refused(tmp_path, capsys, char, name):
    path = tmp_path / "labels.csv"
    rows = [("s1", "ann", "warm"), ("s1", "bob", "warm"), ("s2", "ann", "cold")]
    rows += [("s2", f"bob{char}", "cold"), ("s3", "ann", "warm"), ("s3", "bob", "cold")]
    _write(path, rows)
    before = path.read_bytes()
    out = tmp_path / "agreement.csv"
    assert _run(path, out, "--level", "nominal") == 2
    err = capsys.readouterr().err
    assert (
        f"labels.csv, row 5, column 'rater': the rater id holds an invisible character ({name})"
        in err
    )
    assert f"(value 'bob\\u{ord(char):04x}')" in err
    assert "Traceback" not in err and not out.exists() and path.read_bytes() == before


def test_unit_ids_and_labels_are_checked_too(tmp_path, capsys):
    path = tmp_path / "labels.csv"
    rows = [("s1", "ann", "warm"), ("s1", "bob", "warm"), ("s2\u2028", "ann", "cold")]
    rows += [("s2", "bob", "cold\u202e"), ("s3", "ann", "warm"), ("s3", "bob", "cold")]
    _write(path, rows)
    out = tmp_path / "agreement.csv"
    assert _run(path, out, "--level", "nominal") == 2
    err = capsys.readouterr().err
    assert "row 4, column 'unit': the unit id holds an invisible character (U+2028" in err
    assert "row 5, column 'value': the value holds an invisible character (U+202E" in err


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_extreme_values_give_the_published_interval_alpha(tmp_path, capsys, scale):
    path = tmp_path / "ratings.csv"
    _write(path, _krippendorff(scale))
    out = tmp_path / "agreement.csv"
    assert _run(path, out, "--level", "interval", "--n-boot", "0") == 0
    table = pd.read_csv(out).set_index("term")
    plain_path = tmp_path / "plain.csv"
    _write(plain_path, _krippendorff())
    plain_out = tmp_path / "plain-agreement.csv"
    assert _run(plain_path, plain_out, "--level", "interval", "--n-boot", "0") == 0
    plain = pd.read_csv(plain_out).set_index("term")
    alpha = table.loc["krippendorff_alpha", "estimate"]
    assert alpha == pytest.approx(0.849, abs=5e-4)
    assert alpha == pytest.approx(plain.loc["krippendorff_alpha", "estimate"], abs=1e-10)
    assert "every rating has the same value" not in capsys.readouterr().err


def test_n_boot_has_a_ceiling_checked_before_the_file_is_read(tmp_path, capsys):
    out = tmp_path / "agreement.csv"
    code = _run(tmp_path / "absent.csv", out, "--level", "nominal", "--n-boot", "100001")
    assert code == 2
    err = capsys.readouterr().err
    assert "--n-boot must be a whole number from 0 to 100,000; got 100001" in err
    assert "absent.csv" not in err


def test_work_over_ten_minutes_is_refused_with_the_n_boot_that_fits(tmp_path, capsys):
    rng = np.random.default_rng(4)
    values = rng.uniform(1.0, 2.0, size=60_000)
    rows = [(f"u{k // 2}", f"r{k % 2}", repr(float(v))) for k, v in enumerate(values)]
    path = tmp_path / "ratios.csv"
    _write(path, rows)
    out = tmp_path / "agreement.csv"
    assert _run(path, out, "--level", "ratio") == 2
    err = capsys.readouterr().err
    assert "2,000 bootstrap resamples (--n-boot) is estimated to take about" in err
    assert "(command line: --n-boot 160)" in err and not out.exists()


def test_help_states_the_limits(capsys):
    assert main(["agreement", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "at most 100,000" in text
    assert "at most 10,000,000 within-unit pairs of distinct values" in text
    assert "estimated at more than 10 min" in text
