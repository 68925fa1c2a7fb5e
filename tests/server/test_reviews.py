"""Human reviews over the API (issue 28 item 1): PUT, GET, DELETE one case's review, list a
run's, the token rules, and a case id containing `/`."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.server.conftest import TOKEN, assert_error

HEAD = "20260102T000000-head01"
REVIEW = f"/api/runs/{HEAD}/results/refund/window/review"


def test_i28_1_put_get_list_and_delete_a_review(client: TestClient) -> None:
    assert_error(client.get(REVIEW), 404, "not_found", "has no review")
    put = client.put(REVIEW, json={"verdict": "pass", "note": "reads fine", "reviewer": "ana"})
    assert put.status_code == 200, put.text
    body = put.json()
    assert {k: body[k] for k in ("run_id", "case_id", "verdict", "note", "reviewer")} == {
        "run_id": HEAD,
        "case_id": "refund/window",  # a case id with a slash
        "verdict": "pass",
        "note": "reads fine",
        "reviewer": "ana",
    }
    assert body["reviewed_at"].startswith("20")
    assert client.get(REVIEW).json() == body
    client.put(f"/api/runs/{HEAD}/results/crash/review", json={"verdict": "fail"})
    listed = client.get(f"/api/runs/{HEAD}/reviews").json()
    # head: refund/window fail, Greeting pass, crash pass (machine); people: pass, -, fail
    assert {k: v for k, v in listed.items() if k != "items"} == {
        "cases": 3,
        "reviewed": 2,
        "human_passed": 1,
        "agreed": 0,
        "reviewed_pass_rate": 2 / 3,
    }
    assert [(r["case_id"], r["verdict"]) for r in listed["items"]] == [
        ("refund/window", "pass"),
        ("crash", "fail"),
    ]
    # The machine verdict is kept.
    assert client.get(f"/api/runs/{HEAD}/results/refund/window").json()["verdict"] == "fail"
    assert client.delete(REVIEW).json() == body
    assert_error(client.delete(REVIEW), 404, "not_found", "has no review")


def test_i28_1_bad_reviews_are_refused_with_the_error_envelope(client: TestClient) -> None:
    assert_error(client.put(REVIEW, json={"verdict": "maybe"}), 422, "validation_error")
    assert_error(client.put(REVIEW, json={"verdict": "pass", "score": 1}), 422, "validation_error")
    assert_error(
        client.put(f"/api/runs/{HEAD}/results/nope/review", json={"verdict": "pass"}),
        404,
        "not_found",
        "has no case 'nope'",
    )
    assert_error(client.get("/api/runs/nope-nope/reviews"), 404, "not_found")


def test_i28_1_review_writes_need_the_token_reads_do_not(secured: TestClient) -> None:
    assert_error(secured.put(REVIEW, json={"verdict": "pass"}), 401, "unauthorized")
    ok = secured.put(REVIEW, json={"verdict": "pass"}, headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200, ok.text
    assert secured.get(REVIEW).status_code == 200
    assert_error(secured.delete(REVIEW), 401, "unauthorized")
