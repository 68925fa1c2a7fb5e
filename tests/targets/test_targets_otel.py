from __future__ import annotations

import json
from typing import Any

from assay.results import TokenUsage, ToolCall
from assay.targets import parse_target_output
from assay.targets._otel import context_from_spans, token_usage_from_spans, tool_calls_from_spans

MS = 1_000_000  # nanoseconds


def _otlp(attributes: dict[str, Any]) -> list[dict[str, Any]]:
    """Attributes in the OTLP JSON encoding, int64 as strings as protobuf JSON writes them."""
    encoded = []
    for key, value in attributes.items():
        if isinstance(value, bool):
            wrapped: dict[str, Any] = {"boolValue": value}
        elif isinstance(value, int):
            wrapped = {"intValue": str(value)}
        elif isinstance(value, float):
            wrapped = {"doubleValue": value}
        else:
            wrapped = {"stringValue": value}
        encoded.append({"key": key, "value": wrapped})
    return encoded


def _tool_span(name: str, start_ms: int, end_ms: int, **attributes: Any) -> dict[str, Any]:
    return {
        "name": f"execute_tool {name}",
        "startTimeUnixNano": str(1_700_000_000_000 * MS + start_ms * MS),
        "endTimeUnixNano": str(1_700_000_000_000 * MS + end_ms * MS),
        "attributes": _otlp(
            {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, **attributes}
        ),
    }


def test_otlp_tool_spans_become_tool_calls_in_start_order_with_durations() -> None:
    spans = [
        _tool_span("send_email", 300, 312, **{"gen_ai.tool.call.arguments": '{"to": "a@b.c"}'}),
        {
            "name": "chat gpt-4.1",
            "startTimeUnixNano": str(1_700_000_000_000 * MS),
            "attributes": _otlp({"gen_ai.operation.name": "chat"}),
        },
        _tool_span(
            "get_weather",
            100,
            142,
            **{
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": '{"city": "Paris", "days": 2}',
                "gen_ai.tool.call.result": "sunny",
            },
        ),
    ]
    assert tool_calls_from_spans(spans) == [
        ToolCall(
            tool="get_weather", args={"city": "Paris", "days": 2}, output="sunny", duration_ms=42.0
        ),
        ToolCall(tool="send_email", args={"to": "a@b.c"}, output=None, duration_ms=12.0),
    ]


def test_flat_attributes_and_iso_timestamps_of_the_python_sdk_export() -> None:
    span = {
        "name": "execute_tool",
        "start_time": "2025-05-01T12:00:00.250000Z",
        "end_time": "2025-05-01T12:00:00.500000Z",
        "attributes": {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "search",
            # Some SDKs record the arguments and the result as structured values.
            "gen_ai.tool.call.arguments": {"query": "refunds"},
            "gen_ai.tool.call.result": {"hits": 3},
        },
    }
    assert tool_calls_from_spans([span]) == [
        ToolCall(tool="search", args={"query": "refunds"}, output={"hits": 3}, duration_ms=250.0)
    ]


def test_the_tool_name_may_come_from_the_span_name_alone() -> None:
    spans = [
        {"name": "execute_tool lookup_order", "attributes": {"gen_ai.tool.args": '{"id": 7}'}},
        {"name": "execute_tool", "attributes": {"tool.name": "legacy"}},
    ]
    assert tool_calls_from_spans(spans) == [
        ToolCall(tool="lookup_order", args={"id": 7}),
        ToolCall(tool="legacy"),
    ]


def test_spans_inside_an_otlp_export_envelope_are_found() -> None:
    export = {
        "resourceSpans": [
            {"scopeSpans": [{"scope": {"name": "agent"}, "spans": [_tool_span("a", 5, 6)]}]},
            {"scopeSpans": [{"spans": [_tool_span("b", 1, 2)]}]},
        ]
    }
    assert [c.tool for c in tool_calls_from_spans([export])] == ["b", "a"]


def test_token_usage_is_summed_over_model_call_spans_only() -> None:
    spans = [
        {
            "name": "invoke_agent support",  # repeats its children's totals: not counted
            "attributes": _otlp(
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.usage.input_tokens": 150,
                    "gen_ai.usage.output_tokens": 30,
                }
            ),
        },
        {
            "name": "chat gpt-4.1",
            "attributes": _otlp(
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.usage.input_tokens": 100,
                    "gen_ai.usage.output_tokens": 20,
                }
            ),
        },
        {
            # No operation attribute: the span name says it is a chat call.
            "name": "chat gpt-4.1",
            "attributes": {"gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 10},
        },
        {
            "name": "text_completion davinci",
            "attributes": {"gen_ai.usage.prompt_tokens": 7, "gen_ai.usage.completion_tokens": 3},
        },
        {"name": "chat gpt-4.1", "attributes": {"gen_ai.operation.name": "chat"}},
    ]
    assert token_usage_from_spans(spans) == TokenUsage(input=157, output=33)


def test_no_model_call_usage_gives_none() -> None:
    assert token_usage_from_spans([_tool_span("a", 1, 2)]) is None
    assert token_usage_from_spans([]) is None


