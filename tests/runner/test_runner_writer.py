"""The group-commit writer: order, batching under load, bounded pending, errors surface."""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Generator, Sequence
from pathlib import Path
from typing import Any

import pytest

from assay.results import CaseResult, RunConfigSnapshot, RunResult, RunSummary, now_iso
from assay.runner import _writer
from assay.runner._writer import GroupWriter, start_writer_process
from assay.store import (
    ConflictError,
    SQLiteStore,
    StoreUnavailableError,
    StoreWriter,
    StoreWriterError,
)


def _case(i: int) -> CaseResult:
    return CaseResult(case_id=f"c{i}", score=1.0, verdict="pass", threshold=0.8)


class SlowSink:
    """Records each transaction; each commit takes a while, so results queue up meanwhile."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.batches: list[list[str]] = []
        self.fail_on = fail_on
        self.thread: str | None = None

    def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
        assert run_id == "run-1"
        self.thread = threading.current_thread().name
        time.sleep(0.01)
        if self.fail_on in [r.case_id for r in results]:
            raise OSError("disk full")
        self.batches.append([r.case_id for r in results])


class InstantSink:
    """Records each transaction's case ids at once; `first_commit_s` slows the first one."""

    def __init__(self, first_commit_s: float = 0.0) -> None:
        self.batches: list[list[str]] = []
        self.first_commit_s = first_commit_s

    def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
        if not self.batches:
            time.sleep(self.first_commit_s)
        self.batches.append([r.case_id for r in results])


def _run(sink: SlowSink, count: int) -> list[str]:
    committed: list[str] = []

    async def main() -> None:
        writer = GroupWriter(sink, "run-1", lambda rs: committed.extend(r.case_id for r in rs))
        for i in range(count):
            await writer.write(_case(i))
        await writer.close()

    asyncio.run(main())
    return committed


def test_results_are_committed_in_order_and_batched_under_load() -> None:
    sink = SlowSink()
    committed = _run(sink, 200)
    expected = [f"c{i}" for i in range(200)]
    assert [c for batch in sink.batches for c in batch] == expected
    assert committed == expected  # reported only after the commit, in order
    assert len(sink.batches) < 50  # results that queued during a commit shared the next one
    assert sink.thread == "assay-store"  # never on the event loop's thread


def test_pending_results_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_writer, "MAX_PENDING", 3)
    sink = SlowSink()
    _run(sink, 20)
    assert max(len(b) for b in sink.batches) <= 3


def test_a_failed_commit_is_raised_and_its_results_are_not_reported() -> None:
    sink = SlowSink(fail_on="c0")
    committed: list[str] = []

    async def main() -> None:
        writer = GroupWriter(sink, "run-1", lambda rs: committed.extend(r.case_id for r in rs))
        await writer.write(_case(0))
        with pytest.raises(OSError, match="disk full"):
            await writer.close()

    asyncio.run(main())
    assert committed == []
    assert sink.batches == []


def test_results_arriving_within_the_linger_share_one_commit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The sink is instant, so nothing queues behind a slow commit: only the writer's short
    # wait for company can put results handed over a few milliseconds apart in one batch.
    monkeypatch.setattr(_writer, "LINGER_S", 0.2)  # wide, so a slow machine cannot split it
    sink = InstantSink()

    async def main() -> None:
        writer = GroupWriter(sink, "run-1", lambda rs: None)
        for i in range(5):
            await writer.write(_case(i))
            await asyncio.sleep(0.001)
        await writer.close()

    asyncio.run(main())
    assert sink.batches == [[f"c{i}" for i in range(5)]]


def test_results_graded_25_ms_apart_share_one_commit() -> None:
    # Each hand-over wakes the writer's threads, which take the GIL from the event loop
    # (~0.4 ms a batch): a run of model calls finishing a case every millisecond or so must
    # not hand its results over one by one (LINGER_S, docs/benchmarks.md).
    sink = InstantSink()

    async def main() -> None:
        writer = GroupWriter(sink, "run-1", lambda rs: None)
        await writer.write(_case(0))
        await asyncio.sleep(0.025)
        await writer.write(_case(1))
        await writer.close()

    asyncio.run(main())
    assert sink.batches == [["c0", "c1"]]


def _store_run(path: Path) -> SQLiteStore:
    store = SQLiteStore(path)
    store.create_run(
        RunResult(
            id="run-1",
            suite="s",
            target="t",
            status="running",
            started_at=now_iso(),
            config=RunConfigSnapshot(
                threshold=0.8, borderline=None, metrics_pass_threshold=0.8, cases_pass_threshold=1
            ),
            summary=RunSummary(),
            assay_version="0",
        ),
        {},
    )
    return store


