"""The format grader (SPEC §4): seven sub-checks, score = passed / enabled, a Detail each."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import write
from tests.graders._grading import SPEC, error_of, load_errors
from tests.graders._grading import grade as grade_spec

from assay import EvalConfig, evaluate
from assay.config import load_suite
from assay.graders.format import markdown_problems
from assay.results import Detail, GraderResult


def grade(
    checks: dict[str, Any], output: str, *, expected: Any = None, **options: Any
) -> GraderResult:
    return grade_spec({"type": "format", "checks": checks, **options}, output, expected=expected)


# --- length -------------------------------------------------------------------------------------


def test_length_within_tolerance_passes() -> None:
    result = grade({"length": {"tolerance": 0.2}}, "x" * 12, expected="y" * 10)
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.hits == ["length 12 characters is within 10 characters ±20%"]
    assert result.details == [
        Detail(
            check="format.length",
            passed=True,
            expected="10 characters ±20%",
            actual="12 characters",
        )
    ]


def test_length_exactly_at_the_bound_passes_and_just_past_it_fails() -> None:
    assert grade({"length": {"tolerance": 0.2}}, "x" * 8, expected="y" * 10).score == 1.0
    result = grade({"length": {"tolerance": 0.2}}, "x" * 13, expected="y" * 10)
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.misses == ["length 13 characters is outside 10 characters ±20%"]
    assert result.details[0].message == "30% longer than expected"


def test_length_too_short_says_shorter() -> None:
    result = grade({"length": {"tolerance": 0.1}}, "x" * 5, expected="y" * 10)
    assert result.score == 0.0
    assert result.details[0].message == "50% shorter than expected"


def test_length_default_tolerance_is_a_fifth_and_ignores_surrounding_whitespace() -> None:
    assert grade({"length": {}}, "  " + "x" * 12 + "\n\n", expected="y" * 10).score == 1.0


def test_length_in_words() -> None:
    checks = {"length": {"tolerance": 0.25, "unit": "words"}}
    result = grade(checks, "one two  three\nfour five", expected="a b c d")
    assert result.score == 1.0
    assert result.details[0].actual == "5 words"
    assert grade(checks, "one two three four five six", expected="a b c d").score == 0.0


def test_length_counts_unicode_characters_not_bytes() -> None:
    assert grade({"length": {"tolerance": 0.0}}, "日本語です", expected="ÉÉÉÉÉ").score == 1.0


def test_length_of_a_json_expected_output_is_its_json_text() -> None:
    # json.dumps({"a": 1}) is '{"a": 1}', 8 characters
    assert grade({"length": {"tolerance": 0.0}}, '{"a":  1}', expected={"a": 1}).score == 0.0
    assert grade({"length": {"tolerance": 0.0}}, '{"a": 1}', expected={"a": 1}).score == 1.0


def test_length_against_an_empty_expected_output() -> None:
    assert grade({"length": {}}, "", expected="").score == 1.0
    result = grade({"length": {}}, "text", expected="")
    assert result.score == 0.0
    assert result.details[0].message == "the expected output is empty"


def test_length_without_expected_output_is_an_error_not_a_zero() -> None:
    result = grade({"length": {}}, "text")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.message == "format check `length` needs the test's expected_output"


@pytest.mark.parametrize(
    ("tolerance", "message"),
    [
        (20, "Value error, tolerance 20 is not a fraction; write 0.2 for ±20% (at most 1.0)"),
        (-0.1, "Input should be greater than or equal to 0"),
    ],
)
def test_length_tolerance_is_a_fraction(tolerance: float, message: str) -> None:
    assert error_of({"type": "format", "checks": {"length": {"tolerance": tolerance}}}) == message


def test_length_unknown_unit_is_rejected() -> None:
    message = error_of({"type": "format", "checks": {"length": {"unit": "tokens"}}})
    assert message == "Input should be 'characters' or 'words'"


# --- json_validity and json_schema -----------------------------------------------------------


def test_json_validity() -> None:
    result = grade({"json_validity": True}, '{"refund": true}')
    assert (result.score, result.hits) == (1.0, ["output is valid JSON"])
    result = grade({"json_validity": True}, '{"refund": true,}')
    assert result.score == 0.0
    where = "line 1 column 17: Expecting property name enclosed in double quotes"
    assert result.misses == [f"output is not valid JSON ({where})"]
    assert result.details == [
        Detail(
            check="format.json_validity",
            passed=False,
            expected="valid JSON",
            actual='{"refund": true,}',
            message=where,
        )
    ]


def test_json_validity_rejects_nan() -> None:
    result = grade({"json_validity": True}, '{"x": NaN}')
    assert result.score == 0.0
    assert result.details[0].message == "NaN is not a JSON value"


def test_json_validity_false_is_off() -> None:
    result = grade({"json_validity": False, "regex_match": "x"}, "x")
    assert [d.check for d in result.details] == ["format.regex_match"]


def test_json_schema_given_as_a_mapping() -> None:
    schema = {"type": "object", "properties": {"days": {"type": "integer"}}, "required": ["days"]}
    assert grade({"json_schema": schema}, '{"days": 30}').score == 1.0
    result = grade({"json_schema": schema}, '{"days": "thirty"}')
    assert result.score == 0.0
    assert result.misses == [
        "output does not match the schema: $.days: 'thirty' is not of type 'integer'"
    ]
    assert result.details == [
        Detail(
            check="format.json_schema",
            passed=False,
            expected="the schema",
            actual='{"days": "thirty"}',
            message="$.days: 'thirty' is not of type 'integer'",
        )
    ]


def test_json_schema_counts_further_violations() -> None:
    schema = {"type": "object", "required": ["a", "b"]}
    result = grade({"json_schema": schema}, "{}")
    assert result.details[0].message == "$: 'a' is a required property (+1 more)"


def test_json_schema_true_infers_the_schema_from_expected_output() -> None:
    expected = {"refund": True, "days": 30, "items": [{"id": 1}]}
    ok = '{"refund": false, "days": 14.5, "items": [{"id": 2}, {"id": 3}], "note": "x"}'
    assert grade({"json_schema": True}, ok, expected=expected).score == 1.0
    result = grade(
        {"json_schema": True}, '{"refund": "no", "days": 30, "items": []}', expected=expected
    )
    assert result.score == 0.0
    assert result.details[0].expected == "the schema inferred from expected_output"
    assert result.details[0].message == "$.refund: 'no' is not of type 'boolean'"


def test_json_schema_true_reads_a_json_string_expected_output() -> None:
    assert grade({"json_schema": True}, '{"a": 2}', expected='{"a": 1}').score == 1.0
    assert grade({"json_schema": True}, '{"b": 2}', expected='{"a": 1}').score == 0.0


def test_json_schema_true_with_prose_expected_output_is_an_error() -> None:
    result = grade({"json_schema": True}, '{"a": 1}', expected="thirty days")
    assert result.error is not None
    assert result.error.message == (
        "format check `json_schema: true`: the test's expected_output is not JSON "
        "(line 1 column 1: Expecting value)"
    )


def test_json_schema_on_non_json_output_fails_with_the_parse_error() -> None:
    result = grade({"json_schema": {"type": "object"}, "json_validity": True}, "Sure! {}")
    assert (result.score, result.error) == (0.0, None)
    assert result.details[1] == Detail(
        check="format.json_schema",
        passed=False,
        expected="the schema",
        actual="Sure! {}",
        message="output is not JSON (line 1 column 1: Expecting value)",
    )


def test_invalid_schema_is_rejected_when_the_suite_loads() -> None:
    message = error_of({"type": "format", "checks": {"json_schema": {"type": "integr"}}})
    assert message.startswith("Value error, invalid JSON Schema at $.type: 'integr' is not valid")


# --- markdown_structure ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "# Title\n\n## Part\n\n### Detail\n\n# Next\n\n## Back up is fine",
        "## Starting below h1 is fine\n\n### Then one deeper",
        "Plain prose with no headings or lists.",
        "",
        "- one\n- two\n  - nested with the same marker\n\n1. first\n2. second\n\n- again a dash",
        "# Title\n\n```\n#### inside a code block is not a heading\n* nor a list\n```\n\n- item",
        "Setext title\n============\n\nSection\n-------\n\n### Three",
    ],
)
def test_markdown_structure_accepts(text: str) -> None:
    assert markdown_problems(text) == []
    assert grade({"markdown_structure": True}, text).score == 1.0


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ("# Title\n\n### Skipped h2", ["heading level skips from h1 to h3 (line 3)"]),
        (
            "## A\n\n#### B\n\n##### C\n\n###### D",
            ["heading level skips from h2 to h4 (line 3)"],
        ),
        (
            "- dash\n- dash\n\n* star",
            ["bullet list uses '*' (line 4) but the first bullet list uses '-' (line 1)"],
        ),
        (
            "- dash\n  + nested plus",
            ["bullet list uses '+' (line 2) but the first bullet list uses '-' (line 1)"],
        ),
        (
            "1. one\n2. two\n\ntext\n\n1) paren",
            ["ordered list uses ')' (line 6) but the first ordered list uses '.' (line 1)"],
        ),
        (
            "# A\n\n### C\n\n* x\n\n- y",
            [
                "heading level skips from h1 to h3 (line 3)",
                "bullet list uses '-' (line 7) but the first bullet list uses '*' (line 5)",
            ],
        ),
    ],
)
def test_markdown_structure_rejects(text: str, problems: list[str]) -> None:
    assert markdown_problems(text) == problems
    result = grade({"markdown_structure": True}, text)
    assert result.score == 0.0
    assert result.details[0].message == "; ".join(problems)
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    assert result.misses == [f"Markdown structure: {problems[0]}{more}"]


def test_markdown_bullet_and_ordered_lists_may_differ() -> None:
    assert markdown_problems("- a\n- b\n\n1. c\n2. d") == []


# --- required_fields, forbidden_content, regex_match ----------------------------------------


def test_required_fields_one_detail_per_term() -> None:
    result = grade({"required_fields": ["refund", "30 days"]}, "A refund within 14 days.")
    assert (result.score, result.misses) == (0.0, ["missing required '30 days'"])
    assert result.details == [
        Detail(
            check="format.required_fields.refund",
            passed=True,
            expected="refund",
            actual="A refund within 14 days.",
            message="present",
        ),
        Detail(
            check="format.required_fields.30 days",
            passed=False,
            expected="30 days",
            actual="A refund within 14 days.",
            message="absent but required",
        ),
    ]
    assert grade({"required_fields": ["refund", "days"]}, "A refund within 14 days.").hits == [
        "contains every required term"
    ]


def test_forbidden_content() -> None:
    result = grade({"forbidden_content": ["guarantee", "promise"]}, "We guarantee it.")
    assert (result.score, result.misses) == (0.0, ["contains forbidden 'guarantee'"])
    assert [(d.check, d.passed, d.message) for d in result.details] == [
        ("format.forbidden_content.guarantee", False, "present but forbidden"),
        ("format.forbidden_content.promise", True, "absent"),
    ]
    assert grade({"forbidden_content": ["guarantee"]}, "No promises.").hits == [
        "contains no forbidden term"
    ]


def test_term_checks_are_case_sensitive_by_default() -> None:
    checks = {"required_fields": ["Refund"], "forbidden_content": ["GUARANTEE"]}
    assert grade(checks, "refund, guarantee").score == 0.5  # Refund missing, GUARANTEE absent
    assert grade(checks, "refund", case_sensitive=False).score == 1.0
    assert grade(checks, "refund, guarantee", case_sensitive=False).score == 0.5
    assert grade({"required_fields": ["straße"]}, "STRASSE", case_sensitive=False).score == 1.0


def test_case_sensitive_does_not_apply_to_regex_match() -> None:
    assert grade({"regex_match": "^dear"}, "Dear Ana", case_sensitive=False).score == 0.0


def test_long_term_is_cut_in_the_check_name() -> None:
    term = "a" * 100
    check = grade({"required_fields": [term]}, "b").details[0].check
    assert check == "format.required_fields." + "a" * 39 + "…"


@pytest.mark.parametrize(
    ("terms", "message"),
    [
        ([], "List should have at least 1 item after validation, not 0"),
        (
            ["x", ""],
            "Value error, terms must not be empty strings (an empty term matches everything)",
        ),
        (["x", "x"], "Value error, term 'x' is listed twice"),
    ],
)
def test_term_lists_are_validated(terms: list[str], message: str) -> None:
    assert error_of({"type": "format", "checks": {"required_fields": terms}}) == message
    assert error_of({"type": "format", "checks": {"forbidden_content": terms}}) == message


def test_regex_match_searches_anywhere_with_re2() -> None:
    result = grade({"regex_match": r"^Dear \w+"}, "Dear Ana, thanks.")
    assert result.details == [
        Detail(check="format.regex_match", passed=True, expected=r"^Dear \w+", actual="Dear Ana")
    ]
    assert grade({"regex_match": r"\d+ days"}, "within 30 days").score == 1.0
    result = grade({"regex_match": "^Dear "}, "Hi Ana")
    assert (result.score, result.misses) == (0.0, ["does not match /^Dear /"])
    assert grade({"regex_match": "(?i)^dear"}, "DEAR Ana").score == 1.0


def test_regex_match_is_validated_like_the_regex_grader() -> None:
    message = error_of({"type": "format", "checks": {"regex_match": "(a)\\1"}})
    assert message.startswith("Value error, regex '(a)\\\\1' is not valid RE2")
    message = error_of({"type": "format", "checks": {"regex_match": "a" * 501}})
    assert message == (
        "Value error, regex is 501 characters long; the limit is 500. "
        "Split it into several regex graders."
    )


# --- scoring and configuration --------------------------------------------------------------


def test_score_is_passed_over_enabled_with_details_in_check_order() -> None:
    checks = {
        "regex_match": "^Dear ",
        "forbidden_content": ["guarantee"],
        "required_fields": ["refund"],
        "markdown_structure": True,
        "json_validity": True,
        "length": {"tolerance": 0.5},
    }
    result = grade(checks, "Dear Ana, your refund is on its way.", expected="x" * 30)
    assert result.score == pytest.approx(5 / 6)
    assert result.verdict == "pass"
    assert result.reasoning == "5 of 6 format checks passed"
    assert [d.check for d in result.details] == [
        "format.length",
        "format.json_validity",
        "format.markdown_structure",
        "format.required_fields.refund",
        "format.forbidden_content.guarantee",
        "format.regex_match",
    ]


def test_all_seven_checks_failing_on_an_empty_output() -> None:
    checks = {
        "length": {},
        "json_validity": True,
        "json_schema": True,
        "markdown_structure": True,
        "required_fields": ["refund"],
        "forbidden_content": [""],
        "regex_match": "x",
    }
    with pytest.raises(ValidationError):
        SPEC.validate_python({"type": "format", "checks": checks})
    checks["forbidden_content"] = ["guarantee"]
    result = grade(checks, "", expected={"a": 1})
    assert result.score == pytest.approx(2 / 7)  # markdown and forbidden_content pass
    assert [d.check for d in result.details if d.passed] == [
        "format.markdown_structure",
        "format.forbidden_content.guarantee",
    ]


def test_negated_format_swaps_hits_and_misses() -> None:
    result = grade({"required_fields": ["x"], "forbidden_content": ["y"]}, "y", negate=True)
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.hits == ["missing required 'x'", "contains forbidden 'y'"]


@pytest.mark.parametrize(
    ("checks", "message"),
    [
        (
            {},
            "Value error, enable at least one check: length, json_validity, json_schema, "
            "markdown_structure, required_fields, forbidden_content or regex_match",
        ),
        (
            {"json_validity": False, "markdown_structure": False},
            "Value error, enable at least one check: length, json_validity, json_schema, "
            "markdown_structure, required_fields, forbidden_content or regex_match",
        ),
        ({"jsonvalidity": True}, "unknown key 'jsonvalidity'. Did you mean 'json_validity'?"),
    ],
)
def test_checks_are_validated(checks: dict[str, Any], message: str) -> None:
    assert error_of({"type": "format", "checks": checks}) == message


def test_checks_are_required() -> None:
    assert error_of({"type": "format"}) == "Field required"


def test_huge_output_is_graded_quickly() -> None:
    output = ("# Title\n\n## Part\n\n- refund within 30 days\n- more text here\n\n" * 15_000)[
        :1_000_000
    ]
    checks = {
        "length": {"tolerance": 0.2},
        "json_validity": True,
        "markdown_structure": True,
        "required_fields": ["refund"],
        "forbidden_content": ["guarantee"],
        "regex_match": r"\d+ days",
    }
    started = time.perf_counter()
    result = grade(checks, output, expected="x" * 1_000_000)
    assert time.perf_counter() - started < 10.0
    assert result.score == pytest.approx(5 / 6)
    assert result.details[1].actual is not None and len(result.details[1].actual) == 80


# --- the suite ------------------------------------------------------------------------------


SUITE = """\
name: format-suite
target:
  type: fake
  responses:
    letter: "Dear Ana,\\n\\nYour refund of 30 days is approved."
    data: '{"refund": true, "days": 30}'
