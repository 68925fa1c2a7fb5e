"""Long runs commit through the store's writer process: Ctrl-C and SIGKILL lose nothing stored.

These runs are long enough (`PROCESS_MIN_CASES`) for the writer process, and slow down after
case 1500 so that a signal always lands mid-run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from assay.runner._writer import PROCESS_MIN_CASES
from assay.store import SQLiteStore
from tests._processes import running
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay

N = PROCESS_MIN_CASES + 100
SLOW_FROM = 1500

AGENT = f"""import os, time

def answer(case):
    n = int(case["id"].removeprefix("c"))
    if n >= {SLOW_FROM} and os.environ.get("SLOW"):
        time.sleep(2.0)
    return {{"output": f"answer {{n}} ok"}}
"""


def _suite(tmp: Path) -> Path:
    write(tmp / "agent.py", AGENT)
    write(
        tmp / "cases.jsonl",
        "".join(json.dumps({"id": f"c{i}", "input": f"q{i}"}) + "\n" for i in range(N)),
    )
    write(
        tmp / "s.eval.yaml",
        "name: long\ntarget: {type: python, function: 'agent:answer'}\n"
        "execution: {concurrency: 4}\nassertions: [{type: contains, value: ok}]\n"
        "tests: ./cases.jsonl\n",
    )
    return tmp / ".assay" / "assay.db"


@contextlib.contextmanager
def _started(tmp: Path) -> Iterator[subprocess.Popen[bytes]]:
    with (tmp / "stderr.log").open("wb") as stderr:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            [ASSAY, "run", "s.eval.yaml"],
            cwd=tmp,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env={**os.environ, "SLOW": "1"},
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _stored(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        try:
            (count,) = conn.execute("SELECT count(*) FROM case_results").fetchone()
        except sqlite3.OperationalError:  # the run is still creating its tables
            return 0
    return int(count)


def _wait_for_stored(db: Path, count: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if db.exists() and _stored(db) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} results were stored within 60 s")


def _writer_processes(parent: int) -> list[int]:
    """The store writer processes whose parent is `parent`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == parent and b"assay.store._writer_main" in cmdline:
            found.append(int(entry.name))
    return found


def _resume_completes(tmp: Path, run_id: str) -> None:
    resumed = assay("run", "--resume", run_id, "--json", cwd=tmp)
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["status"] == "completed"
    ids = [r["case_id"] for r in final["results"]]
    assert len(ids) == len(set(ids)) == N
    assert final["summary"]["total"] == N


def test_ctrl_c_keeps_every_finished_result_and_resume_completes(tmp_path: Path) -> None:
    db = _suite(tmp_path)
    with _started(tmp_path) as proc:
        _wait_for_stored(db, 1000)
        assert len(_writer_processes(proc.pid)) == 1  # this run commits through the process
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    assert proc.returncode == 130
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
    stored = _stored(db)
    assert run.status == "interrupted"
    assert 1000 <= stored < N
    assert run.summary.total == stored  # what the run counted is exactly what is stored
    _resume_completes(tmp_path, run.id)


def test_sigkill_leaves_no_writer_behind_and_resume_completes(tmp_path: Path) -> None:
    db = _suite(tmp_path)
    with _started(tmp_path) as proc:
        _wait_for_stored(db, 1000)
        (writer,) = _writer_processes(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    deadline = time.monotonic() + 30
    while running(writer) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(writer)  # it saw its input close, committed what it had, and ended
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
    assert run.status == "running"  # what a killed process leaves behind
    _resume_completes(tmp_path, run.id)


def test_a_killed_writer_fails_the_run_cleanly_and_resume_completes(tmp_path: Path) -> None:
    db = _suite(tmp_path)
    with _started(tmp_path) as proc:
        _wait_for_stored(db, 1000)
        (writer,) = _writer_processes(proc.pid)
        os.kill(writer, signal.SIGKILL)
        proc.wait(timeout=60)
    stderr = (tmp_path / "stderr.log").read_text()
    assert proc.returncode == 2, stderr
    assert "error: the store writer process ended unexpectedly" in stderr
    assert "--resume" in stderr
    assert "Traceback" not in stderr
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
    assert run.status == "failed"
    assert run.summary.total == _stored(db)  # counted exactly what was committed
    _resume_completes(tmp_path, run.id)
