"""The system under test of this example: a tiny support bot."""

from __future__ import annotations

from typing import Any

REPLIES = {
    "refund": "Refunds are accepted within 30 days of purchase.",
    "hours": "We are open Monday to Friday, 9am to 5pm.",
}


def reply(question: str) -> str:
    """Answer a question from the canned replies."""
    lowered = question.lower()
    return next((text for topic, text in REPLIES.items() if topic in lowered), "Sorry?")


def answer(case: dict[str, Any]) -> str:
    """The `python` target's entry point: assay passes the case mapping."""
    return reply(str(case["input"]))
