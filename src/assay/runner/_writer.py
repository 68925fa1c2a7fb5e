"""Results go to the store from one thread of their own, in batches, without stalling cases.

A worker hands its graded result to `write` and goes on with its next case; the writer thread
commits whatever has queued up in one transaction (group commit), in the order results
finished. A commit therefore never blocks the event loop, and under load the store costs one
transaction per batch instead of one per case. At most `MAX_PENDING` results wait at any time,
so memory stays flat when the store is slower than the cases; `close` commits the rest.

Runs commit through the store's writer process instead (`assay.store.StoreWriter`) when one
was started for them (`assay run` starts it first thing) or they have at least
`PROCESS_MIN_CASES` cases to go: the results' JSON documents are made on the event loop a batch
at a time, the thread only sends each batch on, and a second thread collects the answers, so
the database's work overlaps grading instead of taking turns with it for the GIL. Other short
runs (the Python API's) do not pay for starting that process. Such a run is created and
finished through the process too (`assay.runner._execute`), so its own process need not open
the store at all.

If the process is killed, results still queued (the last 50 ms) are lost and
`--resume` runs those cases again: none is ever stored twice.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable

from assay.results import CaseResult
from assay.store import DeferredStore, ResultSink, StoreWriter, StoreWriterEnded

__all__ = [
    "LINGER_S",
    "MAX_BATCH",
    "MAX_PENDING",
    "PROCESS_MIN_CASES",
    "GroupWriter",
    "end_writer_process",
    "start_writer_process",
]

MAX_BATCH = 256
"""Most results in one transaction."""
MAX_PENDING = 2048
"""Most results handed over but not yet committed; `write` waits beyond this. Eight batches:
with two, a fast run (graded recordings) stalled whenever the writer process's answer for a
batch came late, ~9% of its time idle; memory stays bounded at a few MB of results."""
LINGER_S = 0.05
"""How long a result waits on the event loop for others before they go to the thread.

Every hand-over wakes the writer thread (and, with a writer process, the thread collecting
its answers), and a woken thread takes the GIL from the event loop: ~0.4 ms of the loop's
time per batch. A run of 5,000 model calls at c=64 finishes ~1,200 cases a second; waiting
10 ms made ~400 batches and cost it 0.16 s (5.44 -> 5.28 s whole process); 50 ms and 500 ms
measured the same. A transaction also costs about as much as writing dozens of rows. The
price: results reach the store up to 50 ms after they are graded."""
PROCESS_MIN_CASES = 2000
"""Runs with at least this many cases to go commit through a writer process (starting one
costs about 0.3 s of CPU, which a run of graded recordings this long repays)."""


_Item = tuple[CaseResult, str | None]
"""A queued result, with its JSON document when it goes to the writer process."""


def start_writer_process(sink: ResultSink, cases: int) -> StoreWriter | None:
    """The writer process for a run with `cases` to go, for `GroupWriter`.

    None when the run is too short to repay starting one (`PROCESS_MIN_CASES`) or the sink
    cannot be written from another process; one started for the sink already (`assay run`
    starts it first thing: `DeferredStore`) is used whatever the run's size. A run starts
    it before its target's set-up, so the process's start-up uses the other core while the
    SDK is imported rather than while the first requests are in flight.
    """
    started = isinstance(sink, DeferredStore) and sink.writer_started  # paid for already
    return sink.spawn_writer() if started or cases >= PROCESS_MIN_CASES else None


def end_writer_process(sink: ResultSink, process: StoreWriter) -> None:
    """The run is finished through `process`: a `DeferredStore` keeps it, to read the run's
    results back for the command's report (and to write the next run), so the command never
    opens the store itself; any other sink's ends now."""
    if isinstance(sink, DeferredStore):
        sink.keep_writer(process)
    else:
        process.close()


