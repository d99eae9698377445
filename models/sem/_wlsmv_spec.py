"""The longitudinal factor model for ordered items and its model-implied sample statistics.

One factor per wave and the same ``p`` items at every wave; item ``i`` of wave ``t`` is
variable ``j = t*p + i`` and has ``m_i`` thresholds (``m_i + 1`` categories, the same at every
wave). Behind each item is a normal latent response ``y*`` with

    y* = nu + Lambda eta + eps,   eta ~ N(alpha, Psi),   eps ~ N(0, Theta),

the theta parameterisation: ``Theta`` holds the latent responses' residual variances and the
covariances of the same item across waves. With ``Sigma* = Lambda Psi Lambda' + Theta``,
``mu* = nu + Lambda alpha`` and the scales ``delta_j = 1 / sqrt(Sigma*_jj)``, the
model-implied statistics (the order of lavaan's ``wls.obs``) are the standardised thresholds
``(tau_jc - mu*_j) delta_j`` of every variable, then the correlations
``Sigma*_jk delta_j delta_k`` of the lower triangle taken column by column.

In the delta parameterisation the scales ``delta_j`` are the parameters in place of the
residual variances, which follow as ``1 / delta_j^2 - (Lambda Psi Lambda')_jj``; ``Theta``
holds only the covariances across waves. Its identification is the theta parameterisation's
with scales for residual variances, and it has no strict level (semTools refuses it).

The ladder follows ``semTools::measEq.syntax(parameterization = "theta", ID.fac = "std.lv",
ID.cat = "Wu.Estabrook.2016", auto = "all")`` with ``longFacNames``:

* configural: thresholds free; every intercept 0, every residual variance 1, latent means 0
  and variances 1;
* thresholds: each item's thresholds equal across waves; the later waves' intercepts free and,
  for items with three or more categories, their residual variances free;
* metric: + loadings equal; the later latent variances free;
* scalar: + intercepts equal (so 0 at every wave); the later latent means free, and a binary
  item's later residual variances free;
* strict: + residual variances equal (so 1 at every wave).

(In the delta parameterisation read "scales" for "residual variances".)

An equality is the later wave's entry sharing the first wave's parameter; an entry listed in
``freed`` (partial invariance) gets its own free parameter instead. :func:`parameter_table`
names every entry as lavaan's ``parameterEstimates`` does (factors ``F.<wave>``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

LEVELS = ("configural", "thresholds", "metric", "scalar", "strict")
"""The ordinal invariance ladder, weakest first."""

STEP_KIND = {"thresholds": "tau", "metric": "lambda", "scalar": "nu", "strict": "theta"}
"""The kind of parameter each step makes equal across waves."""

# A matrix entry: (kind, item, wave[, ...]).
#   tau (i, t, c)        threshold c of variable t*p + i
#   lambda (i, t)        Lambda[t*p + i, t]
#   nu (i, t)            nu[t*p + i]
#   theta (i, t)         Theta[t*p + i, t*p + i]  (theta parameterisation)
#   delta (i, t)         the scale of variable t*p + i  (delta parameterisation)
#   theta_cov (i, t, s)  Theta[t*p + i, s*p + i], t < s
#   psi (t,)             Psi[t, t]
#   psi_cov (t, s)       Psi[t, s], t < s
#   alpha (t,)           alpha[t]
Entry = tuple


@dataclass(frozen=True)
class OrdinalSpec:
    """Which entries are free (and which share a parameter) at one level of the ladder.

    Attributes
    ----------
    n_items, n_waves : int
    n_thresholds : tuple of int
        The thresholds of each item (its categories less one).
    level : str
        One of :data:`LEVELS`.
    parameterization : str
        ``"theta"`` or ``"delta"``.
    freed : tuple of Entry
        Entries that get their own free parameter (released equality constraints).
    entries : dict
        Free entry -> parameter index (entries held equal share one index).
    fixed : dict
        Fixed entry -> value.
    n_params : int
    constraints : list of tuple
        ``(later entry, first entry)`` for every equality constraint between free entries.
    """

    n_items: int
    n_waves: int
    n_thresholds: tuple
    level: str
    parameterization: str = "theta"
    freed: tuple = ()
    entries: dict = field(default_factory=dict)
    fixed: dict = field(default_factory=dict)
    n_params: int = 0
    constraints: list = field(default_factory=list)

    @property
    def n_variables(self) -> int:
        return self.n_items * self.n_waves

    @property
    def threshold_offsets(self) -> np.ndarray:
        """Position of each variable's first threshold in the threshold vector (and the end)."""
        per_variable = np.tile(np.asarray(self.n_thresholds, dtype=int), self.n_waves)
        return np.concatenate([[0], np.cumsum(per_variable)])


