"""Generate docs/cli.md from the commands' own --help text (run by `make docs`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from assay.cli import app

OUT = Path(__file__).resolve().parents[1] / "docs" / "cli.md"

INTRO = """# CLI reference

Generated from `assay --help` by `make docs`; a test fails when it is stale.

Exit codes: `0` every run passed, `1` a run failed (or a regression was detected),
`2` usage or configuration error (a located message, no traceback), `3` internal error
(a traceback — please report it), `130` interrupted (results finished so far are kept).
"""


def _help(command: click.Command, name: str, parent: click.Context | None) -> str:
    ctx = click.Context(
        command, info_name=name, parent=parent, terminal_width=100, max_content_width=100
    )
    return command.get_help(ctx)


def render() -> str:
    """The whole CLI reference page."""
    # The group's own settings (`-h` as well as `--help`), as `assay` applies them; without
    # them the page depended on whether a command had already run in this process.
    root = click.Context(
        app, info_name="assay", terminal_width=100, max_content_width=100, **app.context_settings
    )
    parts = [INTRO, "## `assay`\n", "```text", app.get_help(root), "```\n"]
    for name in app.list_commands(root):
        command = app.get_command(root, name)
        assert command is not None
        parts += [f"## `assay {name}`\n", "```text", _help(command, name, root), "```\n"]
    return "\n".join(parts)


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {OUT}\n")
