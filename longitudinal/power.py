"""Power of a future study from a pilot study directory or a design file (``longitudinal power``).

:func:`pilot_empathy_model` fits the report's empathy mixed model ("What predicts empathy": the
same predictors, the same rule of one person-level predictor per 10 participants, the same
stepping down of the random effects) to a study directory, so a term is named as in the
``term`` column of the report's ``tables/empathy_effects.csv``. :func:`run_power` runs
:func:`models.power.simulate_power` and writes the output folder.
"""

from __future__ import annotations

import hashlib
import json
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
from longitudinal._output import atomic_write, check_out_dir

__all__ = ["PilotModel", "pilot_empathy_model", "run_power"]

POWER_FILE = "power.csv"
FAILURES_FILE = "failures.csv"
FIGURE_FILE = "power.png"
PROVENANCE_FILE = "provenance.json"
TARGET = 0.8


@dataclass(frozen=True)
class PilotModel:
    """The report's empathy linear mixed model of a study, with the rows it was fitted to.

    Attributes
    ----------
    model : models.lmm.LinearMixedModel
        The fitted model.
    data : pandas.DataFrame
        Its rows (one per rating): participant and session ids, predictors, rating.
    participant_col, session_col : str
        Id columns of ``data``.
    terms : list of str
        Terms as in the report's ``tables/empathy_effects.csv``.
    notes : tuple of str
        Warnings of the fit (singular fit, simplified random effects).
    """

    model: Any
    data: pd.DataFrame
    participant_col: str
    session_col: str
    terms: list[str]
    notes: tuple[str, ...]


def pilot_empathy_model(study: Any) -> PilotModel:
    """Fit the report's "what predicts empathy" linear mixed model to a study.

    Parameters
    ----------
    study : longitudinal.study.Study or path-like
        A loaded study or its directory.

    Returns
    -------
    PilotModel

    Raises
    ------
    longitudinal.InvalidParameterError
        When the study has too few participants for any predictor, or ratings that do not
        vary.
    surveys.InputValidationError
        When the study directory is not usable.
    """
    from longitudinal.predict import default_predictors, empathy_data, fit_empathy_models
    from longitudinal.report.sections.closing import PEOPLE_PER_PREDICTOR, size_predictors
    from longitudinal.study import Study, load_study

    if not isinstance(study, Study):
        study = load_study(study)
    n_people = int(study.story_frame()[study.config.id_col].nunique())
    kept, _ = size_predictors(default_predictors(study), n_people)
    if not any(kept.values()):
        raise InvalidParameterError(
            f"the pilot study has ratings from {n_people} participants; the empathy model takes "
            f"one person-level predictor per {PEOPLE_PER_PREDICTOR} participants, so it has none "
            "to simulate. Use --design with a design file instead."
        )
    data = empathy_data(study, **kept)
    v = data.data[data.response_col]
    if v.nunique() < 2:
        raise InvalidParameterError("every rating of the pilot has the same value; nothing to fit")
    story_effects = data.data["story_id"].nunique() < len(data.data)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fitted = fit_empathy_models(
            data, include_bayes=False, include_clmm=False, story_effects=story_effects
        )
    notes = tuple(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    return PilotModel(
        model=fitted.lmm,
        data=data.data,
        participant_col=data.id_col,
        session_col="session_id",
        terms=[str(t) for t in fitted.lmm.fixed_["term"]],
        notes=notes,
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


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
    test: str = "satterthwaite",
    scheduler: str | None = None,
    seed: int | None = None,
    progress: bool = True,
    overwrite: bool = False,
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
        As :func:`models.power.simulate_power`.
    overwrite : bool, default False
        Replace a previous output of this command.

    Returns
    -------
    (pathlib.Path, models.power.PowerResult)
        The folder, holding ``power.csv`` (one row per grid point), ``failures.csv`` (every
        failed or singular simulation with its reason), ``power.png`` and ``power.svg`` (power
        against participants, interval band, 80% target) and ``provenance.json``; and the
        result.

    Raises
    ------
    longitudinal.InvalidParameterError
        For a bad option or an output folder that overlaps an input.
    models.InvalidParameterError
        For a term not in the model, or a bad design file.
    """
    from models.power import read_design, simulate_power

    func = "longitudinal power"
    if (pilot is None) == (design is None):
        raise InvalidParameterError("give exactly one of --pilot STUDY_DIR and --design FILE")
    if pilot is not None:
        from longitudinal.study import study_inputs

        inputs = study_inputs(pilot)
    else:
        inputs = [Path(design)]  # type: ignore[arg-type]
    out = check_out_dir(out_dir, overwrite=overwrite, func=func, command="power", inputs=inputs)
    notes: tuple[str, ...] = ()
    if pilot is not None:
        fitted = pilot_empathy_model(pilot)
        term = next(iter(effect))
        if term not in fitted.terms:
            raise InvalidParameterError(
                f"--effect names {term!r}, which is not a term of the pilot's empathy model "
                f"({fitted.model.formula}); terms, as in the report's "
                f"tables/empathy_effects.csv: {', '.join(fitted.terms)}"
            )
        notes = fitted.notes
        result = simulate_power(
            fitted.model,
            data=fitted.data,
            participant_col=fitted.participant_col,
            session_col=fitted.session_col,
            effect=effect,
            n_participants=list(n_participants),
            n_sessions=n_sessions,
            n_sims=n_sims,
            alpha=alpha,
            test=test,  # type: ignore[arg-type]
            seed=seed,
            scheduler=scheduler,
            progress=progress,
        )
    else:
        result = simulate_power(
            read_design(design),  # type: ignore[arg-type]
            effect=effect,
            n_participants=list(n_participants),
            n_sessions=n_sessions,
            n_sims=n_sims,
            alpha=alpha,
            test=test,  # type: ignore[arg-type]
            seed=seed,
            scheduler=scheduler,
            progress=progress,
        )
    from longitudinal import __version__
    from longitudinal.plotting import plot_power_curve, save_figure

    meta = result.meta
    title = f"{meta['term']} = {meta['effect']:g}, {meta['test']} test, alpha {meta['alpha']:g}"
    provenance = {
        "package": "empathic-longitudinal",
        "version": __version__,
        "command": "power",
        "inputs_sha256": {
            (Path(p).relative_to(pilot).as_posix() if pilot is not None else Path(p).name): (
                _sha256(Path(p))
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
        "target": TARGET,
        "notes": list(notes),
        "files": [POWER_FILE, FAILURES_FILE, FIGURE_FILE, "power.svg", PROVENANCE_FILE],
    }

    def write(folder: Path) -> None:
        result.table.to_csv(folder / POWER_FILE, index=False, float_format="%.17g")
        result.failures.to_csv(folder / FAILURES_FILE, index=False, float_format="%.17g")
        fig = plot_power_curve(result.table, target=TARGET, ci_level=meta["ci_level"], title=title)
        save_figure(fig, folder / FIGURE_FILE, vector=True)
        (folder / PROVENANCE_FILE).write_text(
            json.dumps(provenance, indent=2, sort_keys=True, default=_json_default) + "\n",
            encoding="utf-8",
        )

    atomic_write(out, write, overwrite=overwrite, what="the power analysis", command="power")
    return out, result
