"""`assay runs`: list, show, export, import and delete stored runs, and a suite's trend."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from assay.cli._store import db_option, open_cli_store

if TYPE_CHECKING:
    from assay.comparison import ReviewSummary
    from assay.results import RunResult

__all__ = ["command"]

_STATUSES = ["running", "completed", "interrupted", "failed"]
"""How a run ended (or that it has not): `failed` is a run that aborted on an error."""
_VERDICTS = {"passed": True, "not-passed": False}
"""`--status` values that select completed runs by their verdict: `not-passed` completed and
failed its thresholds (or a critical regression), unlike `failed`, which aborted."""


@click.group("runs")
def command() -> None:
    """Stored runs: list, show, trend, export, import, delete."""


@command.command("list")
@click.option("--suite", help="Only runs of this suite.")
@click.option("--target", help="Only runs against this target.")
@click.option(
    "--status",
    type=click.Choice([*_STATUSES, *_VERDICTS]),
    help="Only runs with this status; `passed` and `not-passed` are the completed runs that "
    "passed or did not pass their thresholds (`failed` runs aborted).",
)
@click.option(
    "--since",
    metavar="DATE",
    help="Started at or after (ISO 8601, e.g. 2026-11-01 or 2026-11-01T14:30+02:00; UTC "
    "without an offset).",
)
@click.option("--until", metavar="DATE", help="Started before (ISO 8601, as --since).")
@click.option("--limit", type=click.IntRange(1, 100_000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as a JSON list.")
@db_option
def list_command(
    suite: str | None,
    target: str | None,
    status: str | None,
    since: str | None,
    until: str | None,
    limit: int,
    as_json: bool,
    db: str | None,
) -> None:
    """List stored runs, newest first.

    The status column says how a run ended: `completed`, `interrupted` (Ctrl-C), `failed`
    (aborted on an error) or `running`; the passed column gives a completed run's verdict.
    """
    from rich.table import Table

    from assay.api import run_time_bound
    from assay.cli._output import stdout_console

    verdict = _VERDICTS.get(status or "")
    since = None if since is None else run_time_bound(since, "--since")
    until = None if until is None else run_time_bound(until, "--until")
    with open_cli_store(db) as store:
        found = store.list_runs(
            suite=suite,
            target=target,
            # click.Choice gives one of _STATUSES, or a verdict of completed runs
            status="completed" if verdict is not None else status,  # type: ignore[arg-type]
            since=since,
            until=until,
            limit=limit,
            passed=verdict,
        )
    if as_json:
        listed = [
            {**r.model_dump(mode="json", exclude={"results"}), "passed": _passed(r)} for r in found
        ]
        click.echo(json.dumps(listed))
        return
    console = stdout_console()
    if not found:
        console.print("no runs match")
        return
    table = Table(box=None, pad_edge=False)
    columns = ("run", "suite", "target", "status", "passed", "started", "cases", "pass rate")
    for column in (*columns, "score"):
        table.add_column(column, justify="right" if column in ("cases", "pass rate") else "left")
    for run in found:
        s = run.summary
        passed = _passed(run)
        table.add_row(
            run.id,
            run.suite,
            run.target,
            run.status,
            "—" if passed is None else ("yes" if passed else "no"),
            run.started_at[:19].replace("T", " "),
            str(s.total),
            f"{s.cases_pass_rate_pct:.1f}%",
            f"{s.weighted_metrics_score_pct:.1f}%",
        )
    console.print(table)


def _passed(run: RunResult) -> bool | None:
    """A completed run's verdict; None for a run that did not complete (it has none)."""
    return run.passed if run.status == "completed" else None


@command.command("show")
@click.argument("run_id", metavar="RUN")
@click.option("--json", "as_json", is_flag=True, help="Print the run result (SPEC §8).")
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Under the case table, list every case's grader results and expected outcomes.",
)
@db_option
def show_command(run_id: str, as_json: bool, verbose: bool, db: str | None) -> None:
    """Show one run (an id, a unique prefix of the id or of its random part, `latest` or
    `latest~N`)."""
    from assay.api import resolve_run_ref, run_reviews, suite_order
    from assay.cli._output import stdout_console
    from assay.report import listed_verdicts, render_json, render_run

    with open_cli_store(db) as store:
        run = store.get_run(resolve_run_ref(store, run_id))
        if as_json:
            full = run.model_copy(update={"results": list(store.iter_case_results(run.id))})
            click.echo(render_json(full))
            return
        listed = listed_verdicts(run.summary)
        breakdown = store.iter_case_results(run.id) if verbose else None
        render_run(
            stdout_console(),
            run,
            store.iter_case_results(run.id, verdicts=listed),
            breakdown=breakdown,
            order=suite_order(store, run.id),
        )
        reviewed = run_reviews(store, run.id, unreviewed=False)
        if reviewed is not None:
            stdout_console().print(_reviewed_line(reviewed.summary))


