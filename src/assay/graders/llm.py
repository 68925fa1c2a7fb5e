"""`llm-grader` (SPEC §5.1): a free-form criterion judged by the LLM judge.

`prompt` is the criterion, inline or in a file. A criterion that itself shows the output
(`{{ output }}`) is the whole request; otherwise it is placed in the packaged template, which
shows the input, output, reference answer and context.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, ClassVar, Literal, Self

from pydantic import BaseModel, Field, model_validator

from assay._references import split_command
from assay.errors import GraderError
from assay.graders._base import GradingContext, Measurement
from assay.graders._judged import JudgedGrader, test_values
from assay.graders.code import CodeGrader, context_mapping
from assay.judge import TEST_FIELDS, PromptTemplate, RenderedPrompt, load_override
from assay.results import JSON

__all__ = ["LlmGrader", "LlmGraderReply"]

_CRITERION = "{{ criterion }}"


@functools.cache
def _scripted() -> PromptTemplate:
    """A `prompt_command`'s text, sent as the whole request, as written (built on first use:
    a template's check imports Jinja2, which runs without judges never need)."""
    return PromptTemplate("llm-grader+command", _CRITERION, TEST_FIELDS | {"criterion"})


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
    prompt: Annotated[str, Field(min_length=1)] | None = None
    """The criterion: inline text (Jinja2 with the test fields) or a file path relative to the
    suite. If it shows `{{ output }}` itself, it is the whole request to the judge."""
    prompt_command: list[str] | str | None = None
    """Instead of `prompt`: a program that prints the whole request at grading time (AgentV's
    script prompt). It reads the grading context as JSON on stdin (a code-grader's, with
    `answer` the output and `config` = `prompt_config`) and runs in its script's directory
    (the last argument's); an empty reply or a failure is the grader's error."""
    prompt_config: dict[str, JSON] | None = None
    """Settings handed to `prompt_command` as `config`."""

    @model_validator(mode="after")
    def _one_prompt(self) -> Self:
        if (self.prompt is None) == (self.prompt_command is None):
            raise ValueError("give exactly one of `prompt` or `prompt_command`")
        if self.prompt_config is not None and self.prompt_command is None:
            raise ValueError("`prompt_config` goes with `prompt_command`")
        if self.prompt_command is not None:
            self._prompt_runner(None)  # a program not found is a load error, as a code-grader's
        return self

    def _prompt_runner(self, base_dir: Path | None) -> CodeGrader:
        """The command as a code-grader's; with the suite's directory known, its script (the
        last argument) as an absolute path and the script's directory as the working one."""
        assert self.prompt_command is not None
        argv = split_command(self.prompt_command)
        if base_dir is None or len(argv) < 2:
            return CodeGrader(type="code-grader", command=argv, protocol="agentv")
        script = base_dir / argv[-1]
        return CodeGrader(
            type="code-grader",
            command=[*argv[:-1], str(script)],
            cwd=str(script.parent),
            protocol="agentv",
        )

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

    def render(self, ctx: GradingContext, values: Mapping[str, JSON]) -> RenderedPrompt:
        """The prompt; a `prompt_command`'s reply (in `values`) is the whole request."""
        if self.prompt_command is None:
            return super().render(ctx, values)
        return _scripted().render({**test_values(ctx), **values})

    async def _scripted_prompt(self, ctx: GradingContext) -> str:
        """Run `prompt_command` on the grading context and return what it printed."""
        runner = self._prompt_runner(ctx.base_dir)
        payload = context_mapping(ctx)
        payload.update(answer=ctx.output, config=self.prompt_config)
        source = f"prompt command '{' '.join(runner.argv)[:60]}'"
        stdout = await runner.run_payload(payload, ctx, source)
        text = stdout.decode("utf-8", errors="replace").strip()
        if not text:
            raise GraderError(f"{source} printed no prompt")
        return text

    async def measure(self, ctx: GradingContext) -> Measurement:
        values: dict[str, JSON] = {}
        if self.prompt_command is not None:
            values["criterion"] = await self._scripted_prompt(ctx)
        judgement = await self.ask(ctx, LlmGraderReply, values)
        reply = judgement.answer
        return Measurement(
            score=reply.score, hits=reply.hits, misses=reply.misses, reasoning=reply.reasoning
        ).charged(judgement)
