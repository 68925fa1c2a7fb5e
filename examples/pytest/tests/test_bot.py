"""Ordinary pytest tests that grade the bot's replies in code with the `assay_grade` fixture."""

from __future__ import annotations

from typing import Any

from bot import reply

from assay.graders import Contains, Regex


def concise(context: dict[str, Any]) -> float:
    """An inline grader: full marks up to 12 words, less the longer the reply."""
    words = len(context["output"].split())
    return min(1.0, 12 / words)


def test_refund_reply_passes(assay_grade: Any) -> None:
    result = assay_grade(
        reply("Can I get a refund?"),
        graders=[Contains(value="30 days"), concise],
        input="Can I get a refund?",
    )
    assert result.verdict == "pass", result.grader_results


def test_unknown_question_is_caught(assay_grade: Any) -> None:
    result = assay_grade(reply("Do you ship to Mars?"), graders=[Regex(value=r"\d")])
    assert result.verdict == "fail"
    assert result.grader_results[0].misses
