"""Tests of longitudinal/study/loaded.py: loading, validation and the exclusion log.

Hand-made study directories live in tests/data/studies/ (see tests/data/README.md):
``tiny`` loads (with rows to exclude), ``defects`` holds one of each rejecting defect and
``bad_config`` a broken study.toml. Variants are derived from ``tiny`` in a temporary folder.
"""

import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import package_warnings

from longitudinal._errors import InvalidParameterError
from longitudinal.study.loaded import EXCLUSION_COLUMNS, Study, load_study
from surveys._errors import DataQualityWarning, InputValidationError

STUDIES = Path(__file__).parents[2] / "data" / "studies"


def _load(path):
    with warnings.catch_warnings():  # omega of four respondents: asserted in its own test
        warnings.simplefilter("ignore", DataQualityWarning)
        return load_study(path)


@pytest.fixture(scope="module")
def tiny():
    return _load(STUDIES / "tiny")


@pytest.fixture
def tiny_copy(tmp_path):
    return Path(shutil.copytree(STUDIES / "tiny", tmp_path / "tiny"))


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    from longitudinal.simulate import simulate_study

    root = simulate_study(tmp_path_factory.mktemp("sim") / "study", seed=2024)
    truth = json.loads((root / "truth.json").read_text())
    return load_study(root), truth


def _where(error):
    cases = error.failure_cases
    return {
        (f, None if pd.isna(r) else int(r), None if pd.isna(c) else c)
        for f, r, c in zip(cases["file"], cases["row"], cases["column"], strict=True)
    }


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


# -- study.toml ---------------------------------------------------------------------------------


def test_trait_must_be_measured_at_first_wave(tiny_copy):
    _edit(
        tiny_copy / "study.toml",
        'traits = ["tas4"]\nstates = ["who5"]',
        'traits = ["tas4"]\nstates = []',
    )
    _edit(
        tiny_copy / "study.toml",
        'wave = "pre"\ndate_col = "completed_at"\ninstruments = ["tas4", "who5"]',
        'wave = "pre"\ndate_col = "completed_at"\ninstruments = ["who5"]',
    )
    _edit(
        tiny_copy / "study.toml",
        'wave = "post"\ndate_col = "completed_at"\ninstruments = ["who5"]',
        'wave = "post"\ndate_col = "completed_at"\ninstruments = ["who5", "tas4"]',
    )
    with pytest.raises(InputValidationError) as info:
        load_study(tiny_copy)
    assert _where(info.value) == {("study.toml", None, "roles.traits")}


def test_missing_path_and_file():
    with pytest.raises(InvalidParameterError, match="does not exist"):
        load_study(STUDIES / "no_such_study")
    with pytest.raises(InvalidParameterError, match="study directory"):
        load_study(STUDIES / "tiny" / "study.toml")


@pytest.mark.parametrize("name", ["participants", "sessions", "ratings"])
def test_a_missing_table_names_the_study_toml_entry_that_points_at_another(tiny_copy, name):
    (tiny_copy / f"{name}.csv").unlink()
    with pytest.raises(InputValidationError) as info:
        load_study(tiny_copy)
    cases = info.value.failure_cases
    reason = cases.loc[cases["file"] == f"{name}.csv", "reason"].tolist()
    assert reason == [
        f"file not found in the study directory; name the study's file with [{name}] file = ... "
        "in study.toml"
    ]


def test_directory_without_study_toml(tmp_path):
    with pytest.raises(InputValidationError, match="no study.toml"):
        load_study(tmp_path)


# -- loading the hand-made study ----------------------------------------------------------------


def test_small_sample_warning_is_passed_on():
    with pytest.warns(DataQualityWarning, match="Heywood"):
        study = load_study(STUDIES / "tiny")
    assert isinstance(study, Study)


def test_load_is_load_study(tiny):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        again = Study.load(STUDIES / "tiny")
    pd.testing.assert_frame_equal(again.scores, tiny.scores)


