"""The group-commit writer: order, batching under load, bounded pending, errors surface."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

import pytest

from assay.results import CaseResult
from assay.runner import _writer
from assay.runner._writer import GroupWriter


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
    batches: list[list[str]] = []

    class InstantSink:
        def add_case_results(self, run_id: str, results: Sequence[CaseResult]) -> None:
            batches.append([r.case_id for r in results])

    async def main() -> None:
        writer = GroupWriter(InstantSink(), "run-1", lambda rs: None)
        for i in range(5):
            await writer.write(_case(i))
            await asyncio.sleep(0.001)
        await writer.close()

    asyncio.run(main())
    assert batches == [[f"c{i}" for i in range(5)]]
