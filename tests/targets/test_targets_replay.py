from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from assay.errors import ConfigError, ConfigIssue, TargetError, UsageError
from assay.results import Message, TargetOutput, TokenUsage, ToolCall
from assay.targets import BUILTIN_TARGETS, ReplayTarget, TargetRequest, TargetSpec


def _write(path: Path, *records: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _request(case_id: str, repeat_index: int = 0, base_dir: Path = Path()) -> TargetRequest:
    return TargetRequest(
        case_id=case_id,
        input="hi",
        messages=(Message(role="user", content="hi"),),
        repeat_index=repeat_index,
        base_dir=base_dir,
    )


def _target(path: str = "recorded.jsonl") -> ReplayTarget:
    return ReplayTarget.model_validate({"type": "replay", "path": path})


def _replay(base_dir: Path, *requests: TargetRequest, path: str = "recorded.jsonl") -> list[Any]:
    """Set the target up in `base_dir` and call it; errors are returned, not raised."""

    async def scenario() -> list[Any]:
        target = _target(path)
        await target.setup(base_dir)
        results: list[Any] = []
        for request in requests:
            try:
                results.append(await target.call(request))
            except TargetError as exc:
                results.append(exc)
        await target.teardown()
        return results

    return asyncio.run(scenario())


def _load_issues(base_dir: Path) -> list[ConfigIssue]:
    with pytest.raises(ConfigError) as caught:
        asyncio.run(_target().setup(base_dir))
    return caught.value.issues


def test_outputs_are_looked_up_by_test_id(tmp_path: Path) -> None:
    _write(
        tmp_path / "recorded.jsonl",
        {"id": "refund", "output": "30 days", "duration_ms": 812.5, "cost_usd": 0.002},
        "",
        {
            "case_id": "weather",
            "input": "Weather in Paris?",
            "metadata": {"recorded_by": "prod"},
            "output": "Sunny.",
            "tool_calls": [{"tool": "get_weather", "args": {"city": "Paris"}, "output": "sun"}],
            "token_usage": {"input": 12, "output": 3},
        },
    )
    refund, weather = _replay(tmp_path, _request("refund"), _request("weather"))
    assert refund == TargetOutput(output="30 days", duration_ms=812.5, cost_usd=0.002)
    assert weather == TargetOutput(
        output="Sunny.",
        tool_calls=[ToolCall(tool="get_weather", args={"city": "Paris"}, output="sun")],
        token_usage=TokenUsage(input=12, output=3),
    )


def test_repeats_use_their_own_record_and_fall_back_to_repeat_zero(tmp_path: Path) -> None:
    _write(
        tmp_path / "recorded.jsonl",
        {"id": "a", "output": "first"},
        {"id": "a", "repeat_index": 1, "output": "second"},
        {"id": "b", "repeat_index": 1, "output": "only repeat one"},
    )
    results = _replay(
        tmp_path,
        _request("a", 0),
        _request("a", 1),
        _request("a", 2),
        _request("b", 1),
        _request("b", 0),
        _request("b", 2),
    )
    assert [r.output for r in results[:4]] == ["first", "second", "first", "only repeat one"]
    assert [str(e) for e in results[4:]] == [
        "no recorded output for test 'b' repeat 0 in recorded.jsonl; recorded repeats: 1",
        "no recorded output for test 'b' repeat 2 (nor repeat 0) in recorded.jsonl; "
        "recorded repeats: 1",
    ]


def test_a_missing_test_id_is_a_non_retryable_target_error(tmp_path: Path) -> None:
    _write(tmp_path / "recorded.jsonl", {"id": "a", "output": "x"})
    (error,) = _replay(tmp_path, _request("x"))
    assert isinstance(error, TargetError)
    assert str(error) == "no recorded output for test 'x' in recorded.jsonl"
    assert error.kind == "ReplayError"
    assert not error.retryable


def test_the_path_is_relative_to_the_suite_directory(tmp_path: Path) -> None:
    suite_dir = tmp_path / "evals"
    _write(suite_dir / "runs" / "rec.jsonl", {"id": "a", "output": "from the suite dir"})
    (output,) = _replay(suite_dir, _request("a"), path="runs/rec.jsonl")
    assert output.output == "from the suite dir"


def test_call_without_setup_loads_from_the_request_base_dir(tmp_path: Path) -> None:
    _write(tmp_path / "sub" / "recorded.jsonl", {"id": "a", "output": "lazy"})
    output = asyncio.run(_target().call(_request("a", base_dir=tmp_path / "sub")))
    assert output.output == "lazy"


def test_bad_lines_are_reported_with_file_and_line(tmp_path: Path) -> None:
    _write(
        tmp_path / "recorded.jsonl",
        {"id": "ok", "output": "fine"},
        '{"id": "a", "output": ',
        {"id": "b"},
        '["not", "an", "object"]',
        {"output": "no id"},
        {"id": "c", "output": "x", "repeat_index": -1},
        {"id": "d", "ouput": "typo"},
        {"id": "e", "output": "x", "tool_calls": [{"args": {}}]},
        {"id": "f", "case_id": "f", "output": "x"},
        {"id": ["f"], "output": "x"},
    )
    assert [str(issue) for issue in _load_issues(tmp_path)] == [
        "recorded.jsonl:2: invalid JSON: Expecting value (column 23)",
        "recorded.jsonl:3: invalid output from the record of test 'b': output: Field required",
        "recorded.jsonl:4: a record must be a JSON object, got list",
        "recorded.jsonl:5: the record has no 'id' (or 'case_id') naming its test",
        "recorded.jsonl:6: 'repeat_index' must be a non-negative integer, got -1",
        "recorded.jsonl:7: invalid output from the record of test 'd': unknown key 'ouput'. "
        "Did you mean 'output'?",
        "recorded.jsonl:8: invalid output from the record of test 'e': "
        "tool_calls[0].tool: Field required",
        "recorded.jsonl:9: give the test id as 'id' or 'case_id', not both",
        "recorded.jsonl:10: 'id' must be a string, got list",
    ]


def test_duplicate_records_are_an_error(tmp_path: Path) -> None:
    _write(
        tmp_path / "recorded.jsonl",
        {"id": "a", "output": "x"},
        {"id": "a", "repeat_index": 1, "output": "y"},
        {"case_id": "a", "repeat_index": 0, "output": "z"},
    )
    assert _load_issues(tmp_path) == [
        ConfigIssue(
            "recorded.jsonl",
            3,
            "",
            "duplicate record for test 'a' repeat_index 0 (first on line 1)",
        )
    ]


def test_a_missing_file_is_a_usage_error_the_plan_locates_in_the_suite(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        asyncio.run(_target().setup(tmp_path))
    assert str(caught.value) == (
        "replay target: recorded outputs file recorded.jsonl not found (`path:` is relative to "
        "the suite file's directory)"
    )


def test_spans_in_a_record_become_tool_calls_and_usage(tmp_path: Path) -> None:
    spans = [
        {
            "name": "execute_tool lookup_order",
            "startTimeUnixNano": "1000000000",
            "endTimeUnixNano": "1025000000",
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": '{"id": 7}'}},
                {"key": "gen_ai.tool.call.result", "value": {"stringValue": "shipped"}},
            ],
        },
        {
            "name": "chat gpt-4.1",
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "40"}},
                {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "8"}},
            ],
        },
    ]
    _write(tmp_path / "recorded.jsonl", {"id": "order", "output": "Shipped.", "spans": spans})
    (output,) = _replay(tmp_path, _request("order"))
    assert output.tool_calls == [
        ToolCall(tool="lookup_order", args={"id": 7}, output="shipped", duration_ms=25.0)
    ]
    assert output.token_usage == TokenUsage(input=40, output=8)