def _reviewed_line(summary: ReviewSummary) -> str:
    """How people judged the run, beside the machine (SPEC §6)."""
    rate = summary.reviewed_pass_rate
    shown = "—" if rate is None else f"{rate * 100:.1f}%"
    return (
        f"  reviewed {summary.reviewed} of {summary.cases} cases: {summary.human_passed} passed "
        f"by people, the machine agreed on {summary.agreed}; reviewed pass rate {shown} "
        "(reviewed cases by the person's verdict, the others by the machine's)"
    )


@command.command("trend")
@click.argument("suite")
@click.option(
    "--last",
    type=click.IntRange(1, 100_000),
    default=20,
    show_default=True,
    metavar="N",
    help="How many of the suite's newest completed runs to show.",
)
@click.option("--target", help="Only runs against this target.")
@click.option("--json", "as_json", is_flag=True, help="Print the trend as JSON.")
@db_option
def trend_command(suite: str, last: int, target: str | None, as_json: bool, db: str | None) -> None:
    """How SUITE's pass rate and mean score moved over its last N completed runs.

    Lists the runs oldest first, then the least-squares slope of each series in points per
    run and a one-line reading ("pass rate falling 2.1 points per run over 12 runs").
    """
    from assay.cli._output import stdout_console
    from assay.comparison import build_trend
    from assay.report import render_trend

    with open_cli_store(db) as store:
        newest_first = store.list_runs(suite=suite, target=target, status="completed", limit=last)
    trend = build_trend(suite, newest_first[::-1], target=target)
    if as_json:
        click.echo(trend.model_dump_json(indent=2))
    else:
        render_trend(stdout_console(), trend)


@command.command("export")
@click.argument("run_id", metavar="RUN")
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write here instead of stdout."
)
@db_option
def export_command(run_id: str, output: str | None, db: str | None) -> None:
    """Export a run with its snapshot and every case result as JSONL (`runs import` reads it)."""
    from assay.api import write_export

    with open_cli_store(db) as store:
        if output is None:
            write_export(store, run_id, sys.stdout)
            return
        with Path(output).open("w", encoding="utf-8") as out:
            run = write_export(store, run_id, out)
        click.echo(f"exported run {run.id} to {output}", err=True)


@command.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@db_option
def import_command(path: str, db: str | None) -> None:
    """Import a run exported by `runs export` (all or nothing; the id must be new here)."""
    from assay.api import read_export

    run, snapshot = read_export(Path(path))
    with open_cli_store(db) as store:
        store.create_run(run, snapshot)
        click.echo(f"imported run {run.id} ({len(run.results)} cases) into {store.describe()}")


@command.command("delete")
@click.argument("run_id", metavar="RUN")
@click.option("-y", "--yes", is_flag=True, help="Delete without asking.")
@click.option(
    "--force",
    is_flag=True,
    help="Delete the run even if it is running (for a run whose process crashed or was killed).",
)
@db_option
def delete_command(run_id: str, yes: bool, force: bool, db: str | None) -> None:
    """Delete a run and its case results (and its pin, if it is a suite's baseline).

    A running run is refused unless --force: its process is still storing results.
    """
    from assay.errors import UsageError

    with open_cli_store(db) as store:
        run = store.get_run(run_id)
        if run.status == "running" and not force:
            raise UsageError(
                f"run {run.id} is running, so it was not deleted: its process is still storing "
                "results. Wait for it to finish, or, if that process is gone (crashed or "
                "killed), pass --force"
            )
        pinned = store.get_baseline(run.suite)
        # The store drops the pin with the run, which changes what later runs are measured
        # against: say so in the prompt and in the output.
        was_baseline = pinned is not None and pinned.run_id == run.id
        if not yes:
            if not sys.stdin.isatty():
                raise UsageError(f"not deleting run {run.id} without a prompt: pass --yes")
            pin = f", the pinned baseline of suite '{run.suite}'" if was_baseline else ""
            click.confirm(
                f"delete run {run.id} ({run.suite}, {run.summary.total} cases){pin}?", abort=True
            )
        store.delete_run(run.id, force=force)
        if was_baseline:
            click.echo(
                f"deleted run {run.id}: it was the pinned baseline of suite '{run.suite}'; "
                "now none is pinned"
            )
        else:
            click.echo(f"deleted run {run.id}")
