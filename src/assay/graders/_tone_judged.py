"""The judged tone (SPEC §5.5): the LLM judge scores every dimension of a profile in one call.

Kept apart from the heuristics in `tone`; the grader turns each entry of the reply into the
same `DimensionScore` a heuristic returns, so the score, Details, hits and misses are built the
same way whichever measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated

from pydantic import BaseModel, Field

from assay.graders._base import GradingContext
from assay.graders._judged import JudgedGrader
from assay.judge import Judgement

__all__ = ["MEANINGS", "DimensionJudgement", "ToneReply", "judge_dimensions"]

MEANINGS: Mapping[str, str] = {
    "formality": "register: formal, neutral or casual",
    "sentiment": "the feeling the wording carries: positive, neutral or negative",
    "assertiveness": "certainty: confident (direct, unhedged), balanced, or tentative (hedged)",
    "verbosity": (
        "length: concise (about 60 words or fewer, short sentences), moderate (about 60 to "
        "200 words) or detailed (more than 200 words)"
    ),
    "persona_consistency": (
        "staying in the persona: every required phrase appears and no forbidden phrase does"
    ),
}
"""What each dimension means, shown to the judge next to its target."""


class DimensionJudgement(BaseModel):
    """The judge's verdict on one tone dimension."""

    dimension: str
    """The dimension's name, as the prompt writes it."""
    score: Annotated[float, Field(ge=0.0, le=1.0)]
    """0 (the opposite of the target) to 1 (exactly the target)."""
    observed: str
    """A short label of the tone seen, e.g. "casual"."""
    reasoning: str
    """Why this score, citing the reply."""


class ToneReply(BaseModel):
    """One verdict per dimension of the profile."""

    dimensions: list[DimensionJudgement]


def _checker(names: Sequence[str]) -> Callable[[ToneReply], str | None]:
    """A reply check: every dimension answered exactly once (others are ignored)."""

    def check(reply: ToneReply) -> str | None:
        given = [d.dimension for d in reply.dimensions]
        missing = [n for n in names if n not in given]
        if missing:
            return (
                f"no entry for {', '.join(missing)}; give one entry per dimension: "
                f"{', '.join(names)}"
            )
        repeated = [n for n in names if given.count(n) > 1]
        if repeated:
            return f"{', '.join(repeated)} answered more than once; give one entry per dimension"
        return None

    return check


async def judge_dimensions(
    grader: JudgedGrader, ctx: GradingContext, targets: Mapping[str, str]
) -> tuple[Judgement[ToneReply], dict[str, DimensionJudgement]]:
    """Ask the judge to score each dimension of `targets` (name → target, in report order);
    the judgement and the verdict of each dimension.

    Raises:
        JudgeError: No usable reply (after the re-asks for missing dimensions).
        GraderError: The run has no judge for this grader.
    """
    names = list(targets)
    dimensions = [{"name": n, "target": t, "meaning": MEANINGS[n]} for n, t in targets.items()]
    judgement = await grader.ask(ctx, ToneReply, {"dimensions": dimensions}, check=_checker(names))
    verdicts = {d.dimension: d for d in judgement.answer.dimensions}
    return judgement, {n: verdicts[n] for n in names}
