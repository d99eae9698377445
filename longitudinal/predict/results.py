"""The benchmark's tables and files: mean ± SD over seeds, K-fold intervals, ``table.md``.

:func:`run_evaluation` runs :func:`longitudinal.predict.evaluate_predictions` and writes its
results (the ``longitudinal evaluate`` command); the table builders here are shared with the
report's Evaluation section.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from longitudinal._checks import check_bool
from longitudinal._output import atomic_write, check_out_dir, csv_is_raw, write_csv, write_json
from longitudinal.predict.benchmark import (
    BASELINES_TO_BEAT,
    NOT_COMPARED,
    EvaluationResult,
    evaluate_predictions,
    spread_bounds,
)
from longitudinal.predict.benchmark_result import _PAPER_BESTS
from longitudinal.predict.plots import plot_metrics
from models.evaluation import (
    METRIC_NAMES,
)

METRICS_FILE = "metrics.csv"
SUMMARY_FILE = "summary.csv"
TABLE_FILE = "table.md"
FIGURE_FILE = "metrics.png"
VECTOR_FILE = "metrics.svg"
RUNS_FILE = "runs.csv"
INTERVALS_FILE = "metrics_ci.csv"
COMPARISONS_FILE = "comparisons.csv"
PARAMETERS_FILE = "evaluation.json"


def _cell(mean: float, sd: float, metric: str | None = None) -> str:
    """``mean ± SD``; a spread that crosses the metric's range reads ``mean +above/−below``."""
    if not np.isfinite(mean):
        return "–"
    if not np.isfinite(sd):
        return f"{mean:.1f}"
    if metric is not None:
        below, above = spread_bounds(metric, mean, sd)
        if below < sd or above < sd:
            return f"{mean:.1f} +{above:.1f}/−{below:.1f}"
    return f"{mean:.1f} ± {sd:.1f}"


FLOOR_NOTE = (
    "Accuracy, F1 and MSE cannot be negative (nor accuracy and F1 above 100): where mean ± SD "
    "would cross that bound, the spread is shown up to the bound only (+above/−below)."
)
"""The note under a mean ± SD table whose spread was cut at a metric's bound."""


def _interval(estimate: float, low: float, high: float, *, signed: bool = False) -> str:
    if not np.isfinite(estimate):
        return "–"
    fmt = "{:+.1f}" if signed else "{:.1f}"

    def show(value: float) -> str:
        return fmt.format(0.0 if abs(value) < 0.05 else value)  # no "-0.0"

    text = show(estimate)
    if np.isfinite(low) and np.isfinite(high):
        text += f" [{show(low)}, {show(high)}]"
    return text


COVERAGE_STUDY_SIZE = 41
"""Participants of the simulated studies in which the K-fold intervals' coverage (94-95%)
was established (``tests/models/test_evaluation_slow.py``); the sentence is left out below it."""

METRIC_HEADERS = {"r": "r", "rho": "ρ", "acc": "Acc", "f1": "F1", "mse": "MSE"}
"""Display names of the benchmark metrics, in the paper's order."""


def interval_table(intervals: pd.DataFrame) -> pd.DataFrame:
    """One row per model: ``model`` and each metric as ``estimate [ci_low, ci_high]`` text.

    ``intervals`` is :attr:`EvaluationResult.intervals` (or ``metrics_ci.csv``); models keep
    their order.
    """
    rows = []
    for model, block in intervals.groupby("model", sort=False):
        by = block.set_index("metric")
        rows.append(
            {
                "model": model,
                **{
                    m: _interval(*(float(by.loc[m, c]) for c in ("estimate", "ci_low", "ci_high")))
                    for m in METRIC_NAMES
                },
            }
        )
    return pd.DataFrame(rows, columns=["model", *METRIC_NAMES])


def difference_table(
    comparisons: pd.DataFrame, baselines: Sequence[str] = BASELINES_TO_BEAT
) -> pd.DataFrame:
    """Differences of every model from the baselines to beat, as display text.

    One row per model x baseline: ``model, versus`` and each metric as ``+d [low, high]``,
    followed by ``(better)`` or ``(worse)`` only when the interval excludes 0, or by
    ``(not compared (baseline is an artifact))`` when the baseline's pooled r or rho is an
    artifact of refitting per fold (:func:`~longitudinal.predict.benchmark.withhold_verdicts`).
    """
    versus = [b for b in baselines if b in set(comparisons["versus"])]
    block = comparisons[comparisons["versus"].isin(versus)]
    rows = []
    for (model, other), part in block.groupby(["model", "versus"], sort=False):
        by = part.set_index("metric")
        row = {"model": model, "versus": other}
        for m in METRIC_NAMES:
            rec = by.loc[m]
            text = _interval(rec["estimate"], rec["ci_low"], rec["ci_high"], signed=True)
            if rec["verdict"] in ("better", "worse", NOT_COMPARED):
                text += f" ({rec['verdict']})"
            row[m] = text
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", "versus", *METRIC_NAMES])


