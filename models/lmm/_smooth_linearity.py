"""Is a smooth curved? The restricted likelihood-ratio test of its random-effect variance.

A smooth fitted as gamm4 fits it (:mod:`models.lmm._smooth`) is a straight line exactly when
the variance of its penalised coefficients is zero: its null space, the linear term, is a fixed
effect and stays. The test compares the fitted model with the same model without that random
effect (the other smooths and random effects kept, the fixed-effect matrix ``X`` the same),
both by REML: ``RLRT = 2 (l_REML(alternative) - l_REML(null))``, at least 0.

The variance under test sits on the boundary of its space, so the statistic's null
distribution is not chi-square. Crainiceanu & Ruppert (2004) give its exact finite-sample
distribution for a model with the tested random effect alone: with ``mu_s`` the eigenvalues of
``Z' (I - P_X) Z`` (``Z`` the smooth's random-effect columns, ``s = 1..K``), ``w_s`` independent
standard normals and ``W`` an independent chi-square on ``n - p - K`` df,

    RLRT = sup_{lambda >= 0} (n - p) log(1 + N(lambda) / D(lambda)) - sum_s log(1 + lambda mu_s),
    N = sum_s lambda mu_s / (1 + lambda mu_s) w_s^2,   D = sum_s w_s^2 / (1 + lambda mu_s) + W.

It is simulated here as RLRsim's ``RLRTSim`` does: the ``mu_s`` scaled to a largest of 1, the
supremum sought over ``lambda = 0`` and 199 values log-spaced from ``e^-10`` to ``e^8``, upwards
from 0 and stopped where the profile first falls (so a draw whose profile first falls below 0
counts as 0 even when it rises above 0 later). With other
random effects in the model this is the distribution ``RLRsim::exactRLRT(m, mA, m0)`` uses: that
of the model holding the tested effect only, which Greven et al. (2008) found accurate for the
full model's statistic. The p-value is the share of simulated values above the statistic.

References
----------
Crainiceanu CM, Ruppert D (2004). Likelihood ratio tests in linear mixed models with one
variance component. Journal of the Royal Statistical Society B 66(1), 165-185.
Greven S, Crainiceanu CM, Kuechenhoff H, Peters A (2008). Restricted likelihood ratio testing
for zero variance components in linear mixed models. Journal of Computational and Graphical
Statistics 17(4), 870-891.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from _empathic_base.results import Result
from models._errors import ConvergenceError, InvalidParameterError

N_SIM = 10_000
"""Simulated values of the null distribution (RLRsim's default)."""

LAMBDA_GRID = np.concatenate([[0.0], np.exp(np.linspace(-10.0, 8.0, 199))])
"""Values of the variance ratio over which each simulated statistic is maximised (RLRsim's)."""

_CHUNK = 5_000
"""Simulated values handled at once (bounds the memory to ``_CHUNK x 200`` doubles)."""


@dataclass(frozen=True, repr=False)
class SmoothLinearityTest(Result):
    """Restricted likelihood-ratio test of one smooth against its straight line.

    Attributes
    ----------
    term : str
        The smooth's label (``s(x)``, or ``s(x):fLEVEL`` for one level of a ``by`` factor).
    statistic : float
        ``2 (l_REML(model) - l_REML(model without the smooth's random effect))``, at least 0;
        0 when the smooth's variance is estimated at the boundary.
    p_value : float
        Share of the simulated null distribution above ``statistic`` (1 when it is 0).
    method : str
        How the p-value was found.
    reml_alt, reml_null : float
        The two REML log-likelihoods (lme4's ``logLik(REML = TRUE)``; the same ``X``).
    null_at_zero : float
        Share of the simulated null distribution at 0 (about 0.65 to 0.7 for a smooth; 0.5
        under the asymptotic 50:50 mixture, which is why that mixture is conservative here).
    n_sim : int
        Simulated values behind ``p_value``.
    seed : int or None
        The int seed of the simulation (``numpy.random.default_rng(seed)``), if one was given.
    """

    term: str
    statistic: float
    p_value: float
    method: str
    reml_alt: float
    reml_null: float
    null_at_zero: float
    n_sim: int
    seed: int | None

    def _title(self) -> str:
        return (
            f"SmoothLinearityTest({self.term}: RLRT = {self.statistic:.4g}, p = {self.p_value:.4g})"
        )

    def _parts(self) -> list[tuple[str, pd.DataFrame]]:
        row = {
            "term": self.term,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "reml_alt": self.reml_alt,
            "reml_null": self.reml_null,
            "null_at_zero": self.null_at_zero,
            "n_sim": self.n_sim,
            "method": self.method,
        }
        return [("Restricted likelihood-ratio test of linearity", pd.DataFrame([row]))]


def rlrt_eigenvalues(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Return the eigenvalues ``mu`` of ``Z' (I - P_X) Z``, decreasing, scaled to a largest 1."""
    Q, _ = np.linalg.qr(X)
    resid = Z - Q @ (Q.T @ Z)
    mu = np.linalg.svd(resid, compute_uv=False) ** 2
    return mu / mu.max()


def rlrt_null_sample(
    mu: np.ndarray,
    *,
    n: int,
    p: int,
    n_sim: int = N_SIM,
    seed: int | np.random.Generator | None = None,
) -> np.ndarray:
    """Simulate Crainiceanu & Ruppert's (2004) null distribution of the RLRT statistic.

    ``mu`` are the scaled eigenvalues (:func:`rlrt_eigenvalues`), ``n`` the observations and
    ``p`` the fixed effects. Each value is the maximum over :data:`LAMBDA_GRID` reached first
    from ``lambda = 0`` upwards (the grid search stops where the profile first falls, as
    RLRsim's does).
    """
    mu = np.asarray(mu, dtype=float)
    K = mu.size
    rng = np.random.default_rng(seed)
    a = LAMBDA_GRID[:, None] * mu[None, :]
    shrink = 1.0 / (1.0 + a)
    penalty = np.log1p(a).sum(axis=1)
    out = np.empty(n_sim)
    for start in range(0, n_sim, _CHUNK):
        m = min(_CHUNK, n_sim - start)
        w2 = rng.standard_normal((m, K)) ** 2
        rest = rng.chisquare(n - p - K, m) if n - p - K > 0 else np.zeros(m)
        num = w2 @ (a * shrink).T
        den = w2 @ shrink.T + rest[:, None]
        values = (n - p) * np.log1p(num / den) - penalty
        # as RLRsim: the first maximum along the grid (from lambda = 0, where the value is 0)
        falls = values[:, 1:] < values[:, :-1]
        stop = np.where(falls.any(axis=1), falls.argmax(axis=1), values.shape[1] - 1)
        out[start : start + m] = values[np.arange(m), stop]
    return out


def linearity_test(
    model, term, *, n_sim: int, seed: int | np.random.Generator | None
) -> SmoothLinearityTest:
    """Test one smooth of a fitted REML ``model`` against its straight line (see module)."""
    import models.lmm.engine as engine
    from models.lmm._analytic import SINGULAR_TOL
    from models.lmm._smooth import engine_columns

    if isinstance(n_sim, bool) or not isinstance(n_sim, int | np.integer) or n_sim < 100:
        raise InvalidParameterError(
            "the `n_sim` parameter of LinearMixedModel.smooth_linearity_test must be an int of "
            f"at least 100; got {n_sim!r}"
        )
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int | np.integer | np.random.Generator)
    ):
        raise InvalidParameterError(
            "the `seed` parameter of LinearMixedModel.smooth_linearity_test must be an int or "
            f"a numpy.random.Generator; got {seed!r}"
        )
    if not model.reml:
        raise InvalidParameterError(
            "LinearMixedModel.smooth_linearity_test compares restricted likelihoods: fit the "
            "model with reml=True"
        )
    fit = model.smooth_
    part = fit.component(term)
    if part.is_factor_smooth:
        raise InvalidParameterError(
            f"LinearMixedModel.smooth_linearity_test tests a smooth against its straight line; "
            f"{part.label} is a factor smooth (a curve per level of "
            f"{part.smooth.term.factor!r}, its straight lines penalised too), which it does "
            "not test: name another smooth"
        )
    design = model.design_
    dense, fixed, owner = engine_columns(model._smooth_parts)
    index = owner.index(fit.smooths.index(part))
    X = np.column_stack([design.X.to_numpy(dtype=float), fixed])
    mu = rlrt_eigenvalues(X, dense[index])
    sample = rlrt_null_sample(mu, n=X.shape[0], p=X.shape[1], n_sim=int(n_sim), seed=seed)
    theta = abs(float(model.theta_[len(model.theta_) - len(dense) + index]))
    reml_alt = float(model.loglik_)
    inp = engine.engine_input(design, dense=dense[:index] + dense[index + 1 :], fixed=fixed)
    ctrl = engine.control(optimizer=model.optimizer, max_evals=model.max_evals, tol=model.tol)
    try:
        result, _, _ = engine.fit(inp, reml=True, ctrl=ctrl)
    except engine.EngineFailure as err:
        raise ConvergenceError(
            f"LinearMixedModel.smooth_linearity_test could not fit {model.formula!r} without "
            f"the random effect of {part.label}: {err}"
        ) from err
    reml_null = float(result.logLik().value)
    # at a boundary variance the alternative's optimum is the null model: RLRsim's RLRT of 0
    statistic = 0.0 if theta < SINGULAR_TOL else max(0.0, 2.0 * (reml_alt - reml_null))
    p_value = float(np.mean(sample > statistic)) if statistic > 0 else 1.0
    return SmoothLinearityTest(
        term=part.label,
        statistic=statistic,
        p_value=p_value,
        method=(
            f"restricted likelihood ratio, exact null distribution (Crainiceanu & Ruppert 2004) "
            f"from {int(n_sim)} simulated values"
        ),
        reml_alt=reml_alt,
        reml_null=reml_null,
        null_at_zero=float(np.mean(sample == 0.0)),
        n_sim=int(n_sim),
        seed=int(seed) if isinstance(seed, int | np.integer) else None,
    )
