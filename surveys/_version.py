"""The installed version of empathic-longitudinal, looked up once for surveys and longitudinal.

``surveys``, ``models`` and ``longitudinal`` ship as one distribution. ``longitudinal`` reads
this value (``surveys.__version__``, ``longitudinal.__version__``); ``models``, a leaf package
that does not import ``surveys``, has the same lookup in ``models/_version.py``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("empathic-longitudinal")
except PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
