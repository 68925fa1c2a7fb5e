"""Writes need the bearer token when one is configured; reads never do; loopback detection."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.types import Message

from assay.server import LOOPBACK_NAMES, create_app, is_loopback
from assay.server._security import SMALL_BODY_BYTES
from assay.store import SQLiteStore
from tests.server.conftest import TOKEN, assert_error

WRITES = [
    ("post", "/api/runs"),
    ("delete", "/api/runs/20260101T000000-base01"),
    ("put", "/api/baselines/support"),
    ("delete", "/api/baselines/support"),
    ("put", "/api/config"),
]


@pytest.mark.parametrize(("method", "url"), WRITES)
def test_writes_without_the_token_are_unauthorized(
    secured: TestClient, method: str, url: str
) -> None:
    response = secured.request(method, url, json={"run_id": "20260101T000000-base01"})
    assert_error(response, 401, "unauthorized", "Authorization: Bearer")
    assert response.headers["www-authenticate"] == "Bearer"
    for header in ("Basic dXNlcjpwYXNz", f"Token {TOKEN}", "Bearer"):
        assert_error(
            secured.request(method, url, headers={"Authorization": header}), 401, "unauthorized"
        )
    wrong = secured.request(method, url, headers={"Authorization": f"Bearer {TOKEN}x"})
    assert_error(wrong, 403, "forbidden", "does not match")


def test_the_right_token_lets_writes_through(secured: TestClient) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    pinned = secured.put(
        "/api/baselines/support", json={"run_id": "20260101T000000-base01"}, headers=auth
    )
    assert pinned.status_code == 200
    assert secured.put("/api/config", json={"threshold": 0.5}, headers=auth).status_code == 200
    deleted = secured.delete("/api/runs/20260102T000000-head01", headers=auth)
    assert deleted.status_code == 200


def test_reads_need_no_token(secured: TestClient) -> None:
    for url in ("/api/runs", "/api/baselines", "/api/config", "/api/runs/20260101/results"):
        assert secured.get(url).status_code == 200


def test_without_a_token_writes_are_open(client: TestClient) -> None:
    assert client.put("/api/config", json={"threshold": 0.5}).status_code == 200


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.com", False),
        ("localhost.example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(
    ("host", "answered"),
    [
        ("localhost:8321", True),
        ("127.0.0.1:8321", True),
        ("[::1]:8321", True),
        ("LOCALHOST", True),
        ("evil.example:8321", False),  # a DNS-rebinding page keeps its own name
        ("127.0.0.1.evil.example", False),
        ("", False),
    ],
)
def test_only_the_allowed_host_names_are_answered(
    store: SQLiteStore, config_path: Path, host: str, answered: bool
) -> None:
    app = create_app(store, config_path=config_path, allowed_hosts=LOOPBACK_NAMES)
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/api/runs", headers={"host": host})
    if answered:
        assert response.status_code == 200, response.text
    else:
        assert_error(
            response,
            421,
            "misdirected_request",
            "this server answers requests addressed to 127.0.0.1, ::1, localhost only; to "
            "serve another name, start it with --allowed-host NAME",
        )


def test_without_allowed_hosts_any_name_is_answered(client: TestClient) -> None:
    assert client.get("/api/runs", headers={"host": "runs.example.com"}).status_code == 200


def _call_without_body(
    app: FastAPI, method: str, path: str, headers: list[tuple[bytes, bytes]]
) -> tuple[int, dict[bytes, bytes], Any, list[str]]:
    """Call the ASGI app with a request whose body is never sent; the status, the body
    answered, and how often the app asked for the request body."""
    asked: list[str] = []
    sent: list[Message] = []

    async def receive() -> Message:
        asked.append("receive")
        await asyncio.sleep(3600)  # a client that declared 30 MB and sends nothing yet
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method.upper(),
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1"), (b"content-length", b"30000000"), *headers],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8321),
    }

    async def call() -> None:
        await asyncio.wait_for(app(scope, receive, send), timeout=10)

    asyncio.run(call())
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), json.loads(body), asked


@pytest.mark.parametrize(("method", "url"), WRITES)
def test_i22_3_the_token_is_checked_before_the_body_is_read(
    store: SQLiteStore, config_path: Path, method: str, url: str
) -> None:
    app = create_app(store, token=TOKEN, config_path=config_path)
    for headers, status in (([], 401), ([(b"authorization", b"Bearer nope")], 403)):
        answered, response_headers, body, asked = _call_without_body(app, method, url, headers)
        assert (answered, body["error"]["type"]) == (status, _KINDS[status])
        assert asked == []  # answered from the headers: not one byte of the body was read
        assert response_headers[b"connection"] == b"close"


_KINDS = {401: "unauthorized", 403: "forbidden"}


@pytest.mark.parametrize("url", ["/api/config", "/api/baselines/support"])
def test_i22_3_a_body_other_than_an_upload_has_a_small_limit(secured: TestClient, url: str) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    declared = secured.put(url, content=b" " * (SMALL_BODY_BYTES + 1), headers=auth)
    error = assert_error(declared, 413, "payload_too_large", "larger than this endpoint accepts")
    assert error["details"] == {"max_bytes": 65536}

    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            yield b" " * 10_000

    streamed = secured.put(url, content=chunks(), headers=auth)
    assert_error(streamed, 413, "payload_too_large", "(65,536 bytes)")
    assert "content-length" not in streamed.request.headers
    # An upload keeps the server's upload limit (200,000 bytes in these tests).
    upload = secured.post(
        "/api/runs",
        content=b"\n" * 100_000,
        headers={**auth, "content-type": "application/x-ndjson"},
    )
    assert_error(upload, 400, "bad_request", "empty")


def test_i22_16_no_page_loads_scripts_or_styles_from_another_host(client: TestClient) -> None:
    assert_error(client.get("/api/docs"), 404, "not_found")
    assert_error(client.get("/api/redoc"), 404, "not_found")
    assert client.get("/api/openapi.json").status_code == 200
    pages = ["/", "/runs/20260101T000000-base01", "/runs/20260101T000000-base01/cases/crash"]
    pages += ["/compare", "/settings", "/static/studio.js", "/static/studio.css"]
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        # Any absolute URL but the SVG namespace (a name, never fetched) reaches elsewhere.
        external = set(re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}", response.text))
        assert external <= {"http://www.w3.org", "//www.w3.org"}, (page, external)
