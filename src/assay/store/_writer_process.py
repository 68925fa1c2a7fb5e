"""Starting the store writer process, importing nothing heavy.

`assay run` starts the process first thing, before it imports its own modules or reads its
suites, so the process's start-up overlaps the run's on another core (`DeferredStore`); the
module therefore imports only the standard library.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys

__all__ = ["end_unused_writer", "start_writer_process"]


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
