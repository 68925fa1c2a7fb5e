"""String graders (SPEC §4): equals, contains family, starts/ends-with, regex, common options."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from tests.graders._grading import SPEC, grade

from assay.results import Detail, GraderResult


def passed(result: GraderResult) -> None:
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)


def failed(result: GraderResult) -> None:
    assert (result.score, result.verdict, result.error) == (0.0, "fail", None)


# --- equals -----------------------------------------------------------------------------------


def test_equals_exact_match_passes() -> None:
    result = grade({"type": "equals", "value": "30 days"}, "30 days")
    passed(result)
    assert result.hits == ["equals '30 days'"]
    assert result.misses == []
    assert result.details == [
        Detail(check="equals", passed=True, expected="30 days", actual="30 days")
    ]


def test_equals_is_case_sensitive_by_default() -> None:
    result = grade({"type": "equals", "value": "Hello"}, "hello")
    failed(result)
    assert result.hits == []
    assert result.misses == ["does not equal 'Hello'"]
    assert result.details == [
        Detail(check="equals", passed=False, expected="Hello", actual="hello")
    ]


def test_equals_case_insensitive() -> None:
    passed(grade({"type": "equals", "value": "Hello", "case_sensitive": False}, "hELLO"))


def test_equals_does_not_ignore_whitespace_by_default() -> None:
    failed(grade({"type": "equals", "value": "a b"}, " a  b\n"))


def test_equals_ignore_whitespace_collapses_runs_and_strips() -> None:
    result = grade({"type": "equals", "value": "a b", "ignore_whitespace": True}, " a \t b\n")
    passed(result)
    assert result.details == [
        Detail(check="equals", passed=True, expected="a b", actual=" a \t b\n")
    ]


def test_equals_ignore_whitespace_still_separates_words() -> None:
    failed(grade({"type": "equals", "value": "a b", "ignore_whitespace": True}, "ab"))


def test_equals_without_value_uses_expected_output() -> None:
    result = grade({"type": "equals"}, "30 days", expected="30 days")
    passed(result)
    assert result.details[0].expected == "30 days"
    failed(grade({"type": "equals"}, "31 days", expected="30 days"))


def test_equals_value_wins_over_expected_output() -> None:
    passed(grade({"type": "equals", "value": "yes"}, "yes", expected="no"))


def test_equals_json_expected_output_compares_structurally() -> None:
    result = grade({"type": "equals"}, '{ "b": [1, 2],\n "a": 1 }', expected={"a": 1, "b": [1, 2]})
    passed(result)
    assert result.hits == ['equals \'{"a": 1, "b": [1, 2]}\'']
    assert result.details == [
        Detail(
            check="equals",
            passed=True,
            expected='{"a": 1, "b": [1, 2]}',
            actual='{ "b": [1, 2],\n "a": 1 }',
        )
    ]


def test_equals_json_structural_mismatch_fails() -> None:
    result = grade({"type": "equals"}, '{"a": 2}', expected={"a": 1})
    failed(result)
    assert result.misses == ["does not equal '{\"a\": 1}'"]


def test_equals_json_list_order_matters() -> None:
    failed(grade({"type": "equals"}, "[2, 1]", expected=[1, 2]))


def test_equals_json_booleans_are_not_numbers() -> None:
    # Python's == says True == 1; JSON's true is not the number 1.
    failed(grade({"type": "equals"}, '{"ok": 1}', expected={"ok": True}))
    failed(grade({"type": "equals"}, "[0]", expected=[False]))
    passed(grade({"type": "equals"}, '{"ok": true}', expected={"ok": True}))


def test_equals_json_integer_and_float_spellings_are_the_same_number() -> None:
    passed(grade({"type": "equals"}, '{"total": 10.0}', expected={"total": 10}))


def test_equals_json_expected_but_output_not_json_is_a_zero_with_a_miss() -> None:
    result = grade({"type": "equals"}, "not json", expected={"a": 1})
    failed(result)
    assert result.hits == []
    assert result.misses == ["output is not JSON: Expecting value"]
    assert result.details == [
        Detail(check="equals.json", passed=False, expected='{"a": 1}', actual="not json")
    ]


def test_equals_without_value_or_expected_output_is_an_error_not_a_zero() -> None:
    result = grade({"type": "equals"}, "anything")
    assert result.score is None
    assert result.verdict == "error"
    assert result.error is not None
    assert result.error.type == "GraderError"
    assert result.error.message == "equals needs `value` or the test's `expected_output`"
    assert (result.hits, result.misses, result.details) == ([], [], [])


# --- contains family --------------------------------------------------------------------------


def test_contains_passes_and_fails() -> None:
    result = grade({"type": "contains", "value": "30 days"}, "Refunds within 30 days.")
    passed(result)
    assert result.hits == ["contains '30 days'"]
    assert result.details == [
        Detail(
            check="contains",
            passed=True,
            expected="30 days",
            actual="Refunds within 30 days.",
        )
    ]
    missing = grade({"type": "contains", "value": "60 days"}, "Refunds within 30 days.")
    failed(missing)
    assert missing.misses == ["does not contain '60 days'"]


def test_contains_is_case_sensitive_by_default() -> None:
    failed(grade({"type": "contains", "value": "days"}, "30 DAYS"))


def test_contains_case_insensitive_option() -> None:
    passed(grade({"type": "contains", "value": "days", "case_sensitive": False}, "30 DAYS"))


def test_contains_falls_back_to_expected_output() -> None:
    passed(grade({"type": "contains"}, "It is 30 days.", expected="30 days"))
    failed(grade({"type": "contains"}, "It is 60 days.", expected="30 days"))


def test_icontains_ignores_case() -> None:
    result = grade({"type": "icontains", "value": "Days"}, "30 DAYS")
    passed(result)
    assert result.name == "icontains"
    assert result.details[0].check == "icontains"
    failed(grade({"type": "icontains", "value": "weeks"}, "30 DAYS"))


def test_icontains_falls_back_to_expected_output() -> None:
    passed(grade({"type": "icontains"}, "IT IS 30 DAYS", expected="30 days"))


def test_icontains_rejects_case_sensitive_true() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "icontains", "value": "x", "case_sensitive": True})
    assert "icontains always ignores case; use contains" in str(info.value)


def test_starts_with() -> None:
    result = grade({"type": "starts-with", "value": "Dear"}, "Dear customer")
    passed(result)
    assert result.hits == ["starts with 'Dear'"]
    assert result.details[0].check == "starts-with"
    miss = grade({"type": "starts-with", "value": "customer"}, "Dear customer")
    failed(miss)
    assert miss.misses == ["does not start with 'customer'"]


def test_starts_with_case_insensitive_and_expected_output() -> None:
    failed(grade({"type": "starts-with", "value": "dear"}, "Dear customer"))
    passed(grade({"type": "starts-with", "value": "dear", "case_sensitive": False}, "DEAR you"))
    passed(grade({"type": "starts-with"}, "Dear customer", expected="Dear"))


def test_ends_with() -> None:
    result = grade({"type": "ends-with", "value": "regards"}, "Kind regards")
    passed(result)
    assert result.hits == ["ends with 'regards'"]
    assert result.details[0].check == "ends-with"
    miss = grade({"type": "ends-with", "value": "Kind"}, "Kind regards")
    failed(miss)
    assert miss.misses == ["does not end with 'Kind'"]


def test_ends_with_case_insensitive_and_expected_output() -> None:
    failed(grade({"type": "ends-with", "value": "REGARDS"}, "Kind regards"))
    passed(
        grade({"type": "ends-with", "value": "REGARDS", "case_sensitive": False}, "Kind regards")
    )
    passed(grade({"type": "ends-with"}, "Kind regards", expected="regards"))


def test_string_check_without_value_or_expected_output_is_an_error() -> None:
    for kind in ("contains", "icontains", "starts-with", "ends-with"):
        result = grade({"type": kind}, "text")
        assert (result.score, result.verdict) == (None, "error")
        assert result.error is not None
        assert result.error.message == f"{kind} needs `value` or the test's `expected_output`"


def test_contains_any_passes_when_one_value_is_present() -> None:
    result = grade({"type": "contains-any", "value": ["refund", "30 days"]}, "within 30 days")
    passed(result)
    assert result.hits == ["contains '30 days'"]
    assert result.misses == ["does not contain 'refund'"]
    assert result.details == [
        Detail(
            check="contains-any.value[0]",
            passed=False,
            expected="refund",
            actual="within 30 days",
        ),
        Detail(
            check="contains-any.value[1]",
            passed=True,
            expected="30 days",
            actual="within 30 days",
        ),
    ]


def test_contains_any_fails_when_none_is_present() -> None:
    result = grade({"type": "contains-any", "value": ["a", "b"]}, "xyz")
    failed(result)
    assert result.misses == ["does not contain 'a'", "does not contain 'b'"]


def test_contains_all_is_binary_with_one_detail_per_value() -> None:
    result = grade({"type": "contains-all", "value": ["refund", "30", "receipt"]}, "refund in 30")
    failed(result)
    assert result.hits == ["contains 'refund'", "contains '30'"]
    assert result.misses == ["does not contain 'receipt'"]
    assert [(d.check, d.passed, d.expected) for d in result.details] == [
        ("contains-all.value[0]", True, "refund"),
        ("contains-all.value[1]", True, "30"),
        ("contains-all.value[2]", False, "receipt"),
    ]
    assert {d.actual for d in result.details} == {"refund in 30"}


def test_contains_all_passes_when_every_value_is_present() -> None:
    result = grade({"type": "contains-all", "value": ["refund", "30"]}, "refund in 30 days")
    passed(result)
    assert result.misses == []


def test_contains_all_case_insensitive() -> None:
    spec = {"type": "contains-all", "value": ["REFUND", "Days"]}
    failed(grade(spec, "refund in 30 days"))
    passed(grade({**spec, "case_sensitive": False}, "refund in 30 days"))


def test_multi_value_checks_need_at_least_one_value() -> None:
    for kind in ("contains-any", "contains-all"):
        with pytest.raises(ValidationError) as info:
            SPEC.validate_python({"type": kind, "value": []})
        assert info.value.errors()[0]["type"] == "too_short"


# --- regex ------------------------------------------------------------------------------------


def test_regex_searches_anywhere_by_default() -> None:
    result = grade({"type": "regex", "value": r"\d+ days"}, "Refunds within 30 days, ok")
    passed(result)
    assert result.hits == [r"matches /\d+ days/"]
    # on a match, `actual` is the matched text
    assert result.details == [
        Detail(check="regex", passed=True, expected=r"\d+ days", actual="30 days")
    ]


def test_regex_full_match_requires_the_whole_output() -> None:
    spec = {"type": "regex", "value": r"\d+ days", "full_match": True}
    result = grade(spec, "Refunds within 30 days")
    failed(result)
    assert result.misses == [r"does not match /\d+ days/"]
    assert result.details == [
        Detail(check="regex", passed=False, expected=r"\d+ days", actual="Refunds within 30 days")
    ]
    passed(grade(spec, "30 days"))


def test_regex_case_insensitive() -> None:
    failed(grade({"type": "regex", "value": "^refund"}, "REFUND approved"))
    passed(grade({"type": "regex", "value": "^refund", "case_sensitive": False}, "REFUND ok"))


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [(r"(a)\1", r"invalid escape sequence: \1"), ("a(?=b)", "invalid perl operator: (?=")],
)
def test_regex_rejects_what_re2_cannot_compile_at_validation(
    pattern: str, reason: str, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "regex", "value": pattern})
    errors = info.value.errors()
    assert len(errors) == 1
    assert errors[0]["loc"] == ("regex", "value")
    assert errors[0]["msg"] == (
        f"Value error, regex {pattern!r} is not valid RE2 ({reason}). RE2 has no "
        "backreferences or lookaround; rewrite the pattern without them."
    )
    # RE2 reports the error to us, not by logging to the terminal
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_regex_longer_than_500_characters_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "regex", "value": "a" * 501})
    assert info.value.errors()[0]["msg"] == (
        "Value error, regex is 501 characters long; the limit is 500. "
        "Split it into several regex graders."
    )


def test_regex_of_exactly_500_characters_is_accepted() -> None:
    passed(grade({"type": "regex", "value": "a" * 500}, "a" * 500))


def test_regex_catastrophic_backtracking_pattern_finishes() -> None:
    # exponential for a backtracking engine; linear for RE2
    result = grade({"type": "regex", "value": "(a+)+$"}, "a" * 5000 + "b")
    failed(result)
    result = grade({"type": "regex", "value": "^(a+)+$"}, "a" * 5000 + "b")
    failed(result)


# --- common options ---------------------------------------------------------------------------


def test_name_defaults_to_type() -> None:
    result = grade({"type": "contains", "value": "x"}, "x")
    assert (result.name, result.type) == ("contains", "contains")
    named = grade({"type": "contains", "value": "x", "name": "mentions-x"}, "x")
    assert (named.name, named.type) == ("mentions-x", "contains")


def test_defaults_of_weight_required_min_score() -> None:
    result = grade({"type": "contains", "value": "x"}, "x")
    assert (result.weight, result.required, result.min_score) == (1.0, False, None)


def test_weight_required_and_min_score_are_carried_into_the_result() -> None:
    spec = {"type": "contains", "value": "x", "weight": 2, "required": True, "min_score": 0.7}
    result = grade(spec, "x")
    assert (result.weight, result.required, result.min_score) == (2.0, True, 0.7)


def test_negated_contains_passes_when_absent() -> None:
    result = grade({"type": "contains", "value": "guarantee", "negate": True}, "No promises.")
    passed(result)
    assert result.hits == ["does not contain 'guarantee'"]
    assert result.misses == []
    assert result.details == [
        Detail(check="contains", passed=True, expected="guarantee", actual="No promises.")
    ]


def test_negated_contains_fails_when_present() -> None:
    result = grade({"type": "contains", "value": "guarantee", "negate": True}, "We guarantee it.")
    failed(result)
    assert result.hits == []
    assert result.misses == ["contains 'guarantee'"]
    assert [d.passed for d in result.details] == [False]


def test_negated_regex_and_contains_all() -> None:
    passed(grade({"type": "regex", "value": r"\d{16}", "negate": True}, "no card here"))
    failed(grade({"type": "contains-all", "value": ["a", "b"], "negate": True}, "a b"))


def test_negate_does_not_turn_an_error_into_a_pass() -> None:
    result = grade({"type": "contains", "negate": True}, "text")
    assert (result.score, result.verdict) == (None, "error")


def test_min_score_decides_the_verdict_instead_of_the_case_threshold() -> None:
    # a binary grader scoring 0 still passes a bar of 0
    result = grade({"type": "contains", "value": "x", "min_score": 0.0}, "y")
    assert (result.score, result.verdict) == (0.0, "pass")
    without = grade({"type": "contains", "value": "x"}, "y", threshold=0.0)
    assert (without.score, without.verdict) == (0.0, "pass")
    strict = grade({"type": "contains", "value": "x"}, "y", threshold=0.5)
    assert (strict.score, strict.verdict) == (0.0, "fail")


@pytest.mark.parametrize(
    "bad",
    [{"weight": -1}, {"min_score": 1.5}, {"min_score": -0.1}, {"negate": "maybe"}],
)
def test_common_options_are_validated(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        SPEC.validate_python({"type": "contains", "value": "x", **bad})


def test_unknown_option_is_rejected_with_a_suggestion() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "contains", "valeu": "x"})
    error = info.value.errors()[0]
    assert error["type"] == "unknown_key"
    assert error["msg"] == "unknown key 'valeu'. Did you mean 'value'?"


def test_graders_are_frozen() -> None:
    grader = SPEC.validate_python({"type": "contains", "value": "x"})
    with pytest.raises(ValidationError):
        grader.value = "y"


# --- truncation -------------------------------------------------------------------------------


def test_detail_actual_of_a_long_output_is_truncated_to_80_characters() -> None:
    output = "y" * 500
    result = grade({"type": "contains", "value": "x"}, output)
    actual = result.details[0].actual
    assert actual == "y" * 79 + "…"
    assert len(actual) == 80


def test_detail_expected_of_a_long_value_is_truncated_and_messages_use_60() -> None:
    value = "v" * 200
    result = grade({"type": "contains", "value": value}, "short")
    assert result.details[0].expected == "v" * 79 + "…"
    assert result.misses == ["does not contain '" + "v" * 59 + "…'"]


def test_detail_of_a_long_regex_match_is_truncated() -> None:
    result = grade({"type": "regex", "value": "b+"}, "a" + "b" * 300)
    assert result.details[0].actual == "b" * 79 + "…"


# ---- unicode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "output", "score"),
    [
        ({"type": "contains", "value": "café"}, "Un café, s'il vous plaît", 1.0),
        ({"type": "contains", "value": "cafe"}, "Un café, s'il vous plaît", 0.0),
        ({"type": "icontains", "value": "STRASSE"}, "Hauptstraße 5", 1.0),  # casefold: ß → ss
        ({"type": "starts-with", "value": "👋"}, "👋 hello", 1.0),
        ({"type": "ends-with", "value": "日本"}, "ようこそ日本", 1.0),
        ({"type": "regex", "value": r"\p{Han}{2}"}, "ようこそ日本", 1.0),
        # RE2's \w is ASCII-only (documented): letters beyond ASCII need \pL
        ({"type": "regex", "value": r"\w+", "full_match": True}, "naïve", 0.0),
        ({"type": "regex", "value": r"\pL+", "full_match": True}, "naïve", 1.0),
        # `.` is one character, not one byte of its UTF-8 encoding
        ({"type": "regex", "value": "caf.", "full_match": True}, "café", 1.0),
        ({"type": "regex", "value": "ÉCOLE", "case_sensitive": False}, "une école", 1.0),
        ({"type": "equals", "value": "Ünïcödé"}, "Ünïcödé", 1.0),
    ],
)
def test_unicode_text_is_compared_by_character(
    spec: dict[str, Any], output: str, score: float
) -> None:
    result = grade(spec, output)
    assert (result.score, result.error) == (score, None)


def test_a_regex_match_detail_shows_the_unicode_match() -> None:
    result = grade({"type": "regex", "value": r"\d+ jours"}, "Remboursé sous 30 jours — merci")
    assert [(d.check, d.passed, d.actual) for d in result.details] == [("regex", True, "30 jours")]
    result = grade({"type": "regex", "value": "caf. n"}, "un café noir")
    assert [d.actual for d in result.details] == ["café n"]


_PATTERN_CASES = [
    (r"\d+ days", "returns within 30 days.", True),
    (r"\d+ days", "no number here", True),
    (r"days", "returns within 30 DAYS", False),
    (r"", "anything", True),
    (r"x*", "", True),
    (r"é+", "café crème", True),
    (r"\C", "é", True),
    (r"^\w+$", "naïve", True),
    (r"(a)(b)?", "ab", True),
    (r"[[:alpha:]]+", "123 abc", True),
    (r"caf\x{e9}", "CAFÉ", False),
]


@pytest.mark.parametrize(("pattern", "text", "case_sensitive"), _PATTERN_CASES)
@pytest.mark.parametrize("full", [False, True])
def test_i10_a_pattern_finds_what_the_re2_wrapper_finds(
    pattern: str, text: str, case_sensitive: bool, full: bool
) -> None:
    """`CompiledPattern.find` calls RE2's match under google-re2's Python wrapper; its answer
    is the wrapper's (`search` / `fullmatch` of the encoded text), and an object without that
    match (another wrapper) is still matched through its own `search` / `fullmatch`."""
    from assay.graders.text import CompiledPattern, compile_re2

    compiled = compile_re2(pattern, case_sensitive=case_sensitive)
    wrapper = compiled._compiled
    encoded = text.encode()
    match = wrapper.fullmatch(encoded) if full else wrapper.search(encoded)
    expected = None if match is None else match.group(0).decode(errors="replace")
    assert compiled._match is not None  # the direct call is the one tested
    assert compiled.find(text, full=full) == expected

    class Wrapper:  # only the wrapper's public methods
        def search(self, data: bytes) -> object:
            return wrapper.search(data)

        def fullmatch(self, data: bytes) -> object:
            return wrapper.fullmatch(data)

    fallback = CompiledPattern(Wrapper())
    assert fallback._match is None
    assert fallback.find(text, full=full) == expected
