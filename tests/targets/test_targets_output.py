from __future__ import annotations

import json

import pytest

from assay.errors import TargetError
from assay.results import Message, TargetOutput, TokenUsage, ToolCall
from assay.targets import parse_target_output, parse_text_output
from assay.targets._output import _WireOutput, with_duration


def test_a_string_is_the_output_text() -> None:
    assert parse_target_output("30 days") == TargetOutput(output="30 days")


def test_a_target_output_passes_through_unchanged() -> None:
    given = TargetOutput(output="x", cost_usd=0.5)
    assert parse_target_output(given) is given


def test_the_structured_mapping_fills_every_field() -> None:
    value = {
        "output": "Refunds take 30 days.",
        "messages": [
            {"role": "user", "content": "refund window?"},
            {"role": "assistant", "content": "Refunds take 30 days."},
        ],
        "tool_calls": [
            {
                "tool": "lookup_policy",
                "args": {"topic": "refunds"},
                "output": "30d",
                "duration_ms": 12,
            }
        ],
        "token_usage": {"input": 10, "output": 5},
        "cost_usd": 0.002,
        "duration_ms": 340.5,
    }
    assert parse_target_output(value) == TargetOutput(
        output="Refunds take 30 days.",
        messages=[
            Message(role="user", content="refund window?"),
            Message(role="assistant", content="Refunds take 30 days."),
        ],
        tool_calls=[
            ToolCall(tool="lookup_policy", args={"topic": "refunds"}, output="30d", duration_ms=12)
        ],
        token_usage=TokenUsage(input=10, output=5),
        cost_usd=0.002,
        duration_ms=340.5,
    )


def test_an_unreported_duration_is_left_for_the_target_to_measure() -> None:
    parsed = parse_target_output({"output": "x"})
    assert "duration_ms" not in parsed.model_fields_set
    assert with_duration(parsed, 12.5).duration_ms == 12.5


def test_a_reported_duration_wins_over_the_measured_one() -> None:
    parsed = parse_target_output({"output": "x", "duration_ms": 3})
    assert with_duration(parsed, 12.5).duration_ms == 3


OPENAI_TRANSCRIPT = [
    {"role": "user", "content": "weather in Paris and Rome?"},
    {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "get_weather", "arguments": ""},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    {
        "role": "assistant",
        "content": [{"type": "text", "text": "Sunny in "}, {"type": "text", "text": "Paris."}],
    },
]


def test_openai_tool_calls_in_messages_are_normalised_and_collected() -> None:
    parsed = parse_target_output({"output": "Sunny in Paris.", "messages": OPENAI_TRANSCRIPT})
    paris = ToolCall(tool="get_weather", args={"city": "Paris"}, output="sunny")
    rome = ToolCall(tool="get_weather", args={})
    assert parsed.tool_calls == [paris, rome]
    assert parsed.messages == [
        Message(role="user", content="weather in Paris and Rome?"),
        Message(role="assistant", content=None, tool_calls=[paris, rome]),
        Message(role="tool", content="sunny"),
        Message(role="assistant", content="Sunny in Paris."),
    ]


def test_top_level_tool_calls_are_not_merged_with_the_transcript() -> None:
    parsed = parse_target_output(
        {"output": "x", "messages": OPENAI_TRANSCRIPT, "tool_calls": [{"tool": "search"}]}
    )
    assert parsed.tool_calls == [ToolCall(tool="search")]


def test_an_explicit_empty_tool_call_list_stays_empty() -> None:
    parsed = parse_target_output({"output": "x", "messages": OPENAI_TRANSCRIPT, "tool_calls": []})
    assert parsed.tool_calls == []


