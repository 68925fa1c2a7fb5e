"""`/api/baselines`: list, read, pin and unpin a suite's baseline."""

from __future__ import annotations

from fastapi.testclient import TestClient

from assay.store import SQLiteStore
from tests.server.conftest import assert_error

BASE = "20260101T000000-base01"


def test_pin_read_list_and_unpin(client: TestClient, store: SQLiteStore) -> None:
    assert client.get("/api/baselines").json() == {"items": []}
    assert_error(client.get("/api/baselines/support"), 404, "not_found", "no pinned baseline")
    pinned = client.put("/api/baselines/support", json={"run_id": "20260101"})
    assert pinned.status_code == 200, pinned.text
    body = pinned.json()
    assert (body["suite"], body["run_id"]) == ("support", BASE)
    assert body["pinned_at"].startswith("20")
    assert store.get_baseline("support") is not None
    assert client.get("/api/baselines/support").json() == body
    assert client.get("/api/baselines").json() == {"items": [body]}
    assert client.delete("/api/baselines/support").json() == body
    assert store.get_baseline("support") is None
    assert_error(client.delete("/api/baselines/support"), 404, "not_found")


def test_pinning_refuses_what_cannot_be_a_baseline(client: TestClient) -> None:
    assert_error(
        client.put("/api/baselines/other", json={"run_id": "20260103T000000-live01"}),
        409,
        "conflict",
        "only a completed run can be a baseline",
    )
    assert_error(
        client.put("/api/baselines/other", json={"run_id": BASE}),
        400,
        "bad_request",
        "belongs to suite 'support'",
    )
    assert_error(
        client.put("/api/baselines/support", json={"run_id": "nope-0000"}), 404, "not_found"
    )
    for body in ({}, {"run_id": "a/b"}, {"run_id": BASE, "extra": 1}):
        assert_error(client.put("/api/baselines/support", json=body), 422, "validation_error")
    assert_error(
        client.put("/api/baselines/support", content="run", headers={"content-type": "text/plain"}),
        422,
        "validation_error",
    )
