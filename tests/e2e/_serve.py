"""A real `assay serve` process for the end-to-end tests, and a client that waits for it."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2 as httpx

from tests.e2e._cli import ASSAY, assay_env

__all__ = ["peak_rss_mb", "ready", "server_process", "serving"]

_URL = re.compile(r"the studio at http://(\S+?):(\d+)/ and the API under /api")


@contextmanager
def serving(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run `assay serve --port 0 ARGS` until the block ends; yields its base URL."""
    with server_process(cwd, *args, env=env) as (base, _):
        yield base


def peak_rss_mb(pid: int) -> float:
    """The most resident memory process `pid` has used so far (Linux `VmHWM`), in MB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    assert match, status
    return int(match.group(1)) / 1024


@contextmanager
def server_process(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, int]]:
    """`serving`, yielding the base URL and the server's process id."""
    proc = subprocess.Popen(
        [ASSAY, "serve", "--port", "0", *args],
        cwd=cwd,
        env=env if env is not None else assay_env(),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    drain: threading.Thread | None = None
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        match = _URL.search(first)
        assert match, f"no URL in: {first!r}{proc.stderr.read() if proc.poll() is not None else ''}"
        host, port = match.groups()
        # Drain the request log: a full pipe would block the server.
        drain = threading.Thread(target=proc.stderr.read, daemon=True)
        drain.start()
        url = f"http://127.0.0.1:{port}" if host in ("0.0.0.0", "127.0.0.1") else first
        yield url, proc.pid
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if drain is not None:
            drain.join(timeout=5)
        if proc.stderr is not None:
            proc.stderr.close()


@contextmanager
def ready(base: str) -> Iterator[httpx.Client]:
    """A client of the server at `base`, once it answers `/api/health`."""
    with httpx.Client(base_url=base, timeout=10) as client:
        for _ in range(100):
            try:
                if client.get("/api/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise AssertionError(f"{base} never answered /api/health")
        yield client
