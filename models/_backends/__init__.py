"""Sampler back ends of :mod:`models`: PyMC model construction and NUTS dispatch (lazy)."""
