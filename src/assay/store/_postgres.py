"""The PostgreSQL run store: `SQLStore` on a `PostgresDatabase`."""

from __future__ import annotations

from assay.store._postgres_database import PostgresDatabase
from assay.store._sql import SQLStore

__all__ = ["PostgresStore"]


class PostgresStore(SQLStore, PostgresDatabase):
    """A run store in a PostgreSQL database, shared by every process that opens the same URL.

    Args:
        url: A `postgresql+psycopg://` URL (see `postgres_url`).

    Raises:
        UsageError: psycopg is not installed, or the server cannot be reached.
    """
