"""Linear mixed models in lme4 syntax, fitted by mixedlm, with Satterthwaite or Kenward-Roger df.

:class:`LinearMixedModel` (``model``) is the estimator; beside it are its predictions and ICC
(``_predict``), summaries and JSON (``_summary``), the likelihood-ratio test (``_lrt``),
R-squared (``_r2``), marginal means and contrasts (``_emmeans``), the
lmerTest and pbkrtest degrees of freedom (``_satterthwaite``, ``_kenward_roger``), the profiled
deviance with its exact derivatives (``_analytic``) and the Newton refit on it (``_newton``).
``engine`` is the fitting and refit engine that the rest of the package uses: mixedlm's
internals are touched there alone.
"""

from _empathic_base.lazy import lazy_exports

#: Public names and their modules, imported on first use: a power worker imports the dense
#: evaluator (``models.lmm.engine``) without mixedlm or pandas.
_LAZY = {
    "DICT_KEYS": "models.lmm._summary",
    "LikelihoodRatioTest": "models.lmm._lrt",
    "Contrasts": "models.lmm._emmeans",
    "LinearMixedModel": "models.lmm.model",
    "MarginalMeans": "models.lmm._emmeans",
    "MixedR2": "models.lmm._r2",
    "MixedModelSummary": "models.lmm._summary",
    "cluster_levels": "models.lmm._r2",
    "lrt": "models.lmm.model",
    # the smooth terms' building blocks, shared with the ordinal mixed model
    "Smooth": "models.lmm._smooth",
    "SmoothPart": "models.lmm._smooth",
    "by_column": "models.lmm._smooth_spec",
    "check_by_main_effect": "models.lmm._smooth_spec",
    "smooth_parts": "models.lmm._smooth_fit",
    "pick_smooth": "models.lmm._smooth",
    "SmoothTerm": "models.lmm._smooth_spec",
    "construct_smooth": "models.lmm._smooth",
    "smooth_column": "models.lmm._smooth_spec",
    "split_smooth": "models.lmm._smooth_spec",
}

__all__ = [
    "DICT_KEYS",
    "Contrasts",
    "LikelihoodRatioTest",
    "LinearMixedModel",
    "MarginalMeans",
    "MixedModelSummary",
    "MixedR2",
    "Smooth",
    "SmoothPart",
    "SmoothTerm",
    "by_column",
    "check_by_main_effect",
    "cluster_levels",
    "construct_smooth",
    "lrt",
    "pick_smooth",
    "smooth_column",
    "smooth_parts",
    "split_smooth",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
