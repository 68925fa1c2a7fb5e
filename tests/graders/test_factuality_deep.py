"""factuality `depth: deep` (SPEC §5.5) through the real SDK against the local scripted judge:
judged claims scored strict and lenient, and the fallbacks to shallow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from tests.conftest import write
from tests.graders._grading import SPEC
from tests.graders._grading import grade as grade_without_judge
from tests.graders._judging import grade_judged

from assay.config import load_suite
from assay.results import Detail, GraderResult
from assay.testing import FakeOpenAIServer

POLICY = "Refunds are accepted within 30 days of purchase."
SHIPPING = "Shipping is free on orders over $50."
OUTPUT = "You can get a refund for thirty days. Shipping costs $5. Our office has a cat."
CLAIMS: list[dict[str, Any]] = [
    {
        "claim": "Refunds are possible for thirty days.",
        "label": "supported",
        "reference": POLICY,
        "reason": "Thirty days is the stated window.",
    },
    {
        "claim": "Shipping costs $5.",
        "label": "contradicted",
        "reference": SHIPPING,
        "reason": "Shipping is free over $50.",
    },
    {
        "claim": "The office has a cat.",
        "label": "unverifiable",
        "reference": "",
        "reason": "The references say nothing about a cat.",
    },
]
DETAILS = [
    Detail(
        check="claim[0]",
        passed=True,
        expected=POLICY,
        actual="Refunds are possible for thirty days.",
        message=f"supported (Thirty days is the stated window.); reference: '{POLICY}'",
    ),
    Detail(
        check="claim[1]",
        passed=False,
        expected=SHIPPING,
        actual="Shipping costs $5.",
        message=f"contradicted (Shipping is free over $50.); reference: '{SHIPPING}'",
    ),
]


def grade(
    server: FakeOpenAIServer | None, mode: str = "strict", output: str = OUTPUT, **options: Any
) -> GraderResult:
    spec = {"type": "factuality", "depth": "deep", "mode": mode, **options}
    return grade_judged(spec, output, server, expected=POLICY, context=(SHIPPING,))


def shallow(mode: str = "strict", output: str = OUTPUT) -> GraderResult:
    spec = {"type": "factuality", "depth": "shallow", "mode": mode}
    return grade_without_judge(spec, output, expected=POLICY, context=(SHIPPING,))


def test_strict_scores_the_judges_supported_claims() -> None:
    with FakeOpenAIServer(judge={"claims": CLAIMS}) as server:
        result = grade(server, "strict")
        asked, body = server.request_count, server.requests[-1]
    assert (result.score, result.verdict, result.error) == (1 / 3, "fail", None)
    assert result.reasoning == (
        "strict, depth deep: 1 supported, 1 contradicted, 1 unverifiable of 3 claims"
    )
    assert result.hits == ["1 of 3 claims supported"]
    assert result.misses == ["1 of 3 claims contradicted", "1 of 3 claims unverifiable"]
    assert result.details == [
        *DETAILS,
        Detail(
            check="claim[2]",
            passed=False,
            expected=None,
            actual="The office has a cat.",
            message="unverifiable (The references say nothing about a cat.)",
        ),
    ]
    assert asked == 1
    assert result.judge_model == "judge-model"
    assert result.judge_prompt is not None and result.judge_prompt.startswith("factuality-claims@")
    assert result.token_usage is not None and result.token_usage.input > 0
    assert body["response_format"]["type"] == "json_schema"
    user = body["messages"][1]["content"]
    assert "<<<OUTPUT " in user and OUTPUT in user
    assert "<<<EXPECTED_OUTPUT " in user and POLICY in user
    assert "<<<CONTEXT " in user and f"[1] {SHIPPING}" in user


def test_lenient_passes_unverifiable_claims_and_fails_contradicted_ones() -> None:
    with FakeOpenAIServer(judge={"claims": CLAIMS}) as server:
        result = grade(server, "lenient")
    assert (result.score, result.verdict) == (2 / 3, "fail")
    assert result.reasoning == (
        "lenient, depth deep: 1 supported, 1 contradicted, 1 unverifiable of 3 claims"
    )
    assert result.hits == ["2 of 3 claims not contradicted"]
    assert result.misses == ["1 of 3 claims contradicted"]
    assert [(d.check, d.passed) for d in result.details] == [
        ("claim[0]", True),
        ("claim[1]", False),
        ("claim[2]", True),
    ]
    assert result.details[:2] == DETAILS


def test_the_judges_labels_replace_the_shallow_ones() -> None:
    # shallow cannot match "thirty" with "30": the claim is unverifiable there
    assert shallow("strict").score == 0.0
    with FakeOpenAIServer(judge={"claims": CLAIMS[:1]}) as server:
        assert grade(server, "strict").score == 1.0


@pytest.mark.parametrize(
    ("mode", "score", "passed"), [("strict", 0.0, False), ("lenient", 1.0, True)]
)
def test_no_claims_from_the_judge(mode: str, score: float, passed: bool) -> None:
    with FakeOpenAIServer(judge={"claims": []}) as server:
        result = grade(server, mode, output="Hello!")
    assert result.score == score
    assert result.reasoning == f"{mode}, depth deep: the output makes no checkable claims"
    assert result.details == [
        Detail(
            check="claims",
            passed=passed,
            actual="Hello!",
            message="the output makes no checkable claims",
        )
    ]


def test_a_blank_claim_is_re_asked() -> None:
    answers = iter([{"claims": [{**CLAIMS[0], "claim": " "}]}, {"claims": CLAIMS[:1]}])
    with FakeOpenAIServer(judge=lambda body, schema: next(answers)) as server:
        result = grade(server)
        asked, retry = server.request_count, server.requests[-1]["messages"][-1]["content"]
    assert (result.score, asked) == (1.0, 2)
    assert "claim 0 is empty" in retry


# --- fallback to shallow ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_without_a_judge_deep_falls_back_to_shallow_and_says_so(mode: str) -> None:
    output = "Refunds are accepted within 30 days. Shipping costs $5."
    expected = shallow(mode, output)
    result = grade(None, mode, output=output)
    assert (result.score, result.error) == (expected.score, None)
    assert result.score == (0.5 if mode == "strict" else 1.0)
    assert result.reasoning == (
        f"{expected.reasoning}; depth deep fell back to shallow: no judge configured"
    )
    assert result.reasoning.startswith(f"{mode}, depth shallow: 1 supported")
    assert (result.details, result.hits, result.misses) == (
        expected.details,
        expected.hits,
        expected.misses,
    )
    assert (result.judge_model, result.token_usage) == (None, None)


def test_a_failing_judge_falls_back_to_shallow_and_says_why() -> None:
    output = "Refunds are accepted within 30 days. Shipping costs $5."
    with FakeOpenAIServer(judge={"claims": CLAIMS}, faults={"500": 1.0}) as server:
        result = grade(server, output=output)
        asked = server.request_count
    assert (result.score, result.verdict, result.error) == (0.5, "fail", None)
    assert result.score == shallow(output=output).score
    head, _, why = result.reasoning.partition("; depth deep fell back to shallow: judge failed: ")
    assert head == shallow(output=output).reasoning
    assert "HTTP 500" in why
    assert asked == 4  # the first request and 3 retries
    assert result.judge_model == "judge-model"  # the failed call is still a judge call


def test_an_unusable_reply_falls_back_and_keeps_what_the_judge_cost() -> None:
    with FakeOpenAIServer(judge={"claims": [{**CLAIMS[0], "label": "maybe"}]}) as server:
        result = grade(server)
        asked = server.request_count
    assert asked == 3
    assert result.error is None and result.score == shallow().score
    assert result.reasoning.startswith(
        f"{shallow().reasoning}; depth deep fell back to shallow: judge failed: judge "
        "judge-model: no valid reply after 3 attempts"
    )
    assert result.token_usage is not None and result.token_usage.input > 0
    assert result.judge_prompt is not None and result.judge_prompt.startswith("factuality-claims@")


# --- what stays deterministic, configuration ----------------------------------------------------


def test_json_structural_never_asks_the_judge() -> None:
    spec = {"type": "factuality", "depth": "deep"}
    with FakeOpenAIServer(judge={"claims": CLAIMS}) as server:
        result = grade_judged(spec, '{"days": 30}', server, expected={"days": 30})
        asked = server.request_count
    assert (result.score, result.reasoning, asked) == (
        1.0,
        "json_structural (auto): 1 of 1 leaves match",
        0,
    )


def test_only_deep_claim_modes_wait_on_the_judge() -> None:
    def flags(**options: Any) -> tuple[bool, bool]:
        grader = SPEC.validate_python({"type": "factuality", **options})
        return grader.awaits_io, grader.uses_judge

    assert flags(depth="deep") == (True, True)
    assert flags(depth="deep", mode="lenient") == (True, True)
    assert flags() == (False, False)
    assert flags(depth="deep", mode="json_structural") == (False, False)


def test_a_deep_suite_loads_without_a_judge(tmp_path: Path) -> None:
    path = write(
        tmp_path / "s.eval.yaml",
        "name: s\ntarget: {type: fake, default: ok}\ntests:\n"
        "  - id: t\n    input: hi\n    expected_output: ok\n"
        "    assertions: [{type: factuality, depth: deep}]\n",
    )
    loaded = load_suite(path)
    assert loaded.needs_judge == ()


def test_a_custom_prompt_is_checked_when_the_suite_loads() -> None:
    with pytest.raises(ValidationError) as info:
        SPEC.validate_python(
            {"type": "factuality", "depth": "deep", "prompt": "Claims of {{ output }}\n{{ x }}"}
        )
    assert "uses unknown variable(s) x" in str(info.value)
