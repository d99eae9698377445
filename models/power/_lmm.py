"""Simulation engine of :func:`models.power.simulate_power` for linear mixed models.

One :class:`LmmPowerJob` per grid point holds everything a worker needs: the template fit
(a :class:`models.lmm.LinearMixedModel` fitted once to the grid point's design), the true mean
``X beta``, the random-effects factors and the residual SD. A worker draws the response of
simulation ``i`` from its own seed, refits the template to it (the design matrices are reused and
the optimizer starts from the same covariance parameters, whatever ran before on that worker) and
keeps the test of the term. The outcome of a simulation therefore depends only on the job and
``i``. Every test refits by Newton's method on the profiled deviance with its exact derivatives
(:class:`AnalyticRefit`, through :mod:`models.lmm.engine`), from the true covariance parameters
moved off the boundary; the Satterthwaite df come from the same derivatives. Where Newton's
method does not settle (or the design is too large for the dense evaluator) the simulation is
refitted by :class:`FastRefit`, which gives the numbers of ``LinearMixedModel.refit`` without
building the whole fitted model, or by ``refit`` itself.

Another engine (an ordinal one) plugs in with a job class of the same shape: ``n_sims``,
``run(start, stop) -> list[Outcome]``, built by a ``prepare`` function.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from scipy import special

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
        y = add_random_effects(self.mean, self.blocks, rng)
        y += self.residual_sd * rng.standard_normal(y.size)
        return y

    def theta(self) -> np.ndarray:
        """Return the true covariance parameters as lme4's ``theta`` (relative, column-major).

        Each block's covariance over the residual variance, as a lower-triangular factor with a
        non-negative diagonal (:func:`lower_factor`): the centre around which the refits'
        optima scatter, and so the start of every Newton refit.
        """
        from models.lmm.engine import lower_entries

        out = []
        for _, _, L in self.blocks:
            T = lower_factor(L @ L.T / self.residual_sd**2)
            out.append(T[lower_entries(T.shape[0])])
        return np.concatenate(out) if out else np.zeros(0)


def lower_factor(cov: np.ndarray) -> np.ndarray:
    """Return the lower-triangular ``T`` with ``T T' = cov`` for a positive semi-definite ``cov``.

    Cholesky's columns in turn; a column whose pivot is zero (a variance at zero, or a
    variance explained by the columns before it) is left at zero.
    """
    k = cov.shape[0]
    T = np.zeros((k, k))
    for j in range(k):
        pivot = cov[j, j] - T[j, :j] @ T[j, :j]
        if pivot <= 1e-12 * max(1.0, abs(cov[j, j])):
            continue
        T[j, j] = np.sqrt(pivot)
        T[j + 1 :, j] = (cov[j + 1 :, j] - T[j + 1 :, :j] @ T[j, :j]) / T[j, j]
    return T


def add_random_effects(
    mean: np.ndarray,
    blocks: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...],
    rng: np.random.Generator,
) -> np.ndarray:
    """Return ``mean + sum_b Z_b (L_b u_b)[codes]`` with ``u_b`` standard normal, block by block."""
    y = mean.copy()
    for codes, Z, L in blocks:
        n_levels = int(codes.max()) + 1 if codes.size else 0
        b = rng.standard_normal((n_levels, L.shape[0])) @ L.T
        y += np.einsum("ij,ij->i", Z, b[codes])
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

    quick = True  # a simulation is short beside a worker's start (models.parallel)

    grid: int
    entropy: int
    n_sims: int
    template: Any  # LinearMixedModel
    null_template: Any  # LinearMixedModel fitted without the term (lrt), else None
    truth: Truth
    term: str
    test: str

    def __getstate__(self) -> dict[str, Any]:
        """Plain arrays for the Newton refits; the fitted templates as bytes.

        A worker unpickles the templates (and imports mixedlm and pandas) only when a
        simulation falls back to a mixedlm refit, so it starts with NumPy and SciPy's linear
        algebra alone.
        """
        import pickle

        state = dict(self.__dict__)
        state.pop("_fast", None)  # native objects: rebuilt where the job runs
        state.pop("_analytic", None)
        inputs = state.pop("_analytic_inputs", False)
        if inputs is False:
            inputs = AnalyticRefit.inputs_from(
                self.template, self.null_template, self.term, self.test, self.truth.theta()
            )
        state["_analytic_inputs"] = inputs
        for name in ("template", "null_template"):
            if name in state:
                state[f"_{name}_bytes"] = pickle.dumps(state.pop(name), pickle.HIGHEST_PROTOCOL)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # the evaluator is built on first use, inside the batch, where BLAS is held to one
        # thread: a product taken threaded can differ in its last bits, and every simulation
        # would then differ from the same simulation run in this process
        self.__dict__.update(state)

    def __getattr__(self, name: str) -> Any:
        # the templates of an unpickled job, loaded on first use (a fallback refit)
        if name in ("template", "null_template"):
            import pickle

            data = self.__dict__.get(f"_{name}_bytes")
            if data is not None:
                value = pickle.loads(data)
                self.__dict__[name] = value
                return value
        raise AttributeError(name)

    def run(self, start: int, stop: int) -> list[Outcome]:
        """Run simulations ``start .. stop - 1``."""
        return [self.one(i) for i in range(start, stop)]

    def response(self, i: int) -> np.ndarray:
        """Draw the response of simulation ``i``."""
        return self.truth.draw(np.random.default_rng(seed_sequence(self.entropy, self.grid, 1, i)))

    def one(self, i: int) -> Outcome:
        """Draw response ``i``, refit, test the term."""
        y = self.response(i)
        analytic = self.__dict__.get("_analytic", False)
        if analytic is False:
            inputs = self.__dict__.get("_analytic_inputs", False)
            if inputs is False:
                inputs = AnalyticRefit.inputs_from(
                    self.template, self.null_template, self.term, self.test, self.truth.theta()
                )
            analytic = None if inputs is None else AnalyticRefit.from_inputs(*inputs)
            self.__dict__["_analytic"] = analytic
        if analytic is not None:
            outcome = analytic.test(i, y)
            if outcome is not None:
                return outcome
        if self.test != "lrt":
            fast = self.__dict__.get("_fast")
            if fast is None:
                fast = self.__dict__["_fast"] = FastRefit(self.template, self.term)
            outcome = fast.test(i, y, wald=self.test == "wald")
            if outcome is not None:
                return outcome
        return self.slow(i, y)

    def slow(self, i: int, y: np.ndarray) -> Outcome:
        """Refit through :meth:`LinearMixedModel.refit` and test the term."""
        return refit_outcome(
            i, y, self.template, self.null_template, self.term, self.test, refit="refit"
        )


def refit_outcome(
    i: int,
    y: np.ndarray,
    template: Any,
    null_template: Any,
    term: str,
    test: str,
    *,
    refit: str,
) -> Outcome:
    """Refit the template (and the null model) to ``y`` and test ``term``.

    ``refit`` names the template's method taking the new response. The p value is the fit's
    own (Satterthwaite t for the linear model), the Wald z from the estimate and its standard
    error, or the likelihood-ratio chi-square on 1 df against the null template.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = getattr(template, refit)(y)
            null = getattr(null_template, refit)(y) if null_template is not None else None
            estimate, se, p_fit = term_test(full, term, satterthwaite=test == "satterthwaite")
    except ModelsError as err:
        return Outcome(i, math.nan, math.nan, "error", str(err))
    fits = [full] if null is None else [full, null]
    if not all(m.converged_ for m in fits):
        bad = next(m for m in fits if not m.converged_)
        return Outcome(i, math.nan, estimate, "not_converged", bad.convergence_message_)
    if test == "satterthwaite":
        p = p_fit
    elif test == "wald":
        p = float(2.0 * special.ndtr(-abs(estimate / se)))
    else:
        stat = max(0.0, 2.0 * (full.loglik_ - null.loglik_))
        p = float(special.chdtrc(1, stat))
    if not math.isfinite(p):
        return Outcome(i, math.nan, estimate, "error", "the test statistic is not finite")
    if any(m.singular_ for m in fits):
        return Outcome(i, p, estimate, "singular", "boundary (singular) fit")
    return Outcome(i, p, estimate, "", "")


