"""The committed OpenAPI document is the app's (regenerate: `assay serve --openapi`)."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from assay.server import openapi_document

COMMITTED = Path(__file__).resolve().parents[2] / "schema" / "openapi.json"


def test_the_committed_openapi_document_has_not_drifted() -> None:
    assert COMMITTED.read_text(encoding="utf-8") == openapi_document(), (
        "schema/openapi.json is out of date: regenerate it with "
        "`assay serve --openapi > schema/openapi.json`"
    )


def test_the_app_serves_the_same_document_under_api(client: TestClient) -> None:
    served = client.get("/api/openapi.json").json()
    assert served == json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert set(served["paths"]) == {
        "/api/health",
        "/api/runs",
        "/api/runs/compare",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/facets",
        "/api/runs/{run_id}/results",
        "/api/runs/{run_id}/results/{case_id}",
        "/api/runs/{run_id}/results/{case_id}/review",
        "/api/runs/{run_id}/reviews",
        "/api/baselines",
        "/api/baselines/{suite}",
        "/api/config",
    }


def test_every_error_response_is_the_envelope() -> None:
    document = json.loads(COMMITTED.read_text(encoding="utf-8"))
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")):
                    schema = response["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorEnvelope"}, (
                        method,
                        path,
                        status,
                    )
