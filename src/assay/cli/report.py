"""`assay report`: render stored runs as Markdown, JUnit XML or JSON."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from assay.store import Store

__all__ = ["command"]


@click.command("report")
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN...")
@click.option(
    "-f",
    "--format",
    "fmt",
    default="md",
    show_default=True,
    metavar="md|junit|json|html|PLUGIN",
    help="md: summary and failures for a pull request or job summary; junit: one testcase "
    "per case for CI test reports; json: the run result (SPEC §8) with every Detail; html: "
    "one self-contained page with a filterable case table (opens offline); or a format an "
    "installed plugin adds (see `assay plugins`).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help="Write here instead of stdout."
)
@click.option("--db", help="The run store (a SQLite path or database URL).")
def command(run_ids: tuple[str, ...], fmt: str, output: str | None, db: str | None) -> None:
    """Render stored runs (ids, unique prefixes, `latest` or `latest~N`) as a report.

    Several runs make one report: Markdown sections one after another, one JUnit document
    with a <testsuite> per run, a JSON list, one HTML page with a section per run. In GitHub
    Actions ($GITHUB_STEP_SUMMARY set) the Markdown is also appended to the job summary. The
    exit code is 0 whatever the runs' verdicts: gate on `assay run`'s.
    """
    from assay.api import resolve_run_ref
    from assay.cli._reports import append_step_summary, check_format, os_reason, write_report
    from assay.cli._reports import write_report_file as write_file
    from assay.errors import UsageError

    check_format(fmt, "--format")
    with _open(db) as store:
        runs = [store.get_run(resolve_run_ref(store, run_id)) for run_id in run_ids]
        if output is None:
            write_report(sys.stdout, fmt, runs, store)
        else:
            try:
                write_file(Path(output), fmt, runs, store)
            except OSError as exc:
                raise UsageError(f"could not write {output}: {os_reason(exc)}") from exc
            click.echo(f"wrote the {fmt} report to {output}", err=True)
        if fmt == "md":
            append_step_summary(runs, store)


def _open(db: str | None) -> contextlib.closing[Store]:
    """The run store, closed when the `with` block ends."""
    from assay.config import project_store
    from assay.store import open_store

    return contextlib.closing(open_store(db, fallback=project_store()))
