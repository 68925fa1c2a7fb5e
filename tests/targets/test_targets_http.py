from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from pydantic import TypeAdapter, ValidationError

from assay.errors import TargetError
from assay.results import Message, TargetOutput, TokenUsage, ToolCall
from assay.targets import BUILTIN_TARGETS, HttpTarget, TargetRequest, TargetSpec

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
SPEC: TypeAdapter[Any] = TypeAdapter(TargetSpec)


def _request(
    input: str | list[dict[str, str]] = "What is the refund window?",
    metadata: dict[str, Any] | None = None,
) -> TargetRequest:
    if isinstance(input, str):
        messages: tuple[Message, ...] = (Message(role="user", content=input),)
    else:
        messages = tuple(Message(**m) for m in input)
    return TargetRequest(
        case_id="refund-1",
        input=input,
        messages=messages,
        metadata=metadata if metadata is not None else {"tier": "gold", "max_tokens": 64},
        repeat_index=2,
    )


def _json(payload: Any, status: int = 200, **headers: str) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        del request
        return web.json_response(payload, status=status, headers=headers)

    return handler


@asynccontextmanager
async def _server(handler: Handler) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """A real HTTP server on 127.0.0.1 and a free port; yields its URL and the requests seen."""
    seen: list[dict[str, Any]] = []

    async def record(request: web.Request) -> web.StreamResponse:
        seen.append(
            {
                "method": request.method,
                "path": request.path,
                "query": dict(request.query),
                "headers": dict(request.headers),
                "body": await request.json() if request.body_exists else None,
            }
        )
        return await handler(request)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", record)
    async with TestServer(app, host="127.0.0.1") as server:
        yield f"http://127.0.0.1:{server.port}", seen


def _target(url: str, **options: Any) -> HttpTarget:
    return HttpTarget.model_validate({"type": "http", "url": url, **options})


def _exchange(
    handler: Handler,
    request: TargetRequest | None = None,
    *,
    path: str = "/run",
    **options: Any,
) -> tuple[TargetOutput, list[dict[str, Any]]]:
    """Call a fresh target (set up and torn down) against `handler`; the output and requests."""

    async def scenario() -> tuple[TargetOutput, list[dict[str, Any]]]:
        async with _server(handler) as (base, seen):
            target = _target(base + path, **options)
            await target.setup(Path())
            try:
                output = await target.call(request or _request())
            finally:
                await target.teardown()
            return output, seen

    return asyncio.run(scenario())


def _failure(handler: Handler, **options: Any) -> tuple[TargetError, str]:
    """The error of one call and the server's base URL."""

    async def scenario() -> tuple[TargetError, str]:
        async with _server(handler) as (base, _):
            target = _target(base + "/run", **options)
            await target.setup(Path())
            try:
                with pytest.raises(TargetError) as caught:
                    await target.call(_request())
            finally:
                await target.teardown()
            return caught.value, base

    return asyncio.run(scenario())


def test_body_template_renders_values_and_passes_messages_through() -> None:
    conversation = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Refund window?"},
    ]
    output, seen = _exchange(
        _json({"output": "30 days"}),
        _request(conversation),
        body={
            "model": "support-v2",
            "messages": "{{ messages }}",
            "raw": "{{ input }}",
            "meta": "{{ metadata }}",
            "max_tokens": "{{ metadata.max_tokens }}",
            "question": "Q: {{ prompt }} ({{ metadata.tier | upper }})",
            "trace": {"case": "{{ case_id }}", "ids": ["{{ case_id }}-{{ repeat_index }}", 7]},
            "as_text": "{{ messages | tojson }}",
            "stream": False,
        },
        headers={"Authorization": "Bearer s3cret", "X-Team": "support"},
    )
    assert output.output == "30 days"
    (sent,) = seen
    assert sent["method"] == "POST"
    assert sent["path"] == "/run"
    assert sent["headers"]["Authorization"] == "Bearer s3cret"
    assert sent["headers"]["X-Team"] == "support"
    assert sent["headers"]["Content-Type"] == "application/json"
    assert sent["body"] == {
        "model": "support-v2",
        "messages": conversation,
        "raw": conversation,
        "meta": {"tier": "gold", "max_tokens": 64},
        "max_tokens": 64,
        "question": "Q: Refund window? (GOLD)",
        "trace": {"case": "refund-1", "ids": ["refund-1-2", 7]},
        "as_text": (
            '[{"role": "system", "content": "Be brief."}, '
            '{"role": "user", "content": "Refund window?"}]'
        ),
        "stream": False,
    }


