"""Run-metric graders: latency, cost, token-usage and execution-metrics (SPEC §4).

They grade how the target ran, not what it said: every value comes from the `TargetOutput` the
target returned (`duration_ms`, `cost_usd`, `token_usage`, `tool_calls`, `messages`). A value
the target did not report is a grader error that says so — a missing cost is never a pass.

`latency`, `cost` and `token-usage` are budgets: score 1 within the limit (inclusive), 0 over
it. `execution-metrics` checks several limits at once and scores the fraction that hold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement
from assay.graders._details import detail
from assay.results import TargetOutput, TokenUsage

__all__ = ["Cost", "ExecutionMetrics", "Latency", "TokenUsageLimit", "count_llm_calls"]

Milliseconds = Annotated[float, Field(gt=0.0)]
Dollars = Annotated[float, Field(ge=0.0)]
_LIMITS = (
    "max_tool_calls",
    "min_tool_calls",
    "max_llm_calls",
    "max_tokens",
    "max_cost_usd",
    "max_duration_ms",
    "target_exploration_ratio",
)
"""The limit options of execution-metrics, in the order of its Details."""

Count = Annotated[int, Field(ge=0, strict=True)]
"""Strict: a count written as `1.5` or `"10"` is a mistake, not something to coerce."""


def _plain(value: float, digits: int) -> str:
    """`value` with at most `digits` decimals and no trailing zeros: 620, 0.4, 0.0123."""
    return f"{value:.{digits}f}".rstrip("0").rstrip(".")


def _ms(value: float) -> str:
    return f"{_plain(value, 1)} ms"


def _usd(value: float) -> str:
    return f"${_plain(value, 8)}"


def _count(value: float) -> str:
    return str(int(value))


def _ratio(value: float) -> str:
    return _plain(value, 2)


EXPLORATION_TOOLS = (
    *("read", "grep", "glob", "search", "list"),
    *("Read", "Grep", "Glob", "WebSearch", "WebFetch"),
)
"""Tool names that count as exploration by default: AgentV's list."""


def _run(ctx: GradingContext, grader: str) -> TargetOutput:
    if ctx.target_output is None:
        raise GraderError(f"{grader} grades the target's run metrics, and none were recorded")
    return ctx.target_output


def _cost(output: TargetOutput, grader: str) -> float:
    if output.cost_usd is None:
        raise GraderError(
            f"{grader}: the target reported no cost (`cost_usd`), so the cost limit cannot be "
            "checked; use a target that reports it (e.g. openai with cost_per_1k_input/output, "
            "or a python/command target returning `cost_usd`)"
        )
    return output.cost_usd


def _usage(output: TargetOutput, grader: str) -> TokenUsage:
    if output.token_usage is None:
        raise GraderError(
            f"{grader}: the target reported no token usage (`token_usage`), so the token limit "
            "cannot be checked; use a target that reports it"
        )
    return output.token_usage


def count_llm_calls(ctx: GradingContext, output: TargetOutput) -> int:
    """Model replies in the transcript: its assistant messages, not counting those of the input.

    `TargetOutput` has no call counter, so each assistant message stands for one model reply.
    Chat targets echo the input (a scripted history, earlier conversation turns) at the start
    of the transcript; its assistant messages were not produced by this call and are skipped.
    A target that returns no transcript but did answer (text or tool calls) made one call.
    """
    messages = output.messages
    start = 0
    while start < len(messages) and messages[start].role == "system":
        start += 1
    given = ctx.input if isinstance(ctx.input, list) else []
    if given and len(messages) - start >= len(given):
        echoed = all(
            isinstance(m, dict)
            and messages[start + k].role == m.get("role")
            and messages[start + k].content == m.get("content")
            for k, m in enumerate(given)
        )
        if echoed:
            start += len(given)
    replies = sum(m.role == "assistant" for m in messages[start:])
    if replies == 0 and (output.output or output.tool_calls):
        return 1
    return replies


