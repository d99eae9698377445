"""The glossary of docs/architecture.md, checked on the public API of the three packages.

Every public function and class of ``surveys``, ``models`` and ``longitudinal`` (their
``__all__`` and those of their public subpackages) is walked:

* the participant column is ``id_col``; an earlier name (``participant_col``, ``group_col`` for
  the participant, ``group``) survives only as a deprecated keyword that defaults to None and
  says so in the docstring;
* every public result class follows the result protocol: ``summary()``, ``to_frame()``,
  ``to_dict()``, and no class but the shared display mixin writes its own ``_repr_html_``;
* the three mixed models share one fitted-attribute vocabulary.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

PUBLIC_MODULES = (
    "surveys",
    "models",
    "models.lmm",
    "models.ordinal",
    "models.power",
    "models.bayes",
    "models.evaluation",
    "models.panel",
    "models.sem",
    "longitudinal",
    "longitudinal.change",
    "longitudinal.predict",
    "longitudinal.study",
    "longitudinal.splits",
    "longitudinal.simulate",
)
EARLIER_NAMES = {"participant_col", "group"}
RESULTS = {
    "ScaleScores",
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
    "GStudy",
    "InvarianceResult",
}
FITTED = ("fixed_", "thresholds_", "random_", "ranef_", "converged_", "meta_")


def _public() -> dict[str, object]:
    found: dict[str, object] = {}
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if inspect.isclass(obj) or inspect.isfunction(obj):
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


def test_the_walk_finds_the_public_api():
    assert len(PUBLIC) > 100
    assert any(k.endswith("simulate_power") for k in PUBLIC)
    assert any(k.endswith("within_between") for k in PUBLIC)


# Sorted, with ids from the names only: every process collects the same tests in one order
# (parallel workers compare their collections).
_CALLABLES = sorted(_callables(), key=lambda kv: kv[0])


@pytest.mark.parametrize(("key", "func"), _CALLABLES, ids=[k[-60:] for k, _ in _CALLABLES])
def test_the_participant_column_has_one_name(key, func):
    params = inspect.signature(func).parameters
    for name in EARLIER_NAMES | {"group_col"}:
        if name not in params:
            continue
        if name == "group_col" and key.endswith("leave_one_group_out"):
            continue  # any grouping factor held out, not the participant
        param = params[name]
        assert param.default is None, f"{key}: `{name}` is an earlier name, default None"
        assert "earlier name" in (func.__doc__ or ""), f"{key}: `{name}` undocumented"
    assert "person_col" not in params and "subject_col" not in params, key
    if "id_col" in params:  # one default: participant_id (None: that, or an export's `id`)
        default = params["id_col"].default
        assert default in (inspect.Parameter.empty, None, "participant_id"), (key, default)


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


def test_earlier_names_still_work_for_a_release():
    import pandas as pd

    from models import EmpathicDeprecationWarning
    from models.panel import within_between

    data = pd.DataFrame({"pid": [1, 1, 2, 2], "x": [1.0, 3.0, 5.0, 5.0]})
    with pytest.warns(EmpathicDeprecationWarning, match="use `id_col`"):
        old = within_between(data, ["x"], group_col="pid")
    pd.testing.assert_frame_equal(old, within_between(data, ["x"], id_col="pid"))