def term_test(fit: Any, term: str, *, satterthwaite: bool) -> tuple[float, float, float]:
    """Return the estimate, standard error and the fit's own p value of ``term``.

    The p value (Satterthwaite df) comes from ``fixed_``; without it a linear model's standard
    error is read from ``vcov_``, one deviance evaluation instead of the df's Hessian.
    """
    if satterthwaite or not hasattr(type(fit), "vcov_"):
        table = fit.fixed_
        row = table.loc[table["term"] == term].iloc[0]
        return float(row["estimate"]), float(row["se"]), float(row.get("p_value", math.nan))
    return float(fit.beta_[term]), math.sqrt(float(fit.vcov_.loc[term, term])), math.nan


def truth_from_pilot(model: Any, design: Any, beta: np.ndarray) -> Truth:
    """Truth for a design of the pilot's form: its covariance factors and residual SD."""
    import models.lmm.engine as engine

    sigma = float(model.sigma_)
    blocks = tuple(
        (np.asarray(b.codes, dtype=np.intp), np.asarray(b.Z, dtype=float), sigma * T)
        for b, T in zip(design.random, engine.relative_factors(model), strict=True)
    )
    return Truth(mean=design.X.to_numpy(dtype=float) @ beta, blocks=blocks, residual_sd=sigma)