@dataclass(frozen=True)
class _Check:
    """One limit compared with one measured value."""

    option: str
    limit: float
    actual: float
    what: str
    """What was measured, as the subject of a sentence: "response time", "tool calls"."""
    show: Callable[[float], str]
    at_least: bool = False

    @property
    def passed(self) -> bool:
        return self.actual >= self.limit if self.at_least else self.actual <= self.limit

    def sentence(self) -> str:
        """E.g. "response time: 620 ms, over the limit of 500 ms" or "tool calls: 2 (minimum 1)"."""
        actual, limit = self.show(self.actual), self.show(self.limit)
        if self.passed:
            return f"{self.what}: {actual} ({'minimum' if self.at_least else 'limit'} {limit})"
        side = "under the minimum" if self.at_least else "over the limit"
        return f"{self.what}: {actual}, {side} of {limit}"


def _measure(family: str, checks: list[_Check], *, fraction: bool) -> Measurement:
    """Score the checks: the fraction that hold, or 1 only when all of them do."""
    passed = sum(c.passed for c in checks)
    score = passed / len(checks) if fraction else float(passed == len(checks))
    return Measurement(
        score=score,
        hits=[c.sentence() for c in checks if c.passed],
        misses=[c.sentence() for c in checks if not c.passed],
        reasoning=f"{passed} of {len(checks)} limit{'s' if len(checks) > 1 else ''} met",
        details=[
            detail(
                f"{family}.{c.option}",
                c.passed,
                expected=f"{'≥' if c.at_least else '≤'} {c.show(c.limit)}",
                actual=c.show(c.actual),
                message=c.sentence(),
            )
            for c in checks
        ],
    )


class Latency(Grader):
    """The target answered within `max_ms` (score 1 or 0), from its reported `duration_ms`."""

    type: Literal["latency"]
    max_ms: Milliseconds
    """Longest acceptable response time in milliseconds (inclusive), greater than 0."""

    async def measure(self, ctx: GradingContext) -> Measurement:
        run = _run(ctx, self.type)
        check = _Check("max_ms", self.max_ms, run.duration_ms, "response time", _ms)
        return _measure("latency", [check], fraction=False)


class Cost(Grader):
    """The call cost at most `max_usd` (score 1 or 0); a target reporting no cost is an error."""

    type: Literal["cost"]
    max_usd: Dollars
    """Highest acceptable cost of the target call in US dollars (inclusive)."""

    async def measure(self, ctx: GradingContext) -> Measurement:
        cost = _cost(_run(ctx, self.type), self.type)
        return _measure(
            "cost", [_Check("max_usd", self.max_usd, cost, "cost", _usd)], fraction=False
        )


class TokenUsageLimit(Grader):
    """Token use within every configured limit (score 1 or 0); missing usage is an error."""

    type: Literal["token-usage"]
    max_total: Count | None = None
    """Most tokens in total (prompt + completion), inclusive."""
    max_prompt: Count | None = None
    """Most prompt (input) tokens, inclusive."""
    max_completion: Count | None = None
    """Most completion (output) tokens, inclusive."""

    @model_validator(mode="after")
    def _some_limit(self) -> Self:
        if self.max_total is None and self.max_prompt is None and self.max_completion is None:
            raise ValueError(
                "token-usage needs at least one limit: max_total, max_prompt or max_completion"
            )
        return self

    async def measure(self, ctx: GradingContext) -> Measurement:
        usage = _usage(_run(ctx, self.type), self.type)
        measured = (
            ("max_total", self.max_total, usage.total, "total tokens"),
            ("max_prompt", self.max_prompt, usage.input, "prompt tokens"),
            ("max_completion", self.max_completion, usage.output, "completion tokens"),
        )
        checks = [
            _Check(option, limit, actual, what, _count)
            for option, limit, actual, what in measured
            if limit is not None
        ]
        return _measure("token_usage", checks, fraction=False)


