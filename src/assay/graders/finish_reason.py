"""finish-reason: why the model stopped, as the target recorded it.

A reply cut off by the token limit (`length`), stopped by a content filter (`content_filter`)
or handing over to tools (`tool_calls`) can read like a finished answer; this grader checks the
reason itself. Model targets record it in OpenAI's words whichever the wire (Anthropic's
`end_turn` / `stop_sequence` are `stop`, `max_tokens` is `length`, `tool_use` is `tool_calls`);
`command`, `python` and `http` targets may report `finish_reason` in their structured output.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement
from assay.graders._details import detail

__all__ = ["FinishReason"]


class FinishReason(Grader):
    """The recorded finish reason equals `value`, ignoring case (score 1 or 0); a target that
    recorded none is an error, never a pass."""

    type: Literal["finish-reason"]
    value: Annotated[str, Field(min_length=1)]
    """The expected reason: `stop`, `length`, `tool_calls`, `content_filter`, or another word
    the target reports."""

    async def measure(self, ctx: GradingContext) -> Measurement:
        reason = ctx.target_output.finish_reason if ctx.target_output else None
        if reason is None:
            raise GraderError(
                "finish-reason: the target recorded no finish reason (model targets record "
                "the reply's; a command, python or http target reports `finish_reason` in its "
                "structured output)"
            )
        passed = reason.casefold() == self.value.casefold()
        sentence = f"finish reason '{reason}'" + ("" if passed else f", expected '{self.value}'")
        return Measurement(
            score=float(passed),
            hits=[sentence] if passed else [],
            misses=[] if passed else [sentence],
            details=[
                detail(
                    "finish-reason", passed, expected=self.value, actual=reason, message=sentence
                )
            ],
        )
