"""The is-json grader (SPEC §4): binary, with the parse error's location in the Detail."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from tests.graders._grading import SPEC, grade

from assay.graders.structured import parse_json
from assay.results import Detail


@pytest.mark.parametrize(
    "output", ['{"refund": true, "days": 30}', "[1, 2, 3]", '"text"', "42", "null", ' {"a": 1}\n']
)
def test_valid_json_passes(output: str) -> None:
    result = grade({"type": "is-json"}, output)
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.hits == ["output is valid JSON"]
    assert result.misses == []
    assert result.details == [
        Detail(check="is-json", passed=True, expected="valid JSON", actual=output)
    ]


def test_invalid_json_fails_with_line_and_column() -> None:
    output = '{"refund": true,\n "days": 30,\n}'
    result = grade({"type": "is-json"}, output)
    assert (result.score, result.verdict, result.error) == (0.0, "fail", None)
    where = "line 3 column 1: Expecting property name enclosed in double quotes"
    assert result.hits == []
    assert result.misses == [f"output is not valid JSON ({where})"]
    assert result.details == [
        Detail(check="is-json", passed=False, expected="valid JSON", actual=output, message=where)
    ]


def test_plain_text_is_not_json() -> None:
    result = grade({"type": "is-json"}, "Sure! Here is the JSON: {}")
    assert result.score == 0.0
    assert result.details[0].message == "line 1 column 1: Expecting value"


def test_empty_output_is_not_json() -> None:
    result = grade({"type": "is-json"}, "")
    assert result.score == 0.0
    assert result.misses == ["output is not valid JSON (line 1 column 1: Expecting value)"]


def test_trailing_data_is_not_json() -> None:
    result = grade({"type": "is-json"}, '{"a": 1} {"b": 2}')
    assert result.score == 0.0
    assert result.details[0].message == "line 1 column 10: Extra data"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_python_only_number_literals_are_not_json(token: str) -> None:
    # Python's json module reads these; RFC 8259 JSON has no such values.
    result = grade({"type": "is-json"}, f'{{"score": {token}}}')
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.details[0].message == f"{token} is not a JSON value"


def test_negated_is_json_passes_on_prose() -> None:
    result = grade({"type": "is-json", "negate": True}, "just words")
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.hits == ["output is not valid JSON (line 1 column 1: Expecting value)"]


def test_long_invalid_output_is_truncated_in_the_detail() -> None:
    output = "x" * 500
    detail = grade({"type": "is-json"}, output).details[0]
    assert detail.actual == "x" * 79 + "…"
    assert len(detail.actual) == 80


def test_is_json_takes_no_value() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "is-json", "value": "x"})
    assert info.value.errors()[0]["type"] == "unknown_key"


@pytest.mark.parametrize("output", ['{"name": "Zoë", "city": "東京"}', '["👋", "\\u00e9"]'])
def test_unicode_json_is_valid(output: str) -> None:
    assert grade({"type": "is-json"}, output).score == 1.0


def test_a_huge_json_output_is_checked_whole() -> None:
    output = "[" + ",".join(['{"id": 1, "ok": true}'] * 50_000) + ",]"  # 1 MB, broken at the end
    result = grade({"type": "is-json"}, output)
    assert result.score == 0.0
    assert result.details[0].message == f"line 1 column {len(output)}: Expecting value"
    assert result.details[0].actual is not None and len(result.details[0].actual) == 80


@pytest.mark.parametrize(
    "text",
    ["", "   ", "Sure!", "  \n\n  Here it is", "\r\nno", "\u00a0{}", "x{}", "\n\n\t]"],
)
def test_where_text_cannot_start_json_is_said_as_the_decoder_says_it(text: str) -> None:
    # Such text is answered without raising the decoder's exception: same words, same place.
    with pytest.raises(json.JSONDecodeError) as info:
        json.loads(text)
    expected = f"line {info.value.lineno} column {info.value.colno}: {info.value.msg}"
    assert parse_json(text) == (None, expected)
