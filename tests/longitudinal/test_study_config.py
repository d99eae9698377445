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


# -- the study's own declarations: threshold, chosen predictors, custom instruments by name -----

DECLARED = STUDIES / "declared" / "slider7"


def _copy_declared(tmp_path, edit=None):
    import shutil

    root = tmp_path / "slider7"
    shutil.copytree(DECLARED, root)
    if edit is not None:
        toml = root / "study.toml"
        toml.write_text(edit(toml.read_text(encoding="utf-8")), encoding="utf-8")
    return root


def test_custom_instrument_is_named_by_its_instrument_name():
    cfg = read_study_config(DECLARED)
    # [roles] says "closeness"; the surveys list the key file's path
    assert cfg.states == ("who5", "instruments/closeness.toml")
    assert dict(cfg.instrument_aliases) == {"closeness": "instruments/closeness.toml"}
    assert (cfg.ratings.scale_min, cfg.ratings.scale_max) == (1.0, 7.0)
    assert cfg.ratings.threshold is None and cfg.ratings.cut == 4.0
    assert cfg.ratings.label == "1–7"
    assert cfg.predictors is None


def test_an_unknown_role_name_is_still_refused(tmp_path):
    root = _copy_declared(tmp_path, lambda t: t.replace('"closeness"]', '"closenes"]'))
    with pytest.raises(InputValidationError) as info:
        read_study_config(root)
    cases = info.value.failure_cases
    assert cases["column"].tolist() == ["roles.states"]
    assert cases["value"].tolist() == ["closenes"]
    assert "[instrument] name" in cases["reason"].iloc[0]


def test_threshold_and_predictors_are_read_and_checked(tmp_path):
    root = _copy_declared(
        tmp_path,
        lambda t: t.replace("scale_max = 7", "scale_max = 7\nthreshold = 5").replace(
            "[columns]", 'predictors = ["tipi_agreeableness", "turns"]\n\n[columns]'
        ),
    )
    cfg = read_study_config(root)
    assert cfg.ratings.threshold == 5.0 and cfg.ratings.cut == 5.0
    assert cfg.predictors == ("tipi_agreeableness", "turns")
    bad = _copy_declared(
        tmp_path / "bad",
        lambda t: t.replace("scale_max = 7", "scale_max = 7\nthreshold = 7").replace(
            "[columns]", 'predictors = ["turns", "turns"]\n\n[columns]'
        ),
    )
    with pytest.raises(InputValidationError) as info:
        read_study_config(bad)
    cases = info.value.failure_cases
    assert set(cases["column"]) == {"ratings.threshold", "roles.predictors"}


def test_old_column_keys_are_read_with_a_deprecation_note(tmp_path):
    from longitudinal.study_config import StudyTomlDeprecationWarning

    old = _copy_declared(
        tmp_path,
        lambda t: (
            t.replace('waves = ["baseline"', 'id_col = "pid"\nwaves = ["baseline"')
            .replace("scale_max = 7", 'scale_max = 7\ncolumn = "score"')
            .replace('person = "pid"\n', "")
            .replace('rating = "score"\n', "")
        ),
    )
    with pytest.warns(StudyTomlDeprecationWarning) as caught:
        cfg = read_study_config(old)
    messages = [str(w.message) for w in caught]
    assert any("study.id_col is deprecated" in m and 'person = "pid"' in m for m in messages)
    assert any("ratings.column is deprecated" in m and 'rating = "score"' in m for m in messages)
    assert (cfg.id_col, cfg.rating_col) == ("pid", "score")
    new = read_study_config(DECLARED)
    assert (new.id_col, new.rating_col) == (cfg.id_col, cfg.rating_col)
