"""R-squared of LinearMixedModel (models/lmm/_r2.py) against r2mlm 0.3.8 and performance 0.10.2.

Reference: tests/models/reference/lmm_r2_emmeans.R on lme4::sleepstudy, nlme::Orthodont and
datasets::ChickWeight, with person-mean-centred predictors (``x_w``, ``x_b``) and without. The
measures are ratios of variance parts at the REML estimates; both fits agree to about 1e-6, so
the measures are compared to 1e-4 absolute (R prints 15 significant digits).
"""

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import CentringWarning, InvalidParameterError, NotFittedError
from models.lmm import LinearMixedModel, cluster_levels
from models.lmm._r2 import MEASURES, R2_COLUMNS, classify

HERE = Path(__file__).resolve().parents[1]  # tests/models
DATA = HERE.parents[0] / "data"
REF = json.loads((HERE / "reference" / "lmm_r2_emmeans.json").read_text())
TOL = 1e-4


def _centre(data, x, g):
    mean = data.groupby(g)[x].transform("mean")
    return data.assign(**{f"{x}_w": data[x] - mean, f"{x}_b": mean})


def load(case):
    """The data set of a reference case, as the R script prepares it."""
    if case.startswith("sleep"):
        return _centre(pd.read_csv(DATA / "lme4_sleepstudy.csv"), "Days", "Subject")
    if case.startswith("orthodont"):
        d = pd.read_csv(DATA / "nlme_Orthodont.csv")
        d["agef"] = pd.Categorical(d["age"], categories=[8, 10, 12, 14])
        return _centre(d, "age", "Subject")
    d = pd.read_csv(DATA / "datasets_ChickWeight.csv")
    d["Diet"] = pd.Categorical(d["Diet"].astype(str), categories=["1", "2", "3", "4"])
    return _centre(d, "Time", "Chick")


@pytest.fixture(scope="module", params=sorted(REF["r2"]))
def case(request):
    r = REF["r2"][request.param]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CentringWarning)
        fit = LinearMixedModel(r["formula"]).fit(load(request.param))
        result = fit.r2()
    return request.param, result, r


def test_rights_sterba_against_r2mlm(case):
    _, result, r = case
    got = result.to_dict()["rights_sterba"]
    for part in ("total", "within", "between"):
        assert set(got[part]) == set(r["rights_sterba"][part]), part
        for name, value in r["rights_sterba"][part].items():
            assert got[part][name] == pytest.approx(value, abs=TOL), (part, name)


def test_nakagawa_against_performance(case):
    _, result, r = case
    got = result.to_dict()["nakagawa"]
    assert got["marginal"] == pytest.approx(r["nakagawa"]["marginal"], abs=TOL)
    assert got["conditional"] == pytest.approx(r["nakagawa"]["conditional"], abs=TOL)


def test_frame_holds_every_measure_once(case):
    _, result, r = case
    frame = result.to_frame()
    assert list(frame.columns) == R2_COLUMNS
    n_rs = sum(len(v) for v in r["rights_sterba"].values())
    assert len(frame) == n_rs + 2
    assert not frame.duplicated(["decomposition", "measure"]).any()
    assert set(frame["measure"]) <= set(MEASURES) | {"marginal", "conditional"}
    total = frame[frame["decomposition"] == "total"].set_index("measure")["value"]
    assert total["fvm"] == pytest.approx(total["fv"] + total["m"], abs=1e-12)


def test_uncentred_predictor_is_named_with_the_centring_advice():
    d = load("orthodont_raw")
    fit = LinearMixedModel("distance ~ age * Sex + (age | Subject)").fit(d)
    with pytest.warns(CentringWarning, match="age"):
        result = fit.r2()
    out = result.to_dict()
    assert out["predictors"]["both"] == ["age", "age:Sex[T.Male]"]
    assert out["predictors"]["between"] == ["Sex[T.Male]"]
    assert "x - the cluster mean" in out["note"]
    assert out["rights_sterba"]["within"] == {} and out["rights_sterba"]["between"] == {}


def test_centred_predictors_are_classified():
    d = load("orthodont_centred")
    fit = LinearMixedModel("distance ~ age_w * Sex + (age_w | Subject)").fit(d)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CentringWarning)
        out = fit.r2().to_dict()
    assert out["predictors"] == {
        "within": ["age_w", "age_w:Sex[T.Male]"],
        "between": ["Sex[T.Male]"],
        "both": [],
    }
    assert out["note"] == "" and out["cluster"] == "Subject"


def test_classify_columns():
    codes = np.array([0, 0, 1, 1])
    x = np.column_stack([[-1.0, 1.0, -2.0, 2.0], [3.0, 3.0, 5.0, 5.0], [1.0, 2.0, 3.0, 5.0]])
    assert classify(x, codes, 2) == ["within", "between", "both"]


def test_two_grouping_factors_give_nakagawa_only():
    crossed = pd.read_csv(HERE / "reference" / "lmm_crossed.csv")
    fit = LinearMixedModel("y ~ x + (1 | rater) + (1 | target)").fit(crossed)
    out = fit.r2().to_dict()
    assert out["rights_sterba"] == {"total": {}, "within": {}, "between": {}}
    assert "one grouping factor" in out["note"]
    assert 0 < out["nakagawa"]["marginal"] < out["nakagawa"]["conditional"] < 1


def test_r2_needs_a_fit():
    with pytest.raises(NotFittedError):
        LinearMixedModel("y ~ x + (1 | g)").r2()


def test_cluster_levels_names_what_r2_would_split():
    d = load("orthodont_centred").assign(Male=lambda x: (x["Sex"] == "Male").astype(float))
    levels = cluster_levels(d, columns=["age", "age_w", "age_b", "Male"], cluster="Subject")
    assert levels == {"age": "both", "age_w": "within", "age_b": "between", "Male": "between"}
    fit = LinearMixedModel("distance ~ age + Male + (1 | Subject)").fit(d)
    with pytest.warns(CentringWarning):
        assert fit.r2().both == ("age",)


@pytest.mark.parametrize(
    ("columns", "match"),
    [(["nope"], "no column"), (["Sex"], "numeric without missing values")],
)
def test_cluster_levels_refuses_bad_columns(columns, match):
    d = load("orthodont_centred")
    with pytest.raises(InvalidParameterError, match=match):
        cluster_levels(d, columns=columns, cluster="Subject")


def test_nakagawa_parts_add_up_to_its_ratios(case):
    _, result, r = case
    parts = result.variances
    total = parts["fixed"] + sum(parts["random"].values()) + parts["residual"]
    assert parts["fixed"] / total == pytest.approx(r["nakagawa"]["marginal"], abs=TOL)
    assert 1 - parts["residual"] / total == pytest.approx(r["nakagawa"]["conditional"], abs=TOL)
    assert result.to_dict()["variances"] == parts
