"""Console helpers shared by commands: stdout/stderr consoles and warning printing."""

from __future__ import annotations

from collections.abc import Iterable

import click

from assay.errors import ConfigIssue

__all__ = ["print_warnings"]


def print_warnings(warnings: Iterable[ConfigIssue]) -> None:
    """Print deprecation and other warnings on stderr, one located line each."""
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
