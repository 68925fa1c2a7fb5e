"""Public fakes for testing code that uses assay, and assay itself (CONVENTIONS: tests fake LLMs
at a real HTTP seam so the real SDK code path runs)."""

from __future__ import annotations

from assay.testing.openai_server import (
    FakeOpenAIServer,
    FaultScript,
    Reply,
    ReplyScript,
    fail_first,
    last_user_text,
    tool_outputs,
)

__all__ = [
    "FakeOpenAIServer",
    "FaultScript",
    "Reply",
    "ReplyScript",
    "fail_first",
    "last_user_text",
    "tool_outputs",
]
