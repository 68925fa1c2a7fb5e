"""`/api/runs/compare`: the `assay compare --json` document for stored runs, never files."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from assay.api import write_export
from assay.store import SQLiteStore
from tests.e2e._cli import assay
from tests.server.conftest import assert_error

BASE, HEAD = "20260101T000000-base01", "20260102T000000-head01"


def test_the_document_is_what_assay_compare_json_prints(
    client: TestClient, store: SQLiteStore, tmp_path: Path
) -> None:
    response = client.get("/api/runs/compare", params={"base": BASE, "head": HEAD})
    assert response.status_code == 200, response.text
    done = assay("compare", BASE, HEAD, "--json", "--db", str(store.path), cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the head regressed
    assert response.json() == json.loads(done.stdout)
    body = response.json()
    assert (body["base"], body["head"], body["summary"]["regression_detected"]) == (
        BASE,
        HEAD,
        True,
    )
    statuses = {c["case_id"]: c["status"] for c in body["cases"]}
    assert statuses == {"refund/window": "regressed", "Greeting": "improved", "crash": "improved"}


def test_thresholds_prefixes_latest_and_baseline(client: TestClient, store: SQLiteStore) -> None:
    body = client.get(
        "/api/runs/compare",
        params={
            "base": "20260101",
            "head": "latest",
            "suite": "support",
            "max_pass_rate_drop": 0.5,
            "max_avg_score_drop": 0.5,
            "max_latency_increase_pct": 90,
            "case_score_delta": 0.9,
            "require_significance": "true",
        },
    ).json()
    assert (body["base"], body["head"]) == (BASE, HEAD)
    assert body["thresholds"] == {
        "max_pass_rate_drop": 0.5,
        "max_avg_score_drop": 0.5,
        "max_latency_increase_pct": 90.0,
        "case_score_delta": 0.9,
    }
    assert body["require_significance"] is True
    assert_error(
        client.get("/api/runs/compare", params={"base": "baseline", "head": HEAD}),
        400,
        "bad_request",
        "has no pinned baseline",
    )
    store.pin_baseline(BASE, pinned_at="2026-01-05T00:00:00.000+00:00")
    pinned = client.get("/api/runs/compare", params={"base": "baseline", "head": HEAD}).json()
    assert pinned["base"] == BASE


def test_files_are_never_read(client: TestClient, store: SQLiteStore, tmp_path: Path) -> None:
    export = tmp_path / "base.jsonl"
    with export.open("w", encoding="utf-8") as out:
        write_export(store, BASE, out)
    assert_error(
        client.get("/api/runs/compare", params={"base": "base.jsonl", "head": HEAD}),
        404,
        "not_found",
        "run 'base.jsonl' not found",
    )
    for ref in (str(export), "../base.jsonl", "a/b"):
        error = assert_error(
            client.get("/api/runs/compare", params={"base": ref, "head": HEAD}),
            422,
            "validation_error",
        )
        assert error["details"][0]["loc"] == ["query", "base"]


def test_bad_compare_requests(client: TestClient) -> None:
    assert_error(client.get("/api/runs/compare", params={"base": BASE}), 422, "validation_error")
    assert_error(
        client.get("/api/runs/compare", params={"base": BASE, "head": HEAD, "case_score_delta": 2}),
        422,
        "validation_error",
        "query.case_score_delta",
    )
    assert_error(
        client.get("/api/runs/compare", params={"base": BASE, "head": "nope-0000"}),
        404,
        "not_found",
    )
    assert_error(
        client.get("/api/runs/compare", params={"base": "baseline", "head": "baseline"}),
        400,
        "bad_request",
        "both 'baseline'",
    )


def test_i21_8_runs_with_no_case_in_common_are_a_bad_request(client: TestClient) -> None:
    assert_error(
        client.get("/api/runs/compare", params={"base": BASE, "head": "20260103T000000-live01"}),
        400,
        "bad_request",
        "have no case id in common, so there is nothing to compare",
    )
