"""`agent-judge` (SPEC §5.3): the judge grades a whole agent interaction on weighted metrics.

One structured call grades every metric 0–5 (binary ones pass/fail, mapped to 5/0). The score
is Σ weight·grade/5 with the weights renormalised to sum to 1, reported as `overall_score`
on 0–100. When the test expects tool calls, the deterministic `tool-trajectory` result (mode
`in_order`) is shown to the judge as evidence, so its tool-use grades rest on a checked fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Annotated, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay._strict_model import StrictModel, suggest
from assay.graders._base import GradingContext, Measurement
from assay.graders._details import cap_details, detail, truncate
from assay.graders._judged import JudgedGrader
from assay.graders.trajectory import ToolTrajectory
from assay.judge import Entry, keyed_schema, neutralise
from assay.results import JSON

__all__ = [
    "DEFAULT_METRICS",
    "LABELS",
    "NEW_METRIC_WEIGHT",
    "AgentJudge",
    "AgentJudgeReply",
    "AgentMetric",
    "GradedMetric",
    "MetricGrade",
    "MetricSpec",
    "PassFailMetric",
]

LABELS = ("critical_fail", "fail", "poor", "acceptable", "good", "excellent")
"""The name of each grade 0–5 (descriptive only: no metric has its own pass bar)."""
ACCEPTABLE = 3
"""A metric's Detail passes at this grade or above."""
NEW_METRIC_WEIGHT = 0.125
"""The weight of an added metric that gives none: the mean of the 8 default weights."""
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_EVIDENCE_MESSAGE = 160
"""Longest explanation of one call in the trajectory evidence."""


@dataclass(frozen=True, slots=True)
class AgentMetric:
    """One metric the judge grades, with its share of the score."""

    name: str
    weight: float
    """Renormalised: the weights of a grader's metrics sum to 1."""
    tier: str
    description: str
    binary: bool = False


DEFAULT_METRICS: tuple[AgentMetric, ...] = (
    AgentMetric(
        "tool_routing",
        0.15,
        "execution",
        "Chose the right tool for each step, called no wrong or needless tools, and skipped no "
        "tool the task needed.",
    ),
    AgentMetric(
        "parameter_extraction",
        0.15,
        "execution",
        "Passed each tool correct and complete arguments, taken from the request and earlier "
        "results rather than invented.",
    ),
    AgentMetric(
        "result_interpretation",
        0.15,
        "execution",
        "Read the tool results correctly, including errors and empty results, and drew the "
        "right conclusions from them.",
    ),
    AgentMetric(
        "grounding_fidelity",
        0.125,
        "knowledge",
        "Stated only what the tool results, the documents or the conversation support, "
        "inventing no facts.",
    ),
    AgentMetric(
        "instruction_compliance",
        0.125,
        "knowledge",
        "Followed the user's instructions and the system's stated policies and constraints.",
    ),
    AgentMetric(
        "information_gathering",
        0.10,
        "process",
        "Looked up or asked for the information it needed before acting, without needless "
        "questions.",
    ),
    AgentMetric(
        "conversation_management",
        0.10,
        "process",
        "Kept track of the conversation across turns, stayed on task, and handled "
        "clarifications and changes of mind.",
    ),
    AgentMetric(
        "response_delivery",
        0.10,
        "delivery",
        "Gave a final answer that is clear, complete and in a tone and format fitting the user.",
    ),
)
"""The metrics of SPEC §5.3, in report order (their weights sum to 1)."""
_DEFAULTS = {m.name: m for m in DEFAULT_METRICS}


class MetricSpec(StrictModel):
    """A metric added to the defaults, or a default one changed (`metrics: {name: {...}}`)."""

    weight: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | None = None
    """Relative weight (renormalised with the others). Default: the metric's default weight,
    or 0.125 for an added metric."""
    tier: Annotated[str, Field(min_length=1)] | None = None
    """Descriptive group shown as the Detail's `expected` (`execution`, `knowledge`,
    `process`, `delivery` for the defaults). Default: the default tier, or `custom`."""
    description: Annotated[str, Field(min_length=1)] | None = None
    """What the metric asks, shown to the judge; required for an added metric."""
    binary: bool | None = None
    """Whether the judge answers pass/fail (mapped to 5/0) instead of a 0–5 grade."""


