"""The vocabulary (``_empathic_base/vocabulary.py``), checked on every public module.

Every public module of ``surveys``, ``models`` and ``longitudinal`` (every module whose own
name and package names do not start with ``_``) is imported, and every public function and
class defined in it, and every name its ``__all__`` exports, is walked:

* no parameter or dataclass field uses an earlier name (``participant_col``, ``n_people``,
  ``include_bayes``, ``digits``, ...: :data:`~_empathic_base.vocabulary.EARLIER_NAMES`);
* ``id_col``, ``seed`` and ``ci_level`` have one of their allowed defaults (a seed defaults to
  None; only the demo has the named :data:`~_empathic_base.vocabulary.DEMO_SEED`);
* ``group_col`` names a grouping factor held out, never the participant;
* the declared result columns (every ``*_COLUMNS`` list of a public module) and the tables
  of results built here use the result vocabulary, and a participant count is called
  ``n_participants`` except where a written file keeps its name
  (:data:`~_empathic_base.vocabulary.WRITTEN_NAMES`);
* every public result class follows the result protocol: ``summary()``, ``to_frame()``,
  ``to_dict()``, and no class but the shared display mixin writes its own ``_repr_html_``;
* the three mixed models share one fitted-attribute vocabulary.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

from _empathic_base.results import Result
from _empathic_base.vocabulary import (
    DEMO_SEED,
    EARLIER_COLUMNS,
    EARLIER_NAMES,
    PARAMETERS,
    REQUIRED,
    WRITTEN_NAMES,
)

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("surveys", "models", "longitudinal")


def _public_modules() -> list[str]:
    """Every module of the three packages whose name and packages are public."""
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if any(part.startswith("_") for part in parts):
                continue
            names.append(".".join(parts))
    return names


PUBLIC_MODULES = _public_modules()
RESULTS = {
    "ScaleScores",
    "ScoreExportResult",
    "Study",
    "ChangeResult",
    "RMAnovaResult",
    "PairwiseChanges",
    "GrowthModelResult",
    "ReliableChangeResult",
    "EmpathyData",
    "EmpathyEffects",
    "EvaluationResult",
    "SimulatedStudy",
    "PowerResult",
    "KFoldBootstrap",
    "AgreementResult",
    "GroupCVResult",
    "PanelFit",
    "HausmanTest",
    "LikelihoodRatioTest",
    "BayesianR2",
    "MixedR2",
    "MarginalMeans",
    "Contrasts",
    "PosteriorMeans",
    "PosteriorContrasts",
    "GStudy",
    "InvarianceResult",
    "PredictionMetrics",
    "ApaTable",
    "InvarianceTables",
    "MultilevelReliability",
    "MultilevelTables",
    "PooledEstimates",
    "PooledWaldTest",
    "ImputedTables",
    "ImputedEffects",
    "ImputedScores",
    "ImputedSessions",
    "Attrition",
    "ImputedChange",
    "TippingPoint",
    "ModelWaveMeans",
}
FITTED = ("fixed_", "thresholds_", "random_", "ranef_", "converged_", "meta_")
DEMO_FUNCTIONS = {"longitudinal.report.build.run_demo"}
"""The functions whose seed defaults to the demo's named seed."""


def _public() -> dict[str, object]:
    found: dict[str, object] = {}
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        exported = set(getattr(module, "__all__", []))
        # a lazily exported name is public before its first access too
        members = {**vars(module), **{n: getattr(module, n) for n in sorted(exported)}}
        for attr, obj in members.items():
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            own = getattr(obj, "__module__", None) == name and not attr.startswith("_")
            if own or attr in exported:
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return found


PUBLIC = _public()


def _callables():
    for key, obj in PUBLIC.items():
        if obj.__module__ in ("models._spec", "models._design"):
            continue  # the parsed formula's own fields (a random term's grouping factor)
        if inspect.isfunction(obj):
            yield key, obj
        elif inspect.isclass(obj):
            for name, member in vars(obj).items():
                if inspect.isfunction(member) and (name == "__init__" or not name.startswith("_")):
                    yield f"{key}.{name}", member


