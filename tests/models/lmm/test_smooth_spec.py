"""The s(...) terms of a LinearMixedModel formula: parsing and refusals (_smooth_spec.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from models._errors import FormulaError, InvalidParameterError
from models.lmm import LinearMixedModel
from models.lmm._smooth_spec import SmoothTerm, by_levels, split_smooth

ROOT = Path(__file__).resolve().parents[3]


def _sleep() -> pd.DataFrame:
    return pd.read_csv(ROOT / "tests/data/lme4_sleepstudy.csv")


def _orthodont() -> pd.DataFrame:
    return pd.read_csv(ROOT / "tests/data/nlme_Orthodont.csv")


def test_terms_are_taken_out_in_order():
    rest, terms = split_smooth('y ~ s(x1) + s(x2, bs="cr", k=6) + s(`x 3`, by=f) + f + (1 | g)')
    assert rest == "y ~ f + (1 | g)"
    assert terms == (
        SmoothTerm("x1", 10, "s(x1)"),
        SmoothTerm("x2", 6, 's(x2, bs="cr", k=6)', bs="cr"),
        SmoothTerm("x 3", 10, "s(`x 3`, by=f)", by="f"),
    )
    assert [t.label for t in terms] == ["s(x1)", "s(x2)", "s(x 3)"]
    assert split_smooth("y ~ s(x) + (1 | g)")[0] == "y ~ 1 + (1 | g)"
    assert split_smooth("y ~ x + (1 | g)") == ("y ~ x + (1 | g)", ())


def test_malformed_terms_are_refused():
    with pytest.raises(FormulaError, match="two smooths of 'Days'"):
        split_smooth('Reaction ~ s(Days, bs="cr", k=4) + s(Days, k=5) + (1 | Subject)')
    with pytest.raises(FormulaError, match="two smooths of 'age' by 'Sex'"):
        split_smooth("d ~ Sex + s(age, by=Sex) + s(age, by=Sex, k=4) + (1 | Subject)")
    with pytest.raises(FormulaError, match='must be bs="tp" .*, bs="cr" .*; got bs="ps"'):
        split_smooth('Reaction ~ s(Days, bs="ps") + (1 | Subject)')
    with pytest.raises(FormulaError, match="k must be a whole number from 4 to 20"):
        split_smooth("Reaction ~ s(Days, k=3) + (1 | Subject)")
    with pytest.raises(FormulaError, match="unknown argument"):
        split_smooth("Reaction ~ s(Days, m=2) + (1 | Subject)")
    with pytest.raises(FormulaError, match="a term of its own"):
        split_smooth("Reaction ~ s(Days):Subject + (1 | Subject)")
    with pytest.raises(FormulaError, match="is not a column name"):
        split_smooth("Reaction ~ s(Days, by=log(f)) + (1 | Subject)")


def test_bad_columns_are_refused():
    d = _sleep()
    with pytest.raises(
        InvalidParameterError, match="'Days' has 10 unique values, fewer than k = 12"
    ):
        LinearMixedModel('Reaction ~ s(Days, bs="cr", k=12) + (1 | Subject)').fit(d)
    with pytest.raises(InvalidParameterError, match="needs a numeric column; 'Subject'"):
        LinearMixedModel("Reaction ~ s(Subject, k=4) + (1 | Days)").fit(
            d.assign(Subject=d["Subject"].astype(str))
        )
    with pytest.raises(FormulaError, match="no random-effects term besides the smooth"):
        LinearMixedModel("Reaction ~ s(Days)").fit(d)


def test_by_needs_a_factor_and_its_main_effect():
    d = _orthodont()
    with pytest.raises(FormulaError, match="main effect must be in the formula .* add \\+ Sex"):
        LinearMixedModel("distance ~ s(age, by=Sex, k=4) + (1 | Subject)").fit(d)
    with pytest.raises(InvalidParameterError, match="by= must name a factor .* 'age' is int64"):
        LinearMixedModel("distance ~ age + s(age, by=age, k=4) + (1 | Subject)").fit(d)
    with pytest.raises(FormulaError, match="by= column 'Sexx' not in the data"):
        LinearMixedModel("distance ~ Sex + s(age, by=Sexx, k=4) + (1 | Subject)").fit(d)


def test_by_levels_follow_r():
    assert by_levels(pd.Series(["b", "a", None, "b"])) == ["a", "b"]
    cat = pd.Series(pd.Categorical(["lo", "hi"], categories=["mid", "lo", "hi"]))
    assert by_levels(cat) == ["lo", "hi"]


def test_factor_smooth_terms():
    rest, terms = split_smooth(
        "Reaction ~ s(Days, bs='cr', k=5) + s(Days, Subject, bs='fs', xt='cr', k=6)"
    )
    assert rest == "Reaction ~ 1"
    assert terms[1] == SmoothTerm(
        "Days", 6, "s(Days, Subject, bs='fs', xt='cr', k=6)", bs="cr", factor="Subject"
    )
    assert [t.label for t in terms] == ["s(Days)", "s(Days,Subject)"]
    listed = split_smooth('y ~ s(x, g, bs = "fs", xt = list(bs = "cr")) + (1 | h)')[1][0]
    assert (listed.factor, listed.bs, listed.k) == ("g", "cr", 10)


def test_factor_smooth_refusals():
    # the thin plate base (mgcv's default) is refused, naming the cubic regression spline
    for text in ('s(Days, Subject, bs="fs")', 's(Days, Subject, bs="fs", xt="tp")'):
        with pytest.raises(FormulaError, match=r"picked by rounding .* xt=\"cr\"\)"):
            split_smooth(f"Reaction ~ {text}")
    with pytest.raises(FormulaError, match="names its covariate, then its factor"):
        split_smooth('Reaction ~ s(Days, bs="fs", xt="cr")')
    with pytest.raises(FormulaError, match="takes no by="):
        split_smooth('Reaction ~ s(Days, Subject, bs="fs", xt="cr", by=g)')
    with pytest.raises(FormulaError, match="belong to a factor smooth"):
        split_smooth("Reaction ~ s(Days, Subject) + (1 | Subject)")
    with pytest.raises(FormulaError, match="belong to a factor smooth"):
        split_smooth('Reaction ~ s(Days, xt="cr") + (1 | Subject)')
    with pytest.raises(FormulaError, match="two smooths of 'Days' and 'Subject'"):
        split_smooth(
            'Reaction ~ s(Days, Subject, bs="fs", xt="cr") '
            '+ s(Days, Subject, bs="fs", xt="cr", k=4)'
        )
    d = _sleep()
    with pytest.raises(InvalidParameterError, match="the second column must be a factor .* 'Days'"):
        LinearMixedModel('Reaction ~ s(Days, Days, bs="fs", xt="cr")').fit(d)
    with pytest.raises(FormulaError, match="names a factor 'Subj' not in the data"):
        LinearMixedModel('Reaction ~ s(Days, Subj, bs="fs", xt="cr")').fit(d)
    # 18 subjects times k - 2 = 3 penalised columns: 54 random effects for 54 rows
    few = d[d["Days"] < 3].assign(Subject=lambda f: f["Subject"].astype(str))
    few = few.assign(Days=few["Days"] + (np.arange(len(few)) % 7) / 10)
    with pytest.raises(InvalidParameterError, match="not fewer than the 54 observations; reduce k"):
        LinearMixedModel('Reaction ~ s(Days, Subject, bs="fs", xt="cr", k=5)').fit(few)
