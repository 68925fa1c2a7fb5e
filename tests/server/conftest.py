"""Fixtures for the API tests: a real SQLite store seeded with runs, and in-process clients."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from assay.results import (
    CaseResult,
    GraderResult,
    RunConfigSnapshot,
    RunResult,
    RunSummary,
)
from assay.scoring import SummaryBuilder
from assay.server import create_app
from assay.store import RunFinish, SQLiteStore, SQLStore

TOKEN = "s3cret-token"


def make_run(run_id: str, *, suite: str = "support", started_at: str, **extra: Any) -> RunResult:
    return RunResult(
        id=run_id,
        suite=suite,
        target="fake:echo",
        status="running",
        started_at=started_at,
        config=RunConfigSnapshot(
            threshold=0.8, borderline=0.6, metrics_pass_threshold=0.8, cases_pass_threshold=1.0
        ),
        summary=RunSummary(),
        assay_version="0.1.0",
        **extra,
    )


def make_case(
    case_id: str,
    score: float | None,
    verdict: str,
    *,
    duration_ms: float = 10.0,
    tags: list[str] | None = None,
    graders: list[tuple[str, str]] | None = None,
    output: str | None = None,
) -> CaseResult:
    return CaseResult.model_validate(
        {
            "case_id": case_id,
            "score": score,
            "verdict": verdict,
            "threshold": 0.8,
            "output": output if output is not None else f"answer to {case_id}",
            "duration_ms": duration_ms,
            "tags": tags or [],
            "grader_results": [
                GraderResult(
                    name=name, type="contains", score=1.0 if v == "pass" else 0.0, verdict=v
                )
                for name, v in (graders or [])
            ],
        }
    )


def finish(store: SQLStore, run_id: str, finished_at: str) -> None:
    """Finish a run with the summary its stored cases give (as an import counts it again)."""
    builder = SummaryBuilder(metrics_pass_threshold=0.8, cases_pass_threshold=1.0)
    for case in store.iter_case_results(run_id):
        builder.add(case)
    store.finish_run(
        run_id,
        RunFinish(
            status="completed", finished_at=finished_at, summary=builder.build(), duration_ms=100.0
        ),
    )


BASE_CASES = [
    make_case(
        "refund/window",
        0.9,
        "pass",
        duration_ms=30.0,
        tags=["billing"],
        graders=[("mentions", "pass"), ("tone", "pass")],
    ),
    make_case(
        "Greeting",
        0.5,
        "fail",
        duration_ms=10.0,
        tags=["smoke", "billing"],
        graders=[("mentions", "fail"), ("tone", "pass")],
    ),
    make_case("crash", None, "error", duration_ms=20.0, tags=["smoke"]),
]
HEAD_CASES = [
    make_case(
        "refund/window",
        0.2,
        "fail",
        duration_ms=40.0,
        tags=["billing"],
        graders=[("mentions", "fail")],
    ),
    make_case(
        "Greeting", 0.95, "pass", duration_ms=15.0, tags=["smoke"], graders=[("mentions", "pass")]
    ),
    make_case("crash", 0.85, "pass", duration_ms=25.0, output="<script>alert(1)</script>"),
]


def seed(store: SQLStore) -> None:
    """Two completed runs of `support` (base, head), one running run of `other`."""
    store.create_run(
        make_run("20260101T000000-base01", started_at="2026-01-01T00:00:00.000+00:00"), {}
    )
    store.add_case_results("20260101T000000-base01", BASE_CASES)
    finish(store, "20260101T000000-base01", "2026-01-01T00:01:00.000+00:00")
    store.create_run(
        make_run("20260102T000000-head01", started_at="2026-01-02T00:00:00.000+00:00"), {}
    )
    store.add_case_results("20260102T000000-head01", HEAD_CASES)
    finish(store, "20260102T000000-head01", "2026-01-02T00:01:00.000+00:00")
    store.create_run(
        make_run(
            "20260103T000000-live01", suite="other", started_at="2026-01-03T00:00:00.000+00:00"
        ),
        {},
    )


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "assay.db")
    seed(opened)
    yield opened
    opened.close()


@pytest.fixture
def config_path(tmp_path: Path) -> Path:
    return tmp_path / "project" / ".assay" / "config.yaml"


@pytest.fixture
def client(store: SQLiteStore, config_path: Path) -> Iterator[TestClient]:
    """A client of an app on loopback: no token configured."""
    app = create_app(store, config_path=config_path, max_upload_bytes=200_000)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture
def secured(store: SQLiteStore, config_path: Path) -> Iterator[TestClient]:
    """A client of an app that requires the bearer token `TOKEN` for writes."""
    app = create_app(store, token=TOKEN, config_path=config_path, max_upload_bytes=200_000)
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


def assert_error(
    response: Any, status: int, kind: str, message: str | None = None
) -> dict[str, Any]:
    """The response is the error envelope with this status and type (and message text)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"type", "message", "details"}
    assert body["error"]["type"] == kind
    if message is not None:
        assert message in body["error"]["message"]
    assert "Traceback" not in response.text
    error: dict[str, Any] = body["error"]
    return error
