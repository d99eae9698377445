"""Reliability of repeated measurements: psych's multilevel reliability (``mlr``)."""

from models.reliability.multilevel import (
    COEFFICIENT_COLUMNS,
    COMPONENT_COLUMNS,
    MultilevelReliability,
    multilevel_reliability,
)

__all__ = [
    "COEFFICIENT_COLUMNS",
    "COMPONENT_COLUMNS",
    "MultilevelReliability",
    "multilevel_reliability",
]
