"""A real Ray cluster for the Ray executor's tests: `ray start --head` on loopback, 2 CPUs.

The head runs with `--block` as a child of the test session and is stopped through that
process (SIGTERM drains and stops every process of this cluster only); `ray stop` would stop
every Ray cluster of the machine's user.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

RAY = str(Path(sys.executable).with_name("ray"))
LOOPBACK_ENV = {
    "RAY_USAGE_STATS_ENABLED": "0",
    # Ray maps 127.0.0.1 to the machine's routable address unless local-only mode is on.
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
}
"""Environment of the head and of every driver (`assay run`) in these tests."""
START_TIMEOUT_S = 60.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _log(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-4000:]


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """The `HOST:PORT` of a running two-CPU cluster, stopped after the module's tests (its
    processes would otherwise idle through the rest of the session).

    Without Ray the tests fail under CI (`make test` installs it with `.[dev]`) and skip
    elsewhere.
    """
    if importlib.util.find_spec("ray") is None:
        message = "ray is not installed: pip install 'assay[ray]'"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    port = _free_port()
    # Short: Ray's Unix socket paths live under it and must stay under 107 characters.
    temp = Path(tempfile.mkdtemp(prefix="assay-ray-", dir="/tmp"))
    log = temp / "head.log"
    command = [
        RAY,
        "start",
        "--head",
        "--block",
        "--node-ip-address=127.0.0.1",
        f"--port={port}",
        "--num-cpus=2",
        "--object-store-memory=100000000",  # 100 MB: results travel as small JSON texts
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--temp-dir={temp}",
    ]
    with log.open("wb") as out:
        head = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **LOOPBACK_ENV},
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while "Ray runtime started" not in _log(log):
            if head.poll() is not None:
                pytest.fail(f"`ray start --head` exited with {head.returncode}:\n{_log(log)}")
            if time.monotonic() > deadline:
                pytest.fail(f"Ray did not start within {START_TIMEOUT_S} s:\n{_log(log)}")
            time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        head.send_signal(signal.SIGTERM)
        try:
            head.wait(timeout=45)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(head.pid, signal.SIGKILL)  # the head's own process group only
            head.wait(timeout=10)
        shutil.rmtree(temp, ignore_errors=True)
