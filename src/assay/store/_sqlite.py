"""The SQLite run store: `SQLStore` on a `SQLiteDatabase`."""

from __future__ import annotations

from assay.store._sql import SQLStore
from assay.store._sqlite_database import SQLiteDatabase

__all__ = ["SQLiteStore"]


class SQLiteStore(SQLStore, SQLiteDatabase):
    """A run store in one SQLite file (WAL mode: `assay serve` reads while a run writes).

    Args:
        path: The database file; missing parent directories are created.

    Raises:
        UsageError: The file cannot be created or is not a SQLite database.
    """
