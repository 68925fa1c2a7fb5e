"""A hung target never holds `assay run`: a timeout ends the case, Ctrl-C ends the process.

Each shape of hung user code runs in a real `assay run` process: a sync function asleep or
deadlocked, an async one that blocks its event loop with `time.sleep`, waits on a thread of its
own (`asyncio.to_thread`) or ignores cancellation.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from assay.store import SQLiteStore
from tests.conftest import write
from tests.e2e._cli import ASSAY, assay, assay_env

AGENT = """import asyncio, threading, time

def quick(case):
    return "ok"

def sleeps(case):
    time.sleep(60)
    return "late"

def deadlocks(case):
    lock = threading.Lock()
    lock.acquire()
    lock.acquire()

async def blocks_its_loop(case):
    time.sleep(60)
    return "late"

async def offloads_to_a_thread(case):
    await asyncio.to_thread(time.sleep, 60)
    return "late"

async def ignores_cancellation(case):
    while True:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            pass

def answer(case):
    hang = case["metadata"].get("hang")
    return globals()[hang](case) if hang else quick(case)

async def answer_async(case):
    hang = case["metadata"].get("hang")
    return await globals()[hang](case) if hang else quick(case)
"""

HANGS = ["sleeps", "deadlocks", "blocks_its_loop", "offloads_to_a_thread", "ignores_cancellation"]


def _suite(tmp: Path, hang: str, execution: str) -> None:
    write(tmp / "agent.py", AGENT)
    function = "answer" if hang in ("sleeps", "deadlocks") else "answer_async"
    write(
        tmp / "s.eval.yaml",
        f"name: hung\ntarget: {{type: python, function: 'agent:{function}'}}\n"
        f"execution: {{{execution}}}\n"
        "tests:\n"
        "  - {id: before, input: q, assertions: [{type: equals, value: ok}]}\n"
        f"  - {{id: hung, input: q, metadata: {{hang: {hang}}}, "
        "assertions: [{type: equals, value: ok}]}\n"
        "  - {id: after, input: q, assertions: [{type: equals, value: ok}]}\n",
    )


@pytest.mark.parametrize("hang", HANGS)
def test_i21_2_a_timeout_ends_the_case_and_the_run_whatever_the_code_does(
    tmp_path: Path, hang: str
) -> None:
    _suite(tmp_path, hang, "timeout_s: 2, concurrency: 1")
    started = time.monotonic()
    ended = assay("run", "s.eval.yaml", "--json", "--db", str(tmp_path / "r.db"), cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert ended.returncode == 1, ended.stderr
    results = {r["case_id"]: r for r in json.loads(ended.stdout)["results"]}
    assert results["before"]["verdict"] == "pass"
    assert results["hung"]["verdict"] == "error"
    assert results["hung"]["error"]["type"] == "TimeoutError"
    timeouts = 1
    if hang == "blocks_its_loop":
        # The documented price of one shared user-code loop: while a coroutine blocks it, the
        # other async calls wait too, and time out.
        assert results["after"]["error"]["type"] == "TimeoutError"
        timeouts = 2
    else:
        assert results["after"]["verdict"] == "pass"
    # The whole process, start-up included, against the 60 s the code would take: the run
    # ends ~1 s of start-up after its timeouts; 4 s more is a margin for a loaded machine.
    assert elapsed < 2 * timeouts + 5, f"the run took {elapsed:.1f}s"


def _wait_for_results(db: Path, count: int, deadline_s: float = 60) -> str:
    """The id of the run once `count` of its results are stored."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if db.exists():
            with SQLiteStore(db) as store:
                runs = store.list_runs()
                if runs and len(list(store.iter_case_results(runs[0].id))) >= count:
                    return runs[0].id
        time.sleep(0.05)
    raise AssertionError("the run stored no result")


@pytest.mark.parametrize("hang", HANGS)
def test_i21_2_ctrl_c_ends_the_process_within_2s_even_with_hung_code(
    tmp_path: Path, hang: str
) -> None:
    _suite(tmp_path, hang, "concurrency: 1")  # no timeout: the hung case waits for ever
    db = tmp_path / "r.db"
    proc = subprocess.Popen(
        [ASSAY, "run", "s.eval.yaml", "--db", str(db)],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=assay_env(),
    )
    try:
        run_id = _wait_for_results(db, 1)
        time.sleep(0.3)  # the hung call is under way
        proc.send_signal(signal.SIGINT)  # once: a second Ctrl-C must not be needed
        sent = time.monotonic()
        _, stderr = proc.communicate(timeout=30)
        elapsed = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert elapsed < 2.0 + 1.0, f"Ctrl-C took {elapsed:.1f}s"  # 1 s of margin for a busy box
    with SQLiteStore(db) as store:
        run = store.get_run(run_id, include_results=True)
    assert run.status == "interrupted"
    assert [r.case_id for r in run.results] == ["before"]  # what finished is kept


def test_i21_2_hung_commands_and_code_graders_end_at_their_timeouts(tmp_path: Path) -> None:
    write(tmp_path / "agent.py", AGENT)
    write(
        tmp_path / "s.eval.yaml",
        "name: hung-commands\n"
        "target: {type: command, command: [sh, -c, 'sleep 60 & sleep 60']}\n"
        "execution: {timeout_s: 2}\n"
        "tests:\n"
        "  - {id: slow-target, input: q, assertions: [{type: equals, value: ok}]}\n",
    )
    write(
        tmp_path / "g.eval.yaml",
        "name: hung-grader\n"
        "target: {type: python, function: 'agent:answer'}\n"
        "tests:\n"
        "  - {id: slow-grader, input: q, assertions: "
        "[{type: code-grader, command: [sh, -c, 'sleep 60 & sleep 60'], timeout_s: 2}]}\n",
    )
    started = time.monotonic()
    ended = assay(
        "run", "s.eval.yaml", "g.eval.yaml", "--json", "--db", str(tmp_path / "r.db"), cwd=tmp_path
    )
    elapsed = time.monotonic() - started
    assert ended.returncode == 1, ended.stderr
    runs = json.loads(ended.stdout)
    errors = {r["case_id"]: r["error"]["message"] for run in runs for r in run["results"]}
    assert errors == {
        "slow-target": "target took longer than 2.0s",
        "slow-grader": "grader 'code-grader': command 'sh -c 'sleep 60 & sleep 60'' timed out "
        "after 2s and was killed",
    }
    assert elapsed < 2 * 2 + 5, f"the runs took {elapsed:.1f}s"
