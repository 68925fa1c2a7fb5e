"""Writes need the bearer token when one is configured; reads never do; loopback detection."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from assay.server import LOOPBACK_NAMES, create_app, is_loopback
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
