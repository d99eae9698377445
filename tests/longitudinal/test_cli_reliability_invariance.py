"""``longitudinal reliability --invariance``: the ladder of each scale, or one line why not.

The ladder's numbers are checked against lavaan in ``tests/models/test_invariance.py``; here the
command is checked to write exactly what :func:`models.measurement_invariance` gives on the
scale's keyed answers, and to give a note, never numbers, where the sample cannot carry the
configural model.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.testing import assert_allclose

from longitudinal.cli import main
from longitudinal.reliability import INVARIANCE_COLUMNS, INVARIANCE_PARAMS_COLUMNS

DATA = Path(__file__).resolve().parents[1] / "data" / "raw"
KEY = DATA / "mood3.toml"


def _export(path: Path, n: int = 400, seed: int = 11) -> pd.DataFrame:
    """Seeded answers on 1-5 to the mood key's calm scale (c3 reverse keyed), three waves."""
    rng = np.random.default_rng(seed)
    loadings, intercepts = np.array([0.9, 0.8, -0.7]), np.array([3.0, 3.1, 3.0])
    rows = []
    for wave, mean in [("pre", 0.0), ("mid", 0.2), ("post", 0.4)]:
        eta = rng.normal(mean, 1.0, n)
        raw = intercepts + eta[:, None] * loadings + rng.normal(0.0, 0.6, (n, 3))
        answers = np.clip(np.rint(raw), 1, 5).astype(int)
        for i in range(n):
            rows.append(
                {
                    "pid": f"P{i:03d}",
                    "wave": wave,
                    "c1": answers[i, 0],
                    "c2": answers[i, 1],
                    "c3": answers[i, 2],
                    "t1": 3,
                    "t2": 3,
                    "t3": 3,
                    "e1": 3,
                    "e2": 3,
                }
            )
    frame = pd.DataFrame(rows)
    frame.loc[5, "c2"] = np.nan  # one missing answer: full-information ML keeps the person
    frame.to_csv(path, index=False)
    return frame


def _run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_ladder_is_what_measurement_invariance_gives(tmp_path, capsys):
    from models import measurement_invariance
    from surveys import keyed_item_answers, load_instrument

    frame = _export(tmp_path / "calm.csv")
    out = tmp_path / "rel"
    code, _, err = _run(
        capsys,
        "reliability",
        tmp_path / "calm.csv",
        "--instrument",
        KEY,
        "--id-col",
        "pid",
        "--wave-col",
        "wave",
        "--invariance",
        "--out",
        out,
    )
    assert code == 0, err
    table = pd.read_csv(out / "invariance.csv")
    params = pd.read_csv(out / "invariance_params.csv")
    assert list(table.columns) == INVARIANCE_COLUMNS
    assert list(params.columns) == INVARIANCE_PARAMS_COLUMNS
    calm = table[table["scale"] == "calm"]
    assert calm["model"].tolist()[:4] == ["configural", "metric", "scalar", "strict"]
    assert (calm["estimator"] == "MLR").all() and calm["converged"].all()
    assert "tension" not in set(table["scale"])  # no variance at all: refused, a note
    assert "energy: fewer than three items" in err
    assert "tension: answers without variance" in err

    key = next(k for k in load_instrument(KEY).scales if k.name == "calm")
    long = keyed_item_answers(frame, key, id_col="pid", wave_col="wave")
    wide = long.pivot_table(
        index=["pid", "wave"], columns="item", values="value", dropna=False, sort=False
    ).reset_index()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = measurement_invariance(
            wide,
            items=["c1", "c2", "c3"],
            id_col="pid",
            wave_col="wave",
            waves=["pre", "mid", "post"],
            estimator="MLR",
            nan_policy="fiml",
        )
    fits = direct.fits.set_index("model").loc[calm["model"]]
    for column in ("chisq", "df", "cfi", "rmsea", "srmr"):
        assert_allclose(calm[column].to_numpy(), fits[column].to_numpy(dtype=float), rtol=1e-9)


def test_a_small_export_gets_a_note_and_no_numbers(tmp_path, capsys):
    out = tmp_path / "rel"
    code, _, err = _run(
        capsys,
        "reliability",
        DATA / "mood3_long.csv",
        "--instrument",
        KEY,
        "--id-col",
        "pid",
        "--wave-col",
        "wave",
        "--invariance",
        "--out",
        out,
    )
    assert code == 0, err
    assert pd.read_csv(out / "invariance.csv").empty
    assert "calm:" in err and "needs at least" in err and "no invariance ladder" in err