def test_tiny_tables_and_types(tiny):
    assert len(tiny.participants) == 4
    assert tiny.participants["age"].dtype == "float64"
    assert tiny.sessions["started_at"].dtype == "datetime64[ns]"
    assert tiny.session_features == ("duration_min", "words")  # "room" is text
    assert tiny.ratings["position"].dtype == "int64"
    assert tiny.ratings["empathy"].dtype == "float64"
    assert tiny.inputs == (
        "study.toml",
        "participants.csv",
        "sessions.csv",
        "ratings.csv",
        "surveys/pre.csv",
        "surveys/mid.csv",
        "surveys/post.csv",
    )
    dates = tiny.survey_dates.set_index(["participant_id", "wave"])["completed_at"]
    assert dates[("P3", "pre")] == pd.Timestamp("2024-03-01 18:00")
    assert ("P4", "mid") not in dates.index
    scores = tiny.scores.set_index(["participant_id", "wave", "instrument", "scale"])["score"]
    assert scores[("P2", "post", "who5", "percentage")] == 4 * (3 + 3 + 3 + 2 + 3)
    assert scores[("P4", "pre", "tas4", "absorption")] == (3 + 3 + 4 + 2) / 4
    assert not (tiny.scores["instrument"].eq("tas4") & tiny.scores["wave"].ne("pre")).any()


def test_tiny_exclusion_log_names_every_dropped_row(tiny):
    log = tiny.exclusions
    assert list(log.columns) == EXCLUSION_COLUMNS
    got = list(zip(log["file"], log["row"], log["scope"], strict=True))
    assert got == [
        ("sessions.csv", 6, "study"),  # P2 s05: 12:00 on 1 March, pre survey on 2 March
        ("sessions.csv", 9, "study"),  # P3 s08: 17:00, pre survey at 18:00 the same day
        ("sessions.csv", 11, "story_frame"),  # P3 s10 has no ratings
        ("ratings.csv", 14, "study"),  # empty rating (row 11 of the file is blank)
        ("ratings.csv", 15, "study"),  # ratings of s05
        ("ratings.csv", 16, "study"),
        ("ratings.csv", 17, "study"),
        ("ratings.csv", 24, "study"),  # ratings of s08
        ("ratings.csv", 25, "study"),
        ("ratings.csv", 26, "study"),
    ]
    assert "before the participant's pre survey" in log.loc[0, "reason"]
    assert "no ratings" in log.loc[2, "reason"]
    assert "empty empathy rating" == log.loc[3, "reason"]


def test_no_row_disappears_unaccounted(tiny):
    log = tiny.exclusions[tiny.exclusions["scope"] == "study"]
    for file, kept in (("sessions.csv", tiny.sessions), ("ratings.csv", tiny.ratings)):
        read = tiny.meta["files"][file]["rows"]
        assert read == len(kept) + int((log["file"] == file).sum())
    assert len(tiny.sessions) == 10 and len(tiny.ratings) == 26


# -- rejected studies ---------------------------------------------------------------------------


def test_defects_are_rejected_in_one_failure_table():
    with pytest.raises(InputValidationError) as info:
        load_study(STUDIES / "defects")
    cases = info.value.failure_cases
    assert list(cases.columns) == ["file", "row", "column", "value", "reason"]
    assert _where(info.value) == {
        ("study.toml", None, "surveys[2].instruments"),  # unknown instrument
        ("sessions.csv", 2, "session_id"),  # duplicate session id ...
        ("sessions.csv", 3, "session_id"),  # ... both rows named
        ("sessions.csv", 4, "started_at"),  # unparseable date
        ("sessions.csv", 5, "participant_id"),  # unknown participant
        ("ratings.csv", 3, "empathy"),  # 7 on a 1-5 scale
        ("ratings.csv", 4, "empathy"),  # non-numeric rating
        ("ratings.csv", 5, "participant_id"),  # unknown participant
        ("ratings.csv", 6, "session_id"),  # unknown session
        ("ratings.csv", 7, "position"),  # position 0
        ("surveys/pre.csv", 5, "participant_id"),  # unknown participant in a survey
        ("surveys/mid.csv", 1, "completed_at"),  # missing required column
        ("surveys/post.csv", 2, "participant_id"),  # duplicate participant x wave
        ("surveys/post.csv", 3, "participant_id"),
    }
    values = dict(zip(zip(cases["file"], cases["row"], strict=True), cases["value"], strict=True))
    assert values[("ratings.csv", 3)] == "7"
    assert values[("sessions.csv", 4)] == "yesterday"


