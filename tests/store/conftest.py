"""Fixtures for the store tests: real SQLite files and result models built from assay.results."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from assay.results import (
    CaseResult,
    Detail,
    ErrorInfo,
    ExpectedOutcomeResult,
    GraderResult,
    Message,
    RunConfigSnapshot,
    RunResult,
    RunSummary,
    SampleResult,
    TokenUsage,
    ToolCall,
)
from assay.store import SQLiteStore, SQLStore, open_store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "assay.db"


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, db_path: Path) -> str:
    """Where a contract test's store lives: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(db_path)
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def store(location: str) -> Iterator[SQLStore]:
    """An open store of each backend; contract tests take this one."""
    opened = open_store(location)
    assert isinstance(opened, SQLStore)
    yield opened
    opened.close()


@pytest.fixture
def sqlite_store(db_path: Path) -> Iterator[SQLiteStore]:
    """A SQLite store, for what only SQLite does (files, pragmas)."""
    opened = SQLiteStore(db_path)
    yield opened
    opened.close()


def _run(
    run_id: str = "run-0001",
    *,
    suite: str = "support-bot",
    started_at: str = "2025-01-02T03:04:05.000000Z",
    results: list[CaseResult] | None = None,
) -> RunResult:
    return RunResult(
        id=run_id,
        suite=suite,
        target="openai:gpt-4o-mini",
        status="running",
        started_at=started_at,
        config=RunConfigSnapshot(
            threshold=0.8,
            borderline=0.6,
            metrics_pass_threshold=0.8,
            cases_pass_threshold=1.0,
            judge_prompt_version="rubric-v3",
        ),
        summary=RunSummary(),
        results=results or [],
        assay_version="0.1.0",
    )


def _case(case_id: str, *, score: float | None = 0.9, verdict: str = "pass") -> CaseResult:
    return CaseResult.model_validate(
        {
            "case_id": case_id,
            "score": score,
            "verdict": verdict,
            "threshold": 0.8,
            "output": f"answer to {case_id}",
        }
    )


@pytest.fixture
def make_run() -> Callable[..., RunResult]:
    """A `running` run with a config snapshot that carries an extra field."""
    return _run


@pytest.fixture
def make_case() -> Callable[..., CaseResult]:
    """A minimal case result."""
    return _case


@pytest.fixture
def rich_cases() -> list[CaseResult]:
    """Case results using every nested shape: details, errors, samples, None scores."""
    judged = GraderResult(
        name="helpfulness",
        type="llm-grader",
        score=0.1 + 0.2,
        verdict="borderline",
        weight=2.5,
        required=True,
        min_score=0.7,
        hits=["greets the user"],
        misses=["no refund window"],
        reasoning="Mentions the policy but not the 30-day window.",
        details=[
            Detail(check="mentions refund", passed=True, expected="refund", actual="refund"),
            Detail(check="window", passed=False, expected="30 days", actual=None, message="absent"),
        ],
        duration_ms=412.25,
        token_usage=TokenUsage(input=812, output=64),
        cost_usd=0.000123,
        judge_model="gpt-4o-mini",
        children=[
            GraderResult(name="inner", type="contains", score=1.0, verdict="pass"),
        ],
    )
    broken = GraderResult(
        name="facts",
        type="factuality",
        score=None,
        verdict="error",
        error=ErrorInfo(type="GraderError", message="judge returned invalid JSON"),
    )
    call = ToolCall(tool="lookup_order", args={"id": 42, "fields": ["status"]}, output={"ok": True})
    return [
        CaseResult(
            case_id="refund-policy",
            score=0.9,
            verdict="pass",
            threshold=0.8,
            borderline=0.6,
            output="Refunds within 30 days.",
            duration_ms=812.5,
            token_usage=TokenUsage(input=120, output=30),
            cost_usd=0.0004,
            grader_results=[judged],
            expected_outcome_results=[
                ExpectedOutcomeResult(outcome="states the window", passed=True, justification="ok")
            ],
            input={"question": "Can I get a refund?", "locale": "en-GB"},
            messages=[
                Message(role="user", content="Can I get a refund?"),
                Message(role="assistant", tool_calls=[call]),
                Message(role="tool", content='{"ok": true}', name="lookup_order"),
            ],
            tool_calls=[call],
            tags=["billing", "smoke"],
        ),
        CaseResult(
            case_id="crashes",
            score=None,
            verdict="error",
            threshold=0.8,
            error=ErrorInfo(type="TimeoutError", message="target took longer than 30s"),
            grader_results=[broken],
        ),
        CaseResult(
            case_id="flaky",
            score=0.5,
            verdict="fail",
            threshold=0.75,
            samples=[
                SampleResult(index=0, score=1.0, verdict="pass", output="yes", duration_ms=10.0),
                SampleResult(
                    index=1,
                    score=None,
                    verdict="error",
                    error=ErrorInfo(type="TargetError", message="exit code 1"),
                ),
                SampleResult(index=2, score=0.0, verdict="fail", grader_results=[broken]),
            ],
            score_ci95=(-0.7423, 1.7423),
        ),
    ]