class GradedMetric(BaseModel):
    """The judge's verdict on a 0–5 metric (the schema of its entry)."""

    model_config = ConfigDict(use_attribute_docstrings=True)  # the judge reads them in the schema

    grade: Annotated[int, Field(ge=0, le=5)]
    """0 critical_fail, 1 fail, 2 poor, 3 acceptable, 4 good, 5 excellent."""
    reasoning: str
    """Why, in one or two sentences citing the interaction."""


class PassFailMetric(BaseModel):
    """The judge's verdict on a pass/fail metric (the schema of its entry)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    passed: bool
    """Whether the metric is met."""
    reasoning: str
    """Why, in one or two sentences citing the interaction."""


class MetricGrade(BaseModel):
    """The judge's verdict on one metric as read: a graded or a pass/fail entry (the call's
    schema says which each metric gives)."""

    grade: Annotated[int, Field(ge=0, le=5)] | None = None
    passed: bool | None = None
    reasoning: str


class AgentJudgeReply(BaseModel):
    """One verdict per metric, under the metric's name."""

    metrics: dict[str, MetricGrade]


_TRAJECTORY = ToolTrajectory(type="tool-trajectory")


class AgentJudge(JudgedGrader):
    """Grades the whole interaction on weighted 0–5 metrics in one judge call."""

    type: Literal["agent-judge"]
    metrics: dict[str, MetricSpec] = Field(default_factory=dict)
    """Metrics to add (name → spec with a `description`) or defaults to change (re-weight,
    re-tier, re-describe, make binary)."""
    remove: list[str] = Field(default_factory=list)
    """Default metrics to drop."""
    only: list[str] | None = None
    """Keep just these metrics (defaults or added ones); the others are dropped."""

    template: ClassVar[str] = "agent-judge"
    template_variables: ClassVar[frozenset[str]] = frozenset(
        {"metrics", "transcript", "tool_calls", "trajectory"}
    )

    @model_validator(mode="after")
    def _metrics_resolve(self) -> Self:
        _ = self.resolved  # a bad metrics/remove/only combination fails when the suite loads
        return self

    @cached_property
    def resolved(self) -> tuple[AgentMetric, ...]:
        """The graded metrics with weights renormalised to sum to 1.

        Raises:
            ValueError: An unknown name, a new metric without a description, a conflict
                between `metrics`, `remove` and `only`, or no weight at all.
        """
        return _resolve(self.metrics, self.remove, self.only)

    @cached_property
    def reply_schema(self) -> dict[str, JSON]:
        """The reply schema of this grader's calls: one required entry named for each of its
        metrics (after `metrics`, `remove` and `only`), a `grade` or `passed` as the metric
        asks, so no metric can be missing, unknown or answered in the wrong form."""
        entries = {
            m.name: Entry(PassFailMetric if m.binary else GradedMetric, description=m.description)
            for m in self.resolved
        }
        return keyed_schema("AgentJudgeReply", "metrics", entries, "One verdict per metric.")

    async def measure(self, ctx: GradingContext) -> Measurement:
        messages = ctx.target_output.messages if ctx.target_output else []
        values: dict[str, JSON] = {
            "metrics": [
                {"name": m.name, "tier": m.tier, "description": m.description, "binary": m.binary}
                for m in self.resolved
            ],
            "transcript": [m.model_dump(mode="json", exclude_defaults=True) for m in messages],
            "tool_calls": [
                c.model_dump(mode="json", exclude_defaults=True) for c in ctx.tool_calls
            ],
            "trajectory": await _trajectory_evidence(ctx) if ctx.expected_tool_calls else "",
        }
        judgement = await self.ask(ctx, AgentJudgeReply, values, schema=self.reply_schema)
        by_name = judgement.answer.metrics
        m = Measurement(score=0.0)
        weighted = 0.0
        for metric in self.resolved:
            reply = by_name[metric.name]
            grade = (5 if reply.passed else 0) if metric.binary else (reply.grade or 0)
            weighted += metric.weight * grade / 5
            shown = f"{grade}/5 {_label(metric, grade)}"
            passed = grade >= ACCEPTABLE
            (m.hits if passed else m.misses).append(f"{metric.name} {shown}")
            m.details.append(
                detail(
                    f"agent.{metric.name}",
                    passed,
                    expected=metric.tier,
                    actual=shown,
                    message=reply.reasoning,
                )
            )
        m.score = round(weighted, 6)
        m.reasoning = (
            f"overall_score {round(m.score * 100, 4):g}/100 over {len(self.resolved)} metrics"
        )
        if m.misses:
            m.reasoning += f"; below {ACCEPTABLE}/5: {', '.join(m.misses)}"
        return m.charged(judgement)


