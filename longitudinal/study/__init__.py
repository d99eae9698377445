"""The study and its frames: what a study directory declares, holds and means.

``config`` reads ``study.toml`` (every problem at once); ``tables`` reads the CSV tables under
the study's own column names; ``_loader`` reads, checks and scores every survey export;
``loaded`` is the :class:`Study` those build (``load_study``); ``frames`` the story, session
and person × wave frames a Study builds once; ``rating_scale`` what kind of scale the ratings
are (ordinal or continuous) and the rules that follow from it.

The names below are imported on first use, so importing one module of the room stays light.
"""

from _empathic_base.lazy import lazy_exports

_LAZY = {
    "EXCLUSION_COLUMNS": "longitudinal.study.loaded",
    "RatingsSpec": "longitudinal.study.loaded",
    "Study": "longitudinal.study.loaded",
    "StudyConfig": "longitudinal.study.loaded",
    "SurveySpec": "longitudinal.study.loaded",
    "load_study": "longitudinal.study.loaded",
    "read_study_config": "longitudinal.study.loaded",
    "study_inputs": "longitudinal.study.loaded",
    "pseudonym_map": "longitudinal.study.loaded",
}

__all__ = [
    "EXCLUSION_COLUMNS",
    "RatingsSpec",
    "Study",
    "StudyConfig",
    "SurveySpec",
    "load_study",
    "pseudonym_map",
    "read_study_config",
    "study_inputs",
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
