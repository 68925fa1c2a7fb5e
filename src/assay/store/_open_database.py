"""Turning a store location into an open database: a SQLite file or a PostgreSQL URL.

One dispatch for both kinds of opener: `open_location` opens the stores the CLI and API use
(`SQLiteStore`, `PostgresStore`), the store writer process the bare databases
(`open_database`), which load no result model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from assay.errors import UsageError
from assay.store._database import SQLDatabase
from assay.store._location import StoreLocation
from assay.store._postgres_database import PostgresDatabase, postgres_url
from assay.store._sqlite_database import SQLiteDatabase

__all__ = ["open_database", "open_with"]

Opened = TypeVar("Opened", bound=SQLDatabase)


def open_database(where: StoreLocation) -> SQLDatabase:
    """The database at `where`, without the result models (the store writer process's).

    Raises:
        UsageError: The URL is not valid, or the database cannot be opened.
    """
    return open_with(where, sqlite=SQLiteDatabase, postgres=PostgresDatabase)


def open_with(
    where: StoreLocation, *, sqlite: Callable[[Path], Opened], postgres: Callable[[URL], Opened]
) -> Opened:
    """`sqlite(path)` or `postgres(url)`, as the location names a SQLite file or a server.

    Raises:
        UsageError: The URL is not valid, or the database cannot be opened.
    """
    if isinstance(where.value, Path):
        return sqlite(where.value)
    try:
        parsed = make_url(where.value)
    except ArgumentError as exc:
        raise UsageError(f"{where.source} is not a valid database URL: {exc}") from exc
    if where.backend == "postgresql":
        return postgres(postgres_url(parsed, where.source))
    return sqlite(_sqlite_path(parsed, where.source))


def _sqlite_path(parsed: URL, source: str) -> Path:
    if not parsed.database or parsed.database == ":memory:":
        raise UsageError(
            f"{source} names an in-memory SQLite database, which loses every run when the "
            "process ends; give a file: sqlite:///path/to/assay.db"
        )
    if parsed.query:
        raise UsageError(
            f"{source} carries URL query parameters ({', '.join(sorted(parsed.query))}), "
            "which the SQLite store does not accept; give only sqlite:///path/to/assay.db"
        )
    return Path(parsed.database)
