"""The judged RAG checks (SPEC §4.1): `context-precision`, `context-recall`, `answer-relevancy`.

For when a test has no `expected_context_ids` to compute ranking metrics from (`retrieval`):
the judge reads the retrieved passages (the runtime context, else the test's static one) and
labels them, and the score is computed from the labels, not asked for:

- `context-precision`: is each passage useful for the answer (the expected output, else the
  input)? Score = average precision over the ranks: Σ precision@k over the relevant ranks k /
  relevant passages, so relevant passages ranked first score higher; 0 when none is relevant.
- `context-recall`: the judge splits the expected output into statements and attributes each
  to the passages or not. Score = attributed / statements.
- `answer-relevancy`: does the output address the input? The judge's 0–1 score, with the
  off-topic and unanswered parts as misses.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, Field

from assay.graders._base import GradingContext, Measurement, TestFacts
from assay.graders._details import detail, truncate
from assay.graders._judged import JudgedGrader
from assay.graders._retrieved import passages_of
from assay.judge import Entry, keyed_schema

__all__ = [
    "AnswerRelevancy",
    "ContextPrecision",
    "ContextRecall",
    "average_precision",
]

REASON_LIMIT = 200
"""Longest judge reason kept in a Detail message."""


def average_precision(relevant: list[bool]) -> float:
    """Σ precision@k over the ranks k holding a relevant passage / relevant passages."""
    found, total = 0, 0.0
    for rank, flag in enumerate(relevant, start=1):
        if flag:
            found += 1
            total += found / rank
    return total / found if found else 0.0


class PassageVerdict(BaseModel):
    """The judge's verdict on one retrieved passage."""

    relevant: bool
    """Whether the passage states something needed for the answer."""
    reason: str
    """Why, in one short sentence."""


class PassagesReply(BaseModel):
    """One verdict per passage, under its number."""

    passages: dict[str, PassageVerdict]


class ContextPrecision(JudgedGrader):
    """Are the retrieved passages relevant, and ranked first? Average precision of the
    judge's per-passage relevance."""

    type: Literal["context-precision"]

    template: ClassVar[str] = "context-precision"

    async def measure(self, ctx: GradingContext) -> Measurement:
        passages, source = passages_of(ctx, "context-precision")
        entries = {str(i): Entry(PassageVerdict) for i in range(1, len(passages) + 1)}
        schema = keyed_schema(
            "PassagesReply", "passages", entries, "One verdict per passage, by its number."
        )
        judgement = await self.ask(
            ctx, PassagesReply, {"retrieved_context": passages}, schema=schema
        )
        verdicts = [judgement.answer.passages[str(i)] for i in range(1, len(passages) + 1)]
        flags = [v.relevant for v in verdicts]
        score = average_precision(flags)
        details = [
            detail(
                f"passage[{i}]",
                v.relevant,
                actual=text,
                message=("relevant: " if v.relevant else "irrelevant: ")
                + truncate(v.reason.strip() or "no reason given", REASON_LIMIT),
            )
            for i, (text, v) in enumerate(zip(passages, verdicts, strict=True), start=1)
        ]
        relevant = sum(flags)
        return Measurement(
            score=score,
            hits=[f"{relevant} of {len(flags)} passages relevant"] if relevant else [],
            misses=[f"{len(flags) - relevant} of {len(flags)} passages irrelevant"]
            if relevant < len(flags)
            else [],
            reasoning=(
                f"average precision {score:.3f}: relevant at ranks "
                f"{_ranks(flags) or 'none'} of {source}"
            ),
            details=details,
        ).charged(judgement)


def _ranks(flags: list[bool]) -> str:
    return ", ".join(str(rank) for rank, flag in enumerate(flags, start=1) if flag)


class AttributedStatement(BaseModel):
    """One statement of the expected output and whether the passages hold it."""

    statement: str
    """The statement, as a short standalone sentence."""
    attributed: bool
    """Whether the retrieved passages state it or directly imply it."""
    reason: str
    """Why, in one short sentence."""


class StatementsReply(BaseModel):
    """The expected output's statements, in order."""

    statements: list[AttributedStatement]


def _check_statements(reply: StatementsReply) -> str | None:
    if not reply.statements:
        return "list at least one statement of the reference answer"
    blank = [i for i, s in enumerate(reply.statements) if not s.statement.strip()]
    if blank:
        return f"statement {blank[0]} is empty; state every statement as a sentence"
    return None


class ContextRecall(JudgedGrader):
    """Do the retrieved passages hold everything the expected answer says? Share of the
    expected output's statements the judge attributes to them."""

    type: Literal["context-recall"]

    template: ClassVar[str] = "context-recall"

    def problem_with_test(self, test: TestFacts) -> str | None:
        """The expected output is what the passages are checked for."""
        if test.expected_output is None:
            return (
                f"context-recall checks the retrieved passages for what the expected_output "
                f"says, and test '{test.test_id}' has none; add `expected_output`"
            )
        return super().problem_with_test(test)

    async def measure(self, ctx: GradingContext) -> Measurement:
        passages, source = passages_of(ctx, "context-recall")
        judgement = await self.ask(
            ctx, StatementsReply, {"retrieved_context": passages}, check=_check_statements
        )
        statements = judgement.answer.statements
        held = sum(s.attributed for s in statements)
        details = [
            detail(
                f"statement[{i}]",
                s.attributed,
                actual=s.statement.strip(),
                message=("in the passages: " if s.attributed else "not in the passages: ")
                + truncate(s.reason.strip() or "no reason given", REASON_LIMIT),
            )
            for i, s in enumerate(statements)
        ]
        missing = len(statements) - held
        return Measurement(
            score=held / len(statements),
            hits=[f"{held} of {len(statements)} statements in the passages"] if held else [],
            misses=[f"{missing} of {len(statements)} statements not in the passages"]
            if missing
            else [],
            reasoning=f"{held} of {len(statements)} expected statements attributed to {source}",
            details=details,
        ).charged(judgement)


class RelevancyReply(BaseModel):
    """The judge's relevancy verdict."""

    score: Annotated[float, Field(ge=0.0, le=1.0)]
    """0 (does not address the input) to 1 (addresses all of it and nothing else)."""
    reasoning: str
    """Why this score, in a sentence or two."""
    off_topic: list[str]
    """Parts of the output that do not serve the input."""
    unanswered: list[str]
    """Parts of the input the output leaves unanswered."""


class AnswerRelevancy(JudgedGrader):
    """Does the output address the input, directly and completely? The judge's 0–1 score."""

    type: Literal["answer-relevancy"]

    template: ClassVar[str] = "answer-relevancy"

    async def measure(self, ctx: GradingContext) -> Measurement:
        if not ctx.output.strip():
            message = "the output is empty: it answers nothing"
            return Measurement(
                score=0.0,
                misses=[message],
                reasoning=message,
                details=[detail("answer", False, message=message)],
            )
        judgement = await self.ask(ctx, RelevancyReply)
        reply = judgement.answer
        misses = [f"off topic: {truncate(p)}" for p in reply.off_topic if p.strip()]
        misses += [f"unanswered: {truncate(p)}" for p in reply.unanswered if p.strip()]
        return Measurement(
            score=reply.score,
            hits=["addresses the input"] if reply.score >= ctx.threshold else [],
            misses=misses,
            reasoning=reply.reasoning,
        ).charged(judgement)
