"""The json-schema grader (SPEC §4): score 1 or 0, one Detail per violation at its JSON path."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import write
from tests.graders._grading import SPEC, error_of
from tests.graders._grading import grade as grade_spec

from assay import EvalConfig, evaluate
from assay.results import Detail, GraderResult

ORDER = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "status": {"enum": ["open", "closed"]},
        "items": {
            "type": "array",
            "items": {"type": "object", "properties": {"sku": {"type": "string"}}},
        },
    },
    "required": ["id", "status"],
}


def grade(schema: dict[str, Any], output: str, **options: Any) -> GraderResult:
    return grade_spec({"type": "json-schema", "schema": schema, **options}, output)


def test_valid_output_passes_with_one_passing_detail() -> None:
    output = '{"id": 7, "status": "open", "items": [{"sku": "A-1"}]}'
    result = grade(ORDER, output)
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.hits == ["output matches the schema"]
    assert result.misses == []
    assert result.details == [
        Detail(check="json_schema", passed=True, expected="JSON matching the schema", actual=output)
    ]


def test_each_violation_is_a_detail_named_by_its_json_path() -> None:
    result = grade(ORDER, '{"id": "7", "items": [{"sku": 1}, {"sku": "B"}, {"sku": 3}]}')
    assert (result.score, result.verdict, result.error) == (0.0, "fail", None)
    assert result.details == [
        Detail(check="json_schema.$", passed=False, message="'status' is a required property"),
        Detail(check="json_schema.$.id", passed=False, message="'7' is not of type 'integer'"),
        Detail(
            check="json_schema.$.items[0].sku",
            passed=False,
            message="1 is not of type 'string'",
        ),
        Detail(
            check="json_schema.$.items[2].sku",
            passed=False,
            message="3 is not of type 'string'",
        ),
    ]
    assert result.misses == [
        "output does not match the schema: $: 'status' is a required property (+3 more)"
    ]
    assert result.reasoning == "4 schema violations"


def test_one_violation_says_so_without_a_count() -> None:
    result = grade(ORDER, '{"id": 7, "status": "pending"}')
    assert result.misses == [
        "output does not match the schema: $.status: 'pending' is not one of ['open', 'closed']"
    ]
    assert result.reasoning == "1 schema violation"
    assert result.details == [
        Detail(
            check="json_schema.$.status",
            passed=False,
            message="'pending' is not one of ['open', 'closed']",
        )
    ]


def test_non_json_output_scores_zero_and_says_where_parsing_failed() -> None:
    result = grade(ORDER, '{"id": 7,}')
    assert (result.score, result.verdict, result.error) == (0.0, "fail", None)
    where = "line 1 column 10: Expecting property name enclosed in double quotes"
    assert result.misses == [f"output is not JSON ({where}), so it cannot match the schema"]
    assert result.details == [
        Detail(
            check="json_schema",
            passed=False,
            expected="JSON matching the schema",
            actual='{"id": 7,}',
            message=f"output is not JSON ({where})",
        )
    ]


@pytest.mark.parametrize(
    ("output", "where"),
    [
        ("", "line 1 column 1: Expecting value"),
        ("Sure! Here is the JSON: {}", "line 1 column 1: Expecting value"),
        ('{"id": NaN}', "NaN is not a JSON value"),
    ],
)
def test_empty_prose_and_nan_are_not_json(output: str, where: str) -> None:
    result = grade({"type": "object"}, output)
    assert result.score == 0.0
    assert result.details[0].message == f"output is not JSON ({where})"


def test_unicode_values_are_validated_and_reported_intact() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}
    assert grade(schema, '{"name": "日本語"}').score == 1.0
    result = grade(schema, '{"name": "Zoë ✓"}')
    assert result.details == [
        Detail(check="json_schema.$.name", passed=False, message="'Zoë ✓' is too long")
    ]


def test_more_than_ten_violations_are_capped() -> None:
    keys = "abcdefghijklmno"
    schema = {"type": "object", "additionalProperties": {"type": "integer"}}
    result = grade(schema, json.dumps({k: "x" for k in keys}))
    assert result.score == 0.0
    assert [d.check for d in result.details] == [f"json_schema.$.{k}" for k in keys[:10]] + [
        "+ 5 more"
    ]


def test_huge_output_is_graded_quickly_and_messages_stay_short() -> None:
    output = json.dumps({"rows": ["x" * 100] * 10_000})  # about 1 MB
    started = time.perf_counter()
    result = grade({"type": "object", "properties": {"rows": {"type": "integer"}}}, output)
    assert time.perf_counter() - started < 5.0
    assert result.score == 0.0
    [violation] = result.details
    assert violation.check == "json_schema.$.rows"
    assert len(violation.message) == 200 and violation.message.endswith("…")
    assert grade({"type": "object"}, output).score == 1.0


def test_format_is_an_annotation_as_draft_2020_12_says() -> None:
    # without a format-assertion vocabulary, `format` does not reject values
    assert grade({"type": "string", "format": "email"}, '"not an email"').score == 1.0


def test_negated_schema_passes_on_a_violation() -> None:
    result = grade({"type": "object"}, "[1]", negate=True)
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.details == [
        Detail(check="json_schema.$", passed=True, message="[1] is not of type 'object'")
    ]


def test_an_unresolvable_reference_is_a_grader_error_not_a_fail() -> None:
    result = grade({"$ref": "https://example.invalid/schema.json"}, "{}")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert (result.error.type, result.error.message) == (
        "GraderError",
        "the schema has a $ref that cannot be resolved (Unresolvable: "
        "https://example.invalid/schema.json); remote schemas are never fetched: put referenced "
        "schemas under `$defs` and use '#/$defs/<name>'",
    )


def test_a_local_reference_resolves() -> None:
    schema = {"$defs": {"id": {"type": "integer"}}, "properties": {"id": {"$ref": "#/$defs/id"}}}
    assert grade(schema, '{"id": 1}').score == 1.0
    assert grade(schema, '{"id": "1"}').details[0].check == "json_schema.$.id"


# --- configuration --------------------------------------------------------------------------


def test_schema_is_required() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "json-schema"})
    assert [(e["type"], e["loc"]) for e in info.value.errors()] == [
        ("missing", ("json-schema", "schema"))
    ]


def test_an_invalid_schema_is_rejected_with_its_location() -> None:
    message = error_of(
        {"type": "json-schema", "schema": {"properties": {"id": {"type": "integr"}}}}
    )
    assert message.startswith("Value error, invalid JSON Schema at $.properties.id.type: ")
    assert "'integr' is not valid under any of the given schemas" in message


def test_the_schema_must_be_a_mapping() -> None:
    message = error_of({"type": "json-schema", "schema": "object"})
    assert message == "Input should be a valid dictionary"


def test_unknown_options_are_rejected_with_a_suggestion() -> None:
    message = error_of({"type": "json-schema", "schema": {}, "schemas": {}})
    assert "Did you mean 'schema'?" in message


# --- a suite --------------------------------------------------------------------------------

SUITE = """\
name: schema-suite
target:
  type: fake
  responses:
    good: '{"id": 7, "status": "open"}'
    bad: '{"id": "seven"}'
    prose: 'Order 7 is open.'
