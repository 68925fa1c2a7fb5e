"""`assay schema`: print the JSON Schema of the suite format."""

from __future__ import annotations

import click

__all__ = ["command"]


@click.command("schema")
def command() -> None:
    """Print the JSON Schema of suite files (generated from the models that validate them),
    the grader and target types of installed plugins included."""
    from assay.config import suite_json_schema_text
    from assay.config._plugins import plugin_schema_problems

    for problem in plugin_schema_problems():
        click.echo(f"warning: {problem}", err=True)
    click.echo(suite_json_schema_text(), nl=False)
