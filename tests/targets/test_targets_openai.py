"""The openai target through the real `openai` SDK against the local fake of the API."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from assay.errors import UsageError
from assay.providers._sdk_errors import retry_after_s
from assay.results import Message, TargetOutput, TokenUsage, ToolCall
from assay.targets import BUILTIN_TARGETS, OpenAITarget, TargetRequest, TargetSpec
from assay.testing import FakeOpenAIServer, fail_first, last_user_text, tool_outputs
from tests.targets._calls import ask, failure, run

WEATHER_TOOL = {
    "name": "get_weather",
    "description": "Current weather of a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def target(server: FakeOpenAIServer | None = None, **options: Any) -> OpenAITarget:
    base_url = server.base_url if server is not None else "http://127.0.0.1:9/v1"
    spec = {"type": "openai", "model": "fake-model", "base_url": base_url, "api_key_env": None}
    return OpenAITarget.model_validate({**spec, **options})


def weather_script(body: dict[str, Any]) -> Any:
    """Calls get_weather for each city named in the prompt, then reports the results."""
    results = tool_outputs(body)
    if results:
        return "; ".join(results)
    cities = last_user_text(body).split()
    return {"tool_calls": [{"name": "get_weather", "arguments": {"city": c}} for c in cities]}


def test_a_plain_reply_with_transcript_usage_and_latency() -> None:
    with FakeOpenAIServer({"hello there": "general kenobi"}, latency_ms=5) as server:
        (output,) = run(target(server), ask())
    assert output.output == "general kenobi"
    assert output.messages == [
        Message(role="user", content="hello there"),
        Message(role="assistant", content="general kenobi"),
    ]
    assert output.tool_calls == []
    assert output.token_usage == TokenUsage(input=2, output=2)
    assert output.cost_usd is None
    assert output.duration_ms >= 5


def test_the_system_prompt_comes_first() -> None:
    with FakeOpenAIServer() as server:
        (output,) = run(target(server, system_prompt="Be terse."), ask())
        body = server.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "hello there"},
    ]
    assert output.messages[0] == Message(role="system", content="Be terse.")


def test_a_scripted_conversation_is_sent_as_chat_messages() -> None:
    request = TargetRequest(
        case_id="c",
        input=[],
        messages=(
            Message(role="system", content="You are a bot."),
            Message(role="user", content="hi"),
            Message(role="assistant", content="hello"),
            Message(role="user", content="bye"),
        ),
    )
    with FakeOpenAIServer() as server:
        (output,) = run(target(server), request)
        body = server.requests[0]
    assert body["messages"] == [
        {"role": "system", "content": "You are a bot."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "bye"},
    ]
    assert output.output == "bye"


def test_sampling_parameters_and_extra_body_arrive_in_the_request_body() -> None:
    options = {
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 64,
        "seed": 42,
        "stop": ["END"],
        "extra_body": {"logit_bias": {"50256": -100}, "user": "eval"},
    }
    with FakeOpenAIServer() as server:
        run(target(server, **options), ask())
        body = server.requests[0]
    assert body == {
        "model": "fake-model",
        "messages": [{"role": "user", "content": "hello there"}],
        "temperature": 0.2,
        "top_p": 0.9,
        "max_tokens": 64,
        "seed": 42,
        "stop": ["END"],
        "logit_bias": {"50256": -100},
        "user": "eval",
    }


def test_tools_are_sent_as_function_tools_with_their_json_schemas() -> None:
    bare = {"name": "now"}
    with FakeOpenAIServer() as server:
        run(target(server, tools=[WEATHER_TOOL, bare]), ask())
        body = server.requests[0]
    assert body["tools"] == [
        {"type": "function", "function": WEATHER_TOOL},
        {
            "type": "function",
            "function": {"name": "now", "parameters": {"type": "object", "properties": {}}},
        },
    ]


def test_the_tool_loop_answers_from_fixtures_until_the_model_replies_in_text() -> None:
    openai = target(tools=[WEATHER_TOOL], tool_loop=True)
    request = ask("Paris", tool_results={"get_weather": {"temp_c": 21, "sky": "clear"}})
    with FakeOpenAIServer(weather_script) as server:
        (output,) = run(openai.model_copy(update={"base_url": server.base_url}), request)
        first, second = server.requests
    call = ToolCall(
        tool="get_weather",
        args={"city": "Paris"},
        output={"temp_c": 21, "sky": "clear"},
        duration_ms=output.tool_calls[0].duration_ms,
    )
    assert output.output == '{"temp_c": 21, "sky": "clear"}'
    assert output.tool_calls == [call]
    assert output.tool_calls[0].duration_ms is not None
    assert output.messages == [
        Message(role="user", content="Paris"),
        Message(role="assistant", content=None, tool_calls=[call]),
        Message(role="tool", content='{"temp_c": 21, "sky": "clear"}', name="get_weather"),
        Message(role="assistant", content='{"temp_c": 21, "sky": "clear"}'),
    ]
    assert first["messages"] == [{"role": "user", "content": "Paris"}]
    assert second["messages"] == [
        {"role": "user", "content": "Paris"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1_0",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_0", "content": '{"temp_c": 21, "sky": "clear"}'},
    ]
    assert second["tools"] == first["tools"]
    # The fake counts words as tokens; usage is summed over both rounds: 1 + 5 in, 2 + 4 out.
    assert output.token_usage == TokenUsage(input=6, output=6)


def test_fixtures_listed_by_args_answer_each_call_by_its_arguments() -> None:
    fixtures = {
        "get_weather": [
            {"args": {"city": "Paris"}, "result": "sunny"},
            {"args": {"city": "Oslo"}, "result": "snow"},
            {"result": "unknown city"},
        ]
    }
    with FakeOpenAIServer(weather_script) as server:
        openai = target(server, tools=[WEATHER_TOOL], tool_loop=True)
        (output,) = run(openai, ask("Oslo Paris Lima", tool_results=fixtures))
    assert output.output == "snow; sunny; unknown city"
    assert [(c.args["city"], c.output) for c in output.tool_calls] == [
        ("Oslo", "snow"),
        ("Paris", "sunny"),
        ("Lima", "unknown city"),
    ]
    assert [m.role for m in output.messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "tool",
        "assistant",
    ]


def test_without_the_tool_loop_the_calls_are_the_output() -> None:
    with FakeOpenAIServer(weather_script) as server:
        (output,) = run(target(server, tools=[WEATHER_TOOL]), ask("Paris"))
        assert server.request_count == 1
    assert output.output == ""
    assert output.tool_calls == [ToolCall(tool="get_weather", args={"city": "Paris"})]


def test_a_tool_call_without_a_fixture_says_how_to_add_one() -> None:
    with FakeOpenAIServer(weather_script) as server:
        openai = target(server, tools=[WEATHER_TOOL], tool_loop=True)
        missing = failure(openai, ask("Paris"))
        other_tool = failure(openai, ask("Paris", tool_results={"search": "x"}))
        no_match = failure(
            openai,
            ask("Rome", tool_results={"get_weather": [{"args": {"city": "Oslo"}, "result": 1}]}),
        )
    assert str(missing) == (
        'the model called tool \'get_weather\' with {"city": "Paris"}, but the test has no '
        "`metadata.tool_results`; add `metadata: {tool_results: {get_weather: <result>}}` to the "
        "test, or a list of `{args: ..., result: ...}` to answer by arguments"
    )
    assert missing.kind == "ToolFixtureError"
    assert not missing.retryable
    assert "has no entry for it (it has: search)" in str(other_tool)
    assert str(no_match) == (
        'the model called tool \'get_weather\' with {"city": "Rome"}, but no entry of '
        '`metadata.tool_results.get_weather` has these args (listed: {"city": "Oslo"}); add '
        "`{args: ..., result: ...}` for them, or an entry without `args` as the fallback"
    )


def test_a_model_that_never_stops_calling_tools_is_cut_off() -> None:
    forever = {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}
    with FakeOpenAIServer(lambda body: forever) as server:
        openai = target(server, tools=[WEATHER_TOOL], tool_loop=True, max_tool_rounds=2)
        error = failure(openai, ask(tool_results={"get_weather": "sunny"}))
        assert server.request_count == 3
    assert error.kind == "ToolLoopError"
    assert "still calling tools after max_tool_rounds=2 rounds" in str(error)


def test_arguments_that_are_not_json_are_an_error() -> None:
    broken = {"tool_calls": [{"name": "get_weather", "arguments": "{city: Paris"}]}
    with FakeOpenAIServer(lambda body: broken) as server:
        error = failure(target(server, tools=[WEATHER_TOOL]))
    assert error.kind == "InvalidToolArguments"
    assert "called tool 'get_weather' with arguments that are not valid JSON" in str(error)


def test_a_429_is_rate_limited_with_the_servers_retry_after() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "429"), retry_after_s=0.25) as server:
        error = failure(target(server))
        assert server.request_count == 1  # the SDK's own retries are off
    assert (error.rate_limited, error.retryable, error.retry_after_s) == (True, True, 0.25)
    assert error.kind == "RateLimitError"
    assert str(error) == (
        f"openai fake-model at {server.base_url}: rate limited (HTTP 429): injected fault: HTTP 429"
    )


def test_a_429_without_retry_after_leaves_the_delay_to_the_runner() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "429"), retry_after_s=None) as server:
        error = failure(target(server))
    assert (error.rate_limited, error.retry_after_s) == (True, None)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "150", "retry-after": "2"}, 0.15),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_is_read_in_each_form_servers_send(
    headers: dict[str, str], expected: float | None
) -> None:
    assert retry_after_s(headers) == expected


@pytest.mark.parametrize("status", ["500", "503", "408"])
def test_server_errors_and_408_are_retryable(status: str) -> None:
    with FakeOpenAIServer(fault=fail_first(1, status)) as server:
        error = failure(target(server))
        assert server.request_count == 1
    assert (error.retryable, error.rate_limited, error.retry_after_s) == (True, False, None)
    assert f"HTTP {status}: injected fault: HTTP {status}" in str(error)


def test_other_client_errors_are_final_and_carry_the_servers_message() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "404")) as server:
        error = failure(target(server))
    assert not error.retryable
    assert error.kind == "NotFoundError"
    assert (
        str(error) == f"openai fake-model at {server.base_url}: HTTP 404: injected fault: HTTP 404"
    )


def test_a_wrong_api_key_points_at_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_KEY", "wrong")
    with FakeOpenAIServer(api_key="right") as server:
        error = failure(target(server, api_key_env="ASSAY_TEST_KEY"))
        monkeypatch.setenv("ASSAY_TEST_KEY", "right")
        (output,) = run(target(server, api_key_env="ASSAY_TEST_KEY"), ask())
    assert not error.retryable
    assert str(error).endswith(
        "HTTP 401: invalid API key (the API key is read from $ASSAY_TEST_KEY)"
    )
    assert output.output == "hello there"


def test_a_timeout_is_retryable() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "timeout"), hang_s=30) as server:
        error = failure(target(server, timeout_s=0.2))
    assert (error.retryable, error.rate_limited, error.kind) == (True, False, "APITimeoutError")
    assert str(error) == f"openai fake-model at {server.base_url}: the request timed out after 0.2s"


def test_a_dropped_connection_is_retryable() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "drop")) as server:
        error = failure(target(server))
    assert (error.retryable, error.kind) == (True, "APIConnectionError")
    assert str(error) == (
        f"openai fake-model at {server.base_url}: the connection to {server.base_url} was "
        "closed by the server before it replied (ServerDisconnectedError: Server disconnected)"
    )


def test_a_malformed_reply_is_retryable() -> None:
    with FakeOpenAIServer(fault=fail_first(1, "malformed")) as server:
        error = failure(target(server))
    assert (error.retryable, error.kind) == (True, "MalformedResponse")
    assert "the reply is not valid JSON for the API" in str(error)


def test_a_refused_connection_is_retryable() -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url
    error = failure(target(base_url=url))
    assert (error.retryable, error.kind) == (True, "APIConnectionError")
    assert f"the connection to {url} was refused; is the server running?" in str(error)


def test_a_missing_api_key_variable_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    openai = OpenAITarget(type="openai", model="gpt-4.1-mini", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(UsageError) as caught:
        asyncio.run(openai.setup(Path()))
    assert str(caught.value) == (
        "openai target: environment variable OPENAI_API_KEY is not set. Export it with your API "
        "key, name another variable in `api_key_env`, or set `api_key_env: null` for a local "
        "server that needs no key"
    )


def test_the_same_client_serves_concurrent_cases() -> None:
    async def go(openai: OpenAITarget) -> list[TargetOutput]:
        await openai.setup(Path())
        try:
            return await asyncio.gather(*(openai.call(ask(f"q{i}")) for i in range(20)))
        finally:
            await openai.teardown()

    with FakeOpenAIServer(latency_ms=20) as server:
        outputs = asyncio.run(go(target(server)))
    assert [o.output for o in outputs] == [f"q{i}" for i in range(20)]


def test_cost_is_computed_from_token_usage_and_prices() -> None:
    reply = {"content": "ok", "usage": {"prompt_tokens": 1000, "completion_tokens": 500}}
    with FakeOpenAIServer(lambda body: reply) as server:
        (priced,) = run(target(server, cost_per_1k_input=0.4, cost_per_1k_output=1.6), ask())
        (input_only,) = run(target(server, cost_per_1k_input=0.4), ask())
    assert priced.token_usage == TokenUsage(input=1000, output=500)
    assert priced.cost_usd == pytest.approx(0.4 + 0.8)
    assert input_only.cost_usd == pytest.approx(0.4)


def test_the_cache_key_is_the_first_request_and_changes_with_what_shapes_the_reply() -> None:
    base = target(temperature=0.0, tools=[WEATHER_TOOL])
    fixtures = {"get_weather": "sunny"}
    key = base.cache_key(ask(tool_results=fixtures))
    assert key == {
        "provider": "openai",
        "model": "fake-model",
        "base_url": "http://127.0.0.1:9/v1",
        "body": {
            "model": "fake-model",
            "messages": [{"role": "user", "content": "hello there"}],
            "temperature": 0.0,
            "tools": [{"type": "function", "function": WEATHER_TOOL}],
        },
        "tool_results": fixtures,
    }
    assert (
        target(temperature=0.0, tools=[WEATHER_TOOL]).cache_key(ask(tool_results=fixtures)) == key
    )
    assert base.model_copy(update={"timeout_s": 5.0}).cache_key(ask(tool_results=fixtures)) == key
    assert base.model_copy(update={"model": "other"}).cache_key(ask(tool_results=fixtures)) != key
    assert base.model_copy(update={"temperature": 0.7}).cache_key(ask(tool_results=fixtures)) != key
    assert base.cache_key(ask(tool_results={"get_weather": "rain"})) != key
    assert base.cache_key(ask("other prompt", tool_results=fixtures)) != key


def test_the_default_endpoint_is_named_in_the_cache_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    default = OpenAITarget(type="openai", model="m")
    assert default.cache_key(ask())["base_url"] == "https://api.openai.com/v1"  # type: ignore[index]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert default.cache_key(ask())["base_url"] == "http://127.0.0.1:9/v1"  # type: ignore[index]


def test_a_target_equals_its_config_before_and_after_setup() -> None:
    with FakeOpenAIServer() as server:
        openai = target(server)

        async def go() -> bool:
            await openai.setup(Path())
            try:
                return openai == target(server)
            finally:
                await openai.teardown()

        assert asyncio.run(go())


def test_calling_before_setup_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match=r"call setup\(\) before call\(\)"):
        asyncio.run(target().call(ask()))


def test_the_spec_union_parses_the_spec_example() -> None:
    spec = {
        "type": "openai",
        "model": "gpt-4.1-mini",
        "base_url": "http://127.0.0.1:8000/v1",
        "api_key_env": "OPENAI_API_KEY",
        "temperature": 0,
    }
    parsed = TypeAdapter(TargetSpec).validate_python(spec)
    assert isinstance(parsed, OpenAITarget)
    assert parsed.temperature == 0.0
    assert BUILTIN_TARGETS["openai"] is OpenAITarget
    assert parsed.describe() == "openai gpt-4.1-mini at http://127.0.0.1:8000/v1"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"temprature": 0}, "unknown key 'temprature'. Did you mean 'temperature'?"),
        ({"extra_body": {"model": "x"}}, "`extra_body` must not set model"),
        ({"tools": [{"name": "get weather"}]}, "String should match pattern"),
        ({"max_tool_rounds": 0}, "Input should be greater than or equal to 1"),
    ],
)
def test_invalid_options_are_rejected_when_the_suite_loads(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        target(**options)
