"""Turning a store location (nothing, a path or a database URL) into an open store."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from assay.errors import UsageError
from assay.store._postgres import PostgresStore, postgres_url
from assay.store._protocol import Store
from assay.store._sqlite import SQLiteStore

__all__ = ["DATABASE_URL_ENV", "DEFAULT_DB_PATH", "open_store"]

DEFAULT_DB_PATH = Path(".assay/assay.db")
"""Where runs are stored when nothing else is configured, relative to the working directory."""

DATABASE_URL_ENV = "ASSAY_DATABASE_URL"
"""Environment variable naming the store when no location is passed."""

_POSTGRES_SCHEMES = ("postgresql", "postgres")


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
    source = "the store location"
    if location is None:
        location = os.environ.get(DATABASE_URL_ENV) or None
        source = f"${DATABASE_URL_ENV}"
    if location is None:
        location = fallback
        source = "the project's store"
    if location is None:
        return SQLiteStore(Path.cwd() / DEFAULT_DB_PATH)
    if isinstance(location, Path) or "://" not in location:
        return SQLiteStore(location)
    # Only the scheme is echoed back: the rest of a database URL may hold a password.
    scheme = location.split("://", 1)[0].lower()
    backend = scheme.split("+", 1)[0]
    if backend not in (*_POSTGRES_SCHEMES, "sqlite"):
        raise UsageError(
            f"{source} uses the unsupported database scheme '{scheme}'; use a SQLite file "
            "(a path or sqlite:///path/to/assay.db) or PostgreSQL "
            "(postgresql+psycopg://user@host/dbname)"
        )
    try:
        parsed = make_url(location)
    except ArgumentError as exc:
        raise UsageError(f"{source} is not a valid database URL: {exc}") from exc
    if backend in _POSTGRES_SCHEMES:
        return PostgresStore(postgres_url(parsed, source))
    return SQLiteStore(_sqlite_path(parsed, source))


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
