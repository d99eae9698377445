"""The report's entry points and the one function that writes a report folder."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from _empathic_base.vocabulary import DEMO_SEED
from _empathic_base.words import caller, parameter
from longitudinal._errors import InvalidParameterError
from longitudinal._output import atomic_write, check_out_dir, write_csv, write_json
from longitudinal.report.context import (
    EVALUATION_FILE,
    EXCLUSIONS_FILE,
    NOTES_FILE,
    PROVENANCE_FILE,
    REPORT_FILE,
    ReportContext,
    choose_states,
    report_frame,
)
from longitudinal.report.html import render
from longitudinal.report.options import ReportOptions, check_options
from longitudinal.report.provenance import provenance
from longitudinal.report.pseudonyms import (
    default_key_path,
    fingerprint,
    read_or_new_key,
    write_key,
)
from longitudinal.report.sections import report_sections


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
    pseudonym_key: str | os.PathLike[str] | None = None,
    sampling: Mapping[str, Any] | None = None,
    predictors: Sequence[str] | None = None,
    person_tables: bool = True,
    formats: str | Sequence[str] = ("html", "docx", "latex"),
    lean: bool = False,
    ordinal_bins: int | None = None,
    invariance_estimator: str = "auto",
) -> Path:
    """Write the change report of a study directory.

    Parameters
    ----------
    study_dir : str or path-like
        The study directory (see :func:`longitudinal.study.loaded.load_study`).
    out_dir : str or path-like
        Report folder to create. It must not exist or be empty, unless ``overwrite=True``.
    seed : int, optional
        Recorded in ``provenance.json`` (the seed of the simulation, for a simulated study)
        and the seed of the report's random steps (2024 when not given): the Bayesian sampler
        of "What predicts empathy", and the multiple imputation of the survey scores in
        "Change in the states" (run only when a participant lacks a state scale's first or
        last score); the other sections draw nothing at random.
    pseudonymize : bool, default True
        Replace participant ids by ``S01``, ``S02``, ... in every table, figure and note, in an
        order given by a secret key (see ``pseudonym_key``), so the report folder alone cannot
        be linked back to the participant list. ``False`` keeps the raw ids.
    retest : mapping, optional
        Test-retest reliabilities for the reliable change index, keyed by score column
        (``cls9_humanity_compassionate_love``) or instrument name (``cls9_humanity``).
        Scales without one use Cronbach's alpha at the first wave (stated in the report).
        A name that is not a state scale or state instrument of the study is refused, with
        the names it takes, before any analysis.
    random_slope : bool, default True
        Start the growth model with a random slope (it falls back to a random intercept when
        the slope variance is not estimable; the report says so).
    ci_level : float, default 0.95
        Level of every interval and of the reliable change criterion.
    bayes : bool, default True
        In the "What predicts empathy" section, fit the Bayesian ordinal model beside the
        linear mixed model (about a minute of sampling on two cores); for a continuous scale
        of more than 11 points the Bayesian linear mixed model (gaussian family) instead, or
        the ordinal one on the binned ratings with ``ordinal_bins``. ``False`` reports the
        mixed models alone.
    overwrite : bool, default False
        Replace an existing non-empty ``out_dir`` (only after the new report is complete).
    sampling : mapping, optional
        Settings of the Bayesian model: ``draws``, ``tune``, ``chains``, ``sampler``
        (``nutpie``, ``pymc``, ``numpyro``) and ``target_accept``; the report says which to
        raise when its sampling diagnostics fail.
    pseudonym_key : str or path-like, optional
        File holding the secret key of the pseudonyms. When absent, the key is
        ``<out_dir>.pseudonym-key`` beside the report folder, created (readable by its owner
        only, written before the report) on the first run and reused afterwards, so reruns
        give the same pseudonyms. Refused before any work: a key inside the report folder or
        that is an input of the study, a path that is not a regular file (FIFO, device,
        folder, dangling link), a file over 64 KiB and a key without 128 bits of randomness
        by the test of :func:`longitudinal.report.pseudonyms.key_problem` (a repeated letter,
        a counting run, a word; make one with ``python -c "import secrets;
        print(secrets.token_hex(32))" > KEY``). ``provenance.json`` holds a slow keyed
        fingerprint of it (:func:`~longitudinal.report.pseudonyms.fingerprint`).
    predictors : sequence of str, optional
        What "What predicts empathy" tests, in priority order (``longitudinal report
        --predictors``): scale score columns, instruments or numeric session columns (see
        :func:`longitudinal.predict.selection.plan_predictors`); default study.toml's
        ``[roles] predictors``, else the traits, states and session features. A name that is
        none of these is refused before any analysis, the message listing the candidates.
    person_tables : bool, default True
        Write the tables with one row per participant (``tables/reliable_change_people.csv``,
        ``tables/complete_case_exclusions.csv``). Pseudonyms do not make them anonymous:
        anyone holding the raw data can re-link a row to its participant by the scores.
        ``False`` leaves them out (the report says so).
    formats : str or sequence of str, default ("html", "docx", "latex")
        Outputs: ``html`` is the report itself (always written); ``docx`` and ``latex`` add
        ``out_dir/manuscript/`` with the APA tables (``tables.docx``; ``tables.tex``, a
        wrapper that compiles alone with pdflatex, and ``table<N>.tex`` to input) and
        the APA results text (``results.md``, and ``results.docx`` with ``docx``). A string
        is a comma-separated list (``"html,docx"``); ``"html"`` writes the report alone.
    lean : bool, default False
        A reduced report for a big study (``longitudinal report --lean``): the empathy models
        of "What predicts empathy" are fitted on a random subsample of at most
        :data:`~longitudinal.report.options.LEAN_MODEL_PARTICIPANTS` participants (with all
        their ratings; drawn with ``seed``, 2024 when not given), and the figures that draw
        one mark per participant (trajectories, state course, reliable change, empathy
        course) are left out. Every table of the surveys and the ratings is computed from
        every participant as usual. The report's first paragraph, ``notes.csv`` and
        ``provenance.json`` say what was reduced.
    ordinal_bins : int, optional
        For a continuous rating scale (more than 11 points, a 0-100 slider:
        :mod:`longitudinal.study.rating_scale`), whose empathy models are the linear ones, also fit
        the ordinal models to the ratings binned into this many (2 to 11) ordered categories
        of equal width over ``[scale_min, scale_max]``; the section says so and lists the
        bins (``tables/empathy_ordinal_bins.csv``). Refused for an ordinal scale (1-5, 1-7),
        whose ratings are fitted as ordered categories already.
    invariance_estimator : {"auto", "WLSMV", "MLR", "ML"}, default "auto"
        Estimator of the measurement-invariance ladders of the state scales
        (:func:`longitudinal.study_invariance`): ``"auto"`` fits the ordinal ladder (WLSMV)
        for a scale answered on at most 5 categories and MLR for more (Rhemtulla,
        Brosseau-Liard & Savalei 2012); a name fits every scale with it. The methods say
        which.

    Returns
    -------
    pathlib.Path
        ``out_dir``.

    Raises
    ------
    surveys.InputValidationError
        The study directory is not usable (every problem listed; nothing is written).
    longitudinal.InvalidParameterError
        A parameter is invalid (``ordinal_bins`` outside 2 to 11, or given for an ordinal
        scale; ``predictors`` naming what the study does not have), ``out_dir`` is a file or
        a non-empty directory without ``overwrite=True``, or ``out_dir`` is (or contains) the
        study directory.

    Notes
    -----
    The report contains: the sample (participants, sessions, ratings, surveys per wave,
    exclusions by file and reason); reliability per scale and wave; per state scale the
    descriptives per wave, the repeated-measures ANOVA (complete cases, Mauchly's test,
    Greenhouse-Geisser and Huynh-Feldt corrections, how many people were left out and why:
    a survey not taken, or a scale not scored for too few items answered, each participant's
    reason in ``tables/complete_case_exclusions.csv``), pairwise
    paired t tests (Holm) with d_z and g_av, the Friedman test, the linear growth model
    (time in weeks since the first wave, from the median survey dates) and reliable change
    counts with the reliability used; when a participant lacks a state scale's first or last
    score, the first-to-last change on the complete cases beside the one pooled over multiple
    imputations and its tipping point (``tables/change_imputed.csv``,
    ``tables/tipping_point.csv``); the empathy rating distribution (per scale point; in 10
    equal-width bins for a continuous scale) and its course over the study; session
    behaviour; traits and demographics; figures; a methods paragraph generated from what was
    done; and ``evaluate/metrics.csv`` when present.

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
    options = check_options(
        seed=seed,
        pseudonymize=pseudonymize,
        retest=retest,
        random_slope=random_slope,
        ci_level=ci_level,
        bayes=bayes,
        overwrite=overwrite,
        func="build_report",
        sampling=sampling,
        predictors=predictors,
        person_tables=person_tables,
        formats=formats,
        lean=lean,
        ordinal_bins=ordinal_bins,
        invariance_estimator=invariance_estimator,
    )
    study_path = Path(study_dir)
    config, inputs = _study_config(study_path)
    out = check_out_dir(
        out_dir, overwrite=overwrite, func="build_report", command="report", inputs=inputs
    )

    key_path = default_key_path(out) if pseudonym_key is None else Path(pseudonym_key)
    key, new_key = (
        read_or_new_key(key_path, out, func="build_report", inputs=inputs)
        if pseudonymize
        else (b"", False)
    )
    study = _load(study_path, config)
    if options.retest:  # a misspelled scale is refused before any analysis, not ignored
        from longitudinal.report.retest import check_retest_names

        check_retest_names(options.retest, study, func="build_report")
    if options.predictors is not None:  # an unknown name is refused before any analysis
        from longitudinal.predict.selection import resolve_predictors

        resolve_predictors(
            study, options.predictors, source=parameter("predictors"), func=caller("build_report")
        )
    if options.ordinal_bins is not None:  # refused before any work on an ordinal scale
        from longitudinal.study.rating_scale import check_ordinal_bins

        spec = study.config.ratings
        check_ordinal_bins(
            options.ordinal_bins,
            spec.scale_min,
            spec.scale_max,
            where="build_report",
            name="the `ordinal_bins` parameter",
        )
    preserved = out / "evaluate" if (out / EVALUATION_FILE).is_file() else None

    def write(staging: Path) -> None:
        write_report(study, staging, options=options, previous_evaluate=preserved, key=key)

    if new_key:  # before the report: a key that cannot be written fails before any work
        write_key(key_path, key)
    try:
        atomic_write(out, write, overwrite=overwrite, what="the report", command="report")
    except BaseException:
        if new_key:  # nobody has seen this key: a failed or interrupted run leaves none
            key_path.unlink(missing_ok=True)
        raise
    return out


def _study_config(study_path: Path) -> tuple[Any, list[Path]]:
    """Read ``study.toml`` once: its config (None when unusable) and the files it names.

    An unusable ``study.toml`` gives the study directory as the one input, as
    :func:`longitudinal.study.loaded.study_inputs` does; loading the study then says what is wrong.
    """
    from longitudinal.study.config import inputs_of
    from longitudinal.study.loaded import read_study_config
    from surveys import InputValidationError

    if not study_path.is_dir():
        return None, [study_path]
    try:
        config = read_study_config(study_path)
    except (InputValidationError, InvalidParameterError):
        return None, [study_path]
    return config, inputs_of(study_path, config)


def _load(study_path: Path, config: Any) -> Any:
    """Load the study, from its ``study.toml`` already read when it was usable."""
    from longitudinal.study.loaded import load_configured_study, load_study

    return load_study(study_path) if config is None else load_configured_study(study_path, config)


def run_demo(
    out_dir: str | os.PathLike[str],
    *,
    seed: int = DEMO_SEED,
    bayes: bool = False,
    overwrite: bool = False,
) -> Path:
    """Simulate a study and write its change report: the ``longitudinal demo`` command.

    Parameters
    ----------
    out_dir : str or path-like
        Folder to create; it must not exist or be empty unless ``overwrite=True``.
    seed : int, default :data:`~_empathic_base.vocabulary.DEMO_SEED` (2024)
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
            manuscript/                APA tables (Word, LaTeX) and the results text, as
                                       ``longitudinal report`` writes them by default
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
    options = check_options(
        seed=int(seed),
        pseudonymize=True,
        retest=None,
        random_slope=True,
        ci_level=0.95,
        bayes=bayes,
        overwrite=overwrite,
        func=func,
        formats=("html", "docx", "latex"),
    )
    out = check_out_dir(out_dir, overwrite=overwrite, func=func, command="demo")

    def write(staging: Path) -> None:
        from longitudinal.simulate import simulate_study
        from longitudinal.study.loaded import load_study

        study_dir = simulate_study(staging / "study", seed=int(seed))
        study = load_study(study_dir)
        # the demo's ids are simulated, not secret: its key follows the seed, so the same
        # seed gives the same report
        key = f"demo seed {int(seed)}".encode()
        write_report(study, staging, options=options, previous_evaluate=None, demo=True, key=key)

    atomic_write(out, write, overwrite=overwrite, what="the report", command="demo")
    return out


def write_report(
    study: Any,
    out: Path,
    *,
    options: ReportOptions,
    previous_evaluate: Path | None,
    key: bytes,
    demo: bool = False,
    only: Collection[str] | None = None,
) -> None:
    """Compute every section of the report of ``study`` and write the folder ``out``.

    ``only`` names the anchors of the sections to compute and show (all by default): one
    section built alone, with the tables, figures and notes it writes.
    """
    cfg = study.config
    if options.pseudonymize:
        shown = study.pseudonymised(key)
        id_map = shown.id_map
    else:
        shown = study
        id_map = {i: i for i in map(str, study.participants[cfg.id_col])}
    ctx = ReportContext(
        study=shown,
        loaded=study,
        options=options,
        id_map=id_map,
        out=out,
        demo=demo,
        previous_evaluate=previous_evaluate,
        key_fingerprint=fingerprint(key) if options.pseudonymize else None,
    )
    ctx.frames = {
        "person_wave": report_frame(shown.person_wave_frame()),
        "story": report_frame(shown.story_frame()),
        "sessions": report_frame(shown.session_frame()),
    }
    ctx.note(*(ctx.scrub(n) for n in study.meta.get("scoring_notes", [])))
    if options.lean:
        ctx.note(_lean_text())
    choose_states(ctx)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(exist_ok=True)
    sections = [s for s in report_sections() if only is None or s.anchor in only]
    for section in sections:
        section.run(ctx)

    if ctx.withheld:
        ctx.note(
            f"{ctx.withheld} message(s) of the analyses left out of this pseudonymized report: "
            "each quotes a value that is also a participant id, where it cannot be told "
            "whether it names the participant"
        )
    if not options.person_tables:
        people = set(id_map.values())
        for name in [n for n, t in ctx.tables.items() if _names_people(t, people)]:
            del ctx.tables[name]
            ctx.note(f"tables/{name}.csv (one row per participant) left out: --no-person-tables")
    for name, table in ctx.tables.items():
        write_csv(table, out / "tables" / f"{name}.csv")
    write_csv(
        study.exclusions.assign(reason=study.exclusions["reason"].map(lambda r: ctx.scrub(str(r)))),
        out / EXCLUSIONS_FILE,
    )
    write_csv(pd.DataFrame({"note": ctx.notes}, dtype=object), out / NOTES_FILE)
    ctx.results["provenance"] = provenance(ctx)
    ctx.results["provenance"]["sections_not_computed"] = [
        s.heading for s in sections if s.unavailable is not None
    ]
    write_json(ctx.results["provenance"], out / PROVENANCE_FILE)
    (out / REPORT_FILE).write_text(_page(ctx, sections), encoding="utf-8", newline="\n")
    if set(options.formats) - {"html"}:
        from longitudinal.manuscript.write import write_manuscript

        write_manuscript(ctx, out / "manuscript", formats=options.formats)


def _names_people(table: pd.DataFrame, people: set[str]) -> bool:
    """Whether a table has a column of participant ids (pseudonyms or raw): one row per person.

    A column of numbers (counts, scores) is never taken for ids, even where the raw ids are
    numbers (``1`` to ``41``): the report's id columns hold text.
    """
    for column in table.columns:
        if pd.api.types.is_numeric_dtype(table[column]):
            continue
        values = table[column].dropna()
        if len(values) and values.astype(str).isin(people).all():
            return True
    return False


def _lean_text() -> str:
    """Say what ``lean`` (``--lean``) reduced, for the page and notes.csv."""
    from longitudinal.report.options import LEAN_MODEL_PARTICIPANTS

    return (
        "Reduced report (--lean): the empathy models of 'What predicts empathy' are fitted on "
        f"a random subsample of at most {LEAN_MODEL_PARTICIPANTS:,} participants with all "
        "their ratings (the section says how many of how many), and the figures that draw one "
        "mark per participant (trajectories, state course, reliable change, empathy course) "
        "are left out; every other table and figure uses every participant."
    )


def _page(ctx: ReportContext, sections: list[Any]) -> str:
    cfg = ctx.config
    title = f"Change report: {cfg.name}"
    ids = (
        "Participant ids are replaced by pseudonyms (S01, S02, … in an order set by a secret "
        "key kept outside this folder). Reruns with the same key give the same pseudonyms; a "
        "new key gives new ones, so two reports of this study made with different keys give "
        "the same participant different pseudonyms."
        if ctx.options.pseudonymize
        else "Participant ids are shown as recorded."
    )
    if ctx.options.person_tables:
        ids += (
            " The per-person tables (one row per participant, e.g. "
            "tables/reliable_change_people.csv) can be re-linked to participants by anyone "
            "holding the raw data; `longitudinal report --no-person-tables` leaves them out."
        )
    else:
        ids += " Per-person tables are left out (--no-person-tables)."
    if ctx.options.lean:
        ids += " " + _lean_text()
    shown = []
    for section in sections:
        body = section.render(ctx)
        if body is not None:
            shown.append({"anchor": section.anchor, "heading": section.heading, "body": body})
    counts = ctx.results["provenance"]["counts"]
    lead = (
        f"{counts['participants']} participants, {counts['sessions']} sessions, "
        f"{counts['ratings']} ratings, waves {', '.join(cfg.waves)}. {ids}"
    )
    return render("page.html.j2", title=title, lead=lead, sections=shown) + "\n"
