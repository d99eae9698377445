"""Inputs the corpus (tests/data/corpus/) cannot hold: hard links, FIFOs and devices made here.

Each refusal is exit 2 with one message naming the path, and nothing is written or changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

import pytest

from longitudinal.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX files")

EXPORT = "id,tas4_1,tas4_2,tas4_3,tas4_4\nP1,4,5,3,4\nP2,2,1,2,3\n"
DATA = "y,x,g\n" + "".join(f"{(k * 7) % 5 + k % 3},{k % 4},{'abc'[k % 3]}\n" for k in range(30))


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def test_fit_out_a_hard_link_to_the_data_is_refused(tmp_path, capsys):
    data = tmp_path / "DATA.csv"
    data.write_text(DATA, encoding="utf-8")
    link = tmp_path / "HARDLINK"
    os.link(data, link)
    before = _digest(tmp_path)
    code = main(["fit", str(data), "--formula", "y ~ x + (1 | g)", "--out", str(link)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--out" in err and "is the input" in err and "HARDLINK" in err
    assert _digest(tmp_path) == before


def test_score_out_a_fifo_is_refused_without_blocking(tmp_path, capsys):
    (tmp_path / "export.csv").write_text(EXPORT, encoding="utf-8")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    code = main(["score", str(tmp_path / "export.csv"), "--instrument", "tas4", "--out", str(fifo)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "pipe" in err and "named pipe (FIFO)" in err and "expected a regular file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.csv", "pipe"]


@pytest.mark.parametrize("option", ["--reliability", "--exclusions"])
def test_score_side_outputs_that_are_devices_are_refused(tmp_path, capsys, option):
    (tmp_path / "export.csv").write_text(EXPORT, encoding="utf-8")
    out = tmp_path / "s.csv"
    args = ["score", str(tmp_path / "export.csv"), "--instrument", "tas4", "--out", str(out)]
    code = main([*args, option, "/dev/zero"])
    err = capsys.readouterr().err
    assert code == 2 and "/dev/zero" in err and "is a device" in err, err
    assert not out.exists()


def test_report_out_a_fifo_is_refused(tmp_path, capsys):
    fifo = tmp_path / "rep"
    os.mkfifo(fifo)
    study = Path(__file__).resolve().parents[1] / "data" / "studies" / "tiny"
    code = main(["report", str(study), "--out", str(fifo), "--no-bayes"])
    err = capsys.readouterr().err
    assert code == 2 and "named pipe (FIFO)" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_score_out_the_instrument_key_through_a_symlink_is_refused(tmp_path, capsys):
    (tmp_path / "export.csv").write_text(EXPORT, encoding="utf-8")
    key = tmp_path / "keys" / "mykey"
    key.parent.mkdir()
    key.write_text('[instrument]\nname = "mykey"\n', encoding="utf-8")
    (tmp_path / "alias.csv").symlink_to(key)
    before = _digest(tmp_path)
    code = main(
        [
            "score",
            str(tmp_path / "export.csv"),
            "--instrument",
            str(key),
            "--out",
            str(tmp_path / "alias.csv"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "is the input" in err, err
    assert _digest(tmp_path) == before


def _raw_ids_in(folder: Path, ids: list[str]) -> dict[str, list[str]]:
    """Raw ids found as whole tokens in the files of ``folder``.

    PNG pixels and the base64 images embedded in report.html are not text (their bytes hold
    any two-letter sequence by chance); every other byte is searched.
    """
    import re

    pattern = re.compile(
        rb"(?<![\w.])(?:" + b"|".join(re.escape(i.encode()) for i in ids) + rb")(?![\w])"
    )
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix != ".png":
            data = re.sub(rb"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+", b"", path.read_bytes())
            hits = sorted({m.decode() for m in pattern.findall(data)})
            if hits:
                found[str(path.relative_to(folder))] = hits
    return found


def test_report_copies_no_raw_id_from_evaluate(tmp_path, capsys):
    """evaluate/ holding a splits export, a per-person file and links: no raw id reaches the
    report folder, links are not followed, and the notes say what was left out."""
    import csv
    import shutil

    study = tmp_path / "study"
    shutil.copytree(Path(__file__).resolve().parents[1] / "data" / "studies" / "tiny", study)
    (study / "raw").mkdir()
    (study / "ratings.csv").rename(study / "raw" / "ratings.csv")
    (study / "ratings.csv").symlink_to(Path("raw") / "ratings.csv")
    with (study / "participants.csv").open(newline="", encoding="utf-8") as fh:
        ids = [row["participant_id"] for row in csv.DictReader(fh)]
    evaluate = study / "evaluate"
    evaluate.mkdir()
    (evaluate / "metrics.csv").write_text(
        "model,split,seed,r,rho,acc,f1,mse\nlmm,test,0,31.0,30.0,40.0,38.0,90.0\n", "utf-8"
    )
    (evaluate / "summary.csv").write_text("model,split,metric,mean,sd,n\n", "utf-8")
    (evaluate / "table.md").write_text("| model | r |\n|---|---|\n| lmm | 31.0 |\n", "utf-8")
    note = json.dumps({"notes": [f"worst fit: {ids[0]}"]})
    (evaluate / "evaluation.json").write_text(note + "\n", "utf-8")
    (evaluate / "runs.csv").write_text(
        "model,participant_id,seconds\n" + "".join(f"lmm,{i},0.1\n" for i in ids), "utf-8"
    )
    (evaluate / "splits.csv").write_text(
        "scheme,seed,participant_id,split\n"
        + "".join(f"holdout_70_20_10,0,{i},train\n" for i in ids),
        "utf-8",
    )
    (evaluate / "comparisons.csv").symlink_to(Path("..") / "raw" / "ratings.csv")
    (evaluate / "metrics.svg").symlink_to(study / "participants.csv")
    out = tmp_path / "report"
    code = main(["report", str(study), "--out", str(out), "--no-bayes"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert _raw_ids_in(out, ids) == {}
    copied = sorted(p.name for p in (out / "evaluate").iterdir())
    assert copied == ["metrics.csv", "summary.csv", "table.md"]
    notes = (out / "notes.csv").read_text(encoding="utf-8")
    assert "evaluate/runs.csv names participants" in notes
    assert "evaluate/evaluation.json names participants" in notes
    assert "evaluate/comparisons.csv is a symbolic link" in notes
    assert "evaluate/metrics.svg is a symbolic link" in notes
    assert not any(p.is_symlink() for p in out.rglob("*"))
