"""The `faithfulness` grader (SPEC §4.1): are the output's claims supported by what the target
retrieved?

It is factuality's claim check with other references: the passages of the runtime context
(`GradingContext.retrieved`) instead of the expected output, so a RAG answer is graded on what
its retriever gave it, not on what the suite author knows. The labellers and the claim score
are factuality's: `depth: shallow` is the deterministic n-gram labeller, `depth: deep` the
judge's (`faithfulness-claims` template), falling back to shallow without a judge or when the
judge fails.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from assay.graders._base import GradingContext, Measurement
from assay.graders._claims import ClaimLabel, JudgeLabeller
from assay.graders._details import detail
from assay.graders._judged import JudgedGrader
from assay.graders._retrieved import passages_of
from assay.graders.factuality import label_shallow, score_claims
from assay.judge import JudgeError

__all__ = ["Faithfulness"]

NO_CLAIMS = "the output makes no checkable claims, so none is unsupported"


class Faithfulness(JudgedGrader):
    """Share of the output's claims supported by the retrieved passages (runtime context)."""

    type: Literal["faithfulness"]
    depth: Literal["shallow", "deep"] = "shallow"
    """`shallow`: claims are sentences labelled by n-gram overlap with the passages
    (deterministic, no API call); `deep`: the judge extracts atomic claims and labels them
    (falls back to shallow, saying so, without a judge or when the judge fails)."""
    mode: Literal["strict", "lenient"] = "strict"
    """`strict`: only supported claims count; `lenient`: only contradicted claims fail."""

    template: ClassVar[str] = "faithfulness-claims"

    @property
    def requires_judge(self) -> bool:
        """`depth: deep` falls back to shallow without a judge: never a configuration error."""
        return False

    @property
    def awaits_io(self) -> bool:
        """Only `deep` waits on a judge."""
        return self.depth == "deep"

    @property
    def uses_judge(self) -> bool:
        """Re-judging a borderline case re-asks only a `deep` labeller."""
        return self.depth == "deep"

    async def measure(self, ctx: GradingContext) -> Measurement:
        references, source = passages_of(ctx, "faithfulness")
        depth, note = self.depth, ""
        spend: JudgeError | None = None
        judge: JudgeLabeller | None = None
        labels: list[ClaimLabel] = []
        if depth == "deep" and not self.has_judge(ctx):
            depth, note = "shallow", "no judge configured"
        if depth == "deep":
            judge = JudgeLabeller(self, ctx, {"retrieved_context": references})
            try:
                labels = await judge(ctx.output, references)
            except JudgeError as exc:
                depth, note, spend, judge = "shallow", f"judge failed: {exc}", exc, None
        if depth == "shallow":
            labels = await label_shallow(ctx.output, references)
        m = _measure(labels, self.mode, depth, ctx.output)
        m.reasoning += f"; against {source}"
        if note:
            m.reasoning += f"; depth deep fell back to shallow: {note}"
            m.fallback = f"deep faithfulness → shallow: {note}"
        if spend is not None:
            return m.charged(spend)
        if judge is not None and judge.judgement is not None:
            return m.charged(judge.judgement)
        return m


def _measure(
    labels: list[ClaimLabel], mode: Literal["strict", "lenient"], depth: str, output: str
) -> Measurement:
    """Factuality's claim score, except that an output without claims (a refusal, an empty
    answer) is faithful: it states nothing the passages do not support."""
    if labels:
        return score_claims(labels, mode, depth, output)
    return Measurement(
        score=1.0,
        hits=[NO_CLAIMS],
        reasoning=f"{mode}, depth {depth}: {NO_CLAIMS}",
        details=[detail("claims", True, actual=output, message=NO_CLAIMS)],
    )
