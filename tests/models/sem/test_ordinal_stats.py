"""ordinal_sample_stats against lavaan 0.6-14's WLSMV sample statistics (reference/wlsmv_stats.R).

Six cases from real data: psychTools' ``sai`` study FLAT (12 four-point items, 167 complete
participants), study RIM (8 items, 334), the FLAT items recoded to binary (a zero cell in 31 of
the 66 2 x 2 tables), the FLAT items with a category left out in the middle of one item,
every FLAT participant under pairwise deletion (170, three incomplete), and geepack's
``respdis`` (one three-point item at four visits, 111 patients). No public data set with
five-point items at several waves ships with the installed R packages, so none is here.

Tolerances. Thresholds are closed-form in both programs: 1e-12. lavaan fits each polychoric
correlation with ``nlminb``, which stops when a step changes the estimate by less than its
default ``x.tol`` (1.5e-8, relative); ours are solved to rounding, and the two differ by up to
2e-8: 1e-7. ``gamma`` and the DWLS weights inherit that through the correlations (up to 1e-7
relative): 1e-6; given lavaan's correlations, the asymptotic covariance agrees to 1e-9.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from models import InvalidParameterError
from models.sem._ordinal_stats import _gamma, _prepare, ordinal_sample_stats, sparse_categories

HERE = Path(__file__).resolve().parents[1]  # tests/models: its reference/ and ../data
DATA = HERE.parent / "data"
REF = json.loads((HERE / "reference" / "wlsmv_stats.json").read_text(encoding="utf-8"))
CASES = REF["cases"]

TH_TOL = 1e-12
RHO_TOL = 1e-7
GAMMA_RTOL = 1e-6


def _wide(file: str) -> pd.DataFrame:
    """Reshape a long file (id, time, items) to wide ``item.time``, items within time."""
    long = pd.read_csv(DATA / file)
    items = [c for c in long.columns if c not in ("id", "time")]
    wide = long.pivot(index="id", columns="time", values=items)
    order = [(item, t) for t in sorted(long["time"].unique()) for item in items]
    wide = wide[order]
    wide.columns = [f"{item}.{t}" for item, t in order]
    return wide.reset_index(drop=True)


def _case_data(name: str) -> pd.DataFrame:
    if name == "rim":
        return _wide("psychTools_sai_rim.csv")
    if name == "respdis":
        return _wide("geepack_respdis.csv")
    if name == "flat_pairwise":
        return _wide("psychTools_sai_flat_all.csv")
    flat = _wide("psychTools_sai_flat.csv")
    if name == "flat_top":
        return (flat == 4).astype(np.int64)
    if name == "flat_gap":
        flat.loc[flat["tense.1"] == 3, "tense.1"] = 4
    return flat


@pytest.fixture(scope="module")
def stats():
    return {
        name: ordinal_sample_stats(_case_data(name), missing=case["missing"])
        for name, case in CASES.items()
    }


@pytest.mark.parametrize("name", list(CASES))
def test_names_counts_and_levels(stats, name):
    s, ref = stats[name], CASES[name]
    assert s.names == tuple(ref["names"])
    assert s.n == ref["n"]
    assert s.n_dropped == 0
    assert s.missing == ref["missing"]
    for item, lev in zip(s.names, s.levels, strict=True):
        assert_array_equal(lev, ref["levels"][item])


@pytest.mark.parametrize("name", list(CASES))
def test_thresholds(stats, name):
    s, ref = stats[name], CASES[name]
    assert len(s.thresholds) == len(ref["thresholds"])
    for ours, theirs in zip(s.thresholds, ref["thresholds"], strict=True):
        assert_allclose(ours, theirs, rtol=0, atol=TH_TOL)


@pytest.mark.parametrize("name", list(CASES))
def test_polychoric_correlations(stats, name):
    s, ref = stats[name], CASES[name]
    assert_allclose(s.polychoric, ref["polychoric"], rtol=0, atol=RHO_TOL)
    assert_array_equal(np.diag(s.polychoric), 1.0)
    assert_array_equal(s.polychoric, s.polychoric.T)


@pytest.mark.parametrize("name", list(CASES))
def test_wls_obs_in_lavaan_order(stats, name):
    s, ref = stats[name], CASES[name]
    assert s.labels == tuple(ref["wls_obs_names"])
    n_th = s.n_thresholds
    assert_allclose(s.wls_obs[:n_th], ref["wls_obs"][:n_th], rtol=0, atol=TH_TOL)
    assert_allclose(s.wls_obs[n_th:], ref["wls_obs"][n_th:], rtol=0, atol=RHO_TOL)


@pytest.mark.parametrize("name", list(CASES))
def test_gamma(stats, name):
    gamma = np.array(CASES[name]["gamma"])
    ours = stats[name].gamma
    assert ours.shape == gamma.shape
    # entries near zero are compared on the scale of the matrix
    assert_allclose(ours, gamma, rtol=GAMMA_RTOL, atol=GAMMA_RTOL * np.abs(gamma).max())
    assert_allclose(ours, ours.T, rtol=1e-12, atol=1e-12 * np.abs(gamma).max())


@pytest.mark.parametrize("name", list(CASES))
def test_gamma_at_lavaans_correlations(name):
    """Stage 3 alone: given lavaan's own correlations, its NACOV to rounding."""
    case = CASES[name]
    prep = _prepare(_case_data(name), case["missing"])
    rho = np.array(case["wls_obs"][sum(t.size for t in prep.thresholds) :])
    gamma = np.array(case["gamma"])
    got = _gamma(prep.codes, prep.thresholds, prep.pairs, rho)
    assert_allclose(got, gamma, rtol=1e-9, atol=1e-12 * np.abs(gamma).max())


