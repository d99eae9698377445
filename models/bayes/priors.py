"""Priors of :class:`BayesianMixedModel`: the defaults per family and link, and overrides."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from models._backends import pymc_model as pmod
from models._checks import check_choice
from models._errors import InvalidParameterError

FAMILIES = ("gaussian", "ordinal")
LINKS = ("logit", "probit")
PRIOR_CLASSES = ("intercept", "fixed", "cutpoints", "sd", "cor", "sigma")
"""Parameter classes whose prior can be overridden through ``priors=``."""


@dataclass(frozen=True)
class Prior:
    """A prior for one parameter class of :class:`BayesianMixedModel`.

    Parameters
    ----------
    dist : str
        One of ``normal(mu, sigma)``, ``student_t(nu, mu, sigma)``, ``halfnormal(sigma)``,
        ``halfstudent_t(nu, sigma)``, ``halfcauchy(beta)``, ``exponential(lam)`` and
        ``lkj(eta)`` (correlations only).
    params : mapping of str to float
        The distribution's parameters; omitted ones take the defaults
        ``mu=0, sigma=1, nu=3, beta=1, lam=1, eta=1``.

    Notes
    -----
    Priors act on the standardised scale the model is sampled on (predictors and,
    for the gaussian family, the response divided by their standard deviations), so
    one default suits every data set; see :class:`BayesianMixedModel`.

    Examples
    --------
    >>> from models.bayes import Prior
    >>> Prior("normal", {"sigma": 1.0})
    Prior(dist='normal', params={'sigma': 1.0})
    """

    dist: str
    params: Mapping[str, float] = field(default_factory=dict)


def default_priors(family: str = "ordinal", link: str = "logit") -> dict[str, Prior]:
    """Return the weakly informative default priors of :class:`BayesianMixedModel`.

    Parameters
    ----------
    family : {"ordinal", "gaussian"}, default "ordinal"
        Response family.
    link : {"logit", "probit"}, default "logit"
        Ordinal link (ignored for gaussian models).

    Returns
    -------
    dict of str to Prior
        One prior per parameter class the family uses.

    Raises
    ------
    InvalidParameterError
        For an unknown family or link.

    Examples
    --------
    >>> from models.bayes import default_priors
    >>> default_priors("gaussian")["sigma"]
    Prior(dist='exponential', params={'lam': 1.0})
    """
    check_choice(family, FAMILIES, name="family", where="default_priors")
    check_choice(link, LINKS, name="link", where="default_priors")
    if family == "gaussian":
        return {
            "intercept": Prior("normal", {"mu": 0.0, "sigma": 2.5}),
            "fixed": Prior("normal", {"mu": 0.0, "sigma": 2.5}),
            "sd": Prior("halfnormal", {"sigma": 1.0}),
            "cor": Prior("lkj", {"eta": 2.0}),
            "sigma": Prior("exponential", {"lam": 1.0}),
        }
    # the probit latent scale is about 1.6 times narrower than the logit one
    k = 1.0 if link == "logit" else 1.0 / 1.6
    return {
        "fixed": Prior("normal", {"mu": 0.0, "sigma": 2.5 * k}),
        "cutpoints": Prior("normal", {"mu": 0.0, "sigma": 5.0 * k}),
        "sd": Prior("halfnormal", {"sigma": 2.0 * k}),
        "cor": Prior("lkj", {"eta": 2.0}),
    }


def _resolve_priors(priors: Any, *, family: str, link: str, where: str) -> dict[str, Prior]:
    resolved = default_priors(family, link)
    if priors is None:
        return resolved
    if not isinstance(priors, Mapping):
        raise InvalidParameterError(
            f"the `priors` parameter of {where} must be a mapping of parameter class to "
            f"Prior; got {type(priors).__name__}"
        )
    for key, value in priors.items():
        if key not in resolved:
            raise InvalidParameterError(
                f"the `priors` parameter of {where} has an unknown parameter class {key!r}; "
                f"the {family} family takes {sorted(resolved)}"
            )
        if isinstance(value, Mapping):
            value = dict(value)
            dist = value.pop("dist", None)
            value = Prior(dist, value)
        if not isinstance(value, Prior):
            raise InvalidParameterError(
                f"priors[{key!r}] of {where} must be a Prior or a mapping with a 'dist' key; "
                f"got {value!r}"
            )
        if value.dist not in pmod.PRIOR_DISTS:
            raise InvalidParameterError(
                f"priors[{key!r}] of {where} names an unknown distribution {value.dist!r}; "
                f"allowed: {sorted(pmod.PRIOR_DISTS)}"
            )
        _, defaults, positive = pmod.PRIOR_DISTS[value.dist]
        if (key == "cor") != (value.dist == "lkj"):
            allowed = "'lkj'" if key == "cor" else "any distribution but 'lkj'"
            raise InvalidParameterError(
                f"priors[{key!r}] of {where} must use {allowed}; got {value.dist!r}"
            )
        if key in ("sd", "sigma") and not positive:
            raise InvalidParameterError(
                f"priors[{key!r}] of {where} needs a distribution on positive values "
                f"(halfnormal, halfstudent_t, halfcauchy, exponential); got {value.dist!r}"
            )
        for pname, pval in value.params.items():
            if pname not in defaults:
                raise InvalidParameterError(
                    f"priors[{key!r}] of {where}: {value.dist} takes {sorted(defaults)}; "
                    f"got {pname!r}"
                )
            ok = isinstance(pval, numbers.Real) and math.isfinite(pval)
            if not ok or (pname != "mu" and pval <= 0):
                raise InvalidParameterError(
                    f"priors[{key!r}] of {where}: {pname} must be a finite number"
                    f"{'' if pname == 'mu' else ' > 0'}; got {pval!r}"
                )
        resolved[key] = Prior(value.dist, {k: float(v) for k, v in value.params.items()})
    return resolved
