"""The exact derivatives of the profiled deviance (models/lmm/_analytic.py).

Against lmerTest 3.1-3: the Satterthwaite df computed from the exact Hessian at lme4's own
``theta`` (tests/models/reference/lmm.json, fits converged by BOBYQA at rhoend 1e-10) equal
lmerTest's, which differentiates the deviance numerically, to 1e-6 relative on all 14 reference
fits; the deviance there equals lme4's criterion. Against finite differences of the deviance
itself: the gradient and Hessian, on and off the optimum, in both evaluation routes.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_lmm_reference import CASES, DATASETS, r_term

import models.lmm._analytic as analytic
import models.lmm._newton as newton
from models import SingularFitWarning
from models.lmm import LinearMixedModel
from models.lmm._satterthwaite import richardson, satterthwaite_df

HERE = Path(__file__).resolve().parents[1]  # tests/models: its reference/ and ../data
REF = json.loads((HERE / "reference" / "lmm.json").read_text())


@pytest.fixture(scope="module")
def fitted():
    data = {k: pd.read_csv(v) for k, v in DATASETS.items()}
    return {
        case: LinearMixedModel(formula, reml=reml).fit(data[ds])
        for case, (ds, formula, reml) in CASES.items()
    }


def evaluator(model):
    design = model.design_
    return analytic.ProfiledDeviance(
        design.X.to_numpy(dtype=float),
        [(b.codes, b.Z) for b in design.random],
        reml=bool(model.reml),
    )


def finite_differences_agree(pdv, theta, suff):
    """Check the exact gradient and Hessian at ``theta`` against Richardson's differences."""
    ev = pdv.evaluate(theta, suff)

    def deviance(th):
        return np.array([pdv.evaluate(th, suff, order=0).deviance])

    _, grad, hess = richardson(deviance, theta, d=0.01, r=4)
    scale = max(1.0, float(np.max(np.abs(ev.hessian))))
    np.testing.assert_allclose(ev.gradient, grad[:, 0], atol=1e-6 * scale)
    np.testing.assert_allclose(ev.hessian, hess[:, :, 0], atol=1e-6 * scale)
    return ev, scale


