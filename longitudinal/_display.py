"""How the package's result objects show themselves: the shared result protocol.

A result class names itself in ``_title`` and lists its main tables in ``_parts``; the mixin
(:class:`_empathic_base.results.Result`) gives it a one-line ``repr``, ``summary()`` (text that
renders as tables in a notebook), ``to_frame()`` and ``to_dict()``. Dataclasses using it are
declared with ``repr=False`` so that the mixin's repr is kept.
"""

from __future__ import annotations

from _empathic_base.results import DECIMALS, Result, Summary

__all__ = ["DECIMALS", "Result", "Summary"]