def build_ordinal_spec(
    n_items: int,
    n_waves: int,
    n_thresholds: tuple,
    level: str,
    freed: tuple = (),
    parameterization: str = "theta",
) -> OrdinalSpec:
    """Return the :class:`OrdinalSpec` of ``level`` with the entries in ``freed`` released."""
    rank = LEVELS.index(level)
    equal = {kind for step, kind in STEP_KIND.items() if LEVELS.index(step) <= rank}
    freed_set = set(freed)
    entries: dict = {}
    fixed: dict = {}
    constraints: list = []
    count = 0

    def new() -> int:
        nonlocal count
        count += 1
        return count - 1

    def shared(entry: Entry, first: Entry, kind: str) -> None:
        if kind in equal and entry not in freed_set:
            entries[entry] = entries[first]
            constraints.append((entry, first))
        else:
            entries[entry] = new()

    for i in range(n_items):
        for t in range(n_waves):
            entry = ("lambda", i, t)
            if t == 0:
                entries[entry] = new()
            else:
                shared(entry, ("lambda", i, 0), "lambda")
    for t in range(n_waves):
        for i in range(n_items):
            for c in range(n_thresholds[i]):
                entry = ("tau", i, t, c)
                if t == 0:
                    entries[entry] = new()
                else:
                    shared(entry, ("tau", i, 0, c), "tau")
    for t in range(n_waves):
        for i in range(n_items):
            entry = ("nu", i, t)
            identified = t > 0 and "tau" in equal
            if entry in freed_set or (identified and "nu" not in equal):
                entries[entry] = new()
            else:
                fixed[entry] = 0.0
    for t in range(n_waves):
        for i in range(n_items):
            entry = ("theta" if parameterization == "theta" else "delta", i, t)
            # a binary item's residual variance is identified only once intercepts are equal
            needs = "tau" if n_thresholds[i] > 1 else "nu"
            identified = t > 0 and needs in equal
            if entry in freed_set or (identified and "theta" not in equal):
                entries[entry] = new()
            else:
                fixed[entry] = 1.0
    for t in range(n_waves):
        for s in range(t + 1, n_waves):
            for i in range(n_items):
                entries[("theta_cov", i, t, s)] = new()
    for t in range(n_waves):
        if t > 0 and "nu" in equal:
            entries[("alpha", t)] = new()
        else:
            fixed[("alpha", t)] = 0.0
    for t in range(n_waves):
        if t > 0 and "lambda" in equal:
            entries[("psi", t)] = new()
        else:
            fixed[("psi", t)] = 1.0
    for t in range(n_waves):
        for s in range(t + 1, n_waves):
            entries[("psi_cov", t, s)] = new()
    return OrdinalSpec(
        n_items=n_items,
        n_waves=n_waves,
        n_thresholds=tuple(int(m) for m in n_thresholds),
        level=level,
        parameterization=parameterization,
        freed=tuple(freed),
        entries=entries,
        fixed=fixed,
        n_params=count,
        constraints=constraints,
    )


@dataclass(frozen=True)
class OrdinalDerivatives:
    """Constant derivative arrays of the model matrices with respect to each parameter.

    ``d_lambda[a]`` is dLambda/dtheta_a (k x T), and likewise for the others; ``d_theta``
    and ``d_psi`` are symmetric; ``d_tau`` is (q x number of thresholds).
    """

    d_tau: np.ndarray
    d_lambda: np.ndarray
    d_nu: np.ndarray
    d_theta: np.ndarray
    d_psi: np.ndarray
    d_alpha: np.ndarray
    d_delta: np.ndarray


def _place(entry: Entry, p: int, offsets: np.ndarray) -> tuple[str, tuple[int, ...]]:
    kind = entry[0]
    if kind == "tau":
        _, i, t, c = entry
        return "tau", (int(offsets[t * p + i]) + c,)
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
    if kind == "delta":
        _, i, t = entry
        return "delta", (t * p + i,)
    if kind == "psi":
        return "psi", (entry[1], entry[1])
    if kind == "psi_cov":
        return "psi", (entry[1], entry[2])
    return "alpha", (entry[1],)


