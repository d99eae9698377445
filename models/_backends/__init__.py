"""Engine back ends of :mod:`models`, each imported lazily.

PyMC model construction and NUTS dispatch for the Bayesian models; mixedlm for the linear mixed
models.
"""
