"""Tests of longitudinal/psychometrics/agreement.py: agreement between raters from a CSV file.

The same file problems as ``longitudinal agreement`` refuses (tests/longitudinal/
test_cli_agreement*.py), raised as the package's errors with file, row, column and value, in
the Python words of :func:`longitudinal.agreement_from_file`.
"""

from __future__ import annotations

import pytest

from longitudinal import InvalidParameterError, agreement_from_file
from surveys import InputValidationError

KRIPPENDORFF = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
COLUMNS = {"unit_col": "story", "rater_col": "coder", "value_col": "score"}


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


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815)])
def test_the_published_alphas_from_a_file(ratings, level, published):
    result = agreement_from_file(ratings, **COLUMNS, level=level, n_boot=0)
    alpha = result.coefficients.set_index("term").loc["krippendorff_alpha"]
    assert alpha["estimate"] == pytest.approx(published, abs=5e-4)
    assert (alpha["n_units"], alpha["n_raters"], alpha["n_pairable"]) == (11, 4, 40)
    # the blank cells are counted and left out, as the command says
    assert result.left_out["n_rows"].sum() == 8


def test_text_levels_equal_the_numbers_they_stand_for(tmp_path):
    coded, named = tmp_path / "coded.csv", tmp_path / "named.csv"
    rows = [("s1", "A", 1), ("s1", "B", 1), ("s2", "A", 2), ("s2", "B", 3), ("s3", "A", 3)]
    rows += [("s3", "B", 3), ("s4", "A", 1), ("s4", "B", 2)]
    words = {1: "low", 2: "mid", 3: "high"}
    coded.write_text("u,r,v\n" + "".join(f"{u},{r},{v}\n" for u, r, v in rows))
    named.write_text("u,r,v\n" + "".join(f"{u},{r},{words[v]}\n" for u, r, v in rows))
    columns = {"unit_col": "u", "rater_col": "r", "value_col": "v", "n_boot": 0}
    by_number = agreement_from_file(coded, **columns, level="ordinal")
    by_word = agreement_from_file(named, **columns, level="ordinal", levels=["low", "mid", "high"])
    assert by_word.coefficients["estimate"].tolist() == pytest.approx(
        by_number.coefficients["estimate"].tolist(), abs=1e-12
    )


def test_every_bad_row_in_one_error_with_file_row_column_and_value(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(
        "story,coder,score\ns1,A,1\ns1,A,2\ns1,B,high\ns2,A,3\n,B,2\ns2,C,-1\n", encoding="utf-8"
    )
    with pytest.raises(InputValidationError) as caught:
        agreement_from_file(path, **COLUMNS, level="ratio")
    cases = caught.value.failure_cases
    assert len(cases) == 5 and set(cases["file"]) == {str(path)}
    by_row = cases.set_index("row")
    assert by_row.loc[4, "column"] == "score" and "got text" in by_row.loc[4, "reason"]
    assert by_row.loc[6, "column"] == "story" and by_row.loc[6, "reason"] == "no unit id"
    # the value as the file writes it
    assert by_row.loc[7, "value"] == "-1" and "must be 0 or more" in by_row.loc[7, "reason"]


def test_a_missing_column_is_named_by_its_parameter(ratings):
    with pytest.raises(InputValidationError) as caught:
        agreement_from_file(ratings, **{**COLUMNS, "unit_col": "unit"}, level="nominal")
    (case,) = caught.value.failure_cases.to_dict("records")
    assert case["file"] == str(ratings) and case["column"] == "unit"
    assert case["reason"].startswith(
        "the `unit_col` parameter of agreement_from_file names a column the file does not have"
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"level": "interval", "levels": ["1", "2"]},
            r"the `levels` parameter of agreement_from_file applies to level='nominal' or "
            r"ordinal; level='interval' values are numbers",
        ),
        ({"level": "nominal", "levels": ["1", "1"]}, "lists a value twice: 1 1"),
        ({"level": "nominal", "levels": [1, 2]}, "`levels` parameter .* as written in the file"),
        ({"level": "ordinal", "n_boot": 10**12}, "`n_boot` parameter .* from 0 to 100,000"),
        ({"level": "nominal", "seed": -1}, "`seed` parameter .* non-negative"),
        ({"level": "nominal", "ci_level": 95}, "`ci_level` parameter .* between 0 and 1"),
        ({"level": "likert"}, "`level` parameter .* nominal, ordinal, interval, ratio"),
        ({"level": "nominal", "value_col": "coder"}, "must name three different columns"),
    ],
)
def test_bad_options(ratings, options, message):
    with pytest.raises(InvalidParameterError, match=message):
        agreement_from_file(ratings, **{**COLUMNS, **options})


def test_options_are_checked_before_the_file_is_read(tmp_path):
    with pytest.raises(InvalidParameterError, match="`n_boot` parameter"):
        agreement_from_file(tmp_path / "absent.csv", **COLUMNS, level="nominal", n_boot=-1)
    with pytest.raises(FileNotFoundError):
        agreement_from_file(tmp_path / "absent.csv", **COLUMNS, level="nominal")


def test_a_file_without_rows_is_refused(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("story,coder,score\n", encoding="utf-8")
    with pytest.raises(InvalidParameterError, match="has no data rows"):
        agreement_from_file(path, **COLUMNS, level="nominal")
