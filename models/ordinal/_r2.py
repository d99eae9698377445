"""Latent-scale R-squared of a fitted cumulative link mixed model (Nakagawa & Schielzeth).

On the latent scale of a cumulative link model ``Y* = X beta + Z b + e`` the residual ``e`` has
the link's distribution, of variance ``pi^2 / 3`` (logit) or 1 (probit). Nakagawa &
Schielzeth (2013) and Nakagawa, Johnson & Schielzeth (2017) divide the variance of the
fixed-effect predictions ``var(X beta)`` (thresholds left out; sample variance over the rows
used) and that plus the random-effect variance by the sum of both and the residual variance.
With random slopes the random-effect variance is the mean of ``z_i' Sigma_b z_i`` over the rows
(Johnson 2014). These are the numbers ``performance::r2_nakagawa`` reports for an
``ordinal::clmm`` fit.

The Rights & Sterba decomposition is not given: its within/between split is defined for a
normal residual (r2mlm fits linear mixed models only).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from models.lmm import MixedR2

__all__ = ["latent_r2", "latent_variances"]

_NOTE = (
    "latent scale: the residual variance is the link's ({link}: {value:.6g}); the Rights & "
    "Sterba within/between decomposition is defined for linear mixed models only"
)


def latent_variances(model: Any) -> dict[str, float]:
    """Return ``fixed``, ``random`` and ``residual`` variances on the latent scale."""
    X = model.design_.X
    if "Intercept" in X.columns:
        X = X.drop(columns=["Intercept"])
    eta = X.to_numpy(dtype=float) @ model.beta_.to_numpy()
    fixed = float(np.var(eta, ddof=1)) if eta.size > 1 else 0.0
    random = sum(
        float(np.mean(np.einsum("ij,jk,ik->i", block.Z, T @ T.T, block.Z)))
        for block, T in zip(model.design_.random, model._Ts, strict=True)
    )
    residual = float(model._problem.lk.latent_sd) ** 2
    return {"fixed": fixed, "random": random, "residual": residual}


def latent_r2(model: Any) -> MixedR2:
    """Compute the latent-scale :class:`MixedR2` of a fitted OrdinalMixedModel."""
    v = latent_variances(model)
    total = v["fixed"] + v["random"] + v["residual"]
    factors = list(dict.fromkeys(block.group for block in model.design_.random))
    return MixedR2(
        rights_sterba={"total": {}, "within": {}, "between": {}},
        nakagawa={
            "marginal": v["fixed"] / total,
            "conditional": (v["fixed"] + v["random"]) / total,
        },
        cluster=factors[0] if len(factors) == 1 else None,
        note=_NOTE.format(link=model.link, value=v["residual"]),
    )
