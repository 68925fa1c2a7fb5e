"""`assay run`: run suites against their targets, store the runs, report, exit 0/1."""

from __future__ import annotations

import asyncio
import os

import click

__all__ = ["PIPE_WIDTH", "command"]

PIPE_WIDTH = 120


@click.command("run")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    help="Case pass threshold (0–1); wins over every config file and every test.",
)
@click.option("--concurrency", type=click.IntRange(1, 4096), help="Cases run at once.")
@click.option("--target", "target", help="Run against this named target instead of the suite's.")
@click.option("--db", help="Store runs here (a SQLite path or database URL).")
@click.option("--json", "as_json", is_flag=True, help="Print the run result (SPEC §8) as JSON.")
def command(
    paths: tuple[str, ...],
    threshold: float | None,
    concurrency: int | None,
    target: str | None,
    db: str | None,
    as_json: bool,
) -> int:
    """Run eval suites (files, or directories of *.eval.yaml) and report the results.

    Exit code 0 when every run passes, 1 when any fails, 2 for a configuration error.
    """
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
    )

    from assay.api import run_plan
    from assay.cli._output import print_warnings
    from assay.config import discover_suite_files, load_project, load_suite
    from assay.report import render_json, render_json_many, render_run
    from assay.results import CaseResult, RunResult
    from assay.runner import RunOptions, plan_run
    from assay.store import open_store

    project = load_project()
    print_warnings(project.warnings)
    suites = [load_suite(path) for path in discover_suite_files(paths)]
    for loaded in suites:
        print_warnings(loaded.warnings)
    options = RunOptions(threshold=threshold, concurrency=concurrency, target=target)
    plans = [plan_run(loaded, project, options) for loaded in suites]  # every error before any run
    out = Console(highlight=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out.width = PIPE_WIDTH  # CI logs and files are not 80 columns wide
    err = Console(stderr=True, highlight=False)
    store = open_store(db or project.store)
    runs: list[RunResult] = []
    try:
        for plan in plans:
            with Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
                transient=True,
                disable=not err.is_terminal,
            ) as progress:
                task = progress.add_task(plan.suite_name, total=len(plan.cases))

                def advance(_: CaseResult, task_id: TaskID = task) -> None:
                    progress.advance(task_id)

                run = asyncio.run(run_plan(plan, store, on_case=advance))
            runs.append(run)
            if not as_json:
                render_run(out, run, store.iter_case_results(run.id))
                out.print(f"  stored in {store.describe()}", style="dim")
        if as_json:
            full = [
                r.model_copy(update={"results": list(store.iter_case_results(r.id))}) for r in runs
            ]
            click.echo(render_json(full[0]) if len(full) == 1 else render_json_many(full))
    finally:
        store.close()
    return 0 if all(r.summary.passed for r in runs) else 1