def test_junk_is_skipped_rather_than_rejected() -> None:
    spans: list[Any] = [
        "not a span",
        42,
        None,
        {"attributes": {"gen_ai.operation.name": "execute_tool"}},  # no name
        {"name": "execute_tool", "attributes": "oops"},  # no tool name anywhere
        {
            "name": "execute_tool broken",
            "startTimeUnixNano": "yesterday",
            "endTimeUnixNano": 5,
            "attributes": [
                {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": "{not json"}},
                {"value": {"stringValue": "no key"}},
                "junk",
            ],
        },
        {
            "name": "execute_tool listy",
            "attributes": {"gen_ai.tool.call.arguments": "[1, 2]"},  # not an object
        },
        _tool_span("late", 10, 5),  # ends before it starts: no duration
        {
            "name": "chat m",
            "attributes": {
                "gen_ai.usage.input_tokens": -3,
                "gen_ai.usage.output_tokens": "lots",
            },
        },
        {"name": "chat m", "attributes": {"gen_ai.usage.input_tokens": True}},
    ]
    assert tool_calls_from_spans(spans) == [
        ToolCall(tool="late", duration_ms=None),
        ToolCall(tool="broken", args={}),
        ToolCall(tool="listy", args={}),
    ]
    assert token_usage_from_spans(spans) is None


def test_nested_otlp_values_are_decoded() -> None:
    span = {
        "name": "execute_tool t",
        "attributes": [
            {
                "key": "gen_ai.tool.call.result",
                "value": {
                    "kvlistValue": {
                        "values": [
                            {"key": "ok", "value": {"boolValue": True}},
                            {
                                "key": "items",
                                "value": {
                                    "arrayValue": {
                                        "values": [{"intValue": "1"}, {"doubleValue": 2.5}]
                                    }
                                },
                            },
                        ]
                    }
                },
            }
        ],
    }
    assert tool_calls_from_spans([span])[0].output == {"ok": True, "items": [1, 2.5]}


def test_structured_output_takes_tool_calls_and_usage_from_spans() -> None:
    spans = [
        _tool_span("get_weather", 0, 40, **{"gen_ai.tool.call.arguments": '{"city": "Oslo"}'}),
        {
            "name": "chat m",
            "attributes": {"gen_ai.usage.input_tokens": 9, "gen_ai.usage.output_tokens": 4},
        },
    ]
    output = parse_target_output({"output": "Rain.", "spans": spans})
    assert output.tool_calls == [
        ToolCall(tool="get_weather", args={"city": "Oslo"}, duration_ms=40.0)
    ]
    assert output.token_usage == TokenUsage(input=9, output=4)


def test_explicit_tool_calls_and_usage_win_over_spans() -> None:
    spans = [_tool_span("from_span", 0, 1)]
    output = parse_target_output(
        {
            "output": "x",
            "spans": spans,
            "tool_calls": [{"tool": "explicit"}],
            "token_usage": {"input": 1, "output": 2},
        }
    )
    assert output.tool_calls == [ToolCall(tool="explicit")]
    assert output.token_usage == TokenUsage(input=1, output=2)


def test_spans_win_over_message_tool_calls_and_empty_spans_do_not() -> None:
    messages = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "from_message", "arguments": "{}"}}],
        }
    ]
    with_spans = parse_target_output(
        {"output": "x", "messages": messages, "spans": [_tool_span("from_span", 0, 1)]}
    )
    assert [c.tool for c in with_spans.tool_calls] == ["from_span"]
    without = parse_target_output({"output": "x", "messages": messages, "spans": ["junk"]})
    assert [c.tool for c in without.tool_calls] == ["from_message"]
    assert without.token_usage is None


def test_i26_1_retrieval_spans_become_the_runtime_context() -> None:
    documents = [
        {"id": "refunds", "score": 0.9, "content": "Refunds are issued within 30 days."},
        {"id": 4, "score": 0.5},
    ]
    later = {
        "name": "retrieval vector-store",
        "startTimeUnixNano": str(1_700_000_000_000 * MS + 50 * MS),
        "attributes": _otlp(
            {
                "gen_ai.operation.name": "retrieval",
                "gen_ai.retrieval.documents": json.dumps(documents),
            }
        ),
    }
    openinference = {
        "name": "retrieve",
        "start_time": "2023-11-14T22:13:20+00:00",
        "attributes": {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.1.document.content": "Second",
            "retrieval.documents.0.document.id": "a",
            "retrieval.documents.0.document.content": "First",
            "retrieval.documents.0.document.score": 0.7,
        },
    }
    junk = {"name": "retrieval", "attributes": {"gen_ai.retrieval.documents": "not json"}}
    tool = _tool_span("lookup", 0, 1)
    output = parse_target_output({"output": "x", "spans": [later, junk, tool, openinference]})
    assert [(p.id, p.text, p.score) for p in output.context] == [
        ("a", "First", 0.7),
        (None, "Second", None),
        ("refunds", "Refunds are issued within 30 days.", 0.9),
        ("4", "", 0.5),
    ]
    assert context_from_spans([tool]) == []
    explicit = parse_target_output({"output": "x", "context": ["given"], "spans": [later]})
    assert [p.text for p in explicit.context] == ["given"]
