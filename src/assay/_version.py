"""The assay version, stored with every run; pyproject.toml reads it from here (hatch).

A literal rather than `importlib.metadata.version("assay")`: that lookup costs ~40 ms of
start-up on every command.
"""

__version__ = "0.1.0"
