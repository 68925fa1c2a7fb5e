"""`faithfulness` (SPEC §4.1): the output's claims against the passages the target retrieved,
shallow (factuality's n-gram labeller) and deep (the local scripted judge)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.graders._grading import grade
from tests.graders._judging import grade_judged

from assay.results import Detail, GraderResult, RetrievedPassage, TargetOutput
from assay.testing import FakeOpenAIServer

POLICY = "Refunds are accepted within 30 days of purchase."
SHIPPING = "Shipping is free on orders over $50."
PASSAGES = [
    RetrievedPassage(id="refunds", text=POLICY, score=0.9),
    RetrievedPassage(id="shipping", text=SHIPPING, score=0.4),
]


def _retrieved(output: str, passages: list[RetrievedPassage]) -> TargetOutput:
    return TargetOutput(output=output, context=passages)


def faithful(
    output: str, passages: list[RetrievedPassage] = PASSAGES, **options: Any
) -> GraderResult:
    return grade(
        {"type": "faithfulness", **options}, output, target_output=_retrieved(output, passages)
    )


def test_i26_2_supported_claims_pass_with_a_detail_per_claim() -> None:
    result = faithful("Refunds are accepted within 30 days. Shipping is free on orders over $50.")
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.reasoning == (
        "strict, depth shallow: 2 supported, 0 contradicted, 0 unverifiable of 2 claims; "
        "against 2 retrieved passages"
    )
    assert [(d.check, d.passed, d.expected) for d in result.details] == [
        ("claim[0]", True, POLICY),
        ("claim[1]", True, SHIPPING),
    ]


def test_i26_2_unsupported_and_contradicted_claims_fail() -> None:
    result = faithful("Refunds are accepted within 45 days. Our office has a cat named Tom.")
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.misses == ["1 of 2 claims contradicted", "1 of 2 claims unverifiable"]
    assert result.details[0] == Detail(
        check="claim[0]",
        passed=False,
        expected=POLICY,
        actual="Refunds are accepted within 45 days.",
        message=f"contradicted (numbers differ: 45 vs 30; overlap 1.00); reference: '{POLICY}'",
    )
    lenient = faithful("Refunds are accepted within 45 days. Our office has a cat.", mode="lenient")
    assert lenient.score == 0.5


def test_i26_2_the_retrieved_passages_are_the_references_not_the_expected_output() -> None:
    output = "Refunds are accepted within 30 days."
    # the expected output agrees, but the retriever returned only the shipping passage
    result = grade(
        {"type": "faithfulness"},
        output,
        expected=output,
        context=(POLICY,),
        target_output=_retrieved(output, PASSAGES[1:]),
    )
    assert result.score == 0.0 and result.reasoning.endswith("against 1 retrieved passage")
    # without runtime context the test's static context is used, and the reasoning says so
    static = grade({"type": "faithfulness"}, output, context=(POLICY,))
    assert static.score == 1.0
    assert static.reasoning.endswith(
        "against the test's static context (the target retrieved no passage)"
    )


@pytest.mark.parametrize("output", ["", "Thanks!"])
def test_i26_2_an_output_without_claims_is_faithful(output: str) -> None:
    result = faithful(output)
    assert (result.score, result.verdict) == (1.0, "pass")
    assert result.hits == ["the output makes no checkable claims, so none is unsupported"]


def test_i26_2_no_passages_at_all_is_an_error_not_a_zero() -> None:
    result = faithful("Refunds are accepted within 30 days.", passages=[])
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None and "and there are none" in result.error.message


def test_i26_2_unicode_claims() -> None:
    passages = [RetrievedPassage(text="Die Rückgabe ist 30 Tage möglich. 価格は30ドルです。")]
    result = faithful("Die Rückgabe ist 30 Tage möglich. 価格は45ドルです。", passages)
    assert [d.passed for d in result.details] == [True, False]
    assert result.score == 0.5


def test_i26_2_a_megabyte_output_is_graded_in_reasonable_time() -> None:
    output = (f"{POLICY} The sky is blue today. " * 14_000)[:1_000_000]
    started = time.perf_counter()
    result = faithful(output)
    assert time.perf_counter() - started < 15.0
    assert result.score == pytest.approx(0.5, abs=0.001)
    assert sum(not d.passed for d in result.details) == 11  # 10 kept + "+ N more"


CLAIMS = [
    {"claim": "Refunds take 30 days.", "label": "supported", "reference": POLICY, "reason": "ok"},
    {"claim": "There is a cat.", "label": "unverifiable", "reference": "", "reason": "absent"},
]


def test_i26_2_deep_asks_the_judge_with_the_retrieved_passages() -> None:
    output = "Refunds take 30 days. There is a cat."
    with FakeOpenAIServer(judge={"claims": CLAIMS}) as server:
        result = grade_judged(
            {"type": "faithfulness", "depth": "deep"},
            output,
            server,
            expected="A reference answer that must not be shown.",
            target_output=_retrieved(output, PASSAGES),
        )
        user = server.requests[-1]["messages"][1]["content"]
    assert (result.score, result.verdict, result.fallback) == (0.5, "fail", None)
    assert result.judge_prompt is not None
    assert result.judge_prompt.startswith("faithfulness-claims@")
    assert [(d.check, d.passed) for d in result.details] == [
        ("claim[0]", True),
        ("claim[1]", False),
    ]
    assert "<<<RETRIEVED_CONTEXT " in user and f"[1] {POLICY}" in user and f"[2] {SHIPPING}" in user
    assert "must not be shown" not in user


def test_i26_2_deep_without_a_judge_falls_back_to_shallow_and_says_so() -> None:
    output = "Refunds are accepted within 30 days."
    result = grade_judged(
        {"type": "faithfulness", "depth": "deep"},
        output,
        None,
        target_output=_retrieved(output, PASSAGES),
    )
    assert result.score == 1.0
    assert result.fallback == "deep faithfulness → shallow: no judge configured"
    assert result.reasoning.endswith("depth deep fell back to shallow: no judge configured")


def test_i26_2_deep_with_a_failing_judge_falls_back_to_shallow_and_keeps_the_spend() -> None:
    output = "Refunds are accepted within 30 days."
    with FakeOpenAIServer(judge={"claims": CLAIMS}, faults={"500": 1.0}) as server:
        result = grade_judged(
            {"type": "faithfulness", "depth": "deep", "judge": {"max_retries": 0}},
            output,
            server,
            target_output=_retrieved(output, PASSAGES),
        )
    assert (result.score, result.verdict, result.error) == (1.0, "pass", None)
    assert result.fallback is not None
    assert result.fallback.startswith(
        "deep faithfulness → shallow: judge failed: judge judge-model"
    )
    assert result.judge_model == "judge-model"
