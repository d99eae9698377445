"""Longitudinal empathy studies: study directories, synthetic studies, change reports."""

from importlib.metadata import PackageNotFoundError, version

from longitudinal._errors import DataQualityWarning, InvalidParameterError, LongitudinalError

try:
    __version__ = version("empathic-longitudinal")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["DataQualityWarning", "InvalidParameterError", "LongitudinalError", "__version__"]