def test_replay_is_a_builtin_target_spec() -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(TargetSpec)
    target = adapter.validate_python({"type": "replay", "path": "./recorded.jsonl"})
    assert isinstance(target, ReplayTarget)
    assert BUILTIN_TARGETS["replay"] is ReplayTarget
    assert target.describe() == "replay ./recorded.jsonl"
    with pytest.raises(ValidationError, match="unknown key 'file'"):
        adapter.validate_python({"type": "replay", "file": "x.jsonl"})


def test_equality_does_not_depend_on_setup(tmp_path: Path) -> None:
    _write(tmp_path / "recorded.jsonl", {"id": "a", "output": "x"})
    loaded = _target()
    asyncio.run(loaded.setup(tmp_path))
    assert loaded == _target()
    assert _target().cache_key(_request("a")) is None


def test_i26_1_a_recorded_reply_keeps_its_retrieved_context(tmp_path: Path) -> None:
    passage = {"id": "refunds", "text": "Refunds within 30 days.", "score": 0.9}
    _write(tmp_path / "recorded.jsonl", {"id": "a", "output": "30 days", "context": [passage]})
    [output] = _replay(tmp_path, _request("a"))
    assert [p.model_dump() for p in output.context] == [passage]


_PLAIN_AND_NEAR_PLAIN = [
    {"id": "a", "output": "x"},
    {"id": "b", "output": "x", "duration_ms": 12},
    {"id": "c", "output": "x", "duration_ms": 12.5, "repeat_index": 2},
    {"id": "d", "output": "", "duration_ms": 0, "input": "q", "metadata": {"k": 1}},
    {"case_id": "e", "output": "x", "duration_ms": 1.0},
    {"id": 7, "output": "x"},
    {"id": "f", "output": "x", "finish_reason": "stop"},
    {"id": "g", "output": "x", "duration_ms": None},
    {"id": "h", "output": "x", "duration_ms": True},
    {"id": "i", "output": "x", "duration_ms": "3"},
]


