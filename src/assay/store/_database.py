"""A run store's database, opened and migrated, and the one code that writes its runs.

`SQLStore` (the store the CLI, API and runner use, on the result models) and the store writer
process (`assay.store.StoreWriter`, which holds no model) both write through `SQLDatabase`:
a new run's row, case results given as their JSON documents, a run's finish, each checked
against the run's state and owner in the same transaction. The rows arrive as plain data
(`RunRow`, `FinishRow`, JSON text), so this module and everything it imports stay free of
pydantic and `assay.results`: the writer process imports only it, its backends
(`SQLiteDatabase`, `PostgresDatabase`) and SQLAlchemy Core, and holds ~10 MB less for it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from sqlalchemy import Connection, Engine, Table, func, insert, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError

from assay.errors import UsageError
from assay.store._errors import ConflictError, NotFoundError
from assay.store._failures import report_failures
from assay.store._migrate import migrate
from assay.store._owner import RunOwner
from assay.store._snapshot import encode_snapshot
from assay.store._tables import (
    CASE_LEVEL,
    case_results,
    case_tags,
    expected_outcome_results,
    grader_results,
    runs,
    samples,
)
from assay.store._text import json_without_nul

STREAM_BATCH = 200
"""Case results fetched per round trip while streaming; bounds memory, not the run size."""

if TYPE_CHECKING:
    from assay.results import JSON
    from assay.store._location import StoreLocation
    from assay.store._rows import FinishRow, RunRow

__all__ = ["SQLDatabase"]


class SQLDatabase:
    """A run store's database on a SQLAlchemy engine, with its schema migrated on open.

    Args:
        engine: Where the runs live; its schema is migrated to the current version now.
        where: How messages name the store (a path, or a URL without its password).
        writes: The engine to write through, when writes need their own execution options.
        location: Where another process opens the same database (password included), for
            the store's writer process.

    Raises:
        UsageError: The database cannot be reached or is not a run store.
    """

    def __init__(
        self,
        engine: Engine,
        where: str,
        *,
        writes: Engine | None = None,
        location: StoreLocation | None = None,
    ) -> None:
        self._engine = engine
        self._location = location
        self._where = where
        self._writes = writes if writes is not None else engine
        try:
            migrate(self._writes, where)
        except DBAPIError as exc:
            self._engine.dispose()
            raise UsageError(
                f"cannot open the run store {where}: {exc.orig}. {self._hint(str(exc.orig))}"
            ) from exc
        except BaseException:
            self._engine.dispose()
            raise
        report_failures(self._engine, where)

    def _hint(self, reason: str) -> str:
        """What to check when the database cannot be opened for `reason` (the driver's)."""
        return "Check that the database exists and is reachable."

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for migrations and maintenance that the protocol lacks."""
        return self._engine

    def describe(self) -> str:
        """Where the runs are, for messages such as "stored in ..."."""
        return self._where

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._where!r})"

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close every pooled connection; the store must not be used afterwards."""
        self._engine.dispose()

    # -- writing -------------------------------------------------------------------------

    def insert_run(self, row: RunRow, snapshot: dict[str, JSON], documents: Sequence[str]) -> None:
        """Record a new run (`run_row`), its snapshot and its case results given as their
        JSON documents, in one transaction: an imported run is stored whole or not at all.

        Raises:
            ConflictError: A run with this id already exists.
            UsageError: A case id comes twice.
        """
        try:
            with self._writes.begin() as conn:
                encoded = json_without_nul(encode_snapshot(snapshot))
                conn.execute(insert(runs), {**row, "snapshot": encoded})
                if documents:
                    _insert_cases(conn, row["id"], 1, documents)
        except IntegrityError as exc:
            if self._exists(row["id"]):
                raise ConflictError(f"run '{row['id']}' already exists in {self._where}") from exc
            raise UsageError(
                f"run '{row['id']}' lists a case id more than once; case ids are unique per run"
            ) from exc

    def add_case_documents(
        self, run_id: str, documents: Sequence[str], *, owner: RunOwner | None = None
    ) -> None:
        """Commit case results given as their §8 JSON documents, in one transaction.

        The store writer process commits through this: it receives the documents, never
        the result objects. It passes its run's `owner`, so a writer left behind by a killed
        run stores nothing once a resume has claimed the run.

        Raises:
            UsageError: The run does not exist, is finished, already has one of the case
                ids, or (with `owner`) is run by another process now.
        """
        if not documents:
            return
        try:
            with self._writes.begin() as conn:
                self._require_running(conn, run_id, "add a case result to", owner)
                last = conn.execute(
                    select(func.max(case_results.c.seq)).where(case_results.c.run_id == run_id)
                ).scalar_one()
                _insert_cases(conn, run_id, (last or 0) + 1, documents)
        except IntegrityError as exc:
            ids = ", ".join(f"'{json.loads(d)['case_id']}'" for d in documents)
            raise ConflictError(
                f"run '{run_id}' already has a result for case {ids}; "
                "each case is stored once per run"
            ) from exc

    def finish_run_row(self, run_id: str, row: FinishRow, *, owner: RunOwner | None = None) -> None:
        """Mark a run finished with the columns of `finish_row`; from then on the run and
        its results never change.

        Raises:
            UsageError: The run does not exist or is already finished, or the status is
                `running`, or (with `owner`, from the store writer) another process runs it.
        """
        if row["status"] == "running":
            raise UsageError(
                f"cannot finish run '{run_id}' with status 'running'; "
                "use 'completed', 'interrupted' or 'failed'"
            )
        with self._writes.begin() as conn:
            self._require_running(conn, run_id, "finish", owner)
            conn.execute(update(runs).where(runs.c.id == run_id).values(**row, owner=None))

    # -- reading -------------------------------------------------------------------------

    def stream_documents(
        self, run_id: str, verdicts: Collection[str] | None = None
    ) -> Iterator[str]:
        """A run's case results as their stored JSON documents, in stored order, fetched
        `STREAM_BATCH` at a time (memory stays flat however large the run); with `verdicts`,
        only cases with one of them, filtered in SQL. `run_id` is the run's exact id."""
        stmt = (
            select(case_results.c.data)
            .where(case_results.c.run_id == run_id)
            .order_by(case_results.c.seq)
        )
        if verdicts is not None:
            stmt = stmt.where(case_results.c.verdict.in_(list(verdicts)))
        with self._engine.connect() as conn:
            result = conn.execution_options(yield_per=STREAM_BATCH).execute(stmt)
            yield from result.scalars()

    def require_run(self, run_id: str) -> None:
        """Refuse a run id that names no run (its exact id).

        Raises:
            NotFoundError: It does not exist.
        """
        if not self._exists(run_id):
            raise NotFoundError(f"run '{run_id}' not found in {self._where}")

    def _exists(self, run_id: str) -> bool:
        with self._engine.connect() as conn:
            found = conn.execute(select(runs.c.id).where(runs.c.id == run_id)).first()
        return found is not None

    def _require_running(
        self, conn: Connection, run_id: str, action: str, owner: RunOwner | None = None
    ) -> None:
        """Refuse unless the run is running (and, given `owner`, run by that process)."""
        # FOR UPDATE locks the row on servers; SQLite omits it and the write lock suffices.
        row = conn.execute(
            select(runs.c.status, runs.c.owner).where(runs.c.id == run_id).with_for_update()
        ).one_or_none()
        if row is None:
            raise NotFoundError(f"cannot {action} run '{run_id}': not found in {self._where}")
        status, stored = row
        if status != "running":
            raise ConflictError(
                f"cannot {action} run '{run_id}': it is already finished (status '{status}') "
                "and finished runs are immutable"
            )
        if owner is not None and stored != owner.encode():
            now = RunOwner.decode(stored)
            raise ConflictError(
                f"cannot {action} run '{run_id}': it was taken over by "
                f"{now.describe() if now else 'another process'}, which completes it"
            )


def _insert_cases(conn: Connection, run_id: str, first_seq: int, texts: Sequence[str]) -> None:
    """Insert case results, given as their JSON documents, and their queryable rows.

    The rows are read from the stored JSON itself (one way for every writer, including the
    writer process, which never holds the result objects), one statement per table."""
    cases: list[tuple[Any, ...]] = []
    sample_rows: list[tuple[Any, ...]] = []
    grader_rows: list[tuple[Any, ...]] = []
    outcome_rows: list[tuple[Any, ...]] = []
    tag_rows: list[tuple[Any, ...]] = []
    for seq, given in enumerate(texts, first_seq):
        text = json_without_nul(given)  # PostgreSQL text holds no NUL (model output may)
        result = json.loads(text)
        case_id = result["case_id"]
        # A set: the key allows a tag once per case, and a hand-written result may repeat one.
        tag_rows.extend((run_id, case_id, tag) for tag in sorted(set(result["tags"])))
        cases.append(
            (
                run_id,
                seq,
                case_id,
                result["verdict"],
                result["score"],
                result["duration_ms"],
                text,
            )
        )
        parts: list[tuple[int, dict[str, Any]]] = [(CASE_LEVEL, result)]
        for sample in result["samples"]:
            index = sample["index"]
            sample_rows.append(
                (run_id, case_id, index, sample["verdict"], sample["score"], sample["duration_ms"])
            )
            parts.append((index, sample))
        for index, part in parts:
            grader_rows.extend(
                (
                    run_id,
                    case_id,
                    index,
                    position,
                    grader["name"],
                    grader["type"],
                    grader["verdict"],
                    grader["score"],
                    grader["weight"],
                    grader["required"],
                    grader["judge_model"],
                )
                for position, grader in enumerate(part["grader_results"])
            )
            outcome_rows.extend(
                (
                    run_id,
                    case_id,
                    index,
                    position,
                    outcome["outcome"],
                    outcome["passed"],
                    outcome["justification"],
                )
                for position, outcome in enumerate(part["expected_outcome_results"])
            )
    for table, columns, rows in (
        (case_results, _CASE_COLUMNS, cases),
        (samples, _SAMPLE_COLUMNS, sample_rows),
        (grader_results, _GRADER_COLUMNS, grader_rows),
        (expected_outcome_results, _OUTCOME_COLUMNS, outcome_rows),
        (case_tags, _TAG_COLUMNS, tag_rows),
    ):
        if rows:
            _insert_many(conn, table, columns, rows)


_CASE_COLUMNS = ("run_id", "seq", "case_id", "verdict", "score", "duration_ms", "data")
_SAMPLE_COLUMNS = ("run_id", "case_id", "sample_index", "verdict", "score", "duration_ms")
_GRADER_COLUMNS = (
    "run_id",
    "case_id",
    "sample_index",
    "position",
    "name",
    "type",
    "verdict",
    "score",
    "weight",
    "required",
    "judge_model",
)
_OUTCOME_COLUMNS = (
    "run_id",
    "case_id",
    "sample_index",
    "position",
    "outcome",
    "passed",
    "justification",
)
_TAG_COLUMNS = ("run_id", "case_id", "tag")


def _insert_many(
    conn: Connection, table: Table, columns: tuple[str, ...], rows: list[tuple[Any, ...]]
) -> None:
    """One `executemany` of positional rows, straight to the driver.

    SQLAlchemy's per-row parameter processing cost more than the database's own work on the
    run's hottest path (a few rows per graded case); the columns here are plain values the
    drivers adapt themselves (text, numbers, booleans, NULL)."""
    mark = "?" if conn.dialect.paramstyle == "qmark" else "%s"
    sql = (
        f"INSERT INTO {table.name} ({', '.join(columns)}) "  # noqa: S608 -- fixed identifiers
        f"VALUES ({', '.join([mark] * len(columns))})"
    )
    conn.exec_driver_sql(sql, rows)
