"""`assay plugins`: list the graders, targets, providers and report formats installed packages
add, each loaded and checked."""

from __future__ import annotations

import importlib
import json

import click

__all__ = ["command"]


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print the plugins as a JSON list.")
def command(as_json: bool) -> None:
    """List installed plugins: kind, type name, package, version and what the entry point
    loads (entry point groups assay.graders, assay.targets, assay.providers, assay.reporters).

    Every plugin is imported and checked as a run would; a plugin that cannot be used is
    listed with its error, and the exit code is then 2.
    """
    from assay._plugins import (
        GROUPS,
        REGISTRIES,
        PluginEntry,
        PluginSpec,
        checked_plugins,
        plugin_entries,
    )
    from assay.errors import PluginError

    rows: list[dict[str, str | None]] = []
    for kind in GROUPS:
        checked: list[tuple[PluginEntry, PluginError | None]]
        spec_path = REGISTRIES.get(kind)
        if spec_path is None:  # no registry for this kind yet: listed, not loaded
            checked = [(entry, None) for entry in plugin_entries(kind)]
        else:
            module, _, name = spec_path.partition(":")
            spec = getattr(importlib.import_module(module), name)
            assert isinstance(spec, PluginSpec)
            checked = [(entry, error) for entry, _, error in checked_plugins(spec)]
        for entry, error in checked:
            rows.append(
                {
                    "kind": entry.kind,
                    "name": entry.name,
                    "package": entry.package,
                    "version": entry.version,
                    "object": entry.value,
                    "group": GROUPS[entry.kind],
                    "error": str(error) if error is not None else None,
                }
            )
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


def _print_table(rows: list[dict[str, str | None]]) -> None:
    columns = ("kind", "name", "package", "version", "object")
    cells = [[*columns, "status"]] + [
        [*(str(row[c]) for c in columns), "ok" if row["error"] is None else "error"] for row in rows
    ]
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))]
    for line in cells:
        click.echo(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        )
