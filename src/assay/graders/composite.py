"""The composite grader: member graders folded by an aggregator (SPEC §1.3); composites nest."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field, Tag, field_validator

from assay.errors import GraderError
from assay.graders._base import Grader, GradingContext, Measurement, grade_all
from assay.graders._code_aggregator import CodeAggregator
from assay.graders._judge_aggregator import JudgeAggregator
from assay.graders._registry import GraderSpec
from assay.scoring import AggregatorSpec, WeightedAverage, fold

__all__ = ["Composite"]


def _kind(value: object) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", value)
    return {"code-grader": "program", "llm-grader": "judge"}.get(str(kind), "fold")


CompositeAggregator = Annotated[
    Annotated[AggregatorSpec, Tag("fold")]
    | Annotated[CodeAggregator, Tag("program")]
    | Annotated[JudgeAggregator, Tag("judge")],
    Discriminator(_kind),
]
"""A scoring aggregator (SPEC §1.3), a program or the judge folding the members' results."""


class Composite(Grader):
    """Grades with every member, then folds the member results into one score."""

    type: Literal["composite"]
    aggregator: CompositeAggregator = WeightedAverage()
    """How member scores fold: any aggregator of SPEC §1.3; `{type: code-grader, command}`, a
    program given the members' results; or `{type: llm-grader, prompt}`, the judge given them
    (AgentV's code and LLM aggregators)."""

    @field_validator("aggregator")
    @classmethod
    def _program_found(cls, value: AggregatorSpec | CodeAggregator | JudgeAggregator) -> object:
        if isinstance(value, CodeAggregator):
            value.runner()  # a program not found is a load error, as a code-grader's
        return value

    assertions: Annotated[list[GraderSpec], Field(min_length=1)]
    """The member graders."""

    @property
    def awaits_io(self) -> bool:
        """A composite waits on I/O when any member or its program aggregator does."""
        program = isinstance(self.aggregator, CodeAggregator | JudgeAggregator)
        return program or any(g.awaits_io for g in self.assertions)

    @property
    def uses_judge(self) -> bool:
        """A composite asks a judge when any member or its aggregator does."""
        judged = isinstance(self.aggregator, JudgeAggregator)
        return judged or any(g.uses_judge for g in self.assertions)

    @property
    def wants_default_judge(self) -> bool:
        """A judged aggregator without a model of its own uses the run's judge (the members
        say their own needs)."""
        aggregator = self.aggregator
        if not isinstance(aggregator, JudgeAggregator):
            return False
        return aggregator.judge is None or aggregator.judge.model is None

    async def measure(self, ctx: GradingContext) -> Measurement:
        members = await grade_all(self.assertions, ctx)
        errored = [m for m in members if m.weight > 0 and m.error is not None]
        if errored:
            first = errored[0]
            assert first.error is not None
            raise GraderError(f"member '{first.name}' errored: {first.error.message}")
        scored = [m for m in members if m.weight > 0]
        if isinstance(self.aggregator, CodeAggregator | JudgeAggregator):
            measured = await self.aggregator.fold(members, ctx)
            measured.children = list(members)
            return measured
        folded = fold(self.aggregator, members)
        return Measurement(
            score=folded.score,
            hits=[f"{m.name}: {h}" for m in members for h in m.hits],
            misses=[f"{m.name}: {x}" for m in members for x in m.misses],
            reasoning=f"{self.aggregator.type} of {len(scored)} member grader(s)",
            details=[
                d.model_copy(update={"check": f"{m.name}.{d.check}"})
                for m in members
                for d in m.details
            ],
            children=list(members),
            verdict=folded.verdict,
        )
