"""`assay validate`: check suite files without running anything."""

from __future__ import annotations

import click

__all__ = ["command"]


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--judge-model",
    metavar="MODEL",
    help="The judge `assay run --judge-model` would use (a suite needing one is valid).",
)
def command(paths: tuple[str, ...], judge_model: str | None) -> None:
    """Check suite files (and directories of *.eval.yaml) without running them.

    Refuses what `assay run` refuses before its first case, with the same message: the
    suite, its target (a python target's module is imported and its function looked up, never
    called; a replay file is read; a command's executable is looked for) and its judge. An
    API key variable that is not set is a warning here (run stops on it). Every problem is
    reported with its file, line and YAML path; the exit code is 2 if any.
    """
    from assay.cli._output import print_warnings
    from assay.config import discover_suite_files, load_project, load_suite
    from assay.errors import ConfigError, ConfigIssue
    from assay.runner import RunOptions, missing_keys, plan_run

    project = load_project()
    print_warnings(project.warnings)
    problems: list[ConfigIssue] = []
    for path in discover_suite_files(paths):
        try:
            loaded = load_suite(path)
            plan = plan_run(loaded, project, RunOptions(judge_model=judge_model))
        except ConfigError as exc:
            problems += exc.issues
            continue
        print_warnings(loaded.warnings)
        for warning in missing_keys(plan):
            click.echo(f"warning: {warning}", err=True)
        n = len(loaded.suite.tests)
        click.echo(f"ok  {loaded.display}: suite '{loaded.suite.name}', {n} test{'s' * (n != 1)}")
    if problems:
        raise ConfigError(problems)
