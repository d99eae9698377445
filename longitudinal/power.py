"""Power of a future study from a pilot study directory or a design file (``longitudinal power``).

:func:`pilot_empathy_model` fits the report's empathy mixed model ("What predicts empathy": the
same predictors, the same rule of one person-level predictor per 10 participants, the same
stepping down of the random effects) to a study directory, so a term is named as in the
``term`` column of the report's ``tables/empathy_effects.csv``. :func:`run_power` runs
:func:`models.power.simulate_power` and writes the output folder.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal._output import (
    atomic_write,
    check_out_dir,
    csv_is_raw,
    sha256,
    write_csv,
    write_json,
)
from longitudinal._wording import own_names
from longitudinal.study.rating_scale import MAX_ORDINAL_POINTS, scale_kind

__all__ = ["PilotModel", "effect_text", "pilot_empathy_model", "run_power"]

POWER_FILE = "power.csv"
FAILURES_FILE = "failures.csv"
FIGURE_FILE = "power.png"
PROVENANCE_FILE = "provenance.json"
TARGET = 0.8


@dataclass(frozen=True)
class PilotModel:
    """The report's empathy mixed model of a study, with the rows it was fitted to.

    Attributes
    ----------
    model : models.lmm.LinearMixedModel or models.ordinal.OrdinalMixedModel
        The fitted model: the linear one, or the cumulative link (ordinal) one of the same
        formula.
    data : pandas.DataFrame
        Its rows (one per rating): participant and session ids, predictors, rating.
    id_col, session_col : str
        Id columns of ``data``.
    terms : list of str
        Terms as in the report's ``tables/empathy_effects.csv``.
    notes : tuple of str
        Warnings of the fit (singular fit, simplified random effects).
    left_out : str
        The study's candidate predictors the model left out, with the reasons (as in the
        report's methods text); empty when none was.
    formula : str
        The model's formula as shown to the user: the session and story columns under the
        study's own names (``[columns]`` of study.toml).
    """

    model: Any
    data: pd.DataFrame
    id_col: str
    session_col: str
    terms: list[str]
    notes: tuple[str, ...]
    left_out: str = ""
    formula: str = ""


def pilot_empathy_model(
    study: Any, *, engine: str = "lmm", predictors: Sequence[str] | None = None
) -> PilotModel:
    """Fit the report's "what predicts empathy" mixed model to a study.

    Parameters
    ----------
    study : longitudinal.study.loaded.Study or path-like
        A loaded study or its directory.
    engine : {"lmm", "clmm"}, default "lmm"
        The linear mixed model of the ratings, or the cumulative link (ordinal) mixed model
        of the same formula (the report's "ordinal mixed model" rows); its coefficients are
        log odds ratios.
    predictors : sequence of str, optional
        What the model tests, in priority order, as the report's ``--predictors`` (see
        :func:`longitudinal.predict.selection.plan_predictors`); default study.toml's
        ``[roles] predictors``, else the stated rule.

    Returns
    -------
    PilotModel

    Raises
    ------
    longitudinal.InvalidParameterError
        When the study has too few participants for any predictor, ratings that do not
        vary, or (``clmm``) ratings that are not whole numbers or an ordinal model that cannot
        be fitted.
    surveys.InputValidationError
        When the study directory is not usable.
    """
    from longitudinal.predict import empathy_data, fit_empathy_models
    from longitudinal.predict.selection import PEOPLE_PER_PREDICTOR, plan_predictors
    from longitudinal.study.loaded import Study, load_study

    if engine not in ("lmm", "clmm"):
        raise InvalidParameterError(f"the engine must be 'lmm' or 'clmm'; got {engine!r}")
    if not isinstance(study, Study):
        study = load_study(study)
    plan = plan_predictors(study, predictors, func="longitudinal power --pilot")
    if plan.empty:
        raise InvalidParameterError(
            f"the pilot study has complete data from {plan.n_participants} participants; the "
            "empathy model "
            f"takes one person-level predictor per {PEOPLE_PER_PREDICTOR} participants and no "
            "session feature is a candidate, so it has none to simulate. Use --design with a "
            "design file instead."
        )
    data = empathy_data(study, **plan.data_kwargs())
    v = data.data[data.response_col]
    if v.nunique() < 2:
        raise InvalidParameterError("every rating of the pilot has the same value; nothing to fit")
    if engine == "clmm" and scale_kind(data.scale_min, data.scale_max) == "continuous":
        raise InvalidParameterError(
            f"the pilot's ratings are on a {data.scale_min:g}-{data.scale_max:g} scale, more "
            f"than {MAX_ORDINAL_POINTS} points: a continuous scale, simulated with the linear "
            "mixed model (--engine lmm); the ordinal model (--engine clmm) would treat every "
            "point as an ordered category"
        )
    story_effects = data.data["story_id"].nunique() < len(data.data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if engine == "clmm" and not np.all(np.equal(np.round(v), v)):
            raise InvalidParameterError(
                "the pilot's ratings are not whole numbers; the ordinal model (--engine clmm) "
                "needs ordered categories such as 1..5"
            )
        fitted = fit_empathy_models(
            data,
            bayes=False,
            include_clmm=engine == "clmm",
            story_effects=story_effects,
        )
    names = study.config.column_names  # messages name the study's own columns
    notes = tuple(
        dict.fromkeys(own_names(f"{w.category.__name__}: {w.message}", names) for w in caught)
    )
    if plan.left_out:
        notes += (f"predictors left out: {plan.left_out_text()}",)
    model = fitted.clmm if engine == "clmm" else fitted.lmm
    if model is None:
        raise InvalidParameterError(
            "the ordinal mixed model could not be fitted to the pilot: "
            + "; ".join(n for n in notes if "ordinal" in n)
        )
    return PilotModel(
        model=model,
        data=data.data,
        id_col=data.id_col,
        session_col="session_id",
        terms=[str(t) for t in model.fixed_["term"]],
        notes=notes,
        left_out=plan.left_out_text(),
        formula=own_names(model.formula, names),
    )


def effect_text(meta: Mapping[str, Any]) -> str:
    """Return the effect as shown: its value, and its scale for the ordinal model."""
    value = f"{meta['effect']:g}"
    return f"{value} (log odds ratio)" if meta.get("engine") == "clmm" else value


def run_power(
    out_dir: str | os.PathLike[str],
    *,
    effect: Mapping[str, float],
    n_participants: Sequence[int],
    pilot: str | os.PathLike[str] | None = None,
    design: str | os.PathLike[str] | None = None,
    n_sessions: str | None = None,
    n_sims: int = 1000,
    alpha: float = 0.05,
    test: str | None = None,
    engine: str | None = None,
    scheduler: str | None = None,
    seed: int | None = None,
    progress: bool = True,
    overwrite: bool = False,
    predictors: Sequence[str] | None = None,
) -> tuple[Path, Any]:
    """Run a power analysis and write its folder.

    Parameters
    ----------
    out_dir : path-like
        Folder to create (new or empty; ``overwrite`` replaces only a previous output of
        ``longitudinal power``).
    effect : mapping
        ``{term: value}`` (see :func:`models.power.simulate_power`).
    n_participants : sequence of int
        The grid.
    pilot, design : path-like
        Exactly one: a study directory (its empathy model is the pilot) or a design TOML.
    n_sessions : str, optional
        Sessions per participant, ``"8"`` or ``"6-12"``.
    n_sims, alpha, test, scheduler, seed, progress
        As :func:`models.power.simulate_power` (``test`` None: the engine's default,
        Satterthwaite t for ``lmm``, Wald z for ``clmm``).
    engine : {"lmm", "clmm"}, optional
        The model: linear, or cumulative link (ordinal; the effect is a log odds ratio).
        Default: ``lmm`` for a pilot, the design file's ``engine`` for a design.
    overwrite : bool, default False
        Replace a previous output of this command.
    predictors : sequence of str, optional
        With ``pilot``: what the pilot's empathy model tests (as :func:`pilot_empathy_model`).

    Returns
    -------
    (pathlib.Path, models.power.PowerResult)
        The folder, holding ``power.csv`` (one row per grid point), ``failures.csv`` (every
        failed or singular simulation with its reason), ``power.png``, ``power.svg`` and
        ``power.pdf`` (power against participants, interval band, 80% target) and
        ``provenance.json``; and the result.

    Raises
    ------
    longitudinal.InvalidParameterError
        For a bad option, an engine other than the design file's, or an output folder that
        overlaps an input.
    models.InvalidParameterError
        For a term not in the model, or a bad design file.
    """
    from models.power import read_design, simulate_power

    func = "longitudinal power"
    if (pilot is None) == (design is None):
        raise InvalidParameterError("give exactly one of --pilot STUDY_DIR and --design FILE")
    if predictors is not None and pilot is None:
        raise InvalidParameterError(
            "--predictors chooses the terms of a pilot's empathy model; a design file lists "
            "its terms itself"
        )
    if engine is not None and engine not in ("lmm", "clmm"):
        raise InvalidParameterError(f"--engine must be lmm or clmm; got {engine!r}")
    spec = None
    if pilot is not None:
        from longitudinal.study.loaded import study_inputs

        inputs = study_inputs(pilot)
    else:
        inputs = [Path(design)]  # type: ignore[arg-type]
        spec = read_design(design)  # type: ignore[arg-type]
        if engine is not None and engine != spec.engine:
            raise InvalidParameterError(
                f"--engine {engine} but the design {design} has engine = {spec.engine!r}; the "
                "design file decides the model (a linear design has [residual], an ordinal "
                "one [thresholds])"
            )
    out = check_out_dir(out_dir, overwrite=overwrite, func=func, command="power", inputs=inputs)
    notes: tuple[str, ...] = ()
    if pilot is not None:
        fitted = pilot_empathy_model(pilot, engine=engine or "lmm", predictors=predictors)
        term = next(iter(effect))
        if term not in fitted.terms:
            raise InvalidParameterError(
                f"--effect names {term!r}, which is not a term of the pilot's empathy model "
                f"({fitted.formula or fitted.model.formula}); terms, as in the report's "
                f"tables/empathy_effects.csv: {', '.join(fitted.terms)}. "
                "--predictors NAME [NAME ...] chooses what the model tests, by the study's "
                "own score and session-feature names"
                + (f"; this pilot's model left out {fitted.left_out}" if fitted.left_out else "")
            )
        notes = fitted.notes
        source: Any = fitted.model
        pilot_options = {
            "data": fitted.data,
            "id_col": fitted.id_col,
            "session_col": fitted.session_col,
        }
    else:
        source, pilot_options = spec, {}
    result = simulate_power(
        source,
        effect=effect,
        n_participants=list(n_participants),
        n_sessions=n_sessions,
        n_sims=n_sims,
        alpha=alpha,
        test=test,  # type: ignore[arg-type]
        seed=seed,
        scheduler=scheduler,
        progress=progress,
        **pilot_options,
    )
    from longitudinal.plotting import JOURNAL_DPI, plot_power_curve, save_figure
    from surveys import __version__

    meta = result.meta
    if pilot is not None:  # the formula and the session column under the study's own names
        from longitudinal.study.loaded import read_study_config

        names = read_study_config(pilot).column_names
        meta = {
            **meta,
            **{k: own_names(str(meta[k]), names) for k in ("formula", "session_col") if k in meta},
        }
    title = f"{meta['term']} = {effect_text(meta)}, {meta['test']} test, alpha {meta['alpha']:g}"
    provenance = {
        "package": "empathic-longitudinal",
        "version": __version__,
        "command": "power",
        "inputs_sha256": {
            (Path(p).relative_to(pilot).as_posix() if pilot is not None else Path(p).name): (
                sha256(Path(p))
            )
            for p in inputs
            if Path(p).is_file()
        },
        "python": ".".join(map(str, sys.version_info[:3])),
        "dependencies": {
            m: getattr(sys.modules.get(m), "__version__", None)
            for m in ("numpy", "scipy", "pandas", "mixedlm", "dask", "distributed")
        },
        "power": meta,
        "raw_csv": csv_is_raw(),  # --raw-csv: CSV text cells written without the apostrophe
        "target": TARGET,
        "notes": list(notes),
        "files": [
            POWER_FILE,
            FAILURES_FILE,
            FIGURE_FILE,
            "power.svg",
            "power.pdf",
            PROVENANCE_FILE,
        ],
    }

    def write(folder: Path) -> None:
        write_csv(result.table, folder / POWER_FILE)
        write_csv(result.failures, folder / FAILURES_FILE)
        fig = plot_power_curve(result.table, target=TARGET, ci_level=meta["ci_level"], title=title)
        save_figure(fig, folder / FIGURE_FILE, dpi=JOURNAL_DPI, vector=True)
        write_json(provenance, folder / PROVENANCE_FILE)

    atomic_write(out, write, overwrite=overwrite, what="the power analysis", command="power")
    return out, result
