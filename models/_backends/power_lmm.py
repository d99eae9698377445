"""Simulation engine of :func:`models.power.simulate_power` for linear mixed models.

One :class:`LmmPowerJob` per grid point holds everything a worker needs: the template fit
(a :class:`models.lmm.LinearMixedModel` fitted once to the grid point's design), the true mean
``X beta``, the random-effects factors and the residual SD. A worker draws the response of
simulation ``i`` from its own seed, refits the template to it (the design matrices are reused and
the optimizer starts from the template's covariance parameters, whatever ran before on that
worker) and keeps the test of the term. The outcome of a simulation therefore depends only on the
job and ``i``.

Another engine (an ordinal one) plugs in with a job class of the same shape: ``n_sims``,
``run(start, stop) -> list[Outcome]``, built by a ``prepare`` function.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from models._errors import ModelsError

TESTS = ("satterthwaite", "lrt", "wald")
"""Tests of the fixed effect: lmerTest's t test, the likelihood-ratio test, the Wald z test."""


class Outcome(NamedTuple):
    """What one simulation gives back."""

    sim: int
    p_value: float
    estimate: float
    reason: str  # "" | "error" | "not_converged" | "singular"
    message: str


@dataclass(frozen=True)
class Truth:
    """Parameters a response is drawn from: ``y = mean + sum_b Z_b (L_b u_b)[codes] + sd e``."""

    mean: np.ndarray
    blocks: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]  # (codes, Z, L) per block
    residual_sd: float

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        """One response vector; the draws are taken block by block, then the residuals."""
        y = self.mean.copy()
        for codes, Z, L in self.blocks:
            n_levels = int(codes.max()) + 1 if codes.size else 0
            b = rng.standard_normal((n_levels, L.shape[0])) @ L.T
            y += np.einsum("ij,ij->i", Z, b[codes])
        y += self.residual_sd * rng.standard_normal(y.size)
        return y


def seed_sequence(entropy: int, grid: int, kind: int, i: int = 0) -> np.random.SeedSequence:
    """Return the seed of simulation ``i`` of grid point ``grid`` (``kind`` 1) or its design (0).

    Equal to ``SeedSequence(entropy).spawn(...)[grid].spawn(...)[kind].spawn(...)[i]``: the
    spawn key is the path, so a worker builds it without the parent's sequence.
    """
    key = (grid, kind, i) if kind == 1 else (grid, kind)
    return np.random.SeedSequence(entropy, spawn_key=key)


@dataclass
class LmmPowerJob:
    """One grid point: template fit(s), truth, the term and its test."""

    grid: int
    entropy: int
    n_sims: int
    template: Any  # LinearMixedModel
    null_template: Any  # LinearMixedModel fitted without the term (lrt), else None
    truth: Truth
    term: str
    test: str

    def run(self, start: int, stop: int) -> list[Outcome]:
        """Run simulations ``start .. stop - 1``."""
        return [self.one(i) for i in range(start, stop)]

    def one(self, i: int) -> Outcome:
        """Draw response ``i``, refit, test the term."""
        rng = np.random.default_rng(seed_sequence(self.entropy, self.grid, 1, i))
        y = self.truth.draw(rng)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                full = self.template.refit(y)
                null = self.null_template.refit(y) if self.null_template is not None else None
        except ModelsError as err:
            return Outcome(i, math.nan, math.nan, "error", str(err))
        fits = [full] if null is None else [full, null]
        row = full.fixed_.loc[full.fixed_["term"] == self.term].iloc[0]
        estimate = float(row["estimate"])
        if not all(m.converged_ for m in fits):
            bad = next(m for m in fits if not m.converged_)
            return Outcome(i, math.nan, estimate, "not_converged", bad.convergence_message_)
        if self.test == "satterthwaite":
            p = float(row["p_value"])
        elif self.test == "wald":
            p = float(2.0 * stats.norm.sf(abs(float(row["estimate"]) / float(row["se"]))))
        else:
            stat = max(0.0, 2.0 * (full.loglik_ - null.loglik_))
            p = float(stats.chi2.sf(stat, 1))
        if any(m.singular_ for m in fits):
            return Outcome(i, p, estimate, "singular", "boundary (singular) fit")
        return Outcome(i, p, estimate, "", "")


def truth_from_pilot(model: Any, design: Any, beta: np.ndarray) -> Truth:
    """Truth for a design of the pilot's form: its covariance factors and residual SD."""
    sigma = float(model.sigma_)
    blocks = tuple(
        (np.asarray(b.codes, dtype=np.intp), np.asarray(b.Z, dtype=float), sigma * T)
        for b, T in zip(design.random, model._Ts, strict=True)
    )
    return Truth(mean=design.X.to_numpy(dtype=float) @ beta, blocks=blocks, residual_sd=sigma)


def factor(cov: np.ndarray) -> np.ndarray:
    """Return ``L`` with ``L L' = cov`` (a symmetric square root; zero variances allowed)."""
    vals, vecs = np.linalg.eigh(cov)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


def truth_from_design(spec: Any, design: Any, beta: np.ndarray) -> Truth:
    """Truth for a generated design from the SDs and correlations of a design TOML."""
    blocks = []
    for b in design.random:
        entry = spec.random[b.group]
        sds = np.array([entry["sd"][t] for t in b.terms], dtype=float)
        corr = np.eye(len(b.terms))
        for t1, t2, r in entry["corr"]:
            if t1 in b.terms and t2 in b.terms:
                i, j = b.terms.index(t1), b.terms.index(t2)
                corr[i, j] = corr[j, i] = r
        cov = corr * np.outer(sds, sds)
        codes = np.asarray(b.codes, dtype=np.intp)
        blocks.append((codes, np.asarray(b.Z, dtype=float), factor(cov)))
    return Truth(
        mean=design.X.to_numpy(dtype=float) @ beta,
        blocks=tuple(blocks),
        residual_sd=float(spec.residual_sd),
    )


def without_term(design: Any, term: str) -> Any:
    """Leave the fixed-effect column ``term`` out of a design (the null model of the LRT)."""
    from dataclasses import replace

    return replace(design, X=design.X.drop(columns=[term]))
