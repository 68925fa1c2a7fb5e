"""Expected outcomes (SPEC §5.4): statements the judge checks one by one, the case's gate.

Not a grader users list under `assertions`: a test's `expected_outcomes:` become one
`ExpectedOutcomes` judged in a single call. Its result is reported with weight 0 (it shows the
judge's cost and errors like any judged grader, without entering the weighted score), and its
per-statement verdicts become the case's `expected_outcome_results`.
"""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field

from assay.graders._base import GradingContext, Measurement
from assay.graders._details import detail
from assay.graders._judged import JudgedGrader
from assay.judge import Entry, keyed_schema
from assay.results import JSON, ExpectedOutcomeResult, GraderResult

__all__ = ["OUTCOMES_GRADER", "ExpectedOutcomes", "outcome_results"]

OUTCOMES_GRADER = "expected_outcomes"
"""The name of the outcomes' result among a case's grader results."""


class OutcomeVerdict(BaseModel):
    """The judge's verdict on one statement."""

    outcome: str
    """The statement, exactly as written (pinned in the call's schema)."""
    passed: bool
    """Whether the reply meets it."""
    justification: str
    """Why, citing the reply."""


class OutcomesReply(BaseModel):
    """One verdict per expected outcome, under the outcome's number ("1", "2", ...)."""

    outcomes: dict[str, OutcomeVerdict]


def outcomes_schema(statements: list[str]) -> dict[str, JSON]:
    """The reply schema of one call: a verdict under each statement's number, its text pinned,
    so the verdicts are read by number and none can be missing, unknown or about other text."""
    entries = {
        str(number): Entry(OutcomeVerdict, {"outcome": statement})
        for number, statement in enumerate(statements, start=1)
    }
    return keyed_schema(
        "OutcomesReply", "outcomes", entries, "One verdict per expected outcome, by its number."
    )


class ExpectedOutcomes(JudgedGrader):
    """Judges a test's expected outcomes in one call."""

    type: Literal["expected-outcomes"] = "expected-outcomes"
    name: str | None = OUTCOMES_GRADER
    weight: Annotated[float, Field(ge=0.0)] = 0.0
    statements: Annotated[list[str], Field(min_length=1)]
    """The statements to check."""

    template: ClassVar[str] = "expected-outcomes"
    template_variables: ClassVar[frozenset[str]] = frozenset({"outcomes", "transcript"})

    @cached_property
    def reply_schema(self) -> dict[str, JSON]:
        """This grader's reply schema (the statements pinned)."""
        return outcomes_schema(self.statements)

    async def grade(self, ctx: GradingContext) -> GraderResult:
        """Grade; a result that could not judge the outcomes is flagged as a fallback (the
        case verdict then comes from its score, SPEC §1.3 step 2)."""
        result = await super().grade(ctx)
        if result.error is None:
            return result
        reason = f"{result.error.type}: {result.error.message}"
        return result.model_copy(update={"fallback": f"expected outcomes → score: {reason}"})

    async def measure(self, ctx: GradingContext) -> Measurement:
        messages = ctx.target_output.messages if ctx.target_output else []
        earlier = messages[:-1] if len(messages) > 2 else []  # more than the input and reply
        values = {
            "outcomes": list(self.statements),
            "transcript": [m.model_dump(exclude_defaults=True) for m in earlier],
        }
        judgement = await self.ask(ctx, OutcomesReply, values, schema=self.reply_schema)
        replied = judgement.answer.outcomes
        verdicts = [replied[str(number)] for number in range(1, len(self.statements) + 1)]
        passed = sum(v.passed for v in verdicts)
        m = Measurement(
            score=passed / len(verdicts),
            hits=[s for s, v in zip(self.statements, verdicts, strict=True) if v.passed],
            misses=[s for s, v in zip(self.statements, verdicts, strict=True) if not v.passed],
            reasoning=f"{passed} of {len(verdicts)} expected outcomes met",
            details=[
                detail(f"outcome[{i}]", v.passed, expected=s, message=v.justification)
                for i, (s, v) in enumerate(zip(self.statements, verdicts, strict=True))
            ],
        )
        return m.charged(judgement)


def outcome_results(
    grader: ExpectedOutcomes, result: GraderResult
) -> list[ExpectedOutcomeResult] | None:
    """The per-statement results of a graded `ExpectedOutcomes`; None when it errored."""
    if result.error is not None:
        return None
    by_check = {d.check: d for d in result.details}
    results: list[ExpectedOutcomeResult] = []
    for i, statement in enumerate(grader.statements):
        d = by_check.get(f"outcome[{i}]")
        if d is None:  # past 10 failed Details only failed ones are dropped (SPEC §1.1)
            results.append(ExpectedOutcomeResult(outcome=statement, passed=False))
            continue
        results.append(
            ExpectedOutcomeResult(outcome=statement, passed=d.passed, justification=d.message)
        )
    return results