def test_missing_columns_and_files_reported_with_other_problems(tiny_copy):
    _edit(
        tiny_copy / "ratings.csv",
        "participant_id,session_id,story_id,position,empathy",
        "participant_id,session_id,story_id,slot,empathy",
    )
    _edit(tiny_copy / "sessions.csv", "P4,s12,", "P5,s12,")
    (tiny_copy / "surveys" / "mid.csv").unlink()
    with pytest.raises(InputValidationError) as info:
        load_study(tiny_copy)
    assert _where(info.value) == {
        ("ratings.csv", 1, "position"),
        ("sessions.csv", 13, "participant_id"),
        ("surveys/mid.csv", None, None),
    }


def test_duplicate_participant_wave_across_files(tiny_copy):
    (tiny_copy / "surveys" / "pre_extra.csv").write_text(
        "participant_id,completed_at,who5_1,who5_2,who5_3,who5_4,who5_5\nP2,2024-03-02,1,1,1,1,1\n"
    )
    text = (tiny_copy / "study.toml").read_text()
    text = text.replace(
        "[roles]",
        '[[surveys]]\nfile = "surveys/pre_extra.csv"\nformat = "csv"\nwave = "pre"\n'
        'date_col = "completed_at"\ninstruments = ["who5"]\n\n[roles]',
    )
    (tiny_copy / "study.toml").write_text(text)
    with pytest.raises(InputValidationError) as info:
        load_study(tiny_copy)
    assert _where(info.value) == {("surveys/pre_extra.csv", 2, "participant_id")}
    assert "also in surveys/pre.csv row 3" in info.value.failure_cases.loc[0, "reason"]


def test_ratings_of_another_participants_session(tiny_copy):
    _edit(tiny_copy / "ratings.csv", "P1,s01,st002", "P2,s01,st002")
    with pytest.raises(InputValidationError, match="another participant"):
        load_study(tiny_copy)


def test_non_numeric_feature_cell_is_rejected(tiny_copy):
    _edit(tiny_copy / "sessions.csv", "12.5,1100", "12.5 min,1100")
    with pytest.raises(InputValidationError) as info:
        load_study(tiny_copy)
    assert _where(info.value) == {("sessions.csv", 2, "duration_min")}


def test_row_with_extra_field_is_named(tiny_copy):
    _edit(tiny_copy / "sessions.csv", "12.5,1100", "12,5,1100")
    with pytest.raises(InputValidationError) as info:
        load_study(tiny_copy)
    assert _where(info.value) == {("sessions.csv", 2, None)}


def test_time_zone_offsets_keep_wall_clock_time(tiny_copy):
    _edit(tiny_copy / "sessions.csv", "2024-03-02T10:00:00", "2024-03-02T10:00:00-05:00")
    study = _load(tiny_copy)
    started = study.sessions.set_index("session_id")["started_at"]
    assert started["s01"] == pd.Timestamp("2024-03-02 10:00")


# -- the simulated study (known truth) --------------------------------------------------------


