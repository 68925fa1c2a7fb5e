"""The on-disk response cache: one SQLite file, safe for threads and for several processes.

Why stdlib `sqlite3` rather than `diskcache`: the cache needs one table of JSON text, which
SQLite gives with no new dependency; values stay inspectable with the `sqlite3` shell
(`diskcache` pickles by default); and WAL mode with a busy timeout already makes concurrent
writers from several processes safe, which is the part `diskcache` would have added.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import TracebackType

from assay._sqlite_wal import enable_wal
from assay.cache._key import CacheKey
from assay.errors import UsageError, UserError
from assay.results import JSON

__all__ = ["DEFAULT_CACHE_PATH", "CacheMiss", "CacheMode", "CacheStats", "ResponseCache"]

DEFAULT_CACHE_PATH = Path(".assay/cache.db")
"""Where the cache lives unless configured otherwise, relative to the working directory."""

_SCHEMA_VERSION = 1
"""Stored in `PRAGMA user_version`; a file with another version is refused, not guessed at."""

_BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process's write to finish before giving up."""

_SCHEMA = """
CREATE TABLE responses (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at TEXT NOT NULL
) WITHOUT ROWID
"""


class CacheMode(StrEnum):
    """How a run uses the response cache (`--cache-mode`; `--no-cache` is `off`)."""

    USE = "use"
    """Read; on a miss call the model and write the reply (the default)."""
    OFF = "off"
    """Neither read nor write; the cache file is not even opened."""
    RECORD = "record"
    """Never read, always write: every call goes to the model and refreshes its entry."""
    REPLAY = "replay"
    """Read only; a miss raises `CacheMiss` instead of calling a model (hermetic CI)."""


class CacheMiss(UserError):
    """Replay mode needed a reply that is not in the cache.

    A user error: the fix is to fill the cache once with a real run, not to change code.
    """

    def __init__(self, key: str, description: str) -> None:
        self.key = key
        self.description = description
        super().__init__(
            f"cache miss in replay mode for {description}; "
            "run once with --cache-mode use (or record) to fill the cache"
        )


@dataclass(frozen=True)
class CacheStats:
    """What the cache did so far, for the run report.

    Only real lookups count: `off` and `record` never look, so they report no hits or misses.
    """

    hits: int = 0
    misses: int = 0
    writes: int = 0


def _describe(key: str) -> str:
    if isinstance(key, CacheKey) and key.kind:
        return f"{key.kind} {key.description}"
    return f"key {key}"


