"""`assay import promptfoo CONFIG -o SUITE`: convert another tool's config into an assay suite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

__all__ = ["command"]


@click.group("import")
def command() -> None:
    """Convert another eval tool's config into an assay suite.

    AgentV v4 eval files need no import: `assay run` reads them directly.
    """


@command.command("promptfoo")
@click.argument("config", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="Where to write the suite (e.g. suite.eval.yaml).",
)
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
def promptfoo(config: Path, output: Path, force: bool) -> None:
    """Convert a promptfoo config (promptfooconfig.yaml) into an assay suite.

    Providers become named targets (the first is the suite's target; pick another with
    `assay run --target NAME`), each prompt × test becomes a case, and assertions become
    graders. Every item left out or approximated is one warning with its line and what to
    do, and the summary counts them. A JavaScript/TypeScript config, or one none of whose
    assertions converts, exits with code 2.
    """
    from assay.cli._output import print_warnings
    from assay.config._datasets import display_path
    from assay.errors import UsageError
    from assay.interop.promptfoo import convert_promptfoo

    if output.exists() and not force:
        raise UsageError(f"{output} already exists; pass --force to overwrite it")
    conversion = convert_promptfoo(config, display=display_path(config), output_dir=output.parent)
    print_warnings(conversion.warnings)
    text = _dump(conversion.suite)
    try:
        output.write_text(text, encoding="utf-8")
        for name, helper in conversion.files.items():  # the script wrappers its commands run
            (output.parent / name).parent.mkdir(parents=True, exist_ok=True)
            (output.parent / name).write_text(helper, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc}") from None
    cases = len(conversion.suite["tests"])
    helpers = sorted({str(Path(name).parent) for name in conversion.files})
    beside = f" and {', '.join(f'{h}/' for h in helpers)}" if helpers else ""
    counts = f"{conversion.left_out} item{'s' * (conversion.left_out != 1)} left out"
    counts += f", {conversion.approximated} approximated"
    if conversion.warnings:
        counts += " (each listed above)"
    click.echo(
        f"wrote {output}{beside}: suite '{conversion.suite['name']}', "
        f"{cases} test{'s' * (cases != 1)}; {counts}; check it with `assay validate {output}`"
    )


def _dump(suite: dict[str, Any]) -> str:
    """Readable YAML: keys in writing order, block style, multi-line text as `|` blocks."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, text)
    header = "# Converted from promptfoo by `assay import promptfoo`.\n"
    body = yaml.dump(
        suite,
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
        default_flow_style=False,
    )
    return header + body
