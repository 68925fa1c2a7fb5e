"""tone with a judge (SPEC §5.5) through the real SDK against the local scripted judge: each
dimension scored by the judge, the heuristic fallback, and `mode`."""

from __future__ import annotations

from typing import Any

import pytest
from tests.graders._grading import SPEC, error_of
from tests.graders._grading import grade as grade_without_judge
from tests.graders._judging import grade_judged

from assay.results import Detail, GraderResult
from assay.testing import FakeOpenAIServer

PROFILE = {"formality": "formal", "sentiment": "positive", "persona": {"required": ["Acme"]}}
REPLY = "Dear customer, your refund is approved. Acme Support"
VERDICTS: list[dict[str, Any]] = [
    {
        "dimension": "formality",
        "score": 0.875,
        "observed": "formal",
        "reasoning": "Opens with 'Dear customer'.",
    },
    {
        "dimension": "sentiment",
        "score": 0.5,
        "observed": "neutral",
        "reasoning": "Factual, no warm words.",
    },
    {
        "dimension": "persona_consistency",
        "score": 1.0,
        "observed": "in persona",
        "reasoning": "Signs as Acme Support.",
    },
]


def grade(server: FakeOpenAIServer | None, **options: Any) -> GraderResult:
    spec = {"type": "tone", "profile": PROFILE, "weights": {"sentiment": 2}, **options}
    return grade_judged(spec, REPLY, server)


def heuristic() -> GraderResult:
    spec = {"type": "tone", "profile": PROFILE, "weights": {"sentiment": 2}, "mode": "heuristic"}
    return grade_without_judge(spec, REPLY)


def test_the_judge_scores_each_dimension_into_the_weighted_average() -> None:
    with FakeOpenAIServer(judge={"dimensions": VERDICTS}) as server:
        result = grade(server)
        asked, body = server.request_count, server.requests[-1]
    # (0.875·1 + 0.5·2 + 1.0·1) / 4
    assert (result.score, result.verdict, result.error) == (0.71875, "fail", None)
    assert result.reasoning == (
        "judged tone: formality 0.88, sentiment 0.50 ×2, persona_consistency 1.00 → 0.72"
    )
    assert result.details == [
        Detail(
            check="tone.formality",
            passed=True,
            expected="formal",
            actual="formal",
            message="Opens with 'Dear customer'.",
        ),
        Detail(
            check="tone.sentiment",
            passed=False,
            expected="positive",
            actual="neutral",
            message="Factual, no warm words.",
        ),
        Detail(
            check="tone.persona_consistency",
            passed=True,
            expected="required: Acme",
            actual="in persona",
            message="Signs as Acme Support.",
        ),
    ]
    assert result.hits == [
        "formality is formal (Opens with 'Dear customer'.)",
        "persona: Signs as Acme Support.",
    ]
    assert result.misses == ["sentiment is neutral, expected positive (Factual, no warm words.)"]
    assert asked == 1
    assert result.judge_model == "judge-model"
    assert result.judge_prompt is not None and result.judge_prompt.startswith("tone@")
    assert result.token_usage is not None and result.token_usage.input > 0
    user = body["messages"][1]["content"]
    assert "<<<OUTPUT " in user and REPLY in user
    assert "- `formality` (register: formal, neutral or casual): the target is formal" in user
    assert "- `persona_consistency` (staying in the persona" in user
    assert 'the target is required: "Acme"' in user
    assert "`assertiveness`" not in user  # only the profile's dimensions are asked


def test_a_dimension_detail_passes_at_the_graders_bar() -> None:
    with FakeOpenAIServer(judge={"dimensions": VERDICTS}) as server:
        result = grade(server, min_score=0.5)
    assert [d.passed for d in result.details] == [True, True, True]
    assert result.verdict == "pass"


