"""Report files for `assay run --report FORMAT:PATH` and `assay report`: parse the requests,
render stored runs to them (case results streamed from the store), append the Markdown to
`$GITHUB_STEP_SUMMARY` in GitHub Actions.

A report is written after its runs are stored, so a report that cannot be written costs the
report only: the message says how to render it again from the store.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from assay.errors import PluginError, UsageError

if TYPE_CHECKING:
    from assay.results import CaseResult, RunResult
    from assay.store import Store

__all__ = [
    "STEP_SUMMARY_ENV",
    "ReportRequest",
    "append_step_summary",
    "check_format",
    "os_reason",
    "parse_reports",
    "write_report",
    "write_report_file",
    "write_reports",
]

STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
"""Set by GitHub Actions to a file whose Markdown is shown on the job's summary page."""


@dataclass(frozen=True)
class ReportRequest:
    """One `--report FORMAT:PATH`."""

    format: str
    path: Path


def check_format(name: str, where: str) -> str:
    """`name` when it is a report format (built-in or a plugin's); a usage error naming the
    formats otherwise.

    Raises:
        UsageError: `name` is no report format.
        PluginError: a reporter plugin cannot be loaded.
    """
    from assay._strict_model import suggest
    from assay.report import BUILTIN_FORMATS, report_formats

    if name in BUILTIN_FORMATS:
        return name  # no plugin is loaded for a built-in format
    formats = report_formats()
    if name not in formats:
        hint, choices = suggest(name, set(formats)), ", ".join(formats)
        if hint:
            raise UsageError(f"{where}: unknown report format '{name}'.{hint} Use one of {choices}")
        raise UsageError(f"{where}: unknown report format '{name}'; use one of {choices}")
    return name


def parse_reports(values: Sequence[str]) -> list[ReportRequest]:
    """The `--report` values as requests, checked before any case runs.

    Raises:
        UsageError: A value is not FORMAT:PATH, names an unknown format, or two values
            name the same file.
    """
    requests: list[ReportRequest] = []
    seen: dict[Path, str] = {}
    for value in values:
        name, colon, path = value.partition(":")
        where = f"--report {value}"
        if not colon or not name or not path:
            from assay.report import report_formats

            raise UsageError(
                f"{where}: give FORMAT:PATH (FORMAT one of {', '.join(report_formats())}), "
                "e.g. --report junit:reports/assay.xml"
            )
        request = ReportRequest(check_format(name, where), Path(path))
        key = request.path.resolve()
        if key in seen:
            raise UsageError(f"{where}: {path} is already the {seen[key]} report's file")
        seen[key] = name
        requests.append(request)
    return requests


@contextlib.contextmanager
def _not_passed(store: Store, run_id: str) -> Iterator[Iterator[CaseResult]]:
    """The run's cases the Markdown lists, released as soon as the report stops reading."""
    from assay.report import MARKDOWN_VERDICTS

    cases = store.iter_case_results(run_id, verdicts=MARKDOWN_VERDICTS)
    try:
        yield cases
    finally:
        close = getattr(cases, "close", None)
        if close is not None:
            close()  # a generator holding a database connection until it is exhausted


def write_report(out: TextIO, fmt: str, runs: Sequence[RunResult], store: Store) -> None:
    """Render stored runs in one format: Markdown sections one after another, one JUnit
    document with a `<testsuite>` each, one HTML page with a section each, the §8 JSON
    document (a list for several runs), or what a plugin's format writes."""
    from assay.api import run_reviews
    from assay.report import (
        BUILTIN_FORMATS,
        markdown_chunks,
        render_json,
        render_json_many,
        write_html,
        write_junit,
        write_plugin_report,
    )

    if fmt not in BUILTIN_FORMATS:
        sources = [(run, functools.partial(store.iter_case_results, run.id)) for run in runs]
        write_plugin_report(fmt, out, sources)
    elif fmt == "md":
        for run in runs:
            reviewed = run_reviews(store, run.id, unreviewed=False)
            summary = reviewed.summary if reviewed is not None else None
            with _not_passed(store, run.id) as cases:
                out.writelines(markdown_chunks(run, cases, reviews=summary))
    elif fmt == "junit":
        write_junit(
            out, [(run, functools.partial(store.iter_case_results, run.id)) for run in runs]
        )
    elif fmt == "html":
        sources = [(run, functools.partial(store.iter_case_results, run.id)) for run in runs]
        documents = {run.id: run_reviews(store, run.id, unreviewed=False) for run in runs}
        write_html(out, sources, {i: r.document() for i, r in documents.items() if r is not None})
    else:
        full = [r.model_copy(update={"results": list(store.iter_case_results(r.id))}) for r in runs]
        out.write((render_json(full[0]) if len(full) == 1 else render_json_many(full)) + "\n")


def write_report_file(path: Path, fmt: str, runs: Sequence[RunResult], store: Store) -> None:
    """Write a report file whole or not at all: rendered beside it, then moved into place
    (a CI step never uploads half a report). Missing parent directories are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as out:
            write_report(out, fmt, runs, store)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def os_reason(exc: OSError) -> str:
    """ "Not a directory: blocker" rather than "[Errno 20] …"."""
    if exc.strerror and exc.filename is not None:
        return f"{exc.strerror}: {exc.filename}"
    return exc.strerror or str(exc)


def _again(fmt: str, runs: Sequence[RunResult], path: Path | None) -> str:
    target = f" -o {path}" if path is not None else ""
    return f"assay report {' '.join(r.id for r in runs)} --format {fmt}{target}"


def append_step_summary(runs: Sequence[RunResult], store: Store) -> None:
    """In GitHub Actions, append the runs' Markdown to the job summary; elsewhere nothing.

    The summary is a convenience: when it cannot be written the command says so and goes on.
    """
    summary = os.environ.get(STEP_SUMMARY_ENV)
    if not summary or not runs:
        return
    try:
        with Path(summary).open("a", encoding="utf-8", newline="\n") as out:
            write_report(out, "md", runs, store)
    except OSError as exc:
        click.echo(
            f"warning: could not append the Markdown report to ${STEP_SUMMARY_ENV} "
            f"({summary}): {os_reason(exc)}; `{_again('md', runs, None)}` prints it",
            err=True,
        )


def write_reports(
    requests: Sequence[ReportRequest], runs: Sequence[RunResult], store: Store
) -> bool:
    """Write every requested report of the stored runs (and the job summary in GitHub
    Actions); say on stderr what was written. False when a report could not be written."""
    ok = True
    for request in requests:
        try:
            write_report_file(request.path, request.format, runs, store)
        except (OSError, PluginError) as exc:
            ok = False
            reason = os_reason(exc) if isinstance(exc, OSError) else str(exc)
            click.echo(
                f"error: could not write the {request.format} report to {request.path}: "
                f"{reason}. The runs are stored; write it again with "
                f"`{_again(request.format, runs, request.path)}`",
                err=True,
            )
        else:
            click.echo(f"wrote the {request.format} report to {request.path}", err=True)
    append_step_summary(runs, store)
    return ok
