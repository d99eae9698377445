"""Tests of longitudinal/study_config.py: study.toml read and checked as data.

The rules that need the other files of a study (a trait measured at the first wave, a
custom instrument file, a study's own column names) are tested through the loader in
test_study.py.
"""

from pathlib import Path

import pytest

from longitudinal.study_config import read_study_config
from surveys._errors import InputValidationError

STUDIES = Path(__file__).parents[1] / "data" / "studies"


def test_config_defaults():
    cfg = read_study_config(STUDIES / "tiny")
    assert cfg.waves == ("pre", "mid", "post")
    assert cfg.id_col == "participant_id"
    assert (cfg.ratings.scale_min, cfg.ratings.scale_max, cfg.rating_col) == (1.0, 5.0, "empathy")
    assert cfg.sessions_file == "sessions.csv"
    assert cfg.surveys[0].id_col == "participant_id"  # inherited from [study]
    assert (cfg.min_valid, cfg.prorate) == (0.8, False)
    assert cfg.traits == ("tas4",) and cfg.states == ("who5",)


def test_bad_config_reports_every_problem_at_once():
    with pytest.raises(InputValidationError) as info:
        read_study_config(STUDIES / "bad_config")
    cases = info.value.failure_cases
    assert set(cases["file"]) == {"study.toml"}
    assert set(cases["column"]) == {
        "study.colour",  # unknown key
        "ratings.scale_max",  # not a number
        "surveys[1].format",  # not a known format
        "surveys[2].wave",  # wave not declared
        "surveys[2].date_col",  # missing
        "roles.states",  # cls9_humanity is in no survey
    }
    assert cases.loc[cases["column"] == "roles.states", "value"].tolist() == ["cls9_humanity"]


def test_config_toml_syntax_error(tmp_path):
    (tmp_path / "study.toml").write_text("[study\nname = 1\n")
    with pytest.raises(InputValidationError, match="not valid TOML"):
        read_study_config(tmp_path)
