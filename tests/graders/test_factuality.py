"""The factuality grader (SPEC §4): shallow claim labelling and json_structural comparison."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import write
from tests.graders._grading import SPEC, load_errors
from tests.graders._grading import grade as grade_spec

from assay import EvalConfig, evaluate
from assay.graders import factuality
from assay.graders.factuality import ClaimLabel, ClaimLabeller, label_shallow, split_sentences
from assay.results import Detail, GraderResult

POLICY = "Refunds are accepted within 30 days of purchase."
SHIPPING = "Shipping is free on orders over $50."


def grade(
    output: str,
    *,
    expected: Any = None,
    context: Sequence[str] = (),
    **options: Any,
) -> GraderResult:
    spec = {"type": "factuality", **options}
    return grade_spec(spec, output, expected=expected, context=tuple(context))


def claims(result: GraderResult) -> list[tuple[str, bool, str | None]]:
    return [(d.check, d.passed, d.message) for d in result.details]


# --- sentences and claims -----------------------------------------------------------------------


def test_split_sentences() -> None:
    text = "Refunds: 30 days. Version 2.5 is out!\nNew line? 価格は30ドルです。送料は無料です。  "
    assert split_sentences(text) == [
        "Refunds: 30 days.",
        "Version 2.5 is out!",
        "New line?",
        "価格は30ドルです。",
        "送料は無料です。",
    ]
    assert split_sentences("  \n\n ") == []


def test_a_supported_claim() -> None:
    result = grade("Refunds are accepted within 30 days.", context=[POLICY])
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.hits == ["1 of 1 claims supported"]
    assert result.misses == []
    assert result.reasoning == (
        "strict, depth shallow: 1 supported, 0 contradicted, 0 unverifiable of 1 claims"
    )
    assert result.details == [
        Detail(
            check="claim[0]",
            passed=True,
            expected=POLICY,
            actual="Refunds are accepted within 30 days.",
            message=f"supported (overlap 1.00); reference: '{POLICY}'",
        )
    ]


def test_a_paraphrase_with_plural_and_filler_words_is_supported() -> None:
    # content n-grams of the claim: get→stopword, refund, #, day; (refund,#), (#,day)
    result = grade("You can get a refund within 30 days.", context=[POLICY])
    assert claims(result) == [
        ("claim[0]", True, f"supported (overlap 0.75); reference: '{POLICY}'")
    ]


def test_a_different_number_contradicts() -> None:
    result = grade("Refunds are accepted within 45 days.", context=[POLICY])
    assert (result.score, result.misses) == (0.0, ["1 of 1 claims contradicted"])
    assert claims(result) == [
        (
            "claim[0]",
            False,
            f"contradicted (numbers differ: 45 vs 30; overlap 1.00); reference: '{POLICY}'",
        )
    ]


@pytest.mark.parametrize(
    "claim",
    [
        "Shipping is not free on orders over $50.",
        "Shipping isn't free on orders over $50.",
        "Shipping isn’t free on orders over $50.",  # a typographic apostrophe
        "Shipping is never free on orders over $50.",
    ],
)
def test_a_negation_contradicts(claim: str) -> None:
    result = grade(claim, context=[SHIPPING])
    assert claims(result) == [
        (
            "claim[0]",
            False,
            "contradicted (negation differs: the claim is negated; overlap 1.00); "
            f"reference: '{SHIPPING}'",
        )
    ]


def test_a_negated_reference_contradicts_a_positive_claim() -> None:
    result = grade(
        "Refunds are accepted on sale items.", context=["Refunds are not accepted on sale items."]
    )
    assert result.details[0].message.startswith(
        "contradicted (negation differs: the reference is negated; overlap 1.00)"
    )


def test_an_unrelated_claim_is_unverifiable() -> None:
    result = grade("The sky is blue.", context=[POLICY])
    assert (result.score, result.misses) == (0.0, ["1 of 1 claims unverifiable"])
    assert result.details == [
        Detail(
            check="claim[0]",
            passed=False,
            actual="The sky is blue.",
            message="unverifiable (no reference shares a content word)",
        )
    ]


def test_a_weak_overlap_is_unverifiable_and_names_the_nearest_reference() -> None:
    result = grade("Refunds are processed within 5 business days.", context=[POLICY])
    assert claims(result) == [
        (
            "claim[0]",
            False,
            f"unverifiable (best overlap 0.25 < 0.6); reference: '{POLICY}'",
        )
    ]


def test_a_claim_with_an_extra_number_is_unverifiable_not_supported() -> None:
    result = grade("Refunds are accepted within 30 days of purchase or 90 days.", context=[POLICY])
    assert claims(result) == [
        (
            "claim[0]",
            False,
            f"unverifiable (states numbers the reference lacks: 90); reference: '{POLICY}'",
        )
    ]


def test_numbers_are_compared_by_value() -> None:
    ref = "The plan costs 1,000.50 dollars per year."
    assert grade("The plan costs 1000.5 dollars per year.", context=[ref]).score == 1.0
    assert grade("The plan costs 1000.0 dollars per year.", context=[ref]).score == 0.0


def test_a_support_anywhere_beats_a_conflict_elsewhere() -> None:
    refs = ["Standard refunds take 30 days to arrive.", "Express refunds take 5 days to arrive."]
    result = grade("Express refunds take 5 days to arrive.", context=refs)
    assert claims(result) == [
        ("claim[0]", True, f"supported (overlap 1.00); reference: '{refs[1]}'")
    ]


def test_strict_and_lenient_scores() -> None:
    output = (
        "Refunds are accepted within 30 days. Refunds are accepted within 45 days. "
        "The sky is blue. Thanks!"
    )
    strict = grade(output, context=[POLICY], mode="strict")
    assert strict.score == pytest.approx(1 / 3)
    assert strict.misses == ["1 of 3 claims contradicted", "1 of 3 claims unverifiable"]
    assert [d.passed for d in strict.details] == [True, False, False]
    lenient = grade(output, context=[POLICY], mode="lenient")
    assert lenient.score == pytest.approx(2 / 3)
    assert lenient.hits == ["2 of 3 claims not contradicted"]
    assert lenient.misses == ["1 of 3 claims contradicted"]
    assert [d.passed for d in lenient.details] == [True, False, True]
    assert lenient.reasoning == (
        "lenient, depth shallow: 1 supported, 1 contradicted, 1 unverifiable of 3 claims"
    )


def test_expected_output_and_context_are_both_references() -> None:
    output = f"{POLICY} {SHIPPING}"
    assert grade(output, expected=POLICY, context=[SHIPPING]).score == 1.0
    assert grade(output, expected=POLICY).score == 0.5


def test_a_json_expected_output_is_a_reference_in_claim_modes() -> None:
    # its JSON text is the reference; `_` separates words, so the key reads "refund window days"
    result = grade(
        "The refund window is 30 days.", expected={"refund_window_days": 30}, mode="strict"
    )
    assert claims(result) == [
        ("claim[0]", True, """supported (overlap 0.67); reference: '{"refund_window_days": 30}'""")
    ]


@pytest.mark.parametrize("output", ["", "   \n", "Thanks!", "Sure. Yes. OK!", "42."])
def test_no_claims_scores_zero_strict_and_one_lenient(output: str) -> None:
    strict = grade(output, context=[POLICY])
    assert (strict.score, strict.misses) == (0.0, ["the output makes no checkable claims"])
    assert strict.details == [
        Detail(
            check="claims",
            passed=False,
            actual=output,
            message="the output makes no checkable claims",
        )
    ]
    lenient = grade(output, context=[POLICY], mode="lenient")
    assert (lenient.score, lenient.hits) == (1.0, ["the output makes no checkable claims"])


def test_trivial_sentences_are_not_claims() -> None:
    result = grade("Sure! Refunds are accepted within 30 days. Thanks.", context=[POLICY])
    assert [d.actual for d in result.details] == ["Refunds are accepted within 30 days."]


def test_unicode_claims() -> None:
    ref = "Les remboursements sont acceptés pendant 30 jours."
    assert grade("Les remboursements sont acceptés pendant 30 jours.", context=[ref]).score == 1.0
    assert grade("Les remboursements sont acceptés pendant 60 jours.", context=[ref]).score == 0.0
    assert grade("価格は30ドルです。", context=["価格は30ドルです。"]).score == 1.0


def test_no_references_is_an_error_not_a_zero() -> None:
    result = grade("Refunds are accepted within 30 days.")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.message == (
        "factuality needs references: add `expected_output` or `context` to the test"
    )


def test_references_without_content_words_are_an_error() -> None:
    result = grade("Refunds are accepted within 30 days.", expected="Yes.")
    assert result.error is not None
    assert result.error.message == (
        "the expected_output and context have no content words to check claims against"
    )


def test_huge_output_is_graded_in_reasonable_time() -> None:
    output = (f"{POLICY} The sky is blue today. " * 14_000)[:1_000_000]
    started = time.perf_counter()
    result = grade(output, context=[POLICY, SHIPPING])
    assert time.perf_counter() - started < 10.0
    assert result.score == pytest.approx(0.5, abs=0.001)
    failed = [d for d in result.details if not d.passed]
    assert len(failed) == 11 and failed[-1].check.startswith("+ ")


class _EverythingContradicted:
    """A stand-in for the deep (LLM) labeller: the grader only sees the protocol."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []

    async def __call__(self, output: str, references: Sequence[str]) -> list[ClaimLabel]:
        self.seen.append((output, list(references)))
        return [ClaimLabel(output, "contradicted", references[0], "judged")]


