"""The options of one report, checked once at the entry points."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from _empathic_base.words import parameter
from longitudinal._checks import check_bool, check_unit
from longitudinal._errors import InvalidParameterError
from longitudinal._sizes import LEAN_MODEL_PARTICIPANTS  # noqa: F401 (re-exported)


@dataclass(frozen=True)
class ReportOptions:
    """What the user chose: seed, pseudonyms, retest reliabilities, model options."""

    seed: int | None
    pseudonymize: bool
    retest: dict[str, float]
    random_slope: bool
    ci_level: float
    bayes: bool
    overwrite: bool
    sampling: dict[str, Any] = field(default_factory=dict)  # draws, tune, chains, sampler, ...
    predictors: tuple[str, ...] | None = None  # --predictors; None: study.toml or the rule
    person_tables: bool = True  # write the tables with one row per participant
    formats: tuple[str, ...] = ("html",)  # --formats: html (the report), docx, latex
    lean: bool = False  # --lean: a big study's reduced report (see LEAN_MODEL_PARTICIPANTS)
    ordinal_bins: int | None = None  # --ordinal-bins: ordinal models of a continuous scale
    invariance_estimator: str = "auto"  # --estimator: the invariance ladders' estimator

    def as_dict(self) -> dict[str, Any]:
        """Return the options as provenance.json records them."""
        return {
            "seed": self.seed,
            "pseudonymize": self.pseudonymize,
            "retest": dict(sorted(self.retest.items())),
            "random_slope": self.random_slope,
            "ci_level": self.ci_level,
            "bayes": self.bayes,
            **({} if self.person_tables else {"person_tables": False}),
            **({"lean": True} if self.lean else {}),
            **({"sampling": dict(self.sampling)} if self.sampling else {}),
            **({"predictors": list(self.predictors)} if self.predictors else {}),
            **({"formats": list(self.formats)} if self.formats != ("html",) else {}),
            **({"ordinal_bins": self.ordinal_bins} if self.ordinal_bins is not None else {}),
            **(
                {"invariance_estimator": self.invariance_estimator}
                if self.invariance_estimator != "auto"
                else {}
            ),
        }


INVARIANCE_ESTIMATORS = ("auto", "WLSMV", "MLR", "ML")
"""The estimators of the invariance ladders (``--estimator``); ``auto`` chooses per scale."""

_SAMPLING = {"draws": int, "tune": int, "chains": int, "sampler": str, "target_accept": float}


def check_options(
    *,
    seed,
    pseudonymize,
    retest,
    random_slope,
    ci_level,
    bayes,
    overwrite,
    func,
    sampling=None,
    predictors=None,
    person_tables=True,
    formats=("html",),
    lean=False,
    ordinal_bins=None,
    invariance_estimator="auto",
) -> ReportOptions:
    """Check the report's options; ``func`` names the entry point in the messages.

    A message names a parameter as ``func``'s (``the `formats` parameter of build_report``),
    or as its option (``--formats``) when ``longitudinal report`` runs
    (:mod:`_empathic_base.words`).
    """
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise InvalidParameterError(
            f"{parameter('seed', func)} must be an int or None; got {seed!r}"
        )
    for name, value in (
        ("pseudonymize", pseudonymize),
        ("random_slope", random_slope),
        ("bayes", bayes),
        ("overwrite", overwrite),
        ("person_tables", person_tables),
        ("lean", lean),
    ):
        check_bool(value, name=name, where=func)
    check_unit(ci_level, name="ci_level", where=func)
    if invariance_estimator not in INVARIANCE_ESTIMATORS:
        raise InvalidParameterError(
            f"{parameter('invariance_estimator', func)} must be one of "
            f"{', '.join(INVARIANCE_ESTIMATORS)}; got {invariance_estimator!r}"
        )
    if ordinal_bins is not None:  # the range here; the study's scale in build_report
        from longitudinal.study.rating_scale import check_ordinal_bins

        check_ordinal_bins(ordinal_bins, where=func, name="the `ordinal_bins` parameter")
    sampling = {k: v for k, v in (sampling or {}).items() if v is not None}
    for key, value in sampling.items():
        if key == "draws" and value == "auto":  # stop once the draws suffice (nutpie)
            continue
        kind = _SAMPLING.get(key)
        if kind is None or isinstance(value, bool) or not isinstance(value, kind | int):
            raise InvalidParameterError(
                f"{parameter(key, func, what='sampling option')} is unknown or of the wrong "
                f"type; expected one of {sorted(_SAMPLING)}"
            )
    if "target_accept" in sampling and not 0 < sampling["target_accept"] < 1:
        raise InvalidParameterError(
            f"{parameter('target_accept', func, what='option')} must be in (0, 1)"
        )
    from models.limits import BAYES_MAX_CHAINS, BAYES_MAX_DRAWS, BAYES_MAX_TUNE

    ceilings = {"draws": BAYES_MAX_DRAWS, "tune": BAYES_MAX_TUNE, "chains": BAYES_MAX_CHAINS}
    for key, ceiling in ceilings.items():
        if key in sampling and sampling[key] == "auto":
            continue
        if key in sampling and sampling[key] < 1:
            raise InvalidParameterError(f"{parameter(key, func, what='option')} must be at least 1")
        if key in sampling and sampling[key] > ceiling:  # before any analysis, not at the model
            raise InvalidParameterError(
                f"{parameter(key, func, what='option')} must be at most {ceiling:,}; got "
                f"{sampling[key]}"
            )
    if predictors is not None:
        from longitudinal.predict.selection import parse_predictor_list

        if isinstance(predictors, str | bytes) and not str(predictors).strip():
            predictors = None
        elif not isinstance(predictors, str) and not all(isinstance(p, str) for p in predictors):
            raise InvalidParameterError(
                f"{parameter('predictors', func)} must be a list of scale or session "
                f"feature names; got {predictors!r}"
            )
        predictors = parse_predictor_list(predictors)
    return ReportOptions(
        formats=_check_formats(formats, func),
        predictors=predictors,
        sampling=sampling,
        seed=None if seed is None else int(seed),
        pseudonymize=pseudonymize,
        retest=_check_retest(retest, func),
        random_slope=random_slope,
        ci_level=float(ci_level),
        bayes=bayes,
        overwrite=overwrite,
        person_tables=person_tables,
        lean=lean,
        ordinal_bins=None if ordinal_bins is None else int(ordinal_bins),
        invariance_estimator=invariance_estimator,
    )


def _check_retest(retest: Any, func: str) -> dict[str, float]:
    checked: dict[str, float] = {}
    if retest is None:
        return checked
    if not isinstance(retest, Mapping):
        raise InvalidParameterError(
            f"{parameter('retest', func)} must be a mapping {{scale or instrument: r}}; "
            f"got {type(retest).__name__}"
        )
    for key, value in retest.items():
        if (
            not isinstance(key, str)
            or isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value < 1
        ):
            raise InvalidParameterError(
                f"{parameter('retest', func)} must map names to a reliability in "
                f"[0, 1); got {key!r}: {value!r}"
            )
        checked[key] = float(value)
    return checked


FORMATS = ("html", "docx", "latex")
"""What ``formats`` may name: the report page (always written) and the manuscript files."""


def _check_formats(formats: Any, func: str) -> tuple[str, ...]:
    """Parse ``"html,docx"`` or a sequence of names into the ordered tuple of formats."""
    names = formats.split(",") if isinstance(formats, str) else formats
    if isinstance(names, bytes) or not all(isinstance(n, str) for n in names):
        raise InvalidParameterError(
            f"{parameter('formats', func)} must be a comma-separated string or a list of "
            f"{', '.join(FORMATS)}; got {formats!r}"
        )
    names = [n.strip().lower() for n in names if n.strip()]
    unknown = [n for n in names if n not in FORMATS]
    if unknown or not names:
        raise InvalidParameterError(
            f"{parameter('formats', func)} must name one or more of {', '.join(FORMATS)}; "
            f"got {formats!r}"
        )
    return ("html", *[n for n in FORMATS[1:] if n in names])
