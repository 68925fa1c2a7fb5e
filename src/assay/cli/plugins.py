"""`assay plugins`: list the graders, targets, providers and report formats installed packages
add, each loaded and checked."""

from __future__ import annotations

import importlib
import json
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from assay._plugins import PluginKind

__all__ = ["command"]

Row = dict[str, str | bool | None]


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print the plugins as a JSON list.")
def command(as_json: bool) -> None:
    """List installed plugins: kind, type name, package, version and what the entry point
    loads (entry point groups assay.graders, assay.targets, assay.providers, assay.reporters).

    Every plugin is imported and checked as a run would; a plugin that cannot be used is
    listed with its error (on stderr too), and the exit code is then 2.
    """
    from assay._plugins import GROUPS
    from assay.errors import PluginError

    rows = [row for kind in GROUPS for row in _rows(kind)]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    elif not rows:
        groups = ", ".join(GROUPS.values())
        click.echo(f"no plugins installed (entry point groups {groups}; see docs/plugins.md)")
    else:
        _print_table(rows)
    broken = [row for row in rows if row["error"] is not None]
    if broken:
        raise PluginError("\nerror: ".join(str(row["error"]) for row in broken))


def _rows(kind: PluginKind) -> list[Row]:
    """The installed plugins of `kind`, each checked by its registry when there is one."""
    from assay._plugins import (
        GROUPS,
        REGISTRIES,
        PluginEntry,
        PluginSpec,
        checked_plugins,
        plugin_entries,
    )
    from assay.errors import PluginError

    checked: list[tuple[PluginEntry, PluginError | None]]
    spec_path = REGISTRIES.get(kind)
    if spec_path is None:  # no registry takes this kind yet: listed, not loaded
        checked = [(entry, None) for entry in plugin_entries(kind)]
    else:
        module, _, name = spec_path.partition(":")
        spec = getattr(importlib.import_module(module), name)
        assert isinstance(spec, PluginSpec)
        checked = [(entry, error) for entry, _, error in checked_plugins(spec)]
    return [
        {
            "kind": entry.kind,
            "name": entry.name,
            "package": entry.package,
            "version": entry.version,
            "object": entry.value,
            "group": GROUPS[entry.kind],
            "checked": spec_path is not None,
            "error": str(error) if error is not None else None,
        }
        for entry, error in checked
    ]


def _status(row: Row) -> str:
    if row["error"] is not None:
        return "error"
    return "ok" if row["checked"] else "unchecked"


def _print_table(rows: list[Row]) -> None:
    columns = ("kind", "name", "package", "version", "object")
    cells = [[*columns, "status"]]
    cells += [[*(str(row[c]) for c in columns), _status(row)] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))]
    for line in cells:
        padded = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        click.echo("  ".join(padded).rstrip())
