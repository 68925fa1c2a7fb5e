"""The composite grader (SPEC §1.3): members folded by an aggregator; composites nest."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError
from tests.graders._grading import SPEC, grade

from assay.graders import Composite
from assay.results import Detail
from assay.scoring import Minimum, WeightedAverage


def has(value: str, **options: Any) -> dict[str, Any]:
    return {"type": "contains", "value": value, "name": f"has-{value}", **options}


def test_weighted_average_of_members() -> None:
    spec = {"type": "composite", "assertions": [has("a", weight=3), has("z")]}
    result = grade(spec, "abc")
    assert result.score == 0.75
    assert result.verdict == "fail"  # below the case threshold 0.8
    assert result.error is None
    assert result.reasoning == "weighted_average of 2 member grader(s)"
    assert grade(spec, "abc", threshold=0.7).verdict == "pass"


def test_default_aggregator_is_weighted_average() -> None:
    grader = SPEC.validate_python({"type": "composite", "assertions": [has("a")]})
    assert isinstance(grader, Composite)
    assert grader.aggregator == WeightedAverage()


def test_aggregator_short_form() -> None:
    spec = {"type": "composite", "aggregator": "minimum", "assertions": [has("a"), has("z")]}
    grader = SPEC.validate_python(spec)
    assert grader.aggregator == Minimum(type="minimum")
    assert grade(spec, "abc").score == 0.0


def test_maximum_aggregator() -> None:
    spec = {
        "type": "composite",
        "aggregator": {"type": "maximum"},
        "assertions": [has("a"), has("z")],
    }
    assert grade(spec, "abc").score == 1.0


def test_all_or_nothing_aggregator() -> None:
    spec = {
        "type": "composite",
        "aggregator": {"type": "all_or_nothing", "threshold": 1.0},
        "assertions": [has("a"), has("b"), has("z")],
    }
    assert grade(spec, "abc").score == 0.0
    assert grade(spec, "abcz").score == 1.0


def test_children_are_attached_and_hits_misses_details_are_prefixed() -> None:
    spec = {"type": "composite", "assertions": [has("a"), has("z")]}
    result = grade(spec, "abc")
    assert [(c.name, c.type, c.score, c.verdict) for c in result.children] == [
        ("has-a", "contains", 1.0, "pass"),
        ("has-z", "contains", 0.0, "fail"),
    ]
    assert result.hits == ["has-a: contains 'a'"]
    assert result.misses == ["has-z: does not contain 'z'"]
    assert result.details == [
        Detail(check="has-a.contains", passed=True, expected="a", actual="abc"),
        Detail(check="has-z.contains", passed=False, expected="z", actual="abc"),
    ]


def test_member_names_default_to_their_type_in_prefixes() -> None:
    spec = {"type": "composite", "assertions": [{"type": "is-json"}]}
    result = grade(spec, "[]")
    assert [d.check for d in result.details] == ["is-json.is-json"]
    assert result.hits == ["is-json: output is valid JSON"]


def test_weight_zero_member_is_reported_but_not_scored() -> None:
    spec = {"type": "composite", "assertions": [has("a"), has("z", weight=0)]}
    result = grade(spec, "abc")
    assert result.score == 1.0
    assert result.reasoning == "weighted_average of 1 member grader(s)"
    assert [c.name for c in result.children] == ["has-a", "has-z"]
    assert result.misses == ["has-z: does not contain 'z'"]


def test_nested_composite() -> None:
    inner = {"type": "composite", "name": "inner", "assertions": [has("a"), has("z")]}
    spec = {"type": "composite", "name": "outer", "assertions": [inner, has("b")]}
    result = grade(spec, "abc")
    assert result.name == "outer"
    assert result.score == 0.75  # (0.5 + 1.0) / 2
    inner_result = result.children[0]
    assert (inner_result.name, inner_result.type, inner_result.score) == ("inner", "composite", 0.5)
    assert [c.name for c in inner_result.children] == ["has-a", "has-z"]
    assert [d.check for d in result.details] == [
        "inner.has-a.contains",
        "inner.has-z.contains",
        "has-b.contains",
    ]
    assert result.misses == ["inner: has-z: does not contain 'z'"]


def test_safety_gate_member_failing_zeroes_the_score() -> None:
    spec = {
        "type": "composite",
        "aggregator": {"type": "safety_gate", "required": ["no-ssn"]},
        "assertions": [
            {"type": "contains", "value": "SSN", "negate": True, "name": "no-ssn"},
            has("refund"),
            has("receipt"),
        ],
    }
    leaked = grade(spec, "refund and receipt; your SSN is 123")
    assert (leaked.score, leaked.verdict) == (0.0, "fail")
    assert leaked.children[0].verdict == "fail"
    clean = grade(spec, "refund only")
    # the gate passes: the weighted average of the other members
    assert (clean.score, clean.verdict) == (0.5, "fail")
    assert grade(spec, "refund and receipt").score == 1.0


def test_threshold_aggregator_decides_the_verdict_by_fraction() -> None:
    spec = {
        "type": "composite",
        "aggregator": {"type": "threshold", "threshold": 0.6},
        "assertions": [has("a"), has("b"), has("z")],
    }
    result = grade(spec, "abc", threshold=0.8)
    assert result.score == pytest.approx(2 / 3)
    # 2/3 is below the case threshold 0.8, but the aggregator's own bar decides
    assert result.verdict == "pass"
    one_of_three = grade(spec, "a", threshold=0.8)
    assert (one_of_three.score, one_of_three.verdict) == (pytest.approx(1 / 3), "fail")


def test_threshold_aggregator_counts_member_verdicts_against_the_case_threshold() -> None:
    inner = {
        "type": "composite",
        "name": "half",
        "assertions": [has("a"), has("z")],
    }
    spec = {
        "type": "composite",
        "aggregator": {"type": "threshold", "threshold": 1.0},
        "assertions": [inner, has("b")],
    }
    # inner scores 0.5: fails a 0.8 case threshold, passes a 0.5 one
    assert grade(spec, "ab", threshold=0.8).verdict == "fail"
    assert grade(spec, "ab", threshold=0.5).verdict == "pass"


def test_negated_threshold_composite_flips_the_verdict() -> None:
    spec = {
        "type": "composite",
        "negate": True,
        "aggregator": {"type": "threshold", "threshold": 0.6},
        "assertions": [has("a"), has("b"), has("z")],
    }
    result = grade(spec, "abc")
    assert result.score == pytest.approx(1 / 3)
    assert result.verdict == "fail"


def test_min_score_on_a_composite_decides_its_verdict() -> None:
    spec = {"type": "composite", "min_score": 0.5, "assertions": [has("a"), has("z")]}
    result = grade(spec, "abc", threshold=0.8)
    assert (result.score, result.verdict, result.min_score) == (0.5, "pass", 0.5)
    without = {"type": "composite", "assertions": [has("a"), has("z")]}
    assert grade(without, "abc", threshold=0.8).verdict == "fail"


def test_member_error_makes_the_composite_an_error_not_a_zero() -> None:
    spec = {"type": "composite", "assertions": [has("a"), {"type": "equals", "name": "same"}]}
    result = grade(spec, "abc")
    assert result.score is None
    assert result.verdict == "error"
    assert result.error is not None
    assert result.error.type == "GraderError"
    assert result.error.message == (
        "member 'same' errored: equals needs `value` or the test's `expected_output`"
    )


def test_nested_member_error_propagates_to_the_top() -> None:
    inner = {"type": "composite", "name": "inner", "assertions": [{"type": "contains"}]}
    result = grade({"type": "composite", "assertions": [inner, has("a")]}, "abc")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.message.startswith("member 'inner' errored: member 'contains' errored:")


def test_errored_member_with_weight_zero_does_not_error_the_composite() -> None:
    spec = {"type": "composite", "assertions": [has("a"), {"type": "equals", "weight": 0}]}
    result = grade(spec, "abc")
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.children[1].verdict == "error"


def test_composite_with_only_weight_zero_members_is_an_error() -> None:
    spec = {"type": "composite", "assertions": [has("a", weight=0)]}
    result = grade(spec, "abc")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.message == "nothing to aggregate: no grader with weight > 0"


def test_composite_needs_at_least_one_member() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "composite", "assertions": []})
    assert info.value.errors()[0]["type"] == "too_short"


def test_invalid_member_is_rejected_at_validation_with_its_path() -> None:
    spec = {"type": "composite", "assertions": [has("a"), {"type": "regex", "value": "(?<=a)b"}]}
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(spec)
    error = info.value.errors()[0]
    assert error["loc"] == ("composite", "assertions", 1, "regex", "value")
    assert "not valid RE2" in error["msg"]


def test_unknown_aggregator_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(
            {"type": "composite", "aggregator": {"type": "median"}, "assertions": [has("a")]}
        )
    assert info.value.errors()[0]["type"] == "union_tag_invalid"
