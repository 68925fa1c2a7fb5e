"""Which process runs a run, so a resume can tell a run whose process died from one still going.

A run marked `running` was either being completed by a live `assay run`, or its process was
killed (kill -9, a crash, the machine's OOM killer) before it could mark it interrupted. The
store records the run's owner (`RunOwner`) when the run is created and when a resume claims
it; a resume on the same machine then looks the process up: gone, or a different process
under the same pid (its start time differs), means the run is free to claim.

A process is identified by its host name, the kernel boot and pid namespace it lives in
(Linux: `/proc/sys/kernel/random/boot_id` and `/proc/self/ns/pid`), its pid and its start
time in clock ticks since boot (`/proc/<pid>/stat`, field 22). Only a process in the same
boot and pid namespace can be looked up; any other owner (another machine, a container with
the same host name, the time before a reboot) cannot be seen from here, so its run is left
to the user to take over (`--takeover`). Where `/proc` is missing (macOS) the start time is
unknown: a process with the owner's pid counts as the owner, so a reused pid refuses the
resume rather than letting two processes complete one run.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

__all__ = ["OwnerState", "RunOwner"]

OwnerState = Literal["alive", "gone", "elsewhere"]
"""What a resume can tell of an owner: its process still runs, it is gone, or it lives
where this process cannot look (another host, boot or pid namespace)."""

_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class RunOwner:
    """The process that runs a run (the `assay run` process, never its store writer)."""

    host: str
    """The host name, for messages and as the first test of "same machine"."""
    pid: int
    space: str | None
    """The kernel boot id and pid namespace (`<boot_id>/pid:[<inode>]`); None without /proc."""
    start_ticks: int | None
    """Start time in clock ticks since boot (/proc/<pid>/stat field 22); None without /proc."""
    started_at: str | None
    """The same start time as UTC ISO 8601, for messages; None when unknown."""

    @classmethod
    def current(cls) -> RunOwner:
        """This process."""
        pid = os.getpid()
        ticks = _start_ticks(pid)
        return cls(
            host=socket.gethostname(),
            pid=pid,
            space=_process_space(),
            start_ticks=ticks,
            started_at=_started_at(ticks),
        )

    def encode(self) -> str:
        """The stored form: JSON text with sorted keys, so the same owner is the same text
        (a claim compares it in SQL, which cannot compare JSON values on every backend)."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str | None) -> RunOwner | None:
        """The owner stored as `text`; None for a run stored without one (an older assay)
        or with one this version cannot read."""
        if text is None:
            return None
        try:
            data = json.loads(text)
            return cls(
                host=str(data["host"]),
                pid=int(data["pid"]),
                space=None if data["space"] is None else str(data["space"]),
                start_ticks=None if data["start_ticks"] is None else int(data["start_ticks"]),
                started_at=None if data["started_at"] is None else str(data["started_at"]),
            )
        except (ValueError, TypeError, KeyError):
            return None

    def state(self) -> OwnerState:
        """Whether this owner still runs, as seen from the calling process."""
        here = RunOwner.current()
        if self.host != here.host or self.space != here.space:
            return "elsewhere"
        if self.space is None:  # no /proc: the pid is all there is to look up
            return "alive" if _pid_exists(self.pid) else "gone"
        stat = _read_stat(self.pid)
        if stat is None:
            # Hidden (procfs mounted with hidepid) or gone: only the kernel can say which.
            return "alive" if _pid_exists(self.pid) else "gone"
        state, ticks = stat
        if state in {"Z", "X"}:  # a zombie writes nothing: killed, not yet reaped
            return "gone"
        return "alive" if self.start_ticks in {None, ticks} else "gone"

    def describe(self) -> str:
        """`pid 1234 on host h (started 2026-11-27T06:30:00Z)`."""
        started = f" (started {self.started_at})" if self.started_at else ""
        return f"pid {self.pid} on host '{self.host}'{started}"


def _read_stat(pid: int) -> tuple[str, int] | None:
    """The process state letter and start ticks of `pid` from /proc; None if not readable."""
    try:
        text = (_PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ')': split after it.
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


def _start_ticks(pid: int) -> int | None:
    stat = _read_stat(pid)
    return None if stat is None else stat[1]


def _process_space() -> str | None:
    """The kernel boot and pid namespace this process sees pids in; None without /proc."""
    try:
        boot = (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()
        namespace = os.readlink(_PROC / "self" / "ns" / "pid")
    except OSError:
        return None
    return f"{boot}/{namespace}"


def _started_at(ticks: int | None) -> str | None:
    """Start ticks as UTC ISO 8601, from the boot time in /proc/stat."""
    if ticks is None:
        return None
    with contextlib.suppress(OSError, ValueError):
        for line in (_PROC / "stat").read_text().splitlines():
            if line.startswith("btime "):
                seconds = int(line.split()[1]) + ticks / os.sysconf("SC_CLK_TCK")
                return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def _pid_exists(pid: int) -> bool:
    """Whether a process has this pid (signal 0 checks without sending anything)."""
    if os.name != "posix":
        return True  # cannot look: count it as running, the user takes over explicitly
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
