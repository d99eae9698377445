"""The pre/mid/post change report of a study directory.

:func:`build_report` loads a study (:func:`longitudinal.study.load_study`), runs the change
analysis of every state scale (:func:`longitudinal.change.change_analysis`), draws the
figures (:mod:`longitudinal.plotting`) and writes one folder::

    report.html        self-contained (figures embedded), with a generated methods paragraph
    tables/*.csv       every table of the report, full precision
    figures/*.png      every figure
    exclusions.csv     the exclusion log (file, row, reason, scope)
    provenance.json    package version, SHA-256 of every input file, options, seed
    evaluate/          copied when the study (or a previous report) holds evaluate/metrics.csv

The folder is written atomically: everything goes to a temporary sibling folder that is
renamed at the end, so a failed run leaves no half report. Participant ids are replaced by
pseudonyms (``S01``, ``S02``, ... in the sorted order of the raw ids) unless
``pseudonymize=False``; session ids (which often contain participant ids) and free-text
columns are never written.

:func:`run_demo` simulates a study (:func:`longitudinal.simulate.simulate_study`) and writes
its report, with the simulated study (and its ``truth.json``) in ``study/`` inside the
report folder.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import os
import re
import shutil
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._errors import InvalidParameterError
from longitudinal._output import atomic_write, check_out_dir
from longitudinal.frames import scale_column

__all__ = ["build_report", "pseudonyms", "run_demo"]

REPORT_FILE = "report.html"
EXCLUSIONS_FILE = "exclusions.csv"
PROVENANCE_FILE = "provenance.json"
EVALUATION_FILE = Path("evaluate") / "metrics.csv"


# ---------------------------------------------------------------------------------------------
# public entry points


def pseudonyms(ids: Sequence[str], *, prefix: str = "S") -> dict[str, str]:
    """Stable pseudonyms for participant ids, assigned in sorted order of the raw ids.

    Parameters
    ----------
    ids : sequence of str
        Raw participant ids (duplicates are ignored).
    prefix : str, default "S"
        Letter(s) before the number.

    Returns
    -------
    dict
        ``{raw id: pseudonym}``; numbers are zero-padded to at least two digits.

    Examples
    --------
    >>> from longitudinal.report import pseudonyms
    >>> pseudonyms(["P10", "P02", "P07"])
    {'P02': 'S01', 'P07': 'S02', 'P10': 'S03'}
    """
    unique = sorted({str(i) for i in ids})
    width = max(2, len(str(len(unique))))
    return {raw: f"{prefix}{k:0{width}d}" for k, raw in enumerate(unique, start=1)}


def build_report(
    study_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    seed: int | None = None,
    pseudonymize: bool = True,
    retest: Mapping[str, float] | None = None,
    random_slope: bool = True,
    ci_level: float = 0.95,
    bayes: bool = True,
    overwrite: bool = False,
) -> Path:
    """Write the change report of a study directory.

    Parameters
    ----------
    study_dir : str or path-like
        The study directory (see :func:`longitudinal.study.load_study`).
    out_dir : str or path-like
        Report folder to create. It must not exist or be empty, unless ``overwrite=True``.
    seed : int, optional
        Recorded in ``provenance.json`` (the seed of the simulation, for a simulated study);
        the report itself has no random step.
    pseudonymize : bool, default True
        Replace participant ids by ``S01``, ``S02``, ... (sorted order of the raw ids) in every
        table and figure. ``False`` keeps the raw ids.
    retest : mapping, optional
        Test-retest reliabilities for the reliable change index, keyed by score column
        (``cls9_humanity_compassionate_love``) or instrument name (``cls9_humanity``).
        Scales without one use Cronbach's alpha at the first wave (stated in the report).
    random_slope : bool, default True
        Start the growth model with a random slope (it falls back to a random intercept when
        the slope variance is not estimable; the report says so).
    ci_level : float, default 0.95
        Level of every interval and of the reliable change criterion.
    bayes : bool, default True
        In the "What predicts empathy" section, fit the Bayesian ordinal model beside the
        linear mixed model (about a minute of sampling on two cores); ``False`` reports the
        mixed model alone.
    overwrite : bool, default False
        Replace an existing non-empty ``out_dir`` (only after the new report is complete).

    Returns
    -------
    pathlib.Path
        ``out_dir``.

    Raises
    ------
    surveys.InputValidationError
        The study directory is not usable (every problem listed; nothing is written).
    longitudinal.InvalidParameterError
        A parameter is invalid, ``out_dir`` is a file or a non-empty directory without
        ``overwrite=True``, or ``out_dir`` is (or contains) the study directory.

    Notes
    -----
    The report contains: the sample (participants, sessions, ratings, surveys per wave,
    exclusions by file and reason); reliability per scale and wave; per state scale the
    descriptives per wave, the repeated-measures ANOVA (complete cases, Mauchly's test,
    Greenhouse-Geisser and Huynh-Feldt corrections, how many people were left out), pairwise
    paired t tests (Holm) with d_z and g_av, the Friedman test, the linear growth model
    (time in weeks since the first wave, from the median survey dates) and reliable change
    counts with the reliability used; the empathy rating distribution and its course over
    the month; session behaviour; traits and demographics; figures; a methods paragraph
    generated from what was done; and ``evaluate/metrics.csv`` when present.

    Of several scales of one instrument that are rescalings of each other (same items, keys
    and rule; WHO-5 raw and percentage) only the last one is analysed.

    Warnings raised by the analyses (e.g. a growth model reduced to a random intercept) are
    recorded in the report and in ``provenance.json`` instead of being re-issued.

    Examples
    --------
    A report takes a few seconds (the growth models and the figures); see also
    :func:`run_demo`.

    >>> from longitudinal.simulate import simulate_study
    >>> from longitudinal.report import build_report
    >>> study = simulate_study("my-study", seed=1, n_participants=12)  # doctest: +SKIP
    >>> build_report(study, "my-report")  # doctest: +SKIP
    PosixPath('my-report')
    """
    options = _check_options(
        seed=seed,
        pseudonymize=pseudonymize,
        retest=retest,
        random_slope=random_slope,
        ci_level=ci_level,
        bayes=bayes,
        overwrite=overwrite,
        func="build_report",
    )
    out = check_out_dir(out_dir, overwrite=overwrite, func="build_report")
    study_path = Path(study_dir)
    if study_path.resolve() == out.resolve() or out.resolve() in study_path.resolve().parents:
        raise InvalidParameterError(
            "the `out_dir` parameter of build_report must not contain the study directory "
            f"(writing the report would replace its input); got out_dir={str(out)!r} and "
            f"study_dir={str(study_path)!r}"
        )
    from longitudinal.study import load_study

    study = load_study(study_path)
    preserved = out / "evaluate" if (out / EVALUATION_FILE).is_file() else None

    def write(staging: Path) -> None:
        _write_report(study, staging, options=options, previous_evaluate=preserved)

    atomic_write(out, write, overwrite=overwrite, what="the report")
    return out


def run_demo(
    out_dir: str | os.PathLike[str],
    *,
    seed: int = 2024,
    bayes: bool = False,
    overwrite: bool = False,
) -> Path:
    """Simulate a study and write its change report: the ``longitudinal demo`` command.

    Parameters
    ----------
    out_dir : str or path-like
        Folder to create; it must not exist or be empty unless ``overwrite=True``.
    seed : int, default 2024
        Seed of the simulation (:func:`longitudinal.simulate.simulate_study`).
    bayes : bool, default False
        Fit the Bayesian ordinal model in the "What predicts empathy" section (see
        :func:`build_report`); off by default so that the demo takes seconds.
    overwrite : bool, default False
        Replace an existing non-empty ``out_dir`` once the new one is complete.

    Returns
    -------
    pathlib.Path
        ``out_dir``, laid out as::

            report.html, tables/, figures/, exclusions.csv, provenance.json   the report
            study/                     the simulated study directory (the report's input)
            study/truth.json           the parameters the study was generated from

    Raises
    ------
    longitudinal.InvalidParameterError
        If ``out_dir`` is a file or a non-empty directory without ``overwrite=True``.

    Notes
    -----
    The same seed gives byte-identical tables, figures and ``truth.json``.

    Examples
    --------
    >>> from longitudinal.report import run_demo
    >>> run_demo("demo-report", seed=2024)  # doctest: +SKIP
    PosixPath('demo-report')
    """
    func = "run_demo"
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise InvalidParameterError(
            f"the `seed` parameter of {func} must be an int; got {type(seed).__name__}"
        )
    options = _check_options(
        seed=int(seed),
        pseudonymize=True,
        retest=None,
        random_slope=True,
        ci_level=0.95,
        bayes=bayes,
        overwrite=overwrite,
        func=func,
    )
    out = check_out_dir(out_dir, overwrite=overwrite, func=func)

    def write(staging: Path) -> None:
        from longitudinal.simulate import simulate_study
        from longitudinal.study import load_study

        study_dir = simulate_study(staging / "study", seed=int(seed))
        study = load_study(study_dir)
        _write_report(study, staging, options=options, previous_evaluate=None, demo=True)

    atomic_write(out, write, overwrite=overwrite, what="the report")
    return out


# ---------------------------------------------------------------------------------------------
# options, output folder


@dataclass(frozen=True)
class _Options:
    seed: int | None
    pseudonymize: bool
    retest: dict[str, float]
    random_slope: bool
    ci_level: float
    bayes: bool
    overwrite: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "pseudonymize": self.pseudonymize,
            "retest": dict(sorted(self.retest.items())),
            "random_slope": self.random_slope,
            "ci_level": self.ci_level,
            "bayes": self.bayes,
        }


def _check_options(*, seed, pseudonymize, retest, random_slope, ci_level, bayes, overwrite, func):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise InvalidParameterError(
            f"the `seed` parameter of {func} must be an int or None; got {seed!r}"
        )
    for name, value in (
        ("pseudonymize", pseudonymize),
        ("random_slope", random_slope),
        ("bayes", bayes),
        ("overwrite", overwrite),
    ):
        if not isinstance(value, bool):
            raise InvalidParameterError(
                f"the `{name}` parameter of {func} must be True or False; got {value!r}"
            )
    if (
        isinstance(ci_level, bool)
        or not isinstance(ci_level, float | int)
        or not (0 < ci_level < 1)
    ):
        raise InvalidParameterError(
            f"the `ci_level` parameter of {func} must be a float in (0, 1); got {ci_level!r}"
        )
    checked: dict[str, float] = {}
    if retest is not None:
        if not isinstance(retest, Mapping):
            raise InvalidParameterError(
                f"the `retest` parameter of {func} must be a mapping {{scale or instrument: r}}; "
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
                    f"the `retest` parameter of {func} must map names to a reliability in "
                    f"[0, 1); got {key!r}: {value!r}"
                )
            checked[key] = float(value)
    return _Options(
        seed=None if seed is None else int(seed),
        pseudonymize=pseudonymize,
        retest=checked,
        random_slope=random_slope,
        ci_level=float(ci_level),
        bayes=bayes,
        overwrite=overwrite,
    )


# ---------------------------------------------------------------------------------------------
# content


@dataclass
class _Context:
    """Everything computed for one report."""

    study: Any
    options: _Options
    id_map: dict[str, str]
    states: list[tuple[str, str, str]] = field(default_factory=list)  # (column, instrument, scale)
    labels: dict[str, str] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (file, caption)
    notes: list[str] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)
    growth_time: dict[str, float] = field(default_factory=dict)
    growth_time_unit: str = "weeks"
    id_pattern: re.Pattern[str] | None = None


def _write_report(
    study: Any,
    out: Path,
    *,
    options: _Options,
    previous_evaluate: Path | None,
    demo: bool = False,
) -> None:
    cfg = study.config
    raw_ids = [str(i) for i in study.participants[cfg.id_col]]
    id_map = pseudonyms(raw_ids) if options.pseudonymize else {i: i for i in raw_ids}
    ctx = _Context(study=study, options=options, id_map=id_map)
    ctx.notes.extend(_scrub(n, ctx) for n in study.meta.get("scoring_notes", []))

    person_wave = _rename_ids(study.person_wave_frame(), cfg.id_col, id_map)
    story = _rename_ids(study.story_frame(), cfg.id_col, id_map)
    sessions = _rename_ids(study.session_frame(), cfg.id_col, id_map)
    _choose_states(ctx)
    _sample_tables(ctx, sessions, story, person_wave)
    _reliability_table(ctx)
    _change_tables(ctx, person_wave)
    _rating_tables(ctx, story)
    _session_tables(ctx, sessions)
    _trait_tables(ctx, person_wave)

    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(exist_ok=True)
    _figures(ctx, out / "figures", person_wave, story)
    _predictors_section(ctx, out)
    for name, table in ctx.tables.items():
        _write_csv(table, out / "tables" / f"{name}.csv")
    _write_csv(
        study.exclusions.assign(
            reason=study.exclusions["reason"].map(lambda r: _scrub(str(r), ctx))
        ),
        out / EXCLUSIONS_FILE,
    )
    evaluation = _copy_evaluation(ctx, out, previous_evaluate)
    provenance = _provenance(ctx)
    (out / PROVENANCE_FILE).write_text(
        json.dumps(provenance, indent=2, sort_keys=True, ensure_ascii=True) + "\n",
        encoding="utf-8",
    )
    page = _html(ctx, out, evaluation=evaluation, provenance=provenance, demo=demo)
    (out / REPORT_FILE).write_text(page, encoding="utf-8", newline="\n")


def _rename_ids(frame: pd.DataFrame, id_col: str, id_map: dict[str, str]) -> pd.DataFrame:
    out = frame.copy()
    out[id_col] = out[id_col].astype(str).map(id_map)
    for col in ("session_id",):
        if col in out.columns:
            out = out.drop(columns=col)
    return out


def _scrub(text: str, ctx: _Context) -> str:
    """Replace raw participant ids in free text by their pseudonyms."""
    if not ctx.options.pseudonymize or not ctx.id_map:
        return text
    if ctx.id_pattern is None:
        keys = sorted(ctx.id_map, key=len, reverse=True)  # longest first: P1 inside P12
        alternatives = "|".join(re.escape(k) for k in keys)
        # a whole token only: "P1" is not replaced inside "P12", nor "12" inside "0.125"
        ctx.id_pattern = re.compile(rf"(?<![\w.])(?:{alternatives})(?![\w]|\.\d)")
    return ctx.id_pattern.sub(lambda m: ctx.id_map[m.group(0)], text)


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    out = frame.copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            out[col] = out[col].astype(str).where(out[col].notna(), None)
    out.to_csv(path, index=False, lineterminator="\n", encoding="utf-8")


def _label(instrument: Any, scale: str) -> str:
    title = instrument.title.split(",")[0].strip() or instrument.name
    if len(instrument.scales) == 1:
        return title
    return f"{title} ({scale.replace('_', ' ')})"


def _reported_scales(instrument: Any) -> list[str]:
    """Scale names, dropping a scale when a later one is a rescaling of it."""
    keys = list(instrument.scales)
    out = []
    for k, key in enumerate(keys):
        signature = (tuple(key.items), tuple(key.reverse), key.scoring)
        later = [
            other
            for other in keys[k + 1 :]
            if (tuple(other.items), tuple(other.reverse), other.scoring) == signature
        ]
        if not later:
            out.append(key.name)
    return out


def _choose_states(ctx: _Context) -> None:
    study = ctx.study
    for name in study.state_instruments:
        instrument = study.instruments[name]
        for scale in _reported_scales(instrument):
            col = scale_column(name, scale)
            ctx.states.append((col, name, scale))
            ctx.labels[col] = _label(instrument, scale)
    for name in study.trait_instruments:
        instrument = study.instruments[name]
        for key in instrument.scales:
            col = scale_column(name, key.name)
            ctx.labels[col] = _label(instrument, key.name)


# -- tables ------------------------------------------------------------------------------------


def _sample_tables(ctx: _Context, sessions: pd.DataFrame, story: pd.DataFrame, pw) -> None:
    study = ctx.study
    cfg = study.config
    files = study.meta["files"]
    excl = study.exclusions
    dropped = excl[excl["scope"] == "study"]
    rows = [
        ("participants listed", len(study.participants)),
        ("participants with a kept session", sessions[cfg.id_col].nunique()),
        ("participants with a kept rating", story[cfg.id_col].nunique()),
        ("session rows read", files[cfg.sessions_file]["rows"]),
        ("sessions kept", len(study.sessions)),
        ("sessions excluded", int((dropped["file"] == cfg.sessions_file).sum())),
        (
            "sessions without ratings (kept; not in the story frame)",
            int(((excl["scope"] == "story_frame") & (excl["file"] == cfg.sessions_file)).sum()),
        ),
        ("rating rows read", files[cfg.ratings.file]["rows"]),
        ("ratings kept", len(study.ratings)),
        ("ratings excluded", int((dropped["file"] == cfg.ratings.file).sum())),
    ]
    for spec in cfg.surveys:
        info = files.get(spec.file, {})
        rows.append((f"survey rows read: {spec.file}", info.get("rows", 0)))
        rows.append((f"survey rows excluded: {spec.file}", info.get("excluded", 0)))
    dates = study.survey_dates
    for wave in cfg.waves:
        rows.append((f"participants with a {wave} survey", int((dates["wave"] == wave).sum())))
    rows.append(("rows in the exclusion log", len(excl)))
    ctx.tables["sample"] = pd.DataFrame(rows, columns=["quantity", "n"])
    counts = (
        excl.assign(reason=excl["reason"].map(lambda r: _scrub(str(r), ctx)))
        .groupby(["file", "scope", "reason"], sort=False)
        .size()
        .rename("n")
        .reset_index()
    )
    ctx.tables["exclusion_counts"] = counts


def _reliability_table(ctx: _Context) -> None:
    rel = ctx.study.reliability.copy()
    if rel.empty:
        ctx.tables["reliability"] = rel
        return
    keep = []
    for rec in rel.itertuples(index=False):
        instrument = ctx.study.instruments[rec.instrument]
        keep.append(rec.scale in _reported_scales(instrument))
    rel = rel.loc[keep]
    order = {w: i for i, w in enumerate(ctx.study.config.waves)}
    rel = rel.assign(_w=rel["wave"].map(order)).sort_values(["_w"], kind="mergesort")
    ctx.tables["reliability"] = rel.drop(columns="_w").reset_index(drop=True)


def _growth_time(ctx: _Context) -> None:
    """Time of each wave in weeks since the first wave (median over participants)."""
    cfg = ctx.study.config
    dates = ctx.study.survey_dates
    first = dates.loc[dates["wave"] == cfg.waves[0]].set_index(cfg.id_col)["completed_at"]
    times: dict[str, float] = {}
    for wave in cfg.waves:
        sub = dates.loc[dates["wave"] == wave].set_index(cfg.id_col)["completed_at"]
        days = (sub.dt.normalize() - first.reindex(sub.index).dt.normalize()).dt.days.dropna()
        times[wave] = float(days.median()) / 7.0 if len(days) else float("nan")
    values = list(times.values())
    if any(not math.isfinite(v) for v in values) or len(set(values)) != len(values):
        ctx.growth_time = {w: float(i) for i, w in enumerate(cfg.waves)}
        ctx.growth_time_unit = "waves"
    else:
        ctx.growth_time = times
        ctx.growth_time_unit = "weeks"


def _reliability_for(ctx: _Context, column: str, instrument: str, scale: str):
    retest = ctx.options.retest
    for key in (column, instrument):
        if key in retest:
            return retest[key], "test-retest"
    rel = ctx.study.reliability
    first = ctx.study.config.waves[0]
    if rel.empty:
        return None, None
    hit = rel.loc[
        (rel["instrument"] == instrument) & (rel["scale"] == scale) & (rel["wave"] == first),
        "alpha",
    ]
    if len(hit) and np.isfinite(hit.iloc[0]) and 0 <= hit.iloc[0] < 1:
        return float(hit.iloc[0]), "alpha"
    return None, None


def _reliability_note(kind: str | None) -> str:
    """Describe where the reliability of a reliable change index came from."""
    if kind == "test-retest":
        return "given with --retest"
    return "computed from the item responses at the first wave"


def _change_tables(ctx: _Context, person_wave: pd.DataFrame) -> None:
    from longitudinal.change import change_analysis

    cfg = ctx.study.config
    if len(cfg.waves) < 2 and ctx.states:
        ctx.notes.append("change analyses need at least two waves; the study declares one")
        ctx.states = []
    _growth_time(ctx)
    parts: dict[str, list[pd.DataFrame]] = {}
    models = []
    for column, instrument, scale in ctx.states:
        reliability, kind = _reliability_for(ctx, column, instrument, scale)
        data = person_wave[[cfg.id_col, "wave", column]].copy()
        data["wave"] = data["wave"].astype(str)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = change_analysis(
                data,
                subject_col=cfg.id_col,
                wave_col="wave",
                outcome_col=column,
                waves=list(cfg.waves),
                time=ctx.growth_time,
                random_slope=ctx.options.random_slope,
                reliability=reliability,
                reliability_kind=kind or "alpha",
                reliability_note=_reliability_note(kind),
                ci_level=ctx.options.ci_level,
            )
        for w in caught:
            ctx.notes.append(_scrub(f"{ctx.labels[column]}: {w.message}", ctx))
        ctx.results[column] = result
        for name in (
            "descriptives",
            "rm_anova",
            "sphericity",
            "excluded",
            "pairwise",
            "effect_sizes",
            "friedman",
            "growth_fixed",
            "growth_random",
            "reliable_change",
            "reliable_change_counts",
        ):
            table = getattr(result, name)
            parts.setdefault(name, []).append(table.assign(scale=column)[["scale", *table.columns]])
        growth = result.meta["growth"]
        rc = result.meta["reliable_change"]
        models.append(
            {
                "scale": column,
                "formula": growth.get("formula"),
                "random_effects": growth.get("random_effects"),
                "fallback_reason": growth.get("fallback_reason"),
                "converged": growth.get("converged"),
                "n_obs": growth.get("n_obs"),
                "n_subjects": growth.get("n_subjects"),
                "time_unit": ctx.growth_time_unit,
                **{f"time_{w}": ctx.growth_time[w] for w in cfg.waves},
                "rm_n_complete": result.meta.get("n_complete"),
                "rm_n_excluded": result.meta.get("n_excluded"),
                "rci_reliability": rc.get("reliability"),
                "rci_reliability_source": rc.get("reliability_source"),
                "rci_sd_baseline": rc.get("sd_baseline"),
                "rci_s_diff": rc.get("s_diff"),
                "rci_criterion": rc.get("criterion"),
            }
        )
    rename = {
        "rm_anova": "rm_anova",
        "excluded": "complete_case_exclusions",
        "reliable_change": "reliable_change_people",
    }
    for name, tables in parts.items():
        tables = [t for t in tables if not t.empty]
        if tables:
            ctx.tables[rename.get(name, name)] = pd.concat(tables, ignore_index=True)
    ctx.tables["change_models"] = pd.DataFrame(models)


def _rating_tables(ctx: _Context, story: pd.DataFrame) -> None:
    from longitudinal.plotting import empathy_course_table

    cfg = ctx.study.config
    spec = cfg.ratings
    values = story[cfg.rating_col].astype(float)
    whole = float(spec.scale_min).is_integer() and float(spec.scale_max).is_integer()
    if whole and bool(values.map(float.is_integer).all()):
        levels = np.arange(int(spec.scale_min), int(spec.scale_max) + 1).astype(float)
        counts = values.value_counts().reindex(levels, fill_value=0)
        table = pd.DataFrame(
            {
                "value": levels,
                "n": counts.to_numpy(dtype="int64"),
                "proportion": counts.to_numpy() / max(len(values), 1),
            }
        )
    else:
        table = pd.DataFrame(columns=["value", "n", "proportion"])
    ctx.tables["ratings_distribution"] = table
    per_position = story.groupby("position")[cfg.rating_col].agg(["size", "mean", "std", "median"])
    summary = [
        {
            "group": "all",
            "n": len(values),
            "mean": values.mean(),
            "sd": values.std(ddof=1),
            "median": values.median(),
        }
    ]
    for pos, rec in per_position.iterrows():
        summary.append(
            {
                "group": f"position {pos}",
                "n": int(rec["size"]),
                "mean": rec["mean"],
                "sd": rec["std"],
                "median": rec["median"],
            }
        )
    weeks = story.assign(study_week=np.floor(story["week"]).astype("int64"))
    ctx.tables["empathy_course"] = empathy_course_table(
        weeks,
        rating_col=cfg.rating_col,
        id_col=cfg.id_col,
        time_col="study_week",
        ci_level=ctx.options.ci_level,
    )
    person_means = story.groupby(cfg.id_col)[cfg.rating_col].mean()
    summary.append(
        {
            "group": "participant means",
            "n": len(person_means),
            "mean": person_means.mean(),
            "sd": person_means.std(ddof=1),
            "median": person_means.median(),
        }
    )
    ctx.tables["ratings_summary"] = pd.DataFrame(summary)


def _describe(values: pd.Series) -> dict[str, float]:
    values = values.dropna().astype(float)
    return {
        "n": len(values),
        "mean": values.mean() if len(values) else np.nan,
        "sd": values.std(ddof=1) if len(values) > 1 else np.nan,
        "min": values.min() if len(values) else np.nan,
        "median": values.median() if len(values) else np.nan,
        "max": values.max() if len(values) else np.nan,
    }


def _session_tables(ctx: _Context, sessions: pd.DataFrame) -> None:
    study = ctx.study
    cfg = study.config
    rows = [{"feature": f, **_describe(sessions[f])} for f in study.session_features]
    per_person = sessions.groupby(cfg.id_col).size()
    rows.append({"feature": "sessions per participant", **_describe(per_person)})
    rows.append({"feature": "ratings per session", **_describe(sessions["n_ratings"])})
    span = sessions.groupby(cfg.id_col)["day"].max()
    rows.append({"feature": "days from first to last session", **_describe(span)})
    ctx.tables["sessions_summary"] = pd.DataFrame(rows)


def _trait_tables(ctx: _Context, person_wave: pd.DataFrame) -> None:
    study = ctx.study
    cfg = study.config
    people = person_wave.drop_duplicates(cfg.id_col)
    rows = []
    for name in study.trait_instruments:
        for key in study.instruments[name].scales:
            col = scale_column(name, key.name)
            if col in people.columns:
                rows.append({"scale": col, "instrument": name, **_describe(people[col])})
    ctx.tables["traits"] = pd.DataFrame(
        rows, columns=["scale", "instrument", "n", "mean", "sd", "min", "median", "max"]
    )
    demo_rows = []
    participants = study.participants
    for col in study.demographics:
        values = participants[col]
        if pd.api.types.is_numeric_dtype(values):
            demo_rows.append({"variable": col, "level": "", **_describe(values)})
        else:
            counts = values.fillna("(missing)").astype(str).value_counts().sort_index()
            for level, n in counts.items():
                demo_rows.append({"variable": col, "level": level, "n": int(n)})
    ctx.tables["demographics"] = pd.DataFrame(
        demo_rows, columns=["variable", "level", "n", "mean", "sd", "min", "median", "max"]
    )


# -- figures -----------------------------------------------------------------------------------


def _predictors_section(ctx: _Context, out: Path) -> None:
    """Add "What predicts empathy" (effects of both engines, forest plot, variances)."""
    from longitudinal.predict import empathy_effects_section

    seed = ctx.options.seed if ctx.options.seed is not None else 2024
    section = empathy_effects_section(
        ctx.study,
        out,
        include_bayes=ctx.options.bayes,
        seed=seed,
        ci_level=ctx.options.ci_level,
    )
    ctx.tables.update(section.tables)
    ctx.figures.update(section.figures)
    ctx.notes.extend(_scrub(n, ctx) for n in section.notes)
    ctx.results["predictors"] = section


def _figures(ctx: _Context, folder: Path, person_wave: pd.DataFrame, story: pd.DataFrame):
    from longitudinal import plotting

    study = ctx.study
    cfg = study.config
    waves = list(cfg.waves)
    states = [c for c, _, _ in ctx.states]
    level = ctx.options.ci_level

    def save(name: str, fig: Any, caption: str) -> None:
        plotting.save_figure(fig, folder / f"{name}.png")
        ctx.figures[name] = (f"figures/{name}.png", caption)

    if states:
        save(
            "trajectories",
            plotting.plot_trajectories(
                person_wave,
                scales=states,
                id_col=cfg.id_col,
                waves=waves,
                labels=ctx.labels,
                ci_level=level,
            ),
            "State scales per wave: each participant (grey) and the mean of the complete cases "
            f"with {level:.0%} within-subject confidence intervals (Cousineau-Morey).",
        )
        save(
            "wave_distributions",
            plotting.plot_wave_distributions(
                person_wave, scales=states, waves=waves, labels=ctx.labels
            ),
            "Distribution of each state scale at each wave (violins with quartiles).",
        )
        save(
            "state_course",
            plotting.plot_state_course(
                person_wave,
                scales=states,
                id_col=cfg.id_col,
                waves=waves,
                labels=ctx.labels,
                ci_level=level,
            ),
            "The month-long course of the states on the study calendar (day 0 = the "
            "participant's first session): each participant's surveys and the wave means at the "
            "median survey day.",
        )
        rc = ctx.tables.get("reliable_change_people")
        models = ctx.tables["change_models"].set_index("scale")
        if rc is not None and not rc.empty:
            data = rc.assign(
                threshold=rc["scale"].map(models["rci_s_diff"] * models["rci_criterion"])
            )
            save(
                "reliable_change",
                plotting.plot_reliable_change(
                    data, pre_col="baseline", post_col="followup", labels=ctx.labels
                ),
                f"Reliable change from {waves[0]} to {waves[-1]}: participants outside the "
                "shaded band changed reliably (|RCI| > criterion, Jacobson-Truax).",
            )
    save(
        "empathy_ratings",
        plotting.plot_rating_distribution(
            story,
            rating_col=cfg.rating_col,
            scale_min=cfg.ratings.scale_min,
            scale_max=cfg.ratings.scale_max,
        ),
        f"Distribution of the {cfg.rating_col} ratings.",
    )
    course = story.assign(study_week=np.floor(story["week"]).astype("int64"))
    save(
        "empathy_course",
        plotting.plot_empathy_course(
            course,
            rating_col=cfg.rating_col,
            id_col=cfg.id_col,
            time_col="study_week",
            scale_min=cfg.ratings.scale_min,
            scale_max=cfg.ratings.scale_max,
            ci_level=level,
        ),
        f"{cfg.rating_col.capitalize()} ratings over the month by study week (week 0 = days "
        "0-6 after the first session): participants' weekly means (grey) and their mean.",
    )
    radar = _radar_instrument(ctx)
    if radar is not None:
        name, columns, lo, hi = radar
        people = person_wave.drop_duplicates(cfg.id_col)
        labels = {scale_column(name, k.name): k.name for k in study.instruments[name].scales}
        save(
            "trait_radar",
            plotting.plot_big_five_radar(
                people, columns=columns, labels=labels, scale_min=lo, scale_max=hi
            ),
            f"Trait profile at {waves[0]} ({study.instruments[name].title}).",
        )
    if study.demographics:
        save(
            "demographics",
            plotting.plot_demographics(study.participants, columns=list(study.demographics)),
            "Demographics of the participants listed.",
        )


def _radar_instrument(ctx: _Context):
    """Find the first trait instrument with at least 3 mean-scored scales (the Big Five)."""
    study = ctx.study
    for name in study.trait_instruments:
        instrument = study.instruments[name]
        keys = [k for k in instrument.scales if k.scoring == "mean" and k.multiplier == 1]
        if len(keys) >= 3:
            columns = [scale_column(name, k.name) for k in keys]
            lo = min(k.response_min for k in keys)
            hi = max(k.response_max for k in keys)
            return name, columns, lo, hi
    return None


# -- evaluation, provenance --------------------------------------------------------------------


def _copy_evaluation(ctx: _Context, out: Path, previous: Path | None) -> pd.DataFrame | None:
    sources = [ctx.study.root / "evaluate"]
    if previous is not None:
        sources.append(previous)
    for source in sources:
        metrics = source / "metrics.csv"
        if not metrics.is_file():
            continue
        if ctx.options.pseudonymize and _names_participants(metrics, ctx):
            ctx.notes.append(
                f"{metrics.name} in {source.name}/ names participants; it was not copied into "
                "the pseudonymized report"
            )
            return None
        target = out / "evaluate"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target)
        try:
            return pd.read_csv(target / "metrics.csv")
        except (ValueError, pd.errors.ParserError) as err:
            ctx.notes.append(f"evaluate/metrics.csv could not be read as a table ({err})")
            return pd.DataFrame()
    return None


def _names_participants(path: Path, ctx: _Context) -> bool:
    """Whether any cell of a CSV file is a raw participant id."""
    import csv

    raw = set(ctx.id_map)
    with path.open(newline="", encoding="utf-8", errors="replace") as fh:
        return any(cell.strip() in raw for row in csv.reader(fh) for cell in row)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def _provenance(ctx: _Context) -> dict[str, Any]:
    from longitudinal import __version__

    study = ctx.study
    inputs = {}
    for rel in study.inputs:
        path = study.root / rel
        if path.is_file():
            inputs[rel] = _sha256(path)
    versions = {}
    for module in ("numpy", "pandas", "scipy", "statsmodels", "matplotlib", "seaborn"):
        mod = sys.modules.get(module)
        versions[module] = getattr(mod, "__version__", None) if mod is not None else None
    truth = study.root / "truth.json"
    return {
        "package": "empathic-longitudinal",
        "version": __version__,
        "study": {"name": study.config.name, "directory": study.root.name},
        "inputs_sha256": dict(sorted(inputs.items())),
        "truth_json_sha256": _sha256(truth) if truth.is_file() else None,
        "options": ctx.options.as_dict(),
        "seed": ctx.options.seed,
        "python": ".".join(map(str, sys.version_info[:3])),
        "dependencies": versions,
        "scoring": {"min_valid": study.config.min_valid, "prorate": study.config.prorate},
        "growth_time": {"unit": ctx.growth_time_unit, **ctx.growth_time},
        "counts": {
            "participants": len(study.participants),
            "sessions": len(study.sessions),
            "ratings": len(study.ratings),
            "exclusions": len(study.exclusions),
        },
        "notes": list(ctx.notes),
        "files": sorted(
            [REPORT_FILE, EXCLUSIONS_FILE, PROVENANCE_FILE]
            + [f"tables/{n}.csv" for n in ctx.tables]
            + [f for f, _ in ctx.figures.values()]
        ),
    }


# ---------------------------------------------------------------------------------------------
# HTML


_CSS = """
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       max-width: 1100px; margin: 2em auto; padding: 0 1.2em; color: #222; line-height: 1.45; }
h1 { font-size: 1.7em; margin-bottom: .2em; }
h2 { font-size: 1.3em; border-bottom: 2px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
h3 { font-size: 1.08em; margin-top: 1.6em; }
p.sub { color: #666; margin-top: 0; }
table { border-collapse: collapse; margin: .6em 0 1em; font-size: .88em; }
th, td { padding: .25em .6em; border-bottom: 1px solid #e4e4e4; text-align: right; }
th { background: #f4f4f4; border-bottom: 2px solid #ccc; }
td.text, th.text { text-align: left; }
caption { caption-side: top; text-align: left; font-weight: 600; padding-bottom: .3em; }
figure { margin: 1.2em 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: .9em; }
.methods { background: #f8f8fb; border-left: 4px solid #88a; padding: .6em 1em; }
.note { color: #555; font-size: .9em; }
ul.notes li { font-size: .9em; color: #444; }
nav ul { columns: 2; font-size: .92em; }
code { background: #f2f2f2; padding: 0 .2em; }
"""


def _num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float | np.floating) and not np.isfinite(value)):
        return "–" if value is None or np.isnan(value) else ("∞" if value > 0 else "−∞")
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.{digits}f}".replace("-", "−")
    return str(value)


def _p(value: Any) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    if value < 0.001:
        return "< .001"
    return f"{value:.3f}".lstrip("0")


def _table(
    frame: pd.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    digits: Mapping[str, int] | None = None,
    caption: str | None = None,
) -> str:
    """Render a DataFrame as an escaped HTML table; ``columns`` maps column -> header."""
    columns = dict(columns or {c: c for c in frame.columns})
    digits = dict(digits or {})
    head = "".join(
        f'<th class="{"text" if _is_text(frame[c]) else "num"}">{html.escape(h)}</th>'
        for c, h in columns.items()
    )
    body = []
    for i in range(len(frame)):  # by column, so an int column is not upcast by its row
        cells = []
        for c in columns:
            value = frame[c].iat[i]
            if c.startswith("p_") or c == "p_value":
                shown = _p(value)
            elif isinstance(value, str):
                shown = value
            elif value is None or (isinstance(value, float) and np.isnan(value)):
                shown = "–"
            else:
                shown = _num(value, digits.get(c, 2))
            klass = "text" if _is_text(frame[c]) else "num"
            cells.append(f'<td class="{klass}">{html.escape(shown)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _is_text(series: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)


def _img(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _figure(ctx: _Context, out: Path, name: str) -> str:
    if name not in ctx.figures:
        return ""
    file, caption = ctx.figures[name]
    return (
        f'<figure><img alt="{html.escape(caption)}" src="{_img(out / file)}">'
        f'<figcaption>{html.escape(caption)} <a href="{file}">{file}</a></figcaption></figure>'
    )


def _list(items: Sequence[str]) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _scoring_sentence(ctx: _Context) -> str:
    study = ctx.study
    groups: dict[str, list[str]] = {}
    reversed_any = False
    for name, instrument in study.instruments.items():
        for key in instrument.scales:
            if key.name not in _reported_scales(instrument):
                continue
            rule = {
                "mean": "the mean of the answered items",
                "sum": "the sum of the items",
                "count": "the number of items endorsed",
            }.get(key.scoring, key.scoring)
            if key.multiplier != 1:
                rule += f" multiplied by {key.multiplier:g}"
            groups.setdefault(rule, [])
            if name not in groups[rule]:
                groups[rule].append(name)
            reversed_any = reversed_any or bool(key.reverse)
    parts = [f"{rule} ({_list(names)})" for rule, names in groups.items()]
    cfg = study.config
    text = "Scale scores were computed from the raw survey exports as " + _list(parts)
    if reversed_any:
        text += (
            ", after reverse-keying negatively keyed items from the declared response range "
            "as (min + max) − x"
        )
    text += (
        f". A score required at least {cfg.min_valid:.0%} of a scale's items to be answered"
        + ("; sum scales were prorated" if cfg.prorate else "; no answers were imputed")
        + "."
    )
    return text


def _alpha_sentence(ctx: _Context) -> str:
    rel = ctx.tables.get("reliability")
    first = ctx.study.config.waves[0]
    if rel is None or rel.empty:
        return ""
    sub = rel.loc[(rel["wave"] == first) & rel["alpha"].notna()]
    if sub.empty:
        return ""
    parts = []
    for rec in sub.itertuples(index=False):
        label = ctx.labels.get(scale_column(rec.instrument, rec.scale), rec.scale)
        parts.append(f"{_num(rec.alpha, 2).lstrip('0')} ({label})")
    undefined = rel.loc[(rel["wave"] == first) & rel["alpha"].isna(), "instrument"].unique()
    text = f" Cronbach's α at {first} = " + _list(parts) + "."
    if len(undefined):
        text += f" α is undefined for {_list(list(undefined))} (single item)."
    return text


def _methods(ctx: _Context) -> str:
    study = ctx.study
    cfg = study.config
    waves = list(cfg.waves)
    excl = study.exclusions
    n_drop = int((excl["scope"] == "study").sum())
    n_nr = int((excl["scope"] == "story_frame").sum())
    models = ctx.tables.get("change_models", pd.DataFrame())
    sentences = [_scoring_sentence(ctx) + _alpha_sentence(ctx)]
    sentences.append(
        f"Traits ({_list(list(study.trait_instruments))}) were taken from the {waves[0]} "
        "survey; each session was paired with the state scores of the participant's nearest "
        "preceding survey (completed on or before the session's start). Time was coded from "
        "the session start as days and weeks since the participant's first session and as the "
        "session index."
    )
    counts = ctx.tables["exclusion_counts"]
    dropped = counts.loc[counts["scope"] == "study"]
    if dropped.empty:
        text = "No row of the input files was excluded"
    else:
        text = (
            f"{n_drop} row{'s' if n_drop != 1 else ''} of the input files "
            f"{'were' if n_drop != 1 else 'was'} excluded: "
            + "; ".join(f"{r.n} in {r.file} ({r.reason})" for r in dropped.itertuples())
        )
    if n_nr:
        text += (
            f"; {n_nr} session{'s' if n_nr != 1 else ''} without ratings "
            f"{'were' if n_nr != 1 else 'was'} kept for session-level summaries only"
        )
    sentences.append(text + f". Every excluded row is listed in {EXCLUSIONS_FILE}.")
    if ctx.states and not models.empty:
        n_complete = _list(sorted({str(int(v)) for v in models["rm_n_complete"].dropna()}))
        n_excl = _list(sorted({str(int(v)) for v in models["rm_n_excluded"].dropna()}))
        fallback = models["random_effects"].eq("intercept").sum() if ctx.options.random_slope else 0
        time_text = ", ".join(f"{w} = {ctx.growth_time[w]:.2f}" for w in waves)
        criterion = (
            float(models["rci_criterion"].dropna().iloc[0])
            if models["rci_criterion"].notna().any()
            else float("nan")
        )
        sentences.append(
            f"Change in each state scale ({_list([ctx.labels[c] for c, _, _ in ctx.states])}) "
            f"across {_list(waves)} was tested with a one-way repeated-measures ANOVA on complete "
            f"cases (n = {n_complete}; left out for a missing wave: {n_excl}), "
            "with Mauchly's test of sphericity and Greenhouse-Geisser and Huynh-Feldt "
            "corrections; with paired t tests between every pair of waves (Holm-adjusted "
            "p values) and the standardized mean changes d_z (noncentral-t interval) and g_av "
            "(delta-method interval); with the Friedman test as a rank-based check; and with a "
            "linear growth model fitted by REML to all observations (random intercept"
            + (" and slope" if ctx.options.random_slope else "")
            + f" per participant; time in {ctx.growth_time_unit} since {waves[0]}: {time_text})"
            + (
                f", reduced to a random intercept for {int(fallback)} scale(s) whose slope "
                "variance was not estimable"
                if fallback
                else ""
            )
            + f". Reliable change from {waves[0]} to {waves[-1]} used the Jacobson-Truax index "
            "RCI = (x_post − x_pre) / (SD_pre √2 √(1 − r)), reliable when |RCI| > "
            f"{_num(criterion, 2)}, with r = {_rci_sources(ctx, models)}"
            + f". Intervals are {ctx.options.ci_level:.0%} confidence intervals."
        )
    return " ".join(sentences)


def _rci_sources(ctx: _Context, models: pd.DataFrame) -> str:
    """Which reliability each scale's reliable change index used, as a phrase."""
    first = ctx.study.config.waves[0]
    alpha, retest, missing = [], [], []
    for rec in models.itertuples(index=False):
        label = ctx.labels.get(rec.scale, rec.scale)
        value = rec.rci_reliability
        if value is None or not np.isfinite(value):
            missing.append(label)
        elif any(k in ctx.options.retest for k in (rec.scale, _instrument_of(ctx, rec.scale))):
            retest.append(f"{_num(value, 2).lstrip('0')} for {label}")
        else:
            alpha.append(_num(value, 2).lstrip("0"))
    parts = []
    if alpha:
        parts.append(
            f"Cronbach's α at {first} of each scale ({', '.join(alpha)}; internal consistency, "
            "which gives narrower bands than test-retest reliability would)"
        )
    if retest:
        parts.append("the test-retest reliability given (" + "; ".join(retest) + ")")
    text = " and ".join(parts) or "no reliability available"
    if missing:
        text += f"; not computed for {_list(missing)} (no reliability available)"
    return text


def _instrument_of(ctx: _Context, column: str) -> str:
    for col, instrument, _ in ctx.states:
        if col == column:
            return instrument
    return column


def _state_section(ctx: _Context, column: str) -> str:
    result = ctx.results[column]
    label = ctx.labels[column]
    meta = result.meta
    parts = [
        f'<h3 id="{html.escape(column)}">{html.escape(label)} '
        f"<code>{html.escape(column)}</code></h3>"
    ]
    parts.append(
        _table(
            result.descriptives,
            columns={
                "wave": "wave",
                "n": "n",
                "n_missing": "missing",
                "mean": "mean",
                "sd": "SD",
                "ci_low": "CI low",
                "ci_high": "CI high",
                "median": "median",
                "min": "min",
                "max": "max",
            },
            caption="Descriptives per wave",
        )
    )
    anova = result.rm_anova
    if not anova.empty:
        parts.append(
            _table(
                anova,
                columns={
                    "correction": "correction",
                    "epsilon": "ε",
                    "df1": "df1",
                    "df2": "df2",
                    "statistic": "F",
                    "p_value": "p",
                    "eta_sq_partial": "η²p",
                    "eta_sq_generalized": "η²G",
                    "n": "n",
                },
                digits={"epsilon": 3, "eta_sq_partial": 3, "eta_sq_generalized": 3},
                caption="Repeated-measures ANOVA (complete cases)",
            )
        )
        sph = result.sphericity
        mauchly = ""
        if not sph.empty:
            rec = sph.iloc[0]
            mauchly = (
                f"Mauchly's W = {_num(rec['statistic'], 3)}, χ²({_num(rec['df'], 0)}) = "
                f"{_num(rec['chi2'], 2)}, p = {_p(rec['p_value'])}. "
            )
        parts.append(
            f'<p class="note">{mauchly}{int(meta.get("n_complete") or 0)} complete cases; '
            f"{int(meta.get('n_excluded') or 0)} participant(s) left out for a missing wave.</p>"
        )
    pairs = result.pairwise
    if not pairs.empty:
        eff = result.effect_sizes.pivot(
            index="term", columns="measure", values=["estimate", "ci_low", "ci_high"]
        )
        eff.columns = [f"{m}_{v}" for v, m in eff.columns]
        merged = pairs.merge(eff, left_on="term", right_index=True, how="left")
        parts.append(
            _table(
                merged,
                columns={
                    "term": "change",
                    "estimate": "Δ mean",
                    "ci_low": "CI low",
                    "ci_high": "CI high",
                    "df": "df",
                    "statistic": "t",
                    "p_value": "p",
                    "p_holm": "p (Holm)",
                    "d_z_estimate": "d_z",
                    "d_z_ci_low": "d_z low",
                    "d_z_ci_high": "d_z high",
                    "g_av_estimate": "g_av",
                    "g_av_ci_low": "g_av low",
                    "g_av_ci_high": "g_av high",
                    "n": "n",
                },
                digits={"df": 0},
                caption="Pairwise changes (paired t tests, Holm) with effect sizes",
            )
        )
    fr = result.friedman
    if not fr.empty:
        rec = fr.iloc[0]
        parts.append(
            f'<p class="note">Friedman test: χ²({_num(rec["df"], 0)}) = {_num(rec["statistic"])}, '
            f"p = {_p(rec['p_value'])}, Kendall's W = {_num(rec['kendall_w'], 3)}, "
            f"n = {_num(rec['n'])}.</p>"
        )
    growth = meta.get("growth", {})
    if not result.growth_fixed.empty:
        parts.append(
            _table(
                result.growth_fixed,
                columns={
                    "term": "term",
                    "estimate": "estimate",
                    "se": "SE",
                    "statistic": "z",
                    "p_value": "p",
                    "ci_low": "CI low",
                    "ci_high": "CI high",
                },
                digits={"estimate": 3, "se": 3, "ci_low": 3, "ci_high": 3},
                caption=f"Growth model: {growth.get('formula', '')} (time in "
                f"{ctx.growth_time_unit})",
            )
        )
        random = result.growth_random
        text = ", ".join(
            f"SD({r.term or 'residual'}) = {_num(r.sd, 3)}" for r in random.itertuples(index=False)
        )
        fallback = growth.get("fallback_reason")
        parts.append(
            f'<p class="note">Random effects: {html.escape(text)}. '
            f"{growth.get('n_obs', '')} observations of {growth.get('n_subjects', '')} "
            "participants."
            + (f" Random slope dropped: {html.escape(str(fallback))}." if fallback else "")
            + "</p>"
        )
    counts = result.reliable_change_counts
    rc_meta = meta.get("reliable_change", {})
    if not counts.empty:
        parts.append(
            _table(
                counts,
                columns={"category": "reliable change", "n": "n", "proportion": "share"},
                caption=f"Reliable change {ctx.study.config.waves[0]} → "
                f"{ctx.study.config.waves[-1]}",
            )
        )
        parts.append(
            f'<p class="note">Reliability: {html.escape(str(rc_meta.get("reliability_source")))}; '
            f"SD at baseline = {_num(rc_meta.get('sd_baseline'), 3)}, "
            f"S_diff = {_num(rc_meta.get('s_diff'), 3)}, smallest reliable change = "
            f"{_num(rc_meta.get('s_diff', np.nan) * rc_meta.get('criterion', np.nan), 3)}.</p>"
        )
    else:
        parts.append(
            f'<p class="note">Reliable change not computed: '
            f"{html.escape(str(meta.get('reliability_source')))}.</p>"
        )
    return "\n".join(parts)


def _html(
    ctx: _Context,
    out: Path,
    *,
    evaluation: pd.DataFrame | None,
    provenance: dict[str, Any],
    demo: bool,
) -> str:
    study = ctx.study
    cfg = study.config
    t = ctx.tables
    title = f"Change report: {cfg.name}"
    ids = (
        "Participant ids are replaced by pseudonyms (S01, S02, … in sorted order of the raw ids)."
        if ctx.options.pseudonymize
        else "Participant ids are shown as recorded."
    )
    sections: list[tuple[str, str, str]] = []  # (id, heading, body)

    sample = _table(t["sample"], columns={"quantity": "", "n": "n"}, caption="Sample")
    excl = t["exclusion_counts"]
    excl_html = (
        _table(
            excl,
            columns={"file": "file", "scope": "scope", "reason": "reason", "n": "n"},
            caption="Exclusions by file and reason",
        )
        if not excl.empty
        else "<p>No row was excluded.</p>"
    )
    sections.append(
        (
            "sample",
            "Sample",
            sample
            + excl_html
            + (
                '<p class="note">Every row read is either analysed or listed with its file, row '
                f'and reason in <a href="{EXCLUSIONS_FILE}">{EXCLUSIONS_FILE}</a>. Scope '
                "<code>story_frame</code>: sessions kept in session-level summaries but without "
                "ratings.</p>"
            ),
        )
    )
    sections.append(("methods", "Methods", f'<p class="methods">{html.escape(_methods(ctx))}</p>'))
    rel = t.get("reliability", pd.DataFrame())
    if not rel.empty:
        sections.append(
            (
                "reliability",
                "Reliability",
                _table(
                    rel,
                    columns={
                        "instrument": "instrument",
                        "scale": "scale",
                        "wave": "wave",
                        "n": "n",
                        "n_items": "items",
                        "alpha": "α",
                        "alpha_ci_low": "α low",
                        "alpha_ci_high": "α high",
                        "omega_total": "ω total",
                    },
                    digits={"alpha": 3, "alpha_ci_low": 3, "alpha_ci_high": 3, "omega_total": 3},
                    caption="Internal consistency per scale and wave (Feldt interval for α)",
                ),
            )
        )
    if ctx.states:
        body = "\n".join(_state_section(ctx, c) for c, _, _ in ctx.states)
        body += "".join(
            _figure(ctx, out, n)
            for n in ("trajectories", "wave_distributions", "state_course", "reliable_change")
        )
        sections.append(("change", "Change in the states", body))
    ratings = _table(
        t["ratings_summary"],
        columns={"group": "", "n": "n", "mean": "mean", "sd": "SD", "median": "median"},
        caption=f"{cfg.rating_col} ratings ({cfg.ratings.scale_min:g}–{cfg.ratings.scale_max:g})",
    )
    if not t["ratings_distribution"].empty:
        ratings += _table(
            t["ratings_distribution"],
            columns={"value": "value", "n": "n", "proportion": "share"},
            digits={"value": 0, "proportion": 3},
            caption="Distribution",
        )
    ratings += _figure(ctx, out, "empathy_ratings") + _figure(ctx, out, "empathy_course")
    sections.append(("ratings", "Empathy ratings", ratings))
    sessions = _table(
        t["sessions_summary"],
        columns={
            "feature": "",
            "n": "n",
            "mean": "mean",
            "sd": "SD",
            "min": "min",
            "median": "median",
            "max": "max",
        },
        caption="Session behaviour",
    )
    sections.append(("sessions", "Sessions", sessions))
    traits = ""
    if not t["traits"].empty:
        traits += _table(
            t["traits"],
            columns={
                "scale": "scale",
                "n": "n",
                "mean": "mean",
                "sd": "SD",
                "min": "min",
                "median": "median",
                "max": "max",
            },
            caption=f"Trait scores at {cfg.waves[0]}",
        )
    traits += _figure(ctx, out, "trait_radar")
    if not t["demographics"].empty:
        traits += _table(
            t["demographics"].fillna(""),
            columns={
                "variable": "variable",
                "level": "level",
                "n": "n",
                "mean": "mean",
                "sd": "SD",
                "min": "min",
                "max": "max",
            },
            caption="Demographics",
        )
    traits += _figure(ctx, out, "demographics")
    sections.append(("traits", "Traits and demographics", traits))
    if (section := ctx.results.get("predictors")) is not None:
        sections.append((section.anchor, section.heading, section.html))
    if evaluation is not None:
        body = (
            f'<p>Prediction results: <a href="{EVALUATION_FILE.as_posix()}">'
            f"{EVALUATION_FILE.as_posix()}</a>.</p>"
        )
        if not evaluation.empty and len(evaluation) <= 50:
            body += _table(
                evaluation, caption="Evaluation metrics", digits={c: 3 for c in evaluation.columns}
            )
        sections.append(("evaluation", "Evaluation", body))
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in ctx.notes)
    files = "".join(
        f'<li><a href="{html.escape(f)}">{html.escape(f)}</a></li>'
        for f in provenance["files"]
        if f != REPORT_FILE
    )
    extra = ""
    if demo:
        extra = (
            '<p>This is a simulated study. Its input files are in <a href="study/">study/</a>'
            " and the parameters it was generated from in "
            '<a href="study/truth.json">study/truth.json</a>.</p>'
        )
    sections.append(
        ("notes", "Notes", (f'<ul class="notes">{notes}</ul>' if notes else "<p>No warnings.</p>"))
    )
    sections.append(
        (
            "files",
            "Files and provenance",
            extra
            + (
                f"<p>Package version {html.escape(str(provenance['version']))}; the SHA-256 of "
                "every input file and the options are in "
                f'<a href="{PROVENANCE_FILE}">{PROVENANCE_FILE}</a>.</p><ul>{files}</ul>'
            ),
        )
    )

    nav = "".join(f'<li><a href="#{sid}">{html.escape(h)}</a></li>' for sid, h, _ in sections)
    body = "\n".join(
        f'<section id="{sid}"><h2>{html.escape(h)}</h2>\n{b}</section>' for sid, h, b in sections
    )
    counts = provenance["counts"]
    lead = (
        f"{counts['participants']} participants, {counts['sessions']} sessions, "
        f"{counts['ratings']} ratings, waves {', '.join(cfg.waves)}. {ids}"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f'<h1>{html.escape(title)}</h1>\n<p class="sub">{html.escape(lead)}</p>\n'
        f"<nav><ul>{nav}</ul></nav>\n{body}\n</body>\n</html>\n"
    )