def _empty(spec: OrdinalSpec, lead: tuple[int, ...]) -> dict[str, np.ndarray]:
    k, n_waves = spec.n_variables, spec.n_waves
    n_tau = int(spec.threshold_offsets[-1])
    return {
        "tau": np.zeros((*lead, n_tau)),
        "lambda": np.zeros((*lead, k, n_waves)),
        "nu": np.zeros((*lead, k)),
        "theta": np.zeros((*lead, k, k)),
        "psi": np.zeros((*lead, n_waves, n_waves)),
        "alpha": np.zeros((*lead, n_waves)),
        "delta": np.zeros((*lead, k)),
    }


def ordinal_derivatives(spec: OrdinalSpec) -> OrdinalDerivatives:
    """Return the constant dMatrix/dparameter arrays of ``spec`` (each matrix is linear)."""
    arrays = _empty(spec, (spec.n_params,))
    offsets = spec.threshold_offsets
    for entry, a in spec.entries.items():
        name, where = _place(entry, spec.n_items, offsets)
        arrays[name][(a, *where)] += 1.0
        if name in ("theta", "psi") and where[0] != where[1]:
            arrays[name][(a, where[1], where[0])] += 1.0
    return OrdinalDerivatives(
        arrays["tau"],
        arrays["lambda"],
        arrays["nu"],
        arrays["theta"],
        arrays["psi"],
        arrays["alpha"],
        arrays["delta"],
    )


def ordinal_fixed(spec: OrdinalSpec) -> dict[str, np.ndarray]:
    """Return the model matrices holding only the fixed entries (zeros elsewhere)."""
    mats = _empty(spec, ())
    offsets = spec.threshold_offsets
    for entry, value in spec.fixed.items():
        name, where = _place(entry, spec.n_items, offsets)
        mats[name][where] = value
    return mats


@dataclass
class Implied:
    """The model-implied statistics and their Jacobian at one parameter vector."""

    sigma: np.ndarray  # thresholds then correlations, the order of wls.obs
    jacobian: np.ndarray  # (number of statistics, q)
    matrices: dict


