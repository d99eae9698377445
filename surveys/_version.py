"""The installed version of empathic-longitudinal, looked up once for its three packages.

``surveys``, ``models`` and ``longitudinal`` ship as one distribution; each exposes this value
(``surveys.__version__``, ``longitudinal.__version__``) and records it in its results' metadata.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("empathic-longitudinal")
except PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
