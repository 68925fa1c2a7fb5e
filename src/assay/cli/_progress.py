"""Progress of a run on stderr: a live bar on a terminal, plain periodic lines otherwise.

Nothing is ever written to stdout, so `--json` output stays machine-readable.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from assay.results import CaseResult

__all__ = ["PLAIN_EVERY_S", "RunProgress"]

PLAIN_EVERY_S = 10.0
"""Seconds between plain progress lines when stderr is not a terminal."""


class RunProgress:
    """Counts verdicts as cases finish and shows them; use as a context manager."""

    def __init__(
        self,
        console: Console,
        name: str,
        total: int,
        done: int = 0,
        counts: Mapping[str, int] | None = None,
    ) -> None:
        """`done` and `counts` (verdict → cases) are what a resumed run stored before, so that
        the verdicts shown add up to the cases done."""
        self.console = console
        self.name = name
        self.total = total
        self.counts = {"pass": 0, "borderline": 0, "fail": 0, "error": 0} | dict(counts or {})
        self._stored = sum(self.counts.values())  # not run by this process: not in the rate
        self.done = done
        self._started = time.monotonic()
        self._last_line = self._started
        self._live = console.is_terminal
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self.kept: list[tuple[str, str]] = []
        """(case id, directory) of every workspace kept so far, printed at the end."""

    def _counts_text(self) -> str:
        c = self.counts
        return (
            f"[green]{c['pass']} pass[/] [yellow]{c['borderline']} borderline[/] "
            f"[red]{c['fail']} fail[/] [magenta]{c['error']} error[/]"
        )

    def __enter__(self) -> RunProgress:
        if self._live:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task(
                self.name, total=self.total, completed=self.done, counts="", rate=""
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)
        for case_id, path in self.kept:
            self.console.print(
                f"kept the workspace of case {case_id}: {path}", highlight=False, soft_wrap=True
            )

    def rate(self) -> float:
        """Cases per second so far."""
        elapsed = time.monotonic() - self._started
        finished = sum(self.counts.values()) - self._stored
        return finished / elapsed if elapsed > 0 else 0.0

    def advance(self, case: CaseResult) -> None:
        """Count one finished case and refresh the display."""
        self.counts[case.verdict] += 1
        self.done += 1
        self.kept.extend((case.case_id, path) for path in case.workspaces)
        if self._progress is not None and self._task is not None:
            self._progress.update(
                self._task, advance=1, counts=self._counts_text(), rate=f"{self.rate():.1f}/s"
            )
            return
        now = time.monotonic()
        if now - self._last_line >= PLAIN_EVERY_S or self.done == self.total:
            self._last_line = now
            rate = self.rate()
            left = self.total - self.done
            eta = f", ETA {left / rate:.0f}s" if rate > 0 and left else ""
            self.console.print(
                f"{self.name}: {self.done}/{self.total} done ({self._counts_text()}), "
                f"{rate:.1f} cases/s{eta}",
                highlight=False,
            )