def test_the_walk_finds_every_public_module():
    assert len(PUBLIC_MODULES) > 100
    assert {"surveys.pipeline", "models.evaluation.metrics", "longitudinal.power"} <= set(
        PUBLIC_MODULES
    )
    assert not [m for m in PUBLIC_MODULES if "._" in m]
    assert len(PUBLIC) > 300
    assert any(k.endswith("simulate_power") for k in PUBLIC)
    assert any(k.endswith("PilotModel") for k in PUBLIC)


# Sorted, with ids from the names only: every process collects the same tests in one order
# (parallel workers compare their collections).
_CALLABLES = sorted(_callables(), key=lambda kv: kv[0])


@pytest.mark.parametrize(("key", "func"), _CALLABLES, ids=[k[-60:] for k, _ in _CALLABLES])
def test_every_parameter_has_its_one_name_and_default(key, func):
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):  # pragma: no cover - a builtin without a signature
        return
    earlier = sorted(set(params) & set(EARLIER_NAMES))
    assert not earlier, f"{key}: {[f'{n} (use {EARLIER_NAMES[n]})' for n in earlier]}"
    if "group_col" in params:
        assert key.endswith("leave_one_group_out"), f"{key}: the participant column is id_col"
    for name, allowed in PARAMETERS.items():
        if name not in params or not allowed:
            continue
        default = params[name].default
        default = REQUIRED if default is inspect.Parameter.empty else default
        if name == "seed" and key in DEMO_FUNCTIONS:
            allowed = (*allowed, DEMO_SEED)
        assert any(default is a or default == a for a in allowed), (key, name, default)


def _classes():
    return sorted(((k, c) for k, c in PUBLIC.items() if inspect.isclass(c)), key=lambda kv: kv[0])


@pytest.mark.parametrize(("key", "cls"), _classes(), ids=[k[-60:] for k, _ in _classes()])
def test_no_attribute_uses_an_earlier_name(key, cls):
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    names = fields | {n for n in vars(cls) if not n.startswith("_")}
    earlier = sorted(names & set(EARLIER_NAMES))
    assert not earlier, f"{key}: {[f'{n} (use {EARLIER_NAMES[n]})' for n in earlier]}"


def _column_lists():
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if attr.endswith("_COLUMNS") and isinstance(value, list | tuple):
                if all(isinstance(v, str) for v in value):
                    yield f"{name}.{attr}", list(value)


_COLUMN_LISTS = sorted(_column_lists(), key=lambda kv: kv[0])


def _check_columns(where: str, columns) -> None:
    earlier = [c for c in columns if c in EARLIER_COLUMNS]
    assert not earlier, f"{where}: {[f'{c} (use {EARLIER_COLUMNS[c]})' for c in earlier]}"
    counts = [
        c
        for c in columns
        if c in EARLIER_NAMES and EARLIER_NAMES[c] == "n_participants" and c not in WRITTEN_NAMES
    ]
    assert not counts, f"{where}: a participant count is n_participants, not {counts}"


def test_the_walk_finds_the_declared_result_columns():
    assert len(_COLUMN_LISTS) > 20


def test_every_result_class_is_checked_for_the_protocol():
    results = {
        key.rsplit(".", 1)[-1]
        for key, obj in PUBLIC.items()
        if inspect.isclass(obj) and issubclass(obj, Result) and obj is not Result
    }
    assert results <= RESULTS, sorted(results - RESULTS)


@pytest.mark.parametrize(
    ("where", "columns"), _COLUMN_LISTS, ids=[k[-60:] for k, _ in _COLUMN_LISTS]
)
def test_declared_result_columns_use_the_vocabulary(where, columns):
    _check_columns(where, columns)


