"""The longitudinal factor model: which matrix entries are free, fixed or equal.

One factor per wave, the same ``p`` items at every wave; the observed variables are ordered
wave by wave (item 1..p of wave 1, then of wave 2, ...). The model matrices are

* ``Lambda`` (pT x T): item ``i`` of wave ``t`` loads on factor ``t`` only;
* ``Theta`` (pT x pT): residual variances and the covariances of the same item across waves;
* ``Psi`` (T x T): factor variances and covariances (all covariances free);
* ``nu`` (pT): item intercepts; ``alpha`` (T): latent means;

with ``Sigma = Lambda Psi Lambda' + Theta`` and ``mu = nu + Lambda alpha``.

The ladder follows ``semTools::measEq.syntax(ID.fac = "std.lv", auto = "all")`` with
``longFacNames``: configural fixes every latent variance at 1 and every latent mean at 0;
metric makes each item's loading equal across waves and frees the later latent variances;
scalar adds equal intercepts and frees the later latent means; strict adds equal residual
variances. An equality is written as the later wave's entry sharing the first wave's
parameter; freeing a constraint (partial invariance) gives that entry its own parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

LEVELS = ("configural", "metric", "scalar", "strict")
"""The invariance ladder, weakest first."""

STEP_KIND = {"metric": "lambda", "scalar": "nu", "strict": "theta"}
"""The kind of parameter each step makes equal across waves."""

# A matrix entry: (kind, item, wave[, wave2]); kinds and the matrix each lives in.
#   lambda (i, t)        Lambda[t*p + i, t]
#   nu (i, t)            nu[t*p + i]
#   theta (i, t)         Theta[t*p + i, t*p + i]
#   theta_cov (i, t, s)  Theta[t*p + i, s*p + i], t < s
#   psi (t,)             Psi[t, t]
#   psi_cov (t, s)       Psi[t, s], t < s
#   alpha (t,)           alpha[t]
Entry = tuple


@dataclass(frozen=True)
class ModelSpec:
    """Which entries are free (and which share a parameter) at one level of the ladder.

    Attributes
    ----------
    n_items, n_waves : int
    level : str
        One of :data:`LEVELS`.
    freed : tuple of Entry
        Equality constraints released (partial invariance): each is the later-wave entry
        that gets its own parameter.
    entries : dict
        Free entry -> parameter index.
    fixed : dict
        Fixed entry -> value (0 or 1).
    n_params : int
    constraints : list of Entry
        The later-wave entries held equal to the first wave's (one per equality constraint).
    """

    n_items: int
    n_waves: int
    level: str
    freed: tuple = ()
    entries: dict = field(default_factory=dict)
    fixed: dict = field(default_factory=dict)
    n_params: int = 0
    constraints: list = field(default_factory=list)


def build_spec(n_items: int, n_waves: int, level: str, freed: tuple = ()) -> ModelSpec:
    """Return the :class:`ModelSpec` of ``level`` with the constraints in ``freed`` released."""
    rank = LEVELS.index(level)
    equal = {kind for step, kind in STEP_KIND.items() if LEVELS.index(step) <= rank}
    entries: dict = {}
    fixed: dict = {}
    constraints: list = []
    count = 0

    def new() -> int:
        nonlocal count
        count += 1
        return count - 1

    for kind in ("lambda", "nu", "theta"):
        for i in range(n_items):
            first = None
            for t in range(n_waves):
                entry = (kind, i, t)
                if t == 0 or kind not in equal:
                    entries[entry] = new()
                    first = entries[entry] if t == 0 else first
                elif entry in freed:
                    entries[entry] = new()
                else:
                    entries[entry] = first
                    constraints.append(entry)
    for i in range(n_items):
        for t in range(n_waves):
            for s in range(t + 1, n_waves):
                entries[("theta_cov", i, t, s)] = new()
    for t in range(n_waves):
        variance_free = t > 0 and "lambda" in equal
        if variance_free:
            entries[("psi", t)] = new()
        else:
            fixed[("psi", t)] = 1.0
    for t in range(n_waves):
        for s in range(t + 1, n_waves):
            entries[("psi_cov", t, s)] = new()
    for t in range(n_waves):
        if t > 0 and "nu" in equal:
            entries[("alpha", t)] = new()
        else:
            fixed[("alpha", t)] = 0.0
    return ModelSpec(
        n_items=n_items,
        n_waves=n_waves,
        level=level,
        freed=tuple(freed),
        entries=entries,
        fixed=fixed,
        n_params=count,
        constraints=constraints,
    )


@dataclass(frozen=True)
class Loadings:
    """Constant derivative arrays of the model matrices with respect to each parameter.

    ``d_lambda[a]`` is dLambda/dtheta_a (k x T), and likewise for the others; ``d_theta``
    and ``d_psi`` are symmetric.
    """

    d_lambda: np.ndarray
    d_nu: np.ndarray
    d_theta: np.ndarray
    d_psi: np.ndarray
    d_alpha: np.ndarray


def _place(entry: Entry, p: int) -> tuple[str, tuple[int, ...]]:
    kind = entry[0]
    if kind == "lambda":
        _, i, t = entry
        return "lambda", (t * p + i, t)
    if kind == "nu":
        _, i, t = entry
        return "nu", (t * p + i,)
    if kind == "theta":
        _, i, t = entry
        return "theta", (t * p + i, t * p + i)
    if kind == "theta_cov":
        _, i, t, s = entry
        return "theta", (t * p + i, s * p + i)
    if kind == "psi":
        return "psi", (entry[1], entry[1])
    if kind == "psi_cov":
        return "psi", (entry[1], entry[2])
    return "alpha", (entry[1],)


def derivative_arrays(spec: ModelSpec) -> Loadings:
    """Return the constant dMatrix/dparameter arrays of ``spec`` (the model is linear in each)."""
    p, n_waves, q = spec.n_items, spec.n_waves, spec.n_params
    k = p * n_waves
    arrays = {
        "lambda": np.zeros((q, k, n_waves)),
        "nu": np.zeros((q, k)),
        "theta": np.zeros((q, k, k)),
        "psi": np.zeros((q, n_waves, n_waves)),
        "alpha": np.zeros((q, n_waves)),
    }
    for entry, a in spec.entries.items():
        name, where = _place(entry, p)
        arrays[name][(a, *where)] += 1.0
        if name in ("theta", "psi") and where[0] != where[1]:
            arrays[name][(a, where[1], where[0])] += 1.0
    return Loadings(arrays["lambda"], arrays["nu"], arrays["theta"], arrays["psi"], arrays["alpha"])


def fixed_matrices(spec: ModelSpec) -> dict[str, np.ndarray]:
    """Return the model matrices holding only the fixed entries (zeros elsewhere)."""
    p, n_waves = spec.n_items, spec.n_waves
    k = p * n_waves
    mats = {
        "lambda": np.zeros((k, n_waves)),
        "nu": np.zeros(k),
        "theta": np.zeros((k, k)),
        "psi": np.zeros((n_waves, n_waves)),
        "alpha": np.zeros(n_waves),
    }
    for entry, value in spec.fixed.items():
        name, where = _place(entry, p)
        mats[name][where] = value
    return mats
