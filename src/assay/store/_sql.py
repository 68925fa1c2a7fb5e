"""The run store on SQLAlchemy Core: one implementation of `Store` for SQLite and PostgreSQL.

Durability comes from committing results as they are graded (SPEC §6): a crash or Ctrl-C
loses at most what was not yet handed to the store. The backends differ only in how their
engine is made (`SQLiteStore`, `PostgresStore`); every query here is portable SQL. Writes
go through `SQLDatabase` as plain rows (`assay.store._rows`), the one code that writes runs,
which the store writer process uses without the models.

Each case result is stored whole as JSON text in `case_results.data` (read back exactly as
written) and, for queries, as rows of `samples`, `grader_results` and
`expected_outcome_results`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Row,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)

from assay.errors import UsageError
from assay.results import (
    JSON,
    CaseResult,
    CaseScore,
    RunResult,
    RunStatus,
    Verdict,
)
from assay.store._database import SQLDatabase
from assay.store._errors import ConflictError, NotFoundError, resume_refusal
from assay.store._finish import RunFinish
from assay.store._owner import RunOwner
from assay.store._pages import (
    ResultFilter,
    ResultPage,
    ResultSort,
    RunFacets,
    RunFilter,
    case_result_json,
    count_runs,
    page_results,
    run_conditions,
    run_facets,
)
from assay.store._process_writer import StoreWriter
from assay.store._reviews import ReviewsMixin
from assay.store._rows import finish_row, run_row
from assay.store._snapshot import decode_snapshot
from assay.store._tables import (
    baselines,
    case_results,
    case_tags,
    expected_outcome_results,
    grader_results,
    runs,
    samples,
)

__all__ = ["Baseline", "SQLStore"]

MIN_PREFIX_LENGTH = 4
"""Shortest run id prefix accepted in place of a full id, as git does for commits."""

_RANDOM_PART_AT = len("20261122T054312-") + 1
"""Where the random part of a generated run id starts (1-based, as SQL `substr` counts):
after the UTC time and a hyphen (`assay.runner.new_run_id`)."""

_SCORE_BATCH = 5_000
"""Score rows per round trip: four small columns each, so far more than `STREAM_BATCH`."""

_MAX_LISTED_MATCHES = 10


@dataclass(frozen=True, slots=True)
class Baseline:
    """The run pinned as a suite's baseline (`assay baseline pin`)."""

    suite: str
    run_id: str
    pinned_at: str


