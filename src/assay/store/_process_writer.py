"""A process of its own that commits a run's results, so storage never competes for the GIL.

Graded recordings run at thousands of cases a second, all on the event loop's thread. A
writer thread in the same process barely helps: the sqlite3 driver hands the GIL back and
forth around every row, so grading and storing take turns instead of overlapping (100,000
cases: 22 s with the thread, the store's own work ~50 µs a case). This process receives each
batch as the results' JSON documents, builds the rows and commits, while the run goes on.

Batches are committed in the order they are sent, one transaction each, and each gets an
answer (committed, or why not) in that order. The process ignores Ctrl-C, so an interrupted
run still commits everything it sent; if the run's process dies, the writer sees its input
close, commits what it received and exits.

The run's owner (`RunOwner`) is the process that started this one, never the writer: a resume
looks that process up. The writer commits only while its run is still that process's, so a
writer outliving its killed run stores nothing once a resume has claimed the run.

The process also creates and finishes the run, and it is the first to open the store: a run
that writes through it never loads SQLAlchemy or opens the database in its own process
(~0.1 s of its start-up, see `DeferredStore`). It opens the store at its first request, so a
process started early and never used touches no database. If the store cannot be opened,
every request is answered with the reason, the first of them the run's creation, before any
case runs.

The process imports neither pydantic nor the result models (`assay.results`): this process
sends it plain data (the results' JSON documents, the run's rows from `assay.store._rows`),
and it writes them through `SQLDatabase`, the code `SQLStore` writes through too. It holds
Python and SQLAlchemy Core: 40 MB once the store is open and 43 MB after committing 5,000
judged results, against 50 and 54 MB with the models (docs/benchmarks.md). The messages and
their framing are `assay.store._writer_process`'s.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any

from assay.errors import UsageError, UserError
from assay.store._errors import ConflictError, StoreUnavailableError
from assay.store._owner import RunOwner
from assay.store._rows import finish_row, run_row
from assay.store._writer_process import receive_message, send_message, start_writer_process

if TYPE_CHECKING:
    from assay.results import JSON, RunResult
    from assay.store._finish import RunFinish
    from assay.store._location import StoreLocation

__all__ = ["StoreWriter", "StoreWriterEnded", "StoreWriterError"]


class StoreWriterError(UserError):
    """The writer process failed or ended before answering for a batch.

    Reported like a user's error (a message, exit 2, no traceback): it is never a wrong
    result, the run keeps everything committed, and the message says how to complete it."""


class StoreWriterEnded(StoreWriterError):
    """The writer process ended before answering: the batches it had not answered for may
    or may not be committed (it can die between a commit and its answer)."""


class StoreWriter:
    """Commits batches of results to the store at `location` from a child process.

    `send` does not wait: call `receive` once per batch sent, in order, for its outcome
    (typically from another thread). `create_run` and `finish_run` wait for their own
    answer, so call them only while no batch is unanswered. `close` commits what was sent
    and ends the process.
    """

    def __init__(
        self, location: StoreLocation, process: subprocess.Popen[bytes] | None = None
    ) -> None:
        """Start the process (or take `process`, from `start_writer_process`), which opens
        the store at `location` at its first request (a URL may hold a password, so it
        travels through the pipe, never on the command line).

        The process writes on behalf of this one: the run it creates is recorded as run by
        this process (`RunOwner`), and it stores nothing into a run another process owns
        (a resume took it over after this process was killed)."""
        self._process = process or start_writer_process()
        assert self._process.stdin is not None and self._process.stdout is not None
        self._location = location
        self._owner = RunOwner.current()
        self._reading = False
        self._input = self._process.stdin
        self._output = self._process.stdout
        send_message(self._input, (location, self._owner.encode()))

    @property
    def pid(self) -> int:
        """The writer's process id."""
        return self._process.pid

    def send(self, run_id: str, documents: list[str]) -> None:
        """Queue one batch (the results' JSON documents) for commit, in one transaction.

        Raises:
            StoreWriterError: The process has ended.
        """
        self._send(("add", run_id, documents))

    def create_run(self, run: RunResult, snapshot: dict[str, JSON]) -> None:
        """`ResultSink.create_run`, done by the process; waits until it is committed.

        Raises:
            UsageError: The store cannot be opened, or the run exists already.
            StoreWriterError: The database failed, or the process ended.
        """
        # The snapshot goes as it is (plain data; its suite document is one `RawJSON` text)
        # and is encoded by the process: encoding it here held it several times over.
        documents = [result.model_dump_json() for result in run.results]
        self._send(("create", (run_row(run, self._owner), snapshot), documents))
        self.receive()

    def finish_run(
        self,
        run_id: str,
        finish: RunFinish,
    ) -> None:
        """`ResultSink.finish_run`, done by the process; waits until it is committed.

        Raises:
            UsageError: The run does not exist or is finished.
            StoreWriterError: The database failed, or the process ended.
        """
        self._send(("finish", run_id, finish_row(finish)))
        self.receive()

    def _send(self, request: tuple[str, Any, Any]) -> None:
        try:
            send_message(self._input, request)
        except (BrokenPipeError, ValueError):
            raise self._ended() from None

    def receive(self) -> None:
        """Wait for the outcome of the oldest batch not yet answered for.

        Raises:
            ConflictError: A case of the batch is already stored for the run.
            StoreUnavailableError: The database failed (locked, full, damaged, unreachable).
            UsageError: The run does not exist or is finished.
            StoreWriterError: The database failed.
            StoreWriterEnded: The process ended first.
        """
        received, outcome = receive_message(self._output)
        if not received:
            raise self._ended()
        self._raise_outcome(outcome)

    def _raise_outcome(self, outcome: Any) -> None:
        """Nothing for a request that succeeded (None); its error otherwise."""
        if outcome is None:
            return
        kind, message = outcome
        kinds = {
            "conflict": ConflictError,
            "unavailable": StoreUnavailableError,
            "usage": UsageError,
        }
        raise kinds.get(kind, StoreWriterError)(message)

    @property
    def reading(self) -> bool:
        """Whether a `read_documents` iterator is being read (its answers are in flight)."""
        return self._reading

    @property
    def alive(self) -> bool:
        """Whether the process is still running (it can answer a request)."""
        return self._process.poll() is None

    def read_documents(self, run_id: str, verdicts: Collection[str] | None = None) -> Iterator[str]:
        """The run's stored case results as their JSON documents, in stored order (with
        `verdicts`, only those), read by the process, which has the store open: the run's
        own process reads its results back for its report without importing SQLAlchemy.

        Call it only while no batch is unanswered (after the run is finished), and read the
        iterator to its end: one left unfinished ends the process, whose answers would
        otherwise be out of step.

        Raises:
            NotFoundError: No run has this exact id (as `UsageError`).
            StoreWriterError: The database failed, or the process ended.
        """
        self._reading = True
        self._send(("read", run_id, None if verdicts is None else list(verdicts)))
        finished = False
        try:
            while True:
                received, message = receive_message(self._output)
                if not received:
                    raise self._ended()
                if isinstance(message, tuple) and message[0] == "documents":
                    yield from message[1]
                    continue
                finished = True
                self._raise_outcome(message)
                return
        finally:
            self._reading = False
            if not finished:
                self._process.kill()
                self._close_streams()
                self._process.wait()

    def stored_case_ids(self, run_id: str) -> set[str]:
        """The case ids the store holds for the run, read from this process: after the
        writer ended without answering, what it committed of its last batches.

        Raises:
            UsageError: The run does not exist.
        """
        from assay.store._open import open_location  # SQLAlchemy, and it imports this module

        store = open_location(self._location)
        try:
            return {score.case_id for score in store.iter_case_scores(run_id)}
        finally:
            store.close()

    def close(self) -> None:
        """Ask the process to end once everything sent is committed, and wait for it."""
        with contextlib.suppress(BrokenPipeError, ValueError):  # gone: `receive` says so
            send_message(self._input, None)
        self._close_streams()
        self._process.wait()

    def _close_streams(self) -> None:
        for stream in (self._input, self._output):
            # Closing flushes; a dead reader's pipe refuses what is left, which is lost anyway.
            with contextlib.suppress(BrokenPipeError):
                stream.close()

    def _ended(self) -> StoreWriterEnded:
        code = self._process.wait()
        return StoreWriterEnded(
            f"the store writer process ended unexpectedly (exit code {code}); "
            "the results it had not committed are not stored: complete the run with --resume"
        )
