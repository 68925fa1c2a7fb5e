"""The base of LLM-judged graders: judge settings, the prompt template, and the verdict's cost.

A judged grader renders its template with the test's fields (untrusted ones as delimited data
blocks), asks its judge through the run's `JudgePool` for a reply model, and turns the reply
into a `Measurement` carrying the judge model, the prompt version, tokens and cost.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import ClassVar, TypeVar

from pydantic import BaseModel, field_validator

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, TestFacts
from assay.judge import (
    JudgeClient,
    Judgement,
    JudgeSpec,
    NoJudgeError,
    PromptTemplate,
    RenderedPrompt,
    builtin,
    load_override,
)
from assay.results import JSON

__all__ = ["JudgedGrader", "test_values"]

M = TypeVar("M", bound=BaseModel)


def test_values(ctx: GradingContext) -> dict[str, JSON]:
    """The SPEC §2 template variables of a case, and the passages its target retrieved."""
    return {
        "input": ctx.input,
        "output": ctx.output,
        "expected_output": ctx.expected_output,
        "context": list(ctx.context),
        "retrieved_context": [p.text for p in ctx.retrieved if p.text],
        "metadata": dict(ctx.metadata),
    }


class JudgedGrader(Grader):
    """A grader that asks an LLM judge. Subclasses set `template` and call `ask`."""

    judge: JudgeSpec | None = None
    """This grader's judge settings, over the suite's and the project's (the run's
    `--judge-model` / `ASSAY_JUDGE_MODEL` still win)."""
    prompt: str | None = None
    """A custom prompt template replacing the packaged one: inline Jinja2 text, or the path of
    a file relative to the suite."""

    template: ClassVar[str]
    """The packaged template's name (`assay/judge/templates/<name>.j2`)."""
    template_variables: ClassVar[frozenset[str]] = frozenset()
    """Variables this grader passes besides the SPEC §2 test fields."""

    @field_validator("prompt")
    @classmethod
    def _inline_template_parses(cls, prompt: str | None) -> str | None:
        if prompt is not None and "\n" in prompt.strip():
            # creating the template parses it and checks its variable names
            builtin(cls.template, cls.template_variables).with_override(prompt, "inline")
        return prompt

    @property
    def awaits_io(self) -> bool:
        """Judge calls wait on the network."""
        return True

    @property
    def requires_judge(self) -> bool:
        """Whether a run without any judge is a configuration error (graders with a
        deterministic fallback say no, unless told to use the judge only)."""
        return True

    @property
    def uses_judge(self) -> bool:
        """Judged graders are asked again when a borderline case is re-judged."""
        return True

    @property
    def wants_default_judge(self) -> bool:
        """A grader that needs a judge and does not name its own model uses the run's."""
        return self.requires_judge and (self.judge is None or self.judge.model is None)

    def problem_with_test(self, test: TestFacts) -> str | None:
        """A prompt file that is missing or is not a valid template, as a located error."""
        if self.prompt is None:
            return None
        try:
            _prompt_template(type(self), self.prompt, test.suite_dir)
        except ValueError as exc:
            return str(exc)
        return None

    @classmethod
    def warm_up(cls) -> None:
        """Compile the packaged judge prompt template (Jinja2 takes ~25 ms to import)."""
        cls.packaged_template().compile()

    @classmethod
    def packaged_template(cls) -> PromptTemplate:
        """The grader's packaged template."""
        return _packaged(cls.template, cls.template_variables)

    @classmethod
    def template_for(cls, prompt: str | None, base_dir: Path | None) -> PromptTemplate:
        """The template for a `prompt:` option (None: the packaged one), a prompt file
        resolved against `base_dir`.

        Raises:
            ValueError: The prompt names a file that does not exist.
        """
        if prompt is None:
            return cls.packaged_template()
        text, origin = load_override(prompt, base_dir)
        return cls.packaged_template().with_override(text, origin)

    def client(self, ctx: GradingContext) -> JudgeClient:
        """This grader's judge.

        Raises:
            GraderError: The run has no judge for it.
        """
        if ctx.judges is None:
            raise GraderError(
                "this grader needs an LLM judge and the run has none: set `judge: {model: ...}` "
                "in the suite or assay.yaml, pass --judge-model, or export ASSAY_JUDGE_MODEL"
            )
        try:
            return ctx.judges.client(self.judge)
        except NoJudgeError as exc:
            raise GraderError(str(exc)) from None

    def has_judge(self, ctx: GradingContext) -> bool:
        """Whether any judge is configured for this grader."""
        return ctx.judges is not None and ctx.judges.resolve(self.judge) is not None

    def render(self, ctx: GradingContext, values: Mapping[str, JSON]) -> RenderedPrompt:
        """The prompt with the test's fields and `values` (a prompt file is read once)."""
        try:
            template = _prompt_template(type(self), self.prompt, ctx.base_dir)
            return template.render({**test_values(ctx), **values})
        except ValueError as exc:
            raise GraderError(f"judge prompt: {exc}") from None

    async def ask(
        self,
        ctx: GradingContext,
        answer: builtins.type[M],
        values: Mapping[str, JSON] | None = None,
        *,
        schema: dict[str, JSON] | None = None,
        check: Callable[[M], str | None] | None = None,
    ) -> Judgement[M]:
        """Render the prompt and ask this grader's judge for an `answer` (constrained by
        `schema`, this call's pinned reply schema, when given)."""
        client = self.client(ctx)
        prompt = self.render(ctx, values or {})
        return await client.ask(
            prompt,
            answer,
            schema=schema,
            check=check,
            repeat_index=ctx.repeat_index,
            rejudge_round=ctx.rejudge_round,
            metadata=ctx.metadata,
        )


@functools.cache
def _packaged(name: str, variables: frozenset[str]) -> PromptTemplate:
    return builtin(name, variables)


@functools.lru_cache(maxsize=256)
def _prompt_template(
    kind: type[JudgedGrader], prompt: str | None, base_dir: Path | None
) -> PromptTemplate:
    """The template of a grader type and `prompt:` option, built once per process: every test
    has its own grader objects, so a cache on the grader was empty for every case, and each
    judge call re-read the prompt option's file (or checked that it is none) and rebuilt it."""
    return kind.template_for(prompt, base_dir)
