"""The `assay` command line: one module per command."""

from assay.cli._main import app, console, main

__all__ = ["app", "console", "main"]