@pytest.mark.parametrize("name", list(CASES))
def test_dwls_weights(stats, name):
    assert_allclose(stats[name].wls_v, CASES[name]["wls_v"], rtol=GAMMA_RTOL)


@pytest.mark.parametrize("name", list(CASES))
def test_index_helpers_follow_lavaan_labels(stats, name):
    s = stats[name]
    for pos, label in enumerate(CASES[name]["wls_obs_names"]):
        if "|t" in label:
            item, th = label.split("|t")
            assert s.threshold_index(item, int(th)) == pos
        else:
            first, second = label.split("~~")
            assert s.correlation_index(first, second) == pos
            assert s.correlation_index(second, first) == pos


def test_listwise_deletion_of_incomplete_participants():
    """Every FLAT participant, listwise: the 167 complete ones, as in the complete-data file."""
    full = ordinal_sample_stats(_wide("psychTools_sai_flat_all.csv"))
    complete = ordinal_sample_stats(_wide("psychTools_sai_flat.csv"))
    assert (full.n, full.n_dropped) == (CASES["flat"]["n"], 3)
    assert_allclose(full.wls_obs, complete.wls_obs, rtol=1e-12, atol=1e-14)
    assert_allclose(full.gamma, complete.gamma, rtol=1e-10, atol=1e-12)


def test_nullable_integer_columns_read_as_float_codes():
    data = _wide("psychTools_sai_flat_all.csv")
    nullable = data.astype("Int64")
    assert nullable.isna().to_numpy().sum() == 3
    a = ordinal_sample_stats(nullable, missing="pairwise")
    b = ordinal_sample_stats(data, missing="pairwise")
    assert_array_equal(a.wls_obs, b.wls_obs)
    assert_array_equal(a.gamma, b.gamma)


def test_pairwise_differs_from_listwise():
    data = _wide("psychTools_sai_flat_all.csv")
    pairwise = ordinal_sample_stats(data, missing="pairwise")
    listwise = ordinal_sample_stats(data, missing="listwise")
    assert not np.allclose(pairwise.thresholds[0], listwise.thresholds[0], rtol=0, atol=1e-6)
    assert_allclose(listwise.thresholds[0], CASES["flat"]["thresholds"][0], atol=TH_TOL)


def test_index_helpers_refuse_unknown_items(stats):
    s = stats["flat"]
    with pytest.raises(InvalidParameterError, match="no item 'calm'"):
        s.threshold_index("calm", 1)
    with pytest.raises(InvalidParameterError, match="thresholds 1 to 3; got 4"):
        s.threshold_index("tense.1", 4)
    with pytest.raises(InvalidParameterError, match="twice"):
        s.correlation_index("tense.1", "tense.1")


# -- input errors ---------------------------------------------------------------------------