class GroupWriter:
    """Writes the case results of one run to a sink from a dedicated thread."""

    def __init__(
        self,
        sink: ResultSink,
        run_id: str,
        on_committed: Callable[[list[CaseResult]], None],
        *,
        process: StoreWriter | None = None,
    ) -> None:
        """Start the writer thread; `on_committed` runs on the event loop after each commit.

        With a `process` (from `start_writer_process`), batches go through it; its owner
        ends it after `close`, once the run is finished through it too.
        """
        self._sink = sink
        self._run_id = run_id
        self._on_committed = on_committed
        self._loop = asyncio.get_running_loop()
        self._unsettled = 0
        """Results written and not yet committed (or refused); `write` waits at MAX_PENDING."""
        self._room: asyncio.Future[None] | None = None
        """Set when a commit frees room, for the writes waiting for it."""
        self._pending: list[CaseResult] = []
        """Results written since the last hand-over to the thread."""
        self._flush_timer: asyncio.TimerHandle | None = None
        self._queue: queue.SimpleQueue[list[_Item] | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._process = process
        self._sent: queue.SimpleQueue[list[_Item] | None] = queue.SimpleQueue()
        self._answers = threading.Thread(
            target=self._collect, name="assay-store-answers", daemon=True
        )
        if self._process is not None:
            self._answers.start()
        self._thread = threading.Thread(target=self._drain, name="assay-store", daemon=True)
        self._thread.start()

    async def write(self, result: CaseResult) -> None:
        """Queue `result` for the next commit.

        Results are gathered here, on the event loop, and handed to the thread a batch at a
        time: a hand-over per result woke the thread for each, and a woken thread takes the
        GIL whenever the loop lets go of it (every RE2 match, every socket call), so the loop
        waited for it again: an RE2 match took ~60 µs instead of 4.

        Raises:
            Exception: what the sink raised for an earlier batch (e.g. a full disk).
        """
        self._raise_error()
        # A count and one shared future rather than an asyncio.Semaphore: once a semaphore
        # has a waiter, every later acquire queues behind it (FIFO), so under a steady load
        # each write suspended and was woken through the event loop (~15 µs a case).
        while self._unsettled >= MAX_PENDING:
            if self._room is None:
                self._room = self._loop.create_future()
            await asyncio.shield(self._room)  # a cancelled writer must not cancel the others
        self._unsettled += 1
        self._pending.append(result)
        if len(self._pending) >= MAX_BATCH:
            self._flush()
        elif self._flush_timer is None:
            self._flush_timer = self._loop.call_later(LINGER_S, self._flush)

    def _flush(self) -> None:
        """Hand the gathered results to the thread as one batch."""
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        if self._pending:
            # The writer process gets JSON documents. They are made here, on the event loop,
            # so the thread never holds the GIL for long; and a batch at a time, ~8 µs each
            # rather than ~21 µs made one at a time between replies (the serializer cold).
            process = self._process is not None
            self._queue.put([(r, r.model_dump_json() if process else None) for r in self._pending])
            self._pending = []

    @property
    def process(self) -> StoreWriter | None:
        """The writer process this run commits through, if any."""
        return self._process

    async def close(self) -> None:
        """Commit everything queued, stop the threads, and raise a write error if one
        happened."""
        self._flush()
        self._queue.put(None)
        await asyncio.to_thread(self._join)
        self._raise_error()

    def _join(self) -> None:
        self._thread.join()
        if self._process is not None:
            self._sent.put(None)
            self._answers.join()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    def _drain(self) -> None:
        while (batch := self._queue.get()) is not None:
            if self._process is not None and self._error is None:
                self._send(self._process, batch)
                continue
            committed = False
            if self._error is None:
                try:
                    self._sink.add_case_results(self._run_id, [result for result, _ in batch])
                    committed = True
                except BaseException as exc:  # handed to the event loop by `write` / `close`
                    self._error = exc
            self._loop.call_soon_threadsafe(self._settle, batch, committed)

    def _send(self, process: StoreWriter, batch: list[_Item]) -> None:
        """Hand a batch to the writer process; `_collect` settles it when it is answered."""
        try:
            process.send(self._run_id, [document or "" for _, document in batch])
        except BaseException as exc:
            self._error = self._error or exc  # the answers thread may have failed first
            self._loop.call_soon_threadsafe(self._settle, batch, False)
            return
        self._sent.put(batch)

    def _collect(self) -> None:
        """The answers thread: settle each sent batch, in order, as the process answers."""
        assert self._process is not None
        stored: set[str] | None = None
        while (batch := self._sent.get()) is not None:
            committed = False
            try:
                self._process.receive()
                committed = True
            except StoreWriterEnded as exc:
                self._error = self._error or exc
                # It may have died between a commit and its answer: what the store holds
                # (read once; nothing commits after the process is gone) is what counts.
                stored = self._stored_ids(self._process) if stored is None else stored
                done = [item for item in batch if item[0].case_id in stored]
                self._loop.call_soon_threadsafe(self._settle, done, True)
                batch = [item for item in batch if item[0].case_id not in stored]
            except BaseException as exc:
                self._error = self._error or exc
            self._loop.call_soon_threadsafe(self._settle, batch, committed)

    def _stored_ids(self, process: StoreWriter) -> set[str]:
        """The case ids stored for the run; none when the store cannot be read either."""
        try:
            return process.stored_case_ids(self._run_id)
        except Exception:
            return set()

    def _settle(self, batch: list[_Item], committed: bool) -> None:
        """On the event loop: free the slots, and report what is now stored."""
        self._unsettled -= len(batch)
        if self._room is not None:
            self._room.set_result(None)
            self._room = None
        if committed:
            self._on_committed([result for result, _ in batch])