def test_simulated_study_loads_with_its_defects_logged(simulated):
    study, truth = simulated
    assert len(study.participants) == truth["n_participants"]
    assert len(study.sessions) == truth["n_sessions"]
    assert len(study.ratings) == truth["n_ratings"]
    log = study.exclusions
    preview = log[log["file"] == "surveys/post_qualtrics.csv"]
    assert preview["row"].tolist() == truth["defects"]["qualtrics_preview_lines"]
    assert preview["reason"].str.contains("preview").all()
    no_ratings = log[log["scope"] == "story_frame"]
    sessions = pd.read_csv(study.root / "sessions.csv")
    rows = {sid: k + 2 for k, sid in enumerate(sessions["session_id"])}
    assert no_ratings["row"].tolist() == [
        rows[s] for s in truth["defects"]["session_without_ratings"]
    ]
    assert len(log) == len(preview) + len(no_ratings)
    missed = set(truth["defects"]["missed_mid"])
    mid = set(study.survey_dates.loc[study.survey_dates["wave"] == "mid", "participant_id"])
    assert not missed & mid and len(mid) == truth["n_participants"] - len(missed)


def test_simulated_single_item_alpha_is_noted_not_warned(simulated):
    study, _ = simulated  # loading raised no warning (warnings are errors in the test run)
    notes = study.meta["scoring_notes"]
    assert any("sites" in n and "one-item" in n for n in notes)
    rel = study.reliability
    assert rel.loc[rel["instrument"] == "sites", "alpha"].isna().all()


def test_simulated_skipped_item_is_scored_from_the_rest(simulated):
    study, truth = simulated
    skipped = truth["defects"]["skipped_item"]
    scores = study.scores
    instrument, number = skipped["item"].rsplit("_", 1)
    hit = scores[
        (scores["participant_id"] == skipped["participant_id"])
        & (scores["wave"] == skipped["wave"])
        & (scores["instrument"] == instrument)
        & (scores["n_answered"] < scores["n_items"])
    ]
    assert len(hit) == 1 and hit["score"].notna().all()


def _long_copy(tiny_copy):
    """The tiny study with its three survey files merged into one long file."""
    frames = []
    for wave in ("pre", "mid", "post"):
        part = pd.read_csv(tiny_copy / "surveys" / f"{wave}.csv", dtype=str)
        frames.append(part.assign(wave=wave))
        (tiny_copy / "surveys" / f"{wave}.csv").unlink()
    pd.concat(frames).to_csv(tiny_copy / "surveys" / "all.csv", index=False)
    text = (tiny_copy / "study.toml").read_text()
    start, end = text.index("[[surveys]]"), text.index("[roles]")
    block = (
        '[[surveys]]\nfile = "surveys/all.csv"\nformat = "csv"\nwave_col = "wave"\n'
        'date_col = "completed_at"\ninstruments = ["tas4", "who5"]\n\n'
    )
    (tiny_copy / "study.toml").write_text(text[:start] + block + text[end:])
    return tiny_copy


def test_one_long_survey_file_equals_one_file_per_wave(tiny, tiny_copy):
    study = _load(_long_copy(tiny_copy))
    keys = ["participant_id", "wave", "instrument", "scale"]
    long_scores = study.scores.sort_values(keys).reset_index(drop=True)
    wide_scores = tiny.scores.sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(long_scores, wide_scores, rtol=1e-10)
    pd.testing.assert_frame_equal(study.survey_dates, tiny.survey_dates)
    pd.testing.assert_frame_equal(study.story_frame(), tiny.story_frame(), rtol=1e-10)


def test_unknown_wave_label_in_long_file(tiny_copy):
    root = _long_copy(tiny_copy)
    _edit(
        root / "surveys" / "all.csv",
        "P4,2024-04-01,,,,,2,2,2,3,3,post",
        "P4,2024-04-01,,,,,2,2,2,3,3,follow-up",
    )
    with pytest.raises(InputValidationError) as info:
        load_study(root)
    assert _where(info.value) == {("surveys/all.csv", 12, "wave")}