def test_a_labeller_plugs_in_through_the_protocol(monkeypatch: pytest.MonkeyPatch) -> None:
    labeller = _EverythingContradicted()
    shallow: ClaimLabeller = label_shallow  # the shallow labeller satisfies the protocol
    assert factuality._LABELLERS["shallow"] is shallow
    monkeypatch.setitem(factuality._LABELLERS, "shallow", labeller)
    result = grade("anything", expected="exp", context=["ctx"], mode="lenient")
    assert labeller.seen == [("anything", ["exp", "ctx"])]
    assert claims(result) == [("claim[0]", False, "contradicted (judged); reference: 'exp'")]


# --- json_structural --------------------------------------------------------------------------


def test_auto_mode_compares_json_when_both_sides_are_json() -> None:
    expected = {"refund": True, "days": 30, "reason": "damaged"}
    result = grade('{"refund": true, "days": 30.004, "reason": "damaged"}', expected=expected)
    assert (result.score, result.details) == (1.0, [])
    assert result.hits == ["3 of 3 JSON leaves match"]
    assert result.reasoning == "json_structural (auto): 3 of 3 leaves match"


def test_auto_mode_reads_a_json_string_expected_output() -> None:
    assert grade("[1, 2]", expected="[2, 1]").score == 1.0


def test_auto_mode_falls_back_to_strict_when_one_side_is_prose() -> None:
    result = grade("Refunds are accepted within 30 days.", expected={"days": 30})
    assert result.reasoning.startswith("strict, depth shallow")
    result = grade('{"days": 30}', expected="Refund window: 30 days.")
    assert result.reasoning.startswith("strict, depth shallow")
    result = grade("42", expected="42")  # scalars are not auto-selected
    assert result.reasoning.startswith("strict")


