"""Console helpers shared by commands: stdout/stderr consoles and warning printing."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import click

from assay.errors import ConfigIssue

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["PIPE_WIDTH", "print_warnings", "stdout_console"]

PIPE_WIDTH = 120
"""Width of output that is not a terminal: CI logs and files are not 80 columns wide."""


def stdout_console() -> Console:
    """The console commands print results on (`COLUMNS` still wins when set)."""
    from rich.console import Console

    out = Console(highlight=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out.width = PIPE_WIDTH
    return out


def print_warnings(warnings: Iterable[ConfigIssue]) -> None:
    """Print deprecation and other warnings on stderr, one located line each."""
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