def test_custom_instrument_key_in_the_study_directory(tiny_copy):
    # a 3-item custom key (one item reverse keyed) added to the post survey as a state
    (tiny_copy / "keys").mkdir()
    (tiny_copy / "keys" / "warmth3.toml").write_text(
        '[instrument]\nname = "warmth3"\nresponse_min = 1\nresponse_max = 5\n'
        'scoring = "mean"\n\n[scales.warmth]\nitems = ["w3_1", "-w3_2", "w3_3"]\n'
    )
    post = pd.read_csv(tiny_copy / "surveys" / "post.csv", dtype=str)
    post = post.assign(
        w3_1=["5", "2", "4", "3"], w3_2=["1", "4", "2", "3"], w3_3=["4", "2", "5", "3"]
    )
    post.to_csv(tiny_copy / "surveys" / "post.csv", index=False)
    _edit(
        tiny_copy / "study.toml",
        'wave = "post"\ndate_col = "completed_at"\ninstruments = ["who5"]',
        'wave = "post"\ndate_col = "completed_at"\ninstruments = ["who5", "keys/warmth3.toml"]',
    )
    _edit(tiny_copy / "study.toml", 'states = ["who5"]', 'states = ["who5", "keys/warmth3.toml"]')
    study = _load(tiny_copy)
    assert study.instrument_names["keys/warmth3.toml"] == "warmth3"
    assert study.state_instruments == ("who5", "warmth3")
    assert "keys/warmth3.toml" in study.inputs
    pw = study.person_wave_frame().set_index(["participant_id", "wave"])
    # P1 at post: (5 + (6 - 1) + 4) / 3
    assert pw.loc[("P1", "post"), "warmth3_warmth"] == pytest.approx(14 / 3)
    assert pd.isna(pw.loc[("P1", "pre"), "warmth3_warmth"])


# -- the study's own column names and session features ------------------------------------------

_OWN = {
    "participant_id": "pid",
    "session_id": "visit",
    "story_id": "item",
    "position": "slot",
    "empathy": "score",
    "started_at": "start_time",
}


def _tiny_with_own_names(tmp_path, extra_toml=""):
    """The tiny study with every fixed column renamed and mapped in [columns]."""
    import shutil

    root = tmp_path / "own"
    shutil.copytree(STUDIES / "tiny", root)
    for path in [root / "sessions.csv", root / "ratings.csv", root / "participants.csv",
                 *(root / "surveys").glob("*.csv")]:  # fmt: skip
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        header = ",".join(_OWN.get(c, c) for c in lines[0].rstrip("\r\n").split(",")) + "\n"
        path.write_text(header + "".join(lines[1:]), encoding="utf-8")
    toml = (root / "study.toml").read_text(encoding="utf-8")
    toml = toml.replace('id_col = "participant_id"\n', "")
    toml += (
        '\n[columns]\nperson = "pid"\nsession = "visit"\nstory = "item"\nposition = "slot"\n'
        'rating = "score"\ntimestamp = "start_time"\n' + extra_toml
    )
    (root / "study.toml").write_text(toml, encoding="utf-8")
    return root


def test_columns_table_reads_a_study_with_its_own_names(tmp_path):
    with package_warnings():
        plain = load_study(STUDIES / "tiny")
        own = load_study(_tiny_with_own_names(tmp_path))
    assert own.config.id_col == "pid" and own.config.rating_col == "score"
    assert len(own.ratings) == len(plain.ratings) and len(own.sessions) == len(plain.sessions)
    assert own.ratings["score"].tolist() == plain.ratings["empathy"].tolist()
    expected = [r.replace("empathy", "score") for r in plain.exclusions["reason"]]
    assert own.exclusions["reason"].tolist() == expected  # reasons speak the file's names


