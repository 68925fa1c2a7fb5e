"""The store writer process: batches committed in order, answers, errors, Ctrl-C, a dead run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests._processes import running

from assay.errors import UsageError
from assay.results import CaseResult, RunResult, RunSummary
from assay.store import (
    ConflictError,
    MemorySink,
    RawJSON,
    RunFinish,
    SQLiteStore,
    SQLStore,
    StoreWriter,
    StoreWriterError,
    open_store,
)
from assay.store._location import resolve_location

MakeCase = Callable[..., CaseResult]


def _documents(make_case: MakeCase, *ids: str) -> list[str]:
    return [make_case(i).model_dump_json() for i in ids]


def _writer(store: SQLStore) -> StoreWriter:
    writer = store.spawn_writer()
    assert writer is not None
    return writer


def test_batches_are_committed_in_order_with_every_nested_row(
    store: SQLStore, make_run: Callable[..., RunResult], rich_cases: list[CaseResult]
) -> None:
    store.create_run(make_run(), {})
    writer = _writer(store)
    writer.send("run-0001", [rich_cases[0].model_dump_json()])
    writer.send("run-0001", [c.model_dump_json() for c in rich_cases[1:]])
    writer.receive()
    writer.receive()
    writer.close()
    stored = list(store.iter_case_results("run-0001"))
    assert stored == rich_cases  # order, samples, details and outcomes all survive
    assert store.get_run_facets("run-0001").graders  # grader rows were written too


def test_a_refused_batch_is_answered_with_its_error_and_later_batches_still_commit(
    store: SQLStore, make_run: Callable[..., RunResult], make_case: MakeCase
) -> None:
    store.create_run(make_run(), {})
    writer = _writer(store)
    writer.send("run-0001", _documents(make_case, "a", "b"))
    writer.send("run-0001", _documents(make_case, "b"))
    writer.send("no-such-run", _documents(make_case, "c"))
    writer.send("run-0001", _documents(make_case, "d"))
    writer.receive()
    with pytest.raises(ConflictError, match="already has a result for case 'b'"):
        writer.receive()
    with pytest.raises(UsageError, match="no-such-run") as refused:
        writer.receive()
    assert not isinstance(refused.value, ConflictError)
    writer.receive()
    writer.close()
    assert [r.case_id for r in store.iter_case_results("run-0001")] == ["a", "b", "d"]


def test_the_writer_ignores_ctrl_c_so_an_interrupted_run_still_commits(
    sqlite_store: SQLiteStore, make_run: Callable[..., RunResult], make_case: MakeCase
) -> None:
    sqlite_store.create_run(make_run(), {})
    writer = _writer(sqlite_store)
    writer.send("run-0001", _documents(make_case, "a"))
    writer.receive()  # the process is up and has its signal handling in place
    os.kill(writer.pid, signal.SIGINT)
    writer.send("run-0001", _documents(make_case, "b"))
    writer.receive()
    writer.close()
    assert [r.case_id for r in sqlite_store.iter_case_results("run-0001")] == ["a", "b"]


def test_a_killed_writer_is_reported_with_the_way_to_complete_the_run(
    sqlite_store: SQLiteStore, make_run: Callable[..., RunResult], make_case: MakeCase
) -> None:
    sqlite_store.create_run(make_run(), {})
    writer = _writer(sqlite_store)
    writer.send("run-0001", _documents(make_case, "a"))
    writer.receive()
    os.kill(writer.pid, signal.SIGKILL)
    time.sleep(0.2)
    with pytest.raises(StoreWriterError, match=r"ended unexpectedly .*--resume"):
        writer.send("run-0001", _documents(make_case, "b"))
        writer.receive()
    writer.close()  # safe on a dead process
    assert [r.case_id for r in sqlite_store.iter_case_results("run-0001")] == ["a"]


PARENT = """
import os, sys
from assay.results import CaseResult, RunResult
from assay.store import SQLiteStore
store = SQLiteStore(sys.argv[1])
writer = store.spawn_writer()
# Created through the writer, as a long run does: the run is this process's.
writer.create_run(RunResult.model_validate_json(sys.argv[2]), {})
docs = [CaseResult(case_id=f"c{i}", score=1.0, verdict="pass", threshold=0.8).model_dump_json()
        for i in range(300)]