def spread_table(summary: pd.DataFrame, split: str) -> pd.DataFrame:
    """One row per model of ``split``: each metric as ``mean ± SD`` over seeds (text).

    A metric cannot leave its range (accuracy, F1 and MSE are never negative, accuracy and
    F1 never above 100), so where mean ± SD would cross a bound the cell reads ``mean
    +above/−below`` with the spread cut at the bound, and ``attrs["floored"]`` is True (the
    table's reader is told, :data:`FLOOR_NOTE`).

    >>> summary = pd.DataFrame({"model": ["m"], "split": ["test"],
    ...     **{f"{m}_mean": [5.0] for m in METRIC_NAMES},
    ...     **{f"{m}_sd": [7.0] for m in METRIC_NAMES}})
    >>> table = spread_table(summary, "test")
    >>> table.loc[0, "r"], table.loc[0, "mse"], table.attrs["floored"]
    ('5.0 ± 7.0', '5.0 +7.0/−5.0', True)
    """
    block = summary[summary["split"] == split]
    rows = [
        {
            "model": rec["model"],
            **{m: _cell(float(rec[f"{m}_mean"]), float(rec[f"{m}_sd"]), m) for m in METRIC_NAMES},
        }
        for _, rec in block.iterrows()
    ]
    table = pd.DataFrame(rows, columns=["model", *METRIC_NAMES])
    table.attrs["floored"] = bool(
        table[list(METRIC_NAMES)].apply(lambda c: c.str.contains("/−", regex=False)).any().any()
    )
    return table


def interval_note(parameters: Mapping[str, Any]) -> str:
    """Describe the K-fold intervals for the table's reader (from the run's parameters)."""
    boot = parameters["bootstrap"]
    pct = f"{100 * boot['ci_level']:g}%"
    coverage = ""
    if int(boot["n_groups"]) >= COVERAGE_STUDY_SIZE:
        coverage = (
            f" In simulated studies of {COVERAGE_STUDY_SIZE} people these intervals covered "
            "the population value in 94-95% of studies (established at that size; not "
            "stated for studies with fewer participants)."
        )
    found = boot.get("artifacts") or {}
    artifacts = ""
    if found:
        names = {"r": "r", "rho": "ρ"}
        listed = "; ".join(
            f"{model}: " + ", ".join(f"{names.get(k, k)} {v:.1f}" for k, v in metrics.items())
            for model, metrics in found.items()
        )
        artifacts = (
            f" Artifacts here ({listed}): a difference from such a baseline in that metric is "
            "shown with its interval but not compared."
        )
    return (
        f"Estimate [{pct} interval]: every participant is predicted once per seed by a model "
        "that did not see them; the metric of these predictions pooled, averaged over seeds. "
        f"Interval: participant-cluster bootstrap, B = {int(boot['n_boot'])} replicates, seed "
        f"{int(boot['seed'])}; each replicate draws the {int(boot['n_groups'])} participants with "
        "replacement and recomputes the metric with the predictions held fixed (the models "
        "are not refitted); estimate ± t SE on Fisher's z (r, ρ), the logit (Acc, F1) or the "
        f"log (MSE), t with {int(boot['n_groups']) - 1} degrees of freedom."
        + coverage
        + " A model refitted on every fold and without signal scores a negative pooled r "
        "(each fold model is centred on its own training participants): read an r whose "
        "interval reaches 0 or below as no signal, its value as an artifact of the refitting."
        + artifacts
    )


def difference_note(parameters: Mapping[str, Any]) -> str:
    """Say how the differences from the baselines are read."""
    pct = f"{100 * parameters['bootstrap']['ci_level']:g}%"
    return (
        f"Model minus baseline [{pct} interval of the paired differences, same bootstrap "
        "draws, estimate ± t SE]. A difference is called better or worse only when its "
        "interval excludes 0 (for MSE, lower is better); otherwise it is not shown to "
        "differ. r and ρ of a model that predicts one value for everyone are undefined (–). "
        "Against a baseline whose pooled r or ρ is an artifact of refitting per fold (its "
        "interval reaches 0), the difference in that metric is shown but not compared."
    )


