"""models.multilevel_reliability against psych::mlr (reference/multilevel_reliability.R)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from models import (
    DataQualityWarning,
    InvalidParameterError,
    MultilevelReliability,
    SingularFitWarning,
    multilevel_reliability,
)
from models.reliability.multilevel import (
    COEFFICIENT_COLUMNS,
    COEFFICIENTS,
    COMPONENT_COLUMNS,
    CROSSED_COMPONENTS,
    NESTED_COMPONENTS,
)

REF = Path(__file__).resolve().parents[1] / "reference"
REFERENCE = json.loads((REF / "multilevel_reliability.json").read_text())
RESULTS = {r["name"]: r for r in REFERENCE["results"]}
VALE_ITEMS = ["calm", "tense", "anxious", "nervous", "jittery", "relaxed"]


def _data(name: str) -> tuple[pd.DataFrame, str, str, list[str]]:
    if name.startswith("shrout"):
        data = pd.read_csv(REF / f"mlr_{name}.csv")
        return data, "Person", "Time", ["Item1", "Item2", "Item3"]
    if name.startswith("vale"):
        data = pd.read_csv(REF / "mlr_sai_vale.csv")
        # psych reverses "-calm" and "-relaxed" from the observed 1-4, the declared range here
        data[["calm", "relaxed"]] = 5 - data[["calm", "relaxed"]]
        if name == "vale_balanced":
            data = data.loc[data["id"].isin(REFERENCE["vale_balanced_ids"])]
        return data, "id", "time", VALE_ITEMS
    return pd.read_csv(REF / "mlr_negative.csv"), "id", "time", ["q1", "q2", "q3", "q4"]


def _fit(name: str) -> MultilevelReliability:
    data, id_col, wave_col, items = _data(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataQualityWarning)
        warnings.simplefilter("ignore", SingularFitWarning)
        return multilevel_reliability(data, id_col=id_col, wave_col=wave_col, items=items)


FITS = {name: _fit(name) for name in RESULTS}


def _component(result: MultilevelReliability, design: str, name: str) -> float:
    table = result.components
    chosen = (table["design"] == design) & (table["component"] == name)
    return float(table.loc[chosen, "variance"].iloc[0])


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_counts_and_method_match_psych(name):
    ref, row = RESULTS[name], FITS[name].coefficients.iloc[0]
    assert (row["n_persons"], row["n_occasions"], row["n_items"]) == (
        ref["n_persons"],
        ref["n_occasions"],
        ref["n_items"],
    )
    assert row["method"] == ref["method"]


@pytest.mark.parametrize("name", [n for n, r in RESULTS.items() if r["method"] == "anova"])
def test_anova_components_and_coefficients_match_psych(name):
    ref, result = RESULTS[name], FITS[name]
    for component in CROSSED_COMPONENTS:
        assert_allclose(
            _component(result, "crossed", component),
            ref["crossed"][component],
            rtol=1e-10,
            atol=1e-14,
        )
    for coefficient in ("RkF", "R1R", "RkR", "Rc"):
        assert_allclose(result[coefficient], ref[coefficient], rtol=1e-10)


@pytest.mark.parametrize("name", [n for n, r in RESULTS.items() if r["method"] == "reml"])
def test_reml_components_and_coefficients_match_psych_lmer(name):
    ref, result = RESULTS[name], FITS[name]
    # psych calls lme4 with its default stopping rule: agreement to 1e-5 here, asserted at 1e-3
    for component in CROSSED_COMPONENTS:
        assert_allclose(
            _component(result, "crossed", component),
            ref["crossed"][component],
            rtol=1e-3,
            atol=1e-6,
        )
    for coefficient in ("RkF", "R1R", "RkR", "Rc"):
        assert_allclose(result[coefficient], ref[coefficient], rtol=1e-3)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_nested_components_match_psych_lme(name):
    ref, result = RESULTS[name], FITS[name]
    # psych reads nlme's VarCorr as printed (7 significant digits) after nlme's own stopping
    # rule; REML agreement to 1e-3 as for lmer
    for component in NESTED_COMPONENTS:
        assert_allclose(
            _component(result, "nested", component), ref["nested"][component], rtol=1e-3
        )
    for coefficient in ("RkRn", "Rcn"):
        assert_allclose(result[coefficient], ref[coefficient], rtol=1e-3)


def test_negative_component_is_kept_flagged_and_warned():
    data, id_col, wave_col, items = _data("negative")
    with pytest.warns(DataQualityWarning, match="negative ANOVA variance"):
        result = multilevel_reliability(data, id_col=id_col, wave_col=wave_col, items=items)
    table = result.components
    flagged = table.loc[table["negative"], "component"].tolist()
    assert flagged == ["occasion"]
    assert _component(result, "crossed", "occasion") < 0
    assert any("negative ANOVA" in note for note in result.notes)
    assert "negative ANOVA" in result.summary()


def test_reml_boundary_component_is_noted():
    data, id_col, wave_col, items = _data("shrout_missing")
    with pytest.warns(SingularFitWarning, match="person_x_item"):
        result = multilevel_reliability(data, id_col=id_col, wave_col=wave_col, items=items)
    assert _component(result, "crossed", "person_x_item") == 0
    assert "4 answers missing" in result.meta["methods"][0]
    assert "4 missing answer(s) left out" in result.notes
    assert "by REML (lme4's model; 4 answers missing)" in result.summary()


def test_long_and_wide_input_agree():
    data, id_col, wave_col, items = _data("vale_all")
    long = data.melt(id_vars=[id_col, wave_col], value_vars=items, var_name="q", value_name="a")
    result = multilevel_reliability(
        long, id_col=id_col, wave_col=wave_col, format="long", item_col="q", value_col="a"
    )
    wide = FITS["vale_all"]
    assert_allclose(
        result.coefficients[list(COEFFICIENTS)].to_numpy(dtype=float),
        wide.coefficients[list(COEFFICIENTS)].to_numpy(dtype=float),
        rtol=1e-10,
    )
    balanced, *_ = _data("shrout")
    long = balanced.melt(id_vars=["Person", "Time"], var_name="item", value_name="value")
    result = multilevel_reliability(long, id_col="Person", wave_col="Time", format="long")
    assert_allclose(
        result.components["variance"], FITS["shrout"].components["variance"], rtol=1e-10, atol=1e-12
    )


def test_reml_on_balanced_data_agrees_with_anova_when_every_component_is_positive():
    data, id_col, wave_col, items = _data("vale_balanced")
    reml = multilevel_reliability(
        data, id_col=id_col, wave_col=wave_col, items=items, method="reml"
    )
    assert reml.coefficients["method"].iloc[0] == "reml"
    # the REML optimum of balanced data is the ANOVA solution when no estimate is negative
    assert_allclose(
        reml.components["variance"], FITS["vale_balanced"].components["variance"], rtol=1e-4
    )


def test_result_protocol_and_columns():
    result = FITS["shrout"]
    assert list(result.coefficients.columns) == COEFFICIENT_COLUMNS
    assert list(result.components.columns) == COMPONENT_COLUMNS
    assert repr(result).startswith("MultilevelReliability(5 persons x 4 occasions x 3 items, ANOVA")
    assert result.to_frame().equals(result.coefficients)
    as_dict = result.to_dict()
    assert as_dict["tables"]["coefficients"][0]["RkF"] == pytest.approx(RESULTS["shrout"]["RkF"])
    assert "only 5 persons" in result.summary()
    assert result.meta["balanced"] is True and result.meta["method"] == "anova"


def test_input_is_not_modified():
    data, id_col, wave_col, items = _data("shrout_missing")
    before = data.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        multilevel_reliability(data, id_col=id_col, wave_col=wave_col, items=items)
    pd.testing.assert_frame_equal(data, before)


@pytest.mark.parametrize(
    ("change", "options", "match"),
    [
        (lambda d: d.assign(Item1=d["Item1"].astype(str)), {}, r"\['Item1'\].*not numeric"),
        (lambda d: d.assign(Item2=np.where(d.index == 3, np.inf, d["Item2"])), {}, "infinite"),
        (lambda d: pd.concat([d, d.iloc[[0]]]), {}, r"more than once \(id 1\)"),
        (lambda d: d.drop(columns="Time"), {}, r"no column\(s\) \['Time'\]"),
        (lambda d: d.loc[d["Time"] == 1], {}, "at least two occasions"),
        (lambda d: d.loc[d["Time"] == d["Person"] % 2 + 1], {}, "answering at two or more"),
        (lambda d: d, {"method": "mle"}, "'auto', 'anova' or 'reml'"),
        (lambda d: d, {"format": "tidy"}, "'wide' or 'long'"),
        (
            lambda d: d.assign(Item1=np.where(d.index == 0, np.nan, d["Item1"])),
            {"method": "anova"},
            "59 of 60 answers",
        ),
    ],
)
def test_bad_input_is_refused(change, options, match):
    data, id_col, wave_col, items = _data("shrout")
    with pytest.raises(InvalidParameterError, match=match):
        multilevel_reliability(
            change(data), id_col=id_col, wave_col=wave_col, items=items, **options
        )


def test_text_answers_raise_a_type_error():
    data, *_ = _data("shrout")
    with pytest.raises(TypeError, match="Item3"):
        multilevel_reliability(
            data.assign(Item3="x"),
            id_col="Person",
            wave_col="Time",
            items=["Item1", "Item2", "Item3"],
        )