class ExecutionMetrics(Grader):
    """Several run limits at once; score = limits met / limits configured."""

    type: Literal["execution-metrics"]
    max_tool_calls: Count | None = None
    """Most tool calls the target may make (0 forbids tools)."""
    min_tool_calls: Count | None = None
    """Fewest tool calls the target must make."""
    max_llm_calls: Count | None = None
    """Most model replies: assistant messages of the transcript (1 if it has none but answered)."""
    max_tokens: Count | None = None
    """Most tokens in total (prompt + completion); the target must report token usage."""
    max_cost_usd: Dollars | None = None
    """Highest cost in US dollars; the target must report its cost."""
    max_duration_ms: Milliseconds | None = None
    """Longest response time in milliseconds."""
    target_exploration_ratio: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    """The share of tool calls that should explore (read, search, list: `exploration_tools`),
    met within `exploration_tolerance` (AgentV's option of the same name)."""
    exploration_tolerance: Annotated[float, Field(ge=0.0)] = 0.2
    """How far the exploration ratio may be from `target_exploration_ratio`."""
    exploration_tools: Annotated[list[str], Field(min_length=1)] = Field(
        default_factory=lambda: list(EXPLORATION_TOOLS)
    )
    """The tool names that count as exploration (compared exactly)."""

    @model_validator(mode="after")
    def _limits(self) -> Self:
        if all(getattr(self, name) is None for name in _LIMITS):
            raise ValueError(f"execution-metrics needs at least one limit: {', '.join(_LIMITS)}")
        if (
            self.min_tool_calls is not None
            and self.max_tool_calls is not None
            and self.min_tool_calls > self.max_tool_calls
        ):
            raise ValueError(
                f"min_tool_calls ({self.min_tool_calls}) is above max_tool_calls "
                f"({self.max_tool_calls}); no run can meet both"
            )
        return self

    async def measure(self, ctx: GradingContext) -> Measurement:
        run = _run(ctx, self.type)
        checks: list[_Check] = []
        if self.max_tool_calls is not None:
            checks.append(
                _Check(
                    "max_tool_calls", self.max_tool_calls, len(run.tool_calls), "tool calls", _count
                )
            )
        if self.min_tool_calls is not None:
            checks.append(
                _Check(
                    "min_tool_calls",
                    self.min_tool_calls,
                    len(run.tool_calls),
                    "tool calls",
                    _count,
                    at_least=True,
                )
            )
        if self.max_llm_calls is not None:
            calls = count_llm_calls(ctx, run)
            checks.append(_Check("max_llm_calls", self.max_llm_calls, calls, "model calls", _count))
        if self.max_tokens is not None:
            total = _usage(run, f"{self.type} max_tokens").total
            checks.append(_Check("max_tokens", self.max_tokens, total, "total tokens", _count))
        if self.max_cost_usd is not None:
            cost = _cost(run, f"{self.type} max_cost_usd")
            checks.append(_Check("max_cost_usd", self.max_cost_usd, cost, "cost", _usd))
        if self.max_duration_ms is not None:
            checks.append(
                _Check(
                    "max_duration_ms", self.max_duration_ms, run.duration_ms, "response time", _ms
                )
            )
        if self.target_exploration_ratio is not None:
            checks.append(self._exploration(run))
        return _measure("execution_metrics", checks, fraction=True)

    def _exploration(self, run: TargetOutput) -> _Check:
        """The exploration ratio's distance from its target, against the tolerance; a run
        without tool calls has no ratio and fails the check (as in AgentV)."""
        target = self.target_exploration_ratio
        assert target is not None  # called only when set
        calls = run.tool_calls
        tools = set(self.exploration_tools)
        if not calls:
            what = "exploration ratio (no tool calls), distance from the target"
            return _Check("target_exploration_ratio", self.exploration_tolerance, 1.0, what, _ratio)
        ratio = sum(c.tool in tools for c in calls) / len(calls)
        what = f"exploration ratio {_ratio(ratio)} (target {_ratio(target)}), distance"
        return _Check(
            "target_exploration_ratio",
            self.exploration_tolerance,
            abs(ratio - target),
            what,
            _ratio,
        )