def test_json_structural_mismatches_are_details_with_json_paths() -> None:
    expected = {
        "a": 1.005,
        "tags": ["y", "z"],
        "items": [{"id": 1}, {"id": "2"}],
        "flag": True,
        "odd key": None,
    }
    output = '{"a": 1, "tags": ["x", "y"], "items": [{"id": 1}, {"id": 2}], "flag": 1, "extra": 0}'
    result = grade(output, expected=expected, mode="json_structural")
    # expected leaves: a, tags[0], tags[1], items[0].id, items[1].id, flag, odd key = 7; extras:
    # tags "x" and key "extra" = 2; matching: a, tags "y", items[0].id = 3
    assert result.score == pytest.approx(3 / 9)
    assert result.misses == [
        "2 values differ",
        "2 expected entries are missing",
        "2 unexpected entries",
    ]
    assert [(d.check, d.expected, d.actual, d.message) for d in result.details] == [
        ("json_path.$.tags[1]", '"z"', None, "not in the output's array (a set)"),
        ("json_path.$.tags[0]", None, '"x"', "not in the expected array (a set)"),
        ("json_path.$.items[1].id", '"2"', "2", "expected string, got number"),
        ("json_path.$.flag", "true", "1", "expected boolean, got number"),
        ("json_path.$['odd key']", "null", None, "missing from the output"),
        ("json_path.$.extra", None, "0", "not in the expected output"),
    ]


