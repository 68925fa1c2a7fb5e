"""Long runs commit through the store's writer process: Ctrl-C and SIGKILL lose nothing stored.

These runs are long enough (`PROCESS_MIN_CASES`) for the writer process, and slow down after
case 1500 so that a signal always lands mid-run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from assay.report.terminal import ALL_CASES_UP_TO
from assay.runner._writer import PROCESS_MIN_CASES
from assay.store import SQLiteStore
from tests._processes import running
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

N = PROCESS_MIN_CASES + 100
SLOW_FROM = 1500

AGENT = f"""import os, time

def answer(case):
    if os.environ.get("CALLS"):
        with open(os.environ["CALLS"], "a") as calls:
            calls.write(case["id"] + "\\n")
    n = int(case["id"].removeprefix("c"))
    if n >= {SLOW_FROM} and os.environ.get("SLOW"):
        time.sleep(2.0)
    if case["id"] == os.environ.get("FAIL"):
        return {{"output": "no idea"}}
    return {{"output": f"answer {{n}} ok"}}
"""

PROBE = """import atexit, sys
atexit.register(lambda: print("SQLAlchemy imported:", "sqlalchemy" in sys.modules, file=sys.stderr))
from assay.cli import console
sys.argv = ["assay", *sys.argv[1:]]
console()
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


def _resume_completes(tmp: Path, run_id: str, *flags: str) -> None:
    resumed = assay("run", "--resume", run_id, "--json", *flags, cwd=tmp)
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


def test_i22_10_sigkill_leaves_no_writer_behind_and_resume_completes_without_takeover(
    tmp_path: Path,
) -> None:
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
    with SQLiteStore(db) as store:
        owner = store.run_owner(run.id)
    assert owner is not None and owner.pid == proc.pid  # the run's process, not its writer
    _resume_completes(tmp_path, run.id)  # that process is gone: no --takeover


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


@pytest.mark.parametrize("failing", [None, "c7"])
@pytest.mark.parametrize("as_json", [False, True])
def test_i23_3_a_long_run_reads_its_results_back_through_its_writer(
    tmp_path: Path, failing: str | None, as_json: bool
) -> None:
    # The writer process creates, fills and finishes the run, then reads the results back
    # for the summary's list of the cases that did not pass and for `--json`: the run's own
    # process never loads SQLAlchemy (~0.2 s of its end).
    db = _suite(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "run", "s.eval.yaml", *(["--json"] if as_json else [])],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=assay_env(**({"FAIL": failing} if failing else {})),
        check=False,
    )
    assert done.returncode == (1 if failing else 0), done.stderr
    assert "SQLAlchemy imported: False" in done.stderr
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
        stored = [result.model_dump(mode="json") for result in store.iter_case_results(run.id)]
    assert run.status == "completed" and run.summary.total == N == _stored(db)
    assert run.passed is not failing
    if as_json:
        assert json.loads(done.stdout)["results"] == stored  # every result, in stored order
    else:
        assert f"stored in {db}" in done.stdout
        # The one failed case is listed (as a word: a run id's random hex part may hold "c7").
        assert bool(re.search(r"\bc7\b", done.stdout)) is bool(failing)


def test_a_long_run_into_a_store_that_cannot_be_opened_stops_before_its_first_case(
    tmp_path: Path,
) -> None:
    _suite(tmp_path)
    (tmp_path / "blocker").write_text("a file where the store's directory should be")
    calls = tmp_path / "calls.log"
    done = assay(
        "run",
        "s.eval.yaml",
        "--db",
        str(tmp_path / "blocker" / "runs.db"),
        cwd=tmp_path,
        env=assay_env(CALLS=str(calls)),
    )
    assert done.returncode == 2, done.stderr
    assert "error: cannot create the directory of the run store" in done.stderr
    assert "Traceback" not in done.stderr
    assert not calls.exists()  # the writer process refused the run before any case ran


def test_i23_3_a_short_run_commits_through_the_writer_started_first_thing(
    tmp_path: Path,
) -> None:
    # `assay run` starts the writer process before its imports and suites (so its start-up
    # overlaps theirs), and then a run of any size uses it: this short run never loads
    # SQLAlchemy itself (a passing run this size lists no case), yet is stored completely.
    n = ALL_CASES_UP_TO + 1
    assert n < PROCESS_MIN_CASES  # too short to start a writer process of its own
    write(tmp_path / "agent.py", "def answer(case):\n    return {'output': 'ok'}\n")
    write(
        tmp_path / "cases.jsonl",
        "".join(json.dumps({"id": f"c{i}", "input": f"q{i}"}) + "\n" for i in range(n)),
    )
    write(
        tmp_path / "s.eval.yaml",
        "name: short\ntarget: {type: python, function: 'agent:answer'}\n"
        "assertions: [{type: contains, value: ok}]\ntests: ./cases.jsonl\n",
    )
    db = tmp_path / ".assay" / "assay.db"
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "run", "s.eval.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=assay_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "SQLAlchemy imported: False" in done.stderr
    with SQLiteStore(db) as store:
        (run,) = store.list_runs()
    assert run.status == "completed" and run.summary.total == n == _stored(db)


def test_i23_3_a_run_stopped_by_a_bad_suite_leaves_no_store_behind(tmp_path: Path) -> None:
    # The early writer process opens the store only at its first request: a suite error
    # (found after it started) creates no database, and the command does not hang on it.
    write(tmp_path / "s.eval.yaml", "name: bad\ntarget: {type: python, function: 'a:b'}\n")
    done = assay("run", "s.eval.yaml", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".assay").exists()
