"""The store writer process (`python -m assay.store._writer_main`): see `StoreWriter`.

Kept apart from `_process_writer` so that running it as `__main__` does not execute a module
the `assay.store` package has already imported. It imports the standard library, SQLAlchemy
Core and the store's modules that hold no model (`SQLDatabase` and its backends), never
pydantic or `assay.results`: its requests are plain data, and a test keeps it so.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import IO, Any

from assay.errors import UsageError
from assay.store._database import STREAM_BATCH, SQLDatabase
from assay.store._errors import ConflictError, StoreUnavailableError
from assay.store._open_database import open_database
from assay.store._owner import RunOwner
from assay.store._writer_process import receive_message, send_message

_Outcome = tuple[str, str] | None
"""What a request's answer says: None (done), or its error's kind and message."""


def _serve() -> None:
    """The child: carry out each request and answer for it, until told to stop or the
    parent's end of the pipe closes.

    The store opens when the process learns where it is (its `StoreWriter` is made, when a
    run starts), not at start: `assay run` starts this process before it has read its
    suites, so the process's imports overlap the run's own, and a run that stops on a bad
    suite never names a store, so no database is created or migrated for it. Opened before
    the first request, the store's opening (a new database's tables: ~40 ms) overlaps the
    run's set-up instead of holding up its first case.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print must not corrupt the answers
    received, opening = receive_message(requests)
    if not received:
        return
    location, encoded_owner = opening
    owner = RunOwner.decode(encoded_owner)
    store: SQLDatabase | None = None
    refused: _Outcome = None
    try:
        store = open_database(location)
    except Exception as exc:  # the run hears why in the answer to its first request
        refused = _failure(exc)
    try:
        while True:
            received, message = receive_message(requests)
            if not received or message is None:
                return
            if store is not None and message[0] == "read":
                _, run_id, verdicts = message
                outcome = _send_documents(store, answers, run_id, verdicts)
            else:
                outcome = refused if store is None else _carry_out(store, message, owner)
            # A run that died cannot hear the answer; what it sent is committed all the same.
            with contextlib.suppress(BrokenPipeError):
                send_message(answers, outcome)
    finally:
        if store is not None:
            store.close()


def _carry_out(
    store: SQLDatabase, request: tuple[str, Any, Any], owner: RunOwner | None
) -> _Outcome:
    """One request of `StoreWriter` other than "read": `("add", run_id, documents)`,
    `("create", (RunRow, snapshot), documents)` or `("finish", run_id, FinishRow)`, on behalf
    of the run's process `owner` (the `RunRow` of a created run records it already)."""
    kind, first, second = request
    try:
        if kind == "add":
            store.add_case_documents(first, second, owner=owner)
        elif kind == "create":
            row, snapshot = first
            store.insert_run(row, snapshot, second)
        else:
            store.finish_run_row(first, second, owner=owner)
    except Exception as exc:
        return _failure(exc)
    return None


def _send_documents(
    store: SQLDatabase, answers: IO[bytes], run_id: str, verdicts: list[str] | None
) -> _Outcome:
    """`("read", run_id, verdicts)`: the run's stored case results, as `("documents",
    [text, ...])` messages of `STREAM_BATCH` each, before the request's outcome. The run's
    process reads its results back through here for its report, so it never imports
    SQLAlchemy itself (~0.2 s of its end)."""
    try:
        store.require_run(run_id)
        batch: list[str] = []
        for document in store.stream_documents(run_id, verdicts):
            batch.append(document)
            if len(batch) == STREAM_BATCH:
                send_message(answers, ("documents", batch))
                batch = []
        if batch:
            send_message(answers, ("documents", batch))
    except BrokenPipeError:  # the run stopped reading (it ended): nobody hears the rest
        return None
    except Exception as exc:
        return _failure(exc)
    return None


def _failure(exc: Exception) -> tuple[str, str]:
    """The answer for a request that failed; the parent raises it again (`receive`)."""
    if isinstance(exc, ConflictError):
        return ("conflict", str(exc))
    if isinstance(exc, StoreUnavailableError):
        return ("unavailable", str(exc))
    if isinstance(exc, UsageError):
        return ("usage", str(exc))
    return ("error", f"{type(exc).__name__}: {exc}")  # the parent raises StoreWriterError


if __name__ == "__main__":
    try:
        _serve()
    except Exception as exc:  # the parent reports the ended process; no traceback for users
        print(f"assay store writer: {type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
    # Everything is committed and the store is closed: skip the interpreter's teardown of
    # SQLAlchemy's modules (~40 ms the run waits for at its end).
    sys.stderr.flush()
    os._exit(0)
