"""The `assay` command line: one module per command."""

from assay.cli._main import app, main

__all__ = ["app", "main"]