def test_openai_arguments_given_as_an_object_are_accepted() -> None:
    value = {"output": "x", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}
    assert parse_target_output(value).tool_calls == [ToolCall(tool="f", args={"a": 1})]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"output": 3}, "output: Input should be a valid string"),
        ({"messages": []}, "output: Field required"),
        ({"outputs": "x"}, "unknown key 'outputs'. Did you mean 'output'?"),
        ({"output": "x", "tool_call": []}, "unknown key 'tool_call'. Did you mean 'tool_calls'?"),
        ({"output": "x", "tool_calls": [{"args": {}}]}, "tool_calls[0].tool: Field required"),
        (
            {"output": "x", "tool_calls": [{"tool": "f", "arg": {}}]},
            "tool_calls[0]: unknown key 'arg'. Did you mean 'args'?",
        ),
        (
            {"output": "x", "token_usage": {"input": "many"}},
            "token_usage.input: Input should be a valid integer, "
            "unable to parse string as an integer",
        ),
        ({"output": "x", "cost_usd": -1}, "cost_usd: Input should be greater than or equal to 0"),
        ({"output": "x", "messages": [{"content": "hi"}]}, "messages[0].role: Field required"),
        (
            {
                "output": "x",
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [{"function": {"name": "f", "arguments": "{"}}],
                    }
                ],
            },
            "messages[0].tool_calls[0]: function.arguments is not valid JSON: "
            "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        (
            {"output": "x", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]},
            "tool_calls[0]: function.arguments must be a JSON object",
        ),
        (
            {"output": "x", "tool_calls": [{"function": {"arguments": "{}"}}]},
            "tool_calls[0]: function.name must be a string",
        ),
    ],
)
def test_a_bad_shape_names_the_field(value: object, message: str) -> None:
    with pytest.raises(TargetError) as caught:
        parse_target_output(value, source="function 'agent:answer'")
    assert str(caught.value) == f"invalid output from function 'agent:answer': {message}"


def test_many_errors_are_capped_at_five() -> None:
    value = {"output": "x", "tool_calls": [{"args": {}} for _ in range(7)]}
    with pytest.raises(TargetError) as caught:
        parse_target_output(value)
    shown = "; ".join(f"tool_calls[{i}].tool: Field required" for i in range(5))
    assert str(caught.value) == f"invalid output from target: {shown}; and 2 more"


@pytest.mark.parametrize(("value", "kind"), [(42, "int"), (None, "NoneType"), (["a"], "list")])
def test_a_value_that_is_neither_text_nor_mapping_is_an_error(value: object, kind: str) -> None:
    with pytest.raises(TargetError) as caught:
        parse_target_output(value, source="function 'agent:answer'")
    assert str(caught.value) == (
        f"invalid output from function 'agent:answer': got {kind}; "
        "expected a string or a mapping with an 'output' key"
    )


def test_plain_text_loses_only_its_trailing_newlines() -> None:
    assert parse_text_output("  hello\nworld  \n\n") == TargetOutput(output="  hello\nworld  ")


def test_a_json_object_with_output_is_structured() -> None:
    text = json.dumps({"output": "hi", "tool_calls": [{"tool": "t", "args": {"q": 1}}]}) + "\n"
    assert parse_text_output(text) == TargetOutput(
        output="hi", tool_calls=[ToolCall(tool="t", args={"q": 1})]
    )


@pytest.mark.parametrize(
    "text", ['{"answer": "hi"}', '["output"]', '{"output": "x"} trailing', "{not json"]
)
def test_other_text_is_plain_even_when_it_looks_like_json(text: str) -> None:
    assert parse_text_output(text + "\n") == TargetOutput(output=text)


def test_a_structured_object_of_bad_shape_is_an_error() -> None:
    with pytest.raises(TargetError) as caught:
        parse_text_output('{"output": "x", "cost": 1}', source="command 'agent'")
    assert str(caught.value) == (
        "invalid output from command 'agent': unknown key 'cost'. Did you mean 'cost_usd'?"
    )


def _general(record: dict[str, object]) -> TargetOutput | str:
    try:
        return _WireOutput.model_validate(record).to_target_output()
    except ValueError as exc:  # pydantic's ValidationError
        return "refused" if "duration_ms" in str(exc) else str(exc)


@pytest.mark.parametrize(
    "record",
    [
        {"output": "hi"},
        {"output": "hi", "duration_ms": 12},
        {"output": "hi", "duration_ms": 0.5},
        {"output": "", "duration_ms": 0},
        {"output": "hi", "duration_ms": -1},
        {"output": "hi", "duration_ms": float("nan")},
        {"output": "hi", "duration_ms": True},
        {"output": "hi", "duration_ms": "12"},
        {"output": "hi", "duration_ms": None},
    ],
)
def test_a_plain_record_reads_as_the_structured_shape_does(record: dict[str, object]) -> None:
    # `{output, duration_ms}` takes a shortcut; it must give what the general path gives.
    expected = _general(record)
    try:
        got: TargetOutput | str = parse_target_output(record)
    except TargetError as exc:
        got = "refused" if "duration_ms" in str(exc) else str(exc)
    if isinstance(expected, str) or isinstance(got, str):
        assert got == expected
        return
    assert got == expected
    assert ("duration_ms" in got.model_fields_set) == ("duration_ms" in expected.model_fields_set)
