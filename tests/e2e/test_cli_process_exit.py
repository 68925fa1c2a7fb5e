"""The `assay` executable ends its process without the interpreter's teardown, safely.

`console()` skips freeing every module and object at exit (~0.2 s after a 5,000-case run), but a
user must not see a difference: atexit handlers run, the output is flushed, a non-daemon thread
is waited for, and a failed flush ends the process as a normal exit does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from importlib.metadata import entry_points
from pathlib import Path
from typing import IO

from assay._version import __version__
from tests.e2e._cli import ASSAY, assay

# A module-level object whose finaliser prints, which happens only in the interpreter's teardown;
# an atexit handler; then `assay ARGV` through `entry`, the console entry point by default.
_SCRIPT = """
import atexit, runpy, sys, threading, time
from assay.cli import console, main

class TornDown:
    def __del__(self):
        print("torn down", flush=True)

KEPT = TornDown()
atexit.register(lambda: print("atexit handler ran"))
{extra}
sys.argv = ["assay", *{argv!r}]
{entry}
"""
# Buffered standard streams, as most users have: the flush before the process ends matters.
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _console(
    argv: list[str],
    extra: str = "",
    entry: str = "console()",
    stdout: int | IO[str] = subprocess.PIPE,
) -> subprocess.CompletedProcess[str]:
    code = _SCRIPT.format(argv=argv, extra=extra, entry=entry)
    return subprocess.run(
        [sys.executable, "-c", code],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
        env=_ENV,
    )


def test_the_process_ends_without_teardown_after_atexit_handlers_and_a_flush() -> None:
    ended = _console(["--version"])
    assert ended.returncode == 0, ended.stderr
    # Printed without a flush, after the version: both reach the pipe.
    assert ended.stdout.splitlines() == [f"assay, version {__version__}", "atexit handler ran"]
    assert "torn down" not in ended.stdout


def test_the_exit_code_of_the_command_is_the_process_exit_code(tmp_path: Path) -> None:
    ended = _console(["run", str(tmp_path / "missing.eval.yaml")])
    assert ended.returncode == 2
    assert "error:" in ended.stderr
    assert "atexit handler ran" in ended.stdout


def test_files_a_python_targets_module_left_open_are_flushed(tmp_path: Path) -> None:
    # The module opens its log when imported and writes a line per case, never flushing it.
    log = tmp_path / "agent.log"
    (tmp_path / "logging_agent.py").write_text(
        f"LOG = open({str(log)!r}, 'w')\n"
        "def answer(case):\n"
        "    LOG.write(case['id'] + '\\n')\n"
        "    return 'ok'\n"
    )
    tests = "".join(
        f"  - {{id: c{i}, input: hi, assertions: [{{type: equals, value: ok}}]}}\n"
        for i in range(3)
    )
    (tmp_path / "log.eval.yaml").write_text(
        f"name: log\ntarget: {{type: python, function: 'logging_agent:answer'}}\ntests:\n{tests}"
    )
    ended = assay("run", "log.eval.yaml", "--db", str(tmp_path / "runs.db"), cwd=tmp_path)
    assert ended.returncode == 0, ended.stderr
    assert sorted(log.read_text().split()) == ["c0", "c1", "c2"]


def test_a_running_non_daemon_thread_is_waited_for() -> None:
    thread = """
def late():
    time.sleep(0.3)
    print("thread finished", flush=True)

threading.Thread(target=late).start()
"""
    ended = _console(["--version"], extra=thread)
    assert ended.returncode == 0, ended.stderr
    assert "thread finished" in ended.stdout
    # The normal exit path, teardown included.
    assert "torn down" in ended.stdout


def test_a_failed_flush_ends_the_process_as_a_normal_exit_does(tmp_path: Path) -> None:
    buffered = "print('waiting in the buffer')"
    argv = ["run", str(tmp_path / "missing.eval.yaml")]  # writes only to stderr
    with Path("/dev/full").open("w") as full:  # every write fails: a full disk
        fast = _console(argv, extra=buffered, stdout=full)
        normal = _console(argv, extra=buffered, stdout=full, entry="main()")
    assert fast.returncode == normal.returncode == 120  # Python's status for a failed flush
    assert "No space left on device" in fast.stderr
    # The same messages, the atexit handler's failure included, but for object addresses.
    assert re.sub("0x[0-9a-f]+", "0x", fast.stderr) == re.sub("0x[0-9a-f]+", "0x", normal.stderr)


def test_the_installed_executable_and_python_m_assay_end_through_console() -> None:
    (script,) = entry_points(group="console_scripts", name="assay")
    assert script.value == "assay.cli:console"
    ended = subprocess.run(
        [ASSAY, "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    assert ended.stdout.strip() == f"assay, version {__version__}"
    ended = _console(["--version"], entry="runpy.run_module('assay', run_name='__main__')")
    assert ended.returncode == 0, ended.stderr
    assert "atexit handler ran" in ended.stdout
    assert "torn down" not in ended.stdout


def test_i21_2_a_call_abandoned_at_its_timeout_does_not_force_the_normal_exit(
    tmp_path: Path,
) -> None:
    (tmp_path / "stuck_agent.py").write_text(
        "import time\ndef answer(case):\n    time.sleep(30)\n    return 'late'\n"
    )
    (tmp_path / "stuck.eval.yaml").write_text(
        "name: stuck\ntarget: {type: python, function: 'stuck_agent:answer'}\n"
        "execution: {timeout_s: 1}\n"
        "tests:\n  - {id: c0, input: hi, assertions: [{type: equals, value: ok}]}\n"
    )
    argv = ["run", str(tmp_path / "stuck.eval.yaml"), "--db", str(tmp_path / "runs.db")]
    started = time.monotonic()
    ended = _console(argv)
    assert ended.returncode == 1, ended.stderr
    # The abandoned call's thread is a daemon: the process ends at once, without teardown.
    assert "torn down" not in ended.stdout
    assert "atexit handler ran" in ended.stdout
    assert time.monotonic() - started < 10
