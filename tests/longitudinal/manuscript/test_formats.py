"""The --formats option of `longitudinal report` (checked before any work)."""

import contextlib
import io
from pathlib import Path

import pytest

from longitudinal._errors import InvalidParameterError
from longitudinal.cli import main
from longitudinal.report.options import check_options

SLIDER7 = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"
BASE = dict(seed=None, pseudonymize=True, retest=None, random_slope=True, ci_level=0.95,
            bayes=False, overwrite=False, func="build_report")  # fmt: skip


@pytest.mark.parametrize(
    ("given", "parsed"),
    [
        ("html", ("html",)),
        ("html,docx,latex", ("html", "docx", "latex")),
        ("latex, docx", ("html", "docx", "latex")),
        (["docx"], ("html", "docx")),
    ],
)
def test_formats_are_parsed_in_a_fixed_order_and_the_report_is_always_written(given, parsed):
    options = check_options(**BASE, formats=given)
    assert options.formats == parsed
    assert ("formats" in options.as_dict()) == (parsed != ("html",))


@pytest.mark.parametrize("given", ["pdf", "html,rtf", "", [1]])
def test_unknown_formats_are_refused(given):
    with pytest.raises(InvalidParameterError, match="`formats` parameter of build_report"):
        check_options(**BASE, formats=given)


def test_the_cli_refuses_an_unknown_format_with_exit_2_and_writes_nothing(tmp_path):
    out = tmp_path / "report"
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["report", str(SLIDER7), "--out", str(out), "--formats", "html,pdf"])
    assert code == 2
    assert "pdf" in err.getvalue() and "Traceback" not in err.getvalue()
    assert not out.exists() and list(tmp_path.iterdir()) == []