def _through_store(store: SQLiteStore, ids: list[str], cases: int) -> tuple[list[str], int | None]:
    """Write results for `ids` to run-1 as a run of `cases` cases would; (committed, the
    writer process id or None)."""
    committed: list[str] = []
    pid: int | None = None

    async def main() -> None:
        nonlocal pid
        writer = GroupWriter(
            store,
            "run-1",
            lambda rs: committed.extend(r.case_id for r in rs),
            process=start_writer_process(store, cases),
        )
        pid = writer.process.pid if writer.process else None
        try:
            for case_id in ids:
                await writer.write(_case(int(case_id.removeprefix("c"))))
        finally:
            try:
                await writer.close()
            finally:  # its owner ends the process (the run, once it finished the run)
                if writer.process is not None:
                    writer.process.close()

    try:
        asyncio.run(main())
    finally:
        store.close()
    return committed, pid


def test_a_long_run_commits_through_the_writer_process_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_writer, "MAX_PENDING", 40)  # several batches in flight at once
    monkeypatch.setattr(_writer, "MAX_BATCH", 16)
    store = _store_run(tmp_path / "runs.db")
    ids = [f"c{i}" for i in range(_writer.PROCESS_MIN_CASES)]
    committed, pid = _through_store(store, ids, cases=len(ids))
    assert pid is not None and pid != os.getpid()
    assert committed == ids  # reported after the commit, in order
    with SQLiteStore(tmp_path / "runs.db") as reopened:
        assert [r.case_id for r in reopened.iter_case_results("run-1")] == ids


def test_a_short_run_commits_from_its_own_thread(tmp_path: Path) -> None:
    store = _store_run(tmp_path / "runs.db")
    committed, pid = _through_store(store, ["c0", "c1"], cases=_writer.PROCESS_MIN_CASES - 1)
    assert pid is None
    assert committed == ["c0", "c1"]


def test_a_batch_the_writer_process_refuses_is_raised_and_not_reported(tmp_path: Path) -> None:
    store = _store_run(tmp_path / "runs.db")
    store.add_case_results("run-1", [_case(1)])  # c1 is stored already
    with pytest.raises(ConflictError, match="'c1'"):
        _through_store(store, ["c0", "c1"], cases=_writer.PROCESS_MIN_CASES)
    with SQLiteStore(tmp_path / "runs.db") as reopened:
        assert [r.case_id for r in reopened.iter_case_results("run-1")] == ["c1"]


def test_i22_11_a_locked_store_refuses_the_writer_process_batch_in_one_line(
    tmp_path: Path,
) -> None:
    """The writer process's answer keeps the failure's kind: `StoreUnavailableError` with the
    database's reason, not a wrapped exception text with the SQL and its parameters."""
    import sqlite3

    store = _store_run(tmp_path / "runs.db")
    committed: list[str] = []
    holder = sqlite3.connect(tmp_path / "runs.db", isolation_level=None)

    async def main() -> None:
        writer = GroupWriter(
            store,
            "run-1",
            lambda rs: committed.extend(r.case_id for r in rs),
            process=start_writer_process(store, _writer.PROCESS_MIN_CASES),
        )
        assert writer.process is not None
        try:
            await writer.write(_case(0))
            while not committed:  # the process has opened the store and committed c0
                await asyncio.sleep(0.01)
            holder.execute("BEGIN IMMEDIATE")  # held past the process's 5 s busy timeout
            await writer.write(_case(1))
        finally:
            try:
                await writer.close()
            finally:
                writer.process.close()

    try:
        with pytest.raises(StoreUnavailableError) as info:
            asyncio.run(main())
    finally:
        holder.close()
        store.close()
    assert committed == ["c0"]
    assert str(info.value) == (
        f"the run store {tmp_path / 'runs.db'} failed: database is locked (another process "
        "held its lock past the busy timeout)"
    )


def _until_the_writer_fails(
    store: SQLiteStore, start: Callable[[GroupWriter, list[str]], Awaitable[int]] | None = None
) -> list[str]:
    """Write results through the writer process (after `start`, which returns how many it
    wrote) until the writer fails; the case ids reported as committed."""
    committed: list[str] = []

    async def main() -> None:
        writer = GroupWriter(
            store,
            "run-1",
            lambda rs: committed.extend(r.case_id for r in rs),
            process=store.spawn_writer(),
        )
        assert writer.process is not None
        first = await start(writer, committed) if start is not None else 0
        with pytest.raises(StoreWriterError, match="--resume"):
            try:
                for i in range(first, 400):
                    await writer.write(_case(i))
                    await asyncio.sleep(0.001)
            finally:  # as the run does: whatever failed, the writer is closed, then the process
                try:
                    await writer.close()
                finally:
                    writer.process.close()

    try:
        asyncio.run(main())
    finally:
        store.close()
    return committed


