"""The judged RAG checks (SPEC §4.1) through the local scripted judge: `context-precision`
(average precision of per-passage verdicts), `context-recall` (attributed statements) and
`answer-relevancy`."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from tests.graders._grading import load_errors
from tests.graders._judging import grade_judged

from assay.graders.context_judged import average_precision
from assay.results import GraderResult, RetrievedPassage, TargetOutput
from assay.testing import FakeOpenAIServer

POLICY = "Refunds are accepted within 30 days of purchase."
SHIPPING = "Shipping is free on orders over $50."
WEATHER = "It is sunny in Lisbon."


def _judged(
    kind: str,
    reply: Any,
    passages: list[str],
    output: str = "Refunds take 30 days.",
    expected: str | None = POLICY,
) -> tuple[GraderResult, str, int]:
    target = TargetOutput(
        output=output, context=[RetrievedPassage(id=str(i), text=t) for i, t in enumerate(passages)]
    )
    with FakeOpenAIServer(judge=reply) as server:
        result = grade_judged(
            {"type": kind}, output, server, expected=expected, input="refund window?",
            target_output=target,
        )  # fmt: skip
        asked = server.request_count
        user = server.requests[-1]["messages"][1]["content"] if asked else ""
    return result, user, asked


def _verdicts(*relevant: bool) -> dict[str, Any]:
    return {
        "passages": {
            str(i): {"relevant": r, "reason": "on refunds" if r else "off topic"}
            for i, r in enumerate(relevant, start=1)
        }
    }


def test_i26_3_average_precision_by_hand() -> None:
    # relevant at ranks 1 and 3: (1/1 + 2/3) / 2
    assert average_precision([True, False, True]) == pytest.approx((1 + 2 / 3) / 2)
    assert average_precision([False, True]) == pytest.approx(0.5)
    assert average_precision([False, False]) == 0.0
    assert average_precision([]) == 0.0


def test_i26_3_context_precision_passes_when_relevant_passages_come_first() -> None:
    result, user, asked = _judged("context-precision", _verdicts(True, False), [POLICY, WEATHER])
    assert (result.score, result.verdict, asked) == (1.0, "pass", 1)
    assert (
        result.reasoning == "average precision 1.000: relevant at ranks 1 of 2 retrieved passages"
    )
    assert [(d.check, d.passed, d.message) for d in result.details] == [
        ("passage[1]", True, "relevant: on refunds"),
        ("passage[2]", False, "irrelevant: off topic"),
    ]
    assert "<<<RETRIEVED_CONTEXT " in user and f"[1] {POLICY}" in user and f"[2] {WEATHER}" in user
    assert result.judge_prompt is not None and result.judge_prompt.startswith("context-precision@")


def test_i26_3_context_precision_fails_when_the_relevant_passage_is_ranked_last() -> None:
    result, _, _ = _judged(
        "context-precision", _verdicts(False, False, True), [WEATHER, SHIPPING, POLICY]
    )
    assert result.score == pytest.approx(1 / 3)
    assert result.verdict == "fail"
    assert result.misses == ["2 of 3 passages irrelevant"]


def test_i26_3_context_precision_schema_pins_one_verdict_per_passage() -> None:
    target = TargetOutput(
        output="x", context=[RetrievedPassage(text=POLICY), RetrievedPassage(text=SHIPPING)]
    )
    with FakeOpenAIServer(judge=_verdicts(True, True)) as server:
        grade_judged({"type": "context-precision"}, "x", server, input="q", target_output=target)
        body = server.requests[-1]
    schema = body["response_format"]["json_schema"]["schema"]
    passages = schema["properties"]["passages"]
    assert passages["required"] == ["1", "2"] and passages["additionalProperties"] is False


def test_i26_3_context_recall_scores_attributed_statements() -> None:
    reply = {
        "statements": [
            {"statement": "Refunds are accepted.", "attributed": True, "reason": "passage 1"},
            {"statement": "The window is 30 days.", "attributed": False, "reason": "absent"},
        ]
    }
    result, user, _ = _judged("context-recall", reply, [WEATHER])
    assert (result.score, result.verdict) == (0.5, "fail")
    assert result.reasoning == "1 of 2 expected statements attributed to 1 retrieved passage"
    assert [(d.check, d.passed) for d in result.details] == [
        ("statement[0]", True),
        ("statement[1]", False),
    ]
    assert "<<<EXPECTED_OUTPUT " in user and POLICY in user


def test_i26_3_context_recall_needs_an_expected_output(tmp_path: Path) -> None:
    errors = load_errors(
        tmp_path,
        "judge: {model: m}\ntests:\n  - id: t\n    input: q\n    context: [c]\n"
        "    assertions: [{type: context-recall}]\n",
    )
    assert len(errors) == 1 and "test 't' has none; add `expected_output`" in errors[0]


def test_i26_3_answer_relevancy() -> None:
    good = {"score": 0.9, "reasoning": "answers the window", "off_topic": [], "unanswered": []}
    result, user, _ = _judged("answer-relevancy", good, [POLICY])
    assert (result.score, result.verdict, result.reasoning) == (0.9, "pass", "answers the window")
    assert "<<<INPUT " in user and "refund window?" in user
    bad = {"score": 0.2, "reasoning": "talks about weather", "off_topic": ["sunny"],
           "unanswered": ["the refund window"]}  # fmt: skip
    result, _, _ = _judged("answer-relevancy", bad, [POLICY], output="It is sunny.")
    assert (result.score, result.verdict) == (0.2, "fail")
    assert result.misses == ["off topic: sunny", "unanswered: the refund window"]


@pytest.mark.parametrize("kind", ["context-precision", "context-recall"])
def test_i26_3_no_passages_is_an_error_not_a_zero(kind: str) -> None:
    result, _, asked = _judged(kind, {}, [])
    assert (result.score, result.verdict, asked) == (None, "error", 0)
    assert result.error is not None and "there are none" in result.error.message


def test_i26_3_an_empty_output_is_not_relevant_without_asking_the_judge() -> None:
    result, _, asked = _judged("answer-relevancy", {}, [POLICY], output="")
    assert (result.score, result.verdict, asked) == (0.0, "fail", 0)
    assert result.misses == ["the output is empty: it answers nothing"]


def test_i26_3_unicode_passages_reach_the_judge() -> None:
    passages = ["Rückerstattung innerhalb von 30 Tagen.", "返金は30日以内です。"]
    result, user, _ = _judged("context-precision", _verdicts(True, True), passages)
    assert result.score == 1.0
    assert all(p in user for p in passages)


def test_i26_3_a_megabyte_of_passages_is_judged() -> None:
    big = "Refunds are accepted within 30 days. " * 28_000  # ~1 MB
    started = time.perf_counter()
    result, user, _ = _judged("context-precision", _verdicts(True), [big])
    assert time.perf_counter() - started < 30.0
    assert result.score == 1.0 and len(user) > 1_000_000


def test_i26_3_context_recall_passes_when_every_statement_is_in_the_passages() -> None:
    reply = {"statements": [{"statement": "Refunds: 30 days.", "attributed": True, "reason": "1"}]}
    result, _, _ = _judged("context-recall", reply, [POLICY])
    assert (result.score, result.verdict, result.hits) == (
        1.0,
        "pass",
        ["1 of 1 statements in the passages"],
    )


GOOD_RELEVANCY = {"score": 0.9, "reasoning": "answers", "off_topic": [], "unanswered": []}
RECALLED = {"statements": [{"statement": "返金は30日です。", "attributed": True, "reason": "ok"}]}


@pytest.mark.parametrize(
    ("kind", "reply"), [("answer-relevancy", GOOD_RELEVANCY), ("context-recall", RECALLED)]
)
def test_i26_3_unicode_and_megabyte_texts_reach_the_judge(kind: str, reply: dict[str, Any]) -> None:
    unicode_output = "返金は30日以内です。Rückerstattung ✓"
    result, user, _ = _judged(
        kind, reply, ["返金は30日以内です。"], output=unicode_output, expected="返金は30日です。"
    )
    assert result.score is not None and result.score >= 0.9
    assert ("返金は30日" in user) and (
        unicode_output in user if kind == "answer-relevancy" else True
    )
    big = "Refunds are accepted within 30 days. " * 28_000
    started = time.perf_counter()
    result, user, _ = _judged(kind, reply, [big], output=big)
    assert time.perf_counter() - started < 30.0
    assert result.score is not None and len(user) > 1_000_000