def factor(cov: np.ndarray) -> np.ndarray:
    """Return ``L`` with ``L L' = cov`` (a symmetric square root; zero variances allowed)."""
    vals, vecs = np.linalg.eigh(cov)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


def design_blocks(spec: Any, design: Any) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]:
    """``(codes, Z, L)`` per random-effects block from the SDs and correlations of a design."""
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
    return tuple(blocks)


def truth_from_design(spec: Any, design: Any, beta: np.ndarray) -> Truth:
    """Truth for a generated design from the SDs and correlations of a design TOML."""
    return Truth(
        mean=design.X.to_numpy(dtype=float) @ beta,
        blocks=design_blocks(spec, design),
        residual_sd=float(spec.residual_sd),
    )


def without_term(design: Any, term: str) -> Any:
    """Leave the fixed-effect column ``term`` out of a design (the null model of the LRT)."""
    from dataclasses import replace

    return replace(design, X=design.X.drop(columns=[term]))


class FastRefit:
    """The refit of :meth:`LinearMixedModel.refit` reduced to what the test of one term needs.

    The covariance parameters come from :class:`models.lmm.engine.GradientRefit` (the refit's
    gradient stage, from the template's parameters), and the estimate, standard error and
    Satterthwaite df of the term from the same deviance components and the same
    Satterthwaite computation as :class:`LinearMixedModel`. When the refit would go on to
    its BOBYQA stage :meth:`test` returns None and the caller refits in full, so the results
    are those of ``refit`` in every case; what is saved is building the full result (fitted
    values, conditional modes, every table).
    """

    def __init__(self, template: Any, term: str) -> None:
        from models.lmm.engine import GradientRefit

        self.refit = GradientRefit(template)
        self.j = [str(c) for c in template.design_.X.columns].index(term)

    def test(self, i: int, y: np.ndarray, *, wald: bool) -> Outcome | None:
        """Test the term on response ``y``; None when a full refit is needed."""
        import models.lmm.engine as engine

        with engine.one_blas_thread():
            fitted = self.refit.fit(y)
            if fitted is None:
                return None
            beta, sigma, p, j = fitted.beta, fitted.sigma, self.refit.p, self.j
            if wald:
                info = fitted.information
                cov = sigma**2 * np.linalg.inv((info + info.T) / 2.0)
                se = float(np.sqrt(cov[j, j]))
                p_value = float(2.0 * special.ndtr(-abs(beta[j] / se)))
            else:
                vc = engine.varpar_covariance(
                    fitted.components,
                    fitted.theta,
                    sigma,
                    n=self.refit.n,
                    p=p,
                    reml=self.refit.reml,
                )
                contrast = np.zeros(p)
                contrast[j] = 1.0
                df = engine.satterthwaite_df(vc, contrast[None, :])[0]
                se = float(np.sqrt(vc.cov_beta[j, j]))
                p_value = float(2.0 * special.stdtr(df, -abs(beta[j] / se)))
        singular = bool(np.any(fitted.theta[self.refit.diagonal] < engine.SINGULAR_TOL))
        reason, message = ("singular", "boundary (singular) fit") if singular else ("", "")
        return Outcome(i, p_value, float(beta[j]), reason, message)