@pytest.mark.parametrize(
    ("expected", "actual", "score"),
    [
        (0.3, 0.31, 1.0),  # within 0.01, inclusive
        (0.3, 0.311, 0.0),
        (100, 100.0, 1.0),
        (True, True, 1.0),
        (False, 0, 0.0),
        ("Paris", "paris", 0.0),
        (None, None, 1.0),
        ({}, {}, 1.0),
        ([], [], 1.0),
        ([], [1], 0.0),
        ({}, [], 0.0),
    ],
)
def test_json_leaves_are_compared_by_type(expected: Any, actual: Any, score: float) -> None:
    result = grade(json.dumps({"v": actual}), expected={"v": expected}, mode="json_structural")
    assert result.score == score


def test_arrays_of_primitives_are_sets_with_tolerant_numbers() -> None:
    result = grade("[3.004, 1, 2, 2]", expected=[1, 2, 3], mode="json_structural")
    assert result.score == 1.0
    result = grade('[1, true, "1"]', expected=[1, 1.0], mode="json_structural")
    assert result.score == pytest.approx(2 / 4)  # true and "1" are extras
    assert [d.check for d in result.details] == ["json_path.$[1]", "json_path.$[2]"]


def test_arrays_of_objects_are_compared_by_position() -> None:
    expected = [{"id": 1, "qty": 2}, {"id": 2, "qty": 1}]
    swapped = '[{"id": 2, "qty": 1}, {"id": 1, "qty": 2}]'
    assert grade(swapped, expected=expected, mode="json_structural").score == 0.0
    result = grade('[{"id": 1, "qty": 2}]', expected=expected, mode="json_structural")
    assert result.score == pytest.approx(2 / 4)  # the whole second object is missing: 2 leaves
    assert [(d.check, d.message) for d in result.details] == [
        ("json_path.$[1]", "missing from the output")
    ]
    longer = '[{"id": 1, "qty": 2}, {"id": 2, "qty": 1}, {"id": 3}]'
    result = grade(longer, expected=expected, mode="json_structural")
    assert result.score == pytest.approx(4 / 5)
    assert result.details[0].check == "json_path.$[2]"


def test_a_container_of_the_wrong_type_misses_all_its_leaves() -> None:
    result = grade(
        '{"a": "text", "b": 1}', expected={"a": {"x": 1, "y": 2}, "b": 1}, mode="json_structural"
    )
    assert result.score == pytest.approx(1 / 3)
    assert [(d.check, d.message) for d in result.details] == [
        ("json_path.$.a", "expected object, got string")
    ]


def test_json_structural_on_scalars_when_forced() -> None:
    assert grade("42.001", expected=42, mode="json_structural").score == 1.0
    result = grade('"x"', expected='"y"', mode="json_structural")
    assert [(d.check, d.expected, d.actual) for d in result.details] == [
        ("json_path.$", '"y"', '"x"')
    ]


def test_forced_json_structural_on_prose_output_is_an_error_not_a_zero() -> None:
    result = grade("The refund is approved.", expected={"refund": True}, mode="json_structural")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None
    assert result.error.message == (
        "mode json_structural: the output is not JSON (line 1 column 1: Expecting value); "
        "use mode strict or lenient to grade text"
    )
    result = grade('{"x": NaN}', expected={"x": 1}, mode="json_structural")
    assert result.error is not None
    assert result.error.message.startswith("mode json_structural: the output is not JSON (NaN")


