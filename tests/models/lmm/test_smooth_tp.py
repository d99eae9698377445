"""mgcv's thin plate regression spline (models/lmm/_smooth_tp.py).

The basis itself is checked against mgcv in tests/models/lmm/test_smooth.py (constrained basis
to 1e-12 up to column signs, penalty scaling to 1e-10, fits against gamm4). Here: the fit does
not depend on the signs an eigen-decomposition gives its eigenvectors (each flipped here, in
turn, against the same gamm4 reference and tolerances), and the refusal of more unique values
than mgcv takes as knots.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import InvalidParameterError
from models.lmm import LinearMixedModel
from models.lmm._smooth_tp import MAX_KNOTS, _qt, tp_setup

ROOT = Path(__file__).resolve().parents[3]
REF = json.loads((ROOT / "tests/models/reference/gamm4_smooth.json").read_text())
CASES = {c["name"]: c for c in REF["cases"]}


def _flipping_eigh(eigh):
    def flipped(a, *args, **kwargs):
        values, vectors = eigh(a, *args, **kwargs)
        signs = np.where(np.arange(vectors.shape[1]) % 2 == 0, -1.0, 1.0)
        return values, vectors * signs

    return flipped


@pytest.mark.parametrize("name", ["tp_chickweight", "two_airquality"])
def test_fit_does_not_depend_on_eigenvector_signs(monkeypatch, name):
    ref = CASES[name]
    d = pd.read_csv(ROOT / "tests/data" / ref["data"])
    x = ref["smooths"][0]["term"]
    _, X0, _ = tp_setup(d[x].dropna().to_numpy(dtype=float), 10)
    monkeypatch.setattr(np.linalg, "eigh", _flipping_eigh(np.linalg.eigh))
    _, X1, _ = tp_setup(d[x].dropna().to_numpy(dtype=float), 10)
    assert np.any(np.abs(X1 - X0) > 1e-3)  # the flip reached the basis
    np.testing.assert_allclose(np.abs(X1), np.abs(X0), atol=1e-10)
    m = LinearMixedModel(ref["formula"]).fit(d)
    assert m.reml_criterion_ == pytest.approx(ref["reml_criterion"], rel=1e-6)
    for part, r in zip(m.smooth_.smooths, ref["smooths"], strict=True):
        assert part.variance == pytest.approx(r["variance"], rel=1e-4)
        assert part.edf == pytest.approx(r["edf"], rel=1e-3)
        curve = m.smooth_.curve(np.array(r["grid"]), term=part.label)
        np.testing.assert_allclose(curve["fit"], r["fit"], rtol=1e-4)
    np.testing.assert_allclose(m.smooth_table_["F"], ref["s_table"]["F"], rtol=1e-3)


def test_qt_zeroes_the_leading_columns():
    A = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, -1.0, 0.5, 2.0, 0.0]])
    Q = _qt(A)
    np.testing.assert_allclose(Q.T @ Q, np.eye(5), atol=1e-14)
    AQ = A @ Q
    np.testing.assert_allclose(AQ[:, :3], 0.0, atol=1e-14)
    assert AQ[0, 3] == pytest.approx(0.0, abs=1e-14)  # reverse lower triangular


def test_too_many_unique_values_are_refused():
    x = np.arange(MAX_KNOTS + 1, dtype=float)
    with pytest.raises(InvalidParameterError, match='at most 2000 unique values .* bs="cr"'):
        tp_setup(x, 10)
