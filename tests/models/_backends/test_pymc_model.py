"""Tests of models/_backends/pymc_model.py's padded levels: the bucket sizes, one model for the
level counts of a bucket, a log density that factorises exactly into the unpadded model's and
the padding's standard normals, and a fit (PyMC's own sampler) none of whose outputs has a
padding level. nutpie's single compilation for two level counts of one bucket, and its padded
against its unpadded posterior, are checked in tests/models/bayes/test_bayes_slow.py."""

import json
import math
import warnings

import numpy as np
import pandas as pd
from scipy import special, stats

from models._backends import pymc_model as pmod
from models._backends.samplers import MODEL_CACHE, import_pymc
from models._errors import SamplingWarning
from models.bayes import BayesianMixedModel, default_priors
from models.formula import build_design, parse_formula

FORMULA = "rating ~ trait + week + (1 + week | participant) + (1 | story)"


def simulate(seed, *, n_person, n_story, per_person=5):
    """Crossed ordinal ratings 1-5: a person trait, a week slope, person and story effects."""
    rng = np.random.default_rng(seed)
    cut = np.array([-2.0, -0.7, 0.5, 1.8])
    trait = rng.normal(size=n_person)
    u0 = rng.normal(0.0, 0.8, n_person)
    s0 = rng.normal(0.0, 0.5, n_story)
    rows = []
    for p in range(n_person):
        for k, st in enumerate(rng.choice(n_story, per_person, replace=False)):
            eta = 0.8 * trait[p] + 0.3 * k / 2 + u0[p] + s0[st]
            pr = np.diff(np.concatenate([[0.0], special.expit(cut - eta), [1.0]]))
            rows.append((f"p{p:02d}", f"s{st:02d}", trait[p], k / 2, rng.choice(5, p=pr) + 1))
    return pd.DataFrame(rows, columns=["participant", "story", "trait", "week", "rating"])


def _inputs(data, formula=FORMULA):
    design = build_design(parse_formula(formula), data)
    return pmod.prepare_inputs(design, family="ordinal", link="logit", where="test")


# ------------------------------------------------------------------------------- bucket sizes


def test_padded_levels_exact_up_to_16_then_four_sizes_per_doubling():
    assert [pmod.padded_levels(n) for n in range(1, 17)] == list(range(1, 17))
    # ceil(16 * 2 ** (k / 4)): the grid's first sizes, and the simulated studies' story counts
    grid = sorted({pmod.padded_levels(n) for n in range(17, 130)})
    assert grid == [20, 23, 27, 32, 39, 46, 54, 64, 77, 91, 108, 128, 153]
    assert {pmod.padded_levels(n) for n in (435, 445, 457, 512)} == {512}
    assert pmod.padded_levels(513) == 609
    n = np.arange(1, 20_001)
    padded = np.array([pmod.padded_levels(int(k)) for k in n])
    assert np.all(padded >= n) and np.all(np.diff(padded) >= 0)
    # at most 2 ** (1/4) - 1 = 18.9 % more levels than the data have
    assert padded.max() <= 20_001 * 2**0.25 and np.max(padded / n) <= 2**0.25 + 1e-12
    assert all(pmod.padded_levels(int(p)) == p for p in np.unique(padded))


def test_level_counts_of_one_bucket_share_one_structure():
    priors = default_priors("ordinal", "logit")
    a = simulate(1, n_person=18, n_story=17)
    b = simulate(2, n_person=20, n_story=19)
    c = simulate(3, n_person=21, n_story=19)
    key = pmod.model_structure(_inputs(a), priors)
    assert pmod.model_structure(_inputs(b), priors) == key
    assert pmod.model_structure(_inputs(c), priors) != key  # 21 participants: the next bucket
    small = simulate(4, n_person=12, n_story=15)
    fewer = small[small["participant"] != "p00"]
    assert pmod.model_structure(_inputs(fewer), priors) != pmod.model_structure(
        _inputs(small), priors
    )