def test_without_a_body_the_case_mapping_is_sent() -> None:
    _, seen = _exchange(_json({"output": "ok"}), method="put")
    assert seen[0]["method"] == "PUT"
    assert seen[0]["body"] == {
        "id": "refund-1",
        "input": "What is the refund window?",
        "messages": [{"role": "user", "content": "What is the refund window?"}],
        "metadata": {"tier": "gold", "max_tokens": 64},
        "repeat_index": 2,
    }


def test_get_sends_no_body_and_the_url_is_a_template() -> None:
    output, seen = _exchange(
        _json({"answer": {"text": "hi"}}),
        _request("fish & chips = 5€?"),
        path="/ask?q={{ prompt | urlencode }}&case={{ case_id }}",
        method="GET",
        output_path="$.answer.text",
    )
    assert output.output == "hi"
    assert seen[0]["method"] == "GET"
    assert seen[0]["path"] == "/ask"
    assert seen[0]["query"] == {"q": "fish & chips = 5€?", "case": "refund-1"}
    assert seen[0]["body"] is None


def test_openai_shaped_response_output_tool_calls_and_usage() -> None:
    response = {
        "id": "chatcmpl-1",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        }
                    ],
                }
            }
        ],
        "usage": {"prompt_tokens": 21, "completion_tokens": 5, "total_tokens": 26},
    }
    output, _ = _exchange(
        _json(response),
        output_path="$.choices[0].message.content",
        tool_calls_path="$.choices[0].message.tool_calls",
        token_usage_path={"input": "$.usage.prompt_tokens", "output": "$.usage.completion_tokens"},
    )
    assert output.output == ""
    assert output.tool_calls == [ToolCall(tool="get_weather", args={"city": "Paris"})]
    assert output.token_usage == TokenUsage(input=21, output=5)
    assert 0 < output.duration_ms < 5000


def test_filter_paths_join_text_and_select_one_node_per_tool_call() -> None:
    response = {
        "content": [
            {"type": "text", "text": "Let me check. "},
            {"type": "tool_use", "id": "t1", "name": "lookup", "input": {"order": 7}},
            {"type": "text", "text": "Done."},
            {"type": "tool_use", "id": "t2", "name": "notify", "input": {}},
        ],
        "steps": [{"tool": "lookup", "args": {"order": 7}, "output": "shipped", "duration_ms": 12}],
    }
    output, _ = _exchange(
        _json(response),
        output_path="$.content[?@.type == 'text'].text",
        tool_calls_path="$.content[?@.type == 'tool_use']",
    )
    assert output.output == "Let me check. Done."
    assert output.tool_calls == [
        ToolCall(tool="lookup", args={"order": 7}),
        ToolCall(tool="notify", args={}),
    ]
    steps, _ = _exchange(
        _json(response), output_path="$.content[0].text", tool_calls_path="$.steps"
    )
    assert steps.tool_calls == [
        ToolCall(tool="lookup", args={"order": 7}, output="shipped", duration_ms=12.0)
    ]


def test_a_non_string_output_is_compact_json_and_absent_tool_calls_are_none() -> None:
    output, _ = _exchange(
        _json({"output": {"refund_days": 30, "note": "café"}}), tool_calls_path="$.tools"
    )
    assert output.output == '{"refund_days":30,"note":"café"}'
    assert output.tool_calls == []


def test_a_call_without_setup_uses_a_session_of_its_own() -> None:
    async def scenario() -> str:
        async with _server(_json({"output": "no setup"})) as (base, _):
            return (await _target(base).call(_request())).output

    assert asyncio.run(scenario()) == "no setup"


@pytest.mark.parametrize(
    ("header", "expected"),
    [("7", 7.0), ("0.5", 0.5), ("soon", None), (None, None)],
)
def test_429_is_rate_limited_with_retry_after_seconds(
    header: str | None, expected: float | None
) -> None:
    headers = {"Retry-After": header} if header is not None else {}
    error, base = _failure(_json({"error": "slow down"}, status=429, **headers))
    assert error.rate_limited
    assert error.retryable
    assert error.retry_after_s == expected
    assert error.kind == "RateLimitError"
    hint = f"; retry after {expected:g}s" if expected is not None else ""
    assert str(error) == (
        f"POST {base}/run returned HTTP 429 Too Many Requests (rate limited){hint}"
    )