assertions:
  - type: json-schema
    schema:
      type: object
      properties: {id: {type: integer}, status: {enum: [open, closed]}}
      required: [id, status]
tests:
  - {id: good, input: good}
  - {id: bad, input: bad}
  - {id: prose, input: prose}
"""


def test_a_suite_through_evaluate(tmp_path: Path) -> None:
    path = write(tmp_path / "schema.eval.yaml", SUITE)
    run = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    outcome = {c.case_id: (c.verdict, c.score) for c in run.results}
    assert outcome == {"good": ("pass", 1.0), "bad": ("fail", 0.0), "prose": ("fail", 0.0)}
    bad = next(c for c in run.results if c.case_id == "bad")
    assert [d.check for d in bad.grader_results[0].details] == [
        "json_schema.$",
        "json_schema.$.id",
    ]


# --- regexes in schemas (issue 22 item 8) ---------------------------------------------------

EVIL = r"^(a+)+$"
"""Exponential for a backtracking engine: 33 bytes of output took 78 s with Python's `re`."""


@pytest.mark.parametrize(
    ("schema", "output"),
    [
        ({"type": "string", "pattern": EVIL}, json.dumps("a" * 32 + "!")),
        (
            {"type": "object", "patternProperties": {EVIL: {"type": "integer"}}},
            json.dumps({"a" * 32 + "!": 1}),
        ),
        (
            {"type": "object", "patternProperties": {EVIL: {}}, "additionalProperties": False},
            json.dumps({"a" * 32 + "!": 1}),
        ),
    ],
    ids=["pattern", "patternProperties", "additionalProperties"],
)
def test_i22_8_schema_patterns_match_with_re2_in_linear_time(
    schema: dict[str, Any], output: str
) -> None:
    started = time.perf_counter()
    result = grade(schema, output)
    elapsed = time.perf_counter() - started
    # Python's `re` needs ~78 s on this input (doubling with each extra "a"); RE2 ~1 ms.
    assert elapsed < 2.0, f"took {elapsed:.1f}s"
    assert result.error is None
    big = grade(schema, output.replace("a" * 32, "a" * 100_000))
    assert (big.score, big.error) == (result.score, None)


def test_i22_8_re2_patterns_still_decide_what_matches() -> None:
    schema = {
        "type": "object",
        "properties": {"sku": {"type": "string", "pattern": "^[A-Z]-\\d+$"}},
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": False,
    }
    assert grade(schema, '{"sku": "A-12", "x-note": "hi"}').score == 1.0
    result = grade(schema, '{"sku": "a-12", "x-note": 3, "other": 1}')
    assert [(d.check, d.message) for d in result.details] == [
        ("json_schema.$", "'other' does not match any of the regexes: '^x-'"),
        ("json_schema.$.sku", "'a-12' does not match '^[A-Z]-\\\\d+$'"),
        ("json_schema.$['x-note']", "3 is not of type 'string'"),
    ]


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"properties": {"code": {"pattern": r"(a)\1"}}}, "$.properties.code.pattern"),
        ({"patternProperties": {"(?=x)": {}}}, "$.patternProperties['(?=x)']"),
        (
            {"items": {"patternProperties": {"^ok$": {"pattern": "(?<!x)y"}}}},
            "$.items.patternProperties['^ok$'].pattern",
        ),
    ],
)
def test_i22_8_patterns_re2_cannot_compile_are_refused_at_load(
    schema: dict[str, Any], where: str
) -> None:
    message = error_of({"type": "json-schema", "schema": schema})
    assert message.startswith(f"Value error, invalid JSON Schema at {where}: regex ")
    assert "is not valid RE2" in message


def test_i22_8_a_pattern_key_inside_data_is_not_a_regex() -> None:
    schema = {"const": {"pattern": "(a)\\1"}, "examples": [{"pattern": "(?=x)"}]}
    assert grade(schema, '{"pattern": "(a)\\\\1"}').score == 1.0


def test_i22_8_unevaluated_properties_with_pattern_properties_is_refused() -> None:
    schema = {"patternProperties": {"^x": {}}, "unevaluatedProperties": False}
    message = error_of({"type": "json-schema", "schema": schema})
    assert "`unevaluatedProperties` together with `patternProperties` is not supported" in message
