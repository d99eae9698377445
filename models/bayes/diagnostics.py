"""The diagnostics gate of a posterior sample (R-hat, bulk and tail ESS, divergences, E-BFMI)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import models._columns as col

R_HAT_MAX = 1.01
ESS_MIN = 400.0
BFMI_MIN = 0.3
AUTO_ESS = 1.25 * ESS_MIN
"""``draws="auto"`` stops once every bulk and tail ESS reaches this (the gate's, with a margin
for the estimate's own noise) and R-hat is within the gate."""
AUTO_EVERY = 1000
"""``draws="auto"`` checks its draws at every multiple of this many per chain."""
DIAGNOSTIC_COLUMNS = ["r_hat", "ess_bulk", "ess_tail"]
SUMMARY_COLUMNS = [
    "component",
    col.GROUP,
    col.TERM,
    col.ESTIMATE,
    col.SE,
    col.CI_LOW,
    col.CI_HIGH,
    *DIAGNOSTIC_COLUMNS,
]
REMEDIES = {
    "r_hat": "chains disagree: run longer (raise tune= and draws=) and look for a poorly "
    "identified parameter or several modes",
    "ess_bulk": "too few effective draws: raise draws= (or tune=), or reparameterize",
    "ess_tail": "too few effective draws in the tails: raise draws=, or reparameterize",
    "divergences": "divergent transitions: raise target_accept (e.g. 0.95 or 0.99) or "
    "reparameterize (tighter priors on the group-level sds, fewer random slopes)",
    "bfmi": "low E-BFMI (poor exploration of the energy distribution): raise tune= and "
    "reparameterize or tighten the priors on the group-level sds",
}


def _as_dataset(stacked: np.ndarray) -> Any:
    import xarray as xr

    return xr.Dataset({"v": xr.DataArray(stacked, dims=("chain", "draw", "row"))})


def sampling_diagnostics(
    idata: Any,
    *,
    var_names: Sequence[str] | None = None,
    r_hat_max: float = R_HAT_MAX,
    ess_min: float = ESS_MIN,
    bfmi_min: float = BFMI_MIN,
) -> dict[str, Any]:
    """Check MCMC draws against the diagnostics gate.

    Parameters
    ----------
    idata : arviz.InferenceData
        With a ``posterior`` and a ``sample_stats`` group (``diverging``, ``energy``).
    var_names : sequence of str, optional
        Posterior variables to check; all of them by default.
    r_hat_max : float, default 1.01
        Largest acceptable rank-normalised split R-hat.
    ess_min : float, default 400
        Smallest acceptable bulk and tail effective sample size.
    bfmi_min : float, default 0.3
        Smallest acceptable E-BFMI of any chain.

    Returns
    -------
    dict
        ``r_hat_max, ess_bulk_min, ess_tail_min, divergences, bfmi_min`` (the measured
        values; NaN where not computable), ``failures`` (list of the failed checks,
        named ``r_hat``, ``ess_bulk``, ``ess_tail``, ``divergences``, ``bfmi``),
        ``messages`` (one line per failure with its usual remedy) and ``passed``.

    Notes
    -----
    The thresholds follow Vehtari et al. (2021): R-hat <= 1.01 and bulk/tail ESS >= 400
    (100 per chain for four chains), no divergent transitions, and E-BFMI >= 0.3
    (Betancour 2016). Quantities that are constant across draws (a correlation
    matrix's diagonal) are left out. This function does not warn;
    :meth:`BayesianMixedModel.fit` turns its failures into a :class:`~models.SamplingWarning`.

    Examples
    --------
    >>> import numpy as np, arviz as az
    >>> from models.bayes import sampling_diagnostics
    >>> rng = np.random.default_rng(0)
    >>> idata = az.from_dict(
    ...     posterior={"mu": rng.normal(size=(2, 1000))},
    ...     sample_stats={"diverging": np.zeros((2, 1000), dtype=bool),
    ...                   "energy": rng.normal(size=(2, 1000))},
    ... )
    >>> sampling_diagnostics(idata)["failures"]
    []
    """
    import arviz as az

    posterior = idata.posterior
    names = list(var_names) if var_names is not None else list(posterior.data_vars)
    r_hat, ess_bulk, ess_tail = _mixing([posterior[name].values for name in names])
    stats = getattr(idata, "sample_stats", None)
    divergences = 0
    bfmi = float("nan")
    if stats is not None and "diverging" in stats:
        divergences = int(np.asarray(stats["diverging"].values).sum())
    if stats is not None and "energy" in stats:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            bfmi = float(np.min(az.bfmi(idata)))
    result = {
        "r_hat_max": r_hat,
        "ess_bulk_min": ess_bulk,
        "ess_tail_min": ess_tail,
        "divergences": divergences,
        "bfmi_min": bfmi,
    }
    failures = []
    messages = []
    checks = [
        (
            "r_hat",
            result["r_hat_max"] > r_hat_max,
            f"R-hat {result['r_hat_max']:.3f} > {r_hat_max}",
        ),
        (
            "ess_bulk",
            result["ess_bulk_min"] < ess_min,
            f"bulk ESS {result['ess_bulk_min']:.0f} < {ess_min:.0f}",
        ),
        (
            "ess_tail",
            result["ess_tail_min"] < ess_min,
            f"tail ESS {result['ess_tail_min']:.0f} < {ess_min:.0f}",
        ),
        ("divergences", divergences > 0, f"{divergences} divergent transitions"),
        ("bfmi", bfmi < bfmi_min, f"E-BFMI {bfmi:.2f} < {bfmi_min}"),
    ]
    for name, failed, text in checks:
        if failed:
            failures.append(name)
            messages.append(f"{text} ({REMEDIES[name]})")
    result["failures"] = failures
    result["messages"] = messages
    result["passed"] = not failures
    return result


def draws_suffice(draws: Sequence[np.ndarray]) -> bool:
    """Whether draws pass the gate's R-hat and ESS checks with :data:`AUTO_ESS` to spare.

    Parameters
    ----------
    draws : sequence of ndarray
        Each ``chains x draws x ...``: the parameters the gate checks.

    Returns
    -------
    bool
        R-hat at most :data:`R_HAT_MAX`, bulk and tail ESS at least :data:`AUTO_ESS`. More
        draws cure neither divergences nor a low E-BFMI, so those are left to the gate.
    """
    r_hat, ess_bulk, ess_tail = _mixing(draws)
    return bool(r_hat <= R_HAT_MAX and min(ess_bulk, ess_tail) >= AUTO_ESS)


def _mixing(draws: Sequence[Any]) -> tuple[float, float, float]:
    """Largest R-hat and smallest bulk and tail ESS over every varying element of ``draws``."""
    import arviz as az

    columns = []
    for array in draws:
        values = np.asarray(array, dtype=float)
        flat = values.reshape(values.shape[0], values.shape[1], -1)
        varying = np.nanstd(flat, axis=(0, 1)) > 0
        columns.append(flat[:, :, varying])
    stacked = np.concatenate(columns, axis=-1) if columns else np.zeros((1, 1, 0))
    if not stacked.shape[-1]:
        return float("nan"), float("nan"), float("nan")
    with warnings.catch_warnings():
        # one-chain or very short runs make ArviZ's variance estimates divide by zero
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        ds = _as_dataset(stacked)
        return (
            float(np.nanmax(az.rhat(ds)["v"].values)),
            float(np.nanmin(az.ess(ds, method="bulk")["v"].values)),
            float(np.nanmin(az.ess(ds, method="tail")["v"].values)),
        )