def test_429_retry_after_may_be_an_http_date() -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    error, _ = _failure(_json({}, status=429, **{"Retry-After": when}))
    assert error.retry_after_s is not None
    assert 25 <= error.retry_after_s <= 30
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True)
    error, _ = _failure(_json({}, status=429, **{"Retry-After": past}))
    assert error.retry_after_s == 0.0


@pytest.mark.parametrize(
    ("status", "reason", "retryable"),
    [
        (500, "Internal Server Error", True),
        (503, "Service Unavailable", True),
        (408, "Request Timeout", True),
        (400, "Bad Request", False),
        (404, "Not Found", False),
    ],
)
def test_status_errors_carry_a_body_snippet(status: int, reason: str, retryable: bool) -> None:
    error, base = _failure(_json({"error": {"message": "model  overloaded\n"}}, status=status))
    assert error.retryable is retryable
    assert not error.rate_limited
    assert error.kind == "HTTPStatusError"
    assert str(error) == (
        f'POST {base}/run returned HTTP {status} {reason}: {{"error": {{"message": '
        '"model overloaded\\n"}}'
    )


def test_a_long_error_body_is_cut() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        del request
        return web.Response(status=422, text="x" * 1000)

    error, _ = _failure(handler)
    assert not error.retryable
    assert str(error).endswith(": " + "x" * 300 + "…")


def test_a_refused_connection_is_retryable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    target = _target(f"http://127.0.0.1:{port}/run")

    async def scenario() -> TargetError:
        await target.setup(Path())
        try:
            with pytest.raises(TargetError) as caught:
                await target.call(_request())
        finally:
            await target.teardown()
        return caught.value

    error = asyncio.run(scenario())
    assert error.retryable
    assert error.kind == "ConnectionError"
    assert str(error).startswith(f"POST http://127.0.0.1:{port}/run failed: ")


def test_a_timeout_is_retryable() -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(5)
        return await _json({"output": "late"})(request)

    error, base = _failure(slow, timeout_s=0.1)
    assert error.retryable
    assert error.kind == "TimeoutError"
    assert str(error) == f"POST {base}/run timed out after 0.1s"


def test_a_response_that_is_not_json_is_an_error() -> None:
    async def html(request: web.Request) -> web.StreamResponse:
        del request
        return web.Response(text="<html>maintenance</html>", content_type="text/html")

    error, base = _failure(html)
    assert not error.retryable
    assert str(error) == (
        f"the response of POST {base}/run is not JSON (Expecting value: line 1 column 1 "
        "(char 0)): <html>maintenance</html>"
    )


def test_a_path_matching_nothing_names_it_and_shows_the_top_level_keys() -> None:
    response = {"choices": [], "usage": {"prompt_tokens": 3}}
    error, base = _failure(_json(response), output_path="$.answer")
    assert not error.retryable
    assert str(error) == (
        f"output_path '$.answer' matched nothing in the response of POST {base}/run; "
        "its top-level keys are: choices, usage"
    )
    error, base = _failure(
        _json(response), output_path="$.usage", token_usage_path={"output": "$.usage.completion"}
    )
    assert str(error) == (
        f"token_usage_path.output '$.usage.completion' matched nothing in the response of "
        f"POST {base}/run; its top-level keys are: choices, usage"
    )
    error, _ = _failure(_json([1, 2, 3]))
    assert str(error).endswith("the response is an array of 3 items")


def test_a_token_count_must_be_a_count() -> None:
    error, _ = _failure(_json({"output": "x", "n": "many"}), token_usage_path={"input": "$.n"})
    assert str(error) == "token_usage_path.input '$.n' selected 'many', not a token count"


def test_a_malformed_tool_call_is_reported() -> None:
    error, base = _failure(
        _json({"output": "x", "calls": [{"args": {}}]}), tool_calls_path="$.calls"
    )
    assert str(error) == (
        f"invalid output from http target (POST {base}/run): tool_calls[0].tool: Field required"
    )


def test_an_undefined_template_variable_is_an_error_naming_its_place() -> None:
    error, _ = _failure(_json({"output": "x"}), body={"a": ["{{ metadata.missing }}"]})
    assert str(error) == (
        "http target: cannot render body.a[0] '{{ metadata.missing }}': "
        "'dict object' has no attribute 'missing'"
    )
    error, _ = _failure(_json({"output": "x"}), body={"q": "Q: {{ promt }}"})
    assert str(error) == "http target: cannot render body.q 'Q: {{ promt }}': 'promt' is undefined"


