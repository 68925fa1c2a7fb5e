"""Turning a store location (nothing, a path or a database URL) into an open store."""

from __future__ import annotations

from pathlib import Path

from assay.store._location import StoreLocation, resolve_location
from assay.store._open_database import open_with
from assay.store._postgres import PostgresStore
from assay.store._protocol import Store
from assay.store._sqlite import SQLiteStore

__all__ = ["open_location", "open_store"]


def open_store(location: str | Path | None = None, *, fallback: str | None = None) -> Store:
    """Open the run store at `location`.

    The first of these that is set wins: `location` (e.g. `--db`), `$ASSAY_DATABASE_URL`,
    `fallback` (the project's `store:`), `.assay/assay.db` under the working directory.

    Args:
        location: A file path, or a `sqlite:///path` URL, for a SQLite store; a
            `postgresql+psycopg://` URL for PostgreSQL.
        fallback: Where the project config says runs live.

    Returns:
        The open store; the caller closes it.

    Raises:
        UsageError: The location names a database assay cannot use, or it cannot be opened.
    """
    return open_location(resolve_location(location, fallback=fallback))


def open_location(where: StoreLocation) -> Store:
    """Open the store `resolve_location` found (`open_store`'s second half).

    Raises:
        UsageError: The URL is not valid, or the database cannot be opened.
    """
    return open_with(where, sqlite=SQLiteStore, postgres=PostgresStore)
