"""The store writer process (`python -m assay.store._writer_main`): see `StoreWriter`.

Kept apart from `_process_writer` so that running it as `__main__` does not execute a module
the `assay.store` package has already imported.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from assay.errors import UsageError
from assay.store._errors import ConflictError
from assay.store._open import open_store
from assay.store._process_writer import receive_message, send_message
from assay.store._sql import SQLStore


def _serve() -> None:
    """The child: open the store, then commit each batch and answer for it, until told to
    stop or the parent's end of the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a stray print must not corrupt the answers
    received, location = receive_message(requests)
    if not received:
        return
    store = open_store(location)
    assert isinstance(store, SQLStore)
    try:
        while True:
            received, message = receive_message(requests)
            if not received or message is None:
                return
            run_id, documents = message
            outcome: tuple[str, str] | None = None
            try:
                store.add_case_documents(run_id, documents)
            except ConflictError as exc:
                outcome = ("conflict", str(exc))
            except UsageError as exc:
                outcome = ("usage", str(exc))
            except Exception as exc:  # the parent raises it as StoreWriterError
                outcome = ("error", f"{type(exc).__name__}: {exc}")
            # A run that died cannot hear the answer; what it sent is committed all the same.
            with contextlib.suppress(BrokenPipeError):
                send_message(answers, outcome)
    finally:
        store.close()


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
