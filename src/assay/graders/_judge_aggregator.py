"""A composite's judged aggregator: the judge reads the members' results and gives the
composite's score (AgentV's llm-grader aggregator).

The prompt (inline text, or `file://path`, as AgentV reads it) shows the members' results
where it writes `{{EVALUATOR_RESULTS_JSON}}` (AgentV's placeholder; `{{ results }}` too), as
a JSON object of
member name → `{score, verdict, assertions, reasoning, type, weight}`. The judge answers like
an llm-grader's (`{score, reasoning, hits, misses}`); a judge that cannot is the composite's
error.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from assay._strict_model import StrictModel
from assay.errors import GraderError
from assay.graders._base import GradingContext, Measurement
from assay.graders._code_aggregator import member_result
from assay.judge import JudgeSpec, NoJudgeError, RenderedPrompt, new_nonce
from assay.results import GraderResult

__all__ = ["JudgeAggregator"]

FILE_SCHEME = "file://"

_RESULTS = re.compile(r"\{\{\s*(?:EVALUATOR_RESULTS_JSON|results)\s*\}\}")
DEFAULT_PROMPT = """\
Several graders checked one answer. Their results, by grader name:

{{EVALUATOR_RESULTS_JSON}}

Weigh them into one overall score from 0 (the answer fails) to 1 (it fully succeeds), and say
why in a sentence or two; list what the answer does well as hits and what it lacks as misses.
"""
"""The prompt of an aggregator without one of its own."""


class JudgeAggregator(StrictModel):
    """`aggregator: {type: llm-grader, prompt}`: the judge folds the members."""

    type: Literal["llm-grader"]
    prompt: Annotated[str, Field(min_length=1)] | None = None
    """The judge's request: inline text, or `file://path` (relative to the suite);
    `{{EVALUATOR_RESULTS_JSON}}` shows the results. Default: a prompt asking for an overall
    score."""
    judge: JudgeSpec | None = None
    """This aggregator's judge settings, merged over the suite's and the project's."""

    def text(self, ctx: GradingContext) -> tuple[str, str]:
        """The prompt text and its origin (`inline`, `file:name`, `default`).

        Raises:
            GraderError: A prompt file is missing.
        """
        if self.prompt is None:
            return DEFAULT_PROMPT, "default"
        if not self.prompt.startswith(FILE_SCHEME):
            return self.prompt, "inline"
        name = self.prompt.removeprefix(FILE_SCHEME)
        path = Path(name)
        if ctx.base_dir is not None and not path.is_absolute():
            path = ctx.base_dir / path
        try:
            return path.read_text(encoding="utf-8"), f"file:{path.name}"
        except (OSError, UnicodeDecodeError) as exc:
            raise GraderError(f"aggregator prompt file '{name}' cannot be read: {exc}") from None

    async def fold(self, members: Sequence[GraderResult], ctx: GradingContext) -> Measurement:
        """The composite's measurement from the judge's reply.

        Raises:
            GraderError: No judge, a missing prompt file, or no valid reply.
        """
        from assay.graders.llm import LlmGraderReply  # the llm-grader's reply, by design

        if ctx.judges is None:
            raise GraderError("a judged aggregator needs an LLM judge and the run has none")
        try:
            client = ctx.judges.client(self.judge)
        except NoJudgeError as exc:
            raise GraderError(str(exc)) from None
        template, origin = self.text(ctx)
        shown = json.dumps(
            {m.name: member_result(m) for m in members}, ensure_ascii=False, indent=2
        )
        user = _RESULTS.sub(lambda _: shown, template)
        version = hashlib.sha256(template.encode()).hexdigest()[:12]
        prompt = RenderedPrompt(
            template=f"composite-aggregator+{origin}",
            version=version,
            user=user,
            nonce=new_nonce([user]),
        )
        judgement = await client.ask(
            prompt, LlmGraderReply, repeat_index=ctx.repeat_index, metadata=ctx.metadata
        )
        reply = judgement.answer
        return Measurement(
            score=reply.score, hits=reply.hits, misses=reply.misses, reasoning=reply.reasoning
        ).charged(judgement)
