"""`llm-grader` (SPEC §5.1): a free-form criterion judged by the LLM judge.

`prompt` is the criterion, inline or in a file. A criterion that itself shows the output
(`{{ output }}`) is the whole request; otherwise it is placed in the packaged template, which
shows the input, output, reference answer and context.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field

from assay.graders._base import GradingContext, Measurement
from assay.graders._judged import JudgedGrader
from assay.judge import TEST_FIELDS, PromptTemplate, load_override

__all__ = ["LlmGrader", "LlmGraderReply"]

_CRITERION = "{{ criterion }}"


class LlmGraderReply(BaseModel):
    """What the judge answers for a criterion."""

    score: float = Field(ge=0.0, le=1.0)
    """0 (not met) to 1 (fully met)."""
    reasoning: str
    """Why this score, in a sentence or two."""
    hits: list[str]
    """What the output does that the criterion asks for."""
    misses: list[str]
    """What the output fails to do."""


class LlmGrader(JudgedGrader):
    """Judges the output against a free-form criterion; score 0–1 from the judge."""

    type: Literal["llm-grader"]
    prompt: Annotated[str, Field(min_length=1)]
    """The criterion: inline text (Jinja2 with the test fields) or a file path relative to the
    suite. If it shows `{{ output }}` itself, it is the whole request to the judge."""

    template: ClassVar[str] = "llm-grader"
    template_variables: ClassVar[frozenset[str]] = frozenset({"criterion"})

    @classmethod
    def template_for(cls, prompt: str | None, base_dir: Path | None) -> PromptTemplate:
        """The criterion inside the packaged template, or the whole request when the text
        shows `{{ output }}` itself.

        Raises:
            ValueError: The prompt names a file that does not exist.
        """
        if prompt is None:  # pragma: no cover — `prompt` is required for this grader
            return cls.packaged_template()
        text, origin = load_override(prompt, base_dir)
        name = f"llm-grader+{origin}"
        whole = PromptTemplate(name, text, TEST_FIELDS)
        if "output" in whole.used:
            return whole
        packaged = cls.packaged_template().source
        return PromptTemplate(name, packaged.replace(_CRITERION, text), TEST_FIELDS)

    async def measure(self, ctx: GradingContext) -> Measurement:
        judgement = await self.ask(ctx, LlmGraderReply)
        reply = judgement.answer
        return Measurement(
            score=reply.score, hits=reply.hits, misses=reply.misses, reasoning=reply.reasoning
        ).charged(judgement)
