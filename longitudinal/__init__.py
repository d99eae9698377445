"""Longitudinal empathy studies: study directories, synthetic studies, change reports.

:func:`load_study` reads and validates a study directory and scores every questionnaire;
its :class:`Study` builds the analysis frames (story level, session level, person x wave).
:func:`change_analysis` runs the pre/mid/post change statistics for one scale, and
:func:`build_report` writes the whole change report. :func:`simulate_study` writes a
synthetic study with known truth; :func:`run_demo` simulates one and reports on it.
"""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING


def _refuse_shadowed_packages() -> None:
    """Fail with a clear message when a folder shadows the package's ``surveys`` or ``models``.

    A study directory holds a ``surveys/`` folder; started inside it, Python may take that
    folder (a namespace package, without ``__init__.py``) for the package. ``make`` installs
    the package so that cannot happen; this check names the cause for other installs.
    """
    for name in ("surveys", "models"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin in (None, "namespace"):
            where = ", ".join(spec.submodule_search_locations or [])
            raise ImportError(
                f"the folder {where} shadows the package {name!r} of empathic-longitudinal "
                "(Python found a plain folder of that name first, typically the surveys/ "
                "folder of a study directory you started Python in). Start Python in another "
                "folder, or install the package with `make` or `pip install .`, which do not "
                "let a folder shadow it."
            )


_refuse_shadowed_packages()

from _empathic_base.lazy import lazy_exports  # noqa: E402
from longitudinal._errors import (  # noqa: E402
    DataQualityWarning,
    EmpathicError,
    EmpathicWarning,
    InvalidParameterError,
    LongitudinalError,
    LongitudinalWarning,
)

if TYPE_CHECKING:  # what __getattr__ imports on first use
    from longitudinal.change import (
        ChangeResult,
        GrowthModelResult,
        ImputedChange,
        PairwiseChanges,
        ReliableChangeResult,
        RMAnovaResult,
        TippingPoint,
        change_analysis,
        describe_waves,
        friedman_test,
        growth_model,
        holm_adjust,
        imputed_change,
        pairwise_changes,
        reliable_change,
        rm_anova,
        tipping_point,
    )
    from longitudinal.predict import (
        EmpathyData,
        EmpathyEffects,
        EvaluationResult,
        describe_effects,
        empathy_data,
        empathy_formula,
        evaluate_predictions,
        fit_empathy_models,
        plot_effects,
        plot_metrics,
        run_evaluation,
    )
    from longitudinal.predict.selection import participant_splits
    from longitudinal.predict.splits import BenchmarkSplit, draw_splits
    from longitudinal.predict.user_predictions import read_predictions
    from longitudinal.psychometrics.agreement import agreement_from_file
    from longitudinal.psychometrics.generalizability import ratings_g_study
    from longitudinal.psychometrics.reliability import (
        MultilevelTables,
        multilevel_tables,
        scale_multilevel_reliability,
        study_multilevel_reliability,
    )
    from longitudinal.report import build_report, pseudonyms, run_demo
    from longitudinal.report.sections.effects import empathy_effects_section
    from longitudinal.simulate import SimulatedStudy, simulate_frames, simulate_study
    from longitudinal.study.attrition import Attrition, attrition
    from longitudinal.study.frames import within_between
    from longitudinal.study.loaded import Study, StudyConfig, load_study, read_study_config
    from longitudinal.study.score_imputation import ImputedScores, impute_scores
    from longitudinal.study.session_imputation import ImputedSessions, impute_sessions
    from surveys import __version__

#: Public name -> the module that defines it, imported on first use
#: (``_empathic_base/lazy.py``); a new public name is one line here and one in __all__.
_LAZY = {
    "agreement_from_file": "longitudinal.psychometrics.agreement",
    "ChangeResult": "longitudinal.change",
    "GrowthModelResult": "longitudinal.change",
    "PairwiseChanges": "longitudinal.change",
    "ReliableChangeResult": "longitudinal.change",
    "RMAnovaResult": "longitudinal.change",
    "change_analysis": "longitudinal.change",
    "describe_waves": "longitudinal.change",
    "friedman_test": "longitudinal.change",
    "growth_model": "longitudinal.change",
    "holm_adjust": "longitudinal.change",
    "pairwise_changes": "longitudinal.change",
    "reliable_change": "longitudinal.change",
    "rm_anova": "longitudinal.change",
    "ImputedChange": "longitudinal.change",
    "TippingPoint": "longitudinal.change",
    "imputed_change": "longitudinal.change",
    "tipping_point": "longitudinal.change",
    "within_between": "longitudinal.study.frames",
    "ratings_g_study": "longitudinal.psychometrics.generalizability",
    "EmpathyData": "longitudinal.predict",
    "EmpathyEffects": "longitudinal.predict",
    "EvaluationResult": "longitudinal.predict",
    "describe_effects": "longitudinal.predict",
    "empathy_data": "longitudinal.predict",
    "empathy_formula": "longitudinal.predict",
    "evaluate_predictions": "longitudinal.predict",
    "fit_empathy_models": "longitudinal.predict",
    "plot_effects": "longitudinal.predict",
    "plot_metrics": "longitudinal.predict",
    "run_evaluation": "longitudinal.predict",
    "MultilevelTables": "longitudinal.psychometrics.reliability",
    "multilevel_tables": "longitudinal.psychometrics.reliability",
    "scale_multilevel_reliability": "longitudinal.psychometrics.reliability",
    "study_multilevel_reliability": "longitudinal.psychometrics.reliability",
    "build_report": "longitudinal.report",
    "pseudonyms": "longitudinal.report",
    "run_demo": "longitudinal.report",
    "empathy_effects_section": "longitudinal.report.sections.effects",
    "SimulatedStudy": "longitudinal.simulate",
    "simulate_frames": "longitudinal.simulate",
    "simulate_study": "longitudinal.simulate",
    "BenchmarkSplit": "longitudinal.predict.splits",
    "draw_splits": "longitudinal.predict.splits",
    "participant_splits": "longitudinal.predict.selection",
    "Attrition": "longitudinal.study.attrition",
    "attrition": "longitudinal.study.attrition",
    "ImputedScores": "longitudinal.study.score_imputation",
    "impute_scores": "longitudinal.study.score_imputation",
    "ImputedSessions": "longitudinal.study.session_imputation",
    "impute_sessions": "longitudinal.study.session_imputation",
    "Study": "longitudinal.study.loaded",
    "StudyConfig": "longitudinal.study.loaded",
    "load_study": "longitudinal.study.loaded",
    "read_study_config": "longitudinal.study.loaded",
    "read_predictions": "longitudinal.predict.user_predictions",
    "__version__": "surveys",
}

__all__ = [
    "Attrition",
    "BenchmarkSplit",
    "ChangeResult",
    "DataQualityWarning",
    "ImputedChange",
    "ImputedScores",
    "ImputedSessions",
    "EmpathicError",
    "EmpathicWarning",
    "EmpathyData",
    "EmpathyEffects",
    "EvaluationResult",
    "GrowthModelResult",
    "InvalidParameterError",
    "LongitudinalError",
    "LongitudinalWarning",
    "MultilevelTables",
    "PairwiseChanges",
    "RMAnovaResult",
    "ReliableChangeResult",
    "SimulatedStudy",
    "Study",
    "TippingPoint",
    "StudyConfig",
    "agreement_from_file",
    "attrition",
    "build_report",
    "change_analysis",
    "describe_effects",
    "describe_waves",
    "draw_splits",
    "empathy_data",
    "empathy_effects_section",
    "empathy_formula",
    "evaluate_predictions",
    "fit_empathy_models",
    "friedman_test",
    "growth_model",
    "impute_scores",
    "impute_sessions",
    "imputed_change",
    "holm_adjust",
    "load_study",
    "multilevel_tables",
    "pairwise_changes",
    "participant_splits",
    "plot_effects",
    "plot_metrics",
    "pseudonyms",
    "ratings_g_study",
    "read_predictions",
    "read_study_config",
    "reliable_change",
    "rm_anova",
    "run_demo",
    "run_evaluation",
    "scale_multilevel_reliability",
    "simulate_frames",
    "simulate_study",
    "study_multilevel_reliability",
    "tipping_point",
    "within_between",
    "__version__",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
