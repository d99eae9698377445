"""What shapes one Bayesian fit's sampling: the stop of ``draws="auto"``, ``min_levels``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from models._backends import pymc_model as pmod
from models._errors import InvalidParameterError
from models.bayes.diagnostics import draws_suffice
from models.limits import BAYES_MAX_DRAWS, check_count

__all__ = ["check_min_levels", "sufficiency", "with_min_levels"]


def sufficiency(inputs: pmod.ModelInputs) -> Any:
    """Return the check of ``draws="auto"``: the gate's R-hat and ESS of what is reported."""

    def enough(idata: Any) -> bool:
        draws = pmod.data_scale_draws(inputs, pmod.drop_padding(idata, inputs).posterior)
        return draws_suffice([v for k, v in draws.items() if not k.startswith("re_")])

    return enough


def check_min_levels(value: Any, *, where: str) -> dict[str, int]:
    """``min_levels``: None, or a mapping of grouping factor names to whole numbers >= 1."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidParameterError(
            f"the `min_levels` parameter of {where} must map grouping factor names to whole "
            f"numbers; got {value!r}"
        )
    return {
        name: check_count(n, name=f"min_levels[{name!r}]", where=where, minimum=1,
                          maximum=BAYES_MAX_DRAWS)
        for name, n in value.items()
    }  # fmt: skip


def with_min_levels(inputs: Any, floors: Mapping[str, int], *, where: str) -> Any:
    """Return ``inputs`` with each named block built with at least its floor of levels."""
    import dataclasses

    groups = [block.group for block in inputs.random]
    unknown = sorted(set(floors) - set(groups))
    if unknown:
        raise InvalidParameterError(
            f"the `min_levels` parameter of {where} names {', '.join(map(repr, unknown))}, "
            f"which the formula does not group by (its grouping factors: {groups})"
        )
    blocks = tuple(
        dataclasses.replace(block, min_levels=floors.get(block.group, 0)) for block in inputs.random
    )
    return dataclasses.replace(inputs, random=blocks)