def test_columns_table_errors_name_the_files_own_column(tmp_path):
    root = _tiny_with_own_names(tmp_path)
    ratings = root / "ratings.csv"
    text = ratings.read_text(encoding="utf-8").replace(",slot,", ",slot_number,")
    ratings.write_text(text, encoding="utf-8")
    with pytest.raises(InputValidationError) as info:
        load_study(root)
    cases = info.value.failure_cases
    hit = cases[cases["file"] == "ratings.csv"]
    assert hit["column"].tolist() == ["slot"]
    assert "missing required column" in hit["reason"].iloc[0]


def test_roles_session_features_choose_the_model_features(tmp_path):
    root = _tiny_with_own_names(tmp_path)
    toml = (
        (root / "study.toml")
        .read_text(encoding="utf-8")
        .replace('states = ["who5"]', 'states = ["who5"]\nsession_features = ["duration_min"]')
    )
    (root / "study.toml").write_text(toml, encoding="utf-8")
    with package_warnings():
        study = load_study(root)
    assert study.session_features == ("duration_min",)
    assert set(study.numeric_session_columns) == {"duration_min", "words"}
    toml = toml.replace('session_features = ["duration_min"]', 'session_features = ["room"]')
    (root / "study.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(InputValidationError, match="not numeric"):
        load_study(root)


def test_study_prints_one_short_line():
    with package_warnings():
        study = load_study(STUDIES / "tiny")
    text = repr(study)
    assert text.startswith("Study('tiny hand-made study': 4 participants,") and "\n" not in text


def test_a_year_out_of_range_is_named_not_called_unparseable(tiny_copy):
    _edit(tiny_copy / "sessions.csv", "P1,s01,2024-03-02T10:00:00", "P1,s01,2300-03-02T10:00:00")
    with pytest.raises(InputValidationError) as info:
        load_study(tiny_copy)
    cases = info.value.failure_cases
    case = cases[cases["column"] == "started_at"].iloc[0]
    assert (case["file"], case["row"], case["value"]) == ("sessions.csv", 2, "2300-03-02T10:00:00")
    assert "the year 2300 is outside" in case["reason"]
    assert "unparseable" not in case["reason"]


def test_a_survey_sheet_is_read_from_a_workbook(tiny_copy):
    openpyxl = pytest.importorskip("openpyxl")
    workbook = openpyxl.Workbook()
    workbook.active.title = "notes"
    workbook.active.append(["written by the lab"])
    sheet = workbook.create_sheet("pre")
    lines = (tiny_copy / "surveys" / "pre.csv").read_text().splitlines()
    for line in lines:
        sheet.append([None if c == "" else c for c in line.split(",")])
    workbook.save(tiny_copy / "surveys" / "pre.xlsx")
    _edit(
        tiny_copy / "study.toml",
        'file = "surveys/pre.csv"\nformat = "csv"',
        'file = "surveys/pre.xlsx"\nformat = "xlsx"\nsheet = 7',
    )
    with pytest.raises(InputValidationError) as info:
        load_study(tiny_copy)
    assert ("study.toml", None, "surveys[1].sheet") in _where(info.value)  # numbered from 1
    _edit(tiny_copy / "study.toml", "sheet = 7", 'sheet = "pre"')
    with package_warnings() as caught:
        study = load_study(tiny_copy)
    assert any("'notes' also hold data" in str(w.message) for w in caught)
    assert study.meta["files"]["surveys/pre.xlsx"]["rows"] == len(lines) - 1


def test_study_prints_briefly(tiny):
    line = repr(tiny)
    assert line.startswith("Study(") and "\n" not in line
    assert f"{len(tiny.participants)} participants" in line
    page = tiny._repr_html_()
    assert (
        page.startswith("<p><strong>Study(")
        and "<caption>Study tiny hand-made study</caption>" in page
    )
    assert "<td>ratings</td>" in page and f"<td>{len(tiny.ratings)}</td>" in page
    # the result protocol of every result
    assert tiny.summary().startswith(line) and "ratings" in tiny.summary()
    assert list(tiny.to_frame()["quantity"])[:3] == ["participants", "sessions", "ratings"]
    assert tiny.to_dict()["title"] == line