@pytest.fixture
def flat():
    return _wide("psychTools_sai_flat.csv")


def test_non_integer_answer_names_the_column(flat):
    flat = flat.astype(float)
    flat.loc[5, "nervous.2"] = 2.5
    with pytest.raises(InvalidParameterError, match=r"'nervous\.2' holds 2\.5"):
        ordinal_sample_stats(flat)


def test_text_column_names_the_column(flat):
    flat["jittery.3"] = flat["jittery.3"].astype(str)
    with pytest.raises(InvalidParameterError, match=r"\['jittery\.3'\] are not numeric"):
        ordinal_sample_stats(flat)


def test_single_category_column_names_the_column(flat):
    flat["anxious.2"] = 2
    with pytest.raises(InvalidParameterError, match=r"'anxious\.2' has 1 observed category"):
        ordinal_sample_stats(flat)


def test_category_only_in_dropped_rows_names_the_column():
    data = _wide("psychTools_sai_flat_all.csv")
    incomplete = data.isna().any(axis=1).to_numpy()
    data.loc[data["tense.1"] == 4, "tense.1"] = 3
    data.loc[np.flatnonzero(incomplete)[0], "tense.1"] = 4
    with pytest.raises(InvalidParameterError, match=r"'tense\.1' chose category 4"):
        ordinal_sample_stats(data)
    # pairwise keeps the row, and the category with it
    assert ordinal_sample_stats(data, missing="pairwise").thresholds[0].size == 3


def test_perfectly_associated_binary_items_are_refused(flat):
    data = pd.DataFrame({"a": (flat["tense.1"] > 2).astype(int)})
    data["b"] = data["a"]
    with pytest.raises(InvalidParameterError, match="perfectly associated"):
        ordinal_sample_stats(data)


@pytest.mark.parametrize(
    ("data", "kwargs", "message"),
    [
        ("not a frame", {}, "must be a pandas DataFrame"),
        (pd.DataFrame({"a": [1, 2, 1]}), {}, "at least two item columns"),
        (pd.DataFrame({"a": [1, 2], "b": [2, 1]}), {"missing": "ml"}, "must be one of"),
        (pd.DataFrame({"a": [1, np.nan], "b": [np.nan, 1]}), {}, "no row is left"),
    ],
)
def test_bad_arguments(data, kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        ordinal_sample_stats(data, **kwargs)


# -- sparse categories ----------------------------------------------------------------------


def _counts(name: str) -> dict[str, dict[int, int]]:
    ref = CASES[name]
    return {
        item: dict(zip(ref["levels"][item], ref["counts"][item], strict=True))
        for item in ref["names"]
    }


def test_sparse_categories_default_lists_only_empty_categories(flat):
    assert sparse_categories(flat, categories=range(1, 5)) == []
    gap = _case_data("flat_gap")
    assert sparse_categories(gap, categories=range(1, 5)) == [("tense.1", 3, 0)]


@pytest.mark.parametrize("min_count", [5, 10])
def test_sparse_categories_counts(flat, min_count):
    counts = _counts("flat")
    expected = [
        (item, c, counts[item][c])
        for item in flat.columns
        for c in range(1, 5)
        if counts[item][c] < min_count
    ]
    assert expected  # the FLAT items have categories chosen by fewer than 5 people
    assert sparse_categories(flat, categories=range(1, 5), min_count=min_count) == expected


def test_sparse_categories_declared_range_wider_than_answers():
    data = _wide("geepack_respdis.csv")
    counts = _counts("respdis")
    got = sparse_categories(data, categories=[1, 2, 3, 4], min_count=20)
    expected = []
    for item in data.columns:
        expected += [(item, c, counts[item][c]) for c in (1, 2, 3) if counts[item][c] < 20]
        expected.append((item, 4, 0))
    assert got == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"categories": range(1, 4)}, r"'tense\.1' holds 4, outside the declared categories"),
        ({"categories": []}, "categories must be integers"),
        ({"categories": [1.5, 2]}, "categories must be integers"),
        ({"categories": range(1, 5), "min_count": 0}, "min_count.*must be an integer >= 1"),
    ],
)
def test_sparse_categories_bad_arguments(flat, kwargs, message):
    with pytest.raises(InvalidParameterError, match=message):
        sparse_categories(flat, **kwargs)