def _markdown(frame: pd.DataFrame) -> list[str]:
    headers = [{**METRIC_HEADERS, "model": "Model"}.get(c, c) for c in frame.columns]
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in frame.itertuples(index=False)]
    return [*lines, ""]


def _interval_lines(result: EvaluationResult) -> list[str]:
    """Render the K-fold intervals and the differences from the baselines as Markdown."""
    boot = result.parameters.get("bootstrap")
    if not boot or result.intervals.empty:
        return []
    pct = f"{100 * boot['ci_level']:g}%"
    lines = [
        f"### Grouped {result.parameters['k']}-fold with {pct} intervals",
        "",
        interval_note(result.parameters),
        "",
        *_markdown(interval_table(result.intervals)),
    ]
    differences = difference_table(result.comparisons)
    if differences.empty:
        return lines
    versus = list(dict.fromkeys(differences["versus"]))
    return [
        *lines,
        f"### Differences from the baselines to beat ({', '.join(versus)})",
        "",
        difference_note(result.parameters),
        "",
        *_markdown(differences),
    ]


def _paper_table(result: EvaluationResult) -> str:
    """Markdown table in the paper's layout: models x (r, rho, Acc, F1, MSE), mean ± SD."""
    p = result.parameters
    lines = [
        "# Out-of-person empathy prediction",
        "",
        f"Participants split {'/'.join(f'{100 * s:g}' for s in p['sizes'])} (train/val/test) "
        f"with seeds {p['seeds']}; metrics {p.get('metric_units', 'x 100')}, mean ± SD over "
        f"seeds. Accuracy and F1: {p['threshold_rule']}. MSE on the rating scale.",
        "",
    ]
    reading = _reading_lines(p)
    if reading:
        lines += [*reading, ""]
    left = left_out_lines(p)
    if left:
        lines += [
            "## Left out",
            "",
            "A rating enters the benchmark only with every predictor of the models present.",
            "",
            *left,
            "",
        ]
    names = {"val": "Validation", "test": "Test", "kfold": f"Grouped {p['k']}-fold"}
    for split in ("test", "val", "kfold"):
        block = spread_table(result.summary_table, split)
        if block.empty:
            continue
        lines += [f"## {names[split]}", "", *_markdown(block)]
        if block.attrs.get("floored"):
            lines += [FLOOR_NOTE, ""]
        if split == "test" and p.get("holdout_caveat"):
            lines += [f"Caveat: {p['holdout_caveat']}.", ""]
        if split == "kfold":
            lines += _interval_lines(result)
    lines += ["## Models", ""]
    lines += [f"- `{m}`: {d}" for m, d in p["models"].items()]
    lines += [
        "",
        "For orientation only (different inputs: the paper's models read transcripts and "
        "video): the paper reports, on its test participants, "
        + "; ".join(
            f"{c} r = {r:.1f}" + (f", ρ = {rho:.1f}" if rho is not None else "")
            for c, r, rho in _PAPER_BESTS
        )
        + " (x 100).",
        "",
    ]
    return "\n".join(lines)


def terminal_summary(folder: str | os.PathLike[str]) -> list[str]:
    """Lines for the terminal after ``longitudinal evaluate``: the metrics and how to read them.

    Reads ``evaluation.json`` and ``summary.csv`` of a folder written by
    :func:`run_evaluation`: the main metrics (grouped K-fold, else the 70/20/10 test
    participants; mean over seeds, x 100, the MSE of a continuous scale in squared rating
    points: ``metric_units``), the binarisation cut and where it came from, how
    the package's predictions were kept on the scale, and every participant and rating left
    out with the reason.
    """
    import json

    folder = Path(folder)
    params = json.loads((folder / PARAMETERS_FILE).read_text(encoding="utf-8"))
    summary = pd.read_csv(folder / SUMMARY_FILE)
    lines: list[str] = []
    names = {"kfold": f"grouped {params.get('k')}-fold", "test": "70/20/10 test participants"}
    for split in ("kfold", "test"):
        block = spread_table(summary, split)
        if block.empty:
            continue
        units = params.get("metric_units", "x 100")
        head = "Metrics x 100" if units == "x 100" else f"Metrics ({units})"
        lines.append(f"{head}, {names[split]}, mean ± SD over seeds:")
        shown = block.rename(columns={**METRIC_HEADERS, "model": "Model"})
        lines += ["  " + row for row in shown.to_string(index=False).splitlines()]
        break
    lines.append(f"Accuracy and F1: {params['threshold_rule']}.")
    lines += _reading_lines(params)
    lines += left_out_lines(params)
    return lines


