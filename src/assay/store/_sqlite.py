"""The SQLite run store: one database file, written as results arrive, read by everything else.

Durability comes from committing every case result in its own transaction (SPEC §6): a crash
or Ctrl-C loses at most the case being graded. WAL mode lets `assay serve` and `assay runs`
read while a run is writing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    Row,
    create_engine,
    delete,
    event,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.pool import ConnectionPoolEntry

from assay._sqlite_wal import enable_wal
from assay.errors import UsageError
from assay.results import (
    JSON,
    CaseResult,
    RunResult,
    RunStatus,
    RunSummary,
    SchedulingStats,
    TokenUsage,
    Verdict,
)
from assay.store._migrate import migrate
from assay.store._snapshot import decode_snapshot, encode_snapshot
from assay.store._tables import case_results, runs

__all__ = ["SQLiteStore"]

MIN_PREFIX_LENGTH = 4
"""Shortest run id prefix accepted in place of a full id, as git does for commits."""

_STREAM_BATCH = 200
"""Case results fetched per round trip while streaming; bounds memory, not the run size."""

_MAX_LISTED_MATCHES = 10

_BUSY_TIMEOUT_S = 5.0

_WRITE_OPTION = "assay_write"
"""Execution option marking a transaction that will write (see `_on_begin`)."""

_CONNECTION_PRAGMAS = (
    # NORMAL is durable in WAL mode except for the last commits on power loss, not on a crash.
    "PRAGMA synchronous=NORMAL",
    # SQLite ignores foreign keys unless asked, per connection; cascade deletes depend on it.
    "PRAGMA foreign_keys=ON",
    # A second process (a server, a parallel run) waits for the write lock instead of failing.
    f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}",
)


def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    # Take transaction control away from the sqlite3 driver, which otherwise skips BEGIN
    # before SELECT and DDL, so a status check and the write that depends on it would not
    # share one transaction. SQLAlchemy emits BEGIN instead (see `_on_begin`).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        for pragma in _CONNECTION_PRAGMAS:
            cursor.execute(pragma)
    finally:
        cursor.close()
    # WAL: readers never block the writer, so a live run can be watched.
    enable_wal(dbapi_connection, _BUSY_TIMEOUT_S)


def _on_begin(connection: Connection) -> None:
    # A write transaction takes the write lock when it starts (IMMEDIATE), waiting through the
    # busy timeout. A deferred one that reads first and writes later fails at once with
    # "database is locked" if another process committed in between (a stale WAL snapshot
    # cannot be upgraded), which the busy timeout does not cover.
    immediate = connection.get_execution_options().get(_WRITE_OPTION, False)
    connection.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


class SQLiteStore:
    """A run store in one SQLite file; implements `assay.store.Store`.

    Safe to share between threads (each call checks a connection out of a pool) and between
    processes (SQLite's file locks, WAL and a busy timeout).

    Args:
        path: The database file; missing parent directories are created.

    Raises:
        UsageError: The file cannot be created or is not a SQLite database.
    """

    def __init__(self, path: str | Path) -> None:
        # Absolute now: the pool may open new connections after the process changed directory.
        self._path = Path(path).expanduser().absolute()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(
                f"cannot create the directory of the run store {self._path}: {exc.strerror}"
            ) from exc
        self._engine = create_engine(URL.create("sqlite", database=str(self._path)))
        event.listen(self._engine, "connect", _on_connect)
        event.listen(self._engine, "begin", _on_begin)
        self._writes = self._engine.execution_options(**{_WRITE_OPTION: True})
        try:
            migrate(self._writes)
        except DBAPIError as exc:
            self._engine.dispose()
            raise UsageError(
                f"cannot open the run store {self._path}: {exc.orig}. "
                "Check that the path is a writable file and a SQLite database."
            ) from exc

    @property
    def path(self) -> Path:
        """The absolute path of the database file."""
        return self._path

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for migrations and maintenance that the protocol lacks."""
        return self._engine

    def describe(self) -> str:
        """Where the runs are, for messages such as "stored in ..."."""
        return str(self._path)

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self._path)!r})"

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- writing -------------------------------------------------------------------------

    def create_run(self, run: RunResult, snapshot: dict[str, JSON]) -> None:
        """Record a new run before its first case runs.

        Case results already on `run` (an imported run) are stored with it in the same
        transaction, so an import is all or nothing.

        Raises:
            UsageError: A run with this id already exists.
        """
        row = {
            "id": run.id,
            "suite": run.suite,
            "target": run.target,
            "status": run.status,
            "started_at": run.started_at,
            "finished_at": run.finished_at,
            "config": run.config.model_dump(mode="json"),
            "summary": run.summary.model_dump(mode="json"),
            "snapshot": encode_snapshot(snapshot),
            "duration_ms": run.duration_ms,
            "token_usage": _dump_usage(run.token_usage),
            "cost_usd": run.cost_usd,
            "assay_version": run.assay_version,
            "scheduling": run.scheduling.model_dump(mode="json") if run.scheduling else None,
        }
        try:
            with self._writes.begin() as conn:
                conn.execute(insert(runs), row)
                if run.results:
                    conn.execute(
                        insert(case_results),
                        [_case_row(run.id, seq, r) for seq, r in enumerate(run.results, 1)],
                    )
        except IntegrityError as exc:
            if self._exists(run.id):
                raise UsageError(f"run '{run.id}' already exists in {self._path}") from exc
            raise UsageError(
                f"run '{run.id}' lists a case id more than once; case ids are unique per run"
            ) from exc

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
        if not results:
            return
        try:
            with self._writes.begin() as conn:
                self._require_running(conn, run_id, "add a case result to")
                last = conn.execute(
                    select(func.max(case_results.c.seq)).where(case_results.c.run_id == run_id)
                ).scalar_one()
                first = (last or 0) + 1
                conn.execute(
                    insert(case_results),
                    [_case_row(run_id, first + i, r) for i, r in enumerate(results)],
                )
        except IntegrityError as exc:
            ids = ", ".join(f"'{r.case_id}'" for r in results)
            raise UsageError(
                f"run '{run_id}' already has a result for case {ids}; "
                "each case is stored once per run"
            ) from exc

    def finish_run(
        self,
        run_id: str,
        *,
        status: RunStatus,
        finished_at: str,
        summary: RunSummary,
        duration_ms: float,
        token_usage: TokenUsage | None,
        cost_usd: float | None,
        scheduling: SchedulingStats | None = None,
    ) -> None:
        """Mark a run finished; from then on the run and its results never change.

        Raises:
            UsageError: The run does not exist or is already finished, or `status` is
                `running`.
        """
        if status == "running":
            raise UsageError(
                f"cannot finish run '{run_id}' with status 'running'; "
                "use 'completed', 'interrupted' or 'failed'"
            )
        with self._writes.begin() as conn:
            self._require_running(conn, run_id, "finish")
            conn.execute(
                update(runs)
                .where(runs.c.id == run_id)
                .values(
                    status=status,
                    finished_at=finished_at,
                    summary=summary.model_dump(mode="json"),
                    duration_ms=duration_ms,
                    token_usage=_dump_usage(token_usage),
                    cost_usd=cost_usd,
                    scheduling=scheduling.model_dump(mode="json") if scheduling else None,
                )
            )

    def reopen_run(self, run_id: str) -> RunResult:
        """Set an interrupted, failed or crashed run running again (for `--resume`).

        A run still marked `running` is accepted too: that is what a killed process leaves.

        Raises:
            UsageError: The run does not exist, or it completed (completed runs never change).
        """
        with self._writes.begin() as conn:
            resolved = self._resolve(conn, run_id)
            status = conn.execute(
                select(runs.c.status).where(runs.c.id == resolved).with_for_update()
            ).scalar_one()
            if status == "completed":
                raise UsageError(
                    f"run '{resolved}' completed; there is nothing to resume "
                    "(completed runs never change)"
                )
            conn.execute(
                update(runs).where(runs.c.id == resolved).values(status="running", finished_at=None)
            )
        return self.get_run(resolved)

    # -- reading -------------------------------------------------------------------------

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
    ) -> list[RunResult]:
        """Runs newest first (by `started_at`), without their case results.

        `since` / `until` compare with `started_at` as ISO 8601 text (a date such as
        `2026-11-01` selects from its midnight on; `until` is exclusive).

        Raises:
            UsageError: `limit` is smaller than 1.
        """
        if limit < 1:
            raise UsageError(f"limit must be at least 1, got {limit}")
        stmt = select(runs).order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(limit)
        if suite is not None:
            stmt = stmt.where(runs.c.suite == suite)
        if target is not None:
            stmt = stmt.where(runs.c.target == target)
        if status is not None:
            stmt = stmt.where(runs.c.status == status)
        if since is not None:
            stmt = stmt.where(runs.c.started_at >= since)
        if until is not None:
            stmt = stmt.where(runs.c.started_at < until)
        with self._engine.connect() as conn:
            return [_run_from_row(row) for row in conn.execute(stmt)]

    def delete_run(self, run_id: str) -> str:
        """Delete a run and its case results (all or nothing); returns the full run id.

        Raises:
            UsageError: No run matches, or the prefix matches several runs.
        """
        with self._writes.begin() as conn:
            resolved = self._resolve(conn, run_id)
            conn.execute(delete(case_results).where(case_results.c.run_id == resolved))
            conn.execute(delete(runs).where(runs.c.id == resolved))
        return resolved

    def close(self) -> None:
        """Close every pooled connection; the store must not be used afterwards."""
        self._engine.dispose()

    # -- internals -----------------------------------------------------------------------

    def _stream_results(
        self, run_id: str, verdicts: Collection[Verdict] | None = None
    ) -> Iterator[CaseResult]:
        stmt = (
            select(case_results.c.data)
            .where(case_results.c.run_id == run_id)
            .order_by(case_results.c.seq)
        )
        if verdicts is not None:
            stmt = stmt.where(case_results.c.verdict.in_(list(verdicts)))
        with self._engine.connect() as conn:
            result = conn.execution_options(yield_per=_STREAM_BATCH).execute(stmt)
            for data in result.scalars():
                yield CaseResult.model_validate_json(data)

    def _exists(self, run_id: str) -> bool:
        with self._engine.connect() as conn:
            found = conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first()
        return found is not None

    def _require_running(self, conn: Connection, run_id: str, action: str) -> None:
        # FOR UPDATE locks the row on servers; SQLite omits it and the write lock suffices.
        status = conn.execute(
            select(runs.c.status).where(runs.c.id == run_id).with_for_update()
        ).scalar_one_or_none()
        if status is None:
            raise UsageError(f"cannot {action} run '{run_id}': not found in {self._path}")
        if status != "running":
            raise UsageError(
                f"cannot {action} run '{run_id}': it is already finished (status '{status}') "
                "and finished runs are immutable"
            )

    def _resolve(self, conn: Connection, run_id: str) -> str:
        """The full id of the run `run_id` names exactly or as a unique prefix."""
        if conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first() is not None:
            return run_id
        if len(run_id) < MIN_PREFIX_LENGTH:
            raise UsageError(
                f"run '{run_id}' not found in {self._path} "
                f"(an id prefix needs at least {MIN_PREFIX_LENGTH} characters)"
            )
        # substr, not LIKE: LIKE is case-insensitive in SQLite and treats % and _ as wildcards.
        matches = list(
            conn.execute(
                select(runs.c.id)
                .where(func.substr(runs.c.id, 1, len(run_id)) == run_id)
                .order_by(runs.c.id)
                .limit(_MAX_LISTED_MATCHES + 1)
            ).scalars()
        )
        if not matches:
            raise UsageError(f"run '{run_id}' not found in {self._path}")
        if len(matches) > 1:
            listed = ", ".join(matches[:_MAX_LISTED_MATCHES])
            more = ", ..." if len(matches) > _MAX_LISTED_MATCHES else ""
            raise UsageError(
                f"run id prefix '{run_id}' is ambiguous: it matches {listed}{more}. "
                "Give more characters of the id."
            )
        return str(matches[0])


def _dump_usage(usage: TokenUsage | None) -> dict[str, JSON] | None:
    return usage.model_dump(mode="json") if usage is not None else None


def _case_row(run_id: str, seq: int, result: CaseResult) -> dict[str, JSON]:
    return {
        "run_id": run_id,
        "seq": seq,
        "case_id": result.case_id,
        "verdict": result.verdict,
        "score": result.score,
        "data": result.model_dump_json(),
    }


def _run_from_row(row: Row[Any]) -> RunResult:
    return RunResult.model_validate(
        {
            "id": row.id,
            "suite": row.suite,
            "target": row.target,
            "status": row.status,
            "started_at": row.started_at,
            "finished_at": row.finished_at,
            "config": row.config,
            "summary": row.summary,
            "duration_ms": row.duration_ms,
            "token_usage": row.token_usage,
            "cost_usd": row.cost_usd,
            "assay_version": row.assay_version,
            "scheduling": row.scheduling,
        }
    )
