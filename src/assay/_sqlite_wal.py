"""Switch a SQLite connection to WAL mode safely when other processes use the same file."""

from __future__ import annotations

import sqlite3
import time

__all__ = ["enable_wal"]


def enable_wal(conn: sqlite3.Connection, timeout_s: float) -> None:
    """Switch the file to WAL, retrying while another process holds it.

    SQLite does not call the busy handler for this switch (it could deadlock), so a process
    opening a file that another one is writing would otherwise fail at once with "database is
    locked", even with a busy timeout. A file already in WAL mode needs no lock and returns
    at the first try.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)
        else:
            return
