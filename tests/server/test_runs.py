"""`/api/runs`: listing with filters and pages, one run, the §8 document, upload, delete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient

from assay.api import write_export
from assay.store import SQLiteStore
from tests.server.conftest import BASE_CASES, assert_error, finish, make_case, make_run

RUN_SCHEMA = json.loads(
    (Path(__file__).parents[1] / "e2e" / "run_result.schema.json").read_text(encoding="utf-8")
)


def test_runs_are_listed_newest_first_with_the_total_and_page(client: TestClient) -> None:
    body = client.get("/api/runs").json()
    assert [r["id"] for r in body["items"]] == [
        "20260103T000000-live01",
        "20260102T000000-head01",
        "20260101T000000-base01",
    ]
    assert {k: body[k] for k in ("total", "page", "page_size", "pages")} == {
        "total": 3,
        "page": 1,
        "page_size": 50,
        "pages": 1,
    }
    assert all(r["results"] == [] for r in body["items"])


def test_runs_pages_and_filters_agree_with_the_total(client: TestClient) -> None:
    second = client.get("/api/runs", params={"page": 2, "page_size": 2}).json()
    assert [r["id"] for r in second["items"]] == ["20260101T000000-base01"]
    assert (second["total"], second["pages"]) == (3, 2)
    beyond = client.get("/api/runs", params={"page": 5, "page_size": 2}).json()
    assert (beyond["items"], beyond["total"]) == ([], 3)
    support = client.get("/api/runs", params={"suite": "support", "status": "completed"}).json()
    assert [r["id"] for r in support["items"]] == [
        "20260102T000000-head01",
        "20260101T000000-base01",
    ]
    dated = client.get("/api/runs", params={"since": "2026-01-02", "until": "2026-01-03"}).json()
    assert [r["id"] for r in dated["items"]] == ["20260102T000000-head01"]
    assert client.get("/api/runs", params={"target": "nope"}).json()["total"] == 0


def test_one_run_by_id_or_prefix_without_results(client: TestClient) -> None:
    body = client.get("/api/runs/20260101T000000-base01").json()
    assert (body["id"], body["status"], body["results"]) == (
        "20260101T000000-base01",
        "completed",
        [],
    )
    assert client.get("/api/runs/20260102").json()["id"] == "20260102T000000-head01"


def test_include_results_returns_the_spec_8_document(
    client: TestClient, store: SQLiteStore
) -> None:
    response = client.get("/api/runs/20260101T000000-base01", params={"include": "results"})
    assert response.status_code == 200
    document = response.json()
    jsonschema.validate(document, RUN_SCHEMA)
    assert [c["case_id"] for c in document["results"]] == ["refund/window", "Greeting", "crash"]
    expected = store.get_run("20260101T000000-base01", include_results=True)
    assert document == json.loads(expected.model_dump_json())


def test_a_large_run_document_streams_every_result_in_order(
    client: TestClient, store: SQLiteStore
) -> None:
    store.create_run(make_run("big-run-0001", started_at="2026-02-01T00:00:00.000+00:00"), {})
    cases = [make_case(f"case-{i:04d}", i / 1000, "pass") for i in range(450)]
    store.add_case_results("big-run-0001", cases)
    document = client.get("/api/runs/big-run-0001?include=results").json()
    assert [c["case_id"] for c in document["results"]] == [c.case_id for c in cases]


def test_unknown_ambiguous_and_malformed_run_ids(client: TestClient) -> None:
    assert_error(client.get("/api/runs/nope-0000"), 404, "not_found", "run 'nope-0000' not found")
    error = assert_error(client.get("/api/runs/2026"), 400, "bad_request", "is ambiguous")
    assert "20260101T000000-base01" in error["message"]
    error = assert_error(client.get("/api/runs/..%2Fetc"), 404, "not_found")
    error = assert_error(client.get("/api/runs/-x"), 422, "validation_error")
    assert error["details"][0]["loc"] == ["path", "run_id"]
    assert_error(client.get("/api/runs/x?include=all"), 422, "validation_error")


def test_messages_do_not_reveal_where_the_store_is(client: TestClient, store: SQLiteStore) -> None:
    response = client.get("/api/runs/nope-0000")
    assert store.describe() not in response.text
    assert "the run store" in response.json()["error"]["message"]


def _export(store: SQLiteStore, run_id: str) -> str:
    import io

    out = io.StringIO()
    write_export(store, run_id, out)
    return out.getvalue()


def _fresh_store(tmp_path: Path) -> SQLiteStore:
    return SQLiteStore(tmp_path / "elsewhere.db")


def test_upload_of_an_export_stores_the_run_as_import_does(
    client: TestClient, store: SQLiteStore, tmp_path: Path
) -> None:
    exported = _export(store, "20260101T000000-base01")
    store.delete_run("20260101T000000-base01")
    response = client.post(
        "/api/runs", content=exported, headers={"content-type": "application/x-ndjson"}
    )
    assert response.status_code == 201, response.text
    assert response.headers["location"] == "/api/runs/20260101T000000-base01"
    assert response.json()["id"] == "20260101T000000-base01"
    assert response.json()["results"] == []
    assert _export(store, "20260101T000000-base01") == exported
    again = client.post(
        "/api/runs", content=exported, headers={"content-type": "application/x-ndjson"}
    )
    assert_error(again, 409, "conflict", "already exists")


def test_upload_as_one_json_object(client: TestClient, store: SQLiteStore) -> None:
    lines = _export(store, "20260102T000000-head01").splitlines()
    store.delete_run("20260102T000000-head01")
    document = {**json.loads(lines[0]), "results": [json.loads(line) for line in lines[1:]]}
    response = client.post("/api/runs", json=document)
    assert response.status_code == 201, response.text
    stored = store.get_run("20260102T000000-head01", include_results=True)
    assert [c.case_id for c in stored.results] == [c["case_id"] for c in document["results"]]


def test_bad_uploads_say_what_is_wrong(client: TestClient, store: SQLiteStore) -> None:
    ndjson = {"content-type": "application/x-ndjson"}
    assert_error(
        client.post("/api/runs", content="hello", headers={"content-type": "text/plain"}),
        415,
        "unsupported_media_type",
        "application/x-ndjson",
    )
    assert_error(client.post("/api/runs", content="", headers=ndjson), 400, "bad_request", "empty")
    assert_error(
        client.post("/api/runs", content='{"x": 1}\n', headers=ndjson),
        400,
        "bad_request",
        "upload:1: not an assay run export",
    )
    header, *_ = _export(store, "20260101T000000-base01").splitlines()
    assert_error(
        client.post("/api/runs", content=f"{header}\n{{}}\n", headers=ndjson),
        400,
        "bad_request",
        "upload:2: not a case result",
    )
    assert_error(
        client.post("/api/runs", content=b"\xff\xfe", headers=ndjson), 400, "bad_request", "UTF-8"
    )
    assert_error(client.post("/api/runs", json=[1]), 400, "bad_request", "JSON object")
    assert_error(
        client.post("/api/runs", content="{", headers={"content-type": "application/json"}),
        400,
        "bad_request",
        "not JSON",
    )
    renamed = json.loads(header)
    renamed["run"]["id"] = "../../etc/passwd"
    assert_error(
        client.post("/api/runs", content=json.dumps(renamed), headers=ndjson),
        422,
        "validation_error",
        "cannot be used in URLs",
    )


def test_delete_removes_the_run_and_says_whether_it_was_the_baseline(
    client: TestClient, store: SQLiteStore
) -> None:
    store.pin_baseline("20260101T000000-base01", pinned_at="2026-01-05T00:00:00.000+00:00")
    response = client.delete("/api/runs/20260101T000000-base01")
    assert response.json() == {
        "id": "20260101T000000-base01",
        "suite": "support",
        "was_baseline": True,
    }
    assert store.get_baseline("support") is None
    assert client.delete("/api/runs/20260102").json()["was_baseline"] is False
    assert_error(client.delete("/api/runs/20260101T000000-base01"), 404, "not_found")
    assert client.get("/api/runs").json()["total"] == 1


def test_facets_count_verdicts_tags_and_grader_verdicts(client: TestClient) -> None:
    body = client.get("/api/runs/20260101T000000-base01/facets").json()
    assert body == {
        "verdicts": {"error": 1, "fail": 1, "pass": 1},
        "tags": {"billing": 2, "smoke": 2},
        "graders": {"mentions": {"fail": 1, "pass": 1}, "tone": {"pass": 2}},
    }
    assert len(BASE_CASES) == 3
    assert_error(client.get("/api/runs/nope-0000/facets"), 404, "not_found")


def test_i21_8_completed_runs_filter_by_their_verdict(
    client: TestClient, store: SQLiteStore
) -> None:
    passing = "20260103T000000-pass01"
    store.create_run(make_run(passing, started_at="2026-01-03T00:00:00.000+00:00"), {})
    store.add_case_results(passing, [make_case("refund/window", 1.0, "pass")])
    finish(store, passing, "2026-01-03T00:01:00.000+00:00")

    def ids(**params: str) -> list[str]:
        return [r["id"] for r in client.get("/api/runs", params=params).json()["items"]]

    # The seeded base and head runs both completed below their thresholds.
    assert ids(status="completed", passed="false") == [
        "20260102T000000-head01",
        "20260101T000000-base01",
    ]
    assert ids(status="completed", passed="true") == [passing]
    assert ids(status="failed") == []


def _document(store: SQLiteStore, run_id: str) -> dict[str, Any]:
    """The export of `run_id` as one JSON object, and the run deleted (to be uploaded)."""
    lines = _export(store, run_id).splitlines()
    store.delete_run(run_id)
    return {**json.loads(lines[0]), "results": [json.loads(line) for line in lines[1:]]}


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        (("score",), 5.0, "results[0].score: 5.0 is not a score: a number from 0 to 1"),
        (("score",), -3.0, "results[0].score: -3.0 is not a score"),
        (("score",), float("nan"), "results[0].score: nan is not a score"),
        (("score",), None, "results[0].score: null, but the verdict is 'pass'"),
        (("grader_results", 0, "score"), 1.5, "results[0].grader_results[0].score: 1.5"),
        (("duration_ms",), -1.0, "results[0].duration_ms: -1.0 is not a finite number"),
    ],
)
def test_i22_15_an_upload_with_an_impossible_value_is_refused_with_its_path(
    client: TestClient,
    store: SQLiteStore,
    where: tuple[str | int, ...],
    value: float | None,
    message: str,
) -> None:
    document = _document(store, "20260101T000000-base01")
    target = document["results"][0]
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] = value
    body = json.dumps(document)  # NaN as JSON's common extension, as Python writes it
    for kind in ("application/json", "application/x-ndjson"):
        content = body
        if kind != "application/json":
            results = document["results"]
            header = {k: v for k, v in document.items() if k != "results"}
            content = "\n".join(json.dumps(x) for x in (header, *results))
        response = client.post("/api/runs", content=content, headers={"content-type": kind})
        error = assert_error(response, 422, "validation_error", message)
        assert error["details"][0]["loc"] == ["body", "results", "0", *map(str, where)]
    assert client.get("/api/runs/20260101T000000-base01").status_code == 404


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (("results", 0, "case_id"), "results[0].case_id: 'refund/window\\x00' holds a NUL"),
        (("results", 0, "tags", 0), "results[0].tags[0]: 'billing\\x00' holds a NUL"),
        (("results", 0, "grader_results", 0, "name"), "results[0].grader_results[0].name"),
        (("run", "suite"), "run.suite: 'support\\x00' holds a NUL character"),
    ],
)
def test_i22_9_an_upload_with_a_nul_in_a_name_is_refused_as_a_suite_file_would_be(
    client: TestClient, store: SQLiteStore, where: tuple[str | int, ...], message: str
) -> None:
    document = _document(store, "20260101T000000-base01")
    target = document
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] += "\x00"
    response = client.post(
        "/api/runs", content=json.dumps(document), headers={"content-type": "application/json"}
    )
    assert_error(response, 422, "validation_error", message)
    assert client.get("/api/runs/20260101T000000-base01").status_code == 404


def test_i22_15_the_uploaded_summary_is_counted_again(
    client: TestClient, store: SQLiteStore
) -> None:
    document = _document(store, "20260101T000000-base01")
    document["run"]["summary"] = {"total": 999, "passed_count": 999, "passed": True}
    document["run"]["status"] = "running"
    document["results"][2]["score"] = 0.7  # an error's score, as exports before §8 kept it
    response = client.post("/api/runs", json=document)
    assert response.status_code == 201, response.text
    summary = response.json()["summary"]
    counts = ("total", "passed_count", "failed_count", "error_count", "passed")
    assert {k: summary[k] for k in counts} == {
        "total": 3,
        "passed_count": 1,
        "failed_count": 1,
        "error_count": 1,
        "passed": False,
    }
    assert summary["weighted_metrics_score_pct"] == 70.0  # (0.9 + 0.5) / 2, the error has none
    stored = store.get_run("20260101T000000-base01", include_results=True)
    assert stored.summary.total == 3 and stored.status == "interrupted"
    assert stored.results[2].score is None


def test_i22_13_deeply_nested_json_is_a_400_not_a_500(client: TestClient) -> None:
    deep = "[" * 3_000 + "]" * 3_000  # past Python's recursion limit too
    header = f'{{"assay_export": 1, "run": {{}}, "snapshot": {{"x": {deep}}}}}'
    ndjson = {"content-type": "application/x-ndjson"}
    for content, kind in ((header, ndjson), (header, {"content-type": "application/json"})):
        error = assert_error(
            client.post("/api/runs", content=content, headers=kind), 400, "bad_request"
        )
        assert "nested too deeply" in error["message"]
    case = '{"case_id": "a", "score": 0.5, "verdict": "pass", "threshold": 0.8, "input": '
    document = f'{{"assay_export": 1, "run": {{}}, "snapshot": {{}}, "results": [{case}{deep}}}]}}'
    error = assert_error(
        client.post("/api/runs", content=document, headers={"content-type": "application/json"}),
        400,
        "bad_request",
    )
    assert "upload" in error["message"] and "nested too deeply" in error["message"]


def test_i22_13_latest_far_back_is_a_400(client: TestClient) -> None:
    for ref in ("latest~99999999999999999999", "latest~3"):
        response = client.get("/api/runs/compare", params={"base": ref, "head": "latest"})
        assert_error(response, 400, "bad_request", "names no run: the run store holds 3 runs")
    fine = client.get("/api/runs/compare", params={"base": "latest~2", "head": "latest~1"})
    assert fine.json()["base"] == "20260101T000000-base01"


def test_i22_14_a_running_run_is_deleted_only_when_forced(
    client: TestClient, store: SQLiteStore
) -> None:
    live = "20260103T000000-live01"
    refused = assert_error(client.delete(f"/api/runs/{live}"), 409, "conflict", "is running")
    assert "?force=true" in refused["message"]
    assert client.get(f"/api/runs/{live}").json()["status"] == "running"
    forced = client.delete(f"/api/runs/{live}", params={"force": "true"})
    assert forced.json() == {"id": live, "suite": "other", "was_baseline": False}
    assert_error(client.get(f"/api/runs/{live}"), 404, "not_found")


def test_i21_12_an_invalid_since_is_a_422(client: TestClient) -> None:
    for name in ("since", "until"):
        response = client.get("/api/runs", params={name: "yesterdayy"})
        error = assert_error(response, 422, "validation_error", "is not a date: use ISO 8601")
        assert error["details"][0]["loc"] == ["query", name]
    # A bound with an offset is compared in UTC, as `started_at` is stored.
    later = client.get("/api/runs", params={"since": "2026-01-02T01:00:00+02:00"}).json()
    assert [r["id"] for r in later["items"]] == [
        "20260103T000000-live01",
        "20260102T000000-head01",
    ]
