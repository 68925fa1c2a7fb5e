"""What only the SQLite store does: files, pragmas, and its transaction handling."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import func, select

from assay.errors import UsageError
from assay.results import CaseResult, RunResult
from assay.store import SQLiteStore
from assay.store._tables import case_results

MakeRun = Callable[..., RunResult]
MakeCase = Callable[..., CaseResult]


def test_connection_pragmas(sqlite_store: SQLiteStore, db_path: Path) -> None:
    with sqlite_store.engine.connect() as conn:
        pragmas = {
            name: conn.exec_driver_sql(f"PRAGMA {name}").scalar()
            for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
        }
    assert pragmas == {
        "journal_mode": "wal",
        "synchronous": 1,
        "foreign_keys": 1,
        "busy_timeout": 5000,
    }
    # WAL is a property of the file, visible to any client.
    with contextlib.closing(sqlite3.connect(db_path)) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_parent_directories_are_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c" / "assay.db"
    with SQLiteStore(path) as created:
        assert created.path == path
        assert created.list_runs() == []
    assert path.is_file()


def test_relative_path_is_fixed_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_run: MakeRun
) -> None:
    monkeypatch.chdir(tmp_path)
    with SQLiteStore("rel/assay.db") as opened:
        assert opened.path == tmp_path / "rel" / "assay.db"
        monkeypatch.chdir(tmp_path / "rel")
        opened.engine.dispose()  # pooled connections opened after the chdir: same file?
        opened.create_run(make_run(), {})
    assert (tmp_path / "rel" / "assay.db").is_file()
    assert not (tmp_path / "rel" / "rel").exists()


def test_a_file_that_is_not_a_database_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not sqlite at all, just some notes that are long enough\n" * 20)
    with pytest.raises(UsageError, match=r"^cannot open the run store .*notes\.txt: "):
        SQLiteStore(path)


def test_a_parent_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "blocker").write_text("")
    with pytest.raises(UsageError, match="cannot create the directory of the run store"):
        SQLiteStore(tmp_path / "blocker" / "assay.db")


def test_repr(sqlite_store: SQLiteStore, db_path: Path) -> None:
    assert repr(sqlite_store) == f"SQLiteStore({str(db_path)!r})"
    assert sqlite_store.describe() == str(db_path)


def test_reads_in_one_transaction_see_one_snapshot(
    sqlite_store: SQLiteStore, db_path: Path, make_run: MakeRun, make_case: MakeCase
) -> None:
    # Guards the BEGIN hook: without it the sqlite3 driver runs SELECTs outside any
    # transaction, and a check followed by a write would not be atomic.
    sqlite_store.create_run(make_run(), {})
    count = select(func.count()).select_from(case_results)
    with sqlite_store.engine.connect() as conn:
        assert conn.execute(count).scalar_one() == 0
        with SQLiteStore(db_path) as writer:
            writer.add_case_result("run-0001", make_case("a"))
        assert conn.execute(count).scalar_one() == 0
    with sqlite_store.engine.connect() as conn:
        assert conn.execute(count).scalar_one() == 1


def test_i22_11_a_store_locked_at_open_says_who_to_wait_for(tmp_path: Path) -> None:
    """A lock held at open is not a damaged or read-only file: the message says so."""
    path = tmp_path / "r.db"
    SQLiteStore(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(UsageError) as refused:
            SQLiteStore(path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(refused.value)
    assert "database is locked" in message
    assert "Another process held its write lock past the 5 s busy timeout" in message
    assert "SQLite database" not in message