def test_built_results_use_the_vocabulary():
    import pandas as pd

    from models import agreement
    from models.evaluation import prediction_metrics

    metrics = prediction_metrics([1, 2, 4, 5], [1.0, 2.5, 3.5, 5.0], threshold=3.0)
    assert list(metrics.to_frame().columns) == list(metrics.to_dict())
    data = pd.DataFrame(
        {"unit": [1, 1, 2, 2, 3, 3], "rater": list("abababa")[:6], "value": [1, 1, 2, 2, 1, 2]}
    )
    result = agreement(data, unit_col="unit", rater_col="rater", value_col="value", n_boot=0)
    for built in (metrics, result):
        for caption, table in built._parts():
            _check_columns(f"{type(built).__name__} {caption}", table.columns)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_every_result_follows_the_protocol(name):
    classes = [obj for key, obj in PUBLIC.items() if key.rsplit(".", 1)[-1] == name]
    assert classes, f"{name} is not public"
    cls = classes[0]
    for method in ("to_frame", "to_dict"):
        assert callable(getattr(cls, method, None)), f"{name} has no {method}()"
    summary = inspect.getattr_static(cls, "summary")
    if isinstance(summary, property):  # EvaluationResult: callable, and its earlier table
        summary = inspect.signature(summary.fget).return_annotation
        summary = getattr(importlib.import_module(cls.__module__), summary).__call__
    assert inspect.signature(summary).parameters["decimals"].default == 4


def test_no_result_writes_its_own_notebook_html():
    from _empathic_base.results import Shows

    own = [
        key
        for key, obj in PUBLIC.items()
        if inspect.isclass(obj) and "_repr_html_" in vars(obj) and obj is not Shows
    ]
    assert own == []


def _fitted_names(obj) -> set[str]:
    """The fitted attributes an object has: properties, and attributes set by its fit."""
    names = {n for n in dir(type(obj)) if n.endswith("_") and not n.startswith("_")}
    return names | {n for n in vars(obj) if n.endswith("_") and not n.startswith("_")}


def test_the_mixed_models_share_their_fitted_vocabulary():
    import numpy as np
    import pandas as pd

    from models.bayes import BayesianMixedModel
    from models.lmm import LinearMixedModel
    from models.ordinal import OrdinalMixedModel

    rng = np.random.default_rng(3)
    data = pd.DataFrame({"g": np.repeat(np.arange(12), 8).astype(str), "x": rng.normal(size=96)})
    latent = data["x"] + np.repeat(rng.normal(size=12), 8) + rng.logistic(size=96)
    data["y"] = np.digitize(latent, [-1.5, 0.0, 1.5]) + 1
    fitted = [
        LinearMixedModel("y ~ x + (1 | g)").fit(data),
        OrdinalMixedModel("y ~ x + (1 | g)").fit(data),
    ]
    for model in fitted:
        missing = [n for n in FITTED if n not in _fitted_names(model)]
        assert missing in ([], ["thresholds_"]), f"{type(model).__name__} lacks {missing}"
        assert model.to_frame()["term"].tolist()[-1] == "x"
    for cls in (LinearMixedModel, OrdinalMixedModel, BayesianMixedModel):
        for name in ("refit", "summary", "to_frame", "to_dict", "print_summary"):
            assert callable(getattr(cls, name, None)), f"{cls.__name__} lacks {name}()"
        assert inspect.signature(cls.print_summary).parameters["decimals"].default == 4
        unfitted = cls("y ~ x + (1 | g)", ci_level=0.9)
        params = unfitted.get_params()
        assert list(params) == list(inspect.signature(cls.__init__).parameters)[1:]
        assert params["ci_level"] == 0.9 and params["formula"] == "y ~ x + (1 | g)"
    # the Bayesian model's fitted attributes are properties over its draws (fit in test_bayes)
    static = {
        n
        for n in FITTED
        if isinstance(inspect.getattr_static(BayesianMixedModel, n, None), property)
    }
    assert static >= {"fixed_", "thresholds_", "random_", "ranef_", "converged_"}
