"""The Grader base class: common options, timing, negation, errors and the grader verdict."""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, get_args

from pydantic import Field, model_validator

from assay._strict_model import Label, StrictModel
from assay.cache import CacheMiss
from assay.graders._details import cap_details, negated
from assay.judge import JudgeError, Judgement, JudgePool
from assay.results import (
    JSON,
    Detail,
    ErrorInfo,
    GraderResult,
    GraderResultFields,
    RetrievedPassage,
    TargetOutput,
    TokenUsage,
    ToolCall,
    Verdict,
)
from assay.scoring import grader_verdict

__all__ = ["Grader", "GradingContext", "Measurement", "TestFacts", "grade_all"]

_NEGATED: dict[Verdict, Verdict] = {"pass": "fail", "fail": "pass"}

_validated = GraderResult.__pydantic_validator__.validate_python
"""What `GraderResult(**fields)` runs, called without the keyword unpacking and the Python
frame of `__init__` (~0.7 of ~2.3 µs): a result is built for every grader of every case."""

Unit = Annotated[float, Field(ge=0.0, le=1.0)]


@dataclass(frozen=True)
class GradingContext:
    """Everything a grader may look at for one case."""

    case_id: str
    output: str
    threshold: float
    """The case's resolved threshold, the bar of graders without `min_score` (SPEC §1.2)."""
    input: JSON = None
    expected_output: JSON = None
    context: tuple[str, ...] = ()
    """The test's static `context` (grounding documents written in the suite)."""
    metadata: dict[str, JSON] = field(default_factory=dict)
    target_output: TargetOutput | None = None
    expected_tool_calls: tuple[JSON, ...] = ()
    expected_context_ids: tuple[str, ...] = ()
    """The ids of the passages a retriever should return for this test (`retrieval`)."""
    base_dir: Path | None = None
    """The suite's directory: relative paths in grader options resolve against it."""
    judges: JudgePool | None = None
    """The run's judges, for LLM-judged graders; None when the run has none."""
    repeat_index: int = 0
    """Which sample of a repeated case this is."""
    rejudge_round: int = 0
    """0, or 1..k for the re-asks of borderline re-judging (`execution.rejudge_borderline`)."""
    criteria: str | None = None
    """The test's `criteria`: what a good answer does, in words (code graders get it)."""
    workspace: Path | None = None
    """The case's workspace directory (`workspace:`), where code graders run; None without."""

    @property
    def tool_calls(self) -> list[ToolCall]:
        """Tool calls the system under test made."""
        return list(self.target_output.tool_calls) if self.target_output else []

    @property
    def retrieved(self) -> list[RetrievedPassage]:
        """The passages the system under test retrieved (its runtime `context`), in rank
        order; apart from the test's static `context`."""
        return list(self.target_output.context) if self.target_output else []


@dataclass(frozen=True)
class TestFacts:
    """What a grader may check about a test when the suite loads (`Grader.problem_with_test`)."""

    __test__ = False  # not a pytest test class, despite the name

    test_id: str
    expected_output: JSON = None
    context: tuple[str, ...] = ()
    has_expected_tool_calls: bool = False
    expected_context_ids: tuple[str, ...] = ()
    suite_dir: Path | None = None
    """Where the suite file is, for options naming files (a judge prompt file)."""


