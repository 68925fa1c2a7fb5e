"""Starting the store writer process, and the messages on its pipes, importing nothing heavy.

`assay run` starts the process first thing, before it imports its own modules or reads its
suites, so the process's start-up overlaps the run's on another core (`DeferredStore`); the
module therefore imports only the standard library. The writer process reads its requests
with it too, and stays free of pydantic and the result models (`StoreWriter`).

Messages are length-prefixed pickles of plain values (str, dict, list, None, and the
`StoreLocation` and encoded `RunOwner` that open the conversation), over the child's stdin
and stdout; both ends are this installation's, so nothing else ever writes to the pipes.
"""

from __future__ import annotations

import contextlib
import pickle
import subprocess
import sys
from typing import IO, Any

__all__ = ["end_unused_writer", "receive_message", "send_message", "start_writer_process"]

_HEADER = 4


def start_writer_process() -> subprocess.Popen[bytes]:
    """A new writer process (`assay.store._writer_main`), waiting for its store's location."""
    return subprocess.Popen(
        [sys.executable, "-m", "assay.store._writer_main"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )


def end_unused_writer(process: subprocess.Popen[bytes]) -> None:
    """End a writer process that was never sent a request (and so never opened its store).

    Killed rather than waited for: it may still be importing, and a command that stops on a
    bad suite should not wait ~0.3 s for a process it never used. One that was used has
    ended already (`StoreWriter.close` waits for it), and this only reaps it.
    """
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    if process.poll() is None:
        process.kill()
    process.wait()


def send_message(stream: IO[bytes], message: Any) -> None:
    """Write one message and flush it."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(_HEADER, "big") + data)
    stream.flush()


def receive_message(stream: IO[bytes]) -> tuple[bool, Any]:
    """(True, message), or (False, None) when the other end closed the stream."""
    header = stream.read(_HEADER)
    if len(header) < _HEADER:
        return False, None
    size = int.from_bytes(header, "big")
    data = stream.read(size)
    if len(data) < size:
        return False, None
    return True, pickle.loads(data)  # noqa: S301 -- written by this module's other end
