"""Simulation engine of :func:`models.power.simulate_power` for cumulative link mixed models.

The job has the shape of :class:`models.power._lmm.LmmPowerJob`: a template
:class:`models.ordinal.OrdinalMixedModel` fitted once to the grid point's design, the truth to
draw from, the term and its test. A response is drawn on the latent scale,
``X beta + Z b + e`` with ``e`` logistic (logit link) or standard normal (probit), and cut at the
true thresholds into categories ``1 .. J``; the template is refitted to it through the ordinal
engine's own reuse (same design matrices; the optimizer starts from the template's estimates).
The tests are the Wald z of the coefficient and the likelihood-ratio test against the model
without it, as for ``ordinal::clmm`` fits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from models.power._lmm import (
    Outcome,
    add_random_effects,
    design_blocks,
    refit_outcome,
    seed_sequence,
)

TESTS = ("wald", "lrt")
"""Tests of a coefficient of the ordinal model (no denominator df: a z test or the LRT)."""


@dataclass(frozen=True)
class OrdinalTruth:
    """Parameters a response is drawn from: latent ``mean + Z b + e``, cut at ``cutpoints``."""

    mean: np.ndarray
    blocks: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]  # (codes, Z, L) per block
    cutpoints: np.ndarray
    link: str

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """Category codes ``1 .. J`` (floats); random effects block by block, then the errors."""
        latent = add_random_effects(self.mean, self.blocks, rng)
        if self.link == "logit":
            latent += rng.logistic(size=latent.size)
        else:
            latent += rng.standard_normal(latent.size)
        # category j when cut[j-1] < latent <= cut[j]: P(Y <= j) = F(cut_j - eta)
        return np.searchsorted(self.cutpoints, latent, side="left").astype(float) + 1.0


def truth_from_pilot(model: Any, design: Any, beta: np.ndarray) -> OrdinalTruth:
    """Truth for a design of the pilot's form: its thresholds and covariance factors."""
    blocks = tuple(
        (np.asarray(b.codes, dtype=np.intp), np.asarray(b.Z, dtype=float), np.asarray(T))
        for b, T in zip(design.random, model._Ts, strict=True)
    )
    return OrdinalTruth(
        mean=fixed_matrix(design) @ beta,
        blocks=blocks,
        cutpoints=np.asarray(model.cutpoints_, dtype=float),
        link=str(model.link),
    )


def truth_from_design(spec: Any, design: Any, beta: np.ndarray) -> OrdinalTruth:
    """Truth for a generated design from the SDs, correlations and thresholds of a design TOML."""
    return OrdinalTruth(
        mean=fixed_matrix(design) @ beta,
        blocks=design_blocks(spec, design),
        cutpoints=np.asarray(spec.thresholds, dtype=float),
        link=spec.link,
    )


def fixed_names(design: Any) -> list[str]:
    """Fixed-effect columns of an ordinal model: the thresholds take the place of an intercept."""
    return [str(c) for c in design.X.columns if str(c) != "Intercept"]


def fixed_matrix(design: Any) -> np.ndarray:
    """Return the model matrix without the intercept column."""
    return design.X[fixed_names(design)].to_numpy(dtype=float)


@dataclass
class OrdinalPowerJob:
    """One grid point of an ordinal power analysis (see :mod:`models.power._lmm`)."""

    quick = True  # a simulation is short beside a worker's start (models.parallel)

    grid: int
    entropy: int
    n_sims: int
    template: Any  # OrdinalMixedModel
    null_template: Any  # fitted without the term (lrt), else None
    truth: OrdinalTruth
    term: str
    test: str

    def run(self, start: int, stop: int) -> list[Outcome]:
        """Run simulations ``start .. stop - 1``."""
        return [self.one(i) for i in range(start, stop)]

    def response(self, i: int) -> np.ndarray:
        """Draw the category codes of simulation ``i``."""
        return self.truth.draw(np.random.default_rng(seed_sequence(self.entropy, self.grid, 1, i)))

    def one(self, i: int) -> Outcome:
        """Draw response ``i``, refit, test the term."""
        return refit_outcome(
            i,
            self.response(i),
            self.template,
            self.null_template,
            self.term,
            self.test,
            refit="_refit_response",
        )