@dataclass
class Measurement:
    """What a grader measured, before the common options (negate, verdict) are applied."""

    score: float
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    reasoning: str = ""
    details: list[Detail] = field(default_factory=list)
    token_usage: TokenUsage | None = None
    cost_usd: float | None = None
    judge_model: str | None = None
    children: list[GraderResult] = field(default_factory=list)
    verdict: Verdict | None = None
    """Set by graders whose pass rule is not a score bar (the `threshold` aggregator)."""
    judge_prompt: str | None = None
    """The judge prompt template as `name@version`, for LLM-judged graders."""
    gate_failed: bool = False
    """A required part of the check failed (a `required` rubric item): the result is a
    failing `required` one, so the case score becomes 0 (SPEC §1.3), whatever the grader's own
    `required` option says."""
    fallback: str | None = None
    """The judge could not do the judged check and something else measured instead: what
    fell back and why (`GraderResult.fallback`)."""

    @property
    def judged(self) -> bool:
        """Whether a judge's model, prompt, tokens or cost are recorded."""
        return not (
            self.judge_model is None
            and self.judge_prompt is None
            and self.token_usage is None
            and self.cost_usd is None
        )

    def charged(self, spend: JudgeError | Judgement[Any]) -> Measurement:
        """This measurement with the judge's model, prompt version, tokens and cost, from a
        judgement or from a judge call that failed (failed calls are paid for too)."""
        self.judge_model = spend.model
        self.judge_prompt = spend.prompt
        self.token_usage = spend.token_usage
        self.cost_usd = spend.cost_usd
        return self


