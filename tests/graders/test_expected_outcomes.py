"""Expected outcomes (SPEC §5.4): one judge call per output, a verdict per statement."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from tests.graders._judging import judge_pool

from assay.graders import ExpectedOutcomes, GradingContext, outcome_results
from assay.results import ExpectedOutcomeResult, GraderResult, Message, TargetOutput
from assay.testing import FakeOpenAIServer


def verdicts(*passed: bool) -> dict[str, Any]:
    """Judge values: a verdict under each outcome's number (the server fills in the pinned
    statement from the request's schema)."""
    return {
        "outcomes": {
            str(i + 1): {"passed": ok, "justification": f"because {i}"}
            for i, ok in enumerate(passed)
        }
    }


def judge_outcomes(
    statements: list[str],
    server: FakeOpenAIServer,
    output: TargetOutput | None = None,
    **judge: Any,
) -> tuple[GraderResult, list[ExpectedOutcomeResult] | None]:
    grader = ExpectedOutcomes(statements=statements)

    async def go() -> GraderResult:
        pool = judge_pool(server, **judge)
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


# -- issue 21 item 9: the schema pins each outcome; replies are checked, not matched by place --


def entry(statement: str, passed: bool = True) -> dict[str, Any]:
    return {"outcome": statement, "passed": passed, "justification": "seen in the reply"}


def test_i21_9_the_request_schema_pins_each_statement_under_its_number() -> None:
    statements = ["Says 30 days", "Offers store credit", "Says 30 days"]
    with FakeOpenAIServer(judge=verdicts(True, False, True)) as server:
        judge_outcomes(statements, server)
        body = server.requests[-1]
    fmt = body["response_format"]["json_schema"]
    assert fmt["strict"] is True
    schema = fmt["schema"]
    assert (schema["required"], schema["additionalProperties"]) == (["outcomes"], False)
    keyed = schema["properties"]["outcomes"]
    assert (keyed["required"], keyed["additionalProperties"]) == (["1", "2", "3"], False)
    for number, statement in zip(["1", "2", "3"], statements, strict=True):
        item = keyed["properties"][number]
        assert item["properties"]["outcome"] == {
            "title": "Outcome",
            "type": "string",
            "enum": [statement],
        }
        assert item["required"] == ["outcome", "passed", "justification"]
        assert item["additionalProperties"] is False
    assert '"enum": ["Offers store credit"]' in body["messages"][0]["content"]  # shown too


def test_i21_9_verdicts_are_read_by_number_whatever_order_they_come_in() -> None:
    reply = {"outcomes": {"2": entry("Offers store credit", False), "1": entry("Says 30 days")}}
    with FakeOpenAIServer(reply=lambda body: json.dumps(reply)) as server:
        result, outcomes = judge_outcomes(["Says 30 days", "Offers store credit"], server)
    assert outcomes is not None
    assert [(o.outcome, o.passed) for o in outcomes] == [
        ("Says 30 days", True),
        ("Offers store credit", False),
    ]
    assert (result.hits, result.misses) == (["Says 30 days"], ["Offers store credit"])


def raw(*entries: tuple[str, dict[str, Any]]) -> str:
    """A reply's text exactly as given (a number listed twice stays twice)."""
    listed = ", ".join(f"{json.dumps(key)}: {json.dumps(value)}" for key, value in entries)
    return '{"outcomes": {' + listed + "}}"


THIRTY, CREDIT = entry("Says 30 days"), entry("Offers store credit")
BAD_REPLIES = {
    "drifted": (
        raw(("1", entry("Says 14 days")), ("2", CREDIT)),
        "$.outcomes['1'].outcome: 'Says 14 days' is not one of ['Says 30 days']",
    ),
    "missing": (raw(("1", THIRTY)), "$.outcomes: '2' is a required property"),
    "extra": (
        raw(("1", THIRTY), ("2", CREDIT), ("3", entry("Is polite"))),
        "$.outcomes: Additional properties are not allowed ('3' was unexpected)",
    ),
    "duplicated": (
        raw(("1", THIRTY), ("2", entry("Offers store credit", False)), ("2", CREDIT)),
        "the reply gives the key '2' more than once",
    ),
}


@pytest.mark.parametrize("mode", ["json_schema", "text"])
@pytest.mark.parametrize("kind", list(BAD_REPLIES))
def test_i21_9_an_unknown_missing_duplicated_or_drifted_outcome_is_re_asked_then_errors(
    kind: str, mode: str
) -> None:
    """The fake server ignores the schema, as a server without strict mode does: the client
    checks the reply itself, re-asks twice quoting the problem, then the grader errors."""
    text, problem = BAD_REPLIES[kind]
    with FakeOpenAIServer(reply=lambda body: text) as server:
        result, outcomes = judge_outcomes(
            ["Says 30 days", "Offers store credit"], server, structured_output=mode
        )
        asked = server.request_count
        reask = server.requests[-1]["messages"][-1]["content"]
    assert outcomes is None and result.score is None and asked == 3
    assert result.error is not None and problem in result.error.message
    assert problem in reask


def test_i21_9_a_reply_corrected_on_the_re_ask_is_used() -> None:
    replies = iter(
        [
            BAD_REPLIES["drifted"][0],
            json.dumps(
                {"outcomes": {"1": entry("Says 30 days"), "2": entry("Offers store credit")}}
            ),
        ]
    )
    with FakeOpenAIServer(reply=lambda body: next(replies)) as server:
        result, _ = judge_outcomes(["Says 30 days", "Offers store credit"], server)
        asked = server.request_count
    assert asked == 2 and result.error is None and result.score == 1.0