class ResponseCache:
    """Model replies stored by cache key in a single SQLite file.

    One connection shared by every thread behind a lock: the asyncio runner calls it from the
    event loop and possibly from worker threads, and each call is a single short statement.
    WAL mode and a busy timeout let several processes (parallel CI jobs, two `assay run`s)
    share one file; every write is its own transaction, so a crash loses at most that write.

    Args:
        path: The SQLite file; it and its directory are created by the first write.
        mode: See `CacheMode`.

    Raises:
        assay.errors.UsageError: the file is not a readable assay cache (delete it), or cannot
            be opened.
    """

    def __init__(self, path: Path, mode: CacheMode = CacheMode.USE) -> None:
        self.path = Path(path)
        self.mode = CacheMode(mode)
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0
        self._writes = 0
        self._closed = False
        self._conn: sqlite3.Connection | None = None
        if self.mode is not CacheMode.OFF:
            # An existing file is checked now, so a broken one stops the run before any call.
            self._reader()

    def _open(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{self.path}: cannot create the response cache: {exc}") from exc
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            enable_wal(conn, _BUSY_TIMEOUT_S)
            # WAL with synchronous=NORMAL never corrupts the file; a power cut can lose the
            # last writes, which for a cache only costs a repeated model call.
            conn.execute("PRAGMA synchronous=NORMAL")
            self._ensure_schema(conn)
        except BaseException as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, sqlite3.Error):
                raise self._unusable(exc) from exc
            raise
        return conn

    def _ensure_schema(self, conn: sqlite3.Connection) -> None:
        # IMMEDIATE takes the write lock up front, so two processes creating the same new
        # file one after the other see each other's schema instead of racing.
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise self._corrupt("it is an SQLite database, but not an assay cache")
                conn.execute(_SCHEMA)
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            elif version != _SCHEMA_VERSION:
                raise self._corrupt(
                    f"it has cache format {version}, this assay reads {_SCHEMA_VERSION}"
                )
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _corrupt(self, why: str) -> UsageError:
        return UsageError(
            f"{self.path}: the response cache file is unreadable ({why}); delete it and run "
            "again (it only holds cached model replies)"
        )

    def _unusable(self, exc: sqlite3.Error) -> UsageError:
        if isinstance(exc, sqlite3.OperationalError):
            # Locked past the busy timeout, read-only, disk full, cannot open: the file may
            # be fine, so do not tell the user to delete it.
            return UsageError(f"{self.path}: cannot use the response cache: {exc}")
        return self._corrupt(str(exc))

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"response cache {self.path} is closed")

    def _reader(self) -> sqlite3.Connection | None:
        """The connection if the file exists; reads never create it.

        The file appears with the first write, so a run whose targets are all local code
        leaves no `.assay/` behind and replay never creates an empty cache.
        """
        self._check_open()
        if self._conn is None and self.path.exists():
            self._conn = self._open()
        return self._conn

    def _writer(self) -> sqlite3.Connection:
        self._check_open()
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def get(self, key: str) -> JSON | None:
        """The cached reply for `key`, or None when the caller should call the model.

        `off` and `record` never read and return None; `replay` raises on a miss.

        Raises:
            CacheMiss: replay mode and no entry for `key`.
            assay.errors.UsageError: the file turned out to be unreadable.
        """
        with self._lock:
            self._check_open()
            if self.mode in (CacheMode.OFF, CacheMode.RECORD):
                return None
            conn = self._reader()
            row = None
            if conn is not None:
                try:
                    row = conn.execute(
                        "SELECT value FROM responses WHERE key = ?", (str(key),)
                    ).fetchone()
                except sqlite3.DatabaseError as exc:
                    raise self._unusable(exc) from exc
            if row is None:
                self._misses += 1
                if self.mode is CacheMode.REPLAY:
                    raise CacheMiss(key, _describe(key))
                return None
            try:
                value: JSON = json.loads(row[0])
            except ValueError as exc:
                raise self._corrupt(f"entry {key} is not JSON") from exc
            self._hits += 1
            return value

    def put(self, key: str, value: JSON, *, kind: str) -> None:
        """Store the reply for `key`, replacing any older one; a no-op in `off` and `replay`.

        Args:
            key: From `cache_key`.
            value: The reply as JSON (e.g. `TargetOutput.model_dump(mode="json")`).
            kind: `"target"` or `"judge"`, stored so entries of one kind can be deleted alone.

        Raises:
            TypeError: `value` is not JSON-serialisable.
            assay.errors.UsageError: the file is unreadable or stays locked by another process.
        """
        with self._lock:
            self._check_open()
            if self.mode in (CacheMode.OFF, CacheMode.REPLAY):
                return
            conn = self._writer()
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
            created_at = datetime.now(UTC).isoformat(timespec="seconds")
            try:
                conn.execute(
                    "INSERT OR REPLACE INTO responses (key, kind, value, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (str(key), kind, text, created_at),
                )
            except sqlite3.DatabaseError as exc:
                raise self._unusable(exc) from exc
            self._writes += 1

    @property
    def stats(self) -> CacheStats:
        """Hits, misses and writes since this cache was opened."""
        with self._lock:
            return CacheStats(hits=self._hits, misses=self._misses, writes=self._writes)

    def close(self) -> None:
        """Close the file; calling it again does nothing."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._closed = True

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r}, mode={self.mode.value!r})"
