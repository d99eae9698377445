"""Bayesian hierarchical models for ratings: gaussian and cumulative ordinal mixed models.

:class:`BayesianMixedModel` takes the lme4-style formulas of :mod:`models.formula`
(crossed random effects such as ``(1 + week | participant) + (1 | story)``), builds a
PyMC model with non-centred random effects and LKJ priors on correlated blocks,
samples it with NUTS (PyMC, nutpie or numpyro), checks the draws against a
diagnostics gate and reports every estimate on the data's scale.

:func:`compare` ranks fitted models by PSIS-LOO and :func:`leave_one_group_out`
refits a model once per held-out participant. :func:`sampling_diagnostics` is the
gate itself, usable on any ArviZ ``InferenceData``.

PyMC, ArviZ, xarray and matplotlib are imported only inside the functions that
need them.
"""

from models._backends.samplers import default_sampler
from models.bayes._emmeans import PosteriorContrasts, PosteriorMeans
from models.bayes._r2 import BayesianR2
from models.bayes._summary import BayesianModelSummary
from models.bayes.compare import GroupCVResult, compare, leave_one_group_out
from models.bayes.diagnostics import (
    BFMI_MIN,
    DIAGNOSTIC_COLUMNS,
    ESS_MIN,
    R_HAT_MAX,
    REMEDIES,
    SUMMARY_COLUMNS,
    sampling_diagnostics,
)
from models.bayes.model import DEFAULT_SAMPLING, BayesianMixedModel
from models.bayes.priors import FAMILIES, LINKS, PRIOR_CLASSES, Prior, default_priors

__all__ = [
    "BFMI_MIN",
    "DEFAULT_SAMPLING",
    "DIAGNOSTIC_COLUMNS",
    "ESS_MIN",
    "FAMILIES",
    "LINKS",
    "PRIOR_CLASSES",
    "R_HAT_MAX",
    "REMEDIES",
    "SUMMARY_COLUMNS",
    "BayesianMixedModel",
    "BayesianModelSummary",
    "BayesianR2",
    "GroupCVResult",
    "PosteriorContrasts",
    "PosteriorMeans",
    "Prior",
    "compare",
    "default_priors",
    "default_sampler",
    "leave_one_group_out",
    "sampling_diagnostics",
]
