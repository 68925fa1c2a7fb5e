from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from assay.errors import TargetError
from assay.results import JSON, Message, TargetOutput, TokenUsage, ToolCall
from assay.targets import FakeTarget, TargetRequest


def _request(input: JSON = "hello") -> TargetRequest:
    if isinstance(input, str):
        messages = (Message(role="user", content=input),)
    else:
        messages = tuple(Message.model_validate(m) for m in input)
    return TargetRequest(case_id="case-1", input=input, messages=messages)


def _fake(**options: Any) -> FakeTarget:
    return FakeTarget.model_validate({"type": "fake", **options})


def _outputs(target: FakeTarget, inputs: list[JSON]) -> list[str]:
    async def run() -> list[str]:
        return [(await target.call(_request(i))).output for i in inputs]

    return asyncio.run(run())


def test_a_list_is_answered_in_call_order_and_cycles() -> None:
    target = _fake(responses=["one", "two", "three"])
    assert _outputs(target, ["a"] * 5) == ["one", "two", "three", "one", "two"]


def test_setup_restarts_the_list_and_calls_leave_the_config_equal() -> None:
    target = _fake(responses=["one", "two"])

    async def run() -> list[str]:
        first = await target.call(_request())
        await target.setup(Path())
        again = await target.call(_request())
        return [first.output, again.output]

    assert asyncio.run(run()) == ["one", "one"]
    assert target == _fake(responses=["one", "two"])


def test_concurrent_calls_get_consecutive_list_entries() -> None:
    replies = [f"reply {i}" for i in range(8)]
    target = _fake(responses=replies, delay_ms=20)

    async def run() -> list[TargetOutput]:
        return await asyncio.gather(*(target.call(_request()) for _ in range(8)))

    assert [o.output for o in asyncio.run(run())] == replies


def test_a_mapping_answers_by_the_input_text() -> None:
    target = _fake(responses={"hello": "hi there", "bye": "see you"})
    assert _outputs(target, ["bye", "hello"]) == ["see you", "hi there"]


def test_a_message_input_is_matched_by_its_last_user_message() -> None:
    target = _fake(responses={"and now?": "now this"})
    conversation = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "and now?"},
    ]
    assert _outputs(target, [conversation]) == ["now this"]


def test_the_default_answers_unlisted_inputs() -> None:
    target = _fake(responses={"hello": "hi there"}, default="I don't know")
    assert _outputs(target, ["other", "hello"]) == ["I don't know", "hi there"]


def test_a_default_alone_answers_everything() -> None:
    assert _outputs(_fake(default="same"), ["a", "b"]) == ["same", "same"]


def test_an_unlisted_input_without_default_is_an_error_naming_it() -> None:
    target = _fake(responses={"hello": "hi there"})
    with pytest.raises(TargetError) as caught:
        asyncio.run(target.call(_request("what?")))
    assert (
        str(caught.value) == "fake target has no response for input 'what?' and no `default` reply"
    )


def test_a_long_unlisted_input_is_shortened_in_the_error() -> None:
    target = _fake(responses={"hello": "hi there"})
    with pytest.raises(TargetError) as caught:
        asyncio.run(target.call(_request("x" * 200)))
    assert str(caught.value) == (
        f"fake target has no response for input '{'x' * 80}…' and no `default` reply"
    )


def test_a_structured_reply_fakes_tool_calls_and_usage() -> None:
    target = _fake(
        responses={
            "refund?": {
                "output": "30 days",
                "tool_calls": [{"tool": "lookup_policy", "args": {"topic": "refunds"}}],
                "token_usage": {"input": 7, "output": 3},
                "cost_usd": 0.001,
            }
        }
    )
    assert asyncio.run(target.call(_request("refund?"))) == TargetOutput(
        output="30 days",
        tool_calls=[ToolCall(tool="lookup_policy", args={"topic": "refunds"})],
        token_usage=TokenUsage(input=7, output=3),
        cost_usd=0.001,
        duration_ms=0.0,
    )


def test_an_error_reply_raises_target_error() -> None:
    target = _fake(responses=["fine", {"error": "upstream 503"}])

    async def run() -> list[str]:
        first = await target.call(_request())
        with pytest.raises(TargetError) as caught:
            await target.call(_request())
        return [first.output, str(caught.value)]

    assert asyncio.run(run()) == ["fine", "upstream 503"]


def test_the_delay_is_waited_and_reported_as_duration() -> None:
    target = _fake(responses=["slow"], delay_ms=50)
    started = time.perf_counter()
    output = asyncio.run(target.call(_request()))
    assert (time.perf_counter() - started) * 1000 >= 50
    assert output.duration_ms == 50


def test_a_reply_that_reports_its_duration_keeps_it() -> None:
    target = _fake(responses=[{"output": "x", "duration_ms": 7}], delay_ms=1)
    assert asyncio.run(target.call(_request())).duration_ms == 7


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"responses": []}, "`responses` list is empty; give at least one reply"),
        ({}, "give `responses` or a `default` reply"),
        (
            {"responses": ["ok", {"output": "x", "tool_calls": [{"args": {}}]}]},
            "invalid output from responses[1]: tool_calls[0].tool: Field required",
        ),
        (
            {"responses": {"hi": {"error": "boom", "output": "x"}}},
            "responses['hi']: an error reply must be exactly {error: <message>}",
        ),
        (
            {"default": {"outputt": "x"}},
            "invalid output from default: unknown key 'outputt'. Did you mean 'output'?",
        ),
        ({"responses": ["x"], "delay_ms": -1}, "Input should be greater than or equal to 0"),
        ({"responses": ["x"], "defualt": "y"}, "unknown key 'defualt'. Did you mean 'default'?"),
    ],
)
def test_bad_options_are_rejected_at_load_time(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _fake(**options)
    assert message in str(caught.value)