def _label(metric: AgentMetric, grade: int) -> str:
    if metric.binary:
        return "passed" if grade == 5 else "failed"
    return LABELS[grade]


def _resolve(
    specs: dict[str, MetricSpec], remove: list[str], only: list[str] | None
) -> tuple[AgentMetric, ...]:
    """The defaults with `specs` applied, `remove`d or narrowed to `only`, renormalised."""
    added = [name for name in specs if name not in _DEFAULTS]
    for name in added:
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"metric name '{name}' must be lower_snake_case (a-z, 0-9, _; at most 64 "
                "characters), as the judge copies it into its reply"
            )
        if specs[name].description is None:
            raise ValueError(
                f"metrics.{name}: '{name}' is not a default metric, so it needs a `description` "
                f"telling the judge what to grade.{suggest(name, set(_DEFAULTS))}"
            )
    names = [*_DEFAULTS, *added]
    if only is not None and remove:
        raise ValueError("give `only` (the metrics to keep) or `remove`, not both")
    for option, listed, known in (("remove", remove, list(_DEFAULTS)), ("only", only, names)):
        for name in listed or ():
            if name not in known:
                kind = "default metric" if option == "remove" else "metric"
                raise ValueError(
                    f"{option}: unknown {kind} '{name}'.{suggest(name, set(known))} The "
                    f"{kind}s are {', '.join(known)}"
                )
    for name in specs:
        if name in remove:
            raise ValueError(f"metric '{name}' is both configured in `metrics` and removed")
        if only is not None and name not in only:
            raise ValueError(f"metric '{name}' is configured in `metrics` but `only` omits it")
    kept = [n for n in names if n not in remove and (only is None or n in only)]
    if not kept:
        raise ValueError("no metrics left to grade; `only` must name at least one metric")
    metrics = [_apply(_DEFAULTS.get(n), n, specs.get(n)) for n in kept]
    total = sum(m.weight for m in metrics)
    if total <= 0:
        raise ValueError("every metric's weight is 0; give at least one metric a weight above 0")
    return tuple(
        AgentMetric(m.name, m.weight / total, m.tier, m.description, m.binary) for m in metrics
    )


def _apply(default: AgentMetric | None, name: str, spec: MetricSpec | None) -> AgentMetric:
    """A metric from its default (None for an added one) and its spec (None: unchanged)."""
    spec = spec or MetricSpec()
    base = default or AgentMetric(name, NEW_METRIC_WEIGHT, "custom", spec.description or "")
    return AgentMetric(
        name,
        base.weight if spec.weight is None else spec.weight,
        spec.tier or base.tier,
        spec.description or base.description,
        base.binary if spec.binary is None else spec.binary,
    )


async def _trajectory_evidence(ctx: GradingContext) -> str:
    """The deterministic `in_order` trajectory check, one line per expected or extra call.

    It is assay's text, but the tool names and arguments in it come from the model: each line
    is flattened to one line and its runs of angle brackets are neutralised, so it can neither
    fake a data-block delimiter nor pass for a new paragraph of instructions.
    """
    m = await _TRAJECTORY.measure(ctx)
    lines = [f"{m.reasoning} (trajectory score {m.score:.2f})"]
    for d in cap_details(m.details):
        facts = [
            f"expected {d.expected}" if d.expected else "",
            f"actual {d.actual}" if d.actual else "",
            truncate(d.message, _EVIDENCE_MESSAGE) if d.message else "",
        ]
        shown = "; ".join(f for f in facts if f) or d.check
        lines.append(f"- {'ok' if d.passed else 'MISMATCH'}: {shown}")
    return "\n".join(neutralise(" ".join(line.split())) for line in lines)