def test_forced_json_structural_with_prose_expected_output_is_an_error() -> None:
    result = grade('{"a": 1}', expected="refund approved", mode="json_structural")
    assert result.error is not None
    assert result.error.message == (
        "mode json_structural: the test's expected_output is not JSON "
        "(line 1 column 1: Expecting value)"
    )
    result = grade('{"a": 1}', context=["ctx"], mode="json_structural")
    assert result.error is not None
    assert result.error.message == "mode json_structural needs the test's expected_output (JSON)"


def test_negated_json_structural() -> None:
    result = grade('{"a": 2}', expected={"a": 1}, negate=True)
    assert (result.score, result.verdict) == (1.0, "pass")


def test_huge_json_output() -> None:
    items = [{"id": i, "name": f"item {i}", "tags": ["a", "b"]} for i in range(25_000)]
    output = json.dumps(items)
    assert len(output) > 1_000_000
    started = time.perf_counter()
    result = grade(output, expected=[*items[:-1], {"id": -1, "name": "x", "tags": ["a", "b"]}])
    assert time.perf_counter() - started < 10.0
    total = 25_000 * 4
    assert result.score == pytest.approx((total - 2) / total)


# --- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"depth": "medium"}, "Input should be 'shallow' or 'deep'"),
        (
            {"mode": "loose"},
            "Input should be 'auto', 'strict', 'lenient' or 'json_structural'",
        ),
        ({"mdoe": "strict"}, "unknown key 'mdoe'. Did you mean 'mode'?"),
    ],
)
def test_options_are_validated(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python({"type": "factuality", **spec})
    assert [e["msg"] for e in info.value.errors()] == [message]


def _load_errors(tmp_path: Path, tests: str) -> list[str]:
    return load_errors(tmp_path, "tests:\n" + tests)


JSON_MODE = "{type: factuality, mode: json_structural}"


def test_missing_references_fail_when_the_suite_loads(tmp_path: Path) -> None:
    errors = _load_errors(
        tmp_path,
        "  - {id: a, input: hi, assertions: [{type: factuality}]}\n"
        "  - {id: b, input: hi, context: [x], assertions: [{type: factuality}]}\n"
        f"  - {{id: c, input: hi, context: [x], assertions: [{JSON_MODE}]}}\n"
        f"  - {{id: d, input: hi, expected_output: prose, assertions: [{JSON_MODE}]}}\n"
        f"  - {{id: e, input: hi, expected_output: '{{\"a\": 1}}', assertions: [{JSON_MODE}]}}\n",
    )
    assert errors == [
        "s.eval.yaml:4 tests[0].assertions[0]: factuality checks the output against the "
        "expected_output and context, and test 'a' has neither; add `expected_output` or "
        "`context`",
        "s.eval.yaml:6 tests[2].assertions[0]: factuality mode json_structural compares with the "
        "expected_output, and test 'c' has none; add a JSON `expected_output`",
        "s.eval.yaml:7 tests[3].assertions[0]: factuality mode json_structural: the "
        "expected_output of test 'd' is not JSON (line 1 column 1: Expecting value); use mode "
        "strict or lenient for text",
    ]


SUITE = """\
name: factuality-suite
target:
  type: fake
  responses:
    policy: "Refunds are accepted within 30 days of purchase. Shipping is free over $50."
    wrong: "Refunds are accepted within 90 days of purchase."
    order: '{"id": 7, "items": ["mug", "tee"], "total": 21.5}'
tests:
  - id: policy
    input: policy
    expected_output: "Refunds are accepted within 30 days of purchase."
    context: ["Shipping is free on orders over $50."]
    assertions: [{type: factuality}]
  - id: wrong
    input: wrong
    context: ["Refunds are accepted within 30 days of purchase."]
    assertions: [{type: factuality, mode: lenient}]
  - id: order
    input: order
    expected_output: {id: 7, items: [tee, mug], total: 21.499}
    assertions: [{type: factuality}]
"""


def test_a_suite_through_evaluate(tmp_path: Path) -> None:
    path = write(tmp_path / "f.eval.yaml", SUITE)
    run = evaluate(path, config=EvalConfig(store=False, cache_mode="off"))
    outcome = {c.case_id: (c.verdict, c.score) for c in run.results}
    assert outcome == {"policy": ("pass", 1.0), "wrong": ("fail", 0.0), "order": ("pass", 1.0)}
