"""How a user command ended, and stopping it with everything it started."""

from __future__ import annotations

import subprocess
import sys
import time

from assay._processes import exit_reason, kill_group


def test_exit_reasons() -> None:
    assert exit_reason(3) == "exited with code 3"
    assert exit_reason(-9) == "was killed by SIGKILL"
    assert exit_reason(-200) == "was killed by signal 200"
    assert exit_reason(None) == "exited with code None"


def test_kill_group_stops_the_children_too() -> None:
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time; "
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
            "print(c.pid, flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert parent.stdout is not None
    with parent.stdout:
        child = int(parent.stdout.readline())
    kill_group(parent.pid)
    assert parent.wait(timeout=10) == -9
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{child}/stat") as stat:
                if stat.read().split()[2] == "Z":  # reaped later by init; it is dead
                    break
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the child survived")
    kill_group(parent.pid)  # already gone: no error
