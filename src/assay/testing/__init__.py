"""Public fakes for testing LLM applications with assay, and assay itself: a real local server
speaking the OpenAI (and Anthropic) protocol, so tests run the real SDK code path.

The names are imported on first use: eagerly importing `openai_server` here would make
`python -m assay.testing.openai_server` run a second copy of an already-imported module
(runpy warns about exactly that), and it keeps aiohttp out of a plain `import assay.testing`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assay.testing.openai_server import (
        FakeOpenAIServer,
        FaultScript,
        JudgeScript,
        ModerationScript,
        Reply,
        ReplyScript,
        SeenRequest,
        fail_first,
        last_user_text,
        tool_outputs,
    )

__all__ = [
    "FakeOpenAIServer",
    "FaultScript",
    "JudgeScript",
    "ModerationScript",
    "Reply",
    "ReplyScript",
    "SeenRequest",
    "fail_first",
    "last_user_text",
    "tool_outputs",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        return getattr(importlib.import_module("assay.testing.openai_server"), name)
    raise AttributeError(f"module 'assay.testing' has no attribute {name!r}")
