"""Labelled claims, the labeller protocol, and the judge's labeller (`depth: deep`, SPEC §5.5).

Split from `factuality` so the judged labeller lives apart from the deterministic one: the
factuality grader scores whatever list of `ClaimLabel`s a labeller returns, the same way for
both depths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import BaseModel

from assay.graders._base import GradingContext
from assay.graders._details import truncate
from assay.graders._judged import JudgedGrader
from assay.judge import Judgement
from assay.results import JSON

__all__ = ["REASON_LIMIT", "ClaimLabel", "ClaimLabeller", "ClaimsReply", "JudgeLabeller", "Label"]

Label = Literal["supported", "contradicted", "unverifiable"]

REASON_LIMIT = 200
"""Longest judge reason kept in a claim's Detail message."""


@dataclass(frozen=True, slots=True)
class ClaimLabel:
    """One claim of the output and what the references say about it."""

    claim: str
    label: Label
    reference: str | None
    """The best-matching reference sentence (None when no reference shares a content word)."""
    reason: str
    """Why this label, for the Detail message (e.g. "numbers differ: 45 vs 30")."""


class ClaimLabeller(Protocol):
    """Splits an output into claims and labels each against the references.

    It takes the whole output, not pre-split sentences, because the LLM labeller of
    `depth: deep` extracts atomic claims itself (SPEC §5.5). Async for the same reason.
    """

    async def __call__(self, output: str, references: Sequence[str]) -> list[ClaimLabel]: ...


class JudgedClaim(BaseModel):
    """One atomic claim the judge found in the output, and its label."""

    claim: str
    """The claim as one short standalone sentence."""
    label: Label
    """`supported`, `contradicted` or `unverifiable` by the references."""
    reference: str
    """The passage of the references that supports or contradicts the claim; "" if none."""
    reason: str
    """Why this label, in one short sentence."""


class ClaimsReply(BaseModel):
    """The judge's claims, in the order the output states them."""

    claims: list[JudgedClaim]


def _check(reply: ClaimsReply) -> str | None:
    blank = [i for i, c in enumerate(reply.claims) if not c.claim.strip()]
    if blank:
        return f"claim {blank[0]} is empty; state every claim as a sentence, or leave it out"
    return None


class JudgeLabeller:
    """The `depth: deep` labeller: one judge call extracts and labels the atomic claims.

    Bound to a grader and a case because the prompt shows the case's fields (the output, the
    expected_output and the context, as data blocks) rather than pre-joined references. The
    judgement is kept so the result can carry its model, prompt version, tokens and cost.
    """

    def __init__(
        self,
        grader: JudgedGrader,
        ctx: GradingContext,
        values: Mapping[str, JSON] | None = None,
    ) -> None:
        self.grader = grader
        self.ctx = ctx
        self.values = values
        """Template values besides the case's fields (the passages `faithfulness` checks)."""
        self.judgement: Judgement[ClaimsReply] | None = None

    async def __call__(self, output: str, references: Sequence[str]) -> list[ClaimLabel]:
        """Raises `JudgeError` when the judge gives no usable reply."""
        del output, references  # the same texts reach the prompt as the case's fields
        self.judgement = await self.grader.ask(self.ctx, ClaimsReply, self.values, check=_check)
        return [
            ClaimLabel(
                claim=c.claim.strip(),
                label=c.label,
                reference=c.reference.strip() or None,
                reason=truncate(c.reason.strip() or "no reason given", REASON_LIMIT),
            )
            for c in self.judgement.answer.claims
        ]
