"""Engine back ends of :mod:`models.bayes`, each imported lazily.

PyMC model construction and NUTS dispatch for the Bayesian models. The other families keep their
engines in their own packages (``models/lmm/engine.py``, ``models/ordinal/_laplace.py``,
``models/power/_lmm.py``).
"""