writer.send("run-0001", docs[:150])
writer.send("run-0001", docs[150:])
print(writer.pid, flush=True)
os._exit(9)  # dies without waiting for the answers or closing the writer
"""


def test_when_the_run_dies_the_writer_commits_what_it_received_and_exits(
    sqlite_store: SQLiteStore, make_run: Callable[..., RunResult], tmp_path: Path
) -> None:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    done = subprocess.run(
        [sys.executable, str(script), str(sqlite_store.path), make_run().model_dump_json()],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 9, done.stderr
    child = int(done.stdout.strip())
    deadline = time.monotonic() + 30
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(child)  # no orphan left behind
    stored = [r.case_id for r in sqlite_store.iter_case_results("run-0001")]
    assert stored == [f"c{i}" for i in range(300)]


def test_only_a_database_can_be_written_from_another_process() -> None:
    assert MemorySink().spawn_writer() is None


def test_i22_10_a_writer_stores_nothing_into_a_run_another_process_claimed(
    sqlite_store: SQLiteStore, make_run: Callable[..., RunResult], make_case: MakeCase
) -> None:
    writer = _writer(sqlite_store)
    try:
        writer.create_run(make_run(), {})
        writer.send("run-0001", _documents(make_case, "a"))
        writer.receive()
        claim = (
            "import sys; from assay.store import SQLiteStore; "
            "SQLiteStore(sys.argv[1]).reopen_run('run-0001', takeover=True)"
        )
        subprocess.run(
            [sys.executable, "-c", claim, str(sqlite_store.path)], check=True, timeout=60
        )
        # The run is the other process's now: what this run's writer still sends is refused.
        writer.send("run-0001", _documents(make_case, "b"))
        with pytest.raises(ConflictError, match="it was taken over by pid "):
            writer.receive()
    finally:
        writer.close()
    assert [s.case_id for s in sqlite_store.iter_case_scores("run-0001")] == ["a"]


SERVE_AND_LIST_MODULES = """
import sys
from assay.store import _writer_main
_writer_main._serve()  # the writer process's own loop, until its parent closes it
with open(sys.argv[1], "w") as listing:
    listing.write("\\n".join(sorted(sys.modules)))
"""


def test_i23_3_the_writer_process_holds_neither_pydantic_nor_the_result_models(
    location: str,
    make_run: Callable[..., RunResult],
    rich_cases: list[CaseResult],
    tmp_path: Path,
) -> None:
    # Its requests are plain data: a run's rows and the results' JSON documents. Importing
    # pydantic and `assay.results` cost the process ~10 MB of the run's 120 MB budget.
    listing = tmp_path / "modules.txt"
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE_AND_LIST_MODULES, str(listing)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    writer = StoreWriter(resolve_location(location, fallback=None), process)
    writer.create_run(make_run(), {"suite": RawJSON('{"name":"s"}')})
    writer.send("run-0001", [case.model_dump_json() for case in rich_cases])
    writer.receive()
    writer.finish_run(
        "run-0001",
        RunFinish(
            status="completed",
            finished_at="2025-01-02T03:05:00.000000Z",
            summary=RunSummary(total=len(rich_cases), passed_count=len(rich_cases), passed=True),
            duration_ms=7.0,
        ),
    )
    writer.close()
    assert process.returncode == 0
    modules = set(listing.read_text().split())
    assert "sqlalchemy" in modules  # it did open the store and write
    assert not {m for m in modules if m == "pydantic" or m.startswith("pydantic.")}
    assert not {m for m in modules if m == "assay.results" or m.startswith("assay.results.")}
    with open_store(location) as store:
        stored = store.get_run("run-0001", include_results=True)
        assert stored.status == "completed" and stored.passed and stored.duration_ms == 7.0
        assert stored.results == rich_cases
        assert store.run_owner("run-0001") is None  # finishing cleared the owner
