"""Longitudinal empathy studies: study directories, synthetic studies, change reports.

:func:`load_study` reads and validates a study directory and scores every questionnaire;
its :class:`Study` builds the analysis frames (story level, session level, person x wave).
:func:`change_analysis` runs the pre/mid/post change statistics for one scale, and
:func:`build_report` writes the whole change report. :func:`simulate_study` writes a
synthetic study with known truth; :func:`run_demo` simulates one and reports on it.
"""

from longitudinal._errors import DataQualityWarning, InvalidParameterError, LongitudinalError
from longitudinal.change import (
    ChangeResult,
    GrowthModelResult,
    PairwiseChanges,
    ReliableChangeResult,
    RMAnovaResult,
    change_analysis,
    describe_waves,
    friedman_test,
    growth_model,
    holm_adjust,
    pairwise_changes,
    reliable_change,
    rm_anova,
)
from longitudinal.frames import within_between
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
from longitudinal.report import build_report, pseudonyms, run_demo
from longitudinal.report.sections.effects import EffectsSection, empathy_effects_section
from longitudinal.simulate import SimulatedStudy, simulate_frames, simulate_study
from longitudinal.splits import BenchmarkSplit, draw_splits, participant_splits
from longitudinal.study import Study, StudyConfig, load_study, read_study_config
from longitudinal.user_predictions import read_predictions
from surveys import __version__

__all__ = [
    "BenchmarkSplit",
    "ChangeResult",
    "DataQualityWarning",
    "EffectsSection",
    "EmpathyData",
    "EmpathyEffects",
    "EvaluationResult",
    "GrowthModelResult",
    "InvalidParameterError",
    "LongitudinalError",
    "PairwiseChanges",
    "RMAnovaResult",
    "ReliableChangeResult",
    "SimulatedStudy",
    "Study",
    "StudyConfig",
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
    "holm_adjust",
    "load_study",
    "pairwise_changes",
    "participant_splits",
    "plot_effects",
    "plot_metrics",
    "pseudonyms",
    "read_predictions",
    "read_study_config",
    "reliable_change",
    "rm_anova",
    "run_demo",
    "run_evaluation",
    "simulate_frames",
    "simulate_study",
    "within_between",
    "__version__",
]
