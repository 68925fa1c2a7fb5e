"""Every error answers with the envelope: unknown routes, methods, validation, size, bugs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from fastapi.testclient import TestClient

from assay.server import create_app
from assay.store import SQLiteStore
from tests.server.conftest import assert_error


def test_unknown_routes_and_methods(client: TestClient) -> None:
    assert_error(client.get("/api/nope"), 404, "not_found", "no such endpoint: GET /api/nope")
    assert_error(client.get("/api/runs/x/y/z"), 404, "not_found")
    error = assert_error(client.post("/api/baselines"), 405, "method_not_allowed")
    assert error["message"] == "POST is not allowed on /api/baselines; allowed: GET"
    response = client.patch("/api/runs/20260101T000000-base01")
    assert_error(response, 405, "method_not_allowed")
    assert response.headers["allow"]


def test_validation_errors_list_every_invalid_parameter(client: TestClient) -> None:
    error = assert_error(
        client.get("/api/runs", params={"page": 0, "page_size": 0}), 422, "validation_error"
    )
    assert error["message"].startswith("query.page: Input should be greater than or equal to 1")
    assert error["message"].endswith("(and 1 more)")
    assert [d["loc"] for d in error["details"]] == [["query", "page"], ["query", "page_size"]]
    assert set(error["details"][0]) == {"loc", "msg", "type"}


def test_a_declared_body_over_the_limit_is_refused_before_it_is_read(client: TestClient) -> None:
    error = assert_error(
        client.post(
            "/api/runs", content=b"x" * 200_001, headers={"content-type": "application/x-ndjson"}
        ),
        413,
        "payload_too_large",
        "--max-upload-mb",
    )
    assert error["details"] == {"max_bytes": 200_000}


def test_a_streamed_body_is_stopped_at_the_limit(client: TestClient) -> None:
    sent: list[int] = []

    def chunks() -> Iterator[bytes]:
        for _ in range(100):
            sent.append(1)
            yield b"y" * 10_000

    response = client.post(
        "/api/runs", content=chunks(), headers={"content-type": "application/x-ndjson"}
    )
    assert_error(response, 413, "payload_too_large")
    assert "content-length" not in response.request.headers


def test_a_bug_is_a_500_envelope_without_a_traceback(tmp_path: Path) -> None:
    class Broken(SQLiteStore):
        def list_baselines(self):  # type: ignore[no-untyped-def]
            raise RuntimeError("secret internals at /srv/data")

    store = Broken(tmp_path / "b.db")
    app = create_app(store, config_path=tmp_path / "c.yaml")
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/api/baselines")
    store.close()
    error = assert_error(response, 500, "internal_error", "this is a bug in assay")
    assert "secret" not in response.text
    assert error["details"] is None


def test_health_answers_without_opening_a_store(tmp_path: Path) -> None:
    app = create_app(tmp_path / "never" / "assay.db", config_path=tmp_path / "c.yaml")
    with TestClient(app) as client:
        body = client.get("/api/health").json()
    assert body["status"] == "ok"
    assert not (tmp_path / "never").exists()


def test_an_app_given_a_location_opens_it_on_first_use_and_closes_it(tmp_path: Path) -> None:
    app = create_app(str(tmp_path / "lazy.db"), config_path=tmp_path / "c.yaml")
    with TestClient(app) as client:
        assert client.get("/api/runs").json()["total"] == 0
        assert (tmp_path / "lazy.db").exists()
    assert app.state.assay.store is None


def test_i22_11_a_locked_store_is_a_503_without_sql(client: TestClient, store: SQLiteStore) -> None:
    """A write lock held past the busy timeout by another connection: 503, one line."""
    import sqlite3

    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        response = client.delete("/api/runs/20260101T000000-base01")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    error = assert_error(
        response,
        503,
        "store_unavailable",
        "the run store failed: database is locked (another process held its lock past the "
        "busy timeout)",
    )
    assert response.headers["retry-after"] == "5"
    assert "DELETE" not in error["message"] and "parameters" not in error["message"]
    assert client.get("/api/runs/20260101T000000-base01").status_code == 200  # kept
