"""Marginal means and contrasts of LinearMixedModel (models/lmm/_emmeans.py) against emmeans.

Reference: tests/models/reference/lmm_r2_emmeans.R (emmeans 1.8.4-1 with lmerTest 3.1-3 for
Satterthwaite df and pbkrtest 0.5.2 for Kenward-Roger) on nlme::Orthodont (``age * Sex``, and
age as a factor ``agef``) and datasets::ChickWeight (``Time * Diet``, also by Time at 10 and
20). Tolerances: means, estimates and standard errors 1e-5 relative, df 1e-3 relative (lmerTest's
numerical Hessian), p-values 1e-4 absolute, interval bounds 1e-4 standard errors.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_r2 import load

from models._errors import InvalidParameterError
from models.lmm import LinearMixedModel
from models.lmm._emmeans import CONTRAST_COLUMNS, EMMEANS_COLUMNS, contrast_matrix

HERE = Path(__file__).resolve().parents[1]  # tests/models
REF = json.loads((HERE / "reference" / "lmm_r2_emmeans.json").read_text())["emmeans"]
_FITS: dict[str, LinearMixedModel] = {}


def _fit(name, formula):
    key = f"{name.split('_')[0]}:{formula}"
    if key not in _FITS:
        _FITS[key] = LinearMixedModel(formula).fit(load(name))
    return _FITS[key]


def _as_list(value):
    return [] if value is None else [value] if isinstance(value, str) else list(value)


@pytest.fixture(scope="module", params=sorted(REF))
def case(request):
    r = REF[request.param]
    fit = _fit(request.param, r["formula"])
    at = {k: list(np.atleast_1d(v)) for k, v in (r["at"] or {}).items()}
    means = fit.emmeans(r["specs"], by=r["by"], ddf=r["df"], at=at or None)
    return means, r


def _same_labels(got, expected):
    for g, e in zip(got, expected, strict=True):
        if isinstance(g, float):
            assert g == pytest.approx(float(e), rel=1e-12)
        else:
            assert str(g) == e


def test_marginal_means_against_emmeans(case):
    means, r = case
    frame = means.to_frame()
    names = _as_list(r["specs"]) + _as_list(r["by"])
    assert list(frame.columns) == names + EMMEANS_COLUMNS
    for name in names:
        _same_labels(frame[name], r["emmeans"][name])
    e = r["emmeans"]
    np.testing.assert_allclose(frame["emmean"], e["emmean"], rtol=1e-5)
    np.testing.assert_allclose(frame["se"], e["se"], rtol=1e-5)
    np.testing.assert_allclose(frame["df"], e["df"], rtol=1e-3)
    se = frame["se"].to_numpy()
    np.testing.assert_allclose(frame["ci_low"], e["ci_low"], rtol=0, atol=1e-4 * se.max())
    np.testing.assert_allclose(frame["ci_high"], e["ci_high"], rtol=0, atol=1e-4 * se.max())


def test_contrasts_against_emmeans(case):
    means, r = case
    for key, c in r["contrasts"].items():
        frame = means.contrasts(method=c["method"], adjust=c["adjust"]).to_frame()
        by = _as_list(r["by"])
        assert list(frame.columns) == ["contrast", *by, *CONTRAST_COLUMNS], key
        assert list(frame["contrast"]) == c["contrast"], key
        for name in by:
            _same_labels(frame[name], c[name])
        np.testing.assert_allclose(frame["estimate"], c["estimate"], rtol=1e-5, err_msg=key)
        np.testing.assert_allclose(frame["se"], c["se"], rtol=1e-5, err_msg=key)
        np.testing.assert_allclose(frame["df"], c["df"], rtol=1e-3, err_msg=key)
        np.testing.assert_allclose(frame["statistic"], c["statistic"], rtol=1e-5, err_msg=key)
        np.testing.assert_allclose(frame["p_value"], c["p_value"], rtol=0, atol=1e-4, err_msg=key)
        tol = 1e-4 * frame["se"].max()
        np.testing.assert_allclose(frame["ci_low"], c["ci_low"], rtol=0, atol=tol, err_msg=key)
        np.testing.assert_allclose(frame["ci_high"], c["ci_high"], rtol=0, atol=tol, err_msg=key)


def test_pairs_is_pairwise_with_tukey():
    r = REF["orthodont_sex/satterthwaite"]
    means = _fit("orthodont_sex", r["formula"]).emmeans("Sex")
    pairs = means.pairs()
    assert pairs.adjust == "tukey" and pairs.method == "pairwise"
    pd.testing.assert_frame_equal(pairs.to_frame(), means.contrasts().to_frame())


def test_poly_coefficients_are_emmeans_integers():
    C, names = contrast_matrix("poly", ["a", "b", "c", "d"])
    assert names == ["linear", "quadratic", "cubic"]
    np.testing.assert_array_equal(C, [[-3, -1, 1, 3], [1, -1, -1, 1], [-1, 3, -3, 1]])


def test_mvt_and_tukey_for_non_pairwise_are_refused():
    r = REF["chick_diet/satterthwaite"]
    means = _fit("chick_diet", r["formula"]).emmeans("Diet")
    with pytest.raises(InvalidParameterError, match="mvt"):
        means.contrasts(method="consec", adjust="mvt")
    with pytest.raises(InvalidParameterError, match="pairwise"):
        means.contrasts(method="consec", adjust="tukey")
    assert means.contrasts(method="consec").adjust == "holm"


def test_bad_specs_are_named():
    r = REF["orthodont_sex/satterthwaite"]
    fit = _fit("orthodont_sex", r["formula"])
    with pytest.raises(InvalidParameterError, match="Subject"):
        fit.emmeans("Subject")
    with pytest.raises(InvalidParameterError, match="levels"):
        fit.emmeans("Sex", at={"Sex": ["Other"]})
    with pytest.raises(InvalidParameterError, match="ddf"):
        fit.emmeans("Sex", ddf="asymptotic")
