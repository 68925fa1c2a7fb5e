"""Reading replies of both wire formats into provider-neutral turns."""

from __future__ import annotations

import pytest

from assay.providers import ProviderError, anthropic_wire, openai_wire
from assay.results import TokenUsage


@pytest.mark.parametrize(
    "reply",
    [{}, {"choices": []}, {"choices": [{"index": 0}]}, ["not", "an", "object"], None],
    ids=["no-choices-key", "empty-choices", "no-message", "a-list", "null"],
)
def test_a_reply_without_a_first_message_is_malformed(reply: object) -> None:
    with pytest.raises(ProviderError) as caught:
        openai_wire.read_turn(reply)
    assert caught.value.kind == "MalformedResponse"
    assert str(caught.value).startswith("the reply has no choices[0].message: ")


def test_only_function_tool_calls_are_supported() -> None:
    with pytest.raises(ProviderError) as caught:
        openai_wire._turn_call({"id": "c1", "type": "custom", "custom": {}})
    assert caught.value.kind == "UnsupportedToolCall"
    assert str(caught.value) == (
        "the model made a 'custom' tool call; only function tools are supported"
    )


def test_a_tool_call_without_a_name_is_malformed() -> None:
    with pytest.raises(ProviderError) as caught:
        openai_wire._turn_call({"id": "c1", "function": {"arguments": "{}"}})
    assert caught.value.kind == "MalformedResponse"


def test_tool_call_arguments_given_as_an_object_are_accepted() -> None:
    call = openai_wire._turn_call(
        {"id": "c1", "function": {"name": "lookup", "arguments": {"id": 7}}}
    )
    assert (call.id, call.name, call.args) == ("c1", "lookup", {"id": 7})


@pytest.mark.parametrize(
    ("reply", "usage"),
    [
        ({"usage": {"prompt_tokens": 3, "completion_tokens": 5}}, TokenUsage(input=3, output=5)),
        ({"usage": {"prompt_tokens": 3}}, TokenUsage(input=3, output=0)),
        ({"usage": None}, None),
        ({}, None),
    ],
)
def test_token_usage_is_read_from_the_reply(reply: object, usage: TokenUsage | None) -> None:
    assert openai_wire.read_usage(reply) == usage


def test_an_anthropic_reply_joins_text_blocks_and_reads_tool_use_blocks() -> None:
    turn = anthropic_wire.read_turn(
        {
            "content": [
                {"type": "text", "text": "Let me look. "},
                {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"id": 7}},
            ],
            "usage": {"input_tokens": 4, "output_tokens": 2},
        }
    )
    assert (turn.text, turn.usage) == ("Let me look. ", TokenUsage(input=4, output=2))
    assert [(c.id, c.name, c.args) for c in turn.calls] == [("t1", "lookup", {"id": 7})]


def test_an_anthropic_reply_without_content_blocks_is_malformed() -> None:
    with pytest.raises(ProviderError) as caught:
        anthropic_wire.read_turn({"type": "message"})
    assert (caught.value.kind, caught.value.retryable) == ("MalformedResponse", False)
