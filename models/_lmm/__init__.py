"""Engine of :class:`models.lmm.LinearMixedModel`: penalized least squares, optimizer, df."""
