"""The passages the RAG graders read: what the target retrieved, else the test's static
`context`; shared so `faithfulness` and the judged context checks agree on it."""

from __future__ import annotations

from assay.errors import GraderError
from assay.graders._base import GradingContext

__all__ = ["passages_of"]


def passages_of(ctx: GradingContext, grader: str) -> tuple[list[str], str]:
    """The passage texts a grader checks, and what they are for its `reasoning`: the retrieved
    ones (runtime context), else the test's static `context` (a suite listing its passages by
    hand, a replayed run without them).

    Raises:
        GraderError: The target retrieved no passage with text and the test has no static
            context: the grader cannot say anything, which is an error rather than a 0.
    """
    retrieved = [p.text for p in ctx.retrieved if p.text.strip()]
    if retrieved:
        return retrieved, f"{len(retrieved)} retrieved passage{'s' if len(retrieved) > 1 else ''}"
    if ctx.context:
        return list(ctx.context), "the test's static context (the target retrieved no passage)"
    raise GraderError(
        f"{grader} reads the passages the target retrieved, and there are none: return "
        "`context` from the target (a list of strings or {id, text, score}) or give the test "
        "a static `context`"
    )