def _stored(path: Path) -> list[str]:
    with SQLiteStore(path) as reopened:
        return [r.case_id for r in reopened.iter_case_results("run-1")]


def test_a_dead_writer_process_fails_the_writes_and_reports_only_what_it_committed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_writer, "MAX_BATCH", 8)

    async def first_batch_then_kill(writer: GroupWriter, committed: list[str]) -> int:
        for i in range(8):
            await writer.write(_case(i))
        while len(committed) < 8:  # the first batch is answered
            await asyncio.sleep(0.01)
        assert writer.process is not None
        os.kill(writer.process.pid, signal.SIGKILL)
        return 8

    committed = _until_the_writer_fails(_store_run(tmp_path / "runs.db"), first_batch_then_kill)
    assert committed == _stored(tmp_path / "runs.db")


def test_results_reach_the_writer_thread_a_batch_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hand-over wakes the thread, which then takes the GIL whenever the event loop lets go
    # of it: results are gathered on the loop and handed over together, not one by one.
    handed: list[int] = []

    class CountingQueue(queue.SimpleQueue):  # type: ignore[type-arg]
        def put(self, item: object, block: bool = True, timeout: float | None = None) -> None:
            if isinstance(item, list):
                handed.append(len(item))
            super().put(item, block, timeout)

    monkeypatch.setattr(_writer.queue, "SimpleQueue", CountingQueue)
    sink = InstantSink()

    async def main() -> None:
        writer = GroupWriter(sink, "run-1", lambda rs: None)
        for i in range(600):
            await writer.write(_case(i))
        await writer.close()

    asyncio.run(main())
    assert handed == [_writer.MAX_BATCH, _writer.MAX_BATCH, 600 - 2 * _writer.MAX_BATCH]
    assert [c for batch in sink.batches for c in batch] == [f"c{i}" for i in range(600)]


class _Stepped:
    """Awaits a coroutine and records whether it suspended on the way."""

    def __init__(self, coro: Any) -> None:
        self.coro = coro
        self.suspended = False

    def __await__(self) -> Generator[Any, None, Any]:
        value = None
        while True:
            try:
                yielded = self.coro.send(value)
            except StopIteration as stop:
                return stop.value
            self.suspended = True
            value = yield yielded


def test_writes_wait_only_while_the_pending_results_are_at_the_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Workers that grade without yielding (as with recorded outputs) and a store that is slow
    # once, then keeps up: once writes have had to wait, the next ones must not queue behind
    # them while there is room. With an asyncio.Semaphore they did (its woken waiters hold
    # the queue until they run), and then nearly every write suspended for good.
    monkeypatch.setattr(_writer, "MAX_PENDING", 64)
    monkeypatch.setattr(_writer, "MAX_BATCH", 32)
    waits: list[bool] = []
    sink = InstantSink(first_commit_s=0.05)  # the bound fills up meanwhile

    async def main() -> None:
        writer = GroupWriter(sink, "run-1", lambda rs: None)

        async def worker(start: int) -> None:
            for i in range(start, start + 500):
                step = _Stepped(writer.write(_case(i)))
                await step
                waits.append(step.suspended)
                time.sleep(0.0001)  # grading the next case (the store's thread runs meanwhile)

        await asyncio.gather(*(worker(k * 1000) for k in range(8)))
        await writer.close()

    asyncio.run(main())
    assert len(waits) == 4000 and sum(len(batch) for batch in sink.batches) == 4000
    assert sum(waits) < 400  # ~70 here; 3,936 with a semaphore


def test_a_batch_committed_just_before_the_writer_died_is_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process can die between a commit and its answer: the batch is stored, so it must
    # be reported as stored (the run's summary counts it), though its answer never came.
    monkeypatch.setattr(_writer, "MAX_BATCH", 8)
    receive = StoreWriter.receive
    answers: list[int] = []

    def lost_second_answer(self: StoreWriter) -> None:
        if len(answers) == 2:  # answers it wrote before it died are lost with it too (they
            raise self._ended()  # may be in the pipe already when it was slow to start)
        receive(self)  # the batch is committed and answered for ...
        answers.append(1)
        if len(answers) == 2:  # ... but this answer is lost with the process
            os.kill(self.pid, signal.SIGKILL)
            raise self._ended()

    monkeypatch.setattr(StoreWriter, "receive", lost_second_answer)
    committed = _until_the_writer_fails(_store_run(tmp_path / "runs.db"))
    assert len(answers) == 2  # the second batch was committed, and its answer lost
    assert committed == _stored(tmp_path / "runs.db")
