"""Tests of surveys/pipeline.py: the read -> check -> score chain used by the CLI and a study."""

import warnings
from pathlib import Path

import pandas as pd
import pytest

from surveys import InputValidationError, InvalidParameterError
from surveys.instruments import load_instrument
from surveys.pipeline import CheckedExport, ScoreExportResult, check_export, score_export
from surveys.readers import read_responses
from surveys.scoring import score

DATA = Path(__file__).resolve().parents[1] / "data"
LONG = DATA / "raw" / "tas4_who5_long.csv"
BAD = DATA / "bad"


def test_chain_equals_the_steps_it_joins():
    export = check_export(LONG, ["tas4", "who5"], id_col="participant_id", wave_col="wave")
    assert isinstance(export, CheckedExport) and export.ok
    assert [i.name for i in export.instruments] == ["tas4", "who5"]
    scored = score_export(export)
    assert isinstance(scored, ScoreExportResult)
    responses = read_responses(LONG, id_col="participant_id", wave_col="wave")
    for name in ("tas4", "who5"):
        alone = score(
            responses.data,
            name,
            id_col="participant_id",
            wave_col="wave",
            row_numbers=responses.row_numbers,
            source_file=responses.source,
        )
        pd.testing.assert_frame_equal(scored.results[name].scores, alone.scores)
        pd.testing.assert_frame_equal(scored.results[name].reliability, alone.reliability)
    stacked = pd.concat([scored.results[n].scores for n in ("tas4", "who5")], ignore_index=True)
    pd.testing.assert_frame_equal(scored.scores, stacked)
    assert "CheckedExport(" in repr(export) and "usable" in repr(export)
    assert repr(scored).startswith("ScoreExportResult(")


def test_unknown_instrument_is_listed_with_the_data_problems():
    with pytest.raises(InputValidationError) as err:
        check_export(BAD / "out_of_range_6.csv", ["tas4", "no_such_scale"])
    reasons = " | ".join(err.value.failure_cases["reason"].astype(str))
    assert "no_such_scale" in reasons
    assert "outside" in reasons or "range" in reasons


def test_collect_mode_returns_the_problems_and_refuses_to_score():
    export = check_export(BAD / "out_of_range_6.csv", "tas4", errors="collect")
    assert not export.ok and len(export.failures) >= 1
    assert set(export.failures["file"]) == {str(BAD / "out_of_range_6.csv")}
    with pytest.raises(InputValidationError, match="did not pass the check"):
        score_export(export)


def test_recode_shifts_answers_and_refuses_those_outside(tmp_path):
    shifted = LONG.read_text().splitlines()
    header, rows = shifted[0], shifted[1:]
    # TAS-4 items are answered 1-5: store them as 2-6 and shift back with recode
    out = [header]
    for line in rows:
        cells = line.split(",")
        cells[2:6] = [str(int(c) + 1) for c in cells[2:6]]
        out.append(",".join(cells))
    path = tmp_path / "shifted.csv"
    path.write_text("\n".join(out) + "\n")
    options = {"id_col": "participant_id", "wave_col": "wave"}
    back = score_export(check_export(path, "tas4", recode=(2, 6, 1, 5), **options))
    plain = score_export(check_export(LONG, "tas4", **options))
    pd.testing.assert_frame_equal(back.scores, plain.scores, check_dtype=False)
    with pytest.raises(InputValidationError) as err:
        check_export(path, "tas4", recode=(3, 7, 2, 6), **options)
    cases = err.value.failure_cases
    assert (cases["reason"] == "value outside the recode range 3-7").all()
    assert cases["row"].min() >= 2
    with pytest.raises(InputValidationError) as err:  # one report with the unknown name
        check_export(path, ["tas4", "no_such_scale"], recode=(3, 7, 2, 6), **options)
    reasons = err.value.failure_cases["reason"].astype(str)
    assert reasons.str.contains("no_such_scale").sum() == 1
    assert (reasons == "value outside the recode range 3-7").sum() == len(cases)
    with pytest.raises(InvalidParameterError, match="same width"):
        check_export(path, "tas4", recode=(1, 6, 0, 4), **options)


def test_only_waves_scores_a_trait_at_baseline_and_names_the_file():
    export = check_export(LONG, ["tas4", "who5"], id_col="participant_id", wave_col="wave")
    waves = sorted(export.responses.data["wave"].unique())
    assert len(waves) > 1
    scored = score_export(export, only_waves={"tas4": ["pre"]}, name="surveys/long.csv")
    tas = scored.results["tas4"].scores
    assert set(tas["wave"]) == {"pre"}
    assert set(scored.results["who5"].scores["wave"]) == set(waves)
    assert all(note.startswith("surveys/long.csv, ") for note in scored.notes)


def test_a_file_without_wave_column_takes_the_given_wave():
    path = DATA / "raw" / "tas4_small.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # three respondents: alpha and omega warn
        scored = score_export(check_export(path, "tas4", wave="post"))
    assert set(scored.scores["wave"]) == {"post"}
    with pytest.raises(InvalidParameterError, match="no wave column"):
        score_export(check_export(path, "tas4"), only_waves={"tas4": ["pre"]})


def test_scoring_warnings_name_file_and_instrument():
    export = check_export(DATA / "raw" / "tas4_small.csv", "tas4")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scored = score_export(export, name="tas4_small.csv")
    assert caught  # three respondents: the reliability warns
    for w in caught:
        assert str(w.message).startswith("tas4_small.csv, tas4: ")
    assert len(scored.notes) == len(caught)


def test_wrong_arguments_are_refused():
    with pytest.raises(InvalidParameterError, match="'raise' or 'collect'"):
        check_export(LONG, "tas4", errors="ignore")
    with pytest.raises(InvalidParameterError, match="CheckedExport"):
        score_export(read_responses(LONG, id_col="participant_id"))
    assert load_instrument("tas4").name == "tas4"


def test_the_participant_column_defaults_to_participant_id_then_id(tmp_path):
    both = tmp_path / "both.csv"
    both.write_text("id,participant_id,tas4_1,tas4_2,tas4_3,tas4_4\n1,P01,1,2,3,4\n2,P02,2,2,2,2\n")
    plain = tmp_path / "plain.csv"
    plain.write_text("id,tas4_1,tas4_2,tas4_3,tas4_4\nP01,1,2,3,4\nP02,2,2,2,2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the alpha of two respondents
        from_both = score_export(check_export(both, "tas4"))
        from_plain = score_export(check_export(plain, "tas4"))
    assert check_export(both, "tas4").id_col == "participant_id"
    assert from_both.scores["id"].tolist() == ["P01", "P02"]
    assert check_export(plain, "tas4").id_col == "id"
    assert from_plain.scores["id"].tolist() == ["P01", "P02"]
    frame = pd.read_csv(both)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = score(frame, "tas4", min_valid=1)
    assert alone.scores["id"].tolist() == ["P01", "P02"]


def test_an_export_with_neither_default_id_name_is_refused_naming_both(tmp_path):
    path = tmp_path / "pid.csv"
    path.write_text("pid,tas4_1\nP01,1\n")
    with pytest.raises(InputValidationError) as err:
        read_responses(path)
    reason = err.value.failure_cases["reason"].iloc[0]
    assert "'participant_id' is missing (nor is there one named 'id')" in reason
    assert "pid" in reason and "id_col" in reason
    assert read_responses(path, id_col="pid").data["pid"].tolist() == ["P01"]
