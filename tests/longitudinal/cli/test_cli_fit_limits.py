"""`longitudinal fit`: counts and formulas that ended in a MemoryError or a native abort are
refused with exit code 2 and one message in the options' words, nothing written."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from longitudinal.cli import main


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"id": np.repeat(np.arange(20), 10), "x": rng.normal(size=200)})
    frame["y"] = frame["x"] + rng.normal(size=200) + np.repeat(rng.normal(size=20), 10)
    frame["rating"] = np.clip(np.round(frame["y"] + 3), 1, 5).astype(int)
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path


def _fit(data, out, *extra) -> int:
    return main(["fit", str(data), *extra, "--out", str(out)])


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--engine", "clmm", "--formula", "rating ~ x + (1 | id)", "--n-agq", "1000000000000"],
            "--n-agq must be a whole number from 1 to 100; got 1000000000000",
        ),
        (
            ["--engine", "bayes", "--family", "gaussian", "--formula", "y ~ x + (1 | id)",
             "--draws", "1000000000000"],
            "--draws must be a whole number from 1 to 1,000,000; got 1000000000000",
        ),
        (
            ["--engine", "bayes", "--formula", "rating ~ x + (1 | id)", "--draws", "many"],
            "--draws: expected a whole number or 'auto'; got 'many'",
        ),
        (
            ["--engine", "bayes", "--formula", "rating ~ x + (1 | id)", "--draws", "auto",
             "--sampler", "pymc"],
            "--draws 'auto' (sample until the draws suffice) needs the nutpie sampler (--sampler",
        ),
        (
            ["--engine", "bayes", "--formula", "rating ~ x + (1 | id)", "--chains", "100000"],
            "--chains must be a whole number from 1 to 64",
        ),
        (
            ["--engine", "bayes", "--formula", "rating ~ x + (1 | id)", "--tune", "10000000"],
            "--tune must be a whole number from 0 to 1,000,000",
        ),
        (
            ["--formula", "y ~ x + " + " + ".join(["(1 | id)"] * 2000)],
            "the random-effects term (1 | id) repeats a term of",
        ),
        (
            ["--engine", "clmm", "--formula", "rating ~ x + (1 | id) + (1 + 1 | id)"],
            "(1 + 1 | id) repeats a term of",
        ),
    ],
)  # fmt: skip
def test_fit_refuses_with_exit_2(data, tmp_path, capsys, extra, message):
    out = tmp_path / "fit.json"
    before = data.read_bytes()
    assert _fit(data, out, *extra) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists() and data.read_bytes() == before


def test_draws_beyond_memory_are_refused_in_the_options_words(data, tmp_path, capsys):
    pytest.importorskip("pymc")
    out = tmp_path / "fit.json"
    extra = ["--engine", "bayes", "--family", "gaussian", "--formula", "y ~ x + (1 | id)"]
    assert _fit(data, out, *extra, "--draws", "1000000", "--chains", "64") == 2
    err = capsys.readouterr().err
    assert "longitudinal fit: 1,000,000 draws (--draws) x 64 chains (--chains)" in err
    assert "more than the 8 GB this refuses before sampling" in err
    assert "(command line: --draws " in err and not out.exists()


def test_help_states_the_limits(capsys):
    assert main(["fit", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--n-agq at most 100" in text and "--chains at most 64" in text
    assert "estimated over 8 GB" in text and "more than 24 h of sampling" in text
    assert "may not repeat a random-effects term" in text