tests:
  - id: letter
    input: letter
    expected_output: "Dear Ana, your refund for 30 days has been approved."
    assertions:
      - type: format
        checks:
          length: {tolerance: 0.2}
          required_fields: [refund, "30 days"]
          forbidden_content: [guarantee]
          regex_match: '^Dear '
          markdown_structure: true
  - id: data
    input: data
    expected_output: {refund: false, days: 14, note: "x"}
    assertions:
      - {type: format, checks: {json_validity: true, json_schema: true}}
"""


def test_a_suite_through_evaluate(tmp_path: Path) -> None:
    path = write(tmp_path / "format.eval.yaml", SUITE)
    run = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    outcome = {c.case_id: (c.verdict, c.score) for c in run.results}
    assert outcome == {"letter": ("pass", 1.0), "data": ("fail", 0.5)}
    data = next(c for c in run.results if c.case_id == "data")
    assert data.grader_results[0].details[1].message == "$: 'note' is a required property"


def test_length_without_expected_output_fails_when_the_suite_loads(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        "tests:\n  - id: a\n    input: hi\n"
        "    assertions: [{type: format, checks: {length: {tolerance: 0.1}}}]\n",
    )
    assert errors == [
        "s.eval.yaml:6 tests[0].assertions[0]: format check `length` compares with the "
        "expected_output, and test 'a' has none; add `expected_output` or remove `length`"
    ]


def test_inferred_schema_needs_a_json_expected_output_when_the_suite_loads(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        "assertions: [{type: format, checks: {json_schema: true}}]\n"
        "tests:\n  - {id: a, input: hi}\n  - {id: b, input: hi, expected_output: 'not json'}\n"
        "  - {id: c, input: hi, expected_output: {a: 1}}\n",
    )
    assert errors == [
        "s.eval.yaml:3 assertions[0]: format check `json_schema: true` infers the schema from "
        "the expected_output, and test 'a' has none; add a JSON `expected_output` or give the "
        "schema itself",
        "s.eval.yaml:3 assertions[0]: format check `json_schema: true` cannot infer a schema: "
        "the test's expected_output is not JSON (line 1 column 1: Expecting value)",
    ]


def test_explicit_schema_and_term_checks_need_no_expected_output(tmp_path: Path) -> None:
    path = write(
        tmp_path / "ok.eval.yaml",
        "name: s\ntarget: {type: fake, default: ok}\ntests:\n  - id: a\n    input: hi\n"
        "    assertions: [{type: format, checks: {json_schema: {type: object}, "
        "required_fields: [ok]}}]\n",
    )
    assert load_suite(path).suite.tests[0].id == "a"
