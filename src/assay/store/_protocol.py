"""The Store contract: what the runner, reports and CLI need from run storage.

Kept small on purpose: the SQLite and PostgreSQL stores share one implementation of it
(`SQLStore`), and the runner only needs the `ResultSink` half.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Protocol

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

if TYPE_CHECKING:
    from assay.store._owner import RunOwner
    from assay.store._pages import ResultFilter, ResultPage, ResultSort, RunFacets
    from assay.store._process_writer import StoreWriter
    from assay.store._sql import Baseline

__all__ = ["ResultSink", "Store"]


class ResultSink(Protocol):
    """Where a run streams its results as they are graded."""

    def create_run(self, run: RunResult, snapshot: dict[str, JSON]) -> None:
        """Record a new run (status `running`) before its first case runs."""

    def add_case_result(self, run_id: str, result: CaseResult) -> None:
        """Commit one graded case result at once (a crash keeps it)."""

    def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
        """Commit several graded results in one transaction (the runner's group commit)."""

    def spawn_writer(self) -> StoreWriter | None:
        """A process of its own that commits results to this sink (long runs write through
        it); None when only this process can write to the sink."""

    def finish_run(
        self,
        run_id: str,
        finish: RunFinish,
    ) -> None:
        """Mark a run finished; a finished run is never changed again."""


class Store(ResultSink, Protocol):
    """A persistent store of runs."""

    def reopen_run(self, run_id: str, *, takeover: bool = False) -> RunResult:
        """Claim an interrupted or failed run for resume (atomically), or a run still marked
        running whose process on this machine is gone; any other running run only with
        `takeover`. The run is then owned by this process.

        Raises:
            UsageError: the run does not exist, completed, or is running (without `takeover`).
        """

    def run_owner(self, run_id: str) -> RunOwner | None:
        """The process recorded as running the run (None once finished, or when unknown)."""

    def import_run(
        self, run: RunResult, snapshot: dict[str, JSON], documents: Sequence[str]
    ) -> None:
        """`create_run` for an imported run whose case results are given as their JSON
        documents (`CaseResult.model_dump_json()`), stored with it in one transaction."""

    def get_run(self, run_id: str, *, include_results: bool = False) -> RunResult:
        """Load one run; raises `assay.errors.UsageError` when it does not exist."""

    def iter_case_results(
        self, run_id: str, *, verdicts: Collection[Verdict] | None = None
    ) -> Iterator[CaseResult]:
        """Stream a run's case results in the order they were stored (only `verdicts`, if
        given)."""

    def iter_case_results_json(self, run_id: str) -> Iterator[str]:
        """Stream a run's case results in stored order as stored JSON text."""

    def iter_case_scores(self, run_id: str) -> Iterator[CaseScore]:
        """Stream a run's (case_id, verdict, score, duration_ms) in stored order, cheaply."""

    def get_snapshot(self, run_id: str) -> dict[str, JSON]:
        """The configuration snapshot taken when the run was created."""

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
        """Runs, newest first, without their case results; `since`/`until` bound
        `started_at` (ISO 8601; `until` exclusive); `offset` skips the newest matches;
        `passed` keeps finished runs whose verdict (`RunResult.passed`) is that."""

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
        """How many runs match the filters of `list_runs`."""

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
        """One page of a run's case results (stored JSON texts), filtered and sorted, with
        the number that match (`NotFoundError` for an unknown run)."""

    def get_case_result(self, run_id: str, case_id: str) -> CaseResult:
        """One case result of a run (`NotFoundError` when the run or case is unknown)."""

    def get_run_facets(self, run_id: str) -> RunFacets:
        """A run's case counts per verdict, tag and grader verdict."""

    def delete_run(self, run_id: str, *, force: bool = False) -> str:
        """Delete a run and its results; returns the full id (`UsageError` if unknown,
        `ConflictError` if it is running and not `force`)."""

    def pin_baseline(self, run_id: str, *, pinned_at: str, suite: str | None = None) -> Baseline:
        """Pin a completed run as its suite's baseline (`UsageError` otherwise)."""

    def get_baseline(self, suite: str) -> Baseline | None:
        """The pinned baseline of `suite`, if any."""

    def list_baselines(self) -> list[Baseline]:
        """Every pinned baseline, by suite."""

    def unpin_baseline(self, suite: str) -> Baseline:
        """Remove a suite's pinned baseline (`UsageError` if none)."""

    def put_review(self, review: Review) -> Review:
        """Record or replace a person's verdict on a case (`NotFoundError` for an unknown
        run or case)."""

    def get_review(self, run_id: str, case_id: str) -> Review | None:
        """The review of a case, if any."""

    def delete_review(self, run_id: str, case_id: str) -> Review:
        """Remove a case's review (`NotFoundError` if none)."""

    def list_reviews(self, run_id: str) -> list[Review]:
        """Every review of a run, in case order."""

    def last_passing_run(
        self, suite: str, target: str, *, before: str, exclude: str | None = None
    ) -> RunResult | None:
        """The latest completed run of `suite` on `target` that passed, started before
        `before`."""

    def describe(self) -> str:
        """Where the runs live, for messages ("/path/.assay/assay.db")."""

    def close(self) -> None:
        """Release connections."""