def lme4_theta(model, r_theta):
    """lme4's theta (terms ordered by decreasing number of levels) in our block order."""
    blocks = model.design_.random
    sizes = [b.Z.shape[1] * (b.Z.shape[1] + 1) // 2 for b in blocks]
    levels = [int(b.codes.max()) + 1 for b in blocks]
    order = sorted(range(len(blocks)), key=lambda i: -levels[i])  # stable, as R's order()
    r_theta = np.atleast_1d(np.asarray(r_theta, dtype=float))
    chunks, at = {}, 0
    for i in order:
        chunks[i] = r_theta[at : at + sizes[i]]
        at += sizes[i]
    return np.concatenate([chunks[i] for i in range(len(blocks))])


@pytest.mark.parametrize("case", sorted(CASES))
def test_satterthwaite_df_equal_lmertest_at_lme4s_theta(case, fitted):
    model, ref = fitted[case], REF["fits"][case]
    pdv = evaluator(model)
    theta = lme4_theta(model, ref["theta"])
    ev = pdv.evaluate(theta, pdv.sufficient(model.design_.y))
    criterion = ref["reml_criterion"] if model.reml else ref["deviance"]
    assert ev.deviance == pytest.approx(criterion, rel=1e-10)
    assert ev.sigma == pytest.approx(ref["sigma"], rel=1e-9)
    df = satterthwaite_df(ev.varpar, np.eye(ev.beta.size))
    names = [str(c) for c in model.design_.X.columns]
    want = dict(zip(map(r_term, ref["fixed"]["term"]), ref["fixed"]["df"], strict=True))
    np.testing.assert_allclose(df, [want[n] for n in names], rtol=1e-6)


@pytest.mark.parametrize("case", ["crossed_slope_reml", "crossed_slope_ml", "nested_reml"])
@pytest.mark.parametrize("shift", [0.0, 0.07])
def test_gradient_and_hessian_equal_finite_differences(case, shift, fitted, monkeypatch):
    model = fitted[case]
    pdv = evaluator(model)
    suff = pdv.sufficient(model.design_.y)
    theta = np.asarray(model.theta_, dtype=float) + shift
    ev, scale = finite_differences_agree(pdv, theta, suff)
    # the route through Z'Z (used near the boundary) gives the same numbers
    monkeypatch.setattr(analytic, "DIRECT", np.inf)
    other = evaluator(model).evaluate(theta, suff)
    np.testing.assert_allclose(other.hessian, ev.hessian, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(other.varpar.hessian, ev.varpar.hessian, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(other.varpar.jacobian, ev.varpar.jacobian, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_newton_reaches_the_fit_from_a_distant_start(case, fitted):
    """From theta doubled, Newton's method ends at the fit's deviance and estimates."""
    model = fitted[case]
    pdv = evaluator(model)
    suff = pdv.sufficient(model.design_.y)
    start = newton.off_boundary(2.0 * np.asarray(model.theta_) + 0.1, pdv)
    ev = newton.newton(pdv, suff, start)
    assert ev is not None
    criterion = model.reml_criterion_ if model.reml else model.deviance_
    assert ev.deviance <= criterion + 1e-8 * abs(criterion)
    np.testing.assert_allclose(ev.beta, model.beta_.to_numpy(), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ev.theta, model.theta_, rtol=1e-4, atol=1e-5)


def test_a_variance_at_zero_is_reached_as_an_ordinary_minimum():
    """With no story variance in the data, the story scale goes to 0 without a second optimizer,
    and the fit equals mixedlm's (which ends at the bound)."""
    rng = np.random.default_rng(5)
    n_p, n_s = 30, 15
    rows = pd.DataFrame(
        [(p, s) for p in range(n_p) for s in rng.choice(n_s, 8, replace=False)],
        columns=["participant", "story"],
    )
    rows["x"] = rng.standard_normal(len(rows))
    u = rng.standard_normal(n_p) * 0.8
    rows["y"] = 1.0 + 0.3 * rows["x"] + u[rows["participant"]] + rng.standard_normal(len(rows))
    with pytest.warns(SingularFitWarning, match="'story' estimated at 0"):
        model = LinearMixedModel("y ~ x + (1 | participant) + (1 | story)").fit(rows)
    pdv = evaluator(model)
    ev = newton.newton(pdv, pdv.sufficient(model.design_.y), np.array([0.5, 0.5]))
    assert ev is not None
    assert model.singular_ and abs(ev.theta[1]) < 1e-4 <= ev.theta[0]
    assert ev.deviance <= model.reml_criterion_ + 1e-8
    np.testing.assert_allclose(ev.beta, model.beta_.to_numpy(), rtol=1e-6)


def test_both_routes_agree_just_above_the_switch(fitted, monkeypatch):
    """At a diagonal just above DIRECT the route through Lambda^-1 keeps its precision."""
    model = fitted["crossed_slope_reml"]
    theta = np.asarray(model.theta_, dtype=float).copy()
    theta[2] = 1.5 * analytic.DIRECT  # the slope's diagonal in the rater block
    pdv = evaluator(model)
    suff = pdv.sufficient(model.design_.y)
    scaled = pdv.evaluate(theta, suff)
    monkeypatch.setattr(analytic, "DIRECT", np.inf)
    direct = evaluator(model).evaluate(theta, suff)
    scale = float(np.max(np.abs(direct.hessian)))
    np.testing.assert_allclose(scaled.gradient, direct.gradient, atol=1e-7 * scale)
    np.testing.assert_allclose(scaled.hessian, direct.hessian, atol=1e-7 * scale)
    np.testing.assert_allclose(
        scaled.varpar.jacobian, direct.varpar.jacobian, rtol=1e-7, atol=1e-12
    )


def test_large_designs_are_left_to_the_sparse_evaluator():
    codes = np.arange(2000) % 1000
    one = (codes, np.ones((2000, 1)))
    assert analytic.dense_enough([one])  # one block of 1,000 levels: block diagonal
    other = (np.arange(2000) % 600, np.ones((2000, 1)))
    assert not analytic.dense_enough([one, other])  # 600 columns left dense
    assert analytic.dense_enough([(np.arange(2000) % 300, np.ones((2000, 1))), one])
    assert not analytic.dense_enough([(np.arange(4000) % 2000, np.ones((4000, 1)))])


@pytest.mark.parametrize("reml", [True, False])
@pytest.mark.parametrize("items_first", [True, False])
def test_a_correlated_block_beside_many_items_has_exact_derivatives(reml, items_first, monkeypatch):
    """The study's shape: a correlated intercept and slope by person kept dense, with items
    (more columns) eliminated, in either order of the blocks; ML and REML."""
    rng = np.random.default_rng(11)
    n = 360
    person, item = rng.integers(0, 24, n), rng.integers(0, 70, n)
    x = rng.normal(size=n)
    X = np.column_stack([np.ones(n), x, rng.normal(size=n)])
    y = X @ [1.0, 0.3, -0.2] + rng.normal(size=n)
    blocks = [(person, np.column_stack([np.ones(n), x])), (item, np.ones((n, 1)))]
    theta = np.array([0.8, 0.25, 0.4, 0.6])
    if not items_first:
        blocks, theta = blocks[::-1], np.r_[theta[3], theta[:3]]
    pdv = analytic.ProfiledDeviance(X, blocks, reml=reml)
    assert pdv.blocks[pdv.first].n == 70  # the items are eliminated
    suff = pdv.sufficient(y)
    ev, scale = finite_differences_agree(pdv, theta, suff)
    monkeypatch.setattr(analytic, "DIRECT", np.inf)
    other = analytic.ProfiledDeviance(X, blocks, reml=reml).evaluate(theta, suff)
    np.testing.assert_allclose(other.hessian, ev.hessian, rtol=1e-9, atol=1e-9 * scale)
    np.testing.assert_allclose(other.varpar.jacobian, ev.varpar.jacobian, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("direct", [False, True])  # the route through Lambda^-1, or Z'Z's
def test_products_by_item_size_equal_the_products_over_items(direct, monkeypatch):
    """Items rated by two to four persons: the Schur complement and P'P summed once per size
    (one matrix per distinct size) give the derivatives of the products over every item."""
    rng = np.random.default_rng(12)
    sizes = rng.integers(2, 5, 150)
    item = np.repeat(np.arange(150), sizes)
    n = item.size
    person = rng.integers(0, 24, n)
    x = rng.normal(size=n)
    X = np.column_stack([np.ones(n), x])
    y = X @ [1.0, 0.3] + rng.normal(size=n)
    blocks = [(person, np.column_stack([np.ones(n), x])), (item, np.ones((n, 1)))]
    if direct:
        monkeypatch.setattr(analytic, "DIRECT", np.inf)
    pdv = analytic.ProfiledDeviance(X, blocks, reml=True)
    assert len(pdv.grouped.sizes) == 3 and pdv.gram_by_size
    suff = pdv.sufficient(y)
    thetas = [np.array([0.8, 0.25, 0.4, 0.6]), np.array([0.8, 0.25, 0.4, 5e-4])]
    ev, scale = finite_differences_agree(pdv, thetas[0], suff)
    evs = [ev, pdv.evaluate(thetas[1], suff)]  # near zero: beyond the differences' reach
    monkeypatch.setattr(analytic._Grouped, "of", classmethod(lambda cls, *a: None))
    plain = analytic.ProfiledDeviance(X, blocks, reml=True)
    assert plain.grouped is None and not plain.gram_by_size
    for theta, ev in zip(thetas, evs, strict=True):
        other = plain.evaluate(theta, suff)
        assert other.deviance == pytest.approx(ev.deviance, rel=1e-12)
        np.testing.assert_allclose(other.gradient, ev.gradient, rtol=1e-9, atol=1e-9 * scale)
        np.testing.assert_allclose(other.hessian, ev.hessian, rtol=1e-9, atol=1e-9 * scale)
        np.testing.assert_allclose(other.varpar.hessian, ev.varpar.hessian, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(other.varpar.jacobian, ev.varpar.jacobian, rtol=1e-9, atol=1e-12)
