"""Property-based tests of surveys/scoring.py (hypothesis)."""

import numpy as np
import pandas as pd
from conftest import package_warnings
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from surveys._errors import SurveysWarning
from surveys.instruments import Instrument, ScaleKey
from surveys.scoring import reverse_score, score

SETTINGS = settings(max_examples=40, deadline=None)


def quiet_score(data, instrument, **kwargs):
    """Score; random small samples may leave reliability undefined.

    The package then warns with its own categories, never with numpy's RuntimeWarning.
    """
    with package_warnings() as records:  # any other warning (RuntimeWarning ...) fails
        result = score(data, instrument, **kwargs)
    assert all(issubclass(r.category, SurveysWarning) for r in records)
    return result


@st.composite
def ranges(draw):
    low = draw(st.integers(-3, 3))
    width = draw(st.integers(1, 9))
    return float(low), float(low + width)


@st.composite
def keyed_data(draw):
    """A random instrument (1-3 scales, 1-6 items each) and integer answers with gaps."""
    low, high = draw(ranges())
    scoring = draw(st.sampled_from(["mean", "sum"]))
    multiplier = draw(st.sampled_from([1.0, 4.0, 0.5]))
    n_scales = draw(st.integers(1, 3))
    scales, items = [], []
    for s in range(n_scales):
        k = draw(st.integers(1, 6))
        names = tuple(f"s{s}_q{i}" for i in range(k))
        flags = draw(st.lists(st.booleans(), min_size=k, max_size=k))
        reverse = tuple(name for name, flag in zip(names, flags, strict=True) if flag)
        scales.append(
            ScaleKey(
                name=f"s{s}",
                items=names,
                reverse=reverse,
                response_min=low,
                response_max=high,
                scoring=scoring,
                multiplier=multiplier,
            )
        )
        items.extend(names)
    ins = Instrument(
        name="random",
        title="random",
        items=tuple(items),
        response_min=low,
        response_max=high,
        scoring=scoring,
        scales=tuple(scales),
        grade="U",
        grade_notes="",
        sources=(),
        licence="",
        item_text={},
        derive={},
    )
    n = draw(st.integers(1, 12))
    cells = st.one_of(st.integers(int(low), int(high)).map(float), st.just(np.nan))
    rows = draw(
        st.lists(st.lists(cells, min_size=len(items), max_size=len(items)), min_size=n, max_size=n)
    )
    data = pd.DataFrame(rows, columns=list(items), dtype=float)
    data.insert(0, "id", [f"p{i}" for i in range(n)])
    return ins, data


options = st.fixed_dictionaries(
    {
        "min_valid": st.one_of(st.sampled_from([0.5, 0.8, 1.0]), st.integers(1, 4)),
        "prorate": st.booleans(),
        "impute": st.sampled_from([None, "item_mean", "item_median"]),
    }
)


@SETTINGS
@given(
    ranges(),
    st.lists(st.one_of(st.floats(0, 1), st.just(np.nan)), min_size=1, max_size=30),
)
def test_reversing_twice_is_identity(bounds, fractions):
    low, high = bounds
    x = np.array([low + f * (high - low) for f in fractions])
    twice = reverse_score(
        reverse_score(x, response_min=low, response_max=high), response_min=low, response_max=high
    )
    assert_allclose(twice, x, rtol=0, atol=1e-12)
    once = reverse_score(x, response_min=low, response_max=high)
    finite = np.isfinite(x)
    assert ((once[finite] >= low - 1e-12) & (once[finite] <= high + 1e-12)).all()


@SETTINGS
@given(keyed_data(), options)
def test_prereversed_answers_with_flipped_keys_give_the_same_scores(case, opts):
    # Reversing twice at the level of a whole key: reverse the answers of the reverse-keyed
    # items in the data, drop the reverse flags, and the scores must not change.
    ins, data = case
    flipped_data = data.copy()
    plain_scales = []
    for key in ins.scales:
        for item in key.reverse:
            flipped_data[item] = reverse_score(
                data[item], response_min=key.response_min, response_max=key.response_max
            )
        plain_scales.append(
            ScaleKey(
                name=key.name,
                items=key.items,
                reverse=(),
                response_min=key.response_min,
                response_max=key.response_max,
                scoring=key.scoring,
                multiplier=key.multiplier,
            )
        )
    plain = Instrument(**{**ins.__dict__, "scales": tuple(plain_scales)})
    a = quiet_score(data, ins, **opts).scores
    b = quiet_score(flipped_data, plain, **opts).scores
    assert_allclose(a["score"], b["score"], rtol=1e-12, atol=1e-12)
    assert a["n_answered"].tolist() == b["n_answered"].tolist()


@SETTINGS
@given(keyed_data(), options)
def test_scores_stay_in_the_declared_range(case, opts):
    ins, data = case
    result = quiet_score(data, ins, **opts)
    for key in ins.scales:
        got = result.scores.loc[result.scores["scale"] == key.name, "score"].dropna()
        low, high = key.score_range  # k x range x multiplier for sums, range x multiplier for means
        assert ((got >= low - 1e-9) & (got <= high + 1e-9)).all()


@SETTINGS
@given(keyed_data(), options, st.randoms(use_true_random=False))
def test_column_order_does_not_matter(case, opts, rnd):
    ins, data = case
    columns = list(data.columns)
    rnd.shuffle(columns)
    a = quiet_score(data, ins, **opts)
    b = quiet_score(data[columns], ins, **opts)
    pd.testing.assert_frame_equal(a.scores, b.scores)
    pd.testing.assert_frame_equal(a.missing, b.missing)
    pd.testing.assert_frame_equal(a.reliability, b.reliability)


@SETTINGS
@given(keyed_data(), options)
def test_inputs_are_never_mutated(case, opts):
    ins, data = case
    data = data.assign(wave="pre")
    before = data.copy()
    result = quiet_score(data, ins, wave_col="wave", **opts)
    pd.testing.assert_frame_equal(data, before)
    # nor does changing the result reach back into the input
    result.scores.loc[:, "score"] = -1.0
    pd.testing.assert_frame_equal(data, before)
