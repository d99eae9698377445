"""Participant-level models: lme4-style mixed models, panel estimators, Bayesian models.

:class:`LinearMixedModel` fits ``lme4`` formulas (crossed, nested, correlated or uncorrelated
random effects) by REML or ML with mixedlm, with Satterthwaite or Kenward-Roger degrees of
freedom, and
:class:`BayesianMixedModel` fits the same formulas with an ordinal or gaussian likelihood in
PyMC; :class:`OrdinalMixedModel` fits cumulative link mixed models (``ordinal::clmm``) by
Laplace or adaptive quadrature; :func:`multilevel_reliability` gives psych's ``mlr``
variance components and generalizability coefficients of a scale over occasions;
:func:`parse_formula` and :func:`build_design` are the formula layer they share. The panel
companions (:func:`fit_within`, :func:`fit_random_effects`, :func:`fit_between`,
:func:`hausman_test`, :func:`within_between`) wrap ``linearmodels``.
:func:`agreement` measures agreement between raters (Krippendorff's alpha, Fleiss' kappa,
Gwet's AC1/AC2); :func:`measurement_invariance` tests longitudinal measurement invariance
(lavaan's ML and MLR); :func:`g_study` is the generalizability study of ratings.

Importing the package runs only its error tree; every other public name is imported on first
use (``_LAZY`` below), so ``import models`` loads no engine, sampler or SciPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from _empathic_base.lazy import lazy_exports
from models._errors import (
    CentringWarning,
    ConvergenceError,
    ConvergenceWarning,
    DataQualityWarning,
    EmpathicError,
    EmpathicWarning,
    FormulaError,
    InvalidParameterError,
    ModelsError,
    ModelsWarning,
    NotFittedError,
    SamplingWarning,
    SingularFitWarning,
)

if TYPE_CHECKING:  # what __getattr__ imports on first use
    from models.agreement import AgreementResult, agreement
    from models.bayes import (
        BayesianMixedModel,
        GroupCVResult,
        Prior,
        compare,
        default_priors,
        leave_one_group_out,
        sampling_diagnostics,
    )
    from models.evaluation import (
        GroupedFold,
        GroupedSplit,
        KFoldBootstrap,
        PredictionMetrics,
        binary_accuracy,
        binary_f1,
        grouped_kfold,
        grouped_split,
        kfold_bootstrap,
        mean_squared_error,
        overlapping_groups,
        pearson_r,
        prediction_metrics,
        spearman_rho,
        summarize_metrics,
        weighted_metrics,
    )
    from models.formula import (
        Design,
        FormulaSpec,
        RandomBlock,
        RandomTerm,
        build_design,
        parse_formula,
    )
    from models.generalizability import GStudy, g_study
    from models.imputation import ImputedTables, imputations_needed, impute_chained
    from models.lmm import (
        LikelihoodRatioTest,
        LinearMixedModel,
        MixedModelSummary,
        lrt,
    )
    from models.ordinal import (
        OrdinalMixedModel,
        OrdinalModelSummary,
    )
    from models.panel import (
        HausmanTest,
        PanelFit,
        fit_between,
        fit_random_effects,
        fit_within,
        hausman_test,
        within_between,
    )
    from models.pooling import (
        PooledEstimates,
        PooledWaldTest,
        pool_imputations,
        pool_wald,
    )
    from models.reliability import MultilevelReliability, multilevel_reliability
    from models.sem import InvarianceResult, invariance_tables, measurement_invariance

#: Public name -> the module that defines it, imported on first use
#: (``_empathic_base/lazy.py``); a new public name is one line here and one in __all__.
_LAZY = {
    "BayesianMixedModel": "models.bayes",
    "GroupCVResult": "models.bayes",
    "Prior": "models.bayes",
    "compare": "models.bayes",
    "default_priors": "models.bayes",
    "leave_one_group_out": "models.bayes",
    "sampling_diagnostics": "models.bayes",
    "GroupedFold": "models.evaluation",
    "GroupedSplit": "models.evaluation",
    "KFoldBootstrap": "models.evaluation",
    "PredictionMetrics": "models.evaluation",
    "binary_accuracy": "models.evaluation",
    "binary_f1": "models.evaluation",
    "grouped_kfold": "models.evaluation",
    "grouped_split": "models.evaluation",
    "kfold_bootstrap": "models.evaluation",
    "mean_squared_error": "models.evaluation",
    "overlapping_groups": "models.evaluation",
    "pearson_r": "models.evaluation",
    "prediction_metrics": "models.evaluation",
    "spearman_rho": "models.evaluation",
    "summarize_metrics": "models.evaluation",
    "weighted_metrics": "models.evaluation",
    "Design": "models.formula",
    "FormulaSpec": "models.formula",
    "RandomBlock": "models.formula",
    "RandomTerm": "models.formula",
    "build_design": "models.formula",
    "parse_formula": "models.formula",
    "LikelihoodRatioTest": "models.lmm",
    "LinearMixedModel": "models.lmm",
    "MixedModelSummary": "models.lmm",
    "lrt": "models.lmm",
    "OrdinalMixedModel": "models.ordinal",
    "OrdinalModelSummary": "models.ordinal",
    "PooledEstimates": "models.pooling",
    "PooledWaldTest": "models.pooling",
    "pool_imputations": "models.pooling",
    "pool_wald": "models.pooling",
    "HausmanTest": "models.panel",
    "PanelFit": "models.panel",
    "fit_between": "models.panel",
    "fit_random_effects": "models.panel",
    "fit_within": "models.panel",
    "hausman_test": "models.panel",
    "within_between": "models.panel",
    "AgreementResult": "models.agreement",
    "agreement": "models.agreement",
    "ImputedTables": "models.imputation",
    "impute_chained": "models.imputation",
    "imputations_needed": "models.imputation",
    "GStudy": "models.generalizability",
    "g_study": "models.generalizability",
    "MultilevelReliability": "models.reliability",
    "multilevel_reliability": "models.reliability",
    "InvarianceResult": "models.sem",
    "invariance_tables": "models.sem",
    "measurement_invariance": "models.sem",
}

__all__ = [
    "AgreementResult",
    "BayesianMixedModel",
    "CentringWarning",
    "ConvergenceError",
    "ConvergenceWarning",
    "DataQualityWarning",
    "Design",
    "EmpathicError",
    "EmpathicWarning",
    "FormulaError",
    "FormulaSpec",
    "GStudy",
    "GroupCVResult",
    "GroupedFold",
    "GroupedSplit",
    "HausmanTest",
    "ImputedTables",
    "InvalidParameterError",
    "InvarianceResult",
    "KFoldBootstrap",
    "LikelihoodRatioTest",
    "LinearMixedModel",
    "MixedModelSummary",
    "ModelsError",
    "ModelsWarning",
    "MultilevelReliability",
    "NotFittedError",
    "OrdinalMixedModel",
    "OrdinalModelSummary",
    "PanelFit",
    "PooledEstimates",
    "PooledWaldTest",
    "PredictionMetrics",
    "Prior",
    "RandomBlock",
    "RandomTerm",
    "SamplingWarning",
    "SingularFitWarning",
    "agreement",
    "binary_accuracy",
    "binary_f1",
    "build_design",
    "compare",
    "default_priors",
    "fit_between",
    "fit_random_effects",
    "fit_within",
    "g_study",
    "grouped_kfold",
    "grouped_split",
    "hausman_test",
    "imputations_needed",
    "impute_chained",
    "invariance_tables",
    "kfold_bootstrap",
    "leave_one_group_out",
    "lrt",
    "mean_squared_error",
    "multilevel_reliability",
    "measurement_invariance",
    "overlapping_groups",
    "parse_formula",
    "pearson_r",
    "pool_imputations",
    "pool_wald",
    "prediction_metrics",
    "sampling_diagnostics",
    "spearman_rho",
    "summarize_metrics",
    "weighted_metrics",
    "within_between",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
