"""`assay baseline`: pin, show and unpin the run each suite is measured against.

A suite's pinned baseline is what `regression: {strategy: pinned}`, `assay run --baseline
pinned` and `assay compare baseline ...` compare with (SPEC §6).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from assay.cli._store import db_option, open_cli_store

if TYPE_CHECKING:
    from assay.results import JSON, RunResult
    from assay.store import Baseline

__all__ = ["command"]


@click.group("baseline")
def command() -> None:
    """Pinned baselines: the run each suite's regressions are measured against."""


@command.command("pin")
@click.argument("run_ref", metavar="RUN")
@click.option("--suite", metavar="SUITE", help="Resolve `latest`/`latest~N` within this suite.")
@db_option
def pin_command(run_ref: str, suite: str | None, db: str | None) -> None:
    """Pin a completed run as the baseline of its suite, replacing any earlier pin.

    RUN is a run id, a unique id prefix, `latest` or `latest~N` (as for `assay compare`).
    """
    from assay.api import is_file_ref, resolve_run_ref
    from assay.errors import UsageError
    from assay.results import now_iso

    if is_file_ref(run_ref):
        raise UsageError(
            f"{run_ref}: a baseline must be a stored run; store the file first with "
            f"`assay runs import {run_ref}`, then pin its run id"
        )
    with open_cli_store(db) as store:
        run = store.get_run(resolve_run_ref(store, run_ref, suite=suite))
        previous = store.get_baseline(run.suite)
        pinned = store.pin_baseline(run.id, pinned_at=now_iso(), suite=suite)
    click.echo(f"pinned run {pinned.run_id} as the baseline of suite '{pinned.suite}'")
    if previous is None:
        return
    if previous.run_id == pinned.run_id:
        click.echo(f"it already was (pinned {previous.pinned_at}); pinned again now")
    else:
        click.echo(f"replaced run {previous.run_id} (pinned {previous.pinned_at})")


@command.command("show")
@click.argument("suite", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the baselines as JSON.")
@db_option
def show_command(suite: str | None, as_json: bool, db: str | None) -> None:
    """Show the pinned baseline of SUITE, or of every suite.

    Exit code 2 when SUITE has no pinned baseline.
    """
    from assay.errors import UsageError

    with open_cli_store(db) as store:
        if suite is None:
            pinned = store.list_baselines()
        else:
            found = store.get_baseline(suite)
            if found is None:
                raise UsageError(
                    f"suite '{suite}' has no pinned baseline in {store.describe()}; "
                    "pin one with `assay baseline pin RUN`"
                )
            pinned = [found]
        rows = [(baseline, store.get_run(baseline.run_id)) for baseline in pinned]
    if as_json:
        documents = [_document(baseline, run) for baseline, run in rows]
        click.echo(json.dumps(documents if suite is None else documents[0]))
    else:
        _print_table(rows)


@command.command("unpin")
@click.argument("suite")
@db_option
def unpin_command(suite: str, db: str | None) -> None:
    """Remove the pinned baseline of SUITE (the run itself stays stored)."""
    with open_cli_store(db) as store:
        removed = store.unpin_baseline(suite)
    click.echo(
        f"unpinned run {removed.run_id}, the baseline of suite '{removed.suite}' since "
        f"{removed.pinned_at}; suite '{removed.suite}' has no pinned baseline now"
    )


def _document(baseline: Baseline, run: RunResult) -> dict[str, JSON]:
    """One pinned baseline with its run (without case results), for `--json`."""
    return {
        "suite": baseline.suite,
        "run_id": baseline.run_id,
        "pinned_at": baseline.pinned_at,
        "run": run.model_dump(mode="json", exclude={"results"}),
    }


def _print_table(rows: list[tuple[Baseline, RunResult]]) -> None:
    from rich.table import Table

    from assay.cli._output import stdout_console

    console = stdout_console()
    if not rows:
        console.print("no baselines pinned (pin one with `assay baseline pin RUN`)")
        return
    table = Table(box=None, pad_edge=False)
    numeric = ("cases", "pass rate", "score")
    for column in ("suite", "run", "target", "pinned at", *numeric):
        table.add_column(column, justify="right" if column in numeric else "left")
    for baseline, run in rows:
        table.add_row(
            baseline.suite,
            run.id,
            run.target,
            baseline.pinned_at[:19].replace("T", " "),
            str(run.summary.total),
            f"{run.summary.cases_pass_rate_pct:.1f}%",
            f"{run.summary.weighted_metrics_score_pct:.1f}%",
        )
    console.print(table)
