"""Tests of longitudinal/study/config.py: study.toml read and checked as data.

The rules that need the other files of a study (a trait measured at the first wave, a
custom instrument file, a study's own column names) are tested through the loader in
test_study.py.
"""

from pathlib import Path

import pytest

from longitudinal.study.config import read_study_config
from surveys._errors import InputValidationError

STUDIES = Path(__file__).parents[2] / "data" / "studies"


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


def test_old_column_keys_are_refused_naming_where_the_column_goes(tmp_path):
    old = _copy_declared(
        tmp_path,
        lambda t: (
            t.replace('waves = ["baseline"', 'id_col = "pid"\nwaves = ["baseline"')
            .replace("scale_max = 7", 'scale_max = 7\ncolumn = "score"')
            .replace('person = "pid"\n', "")
            .replace('rating = "score"\n', "")
        ),
    )
    with pytest.raises(InputValidationError) as info:
        read_study_config(old)
    cases = info.value.failure_cases.set_index("column")
    assert set(cases.index) == {"study.id_col", "ratings.column"}
    assert set(cases["file"]) == {"study.toml"}
    assert 'under [columns] as person = "pid"' in cases.loc["study.id_col", "reason"]
    assert 'under [columns] as rating = "score"' in cases.loc["ratings.column", "reason"]


# -- values a number or a document cannot carry: refused when study.toml is read -------------


def _tiny_config(tmp_path, old, new):
    text = (STUDIES / "tiny" / "study.toml").read_text(encoding="utf-8")
    assert old in text
    (tmp_path / "study.toml").write_text(text.replace(old, new, 1), encoding="utf-8")
    return tmp_path


def _failure(root, column):
    with pytest.raises(InputValidationError) as info:
        read_study_config(root)
    cases = info.value.failure_cases
    hit = cases[cases["column"] == column]
    assert len(hit) == 1, cases
    return hit.iloc[0]


@pytest.mark.parametrize(
    ("old", "new", "column", "value"),
    [
        ("scale_max = 5", "scale_max = inf", "ratings.scale_max", "inf"),
        ("scale_max = 5", "scale_max = nan", "ratings.scale_max", "nan"),
        ("scale_min = 1", "scale_min = -inf", "ratings.scale_min", "-inf"),
        ("scale_max = 5", "scale_max = 5\nthreshold = inf", "ratings.threshold", "inf"),
    ],
)
def test_scale_ends_and_threshold_must_be_finite(tmp_path, old, new, column, value):
    rec = _failure(_tiny_config(tmp_path, old, new), column)
    assert "must be a finite number" in rec["reason"] and rec["value"] == value


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("tiny\\u0000study", "U+0000 (a control character)"),
        ("tiny\\nstudy", "U+000A (a control character)"),
        ("tiny\\u0085study", "U+0085 (a control character)"),
        ("tiny\\u2029study", "U+2029 PARAGRAPH SEPARATOR"),
        ("tiny\\u202estudy", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("tiny\\ufffestudy", "U+FFFE"),
    ],
)
def test_a_study_name_a_document_cannot_carry_is_refused(tmp_path, name, named):
    root = _tiny_config(tmp_path, '"tiny hand-made study"', f'"{name}"')
    rec = _failure(root, "study.name")
    assert named in rec["reason"] and "delete it" in rec["reason"]


def test_a_study_name_has_at_most_255_characters(tmp_path):
    root = _tiny_config(tmp_path, "tiny hand-made study", "x" * 255)
    assert read_study_config(root).name == "x" * 255
    root = _tiny_config(tmp_path, "tiny hand-made study", "x" * 256)
    rec = _failure(root, "study.name")
    assert "256 characters long; at most 255" in rec["reason"]
    assert len(rec["value"]) < 70  # the value is shown shortened


def test_names_in_other_scripts_are_kept(tmp_path):
    name = "Исследование 共感 \U0001f642 Café"
    root = _tiny_config(tmp_path, "tiny hand-made study", name)
    assert read_study_config(root).name == name


def test_a_wave_label_with_a_line_separator_is_refused_before_it_is_stripped(tmp_path):
    root = _tiny_config(tmp_path, '"mid", "post"]', '"mid\\u2028", "post"]')
    rec = _failure(root, "study.waves")
    assert "U+2028 LINE SEPARATOR" in rec["reason"]


def test_a_survey_whose_wave_column_is_its_id_column_is_refused(tmp_path):
    text = (STUDIES / "tiny" / "study.toml").read_text(encoding="utf-8")
    text = text.replace('wave = "mid"', 'wave_col = "participant_id"', 1)
    (tmp_path / "study.toml").write_text(text, encoding="utf-8")
    rec = _failure(tmp_path, "surveys[2].wave_col")
    assert "names the participant id column" in rec["reason"]
