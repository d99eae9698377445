"""Simulation-based power for mixed models, from a pilot fit or from a design file.

:func:`simulate_power` (``simulate``) runs the grid; beside it are the design TOML and the pilot's
resampled design (``_design``), the simulate/refit/test jobs of the linear and ordinal mixed
models (``_lmm``, ``_ordinal``) and the serial, process and Dask back ends (``_runners``).
"""

from models.power.simulate import (
    FAILURE_COLUMNS,
    POWER_COLUMNS,
    REASONS,
    SIMULATION_COLUMNS,
    PowerDesign,
    PowerResult,
    clopper_pearson,
    read_design,
    simulate_power,
)

__all__ = [
    "FAILURE_COLUMNS",
    "POWER_COLUMNS",
    "REASONS",
    "SIMULATION_COLUMNS",
    "PowerDesign",
    "PowerResult",
    "clopper_pearson",
    "read_design",
    "simulate_power",
]