def clipping_line(params: Mapping[str, Any]) -> str | None:
    """Say how many of the package's predictions were clipped to the scale (or None).

    >>> line = clipping_line({"clipping": {"scale": "1–7", "outside": {
    ...     "lmm_full": {"n": 3, "of": 120}, "grand_mean": {"n": 0, "of": 120}}}})
    >>> line.split("; ")
    ["Predictions of the package's models clipped to the 1–7 scale before scoring", \
'3 of 240 were outside (lmm_full 3 of 120).']
    """
    clip = params.get("clipping")
    if not isinstance(clip, Mapping) or not clip.get("outside"):
        return None
    outside = clip["outside"]
    n = sum(int(v["n"]) for v in outside.values())
    of = sum(int(v["of"]) for v in outside.values())
    which = [f"{m} {int(v['n'])} of {int(v['of'])}" for m, v in outside.items() if v["n"]]
    return (
        f"Predictions of the package's models clipped to the {clip['scale']} scale before "
        f"scoring; {n} of {of} were outside" + (f" ({', '.join(which)})" if which else "") + "."
    )


def left_out_lines(params: Mapping[str, Any]) -> list[str]:
    """Name every participant and count every rating the benchmark left out, with the reason.

    Returns a summary sentence, one ``- participant: reason; n ratings left out`` line per
    participant, and the advice when a scale is unscored for some people; no line when
    nothing was left out. The lines name raw participant ids (``evaluation.json``
    ``left_out``); the report maps them to its pseudonyms.

    >>> lines = left_out_lines({"left_out": {"ratings": 27, "of": 300, "advice": None,
    ...     "participants": [{"participant": "sub-001", "ratings": 27, "of": 27,
    ...     "excluded": True, "text": "sub-001: x not scored; 27 rating(s) left out"}]}})
    >>> lines[0]
    'Left out: 27 of 300 ratings; 1 participant entirely (sub-001).'
    >>> lines[1]
    '- sub-001: x not scored; 27 rating(s) left out'
    """
    info = params.get("left_out")
    if not isinstance(info, Mapping) or not (info.get("ratings") or info.get("participants")):
        return []
    people = list(info.get("participants") or [])
    gone = [p["participant"] for p in people if p.get("excluded")]
    first = f"Left out: {int(info['ratings'])} of {int(info['of'])} ratings"
    if gone:
        word = "participant" if len(gone) == 1 else "participants"
        first += f"; {len(gone)} {word} entirely ({', '.join(map(str, gone))})"
    lines = [first + "."]
    lines += [f"- {p['text']}" for p in people]
    if info.get("advice"):
        lines.append(f"Advice: {info['advice']}")
    return lines


def _reading_lines(params: Mapping[str, Any]) -> list[str]:
    """Say what was done to the data before scoring (lines for the terminal and table.md)."""
    line = clipping_line(params)
    return [line] if line else []


