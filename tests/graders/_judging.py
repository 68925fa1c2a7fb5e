"""Helpers for judged-grader tests: grade through the real `openai` SDK against the local
OpenAI-protocol server in scripted judge mode."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.graders._grading import SPEC

from assay.graders import GradingContext
from assay.judge import JudgePool, JudgeSpec
from assay.results import JSON, GraderResult
from assay.testing import FakeOpenAIServer

__all__ = ["grade_judged", "judge_pool"]


def judge_pool(server: FakeOpenAIServer, **spec: Any) -> JudgePool:
    """A pool whose default judge is the fake server's `judge-model` (no API key)."""
    return JudgePool(
        JudgeSpec(model="judge-model", base_url=server.base_url, api_key_env="", **spec)
    )


def grade_judged(
    spec: dict[str, Any],
    output: str,
    server: FakeOpenAIServer | None,
    *,
    expected: JSON = None,
    threshold: float = 0.8,
    pool: JudgePool | None = None,
    **context: Any,
) -> GraderResult:
    """Validate `spec` as a suite does and grade one output with the server as the judge
    (`server=None`: the run has no judge at all)."""
    grader = SPEC.validate_python(spec)
    judges = pool or (judge_pool(server) if server is not None else None)

    async def run() -> GraderResult:
        ctx = GradingContext(
            case_id="c",
            output=output,
            threshold=threshold,
            expected_output=expected,
            judges=judges,
            **context,
        )
        try:
            result: GraderResult = await grader.grade(ctx)
            return result
        finally:
            if judges is not None:
                await judges.close()

    return asyncio.run(run())
