"""The installed assay version, stored with every run."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("assay")
except PackageNotFoundError:  # pragma: no cover — running from a source tree without install
    __version__ = "0.0.0+unknown"
