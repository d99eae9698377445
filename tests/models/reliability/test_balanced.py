"""Tests of models.reliability._balanced: the closed-form components of balanced answers.

The nested design's closed form must be the REML optimum that the iterative fit
(models.LinearMixedModel, value ~ 1 + (1 | person/occasion)) reaches, and give way to that fit
when an estimate is not positive. The crossed ANOVA components are compared with psych in
test_multilevel_reliability.py, and so are the REML fits that start from crossed_start.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest
from numpy.testing import assert_allclose

from models import DataQualityWarning, SingularFitWarning, multilevel_reliability
from models.lmm import LinearMixedModel
from models.reliability._balanced import (
    crossed_anova_components,
    crossed_start,
    nested_reml_components,
)

REF = Path(__file__).resolve().parents[1] / "reference"
REFERENCE = json.loads((REF / "multilevel_reliability.json").read_text())
VALE_ITEMS = ["calm", "tense", "anxious", "nervous", "jittery", "relaxed"]


def _long(data: pd.DataFrame, id_col: str, wave_col: str, items: list[str]) -> pd.DataFrame:
    frame = data.melt(id_vars=[id_col, wave_col], value_vars=items, var_name="i", value_name="v")
    return pd.DataFrame(
        {
            "person": pd.factorize(frame[id_col], sort=True)[0],
            "occasion": pd.factorize(frame[wave_col], sort=True)[0],
            "item": pd.factorize(frame["i"])[0],
            "value": frame["v"].to_numpy(dtype=float),
        }
    )


DATA = Path(__file__).resolve().parents[2] / "data"


def _sets() -> dict[str, pd.DataFrame]:
    shrout = pd.read_csv(REF / "mlr_shrout.csv")
    vale = pd.read_csv(REF / "mlr_sai_vale.csv")
    vale = vale.loc[vale["id"].isin(REFERENCE["vale_balanced_ids"])]
    flat = pd.read_csv(DATA / "psychTools_sai_flat.csv")
    rim = pd.read_csv(DATA / "psychTools_sai_rim.csv")
    return {
        "shrout": _long(shrout, "Person", "Time", ["Item1", "Item2", "Item3"]),
        "sai_flat": _long(flat, "id", "time", ["tense", "anxious", "nervous", "jittery"]),
        "sai_rim": _long(rim, "id", "time", ["calm", "at.ease", "relaxed", "content"]),
        "vale_balanced": _long(vale, "id", "time", VALE_ITEMS),
    }


SETS = _sets()


def _reml(long: pd.DataFrame) -> dict[str, float]:
    frame = long.assign(
        person=long["person"].map("p{}".format), occasion=long["occasion"].map("t{}".format)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SingularFitWarning)
        model = LinearMixedModel("value ~ 1 + (1 | person/occasion)").fit(frame)
    table = model.random_.set_index("group")["variance"]
    return {
        "person": table["person"],
        "occasion_in_person": table["person:occasion"],
        "residual": table["Residual"],
    }


@pytest.mark.parametrize("name", ["shrout", "sai_flat", "sai_rim"])
def test_the_closed_form_is_the_reml_optimum(name):
    long = SETS[name]
    sizes = [int(long[c].max()) + 1 for c in ("person", "occasion", "item")]
    closed = nested_reml_components(long, *sizes)
    fitted = _reml(long)
    # the iterative fit stops within its tolerance of the optimum (about 1e-6 relative)
    for component, value in closed.items():
        assert value == pytest.approx(fitted[component], rel=1e-5)


def test_a_boundary_optimum_is_left_to_the_iterative_fit():
    # psych's balanced VALE subset: the ANOVA estimate of the occasion-within-person component
    # is negative, so REML puts it on the boundary, which only the iterative fit finds
    long = SETS["vale_balanced"]
    assert nested_reml_components(long, 67, 4, 6) is None
    data = pd.read_csv(REF / "mlr_sai_vale.csv")
    data = data.loc[data["id"].isin(REFERENCE["vale_balanced_ids"])]
    with warnings.catch_warnings(), pytest.warns(SingularFitWarning, match="occasion_in_person"):
        warnings.simplefilter("ignore", DataQualityWarning)  # a crossed component, not ours
        result = multilevel_reliability(data, id_col="id", wave_col="time", items=VALE_ITEMS)
    nested = result.components.query("design == 'nested'").set_index("component")["variance"]
    assert nested["occasion_in_person"] == 0.0
    fitted = _reml(long)
    assert_allclose(nested[["person", "residual"]], [fitted["person"], fitted["residual"]])


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_start_of_complete_answers_is_the_anova_solution(name):
    long = SETS[name]
    sizes = [int(long[c].max()) + 1 for c in ("person", "occasion", "item")]
    assert crossed_start(long, *sizes) == crossed_anova_components(long, *sizes)


def test_a_layout_with_fewer_than_half_its_cells_answered_gets_no_start():
    long = SETS["shrout"]
    sizes = [int(long[c].max()) + 1 for c in ("person", "occasion", "item")]
    assert crossed_start(long.iloc[: len(long) // 2], *sizes) is not None
    assert crossed_start(long.iloc[: len(long) // 2 - 1], *sizes) is None