class SQLStore(ReviewsMixin, SQLDatabase):
    """A run store on the result models; implements `assay.store.Store`.

    The models' half of the store: it turns them into plain rows that `SQLDatabase` writes
    (as it writes the store writer process's), and reads them back. It takes
    `SQLDatabase`'s arguments; `SQLiteStore` and `PostgresStore` make it on their backend.

    Safe to share between threads (each call checks a connection out of the pool) and
    between processes (the database's own locking).
    """

    def spawn_writer(self) -> StoreWriter | None:
        """A process that commits results to this database on its own (see `StoreWriter`);
        None for a store opened on an engine alone, which another process cannot reopen."""
        return StoreWriter(self._location) if self._location is not None else None

    # -- writing -------------------------------------------------------------------------

    def create_run(
        self, run: RunResult, snapshot: dict[str, JSON], *, owner: RunOwner | None = None
    ) -> None:
        """Record a new run before its first case runs.

        Case results already on `run` (an imported run) are stored with it in the same
        transaction, so an import is all or nothing. A `running` run is recorded as run by
        `owner`, by default this process.

        Raises:
            UsageError: A run with this id already exists.
        """
        if owner is None and run.status == "running":
            owner = RunOwner.current()
        self.import_run(run, snapshot, [r.model_dump_json() for r in run.results], owner=owner)

    def import_run(
        self,
        run: RunResult,
        snapshot: dict[str, JSON],
        documents: Sequence[str],
        *,
        owner: RunOwner | None = None,
    ) -> None:
        """`create_run` with the case results given as their JSON documents (an upload,
        whose results are kept as text while it is parsed), in the same one transaction.

        Only a `running` run keeps its `owner`: nobody runs a finished one.

        Raises:
            UsageError: A run with this id already exists, or a case id comes twice.
        """
        self.insert_run(run_row(run, owner), snapshot, documents)

    def add_case_result(self, run_id: str, result: CaseResult) -> None:
        """Commit one graded case result at once, in its own transaction.

        Raises:
            UsageError: The run does not exist, is finished, or already has this case id.
        """
        self.add_case_results(run_id, [result])

    def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
        """Commit several graded case results in one transaction (all or none).

        Raises:
            UsageError: The run does not exist, is finished, or already has one of the case ids.
        """
        self.add_case_documents(run_id, [result.model_dump_json() for result in results])

    def finish_run(
        self,
        run_id: str,
        finish: RunFinish,
        *,
        owner: RunOwner | None = None,
    ) -> None:
        """Mark a run finished; from then on the run and its results never change.

        Raises:
            UsageError: The run does not exist or is already finished, or `status` is
                `running`, or (with `owner`) another process runs it.
        """
        self.finish_run_row(run_id, finish_row(finish), owner=owner)

    def reopen_run(self, run_id: str, *, takeover: bool = False) -> RunResult:
        """Claim an interrupted or failed run for `--resume`: set it running again, owned
        by this process.

        The claim is one conditional UPDATE, so of two resumes racing for a run exactly one
        gets it. A run still marked `running` is claimed when its owner was a process on
        this machine that is gone (killed; its pid free or another process's): that UPDATE
        also requires the owner just seen, so of two resumes racing for it one wins. Any
        other running run (a live owner, one on another host, one stored without an owner)
        is claimed only with `takeover`.

        Raises:
            ConflictError: The run completed, or is running (see above) and `takeover` is
                not given.
            NotFoundError: The run does not exist.
        """
        claimable = ["interrupted", "failed", *(["running"] if takeover else [])]
        claim = {
            "status": "running",
            "finished_at": None,
            "passed": None,
            "owner": RunOwner.current().encode(),
        }
        with self._writes.begin() as conn:
            resolved = self._resolve(conn, run_id)
            claimed = conn.execute(
                update(runs)
                .where(runs.c.id == resolved, runs.c.status.in_(claimable))
                .values(claim)
            ).rowcount
            while not claimed:
                # Read what stopped the claim; claim it as it is now, from exactly that
                # state (a resume racing this one may change it; then the loop reads again).
                status, stored = conn.execute(
                    select(runs.c.status, runs.c.owner).where(runs.c.id == resolved)
                ).one()
                refusal = resume_refusal(
                    resolved, status, takeover=takeover, owner=RunOwner.decode(stored)
                )
                if refusal is not None or status not in {*claimable, "running"}:
                    raise refusal or ConflictError(
                        f"run '{resolved}' cannot be resumed from status '{status}'"
                    )
                condition = runs.c.status == status
                if status == "running" and not takeover:  # its owner on this host is gone
                    condition = and_(condition, runs.c.owner == stored)
                claimed = conn.execute(
                    update(runs).where(runs.c.id == resolved, condition).values(claim)
                ).rowcount
        return self.get_run(resolved)

    # -- reading -------------------------------------------------------------------------

    def run_owner(self, run_id: str) -> RunOwner | None:
        """The process recorded as running the run: None once it finished, and for a run
        stored before owners were recorded.

        Raises:
            UsageError: No run matches, or the prefix matches several runs.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
            stored = conn.execute(select(runs.c.owner).where(runs.c.id == resolved)).scalar_one()
        return RunOwner.decode(stored)

    def get_run(self, run_id: str, *, include_results: bool = False) -> RunResult:
        """Load one run by id or by a unique id prefix of at least four characters.

        Raises:
            UsageError: No run matches, or the prefix matches several runs.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
            row = conn.execute(select(runs).where(runs.c.id == resolved)).one()
        run = _run_from_row(row)
        if include_results:
            run.results = list(self._stream_results(resolved))
        return run

    def iter_case_results(
        self, run_id: str, *, verdicts: Collection[Verdict] | None = None
    ) -> Iterator[CaseResult]:
        """Stream a run's case results in the order they were stored.

        With `verdicts`, only cases with one of them, filtered in SQL: a report listing the
        failures of a large run does not parse every passing case.

        The run id is resolved now, so an unknown id fails at the call rather than at the
        first `next()`; rows are then fetched in batches, so memory stays flat however
        large the run.

        Raises:
            UsageError: No run matches, or the prefix matches several runs.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
        return self._stream_results(resolved, verdicts)

    def iter_case_results_json(self, run_id: str) -> Iterator[str]:
        """Stream a run's case results in stored order as their stored JSON text, for
        writers that send them on (the API's run document) without parsing each one.

        Raises:
            UsageError: No run matches, or the prefix matches several runs.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
        return self.stream_documents(resolved)

    def iter_case_scores(self, run_id: str) -> Iterator[CaseScore]:
        """Stream a run's case ids, verdicts, scores and durations in stored order, from
        columns: what comparing runs needs, without parsing each stored result.

        Raises:
            UsageError: No run matches, or the prefix matches several runs.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
        return self._stream_scores(resolved)

    def _stream_scores(self, run_id: str) -> Iterator[CaseScore]:
        stmt = (
            select(
                case_results.c.case_id,
                case_results.c.verdict,
                case_results.c.score,
                case_results.c.duration_ms,
            )
            .where(case_results.c.run_id == run_id)
            .order_by(case_results.c.seq)
        )
        with self._engine.connect() as conn:
            result = conn.execute(stmt, execution_options={"yield_per": _SCORE_BATCH})
            for row in result:
                yield CaseScore._make(row)

    def get_snapshot(self, run_id: str) -> dict[str, JSON]:
        """The configuration snapshot taken when the run was created.

        Raises:
            UsageError: No run matches, or the prefix matches several runs.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
            snapshot = conn.execute(
                select(runs.c.snapshot).where(runs.c.id == resolved)
            ).scalar_one()
        return decode_snapshot(snapshot)

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
        """Runs newest first (by `started_at`), without their case results.

        `since` / `until` compare with `started_at` as ISO 8601 text (a date such as
        `2026-11-01` selects from its midnight on; `until` is exclusive). `offset` skips
        that many of the newest matches (the API's pages). `passed` keeps finished runs
        whose verdict is that (with `status="completed"`: the runs that completed and passed,
        or completed and did not pass their thresholds).

        Raises:
            UsageError: `limit` is smaller than 1 or `offset` is negative.
        """
        if limit < 1:
            raise UsageError(f"limit must be at least 1, got {limit}")
        if offset < 0:
            raise UsageError(f"offset must be at least 0, got {offset}")
        where = RunFilter(
            suite=suite, target=target, status=status, since=since, until=until, passed=passed
        )
        stmt = (
            select(runs)
            .where(*run_conditions(where))
            .order_by(runs.c.started_at.desc(), runs.c.id.desc())
            .limit(limit)
            .offset(offset)
        )
        with self._engine.connect() as conn:
            return [_run_from_row(row) for row in conn.execute(stmt)]

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
        """How many runs `list_runs` with the same filters and no limit would return."""
        where = RunFilter(
            suite=suite, target=target, status=status, since=since, until=until, passed=passed
        )
        with self._engine.connect() as conn:
            return count_runs(conn, where)

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
        """One page of a run's case results, filtered and sorted in SQL, with the total.

        Ties keep stored order and `descending` is exactly the reverse order; a case without
        a score sorts as the lowest score. Items are the stored JSON texts.

        Raises:
            NotFoundError: No run matches.
            UsageError: The prefix matches several runs, `limit` < 1 or `offset` < 0.
        """
        if limit < 1 or offset < 0:
            raise UsageError(f"a page needs limit >= 1 and offset >= 0, got {limit}, {offset}")
        with self._engine.connect() as conn:
            if conn.dialect.name == "postgresql":
                # One snapshot for count and page (SQLite's read transaction is one already):
                # a page past the middle is counted from the end, so the two must agree.
                conn.execution_options(isolation_level="REPEATABLE READ")
            resolved = self._resolve(conn, run_id)
            return page_results(
                conn,
                resolved,
                where or ResultFilter(),
                sort=sort,
                descending=descending,
                offset=offset,
                limit=limit,
            )

    def get_case_result(self, run_id: str, case_id: str) -> CaseResult:
        """One case result of a run.

        Raises:
            NotFoundError: No run matches, or the run has no result for `case_id`.
            UsageError: The prefix matches several runs.
        """
        with self._engine.connect() as conn:
            resolved = self._resolve(conn, run_id)
            data = case_result_json(conn, resolved, case_id)
        if data is None:
            raise NotFoundError(f"run '{resolved}' has no result for case '{case_id}'")
        return CaseResult.model_validate_json(data)

    def get_run_facets(self, run_id: str) -> RunFacets:
        """A run's case counts per verdict, per tag and per grader verdict.

        Raises:
            NotFoundError: No run matches.
            UsageError: The prefix matches several runs.
        """
        with self._engine.connect() as conn:
            return run_facets(conn, self._resolve(conn, run_id))

    def delete_run(self, run_id: str, *, force: bool = False) -> str:
        """Delete a run and its case results (all or nothing); returns the full run id.

        A running run is kept unless `force`: its process is still adding results (only a
        run whose process crashed or was killed stays `running` for good).

        Raises:
            UsageError: No run matches, or the prefix matches several runs.
            ConflictError: The run is running and `force` is not set.
        """
        with self._writes.begin() as conn:
            resolved = self._resolve(conn, run_id)
            status = conn.execute(
                select(runs.c.status).where(runs.c.id == resolved).with_for_update()
            ).scalar_one()
            if status == "running" and not force:
                raise ConflictError(
                    f"run '{resolved}' is running, so it was not deleted: its process is still "
                    "storing results. Wait for it to finish, or, if that process is gone "
                    "(crashed or killed), delete it with force (`assay runs delete --force`, "
                    f"`DELETE /api/runs/{resolved}?force=true`)"
                )
            for table in (baselines, expected_outcome_results, grader_results, samples, case_tags):
                conn.execute(delete(table).where(table.c.run_id == resolved))
            conn.execute(delete(case_results).where(case_results.c.run_id == resolved))
            conn.execute(delete(runs).where(runs.c.id == resolved))
        return resolved

    # -- baselines -----------------------------------------------------------------------

    def pin_baseline(self, run_id: str, *, pinned_at: str, suite: str | None = None) -> Baseline:
        """Make a completed run the pinned baseline of its suite (replacing any earlier pin).

        Raises:
            UsageError: The run is unknown, did not complete, or belongs to another suite
                than `suite`.
        """
        with self._writes.begin() as conn:
            resolved = self._resolve(conn, run_id)
            run_suite, status = conn.execute(
                select(runs.c.suite, runs.c.status).where(runs.c.id == resolved)
            ).one()
            if suite is not None and suite != run_suite:
                raise UsageError(
                    f"run '{resolved}' belongs to suite '{run_suite}', not '{suite}'; "
                    "a baseline must be a run of the same suite"
                )
            if status != "completed":
                raise ConflictError(
                    f"run '{resolved}' is {status}, and only a completed run can be a baseline; "
                    f"finish it first (assay run --resume {resolved}) or pin another run"
                )
            conn.execute(delete(baselines).where(baselines.c.suite == run_suite))
            conn.execute(
                insert(baselines),
                {"suite": run_suite, "run_id": resolved, "pinned_at": pinned_at},
            )
        return Baseline(run_suite, resolved, pinned_at)

    def get_baseline(self, suite: str) -> Baseline | None:
        """The pinned baseline of `suite`, or None when none is pinned."""
        with self._engine.connect() as conn:
            row = conn.execute(select(baselines).where(baselines.c.suite == suite)).first()
        return None if row is None else Baseline(row.suite, row.run_id, row.pinned_at)

    def list_baselines(self) -> list[Baseline]:
        """Every pinned baseline, by suite name."""
        with self._engine.connect() as conn:
            rows = conn.execute(select(baselines).order_by(baselines.c.suite)).all()
        return [Baseline(row.suite, row.run_id, row.pinned_at) for row in rows]

    def unpin_baseline(self, suite: str) -> Baseline:
        """Remove the pinned baseline of `suite`; returns what was pinned.

        Raises:
            UsageError: No baseline is pinned for `suite`.
        """
        with self._writes.begin() as conn:
            row = conn.execute(select(baselines).where(baselines.c.suite == suite)).first()
            if row is None:
                raise NotFoundError(f"suite '{suite}' has no pinned baseline in {self._where}")
            conn.execute(delete(baselines).where(baselines.c.suite == suite))
        return Baseline(row.suite, row.run_id, row.pinned_at)

    def last_passing_run(
        self, suite: str, target: str, *, before: str, exclude: str | None = None
    ) -> RunResult | None:
        """The latest completed, passed run of `suite` against `target` started before `before`.

        "Passed" is the run verdict at finish: both §1.5 dimensions and no critical
        regression, so a run that regressed badly never becomes the next baseline.
        """
        stmt = (
            select(runs)
            .where(
                runs.c.suite == suite,
                runs.c.target == target,
                runs.c.status == "completed",
                runs.c.passed.is_(True),
                runs.c.started_at < before,
            )
            .order_by(runs.c.started_at.desc(), runs.c.id.desc())
            .limit(1)
        )
        if exclude is not None:
            stmt = stmt.where(runs.c.id != exclude)
        with self._engine.connect() as conn:
            row = conn.execute(stmt).first()
        return None if row is None else _run_from_row(row)

    # -- internals -----------------------------------------------------------------------

    def _stream_results(
        self, run_id: str, verdicts: Collection[Verdict] | None = None
    ) -> Iterator[CaseResult]:
        for data in self.stream_documents(run_id, verdicts):
            yield CaseResult.model_validate_json(data)

    def _resolve(self, conn: Connection, run_id: str) -> str:
        """The full id of the run `run_id` names exactly, as a unique prefix, or as a unique
        prefix of the random part of a generated id (`3f9a` for `20261122T054312-3f9a1c`)."""
        if conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is not None:
            return run_id
        if len(run_id) < MIN_PREFIX_LENGTH:
            raise NotFoundError(
                f"run '{run_id}' not found in {self._where} "
                f"(an id prefix needs at least {MIN_PREFIX_LENGTH} characters)"
            )
        # substr, not LIKE: LIKE is case-insensitive in SQLite and treats % and _ as wildcards.
        random_part = func.substr(runs.c.id, _RANDOM_PART_AT, len(run_id)) == run_id
        matches = list(
            conn.execute(
                select(runs.c.id)
                .where(
                    or_(
                        func.substr(runs.c.id, 1, len(run_id)) == run_id,
                        and_(func.substr(runs.c.id, _RANDOM_PART_AT - 1, 1) == "-", random_part),
                    )
                )
                .order_by(runs.c.id)
                .limit(_MAX_LISTED_MATCHES + 1)
            ).scalars()
        )
        if not matches:
            raise NotFoundError(f"run '{run_id}' not found in {self._where}")
        if len(matches) > 1:
            listed = ", ".join(matches[:_MAX_LISTED_MATCHES])
            more = ", ..." if len(matches) > _MAX_LISTED_MATCHES else ""
            raise UsageError(
                f"run id prefix '{run_id}' is ambiguous: it matches {listed}{more}. "
                "Give more characters of the id."
            )
        return str(matches[0])


def _run_from_row(row: Row[Any]) -> RunResult:
    """The run a `runs` row stores (its JSON columns validated into their models); keyword by
    keyword, so mypy checks each against `RunResult`."""
    return RunResult(
        id=row.id,
        suite=row.suite,
        target=row.target,
        status=row.status,
        started_at=row.started_at,
        finished_at=row.finished_at,
        config=row.config,
        summary=row.summary,
        duration_ms=row.duration_ms,
        token_usage=row.token_usage,
        cost_usd=row.cost_usd,
        assay_version=row.assay_version,
        scheduling=row.scheduling,
        regression=row.regression,
    )