def test_a_missing_dimension_is_re_asked() -> None:
    answers = iter([{"dimensions": VERDICTS[:1]}, {"dimensions": VERDICTS}])
    with FakeOpenAIServer(judge=lambda body, schema: next(answers)) as server:
        result = grade(server)
        asked, retry = server.request_count, server.requests[-1]["messages"][-1]["content"]
    assert (result.score, asked) == (0.71875, 2)
    assert "no entry for sentiment, persona_consistency" in retry


def test_a_dimension_answered_twice_is_re_asked_then_the_judge_fails() -> None:
    twice = {"dimensions": [*VERDICTS, VERDICTS[0]]}
    with FakeOpenAIServer(judge=twice) as server:
        result = grade(server, mode="judge")
        asked = server.request_count
    assert (result.score, result.verdict, asked) == (None, "error", 3)
    assert result.error is not None and result.error.type == "JudgeError"
    assert "formality answered more than once" in result.error.message


# --- fallback to the heuristics ---------------------------------------------------------------


def test_without_a_judge_auto_uses_the_heuristics() -> None:
    expected = heuristic()
    result = grade(None)
    assert (result.score, result.error) == (expected.score, None)
    assert (
        result.reasoning
        == expected.reasoning
        == ("heuristic tone: formality 1.00, sentiment 0.33 ×2, persona_consistency 1.00 → 0.67")
    )
    assert result.details == expected.details
    assert (result.judge_model, result.token_usage) == (None, None)


def test_a_failing_judge_falls_back_to_the_heuristics_and_says_why() -> None:
    with FakeOpenAIServer(judge={"dimensions": VERDICTS}, faults={"500": 1.0}) as server:
        result = grade(server)
        asked = server.request_count
    expected = heuristic()
    assert (result.score, result.error) == (expected.score, None)
    head, _, why = result.reasoning.partition("; fell back to the heuristics: judge failed: ")
    assert head == expected.reasoning
    assert "HTTP 500" in why
    assert result.details == expected.details
    assert asked == 4  # the first request and 3 retries
    assert result.judge_model == "judge-model"  # the failed call is still a judge call


def test_mode_heuristic_never_asks_the_judge() -> None:
    with FakeOpenAIServer(judge={"dimensions": VERDICTS}) as server:
        result = grade(server, mode="heuristic")
        asked = server.request_count
    assert asked == 0
    assert (result.score, result.reasoning) == (heuristic().score, heuristic().reasoning)
    assert result.judge_model is None


def test_mode_judge_without_a_judge_is_an_error_not_a_fallback() -> None:
    result = grade(None, mode="judge")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None and result.error.type == "GraderError"
    assert "needs an LLM judge and the run has none" in result.error.message


def test_mode_judge_with_a_failing_judge_is_an_error_not_a_fallback() -> None:
    with FakeOpenAIServer(judge={"dimensions": VERDICTS}, faults={"500": 1.0}) as server:
        result = grade(server, mode="judge")
    assert (result.score, result.verdict) == (None, "error")
    assert result.error is not None and "HTTP 500" in result.error.message
    assert result.judge_model == "judge-model"


def test_mode_judge_uses_the_judge() -> None:
    with FakeOpenAIServer(judge={"dimensions": VERDICTS}) as server:
        result = grade(server, mode="judge")
    assert (result.score, result.reasoning[:12]) == (0.71875, "judged tone:")


# --- configuration ------------------------------------------------------------------------------


def test_mode_is_validated() -> None:
    assert error_of({"type": "tone", "profile": PROFILE, "mode": "llm"}) == (
        "Input should be 'auto', 'judge' or 'heuristic'"
    )


@pytest.mark.parametrize(
    ("mode", "flags"),
    [("auto", (True, True)), ("judge", (True, True)), ("heuristic", (False, False))],
)
def test_only_modes_that_may_ask_the_judge_wait_on_it(mode: str, flags: tuple[bool, bool]) -> None:
    grader = SPEC.validate_python({"type": "tone", "profile": PROFILE, "mode": mode})
    assert (grader.awaits_io, grader.uses_judge) == flags