class AnalyticRefit:
    """Refits by Newton's method on the profiled deviance (:mod:`models.lmm.engine`).

    One dense evaluator per model (the template, and the null model of the likelihood-ratio
    test), each started from the true covariance parameters (:meth:`Truth.theta`: the centre
    of the refits' optima; the template's are one draw's estimate, on the demo pilot 1.3 SD
    away) with every diagonal of the relative factors raised to at least
    :data:`models.lmm._newton.START_FLOOR`, so a truth at the boundary does not hold the
    refits there. The response-free part of the evaluation at that start is computed once.
    :meth:`test` returns None where Newton's method does not settle or a factorization fails;
    the caller then refits with mixedlm.
    """

    def __init__(self, full: Any, null: Any, j: int, test: str) -> None:
        self.full, self.null, self.j, self.test_name = full, null, j, test

    @staticmethod
    def inputs_from(
        template: Any, null_template: Any, term: str, test: str, start: np.ndarray | None = None
    ) -> tuple | None:
        """Return the plain arrays of :meth:`from_inputs`; None for too large a design.

        Per model ``(X, blocks, reml, theta)`` (``theta``: ``start``, else the template's),
        then the term's column and the test.
        """
        from models.lmm.engine import dense_enough

        models = [template] if null_template is None else [template, null_template]
        arrays = []
        for model in models:
            design = model.design_
            blocks = [(np.asarray(b.codes), np.asarray(b.Z, dtype=float)) for b in design.random]
            if not dense_enough(blocks):
                return None
            arrays.append(
                (
                    design.X.to_numpy(dtype=float),
                    blocks,
                    bool(model.reml),
                    np.asarray(model.theta_ if start is None else start, dtype=float),
                )
            )
        j = [str(c) for c in template.design_.X.columns].index(term)
        return arrays, j, test

    @classmethod
    def from_inputs(cls, arrays: list, j: int, test: str) -> AnalyticRefit:
        """Build the evaluators from :meth:`inputs_from`'s arrays."""
        made = [_Profiled(*a) for a in arrays]
        return cls(made[0], made[1] if len(made) > 1 else None, j, test)

    def test(self, i: int, y: np.ndarray) -> Outcome | None:
        """The outcome of simulation ``i`` with response ``y``; None when a refit is needed."""
        full = self.full.fit(y)  # BLAS is held to one thread by the runner
        null = self.null.fit(y) if self.null is not None else None
        if full is None or (self.null is not None and null is None):
            return None
        ev, j = full[0], self.j
        estimate = float(ev.beta[j])
        if self.test_name == "lrt":
            stat = max(0.0, null[0].deviance - ev.deviance)
            p_value = float(special.chdtrc(1, stat))
        else:
            cov = ev.sigma**2 * ev.cov_unscaled
            se = float(np.sqrt(cov[j, j]))
            z = estimate / se
            if self.test_name == "wald":
                p_value = float(2.0 * special.ndtr(-abs(z)))
            else:
                from models.lmm.engine import satterthwaite_df

                contrast = np.zeros((1, ev.beta.size))
                contrast[0, j] = 1.0
                df = float(satterthwaite_df(ev.varpar, contrast)[0])
                p_value = float(2.0 * special.stdtr(df, -abs(z)))
        if not math.isfinite(p_value):
            return None
        singular = full[1] or (null is not None and null[1])
        reason, message = ("singular", "boundary (singular) fit") if singular else ("", "")
        return Outcome(i, p_value, estimate, reason, message)


class _Profiled:
    """One model's dense evaluator and its start (see :class:`AnalyticRefit`)."""

    def __init__(self, X: np.ndarray, blocks: list, reml: bool, theta: np.ndarray) -> None:
        from models.lmm.engine import ProfiledDeviance, off_boundary

        self.evaluator = ProfiledDeviance(X, blocks, reml=reml)
        self.start = off_boundary(theta, self.evaluator)
        self._anchored = False

    def fit(self, y: np.ndarray) -> tuple[Any, bool] | None:
        """Return the evaluation at the minimum for ``y`` and whether the fit is singular."""
        from models.lmm.engine import SINGULAR_TOL, newton

        if not self._anchored:
            try:
                self.start = self.evaluator.anchor(self.start)
            except np.linalg.LinAlgError:
                return None
            self._anchored = True
        ev = newton(self.evaluator, self.evaluator.sufficient(y), self.start)
        if ev is None:
            return None
        singular = any(
            bool(np.any(np.abs(np.diag(T)) < SINGULAR_TOL))
            for T in self.evaluator.factors(ev.theta)
        )
        return ev, singular
