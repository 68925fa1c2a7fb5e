"""The finish-reason grader: why the model stopped, recorded by real model targets against the
local fake of the OpenAI and Anthropic APIs, or reported by a structured output."""

from __future__ import annotations

from typing import Any

import pytest
from tests.graders._grading import grade as grade_spec
from tests.targets._calls import ask, run

from assay.results import GraderResult, TargetOutput
from assay.targets import AnthropicTarget, OpenAITarget
from assay.targets._output import parse_target_output
from assay.testing import FakeOpenAIServer


def grade(value: str, output: TargetOutput | None) -> GraderResult:
    return grade_spec(
        {"type": "finish-reason", "value": value},
        output.output if output else "",
        target_output=output,
    )


def openai_reply(reply: Any) -> TargetOutput:
    with FakeOpenAIServer({"hello there": reply}) as server:
        target = OpenAITarget.model_validate(
            {"type": "openai", "model": "m", "base_url": server.base_url, "api_key_env": None}
        )
        (output,) = run(target, ask())
    return output


def anthropic_reply(reply: Any) -> TargetOutput:
    with FakeOpenAIServer({"hello there": reply}) as server:
        target = AnthropicTarget.model_validate(
            {"type": "anthropic", "model": "m", "base_url": server.url, "api_key_env": None}
        )
        (output,) = run(target, ask())
    return output


def test_the_openai_target_records_the_reason_and_the_grader_compares_it_ignoring_case() -> None:
    cut = openai_reply({"content": "The history of", "finish_reason": "length"})
    assert cut.finish_reason == "length"
    assert grade("LENGTH", cut).verdict == "pass"
    missed = grade("stop", cut)
    assert (missed.score, missed.verdict) == (0.0, "fail")
    assert missed.misses == ["finish reason 'length', expected 'stop'"]
    assert (missed.details[0].expected, missed.details[0].actual) == ("stop", "length")


def test_a_tool_calling_reply_stops_for_tool_calls_on_both_wires() -> None:
    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    calling = {"content": "", "tool_calls": [call]}
    assert openai_reply(calling).finish_reason == "tool_calls"
    assert anthropic_reply(calling).finish_reason == "tool_calls"  # `tool_use`, in OpenAI's words


@pytest.mark.parametrize(
    ("stop_reason", "recorded"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "refusal"),
    ],
)
def test_anthropic_stop_reasons_are_recorded_in_openai_words(
    stop_reason: str, recorded: str
) -> None:
    output = anthropic_reply({"content": "Hi.", "finish_reason": stop_reason})
    assert output.finish_reason == recorded
    assert grade(recorded, output).verdict == "pass"


def test_the_legacy_function_call_reason_is_tool_calls() -> None:
    assert openai_reply({"content": "x", "finish_reason": "function_call"}).finish_reason == (
        "tool_calls"
    )


def test_a_structured_output_reports_the_reason() -> None:
    output = parse_target_output({"output": "Hi.", "finish_reason": "content_filter"})
    assert grade("content_filter", output).verdict == "pass"


def test_no_recorded_reason_is_an_error_never_a_pass() -> None:
    result = grade("stop", TargetOutput(output="Hi."))
    assert result.verdict == "error"
    assert result.error is not None
    assert "recorded no finish reason" in result.error.message