@pytest.mark.parametrize("record", _PLAIN_AND_NEAR_PLAIN, ids=str)
def test_i10_a_plain_record_loads_as_the_general_path_loads_it(
    tmp_path: Path, record: dict[str, Any]
) -> None:
    """Records of `id`, `repeat_index`, `output` and `duration_ms` skip the generic checks
    (`_plain_record`); every record, plain or not, gives what `parse_target_output` gives its
    reply, `duration_ms` marked as reported exactly when the record has it."""
    from assay.targets._output import parse_target_output

    _write(tmp_path / "recorded.jsonl", record)
    case_id = str(record.get("id", record.get("case_id")))
    [got] = _replay(tmp_path, _request(case_id, record.get("repeat_index", 0), tmp_path))
    reply = {
        k: v
        for k, v in record.items()
        if k not in {"id", "case_id", "repeat_index", "input", "metadata"}
    }
    expected = parse_target_output(reply)
    assert got == expected
    assert got.model_fields_set == expected.model_fields_set
    assert got.model_dump_json() == expected.model_dump_json()


def test_i10_bad_lines_among_plain_records_are_reported_at_load_with_their_lines(
    tmp_path: Path,
) -> None:
    """What the plain-record check refuses goes to the general path, which names the line
    (or, being lax about numbers, takes a `true` or `"3"` duration as the number)."""
    _write(
        tmp_path / "recorded.jsonl",
        {"id": "ok", "output": "fine", "duration_ms": 3},
        {"id": "a", "output": "x", "duration_ms": -1},
        {"id": "b", "output": "x", "duration_ms": True},
        '{"id": "c", "output": "x", "duration_ms": NaN}',
        {"id": "d", "output": "x", "repeat_index": True},
        {"id": "e", "output": 5},
        {"id": "f", "output": "x", "duration_ms": "3"},
        {"id": "ok", "output": "again"},
    )
    assert [str(issue) for issue in _load_issues(tmp_path)] == [
        "recorded.jsonl:2: invalid output from the record of test 'a': "
        "duration_ms: Input should be greater than or equal to 0",
        "recorded.jsonl:4: invalid output from the record of test 'c': "
        "duration_ms: Input should be greater than or equal to 0",
        "recorded.jsonl:5: 'repeat_index' must be a non-negative integer, got True",
        "recorded.jsonl:6: invalid output from the record of test 'e': "
        "output: Input should be a valid string",
        "recorded.jsonl:8: duplicate record for test 'ok' repeat_index 0 (first on line 1)",
    ]
