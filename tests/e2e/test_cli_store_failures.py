"""A store that fails mid-run ends the run with one line (exit 2) and how to resume it.

Real failures of a real SQLite file: a write lock another connection holds past the busy
timeout, pages of the file overwritten with garbage. No SQL statement or parameter (case
data) is ever printed, and what was committed before the failure stays.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path

from assay.store import SQLiteStore
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

AGENT = """import time

def answer(case):
    time.sleep(0.25)
    return {"output": "ok SECRET-CASE-DATA " + case["input"]}
"""


def _suite(tmp: Path, cases: int) -> None:
    write(tmp / "agent.py", AGENT)
    tests = "".join(
        f"  - {{id: c{i}, input: q{i}, assertions: [{{type: contains, value: ok}}]}}\n"
        for i in range(cases)
    )
    write(
        tmp / "s.eval.yaml",
        "name: demo\ntarget: {type: python, function: 'agent:answer'}\n"
        "execution: {concurrency: 1}\ntests:\n" + tests,
    )


def _assert_one_line_without_sql(stderr: str) -> None:
    assert stderr.count("\n") == 1, stderr
    for leak in ("Traceback", "[SQL", "parameters", "INSERT", "SECRET-CASE-DATA"):
        assert leak not in stderr, stderr


def test_i22_11_a_lock_held_past_the_busy_timeout_ends_the_run_with_the_resume_hint(
    tmp_path: Path,
) -> None:
    _suite(tmp_path, 12)
    db = tmp_path / ".assay" / "assay.db"
    proc = subprocess.Popen(
        [ASSAY, "run", "s.eval.yaml"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=assay_env(),
    )
    deadline = time.monotonic() + 60
    stored = 0
    while stored < 2 and time.monotonic() < deadline:
        if db.exists():
            with sqlite3.connect(db) as probe:
                try:
                    stored = probe.execute("SELECT count(*) FROM case_results").fetchone()[0]
                except sqlite3.OperationalError:
                    stored = 0
        time.sleep(0.05)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # held past both the batch's and the finish's 5 s
    try:
        _, stderr = proc.communicate(timeout=60)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 2, stderr
    _assert_one_line_without_sql(stderr)
    match = re.fullmatch(
        rf"error: the run store {re.escape(str(db))} failed: database is locked \(another "
        r"process held its lock past the busy timeout\); the results committed before it are "
        r"kept: once the store works again, complete the run with: assay run --resume "
        r"(\S+) \(on another host, add --takeover\)\n",
        stderr,
    )
    assert match, stderr
    run_id = match.group(1)
    with SQLiteStore(db) as store:
        kept = len(list(store.iter_case_results(run_id)))
    assert 2 <= kept < 12

    resumed = assay("run", "--resume", run_id, cwd=tmp_path)  # its process has exited
    assert resumed.returncode == 0, resumed.stderr
    with SQLiteStore(db) as store:
        run = store.get_run(run_id)
    assert (run.status, run.summary.total) == ("completed", 12)


def test_i22_11_the_store_failure_resume_command_carries_db_and_cache_options(
    tmp_path: Path,
) -> None:
    """Pasted as printed, the command finds the run: `--db` (a path with a space) and the
    cache option are in it, as in the Ctrl-C message."""
    _suite(tmp_path, 12)
    db = tmp_path / "my runs" / "r.db"
    db.parent.mkdir()
    proc = subprocess.Popen(
        [ASSAY, "run", "s.eval.yaml", "--db", "my runs/r.db", "--no-cache"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=assay_env(),
    )
    deadline = time.monotonic() + 60
    stored = 0
    while stored < 2 and time.monotonic() < deadline:
        if db.exists():
            with sqlite3.connect(db) as probe:
                try:
                    stored = probe.execute("SELECT count(*) FROM case_results").fetchone()[0]
                except sqlite3.OperationalError:
                    stored = 0
        time.sleep(0.05)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        _, stderr = proc.communicate(timeout=60)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert proc.returncode == 2, stderr
    _assert_one_line_without_sql(stderr)
    match = re.search(
        r"complete the run with: assay run --resume (\S+) --db 'my runs/r.db' --no-cache"
        r"( \(on another host, add --takeover\))?\n$",
        stderr,
    )
    assert match, stderr
    resumed = assay("run", "--resume", match.group(1), "--db", "my runs/r.db", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    with SQLiteStore(db) as store:
        assert store.get_run(match.group(1)).summary.total == 12


def test_i22_11_a_damaged_database_file_is_one_line_not_an_internal_error(
    tmp_path: Path,
) -> None:
    _suite(tmp_path, 300)
    write(tmp_path / "agent.py", AGENT.replace("time.sleep(0.25)", "pass"))
    first = assay("run", "s.eval.yaml", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    db = tmp_path / ".assay" / "assay.db"
    size = db.stat().st_size
    with db.open("r+b") as file:  # garbage over the second half of the pages
        for offset in range(size // 2, size, 4096):
            file.seek(offset + 100)
            file.write(b"\xff" * 2000)
    for args in (("runs", "list"), ("run", "s.eval.yaml")):
        done = assay(*args, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        _assert_one_line_without_sql(done.stderr)
        assert done.stderr.startswith(f"error: the run store {db} failed: "), done.stderr
    assert os.path.getsize(db) >= size
