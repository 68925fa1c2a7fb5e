"""`assay schema`: print the JSON Schema of the suite format."""

from __future__ import annotations

import click

__all__ = ["command"]


@click.command("schema")
def command() -> None:
    """Print the JSON Schema of suite files (generated from the models that validate them)."""
    from assay.config import suite_json_schema_text

    click.echo(suite_json_schema_text(), nl=False)