def test_the_sandbox_blocks_python_internals() -> None:
    error, _ = _failure(_json({"output": "x"}), body={"q": "{{ prompt.__class__.__mro__ }}"})
    assert "cannot render body.q" in str(error)


def test_cache_key_is_the_rendered_request() -> None:
    target = _target(
        "https://agent.example/v1/{{ metadata.tier }}",
        body={"q": "{{ prompt }}", "n": "{{ metadata.max_tokens }}"},
        headers={"Authorization": "Bearer secret"},
    )
    assert target.cache_key(_request()) == {
        "provider": "http",
        "url": "https://agent.example/v1/gold",
        "method": "POST",
        "body": {"q": "What is the refund window?", "n": 64},
    }
    assert target.describe() == "http POST https://agent.example/v1/{{ metadata.tier }}"
    # Not cacheable when a template fails: the call itself then reports the error.
    assert target.cache_key(_request(metadata={})) is None


def test_http_is_a_builtin_target_spec_with_defaults() -> None:
    target = SPEC.validate_python({"type": "http", "url": "http://127.0.0.1:9/run"})
    assert isinstance(target, HttpTarget)
    assert BUILTIN_TARGETS["http"] is HttpTarget
    assert (target.method, target.output_path, target.timeout_s) == ("POST", "$.output", 120.0)
    assert target == _target("http://127.0.0.1:9/run")


@pytest.mark.parametrize(
    ("options", "loc", "message"),
    [
        (
            {"output_path": "$.choices[0"},
            ("http", "output_path"),
            "invalid JSONPath '$.choices[0': unbalanced brackets, line 1, column 11",
        ),
        (
            {"tool_calls_path": "tool_calls"},
            ("http", "tool_calls_path"),
            "invalid JSONPath 'tool_calls': expected '$', found 't', line 1, column 0",
        ),
        (
            {"token_usage_path": {"input": "$.usage..[?foo()]"}},
            ("http", "token_usage_path", "input"),
            "invalid JSONPath '$.usage..[?foo()]': function 'foo' is not defined",
        ),
        (
            {"token_usage_path": {}},
            ("http", "token_usage_path"),
            "give the JSONPath of `input` and/or `output` tokens",
        ),
        (
            {"body": {"messages": ["{{ messages }"]}},
            ("http", "body"),
            "body.messages[0]: template syntax error: unexpected '}'",
        ),
        ({"url": "ftp://x"}, ("http", "url"), "'ftp://x' is not an http:// or https:// URL"),
        (
            {"method": "GET", "body": {"q": "{{ prompt }}"}},
            ("http",),
            "a GET request sends no body; use POST or PUT, or template the url",
        ),
        ({"method": "PATCH"}, ("http", "method"), "Input should be 'POST', 'PUT' or 'GET'"),
        ({"timeout_s": 0}, ("http", "timeout_s"), "Input should be greater than 0"),
    ],
)
def test_bad_options_are_located_validation_errors(
    options: dict[str, Any], loc: tuple[str, ...], message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        SPEC.validate_python({"type": "http", "url": "http://127.0.0.1:9/run", **options})
    (error,) = caught.value.errors()
    assert error["loc"] == loc
    assert message in error["msg"]


def test_i26_1_context_path_picks_the_retrieved_passages() -> None:
    reply = {
        "answer": "Refunds take 30 days.",
        "sources": [
            {"id": "refunds", "text": "Refunds are issued within 30 days.", "score": 0.91},
            {"id": 12, "text": "Shipping is free.", "score": 0.2},
        ],
    }
    output, _ = _exchange(_json(reply), output_path="$.answer", context_path="$.sources")
    assert [(p.id, p.text, p.score) for p in output.context] == [
        ("refunds", "Refunds are issued within 30 days.", 0.91),
        ("12", "Shipping is free.", 0.2),
    ]
    one_per_node, _ = _exchange(_json(reply), output_path="$.answer", context_path="$.sources[*]")
    assert one_per_node.context == output.context
    none, _ = _exchange(_json({"answer": "x"}), output_path="$.answer", context_path="$.sources")
    assert none.context == []