def run_evaluation(
    study_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    seeds: int | Sequence[int] = 5,
    bayes: bool = True,
    predictions: Sequence[str | os.PathLike[str]] | None = None,
    overwrite: bool = False,
    **options: Any,
) -> Path:
    """Run the prediction benchmark on a study directory and write its outputs.

    Parameters
    ----------
    study_dir : str or path-like
        The study directory (:func:`longitudinal.study.loaded.load_study`).
    out_dir : str or path-like
        Folder to create (must not exist or be empty unless ``overwrite=True``). Write it to
        ``STUDY_DIR/evaluate`` for ``longitudinal report`` to pick it up.
    seeds : int or sequence of int, default 5
        Split seeds (an int ``n`` means ``0, ..., n - 1``).
    bayes : bool, default True
        Include the Bayesian ordinal model.
    predictions : sequence of path-like, optional
        CSV files of a researcher's own models' predictions
        (:mod:`longitudinal.predict.user_predictions`); each model is scored beside the
        package's and
        appears in every output. Checked before any model is fitted.
    overwrite : bool, default False
        Replace a non-empty ``out_dir`` once the new results are complete.
    **options
        Further keyword arguments of :func:`evaluate_predictions` (``k``, ``models``,
        ``threshold``, ``sizes``, ``session_features``, ``draws``, ``tune``, ``chains``,
        ``sampler``, ``bayes_kfold``, ``n_boot``, ``ci_level``, ``bootstrap_seed``,
        ``scheduler``, ``progress``).

    Returns
    -------
    pathlib.Path
        ``out_dir``, holding::

            metrics.csv       model, split, seed, r, rho, acc, f1, mse (x 100; the MSE
                              of a continuous scale in squared rating points), the
                              package's models first, then the researcher's
            summary.csv       mean, SD and count per model x split over seeds
            table.md          the summary in the paper's layout
            metrics.png       bar chart of the test-participant metrics (report style)
            metrics.svg       the same chart as SVG, for papers
            metrics.pdf       the same chart as PDF (fonts embedded), for journals
            runs.csv          one row per fit: sizes and seconds
            metrics_ci.csv    grouped K-fold: estimate and participant-cluster bootstrap
                              interval per model x metric (header only without K-fold)
            comparisons.csv   paired differences between models with their intervals
            evaluation.json   parameters (threshold rule, seeds, sizes, models), notes, time

        ``metrics.csv``, ``summary.csv``, the intervals and the figure name no
        participant; ``table.md`` and ``evaluation.json`` (``left_out``) name the
        participants left out, with the reason, for the researcher (``longitudinal report``
        shows them under its pseudonyms).

    Raises
    ------
    surveys.InputValidationError
        The study directory is not usable, or the predictions cannot be scored (every
        problem listed; nothing is written).
    longitudinal.InvalidParameterError
        For invalid options or an ``out_dir`` that is a file or non-empty.

    Notes
    -----
    The folder is written to a temporary sibling and moved into place at the end, so a
    failed run leaves nothing half-written. Warnings of the fits are recorded in
    ``evaluation.json`` (``notes``), not re-issued.

    Examples
    --------
    >>> from longitudinal.predict import run_evaluation
    >>> run_evaluation("demo-report/study", "demo-report/study/evaluate")  # doctest: +SKIP
    PosixPath('demo-report/study/evaluate')
    """
    func = "run_evaluation"
    check_bool(overwrite, name="overwrite", where=func)
    from longitudinal.study.loaded import load_study, study_inputs

    files = [] if predictions is None else [Path(p) for p in predictions]
    out = check_out_dir(
        out_dir,
        overwrite=overwrite,
        func=func,
        command="evaluate",
        inputs=[*study_inputs(study_dir), *files],
    )

    study = load_study(study_dir)
    if options.get("predictors") is not None:  # an unknown name, in the caller's words
        from _empathic_base.words import caller, parameter
        from longitudinal.predict.selection import parse_predictor_list, resolve_predictors

        named = parse_predictor_list(options["predictors"])
        source = parameter("predictors")
        resolve_predictors(study, named, source=source, func=caller(func))
    result = evaluate_predictions(
        study,
        seeds=seeds,
        bayes=bayes,
        predictions=[str(p) for p in files] or None,
        **options,
    )

    def write(folder: Path) -> None:
        write_csv(result.metrics, folder / METRICS_FILE)
        write_csv(result.summary_table, folder / SUMMARY_FILE)
        write_csv(result.runs, folder / RUNS_FILE)
        write_csv(result.intervals, folder / INTERVALS_FILE)
        write_csv(result.comparisons, folder / COMPARISONS_FILE)
        (folder / TABLE_FILE).write_text(_paper_table(result), encoding="utf-8")
        from longitudinal.plotting import JOURNAL_DPI, save_figure

        split = "test" if (result.summary_table["split"] == "test").any() else "kfold"
        save_figure(
            plot_metrics(
                result.summary_table,
                split=split,
                mse_in_points=result.parameters.get("scale", {}).get("kind") == "continuous",
            ),
            folder / FIGURE_FILE,
            dpi=JOURNAL_DPI,
            vector=True,
        )
        payload = {**result.parameters, "raw_csv": csv_is_raw(), "notes": list(result.notes)}
        write_json(payload, folder / PARAMETERS_FILE)

    atomic_write(out, write, overwrite=overwrite, what="the evaluation", command="evaluate")
    return out