def test_padding_labels_never_repeat_a_level():
    data = simulate(1, n_person=18, n_story=17)
    data.loc[data["participant"] == "p00", "participant"] = "(padding 18)"
    block = _inputs(data).random[0]
    labels = pmod._level_coords(block)
    assert len(labels) == 20 and len(set(labels)) == 20
    assert labels[:18] == [str(v) for v in block.levels]


def test_padded_log_density_is_the_unpadded_one_plus_standard_normals(monkeypatch):
    """Exactly: the padding rows of ``z`` enter the density as N(0, 1) terms and nowhere else."""
    import_pymc()
    inputs = _inputs(simulate(1, n_person=18, n_story=17))
    priors = default_priors("ordinal", "logit")
    padded = pmod.build_pymc_model(inputs, priors)
    monkeypatch.setattr(pmod, "padded_levels", lambda n: n)
    plain = pmod.build_pymc_model(inputs, priors)
    assert padded["z_0"].eval().shape == (20, 2) and plain["z_0"].eval().shape == (18, 2)
    rng = np.random.default_rng(5)
    point = {k: rng.normal(0.0, 0.5, np.shape(v)) for k, v in padded.initial_point().items()}
    point["cutpoints_z_ordered__"] = np.array([-1.0, -0.5, 0.0, -0.3])
    cut = {k: (v[:18] if k == "z_0" else v[:17] if k == "z_1" else v) for k, v in point.items()}
    extra = np.concatenate([point["z_0"][18:].ravel(), point["z_1"][17:].ravel()])
    logp_padded = padded.compile_logp(mode="FAST_COMPILE")(point)
    logp_plain = plain.compile_logp(mode="FAST_COMPILE")(cut)
    # PyMC stores log(2 pi) / 2 as a rounded constant: agreement to ~1e-8, not 1e-15
    np.testing.assert_allclose(
        logp_padded - logp_plain, stats.norm.logpdf(extra).sum(), rtol=1e-7, atol=1e-8
    )


# ------------------------------------------------------------------------------- a padded fit

CROSSED = "rating ~ trait + week + (1 | participant) + (1 | story)"
DRAWS = 40


def test_no_output_of_a_fit_by_pymc_has_a_padding_level():
    """18 participants and 17 stories, both blocks built with 20 levels, sampled by PyMC's own
    NUTS (nutpie's padded fits are checked in test_bayes_slow.py)."""
    data = simulate(1, n_person=18, n_story=17)
    kw = dict(sampler="pymc", draws=DRAWS, tune=DRAWS, chains=1, seed=3, progressbar=False)
    MODEL_CACHE.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplingWarning)  # so few draws fail the gate
        fit = BayesianMixedModel(CROSSED, **kw).fit(data)
    key = pmod.model_structure(_inputs(data, CROSSED), default_priors("ordinal", "logit"))
    built = MODEL_CACHE.get(key, lambda: None).model
    assert len(built.coords["level_0"]) == len(built.coords["level_1"]) == 20
    people = sorted(data["participant"].unique())
    stories = sorted(data["story"].unique())
    for post in (fit.posterior_, fit.idata_.posterior):
        assert list(post["level_0"].values) == people
        assert list(post["level_1"].values) == stories
        assert post["z_0"].shape[2:] == (18, 1) and post["re_1"].shape[2:] == (17, 1)
    assert fit.idata_.log_likelihood["y"].shape[2] == len(data)
    assert fit.groups_ == {"participant": 18, "story": 17}
    effects = fit.group_effects()
    assert sorted(effects.loc[effects["group"] == "participant", "level"].unique()) == people
    assert sorted(effects.loc[effects["group"] == "story", "level"].unique()) == stories
    assert len(effects) == 18 + 17
    assert list(fit.random_effects()["group"]) == ["participant", "story"]
    assert np.isfinite(fit.summary_[["estimate", "se"]].to_numpy()).all()
    newcomer = data.head(3).assign(participant="newcomer")
    proba = fit.predict_proba(pd.concat([data.head(3), newcomer], ignore_index=True))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert fit.linear_predictor().shape == (DRAWS, len(data))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pareto k of so few draws
        assert math.isfinite(fit.loo().elpd_loo)
    text = json.dumps(fit.to_dict(), default=str) + str(fit)
    assert "padding" not in text
