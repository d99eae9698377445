"""The installed version of empathic-longitudinal, recorded in every model's metadata.

``models`` and ``surveys`` are leaf packages that do not import each other, so each looks the
version up once (``surveys/_version.py`` is the other; ``longitudinal`` uses that one).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("empathic-longitudinal")
except PackageNotFoundError:  # a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
