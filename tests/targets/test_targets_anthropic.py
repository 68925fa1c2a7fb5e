"""The anthropic target through the real `anthropic` SDK against the local fake of the API."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from assay.errors import TargetError, UsageError
from assay.results import Message, TokenUsage, ToolCall
from assay.targets import BUILTIN_TARGETS, AnthropicTarget, TargetRequest, TargetSpec
from assay.testing import FakeOpenAIServer, fail_first, last_user_text, tool_outputs
from tests.targets._calls import ask, failure, run

SEARCH_TOOL = {
    "name": "search",
    "description": "Search the docs",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
}


def target(server: FakeOpenAIServer | None = None, **options: Any) -> AnthropicTarget:
    base_url = server.url if server is not None else "http://127.0.0.1:9"
    spec = {"type": "anthropic", "model": "claude-x", "base_url": base_url, "api_key_env": None}
    return AnthropicTarget.model_validate({**spec, **options})


def search_script(body: dict[str, Any]) -> Any:
    """Searches each word of the prompt, then answers with what the searches returned."""
    results = tool_outputs(body)
    if results:
        return "found: " + ", ".join(results)
    words = last_user_text(body).split()
    return {
        "content": "Searching.",
        "tool_calls": [{"name": "search", "arguments": {"q": w}} for w in words],
    }


def test_a_plain_reply_with_the_request_shape_the_messages_api_expects() -> None:
    request = TargetRequest(
        case_id="c",
        input=[],
        messages=(
            Message(role="system", content="Context: docs."),
            Message(role="user", content="hello there"),
        ),
    )
    options = {"system_prompt": "Be terse.", "temperature": 0.1, "top_p": 0.5, "stop": "END"}
    with FakeOpenAIServer({"hello there": "hi"}) as server:
        (output,) = run(target(server, **options), request)
        body = server.requests[0]
    assert body == {
        "model": "claude-x",
        "max_tokens": 1024,
        "system": "Be terse.\n\nContext: docs.",
        "messages": [{"role": "user", "content": "hello there"}],
        "temperature": 0.1,
        "top_p": 0.5,
        "stop_sequences": ["END"],
    }
    assert output.output == "hi"
    assert output.messages == [
        Message(role="system", content="Be terse."),
        Message(role="system", content="Context: docs."),
        Message(role="user", content="hello there"),
        Message(role="assistant", content="hi"),
    ]
    assert output.token_usage == TokenUsage(input=4 + 2, output=1)


def test_tools_are_sent_with_input_schemas() -> None:
    with FakeOpenAIServer() as server:
        run(target(server, tools=[SEARCH_TOOL], max_tokens=50), ask())
        body = server.requests[0]
    assert body["max_tokens"] == 50
    assert body["tools"] == [
        {
            "name": "search",
            "description": "Search the docs",
            "input_schema": SEARCH_TOOL["parameters"],
        }
    ]


def test_the_tool_loop_answers_tool_use_blocks_from_fixtures() -> None:
    fixtures = {"search": [{"args": {"q": "alpha"}, "result": "A"}, {"result": {"hits": 0}}]}
    with FakeOpenAIServer(search_script) as server:
        anthropic = target(server, tools=[SEARCH_TOOL], tool_loop=True)
        (output,) = run(anthropic, ask("alpha beta", tool_results=fixtures))
        second = server.requests[1]
    durations = [c.duration_ms for c in output.tool_calls]
    calls = [
        ToolCall(tool="search", args={"q": "alpha"}, output="A", duration_ms=durations[0]),
        ToolCall(tool="search", args={"q": "beta"}, output={"hits": 0}, duration_ms=durations[1]),
    ]
    assert output.output == 'found: A, {"hits": 0}'
    assert output.tool_calls == calls
    assert output.messages == [
        Message(role="user", content="alpha beta"),
        Message(role="assistant", content="Searching.", tool_calls=calls),
        Message(role="tool", content="A", name="search"),
        Message(role="tool", content='{"hits": 0}', name="search"),
        Message(role="assistant", content='found: A, {"hits": 0}'),
    ]
    assert second["messages"] == [
        {"role": "user", "content": "alpha beta"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "toolu_1_0", "name": "search", "input": {"q": "alpha"}},
                {"type": "tool_use", "id": "toolu_1_1", "name": "search", "input": {"q": "beta"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1_0", "content": "A"},
                {"type": "tool_result", "tool_use_id": "toolu_1_1", "content": '{"hits": 0}'},
            ],
        },
    ]
    # Words stand in for tokens; usage is summed over both rounds: 2 + 6 in, 5 + 4 out.
    assert output.token_usage == TokenUsage(input=2 + 6, output=5 + 4)


def test_input_tool_calls_become_tool_use_and_tool_result_blocks() -> None:
    request = TargetRequest(
        case_id="c",
        input=[],
        messages=(
            Message(role="user", content="look it up"),
            Message(
                role="assistant",
                content=None,
                tool_calls=[ToolCall(tool="search", args={"q": "x"})],
            ),
            Message(role="tool", content="result x"),
            Message(role="user", content="and now?"),
        ),
    )
    with FakeOpenAIServer() as server:
        (output,) = run(target(server), request)
        body = server.requests[0]
    assert body["messages"] == [
        {"role": "user", "content": "look it up"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_1_0", "name": "search", "input": {"q": "x"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "call_1_0", "content": "result x"}],
        },
        {"role": "user", "content": "and now?"},
    ]
    assert output.output == "and now?"


def test_a_tool_message_answering_no_call_is_an_error() -> None:
    request = TargetRequest(
        case_id="c", input=[], messages=(Message(role="tool", content="orphan"),)
    )
    with pytest.raises(TargetError, match="input message 0 has role 'tool' but answers no tool"):
        target().cache_key(request)


def test_a_tool_call_without_a_fixture_is_an_error() -> None:
    with FakeOpenAIServer(search_script) as server:
        error = failure(target(server, tools=[SEARCH_TOOL], tool_loop=True), ask("alpha"))
    assert error.kind == "ToolFixtureError"
    assert "add `metadata: {tool_results: {search: <result>}}` to the test" in str(error)


def test_a_429_is_rate_limited_with_the_servers_retry_after() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "429"), retry_after_s=0.5) as server:
        error = failure(target(server))
        assert server.request_count == 1  # the SDK's own retries are off
    assert (error.rate_limited, error.retryable, error.retry_after_s) == (True, True, 0.5)
    assert str(error) == (
        f"anthropic claude-x at {server.url}: rate limited (HTTP 429): injected fault: HTTP 429"
    )


@pytest.mark.parametrize(("status", "retryable"), [("529", True), ("500", True), ("400", False)])
def test_status_errors_map_by_code(status: str, retryable: bool) -> None:
    with FakeOpenAIServer(fault=fail_first(1, status)) as server:
        error = failure(target(server))
    assert (error.retryable, error.rate_limited) == (retryable, False)
    assert (
        str(error)
        == f"anthropic claude-x at {server.url}: HTTP {status}: injected fault: HTTP {status}"
    )


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("drop", "APIConnectionError"),
        ("timeout", "APITimeoutError"),
        ("malformed", "MalformedResponse"),
    ],
)
def test_transport_failures_are_retryable(fault: str, kind: str) -> None:
    with FakeOpenAIServer(fault=fail_first(1, fault), hang_s=30) as server:
        error = failure(target(server, timeout_s=0.2))
    assert (error.retryable, error.kind) == (True, kind)


def test_a_missing_api_key_variable_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    anthropic = AnthropicTarget(type="anthropic", model="claude-x", base_url="http://127.0.0.1:9")
    with pytest.raises(UsageError, match="environment variable ANTHROPIC_API_KEY is not set"):
        asyncio.run(anthropic.setup(Path()))


def test_without_the_sdk_setup_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(UsageError) as caught:
        asyncio.run(target().setup(Path()))
    assert str(caught.value) == (
        "anthropic target needs the `anthropic` SDK; "
        "install the extra: pip install 'assay[anthropic]'"
    )


def test_cost_and_cache_key() -> None:
    reply = {"content": "ok", "usage": {"prompt_tokens": 2000, "completion_tokens": 1000}}
    with FakeOpenAIServer(lambda body: reply) as server:
        anthropic = target(server, cost_per_1k_input=3.0, cost_per_1k_output=15.0)
        (output,) = run(anthropic, ask())
    assert output.cost_usd == pytest.approx(6.0 + 15.0)
    key = anthropic.cache_key(ask())
    assert key == {
        "provider": "anthropic",
        "model": "claude-x",
        "base_url": server.url,
        "body": {
            "model": "claude-x",
            "messages": [{"role": "user", "content": "hello there"}],
            "max_tokens": 1024,
        },
        "tool_results": None,
    }
    assert anthropic.model_copy(update={"temperature": 0.5}).cache_key(ask()) != key
    assert anthropic.model_copy(update={"model": "claude-y"}).cache_key(ask()) != key


def test_the_spec_union_parses_an_anthropic_target() -> None:
    parsed = TypeAdapter(TargetSpec).validate_python(
        {"type": "anthropic", "model": "claude-sonnet-4-5", "tool_loop": True}
    )
    assert isinstance(parsed, AnthropicTarget)
    assert parsed.api_key_env == "ANTHROPIC_API_KEY"
    assert parsed.max_tokens == 1024
    assert BUILTIN_TARGETS["anthropic"] is AnthropicTarget


def _image_request(*parts: dict[str, Any]) -> TargetRequest:
    content = [{"type": "text", "text": "alpha beta"}, *parts]
    return TargetRequest(case_id="c", input=[], messages=(Message(role="user", content=content),))


def test_i25_4_image_parts_become_image_blocks_and_stay_through_the_tool_loop() -> None:
    inline = "data:image/png;base64,iVBORw0KGgoAAAA="
    request = _image_request(
        {"type": "image_url", "image_url": {"url": inline, "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "https://example.test/cat.jpg"}},
    )
    fixtures = {"search": [{"args": {"q": "alpha"}, "result": "A"}, {"result": "B"}]}
    request = TargetRequest(
        case_id="c", input=[], messages=request.messages, metadata={"tool_results": fixtures}
    )
    with FakeOpenAIServer(search_script) as server:
        anthropic = target(server, tools=[SEARCH_TOOL], tool_loop=True)
        (output,) = run(anthropic, request)
        first, second = server.requests
    blocks = [
        {"type": "text", "text": "alpha beta"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": "iVBORw0KGgoAAAA="}},
        {"type": "image", "source": {"type": "url", "url": "https://example.test/cat.jpg"}},
    ]  # fmt: skip
    assert first["messages"] == [{"role": "user", "content": blocks}]
    assert second["messages"][0] == {"role": "user", "content": blocks}
    assert output.output == "found: A, B"


def test_i25_4_an_audio_part_is_a_clear_error_for_the_messages_api() -> None:
    audio = {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    with FakeOpenAIServer() as server:
        error = failure(target(server), _image_request(audio))
        assert server.request_count == 0
    assert "a 'input_audio' part cannot be sent" in str(error)
