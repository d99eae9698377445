"""Tests of longitudinal/predict/splits.py and the `longitudinal splits` command.

The splits must be deterministic for a seed and be exactly the splits `evaluate` scores on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings

from longitudinal._errors import InvalidParameterError
from longitudinal.cli import main
from longitudinal.predict import empathy_data, evaluate_predictions
from longitudinal.predict.selection import participant_splits
from longitudinal.predict.splits import (
    draw_splits,
    holdout_scheme,
    seed_list,
    splits_table,
)
from longitudinal.simulate import simulate_study
from longitudinal.study.loaded import load_study
from models.evaluation import overlapping_groups


@pytest.fixture(scope="module")
def study_dir(tmp_path_factory):
    return simulate_study(tmp_path_factory.mktemp("splits") / "study", seed=5, n_participants=20)


@pytest.fixture(scope="module")
def study(study_dir):
    with package_warnings():  # the scoring notes of a small sample (omega at a bound)
        return load_study(study_dir)


def _groups(n_people=20, per=3):
    return np.repeat([f"P{i:02d}" for i in range(n_people)], per)


def test_draw_splits_is_deterministic_and_keeps_people_whole():
    groups = _groups()
    a = draw_splits(groups, seeds=3, k=4)
    b = draw_splits(groups, seeds=3, k=4)
    assert len(a) == 3 * (1 + 4)
    for x, y in zip(a, b, strict=True):
        assert (x.scheme, x.seed, x.fold) == (y.scheme, y.seed, y.fold)
        assert np.array_equal(x.train, y.train)
        assert x.parts.keys() == y.parts.keys()
        assert all(np.array_equal(x.parts[p], y.parts[p]) for p in x.parts)
        assert overlapping_groups(groups, [x.train, *x.parts.values()]) == []
        # every row is in exactly one part
        rows = np.sort(np.concatenate([x.train, *x.parts.values()]))
        assert np.array_equal(rows, np.arange(groups.size))
    # the holdout differs between seeds; the folds of a seed cover everyone once
    test0, test1 = (set(groups[s.parts["test"]]) for s in a if s.fold is None and s.seed < 2)
    assert test0 != test1
    for seed in range(3):
        tested = [
            g for s in a if s.seed == seed and s.fold is not None for g in groups[s.parts["test"]]
        ]
        assert sorted(set(tested)) == sorted(set(groups)) and len(tested) == groups.size


def test_draw_splits_ignores_row_order():
    groups = _groups()
    order = np.random.default_rng(1).permutation(groups.size)
    a = splits_table(groups, draw_splits(groups, seeds=2, k=3), id_col="pid")
    shuffled = groups[order]
    b = splits_table(shuffled, draw_splits(shuffled, seeds=2, k=3), id_col="pid")
    pd.testing.assert_frame_equal(a, b)


def test_splits_table_holdout_shares_and_labels():
    table = splits_table(_groups(), draw_splits(_groups(), seeds=[7], k=0), id_col="pid")
    assert list(table.columns) == ["scheme", "seed", "pid", "split"]
    assert set(table["scheme"]) == {"holdout_70_20_10"} and set(table["seed"]) == {7}
    assert table["split"].value_counts().to_dict() == {"train": 14, "valid": 4, "test": 2}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seeds": 0}, "seeds"),
        ({"seeds": True}, "seeds"),
        ({"seeds": [1, 1]}, "distinct"),
        ({"seeds": [-1]}, "seeds"),
        ({"seeds": "2"}, "seeds"),
        ({"seeds": 1, "k": 1}, "`k`"),
        ({"seeds": 1, "k": 99}, "`k`"),
        ({"seeds": 1, "sizes": (0.5, 0.5, 0.5)}, "sizes"),
    ],
)
def test_draw_splits_bad_options(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        draw_splits(_groups(), **kwargs)


def test_scheme_names():
    assert holdout_scheme((0.7, 0.2, 0.1)) == "holdout_70_20_10"
    assert holdout_scheme((0.75, 0.125, 0.125)) == "holdout_75_12p5_12p5"
    assert seed_list(2, func="f") == [0, 1]


def test_participant_splits_are_the_splits_evaluate_uses(study):
    table = participant_splits(study, seeds=2, k=3)
    result = evaluate_predictions(study, seeds=2, k=3, models=["grand_mean"])
    pd.testing.assert_frame_equal(table, result.splits)
    # and the sizes evaluate reports per fit are those of the table
    runs = result.runs[result.runs["split"] != "kfold"].set_index(["split", "seed"])
    holdout = table[table["scheme"] == "holdout_70_20_10"]
    for seed in (0, 1):
        block = holdout[holdout["seed"] == seed]
        counts = block["split"].value_counts()
        assert runs.loc[("test", seed), "participants_test"] == counts["test"]
        assert runs.loc[("val", seed), "participants_test"] == counts["valid"]
        assert runs.loc[("test", seed), "participants_train"] == counts["train"]
    # everyone of the benchmark's ratings, and no one else
    data = empathy_data(study)
    people = sorted(set(data.data["participant_id"]))
    for _, block in table.groupby(["scheme", "seed"]):
        assert sorted(block["participant_id"]) == people


def test_participant_splits_bad_study():
    with pytest.raises(InvalidParameterError, match="study"):
        participant_splits("not a study", seeds=1)


# ----------------------------------------------------------------- the command


def test_cli_splits_writes_the_same_file_every_time(study_dir, study, tmp_path, capsys):
    out = tmp_path / "splits.csv"
    args = ["splits", str(study_dir), "--seeds", "2", "--kfold", "3", "--out", str(out)]
    assert main(args) == 0
    first = out.read_bytes()
    assert "80 rows" in capsys.readouterr().out  # 20 people x (holdout + kfold) x 2 seeds
    assert main(args) == 0
    assert out.read_bytes() == first
    table = pd.read_csv(out, dtype={"participant_id": str, "split": str})
    expected = participant_splits(study, seeds=2, k=3)
    assert list(table.columns) == ["scheme", "seed", "participant_id", "split"]
    assert table["participant_id"].tolist() == expected["participant_id"].tolist()
    assert table["split"].tolist() == [str(s) for s in expected["split"]]
    assert table["scheme"].tolist() == expected["scheme"].tolist()
    kfold = table[table["scheme"] == "kfold_3"]
    assert set(kfold["split"]) == {"0", "1", "2"}


def test_cli_splits_holdout_only(study_dir, tmp_path):
    out = tmp_path / "splits.csv"
    assert main(["splits", str(study_dir), "--seeds", "1", "--kfold", "0", "--out", str(out)]) == 0
    assert set(pd.read_csv(out)["scheme"]) == {"holdout_70_20_10"}


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--seeds", "0"], "--seeds"),
        (["--seeds", "2", "--kfold", "1"], "--kfold"),
        (["--seeds", "2", "--kfold", "50"], "`k`"),
    ],
)
def test_cli_splits_bad_options(study_dir, tmp_path, capsys, extra, match):
    out = tmp_path / "splits.csv"
    assert main(["splits", str(study_dir), *extra, "--out", str(out)]) == 2
    assert match in capsys.readouterr().err
    assert not out.exists()


def test_cli_splits_never_writes_over_an_input(study_dir, capsys):
    ratings = study_dir / "ratings.csv"
    before = ratings.read_bytes()
    assert main(["splits", str(study_dir), "--seeds", "1", "--out", str(ratings)]) == 2
    assert "never writes over its inputs" in capsys.readouterr().err
    assert ratings.read_bytes() == before


def test_cli_splits_refuses_a_missing_folder(study_dir, tmp_path, capsys):
    out = tmp_path / "no" / "splits.csv"
    assert main(["splits", str(study_dir), "--seeds", "1", "--out", str(out)]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not out.parent.exists()


def test_splits_of_a_1_7_study_name_everyone_left_out():
    """slider7: sub-001 to sub-003 answered 1 of the 2 TIPI agreeableness items, so none of
    their ratings can be predicted; the counts are those of ratings.csv."""
    import warnings
    from pathlib import Path

    root = Path(__file__).parents[2] / "data" / "studies" / "declared" / "slider7"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = load_study(root)
    table = participant_splits(study, seeds=1, k=2)
    ratings = pd.read_csv(root / "ratings.csv", dtype={"pid": str})
    n = ratings["pid"].value_counts()
    gone = ["sub-001", "sub-002", "sub-003"]
    left = table.attrs["left_out"]
    assert left["ratings"] == int(n[gone].sum()) and left["of"] == len(ratings)
    assert [p["text"] for p in left["participants"]] == [
        f"{p}: tipi_agreeableness not scored (1 of 2 items answered); {n[p]} ratings left out"
        for p in gone
    ]
    assert set(table["pid"]) == set(ratings["pid"]) - set(gone)
    assert table.attrs["n_ratings"] == len(ratings) - int(n[gone].sum())
