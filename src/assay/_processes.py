"""Child processes of user commands: stopping a whole process group, and why one ended.

A leaf module shared by the `command` target and `code-grader`, which run user commands the same
way (each in its own session, killed with everything it started) and report the same reasons.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

__all__ = ["exit_reason", "kill_group"]


def kill_group(pid: int) -> None:
    """Kill the command and everything it started (it leads its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sys.platform == "win32":  # pragma: no cover — no process groups there
            os.kill(pid, signal.SIGTERM)
        else:
            os.killpg(pid, signal.SIGKILL)


def exit_reason(returncode: int | None) -> str:
    """`exited with code 3`, `was killed by SIGKILL`: how a finished command ended."""
    if returncode is not None and returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"