class OrdinalModel:
    """The map from the parameters of one :class:`OrdinalSpec` to the implied statistics."""

    def __init__(self, spec: OrdinalSpec) -> None:
        self.spec = spec
        self.deriv = ordinal_derivatives(spec)
        self.base = ordinal_fixed(spec)
        k = spec.n_variables
        self.rows, self.cols = np.triu_indices(k, 1)
        offsets = spec.threshold_offsets
        # the variable each threshold belongs to
        self.owner = np.repeat(np.arange(k), np.diff(offsets))
        d = self.deriv
        q = spec.n_params
        self._flat = {
            name: getattr(d, f"d_{name}").reshape(q, -1)
            for name in ("tau", "lambda", "nu", "theta", "psi", "alpha", "delta")
        }

    def matrices(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """Return tau, Lambda, nu, Theta, Psi, alpha and the scales delta at ``theta``."""
        return {
            name: base + (theta @ self._flat[name]).reshape(base.shape)
            for name, base in self.base.items()
        }

    def implied(self, theta: np.ndarray, *, jacobian: bool = True) -> Implied:
        """Return the implied thresholds and correlations (and their Jacobian) at ``theta``."""
        m = self.matrices(theta)
        lam, psi, alpha = m["lambda"], m["psi"], m["alpha"]
        sigma_star = lam @ psi @ lam.T + m["theta"]
        mu_star = m["nu"] + lam @ alpha
        by_delta = self.spec.parameterization == "delta"
        var = np.diag(sigma_star).copy()
        if np.any((m["delta"] if by_delta else var) <= 0):
            return Implied(np.full(self.owner.size + self.rows.size, np.nan), np.empty(0), m)
        scale = m["delta"] if by_delta else 1.0 / np.sqrt(var)
        owner, rows, cols = self.owner, self.rows, self.cols
        thresholds = (m["tau"] - mu_star[owner]) * scale[owner]
        corr = sigma_star[rows, cols] * scale[rows] * scale[cols]
        sigma = np.concatenate([thresholds, corr])
        if not jacobian:
            return Implied(sigma, np.empty(0), m)
        d = self.deriv
        q, k, n_waves = d.d_lambda.shape
        # dSigma*/dtheta_a = dL Psi L' + L Psi dL' + L dPsi L' + dTheta, for every a at once
        half = (d.d_lambda.reshape(q * k, n_waves) @ (psi @ lam.T)).reshape(q, k, k)
        d_sigma = half + half.transpose(0, 2, 1) + lam @ d.d_psi @ lam.T + d.d_theta
        d_mu = d.d_nu + d.d_lambda @ alpha + d.d_alpha @ lam.T
        if by_delta:
            d_log_scale = d.d_delta / scale
        else:
            d_log_scale = -0.5 * d_sigma[:, np.arange(k), np.arange(k)] / var
        d_thr = (d.d_tau - d_mu[:, owner]) * scale[owner] + thresholds * d_log_scale[:, owner]
        d_corr = d_sigma[:, rows, cols] * (scale[rows] * scale[cols]) + corr * (
            d_log_scale[:, rows] + d_log_scale[:, cols]
        )
        return Implied(sigma, np.concatenate([d_thr, d_corr], axis=1).T, m)

    def residual_variances(self, theta: np.ndarray) -> np.ndarray:
        """Return the latent responses' residual variances (derived under delta)."""
        m = self.matrices(theta)
        if self.spec.parameterization == "theta":
            return np.diag(m["theta"]).copy()
        common = np.einsum("jt,ts,js->j", m["lambda"], m["psi"], m["lambda"])
        return 1.0 / m["delta"] ** 2 - common


# -- the parameter table -------------------------------------------------------------------
def factor_names(names: list, n_items: int, n_waves: int) -> list[str]:
    """Return ``F.<wave>`` with the wave label after the last dot of the wave's first item."""
    labels = []
    for t in range(n_waves):
        first = names[t * n_items]
        labels.append(f"F.{first.rsplit('.', 1)[1]}" if "." in first else f"F.{t + 1}")
    return labels


def entry_label(entry: tuple, names: list, factors: list, p: int) -> tuple[str, str, str]:
    kind = entry[0]
    if kind == "tau":
        _, i, t, c = entry
        return names[t * p + i], "|", f"t{c + 1}"
    if kind == "lambda":
        _, i, t = entry
        return factors[t], "=~", names[t * p + i]
    if kind == "nu":
        _, i, t = entry
        return names[t * p + i], "~1", ""
    if kind == "theta":
        _, i, t = entry
        return names[t * p + i], "~~", names[t * p + i]
    if kind == "theta_cov":
        _, i, t, s = entry
        return names[t * p + i], "~~", names[s * p + i]
    if kind == "delta":
        _, i, t = entry
        return names[t * p + i], "~*~", names[t * p + i]
    if kind == "psi":
        return factors[entry[1]], "~~", factors[entry[1]]
    if kind == "psi_cov":
        return factors[entry[1]], "~~", factors[entry[2]]
    return factors[entry[1]], "~1", ""


_ORDER = ("lambda", "tau", "nu", "delta", "theta", "theta_cov", "alpha", "psi", "psi_cov")


def _sort_key(entry: tuple) -> tuple:
    """Order the table as measEq.syntax writes it: by kind, then wave by wave."""
    kind = entry[0]
    if kind in ("tau", "lambda", "nu", "delta", "theta"):
        return (_ORDER.index(kind), entry[2], entry[1], *entry[3:])
    if kind == "theta_cov":
        return (_ORDER.index(kind), entry[2], entry[3], entry[1])
    return (_ORDER.index(kind), *entry[1:])


def parameter_table(
    spec: OrdinalSpec,
    names: list,
    estimates: np.ndarray,
    se: np.ndarray,
    residual_variances: np.ndarray,
) -> pd.DataFrame:
    """Return the table of every entry, named as lavaan's ``parameterEstimates``.

    Columns ``lhs, op, rhs, est, se``, ``free`` (the parameter index, -1 when not free) and
    ``derived`` (True for the residual variances of the delta parameterisation, which follow
    from the other parameters; lavaan shows them with a zero standard error).
    """
    factors = factor_names(names, spec.n_items, spec.n_waves)
    rows = []
    for entry, a in spec.entries.items():
        rows.append((entry, a, float(estimates[a]), float(se[a]), False))
    for entry, value in spec.fixed.items():
        rows.append((entry, -1, float(value), 0.0, False))
    if spec.parameterization == "delta":
        for t in range(spec.n_waves):
            for i in range(spec.n_items):
                value = float(residual_variances[t * spec.n_items + i])
                rows.append((("theta", i, t), -1, value, 0.0, True))
    rows.sort(key=lambda row: _sort_key(row[0]))
    table = [
        (*entry_label(entry, names, factors, spec.n_items), est, se_, a, derived)
        for entry, a, est, se_, derived in rows
    ]
    return pd.DataFrame(table, columns=["lhs", "op", "rhs", "est", "se", "free", "derived"])
