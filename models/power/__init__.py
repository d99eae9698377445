"""Simulation-based power for mixed models, from a pilot fit or from a design file.

:func:`simulate_power` (``simulate``) runs the grid; beside it are the design TOML and the pilot's
resampled design (``_design``), the simulate/refit/test jobs of the linear and ordinal mixed
models (``_lmm``, ``_ordinal``); the serial, process and Dask back ends are :mod:`models.parallel`.
"""

from _empathic_base.lazy import lazy_exports

#: Public names and the module defining each, imported on first use: a worker process that
#: unpickles a simulation job imports ``models.power._lmm`` without pandas or SciPy's statistics.
_LAZY = {
    name: "models.power.simulate"
    for name in (
        "FAILURE_COLUMNS",
        "POWER_COLUMNS",
        "REASONS",
        "SIMULATION_COLUMNS",
        "PowerDesign",
        "PowerResult",
        "clopper_pearson",
        "read_design",
        "simulate_power",
    )
}

__all__ = list(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
