"""Child processes of user commands: running one to its end, stopping its whole process group,
and why it ended.

A leaf module shared by the `command` target and `code-grader`, which run user commands the same
way: each in its own session, its whole process group killed once it ends (normally, on timeout,
on an error or on cancellation), so nothing it started outlives it, and the same reasons.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Sequence

__all__ = ["OutputTooLarge", "exit_reason", "feed", "kill_group", "read", "run_group"]

GRACE_S = 2.0
"""How long the pipes may take to close once the group is killed (a process that left the
group may hold them for ever)."""


class OutputTooLarge(Exception):
    """A command printed more than the reader's cap."""


def kill_group(pid: int) -> None:
    """Kill the command and everything it started (it leads its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":  # pragma: no cover — no process groups there
            os.kill(pid, signal.SIGTERM)
        else:
            os.killpg(pid, signal.SIGKILL)


async def feed(stream: asyncio.StreamWriter | None, data: bytes) -> None:
    """Write `data` to stdin and close it; a command that exits without reading it is not an
    error."""
    assert stream is not None
    try:
        stream.write(data)
        await stream.drain()
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        stream.close()


async def read(
    stream: asyncio.StreamReader | None,
    sink: bytearray,
    *,
    cap: int | None = None,
    tail: int | None = None,
) -> None:
    """Read to EOF into `sink`, keeping only the last `tail` bytes when given.

    Raises:
        OutputTooLarge: More than `cap` bytes arrived.
    """
    assert stream is not None
    while chunk := await stream.read(65_536):
        sink += chunk
        if tail is not None:
            del sink[:-tail]
        elif cap is not None and len(sink) > cap:
            raise OutputTooLarge(f"printed more than {cap // (1024 * 1024)} MB")


async def run_group(
    process: asyncio.subprocess.Process,
    io: Sequence[asyncio.Future[None]],
    timeout_s: float | None,
) -> None:
    """Wait for the command to exit, then kill its process group and read its pipes to the end.

    The group is killed however the wait ends (the command exited, timed out, an I/O task
    failed, or the caller was cancelled), so a child it left running (`sleep 300 &`) dies
    with it. Output already in the pipes is still read.

    Raises:
        TimeoutError: The command ran past `timeout_s`.
        OutputTooLarge: An I/O task raised it (the first error of `io` propagates).
    """
    waiter = asyncio.ensure_future(_exited(process))
    exited = False
    try:
        async with asyncio.timeout(timeout_s):
            pending: set[asyncio.Future[None]] = {waiter, *io}
            while not waiter.done():
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for finished in done:
                    finished.result()  # an I/O task's error ends the wait
        exited = True
    finally:
        kill_group(process.pid)
        # With the group gone its pipes close; a process that left the group may keep them.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GRACE_S
        _, late = await asyncio.wait([waiter, *io], timeout=GRACE_S)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        # What a failed reader left in a pipe is read off, which lets asyncio close it.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.communicate(), max(deadline - loop.time(), 0.1))
        if not exited:  # its own error propagates; the I/O tasks' are beside the point
            for task in io:
                if task.done() and not task.cancelled():
                    task.exception()
    for task in io:
        if not task.cancelled():
            task.result()


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Return once the command itself has exited.

    `Process.wait()` alone is not enough: on Python 3.11 it returns only once the pipes have
    closed too, which a child holding them (`sleep 300 &`) delays for as long as it runs. The
    exit status is set as soon as the process exits, so it is polled alongside (5 ms at first,
    backing off to 100 ms).
    """
    waiting = asyncio.ensure_future(process.wait())
    delay = 0.005
    try:
        while process.returncode is None and not waiting.done():
            await asyncio.wait([waiting], timeout=delay)
            delay = min(delay * 2, 0.1)
    finally:
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)


def exit_reason(returncode: int | None) -> str:
    """`exited with code 3`, `was killed by SIGKILL`: how a finished command ended."""
    if returncode is not None and returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"
