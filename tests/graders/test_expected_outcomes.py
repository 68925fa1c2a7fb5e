"""Expected outcomes (SPEC §5.4): one judge call per output, a verdict per statement."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.graders._judging import judge_pool

from assay.graders import ExpectedOutcomes, GradingContext, outcome_results
from assay.results import ExpectedOutcomeResult, GraderResult, Message, TargetOutput
from assay.testing import FakeOpenAIServer


def verdicts(*passed: bool) -> dict[str, Any]:
    return {
        "outcomes": [
            {"outcome": f"s{i}", "passed": ok, "justification": f"because {i}"}
            for i, ok in enumerate(passed)
        ]
    }


def judge_outcomes(
    statements: list[str], server: FakeOpenAIServer, output: TargetOutput | None = None
) -> tuple[GraderResult, list[ExpectedOutcomeResult] | None]:
    grader = ExpectedOutcomes(statements=statements)

    async def go() -> GraderResult:
        pool = judge_pool(server)
        ctx = GradingContext(
            case_id="c",
            output=output.output if output else "Refunds within 30 days.",
            threshold=0.8,
            input="refund?",
            target_output=output,
            judges=pool,
        )
        try:
            return await grader.grade(ctx)
        finally:
            await pool.close()

    result = asyncio.run(go())
    return result, outcome_results(grader, result)


def test_each_statement_gets_its_verdict_and_justification_in_one_call() -> None:
    with FakeOpenAIServer(judge=verdicts(True, False)) as server:
        result, outcomes = judge_outcomes(["Says 30 days", "Offers store credit"], server)
        asked = server.request_count
        prompt = server.requests[-1]["messages"][1]["content"]
    assert asked == 1
    assert outcomes == [
        ExpectedOutcomeResult(outcome="Says 30 days", passed=True, justification="because 0"),
        ExpectedOutcomeResult(
            outcome="Offers store credit", passed=False, justification="because 1"
        ),
    ]
    assert (result.name, result.weight, result.score) == ("expected_outcomes", 0.0, 0.5)
    assert (result.hits, result.misses) == (["Says 30 days"], ["Offers store credit"])
    assert "1. Says 30 days\n2. Offers store credit" in prompt


def test_a_reply_with_the_wrong_number_of_verdicts_is_re_asked_then_errors() -> None:
    with FakeOpenAIServer(judge=verdicts(True)) as server:
        result, outcomes = judge_outcomes(["a", "b"], server)
        asked = server.request_count
    assert outcomes is None and asked == 3
    assert result.error is not None and "expected 2 verdicts" in result.error.message


def test_past_ten_failed_outcomes_the_dropped_details_still_count_as_failed() -> None:
    statements = [f"statement {i}" for i in range(13)]
    with FakeOpenAIServer(judge=verdicts(*([False] * 12 + [True]))) as server:
        result, outcomes = judge_outcomes(statements, server)
    assert outcomes is not None
    assert [o.passed for o in outcomes] == [False] * 12 + [True]
    assert outcomes[11].justification == ""  # its Detail was capped (SPEC §1.1)
    assert outcomes[12].justification == "because 12"
    assert result.details[-1].check == "+ 2 more"


def test_a_conversation_shows_the_judge_the_earlier_turns() -> None:
    conversation = TargetOutput(
        output="It is 30 days.",
        messages=[
            Message(role="user", content="hi"),
            Message(role="assistant", content="Hello! How can I help?"),
            Message(role="user", content="refund window?"),
            Message(role="assistant", content="It is 30 days."),
        ],
    )
    with FakeOpenAIServer(judge=verdicts(True)) as server:
        judge_outcomes(["Says 30 days"], server, conversation)
        prompt = server.requests[-1]["messages"][1]["content"]
    assert "The conversation so far:\n<<<TRANSCRIPT " in prompt
    assert "Hello! How can I help?" in prompt
