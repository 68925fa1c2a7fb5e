"""The transform grader: grade what a command makes of the output (promptfoo's `transform`).

Some checks need the output reshaped first — a field picked out of JSON, text normalised, a
tool call's arguments extracted. `transform` runs a command on the grading context (the
code-grader contract: JSON on stdin) that prints `{"output": value}`, then grades that value
with its one member grader. A string value replaces the output; any other JSON value is
graded as its JSON text, and a nested code-grader also finds the value itself as
`metadata.transformed_output`. A failing command is a grader error, never a 0.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from assay._references import split_command
from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, TestFacts
from assay.graders._details import truncate
from assay.graders._registry import GraderSpec
from assay.graders.code import CodeGrader, context_mapping
from assay.graders.structured import _reject_constant

__all__ = ["Transform"]


class Transform(Grader):
    """Grades the output after a command transforms it, with one member grader."""

    type: Literal["transform"]
    command: list[str] | str
    """Program and arguments run without a shell (like a code-grader's `command`): it reads the
    grading context as JSON on stdin and prints `{"output": <the new output>}` on stdout."""
    assertion: GraderSpec
    """The grader that grades the transformed output; its verdict is this grader's verdict."""
    timeout_s: Annotated[float, Field(gt=0)] = 30.0
    """Stop waiting for the command after this many seconds (its process group is killed)."""
    memory_mb: Annotated[int, Field(gt=0)] | None = 512
    """Address-space limit of each of the command's processes, in MB (Linux); null for none —
    node needs none, as V8 reserves gigabytes of address space when it starts."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the command's inherited environment."""

    @model_validator(mode="after")
    def _valid_command(self) -> Self:
        """The command is checked like a code-grader's (split, program found) when it loads."""
        self._runner()
        return self

    def _runner(self) -> CodeGrader:
        return CodeGrader(
            type="code-grader",
            command=self.command,
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
            env=self.env,
        )

    @property
    def awaits_io(self) -> bool:
        """The command is a subprocess."""
        return True

    @property
    def uses_judge(self) -> bool:
        """A transform asks a judge when its member does."""
        return self.assertion.uses_judge

    def problem_with_test(self, test: TestFacts) -> str | None:
        """The member's requirements (an expected output, tool calls …) apply unchanged."""
        return self.assertion.problem_with_test(test)

    async def measure(self, ctx: GradingContext) -> Measurement:
        runner = self._runner()
        source = f"transform '{truncate(shlex.join(split_command(self.command)), 60)}'"
        cwd, argv = runner._place(ctx)
        env = {**os.environ, **runner.env}
        returncode, stdout, stderr = await runner._run(argv, context_mapping(ctx), source, cwd, env)
        if returncode != 0:
            raise GraderError(runner._exit_message(source, returncode, stderr))
        value = _transformed(stdout, source)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        inner_ctx = dataclasses.replace(
            ctx, output=text, metadata={**ctx.metadata, "transformed_output": value}
        )
        result = await self.assertion.grade(inner_ctx)
        if result.error is not None:
            raise GraderError(
                f"member '{result.name}' errored on the transformed output: {result.error.message}"
            )
        assert result.score is not None
        return Measurement(
            score=result.score,
            hits=list(result.hits),
            misses=list(result.misses),
            reasoning=f"after the transform ({truncate(text, 80)}): {result.reasoning}".rstrip(
                ": "
            ),
            details=list(result.details),
            token_usage=result.token_usage,
            cost_usd=result.cost_usd,
            judge_model=result.judge_model,
            children=[result],
            verdict=result.verdict if result.verdict in ("pass", "fail") else None,
        )


def _transformed(stdout: bytes, source: str) -> object:
    text = stdout.decode("utf-8", errors="replace").strip()
    try:
        reply = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise GraderError(
            f'{source} printed {truncate(text)!r}, not {{"output": ...}} ({exc})'
        ) from None
    if not isinstance(reply, dict) or "output" not in reply:
        raise GraderError(f'{source} printed {truncate(text)!r}; print {{"output": <value>}}')
    return reply["output"]
