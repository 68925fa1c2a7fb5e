"""A SQLite run store's database: one file, written as results arrive, read by everything else.

WAL mode lets `assay serve` and `assay runs` read while a run is writing; a busy timeout and
write transactions that take the lock when they begin let several processes share the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection, create_engine, event
from sqlalchemy.engine import URL
from sqlalchemy.pool import ConnectionPoolEntry

from assay._sqlite_wal import enable_wal
from assay.errors import UsageError
from assay.store._database import SQLDatabase
from assay.store._location import StoreLocation

__all__ = ["SQLiteDatabase"]

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


class SQLiteDatabase(SQLDatabase):
    """A run store's database in one SQLite file (`SQLiteStore` adds the result models).

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
        engine = create_engine(URL.create("sqlite", database=str(self._path)))
        event.listen(engine, "connect", _on_connect)
        event.listen(engine, "begin", _on_begin)
        super().__init__(
            engine,
            str(self._path),
            writes=engine.execution_options(**{_WRITE_OPTION: True}),
            location=StoreLocation(self._path, "the store location"),
        )

    def _hint(self, reason: str) -> str:
        if "locked" in reason:  # the file is fine: a writable database someone else holds
            return (
                "Another process held its write lock past the 5 s busy timeout (another assay "
                "run, a sqlite3 shell inside a transaction): wait for it to finish, or end it."
            )
        return "Check that the path is a writable file and a SQLite database."

    @property
    def path(self) -> Path:
        """The absolute path of the database file."""
        return self._path
