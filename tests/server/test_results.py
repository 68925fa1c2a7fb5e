"""`/api/runs/{id}/results`: pages sorted and filtered in the store, one case, a live run."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.store import SQLiteStore
from tests.server.conftest import assert_error, make_case, make_run

BASE = "/api/runs/20260101T000000-base01/results"


def _ids(client: TestClient, url: str = BASE, **params: Any) -> list[str]:
    response = client.get(url, params=params)
    assert response.status_code == 200, response.text
    return [case["case_id"] for case in response.json()["items"]]


def test_a_page_holds_full_case_results_in_stored_order(client: TestClient) -> None:
    body = client.get(BASE).json()
    assert {k: body[k] for k in ("total", "page", "page_size", "pages")} == {
        "total": 3,
        "page": 1,
        "page_size": 50,
        "pages": 1,
    }
    first = body["items"][0]
    assert (first["case_id"], first["score"], first["verdict"], first["tags"]) == (
        "refund/window",
        0.9,
        "pass",
        ["billing"],
    )
    assert [g["name"] for g in first["grader_results"]] == ["mentions", "tone"]


@pytest.mark.parametrize(
    ("sort", "order", "expected"),
    [
        ("seq", "asc", ["refund/window", "Greeting", "crash"]),
        ("seq", "desc", ["crash", "Greeting", "refund/window"]),
        ("score", "asc", ["crash", "Greeting", "refund/window"]),
        ("score", "desc", ["refund/window", "Greeting", "crash"]),
        ("duration_ms", "asc", ["Greeting", "crash", "refund/window"]),
        ("duration_ms", "desc", ["refund/window", "crash", "Greeting"]),
        ("case_id", "asc", ["Greeting", "crash", "refund/window"]),
        ("case_id", "desc", ["refund/window", "crash", "Greeting"]),
    ],
)
def test_sorting(client: TestClient, sort: str, order: str, expected: list[str]) -> None:
    assert _ids(client, sort=sort, order=order) == expected


def test_filters_combine_and_count(client: TestClient) -> None:
    assert _ids(client, verdict="fail") == ["Greeting"]
    assert _ids(client, verdict=["fail", "error"]) == ["Greeting", "crash"]
    assert _ids(client, tag="billing") == ["refund/window", "Greeting"]
    assert _ids(client, tag="billing", verdict="pass") == ["refund/window"]
    assert _ids(client, grader="tone") == ["refund/window", "Greeting"]
    assert _ids(client, grader="mentions", grader_verdict="fail") == ["Greeting"]
    assert _ids(client, grader_verdict="pass") == ["refund/window", "Greeting"]
    # Several verdicts: the cases the grader did not pass (the studio's "not passed" filter).
    assert _ids(client, grader="mentions", grader_verdict=["borderline", "fail", "error"]) == [
        "Greeting"
    ]
    assert _ids(client, grader="mentions", grader_verdict=["pass", "fail"]) == [
        "refund/window",
        "Greeting",
    ]
    assert _ids(client, q="GREET") == ["Greeting"]
    assert _ids(client, q="/") == ["refund/window"]
    assert _ids(client, q="%") == []
    assert _ids(client, q="_") == []
    body = client.get(BASE, params={"tag": "smoke", "page_size": 1, "page": 2}).json()
    assert ([c["case_id"] for c in body["items"]], body["total"], body["pages"]) == (
        ["crash"],
        2,
        2,
    )


def test_deep_pages_of_a_larger_run_are_exact(client: TestClient, store: SQLiteStore) -> None:
    store.create_run(make_run("paged-0001", started_at="2026-03-01T00:00:00.000+00:00"), {})
    scores = [(i * 37 % 101) / 100 if i % 10 else None for i in range(250)]
    store.add_case_results(
        "paged-0001",
        [make_case(f"c{i:03d}", s, "error" if s is None else "pass") for i, s in enumerate(scores)],
    )
    url = "/api/runs/paged-0001/results"
    ordered = sorted(range(250), key=lambda i: (-1.0 if scores[i] is None else scores[i], i))
    expected = [f"c{i:03d}" for i in ordered]
    pages = [_ids(client, url, sort="score", page=p, page_size=40) for p in range(1, 8)]
    assert [case for page in pages for case in page] == expected
    reverse = [
        _ids(client, url, sort="score", order="desc", page=p, page_size=40) for p in range(1, 8)
    ]
    assert [case for page in reverse for case in page] == expected[::-1]
    assert _ids(client, url, page=7, page_size=40) == [f"c{i:03d}" for i in range(240, 250)]


def test_one_case_result_including_ids_with_slashes(client: TestClient) -> None:
    body = client.get(f"{BASE}/refund/window").json()
    assert (body["case_id"], body["output"]) == ("refund/window", "answer to refund/window")
    assert client.get(f"{BASE}/refund%2Fwindow").json()["case_id"] == "refund/window"
    head = client.get("/api/runs/20260102T000000-head01/results/crash")
    # Model output is a JSON string; the studio escapes it when rendering.
    assert head.json()["output"] == "<script>alert(1)</script>"
    assert head.headers["content-type"] == "application/json"
    assert_error(client.get(f"{BASE}/nope"), 404, "not_found", "has no result for case 'nope'")
    assert_error(client.get("/api/runs/nope-0000/results/crash"), 404, "not_found")


def test_bad_parameters_are_validation_errors(client: TestClient) -> None:
    for params in (
        {"page": 0},
        {"page_size": 501},
        {"sort": "output"},
        {"order": "up"},
        {"verdict": "great"},
        {"q": "x" * 201},
    ):
        assert_error(client.get(BASE, params=params), 422, "validation_error")
    assert_error(client.get("/api/runs/nope-0000/results"), 404, "not_found")


def test_results_appear_while_the_run_is_in_progress(
    client: TestClient, store: SQLiteStore
) -> None:
    live = "/api/runs/20260103T000000-live01"
    # Written through a second connection pool, as a separate `assay run` would.
    writer = SQLiteStore(store.path)
    assert client.get(live).json()["status"] == "running"
    assert client.get(f"{live}/results").json()["total"] == 0
    writer.add_case_results(
        "20260103T000000-live01", [make_case("a", 1.0, "pass"), make_case("b", 0.1, "fail")]
    )
    body = client.get(f"{live}/results").json()
    assert ([c["case_id"] for c in body["items"]], body["total"]) == (["a", "b"], 2)
    writer.add_case_result("20260103T000000-live01", make_case("c", 0.7, "borderline"))
    writer.close()
    body = client.get(f"{live}/results", params={"sort": "score"}).json()
    assert ([c["case_id"] for c in body["items"]], body["total"]) == (["b", "c", "a"], 3)
    assert len(client.get(f"{live}?include=results").json()["results"]) == 3
    assert client.get(f"{live}/facets").json()["verdicts"] == {
        "borderline": 1,
        "fail": 1,
        "pass": 1,
    }
