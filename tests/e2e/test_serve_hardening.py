"""`assay serve` under hostile or heavy requests: a real uvicorn process over loopback sockets.

Raw sockets, not an HTTP client, because what is measured is what the server does before the
client has finished sending: whether it answers from the headers alone, how much memory it
holds, whether other requests wait.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from tests.e2e._cli import assay_env
from tests.e2e._serve import peak_rss_mb, ready, server_process

TOKEN = "e2e-token-0123456789"
_MB = 1_000_000


def _address(base: str) -> tuple[str, int]:
    host, port = base.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


_RESET = 0
"""The status `_read_response` gives a connection the server reset before its answer could
be read: it closed while the client was still sending, and the kernel then discards what it
had received (a client that sends a body the server refuses may see either)."""


def _read_response(sock: socket.socket) -> tuple[int, dict[str, object]]:
    """The status and JSON body of the response on `sock` (closed by the server or complete)."""
    data = b""
    complete = False
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length: *(\d+)", head)
        if length and len(body) >= int(length.group(1)):
            complete = True
            break
    if not complete:
        # Reset while the client was still sending: the kernel may drop the answer, or
        # part of it, as the connection resets.
        return _RESET, {}
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def _send(
    base: str,
    method: str,
    path: str,
    *,
    declared: int,
    body: Iterable[bytes] = (),
    headers: str = "",
) -> tuple[int, dict[str, object]]:
    """Send a request declaring `declared` body bytes, then `body` until the server stops
    reading; the response."""
    with socket.create_connection(_address(base), timeout=60) as sock:
        sock.sendall(
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {declared}\r\n{headers}\r\n".encode()
        )
        try:
            for chunk in body:
                sock.sendall(chunk)
        except OSError:  # the server answered and closed: the rest is never received
            pass
        return _read_response(sock)


def _json_junk(size: int) -> Iterator[bytes]:
    """`size` bytes of one JSON object holding a long list of floats, 1 MB at a time."""
    yield b'{"threshold":0.5,"x":['
    sent = 22
    chunk = b"0.5," * (_MB // 4)
    while sent + len(chunk) < size - 2:
        yield chunk
        sent += len(chunk)
    yield b"0" * (size - 2 - sent) + b"]}"


def test_i22_3_an_unauthenticated_write_is_answered_before_its_body_is_read(
    tmp_path: Path,
) -> None:
    env = assay_env(ASSAY_API_TOKEN=TOKEN)
    with server_process(tmp_path, env=env) as (base, pid), ready(base) as client:
        # Only the headers are sent: the answer cannot wait for the body.
        status, body = _send(base, "PUT", "/api/config", declared=30 * _MB)
        assert status == 401
        assert body["error"]["type"] == "unauthorized"  # type: ignore[index]

        before = peak_rss_mb(pid)
        routes = ("/api/config", "/api/baselines/support", "/api/config")
        answers: list[int] = []

        def attack(path: str) -> None:
            junk = _json_junk(30 * _MB)
            answers.append(_send(base, "PUT", path, declared=30 * _MB, body=junk)[0])

        attackers = [threading.Thread(target=attack, args=(path,)) for path in routes]
        for thread in attackers:
            thread.start()
        for thread in attackers:
            thread.join(timeout=120)
        grown = peak_rss_mb(pid) - before
        assert client.get("/api/health").status_code == 200
    assert len(answers) == 3 and set(answers) <= {401, _RESET}, answers
    # Before the fix the server parsed the three bodies: its peak grew by about 1,000 MB.
    assert grown < 50, f"the server's peak memory grew by {grown:.0f} MB"


def test_i22_3_a_small_json_body_has_a_small_limit_while_streaming(tmp_path: Path) -> None:
    env = assay_env(ASSAY_API_TOKEN=TOKEN)
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    with server_process(tmp_path, env=env) as (base, pid), ready(base) as client:
        status, body = _send(base, "PUT", "/api/config", declared=70_000, headers=auth)
        assert status == 413
        assert body["error"]["details"] == {"max_bytes": 65536}  # type: ignore[index]
        before = peak_rss_mb(pid)
        # Chunked: no length is declared, so the server counts what it receives.
        with socket.create_connection(_address(base), timeout=60) as sock:
            sock.sendall(
                b"PUT /api/config HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                b"\r\nTransfer-Encoding: chunked\r\n" + auth.encode() + b"\r\n"
            )
            try:
                for chunk in _json_junk(30 * _MB):
                    sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                sock.sendall(b"0\r\n\r\n")
            except OSError:
                pass
            status, body = _read_response(sock)
        assert status in (413, _RESET)
        if status == 413:
            assert "larger than this endpoint accepts (65,536 bytes)" in str(body)
        assert peak_rss_mb(pid) - before < 50
        # A small body still goes through.
        ok = client.put(
            "/api/config", json={"threshold": 0.7}, headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert ok.json() == {"threshold": 0.7}


def _big_export(cases: int) -> bytes:
    """An export as one JSON object of about 10 MB (`cases` case results)."""
    run = {
        "id": "20260101T000000-big001",
        "suite": "support",
        "target": "fake:echo",
        "status": "completed",
        "started_at": "2026-01-01T00:00:00.000+00:00",
        "finished_at": "2026-01-01T00:01:00.000+00:00",
        "config": {
            "threshold": 0.8,
            "borderline": 0.6,
            "metrics_pass_threshold": 0.8,
            "cases_pass_threshold": 1.0,
        },
        "summary": {"total": cases},
    }
    results = [
        {
            "case_id": f"case-{i:06d}",
            "score": 0.9,
            "verdict": "pass",
            "threshold": 0.8,
            "output": "x" * 100,
            # Many small objects: what makes decoding and re-encoding a document slow.
            "input": {"question": "q" * 50, "context": [{"k": i} for i in range(300)]},
            "duration_ms": 12.5,
            "grader_results": [
                {"name": "mentions", "type": "contains", "score": 0.9, "verdict": "pass"}
            ],
        }
        for i in range(cases)
    ]
    document = {"assay_export": 1, "run": run, "snapshot": {}, "results": results}
    return json.dumps(document, separators=(",", ":")).encode()


def test_i22_4_a_large_json_upload_does_not_stall_other_requests(tmp_path: Path) -> None:
    upload = _big_export(3_100)
    assert len(upload) > 10 * _MB
    with server_process(tmp_path) as (base, _), ready(base) as client:
        waits: list[float] = []
        done = threading.Event()

        def poll() -> None:
            while not done.is_set():
                started = time.perf_counter()
                assert client.get("/api/health").status_code == 200
                waits.append(time.perf_counter() - started)
                time.sleep(0.01)

        poller = threading.Thread(target=poll)
        poller.start()
        try:
            time.sleep(0.3)
            started = time.perf_counter()
            status, body = _send(base, "POST", "/api/runs", declared=len(upload), body=[upload])
            took = time.perf_counter() - started
        finally:
            done.set()
            poller.join()
        assert status == 201, body
        assert body["summary"]["total"] == 3_100  # type: ignore[index]
    # Before the fix the event loop decoded the document and re-encoded every case, and a
    # GET waited up to a third of the upload's time (0.67 s of 2.1 s, 1.05 s of 2.9 s); now
    # it waits about a twentieth (0.08 s of 1.7 s, 0.12 s of 2.2 s).
    worst = max(waits)
    assert worst < took / 6, f"a GET waited {worst:.2f} s during a {took:.2f} s upload"
