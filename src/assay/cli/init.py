"""`assay init`: scaffold a project a newcomer can run at once.

The files come from package data (`templates/init/`, each with a `.tmpl` suffix so that
neither the type checker nor the pytest plugin mistakes a template for live code or a suite).
The plain suite runs offline immediately; the judged one needs the judge set in `assay.yaml`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

import click

__all__ = ["GITIGNORE_ENTRIES", "command", "invocation", "scaffold"]

_TEMPLATES = "templates/init"
_SUFFIX = ".tmpl"
GITIGNORE_ENTRIES = (".assay/",)
"""Lines `assay init` makes sure `.gitignore` has (run store and response cache)."""


def _templates() -> list[tuple[str, Traversable]]:
    """(relative path, template) of every file to write, `gitignore` excluded, sorted."""
    found: list[tuple[str, Traversable]] = []

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif child.name.endswith(_SUFFIX) and child.name != f"gitignore{_SUFFIX}":
                found.append((prefix + child.name.removesuffix(_SUFFIX), child))

    walk(resources.files("assay.cli").joinpath(_TEMPLATES), "")
    return sorted(found, key=lambda entry: entry[0])


def _gitignore_update(path: Path) -> str | None:
    """The new `.gitignore` text with the missing entries appended, or None if none miss."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [e for e in GITIGNORE_ENTRIES if e not in present and e.rstrip("/") not in present]
    if not missing:
        return None
    lead = "" if not text or text.endswith("\n") else "\n"
    header = "# assay: run store and response cache\n"
    return text + lead + header + "".join(f"{entry}\n" for entry in missing)


def scaffold(directory: Path, *, force: bool = False) -> list[Path]:
    """Write the starter project into `directory`; the files written, `.gitignore` last.

    Raises:
        UsageError: a file exists and `force` is false (every such file is named).
    """
    from assay.errors import UsageError

    templates = _templates()
    existing = [rel for rel, _ in templates if (directory / rel).exists()]
    if existing and not force:
        listed = "\n".join(f"  {directory / rel}" for rel in existing)
        raise UsageError(
            f"not overwriting existing files:\n{listed}\n"
            "Move them away, init into another directory, or pass --force to overwrite them."
        )
    written: list[Path] = []
    for rel, template in templates:
        target = directory / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(template.read_text(encoding="utf-8"), encoding="utf-8")
        written.append(target)
    gitignore = directory / ".gitignore"
    updated = _gitignore_update(gitignore)
    if updated is not None:
        gitignore.write_text(updated, encoding="utf-8")
        written.append(gitignore)
    return written


def invocation() -> str:
    """How to run this assay again from a shell, as the next steps print it: `assay` when
    that is the executable on PATH; else this executable's absolute path (a virtualenv's
    assay, as `make demo` leaves it, is not on PATH until the virtualenv is activated, and
    the steps `cd` first); else `python -m assay` with this interpreter."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.stem == "assay" and script.suffix in ("", ".exe"):
        found = shutil.which("assay")
        if found is not None and _same_file(Path(found), script):
            return "assay"
        if script.is_file():
            return shlex.quote(os.path.abspath(script))
    return f"{shlex.quote(sys.executable)} -m assay"


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
def command(directory: Path, force: bool) -> None:
    """Create a starter project: assay.yaml, an agent stub, an offline suite and a judged one.

    Existing files are never overwritten without --force; .gitignore gets the `.assay/`
    entry appended if it lacks it.
    """
    written = scaffold(directory, force=force)
    for path in written:
        click.echo(f"created {path}" if path.name != ".gitignore" else f"updated {path}")
    here = directory.resolve() == Path.cwd().resolve()
    steps = [] if here else [(f"cd {shlex.quote(str(directory))}", "")]
    assay = invocation()
    steps += [
        (f"{assay} run evals/support.eval.yaml", "runs offline, no API key needed"),
        (f"{assay} runs list", "the stored runs"),
        (f"{assay} serve", "browse them in the studio: http://127.0.0.1:8321"),
        ("export OPENAI_API_KEY=...", "or set judge.base_url in assay.yaml"),
        (f"{assay} run evals/support-judged.eval.yaml", "graded by the LLM judge"),
    ]
    width = max(len(step) for step, _ in steps) + 2
    click.echo("\nNext steps:")
    for step, why in steps:
        click.echo(f"  {step:<{width}}# {why}" if why else f"  {step}")
    click.echo("Then replace agent.py with a call into your application and add tests to evals/.")