class Grader(StrictModel, ABC):
    """Base of every grader: a frozen config model that knows how to grade one output.

    Subclasses declare `type: Literal["name"]`, their options, and `measure`. `grade` wraps it:
    a raised exception becomes a result with `error` and no score — never a fail or a 0.
    """

    type: str
    name: Label | None = None
    """Name shown in reports and used by `safety_gate`; defaults to the type."""
    weight: Annotated[float, Field(ge=0.0)] = 1.0
    """Weight in the case score; 0 reports the grader without scoring it."""
    required: bool = False
    """If true and this grader fails, the case score becomes 0 (SPEC §1.2)."""
    min_score: Unit | None = None
    """This grader fails below this score; without it, below the case threshold."""
    negate: bool = False
    """Invert the check: score becomes 1 − score, hits and misses swap."""

    @model_validator(mode="before")
    @classmethod
    def _default_type(cls, data: Any) -> Any:
        """`Contains(value="x")` in Python needs no `type=`: a class has only one. Suites never
        reach this without a `type` (the discriminated union dispatches on it first)."""
        if isinstance(data, dict) and "type" not in data:
            names = get_args(cls.model_fields["type"].annotation)
            if len(names) == 1 and isinstance(names[0], str):
                return {"type": names[0], **data}
        return data

    def problem_with_test(self, test: TestFacts) -> str | None:
        """Why this grader cannot grade `test`, or None; called for every test when the suite
        loads, so a grader that needs an expected output (or context, or tool calls) the test
        lacks is a located config error instead of a run-time failure."""
        del test
        return None

    @classmethod
    def warm_up(cls) -> None:
        """Load what this grader type needs once per process (an NLP library and its lexicon,
        a parser), so that no case pays for it inside its timing.

        The runner calls it, off the event loop, for every grader type of the suite before
        the first case starts (docs/running.md). The default loads nothing.
        """

    @property
    def awaits_io(self) -> bool:
        """Whether grading waits on I/O (a subprocess, a judge call).

        Such graders of a case run concurrently; the rest run one after another, since a task
        per CPU-only check costs more than the check itself.
        """
        return False

    @property
    def uses_judge(self) -> bool:
        """Whether grading asks an LLM judge (re-asked when a borderline case is re-judged)."""
        return False

    @property
    def wants_default_judge(self) -> bool:
        """Whether grading relies on the run's judge (its model, or its provider for the
        embeddings and moderation calls) and this grader names none of its own: a suite using
        it without any judge configured is a configuration error when it loads."""
        return False

    @property
    def display_name(self) -> str:
        """The name reports show: `name`, or the type."""
        return self.name or self.type

    @abstractmethod
    async def measure(self, ctx: GradingContext) -> Measurement:
        """Measure the output; raise to report that it could not be graded."""

    async def grade(self, ctx: GradingContext) -> GraderResult:
        """Measure, apply negation and the grader verdict, and time it."""
        started = time.perf_counter()
        try:
            m = await self.measure(ctx)
        except CacheMiss:
            raise  # replay mode without the judgement: the run stops, it is not a grade
        except JudgeError as exc:
            return self._result(
                score=None,
                error=ErrorInfo(type="JudgeError", message=str(exc)),
                started=started,
                ctx=ctx,
                measurement=Measurement(score=0.0).charged(exc),
            )
        except Exception as exc:
            return self._result(
                score=None,
                error=ErrorInfo(type=type(exc).__name__, message=str(exc) or repr(exc)),
                started=started,
                ctx=ctx,
            )
        if not 0.0 <= m.score <= 1.0:
            return self._result(
                score=None,
                error=ErrorInfo(type="GraderError", message=f"score {m.score} is outside 0–1"),
                started=started,
                ctx=ctx,
            )
        if self.negate:
            m = Measurement(
                score=1.0 - m.score,
                hits=m.misses,
                misses=m.hits,
                reasoning=m.reasoning,
                details=[negated(d) for d in m.details],
                token_usage=m.token_usage,
                cost_usd=m.cost_usd,
                judge_model=m.judge_model,
                children=m.children,
                verdict=_NEGATED.get(m.verdict) if m.verdict else None,
                judge_prompt=m.judge_prompt,
                gate_failed=m.gate_failed,
                fallback=m.fallback,
            )
        return self._result(score=m.score, measurement=m, started=started, ctx=ctx)

    def _result(
        self,
        *,
        score: float | None,
        started: float,
        ctx: GradingContext,
        measurement: Measurement | None = None,
        error: ErrorInfo | None = None,
    ) -> GraderResult:
        m = measurement or Measurement(score=0.0)
        gated = m.gate_failed and score is not None
        if gated:
            verdict: Verdict = "fail"
        elif m.verdict is not None and score is not None:
            verdict = m.verdict
        else:
            verdict = grader_verdict(score, self.min_score, ctx.threshold)
        # Only what differs from the defaults is passed: a deterministic grader's result is
        # built for every grader of every case, and each field given costs its validation.
        fields: GraderResultFields = {
            "name": self.name or self.type,
            "type": self.type,
            "score": score,
            "verdict": verdict,
            "duration_ms": round((time.perf_counter() - started) * 1000.0, 3),
        }
        if self.weight != 1.0:
            fields["weight"] = self.weight
        if self.required or gated:
            fields["required"] = True
        if self.min_score is not None:
            fields["min_score"] = self.min_score
        if error is not None:
            fields["error"] = error
        if m.hits:
            fields["hits"] = m.hits
        if m.misses:
            fields["misses"] = m.misses
        if m.details:
            fields["details"] = cap_details(m.details)
        if m.reasoning or m.children or m.judged:
            _add_judged(fields, m)
        if m.fallback is not None:
            fields["fallback"] = m.fallback
        result: GraderResult = _validated(fields)
        return result


def _add_judged(fields: GraderResultFields, m: Measurement) -> None:
    """The fields judged and composite graders fill in, when they differ from the defaults."""
    if m.reasoning:
        fields["reasoning"] = m.reasoning
    if m.children:
        fields["children"] = m.children
    if m.token_usage is not None:
        fields["token_usage"] = m.token_usage
    if m.cost_usd is not None:
        fields["cost_usd"] = m.cost_usd
    if m.judge_model is not None:
        fields["judge_model"] = m.judge_model
    if m.judge_prompt is not None:
        fields["judge_prompt"] = m.judge_prompt


async def grade_all(graders: Sequence[Grader], ctx: GradingContext) -> list[GraderResult]:
    """Grade with every grader, in order; those that await I/O run concurrently."""
    waiting = [i for i, g in enumerate(graders) if g.awaits_io]
    if len(waiting) < 2:
        return [await g.grade(ctx) for g in graders]
    gathered = iter(await asyncio.gather(*(graders[i].grade(ctx) for i in waiting)))
    return [next(gathered) if g.awaits_io else await g.grade(ctx) for g in graders]
