"""A run store that opens its database on first use, for `assay run`.

Opening a store means importing SQLAlchemy (~0.1 s) and migrating the database. A long run
creates, fills and finishes its run through the writer process (`spawn_writer`), which opens
the store on its own, so `assay run` pays for neither unless it reads runs too: a baseline,
`--resume`, the cases its summary lists, a report.
"""

from __future__ import annotations

import subprocess
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from assay.results import (
    JSON,
    CaseResult,
    CaseScore,
    Review,
    RunResult,
    RunStatus,
    Verdict,
)
from assay.store._finish import RunFinish
from assay.store._location import StoreLocation, resolve_location
from assay.store._process_writer import StoreWriter
from assay.store._protocol import Store
from assay.store._writer_process import end_unused_writer

if TYPE_CHECKING:
    from assay.store._owner import RunOwner
    from assay.store._pages import ResultFilter, ResultPage, ResultSort, RunFacets
    from assay.store._sql import Baseline

__all__ = ["DeferredStore"]


class DeferredStore:
    """The store `open_store` would open for the same arguments, opened on first use;
    implements `assay.store.Store`.

    Raises:
        UsageError: The location is a URL of a database assay cannot use (at once); it
            cannot be opened (on first use).
    """

    def __init__(
        self,
        location: str | Path | None = None,
        *,
        fallback: str | None = None,
        writer_process: subprocess.Popen[bytes] | None = None,
    ):
        """`writer_process` (from `start_writer_process`, started before this process's
        imports so its start-up overlapped them) is what `spawn_writer` hands out first."""
        self._location = resolve_location(location, fallback=fallback)
        self._store: Store | None = None
        self._waiting_writer = writer_process
        self._kept: StoreWriter | None = None
        """The writer a finished run handed back (`keep_writer`): reads go through it."""

    @property
    def location(self) -> StoreLocation:
        """Where the store is."""
        return self._location

    @property
    def opened(self) -> bool:
        """Whether this process has opened the database yet."""
        return self._store is not None

    def _open(self) -> Store:
        if self._store is None:
            from assay.store._open import open_location  # SQLAlchemy loads here

            self._store = open_location(self._location)
        return self._store

    @property
    def writer_started(self) -> bool:
        """Whether a writer process started for this store is waiting for `spawn_writer`."""
        return self._waiting_writer is not None

    def keep_writer(self, writer: StoreWriter) -> None:
        """Keep the writer process a run finished through: it reads that run's results back
        (`iter_case_results`, `iter_case_results_json`) while this process has not opened
        the store, and writes the next run; `close` ends it."""
        if self._kept is not None and self._kept is not writer:
            self._kept.close()
        self._kept = writer

    def _reader(self) -> StoreWriter | None:
        """The kept writer, when reads may go through it."""
        kept = self._kept
        if self._store is None and kept is not None and kept.alive and not kept.reading:
            return kept
        return None

    def spawn_writer(self) -> StoreWriter | None:
        """A writer process for the store, which opens it itself: this process need not."""
        if self._kept is not None and self._kept.alive:  # idle since its run finished
            writer, self._kept = self._kept, None
            return writer
        if self._waiting_writer is not None:
            process, self._waiting_writer = self._waiting_writer, None
            return StoreWriter(self._location, process)
        if self._store is not None:
            return self._store.spawn_writer()
        return StoreWriter(self._location)

    def describe(self) -> str:
        """Where the runs are; a SQLite file's path without opening it."""
        if self._store is None and isinstance(self._location.value, Path):
            return str(self._location.value)
        return self._open().describe()

    def close(self) -> None:
        """Close the store if it was opened, and end the writer processes it holds."""
        if self._kept is not None:
            self._kept.close()
            self._kept = None
        if self._waiting_writer is not None:
            end_unused_writer(self._waiting_writer)
            self._waiting_writer = None
        if self._store is not None:
            self._store.close()

    # -- the rest of `Store`, each opening the store first ---------------------------------

    def create_run(self, run: RunResult, snapshot: dict[str, JSON]) -> None:
        self._open().create_run(run, snapshot)

    def add_case_result(self, run_id: str, result: CaseResult) -> None:
        self._open().add_case_result(run_id, result)

    def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
        self._open().add_case_results(run_id, results)

    def finish_run(
        self,
        run_id: str,
        finish: RunFinish,
    ) -> None:
        self._open().finish_run(run_id, finish)

    def reopen_run(self, run_id: str, *, takeover: bool = False) -> RunResult:
        return self._open().reopen_run(run_id, takeover=takeover)

    def run_owner(self, run_id: str) -> RunOwner | None:
        return self._open().run_owner(run_id)

    def import_run(
        self, run: RunResult, snapshot: dict[str, JSON], documents: Sequence[str]
    ) -> None:
        self._open().import_run(run, snapshot, documents)

    def get_run(self, run_id: str, *, include_results: bool = False) -> RunResult:
        return self._open().get_run(run_id, include_results=include_results)

    def iter_case_results(
        self, run_id: str, *, verdicts: Collection[Verdict] | None = None
    ) -> Iterator[CaseResult]:
        if self._reader() is None:
            return self._open().iter_case_results(run_id, verdicts=verdicts)
        return (
            CaseResult.model_validate_json(document)
            for document in self._read_back(run_id, verdicts)
        )

    def iter_case_results_json(self, run_id: str) -> Iterator[str]:
        if self._reader() is None:
            return self._open().iter_case_results_json(run_id)
        return self._read_back(run_id, None)

    def _read_back(self, run_id: str, verdicts: Collection[Verdict] | None) -> Iterator[str]:
        """`run_id`'s stored documents through the kept writer (`run_id` is a whole id
        there: this command's run), or from the store when another read is using the writer
        by the time this one starts."""
        reader = self._reader()
        if reader is None:
            if verdicts is None:
                yield from self._open().iter_case_results_json(run_id)
            else:
                for result in self._open().iter_case_results(run_id, verdicts=verdicts):
                    yield result.model_dump_json()
            return
        yield from reader.read_documents(run_id, verdicts)

    def iter_case_scores(self, run_id: str) -> Iterator[CaseScore]:
        return self._open().iter_case_scores(run_id)

    def get_snapshot(self, run_id: str) -> dict[str, JSON]:
        return self._open().get_snapshot(run_id)

    def list_runs(
        self,
        *,
        suite: str | None = None,
        target: str | None = None,
        status: RunStatus | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int = 50,
        offset: int = 0,
        passed: bool | None = None,
    ) -> list[RunResult]:
        return self._open().list_runs(
            suite=suite,
            target=target,
            status=status,
            since=since,
            until=until,
            limit=limit,
            offset=offset,
            passed=passed,
        )

    def count_runs(
        self,
        *,
        suite: str | None = None,
        target: str | None = None,
        status: RunStatus | None = None,
        since: str | None = None,
        until: str | None = None,
        passed: bool | None = None,
    ) -> int:
        return self._open().count_runs(
            suite=suite, target=target, status=status, since=since, until=until, passed=passed
        )

    def page_case_results(
        self,
        run_id: str,
        *,
        where: ResultFilter | None = None,
        sort: ResultSort = "seq",
        descending: bool = False,
        offset: int = 0,
        limit: int = 50,
    ) -> ResultPage:
        return self._open().page_case_results(
            run_id, where=where, sort=sort, descending=descending, offset=offset, limit=limit
        )

    def get_case_result(self, run_id: str, case_id: str) -> CaseResult:
        return self._open().get_case_result(run_id, case_id)

    def get_run_facets(self, run_id: str) -> RunFacets:
        return self._open().get_run_facets(run_id)

    def delete_run(self, run_id: str, *, force: bool = False) -> str:
        return self._open().delete_run(run_id, force=force)

    def pin_baseline(self, run_id: str, *, pinned_at: str, suite: str | None = None) -> Baseline:
        return self._open().pin_baseline(run_id, pinned_at=pinned_at, suite=suite)

    def get_baseline(self, suite: str) -> Baseline | None:
        return self._open().get_baseline(suite)

    def list_baselines(self) -> list[Baseline]:
        return self._open().list_baselines()

    def unpin_baseline(self, suite: str) -> Baseline:
        return self._open().unpin_baseline(suite)

    def put_review(self, review: Review) -> Review:
        return self._open().put_review(review)

    def get_review(self, run_id: str, case_id: str) -> Review | None:
        return self._open().get_review(run_id, case_id)

    def delete_review(self, run_id: str, case_id: str) -> Review:
        return self._open().delete_review(run_id, case_id)

    def list_reviews(self, run_id: str) -> list[Review]:
        return self._open().list_reviews(run_id)

    def last_passing_run(
        self, suite: str, target: str, *, before: str, exclude: str | None = None
    ) -> RunResult | None:
        return self._open().last_passing_run(suite, target, before=before, exclude=exclude)
