"""`longitudinal power` (and `evaluate`'s --scheduler): every count has a ceiling, stated in
--help and refused with exit code 2 before any simulation, nothing written."""

from __future__ import annotations

import pytest

from longitudinal.cli import main

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


@pytest.fixture
def design(tmp_path):
    path = tmp_path / "design.toml"
    path.write_text(DESIGN, encoding="utf-8")
    return path


def _power(design, out, *extra) -> list[str]:
    base = ["power", "--design", str(design), "--effect", "condition=0.5", "--out", str(out)]
    if "--participants" not in extra:
        base += ["--participants", "10"]
    return [*base, *extra]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--sims", "1000000000000"], "--sims must be a whole number from 1 to 100,000"),
        (
            ["--participants", "2,1000000000000"],
            "argument --participants: expected distinct whole numbers from 2 to 100,000",
        ),
        (
            ["--participants", ",".join(str(n) for n in range(2, 2002))],
            "argument --participants: at most 100 participant counts (grid points); got 2,000",
        ),
        (["--sessions", "1000000000000"], "argument --sessions: expected a count from 1 to 1,000"),
        (["--sessions", "2-5000"], "argument --sessions: expected a count from 1 to 1,000"),
        (
            ["--participants", "100000", "--sessions", "20"],
            "a simulated study of 100,000 participants and 20 sessions each would have up to "
            "2,000,000 rows, more than the 1,000,000",
        ),
        (
            ["--participants", "50000", "--sims", "100000"],
            "100,000 simulations (--sims) would simulate and refit up to 10,200,000,000 rows",
        ),
        (
            ["--scheduler", "tcp://[::1:9"],
            "argument --scheduler: expected processes:N (N local processes), local:N",
        ),
        (["--scheduler", "tcp://[::1:9"], "(the IPv6 address has no closing ']')"),
        (["--scheduler", "tcp://host:99999"], "the port '99999' is not a number from 1 to 65535"),
        (["--scheduler", "processes:100000"], "N must be a whole number from 1 to"),
    ],
)
def test_power_refuses_before_any_simulation(design, tmp_path, capsys, extra, message):
    out = tmp_path / "power"
    before = design.read_bytes()
    assert main(_power(design, out, *extra)) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err and "MemoryError" not in err
    assert not out.exists() and design.read_bytes() == before


@pytest.mark.parametrize(
    "text", ["processes:2", "local:1", "tcp://127.0.0.1:8786", "tcp://[::1]:8786", "tcp://h:1"]
)
def test_well_formed_schedulers_pass_the_option_unchanged(text):
    from longitudinal.cli._common import _scheduler_option

    assert _scheduler_option(text) == text


def test_evaluate_checks_its_scheduler_before_reading_the_study(tmp_path, capsys):
    out = tmp_path / "evaluate"
    args = ["evaluate", str(tmp_path / "absent-study"), "--out", str(out)]
    assert main([*args, "--scheduler", "tcp://[::1:9"]) == 2
    err = capsys.readouterr().err
    assert "argument --scheduler: expected processes:N" in err and "tcp://host:port" in err
    assert "absent-study" not in err and "Traceback" not in err and not out.exists()


def test_help_states_every_ceiling(capsys):
    assert main(["power", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for fragment in (
        "--sims at most 100,000",
        "--participants at most 100 values, each at most 100,000",
        "--sessions at most 1,000",
        "a simulated study at most 1,000,000 rows",
        "at most 2,000,000,000 rows simulated and refitted in all",
        "N is at most 4 per CPU",
    ):
        assert fragment in text, fragment
