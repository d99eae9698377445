"""Latent R-squared and marginal means of OrdinalMixedModel against performance and emmeans.

Reference: tests/models/reference/ordinal_r2_emmeans.R (ordinal 2022.11, performance 0.10.2 with
insight 0.19.0, emmeans 1.8.4-1) on ordinal's wine (logit, probit, equidistant thresholds),
soup and the simulated random-slope design of clmm.R. The Laplace fits agree with clmm's to
about 1e-5 relative (tests/models/ordinal/test_ordinal_reference.py), so the R-squared ratios are
compared to 1e-4 absolute and the variances to 1e-4 relative. One module-scoped fit per model
serves both files' modules (models/ordinal/_r2.py and models/ordinal/_emmeans.py).
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import package_warnings

from models.lmm import MixedR2
from models.ordinal import OrdinalMixedModel
from models.ordinal._r2 import latent_variances

HERE = Path(__file__).resolve().parents[1]  # tests/models
REF = json.loads((HERE / "reference" / "ordinal_r2_emmeans.json").read_text())
DATA = {
    "wine": HERE.parent / "data" / "ordinal_wine.csv",
    "soup": HERE.parent / "data" / "ordinal_soup.csv",
    "slopes": HERE / "reference" / "clmm_slopes.csv",
}
TOL = 1e-4


@pytest.fixture(scope="module")
def fits():
    data = {k: pd.read_csv(v) for k, v in DATA.items()}
    out = {}
    with package_warnings() as caught:
        for case, r in REF["r2"].items():
            out[case] = OrdinalMixedModel(
                r["formula"], link=r["link"], threshold=r["threshold"]
            ).fit(data[r["data"]])
    assert not caught, [str(w.message) for w in caught]
    return out


@pytest.mark.parametrize("case", sorted(REF["r2"]))
def test_latent_r2_against_performance(fits, case):
    r = REF["r2"][case]
    result = fits[case].r2()
    assert isinstance(result, MixedR2)
    np.testing.assert_allclose(
        [result.nakagawa["marginal"], result.nakagawa["conditional"]],
        [r["marginal"], r["conditional"]],
        atol=TOL,
    )
    v = latent_variances(fits[case])
    np.testing.assert_allclose(
        [v["fixed"], v["random"], v["residual"]],
        [r["var_fixed"], r["var_random"], r["var_residual"]],
        rtol=TOL,
    )


def test_latent_r2_result_shape(fits):
    result = fits["wine_probit"].r2()
    d = result.to_dict()
    assert d["rights_sterba"] == {"total": {}, "within": {}, "between": {}}
    assert d["cluster"] == "judge" and "probit" in d["note"]
    frame = result.to_frame()
    assert list(frame["measure"]) == ["marginal", "conditional"]
    assert fits["soup_type"].r2().cluster == "RESP"


def test_r2_needs_a_fit():
    from models._errors import NotFittedError

    with pytest.raises(NotFittedError, match="r2"):
        OrdinalMixedModel("rating ~ temp + (1 | judge)").r2()


# ---------------------------------------------------------------------------------------------
# marginal means (models/ordinal/_emmeans.py) against emmeans 1.8.4-1 on clmm fits

EMM = REF["emmeans"]


def _means(fits, case):
    e = EMM[case]
    return fits[e["fit"]].emmeans(e["specs"], by=e["by"], mode=e["mode"])


def _check_bounds(got, ref, estimate):
    """Interval bounds to 1e-4 of ``|estimate| + 2 se``: a bound near 0 is a difference."""
    allowed = 1e-4 * (np.abs(np.asarray(ref[estimate])) + 2.0 * np.asarray(ref["se"]))
    for column in ("ci_low", "ci_high"):
        assert np.all(np.abs(got[column].to_numpy() - ref[column]) <= allowed), column


@pytest.mark.parametrize("case", sorted(EMM))
def test_marginal_means_against_emmeans(fits, case):
    """Means and SEs to 1e-4 relative: the fits agree with clmm's to about 1e-5."""
    e = EMM[case]
    table = _means(fits, case).to_frame()
    ref = e["means"]
    response = REF["r2"][e["fit"]]["formula"].split(" ~")[0]
    labels = (
        [e["specs"]] + ([response] if e["mode"] == "prob" else []) + ([e["by"]] * bool(e["by"]))
    )
    assert list(table.columns) == [*labels, "emmean", "se", "df", "ci_low", "ci_high"]
    for name in labels:
        assert [str(v) for v in table[name]] == ref[name], name
    for column in ("emmean", "se"):
        np.testing.assert_allclose(table[column], ref[column], rtol=1e-4, err_msg=column)
    _check_bounds(table, ref, "emmean")
    assert np.isinf(table["df"]).all()


@pytest.mark.parametrize("case", sorted(c for c in EMM if "contrasts" in EMM[c]))
def test_contrasts_against_emmeans(fits, case):
    e = EMM[case]
    got = _means(fits, case).contrasts(method=e["method"], adjust=e["adjust"]).to_frame()
    ref = e["contrasts"]
    # emmeans puts levels holding a minus sign in parentheses: "(Dry-mix) - Canned"
    names = [
        " - ".join(part.strip("()") for part in label.split(" - "))
        for label in np.atleast_1d(ref["contrast"])
    ]
    assert list(got["contrast"]) == names
    for column in ("estimate", "se", "statistic"):
        np.testing.assert_allclose(got[column], ref[column], rtol=1e-4, err_msg=column)
    _check_bounds(got, ref, "estimate")
    np.testing.assert_allclose(got["p_value"], ref["p_value"], rtol=1e-3, atol=1e-8)


def test_probabilities_sum_to_one_and_bad_mode(fits):
    from models._errors import InvalidParameterError

    table = fits["soup_type"].emmeans("SOUPTYPE", mode="prob").to_frame()
    np.testing.assert_allclose(table.groupby("SOUPTYPE")["emmean"].sum(), 1.0, rtol=1e-12)
    with pytest.raises(InvalidParameterError, match="mode"):
        fits["soup_type"].emmeans("SOUPTYPE", mode="mean.class")
    with pytest.raises(InvalidParameterError, match="specs"):
        fits["soup_type"].emmeans("AGE")
